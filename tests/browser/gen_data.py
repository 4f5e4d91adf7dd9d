#!/usr/bin/env python3
"""Build a realistic heatmap JSON (docs/heatmap-json.md) for the browser test, from real code.

  gen_data.py OUT.json [--seed N]

Files (sorted by total samples, as the C writer does):
  * tests/workloads/opcodes.py: its real source; instruction names (adaptive, after warming the
    code up so the specializations are real), offsets and positions from dis / co_positions();
    most samples on the line marked HOT-LINE.
  * a real stdlib file (json/decoder.py of this interpreter), real positions, seeded samples.
  * a hostile file: path, source, function and instruction names with </script>, <img onerror>,
    control and bidi characters, and non-ASCII lines so byte columns != character columns
    (the columns come from compile() of that source, so they are CPython's own UTF-8 offsets).
  * a site-packages file whose source could not be read ("no such file").
  * a frozen module ("<frozen ...> has no file").
  * a big generated file (--big-lines, default 20000; 0 = none): rendering time.
Needs Python >= 3.11 (co_positions, adaptive disassembly).
"""
import argparse
import dis
import json
import opcode
import os
import random
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
WORKLOAD = os.path.join(REPO, "tests", "workloads", "opcodes.py")

# Specialized name -> base name, for interpreters without Instruction.baseopname (3.11, 3.12).
DEOPT = {}
for base, specs in getattr(opcode, "_specializations", {}).items():
    for s in specs:
        DEOPT[s] = base

# Relative cost of an instruction (how often a sample lands on it), by base name.
WEIGHT = {"BINARY_OP": 3.0, "LOAD_ATTR": 2.4, "FOR_ITER": 2.2, "CALL": 6.0, "PRECALL": 0.6, "STORE_FAST": 0.7,
          "LOAD_FAST": 0.5, "LOAD_FAST_LOAD_FAST": 0.8, "JUMP_BACKWARD": 0.9, "COMPARE_OP": 1.2, "FORMAT_VALUE": 2.5,
          "FORMAT_SIMPLE": 2.5, "BUILD_STRING": 2.0, "LOAD_GLOBAL": 1.0, "RETURN_VALUE": 0.4, "STORE_NAME": 0.5}


def base_name(ins):
    b = getattr(ins, "baseopname", None)
    if b:
        return b
    return DEOPT.get(ins.opname, ins.opname)


