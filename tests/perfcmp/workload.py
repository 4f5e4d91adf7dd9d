"""workload.py: what tests/perfcmp/run.py profiles with Linux perf and tachyon-bpf at once.

    compile  ast.parse() and compile() of 24 of the interpreter's own stdlib files
             (20-120 KB each, read into memory first), in a loop: the parser, the
             compiler, the allocator
    zlib     zlib.compress of 1.3 MB of text at level 6, in a loop (libz)

Warms up for a second (imports done, caches filled), prints "ready" on stdout, then
loops until killed or for at most argv[2] seconds (default 60)."""
import ast
import os
import sys
import time
import zlib

MODE = sys.argv[1]
LIMIT = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
FILES = 24


def stdlib_sources():
    """(path, text) of FILES stdlib modules, by name: the same set on every run."""
    lib = os.path.dirname(os.__file__)
    out = []
    for name in sorted(os.listdir(lib)):
        path = os.path.join(lib, name)
        if name.endswith(".py") and 20000 <= os.path.getsize(path) <= 120000:
            with open(path, encoding="utf-8") as f:
                out.append((path, f.read()))
        if len(out) == FILES:
            break
    return out


def compile_once(sources):
    for path, text in sources:
        ast.parse(text, path)
        compile(text, path, "exec")


def compress_once(text):
    zlib.compress(text, 6)


if MODE == "compile":
    work, arg = compile_once, stdlib_sources()
elif MODE == "zlib":
    work, arg = compress_once, b" ".join(b"%x" % (i * 2654435761 % 65521) for i in range(1 << 18))
else:
    sys.exit("workload.py: mode is compile or zlib, not %r" % MODE)
warm = time.monotonic() + 1.0
while time.monotonic() < warm:
    work(arg)
print("ready", flush=True)
end = time.monotonic() + LIMIT
while time.monotonic() < end:
    work(arg)
