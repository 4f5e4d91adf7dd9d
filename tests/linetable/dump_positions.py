# dump_positions.py: dumps co_linetable bytes plus CPython's own per-instruction positions for
# thousands of stdlib code objects, so check.c can compare tb_linetable_lookup against them.
# Runs on CPython 3.10..3.15.  Usage: pythonX.Y dump_positions.py [--max-code N] [paths...]
# (default: the interpreter's own stdlib, at most 20000 code objects; --max-code 0 = no limit).
#
# Output, one code object per line, space separated:
#   <minor> <co_firstlineno> <hex(co_linetable) or "-" if empty> <pos> <pos> ...
# with one <pos> per code unit i (addr = 2*i): "line,end_line,col,end_col" (None -> -1), or "x"
# when the table does not cover that unit (tb_linetable_lookup must then return -1).  3.11+
# positions come from co_positions(); 3.10 from co_lines() expanded per unit (columns -1).
import glob
import importlib.util
import marshal
import os
import sys
import warnings
import zlib


def expected_310(co):
    """Per code unit (line, line, -1, -1) from co_lines() [start, end) byte ranges."""
    units = len(co.co_code) // 2
    ranges = list(co.co_lines())
    if ranges:
        units = max(units, (max(end for _, end, _ in ranges) + 1) // 2)
    out = [None] * units
    for start, end, line in ranges:
        ln = -1 if line is None else line
        for i in range(start // 2, (end + 1) // 2):
            if out[i] is None:
                out[i] = (ln, ln, -1, -1)
    return out


def expected_311(co):
    """Per code unit position from co_positions(); units past its end are uncovered."""
    out = [tuple(-1 if v is None else v for v in pos) for pos in co.co_positions()]
    return out + [None] * (len(co.co_code) // 2 - len(out))


def format_code(co, minor):
    units = expected_310(co) if minor == 10 else expected_311(co)
    pos = ["x" if u is None else "%d,%d,%d,%d" % u for u in units]
    table = co.co_linetable.hex() or "-"
    return " ".join(["%d" % minor, "%d" % co.co_firstlineno, table] + pos)


def walk(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, "co_linetable"):
            for sub in walk(c):
                yield sub


def compile_source(path):
    try:
        with open(path, "rb") as f:
            src = f.read()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile(src, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, UnicodeDecodeError, OSError, RecursionError,
            MemoryError):
        return None


def load_pyc(path):
    """A .pyc of this interpreter (magic checked), for installs that ship no sources."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        if data[:4] != importlib.util.MAGIC_NUMBER:
            return None
        return marshal.loads(data[16:])
    except (OSError, ValueError, EOFError, TypeError):
        return None


def stdlib_only(files):
    """Drops third-party packages installed next to the stdlib."""
    skip = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)
    return [f for f in files if not any(s in f for s in skip)]


def spread(files):
    """Deterministic shuffle (CRC of the path), so a --max-code prefix samples the whole tree."""
    return sorted(files, key=lambda p: (zlib.crc32(p.encode("utf-8", "replace")), p))


def module_files(paths):
    """.py files under paths; .pyc files instead where no source is shipped."""
    py, pyc = [], []
    for p in paths:
        if os.path.isfile(p):
            py.append(p)
            continue
        tag = sys.implementation.cache_tag
        py += stdlib_only(glob.glob(os.path.join(p, "**", "*.py"), recursive=True))
        pyc += stdlib_only(glob.glob(os.path.join(p, "**", "*.%s*.pyc" % tag), recursive=True))
    if py:
        return spread(py), compile_source
    return spread(pyc), load_pyc


def main(argv):
    max_code = 20000
    if argv[:1] == ["--max-code"]:
        max_code, argv = int(argv[1]), argv[2:]
    paths = argv or [os.path.dirname(os.__file__)]
    minor = sys.version_info[1]
    files, loader = module_files(paths)
    count = 0
    out = sys.stdout
    for path in files:
        top = loader(path)
        if top is None:
            continue
        for co in walk(top):
            out.write(format_code(co, minor) + "\n")
            count += 1
            if count == max_code:
                break
        if count == max_code:
            break
    sys.stderr.write("dump_positions: %d code objects from %d candidate files (%s)\n"
                     % (count, len(files), sys.version.split()[0]))
    return 0 if count else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