def code_objects(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from code_objects(c)


def instructions(codes, adaptive):
    """[(line, offset, name, base, end_line, col, end_col)] of every instruction with a line."""
    out = []
    for co in codes:
        for ins in dis.get_instructions(co, adaptive=adaptive):
            pos = ins.positions
            if pos is None or pos.lineno is None:
                continue
            if ins.opname in ("RESUME", "CACHE", "NOP", "EXTENDED_ARG"):
                continue
            out.append((pos.lineno, ins.offset, ins.opname, base_name(ins),
                        pos.end_lineno if pos.end_lineno is not None else -1,
                        pos.col_offset if pos.col_offset is not None else -1,
                        pos.end_col_offset if pos.end_col_offset is not None else -1))
    return out


def spread(rng, instrs, target):
    """Split target samples over instrs by weight (largest remainder), dropping zero rows."""
    if not instrs or target <= 0:
        return []
    w = [WEIGHT.get(i[3], 0.5) * rng.uniform(0.6, 1.4) for i in instrs]
    tot = sum(w)
    raw = [target * x / tot for x in w]
    n = [int(r) for r in raw]
    for k in sorted(range(len(raw)), key=lambda k: raw[k] - n[k], reverse=True)[: target - sum(n)]:
        n[k] += 1
    return [list(i) + [c] for i, c in zip(instrs, n) if c > 0]


class FileBuilder:
    def __init__(self, path, source, pid, missing=None):
        self.path, self.source, self.pid, self.missing = path, source, pid, missing
        self.lines = {}      # line -> [self, total]
        self.instr = []
        self.functions = {}  # qualname -> [first line, self, total]
        self.extra_total = 0

    def leaf(self, rng, line, instrs, samples, func, callers=()):
        """samples whose leaf is an instruction on `line` in `func`; callers = [(line, func)] above it."""
        rows = spread(rng, [i for i in instrs if i[0] == line], samples) if instrs else []
        got = sum(r[-1] for r in rows) if rows else samples
        self.instr += rows
        self.lines.setdefault(line, [0, 0])
        self.lines[line][0] += got
        self.lines[line][1] += got
        self.functions.setdefault(func[0], [func[1], 0, 0])
        self.functions[func[0]][1] += got
        self.functions[func[0]][2] += got
        seen_f = {func[0]}
        for cl, cf in callers:
            self.lines.setdefault(cl, [0, 0])
            self.lines[cl][1] += got
            self.functions.setdefault(cf[0], [cf[1], 0, 0])
            if cf[0] not in seen_f:
                self.functions[cf[0]][2] += got
                seen_f.add(cf[0])
        return got

    def json(self):
        self_ = sum(v[0] for v in self.lines.values())
        total = max([v[1] for v in self.lines.values()] + [0]) + self.extra_total
        return {
            "path": self.path, "pid": self.pid, "source": self.source, "missing": self.missing,
            "self": self_, "total": max(total, self_),
            "lines": [[ln, v[0], v[1]] for ln, v in sorted(self.lines.items())],
            "instructions": sorted(self.instr, key=lambda r: (r[0], r[1])),
            "functions": sorted(([k] + v for k, v in self.functions.items()), key=lambda r: -r[3]),
        }


def workload_file(rng):
    with open(WORKLOAD, encoding="utf-8") as f:
        src = f.read()
    code = compile(src, WORKLOAD, "exec")
    ns = {"__name__": "tb_heatmap_workload"}
    exec(code, ns)
    ns["hot"](0.05)  # warm up: specializations become real
    hot_code = ns["hot"].__code__
    init_code = ns["Point"].__init__.__code__
    ins = instructions([hot_code, init_code], adaptive=True) + instructions([code], adaptive=False)
    lines = src.splitlines()
    hot = next(i + 1 for i, l in enumerate(lines) if "HOT-LINE" in l)
    main_call = next(i + 1 for i, l in enumerate(lines) if l.strip().startswith("hot(float("))
    fb = FileBuilder(WORKLOAD, src, 4242)
    hot_fn = ("hot", hot_code.co_firstlineno)
    mod = ("<module>", 1)
    callers = [(main_call, mod)]
    fb.leaf(rng, hot, ins, 1412, hot_fn, callers)
    fb.leaf(rng, hot - 1, ins, 163, hot_fn, callers)            # for _ in range(1000)
    fb.leaf(rng, hot + 1, ins, 37, hot_fn, callers)            # if time.thread_time() > end
    fb.leaf(rng, hot_code.co_firstlineno + 1, ins, 2, hot_fn, callers)  # p = Point()
    fb.leaf(rng, init_code.co_firstlineno + 1, ins, 1, ("Point.__init__", init_code.co_firstlineno),
            [(hot_code.co_firstlineno + 1, hot_fn)] + callers)
    return fb, hot


def stdlib_file(rng):
    import json.decoder as jd
    path = jd.__file__
    with open(path, encoding="utf-8") as f:
        src = f.read()
    code = compile(src, path, "exec")
    ins = instructions(code_objects(code), adaptive=False)
    fb = FileBuilder(path, src, 4242)
    raw = jd.JSONDecoder.raw_decode.__code__
    dec = jd.JSONDecoder.decode.__code__
    f_raw = ("JSONDecoder.raw_decode", raw.co_firstlineno)
    f_dec = ("JSONDecoder.decode", dec.co_firstlineno)
    raw_lines = sorted({i[0] for i in instructions([raw], False)})
    dec_lines = sorted({i[0] for i in instructions([dec], False)})
    call_in_dec = next(l for l in dec_lines if "raw_decode" in src.splitlines()[l - 1])
    for l in raw_lines:
        fb.leaf(rng, l, ins, rng.randint(3, 30), f_raw, [(call_in_dec, f_dec)])
    for l in dec_lines:
        if l != call_in_dec:
            fb.leaf(rng, l, ins, rng.randint(1, 12), f_dec)
    return fb


HOSTILE_PATH = '/srv/app/<img src=x onerror="window.__pwned=1">/ev\u202eil</script>.py'
HOSTILE_SRC = (
    "# </script><script>window.__pwned=1</script>\n"
    '"""<img src=x onerror="window.__pwned=2"> &amp; &lt;b&gt; <b>not bold</b>"""\n'
    "import os\n"
    "\n"
    'x = "h\u00e9llo"  # \u00e9\n'
    'y = "\u65e5\u672c\u8a9e" + x + str(len("\u00fc" * 3)) + os.sep  # 3-byte characters before the columns\n'
    'z = "\x1b[31mred\x1b[0m\x07"  # control characters; bidi: \u202eevil\u202c\n'
    "\n"
    "\n"
    "def greet(name):\n"
    '    s = "</script><script>window.__pwned=3</script>" + name\n'
    '    return f"<b>{s}</b> h\u00e9llo w\u00f6rld \U0001F600 {x!r} \u2192 {y}" + name.upper()\n'
    "\n"
    "\n"
    "for i in range(100000):\n"
    "    greet(y)\n"
)


def hostile_file(rng):
    code = compile(HOSTILE_SRC, HOSTILE_PATH, "exec")
    ins = instructions(code_objects(code), adaptive=False)
    lines = HOSTILE_SRC.splitlines()
    find = lambda s: next(i + 1 for i, l in enumerate(lines) if s in l)
    fb = FileBuilder(HOSTILE_PATH, HOSTILE_SRC, 666)
    greet = code.co_consts[[isinstance(c, types.CodeType) for c in code.co_consts].index(True)]
    f_greet = ("greet", greet.co_firstlineno)
    mod = ("<module>", 1)
    call = find("    greet(y)")
    fb.leaf(rng, find("return f\""), ins, 260, f_greet, [(call, mod)])
    fb.leaf(rng, find('    s = "'), ins, 90, f_greet, [(call, mod)])
    fb.leaf(rng, find('y = "'), ins, 40, mod)
    fb.leaf(rng, find('x = "'), ins, 9, mod)
    fb.leaf(rng, find('z = "'), ins, 4, mod)
    fb.leaf(rng, find("for i in range"), ins, 21, mod)
    # Hostile function and instruction names (the data is untrusted, whatever CPython says).
    fb.functions['<img src=x onerror="window.__pwned=4">'] = [find("import os"), 3, 3]
    fb.lines[find("import os")] = [3, 3]
    fb.instr.append([find("import os"), 4, "<script>window.__pwned=5</script>", "IMPORT_NAME\u202e", -1, -1, -1, 3])
    return fb


def missing_files(rng):
    site = FileBuilder("/opt/venv/lib/python3.12/site-packages/requests/models.py", None, 4242, "no such file")
    fn = ("Response.json", 944)
    site.leaf(rng, 968, None, 7, fn)
    site.leaf(rng, 971, None, 2, fn)
    site.leaf(rng, 975, None, 11, fn)  # leaf samples without instruction details
    site.instr += [[968, 36, "LOAD_ATTR_METHOD_WITH_VALUES", "LOAD_ATTR", 968, 19, 38, 4],
                   [968, 58, "CALL_PY_EXACT_ARGS", "CALL", 969, 19, 40, 3],
                   [971, 12, None, None, -1, -1, -1, 2]]
    frozen = FileBuilder("<frozen importlib._bootstrap>", None, 4242, "<frozen ...> has no file")
    ffn = ("_find_and_load", 1349)
    frozen.leaf(rng, 1360, None, 6, ffn)
    frozen.leaf(rng, 1371, None, 2, ffn)
    frozen.extra_total = 30
    return [site, frozen]


def big_file(rng, n):
    """A generated module of about n lines (real code, real positions), a few hundred sampled lines."""
    out, k = ["# generated: %d lines" % n], 0
    while len(out) < n:
        out += ["", "", "def f%d(a, b):" % k, "    c = a * %d + b" % k, "    d = [c + i for i in range(b)]",
                "    e = {str(i): i * 2 for i in d if i % 3}", "    return sum(d) + len(e) - c"]
        k += 1
    src = "\n".join(out[:n]) + "\n"
    path = "/srv/app/generated_big.py"
    code = compile(src, path, "exec")
    fb = FileBuilder(path, src, 4242)
    by_line = {}
    for i in instructions(code_objects(code), adaptive=False):
        by_line.setdefault(i[0], []).append(i)
    lines = sorted(l for l in by_line if src.splitlines()[l - 1].startswith("    "))
    for l in sorted(rng.sample(lines, min(300, len(lines)))):
        fb.leaf(rng, l, by_line[l], rng.randint(1, 3), ("f%d" % ((l - 2) // 7), 4 + 7 * ((l - 2) // 7)))
    return fb


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--big-lines", type=int, default=20000)
    a = ap.parse_args()
    if sys.version_info < (3, 11):
        raise SystemExit("gen_data.py needs Python >= 3.11 (co_positions, adaptive dis)")
    rng = random.Random(a.seed)
    work, hot = workload_file(rng)
    files = [work, stdlib_file(rng), hostile_file(rng)] + missing_files(rng)
    if a.big_lines > 0:
        files.append(big_file(rng, a.big_lines))
    fj = sorted((f.json() for f in files), key=lambda f: -f["total"])
    py = sum(f["self"] for f in fj)
    data = {
        "format": "tachyon-bpf-heatmap",
        "version": 1,
        "meta": {
            "rate_hz": 999, "duration_s": 2.0, "samples": py + 17, "python_samples": py,
            "processes": [
                {"pid": 4242, "comm": "python3", "python": "%d.%d.%d" % sys.version_info[:3],
                 "cmdline": "python3 tests/workloads/opcodes.py 2"},
                {"pid": 666, "comm": "<b>evil</b>", "python": "3.12.1",
                 "cmdline": 'python3 -c "<script>window.__pwned=6</script>"'},
            ],
        },
        "files": fj,
    }
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=None, separators=(",", ":"))
    print("%s: %d files, %d Python samples, hot line %s:%d" % (a.out, len(fj), py, WORKLOAD, hot), file=sys.stderr)


if __name__ == "__main__":
    main()
