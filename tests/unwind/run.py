#!/usr/bin/env python3
"""run.py: native unwinding against independent oracles (docs/native-unwinding.md).

  rows    the unwind table user/proc/cfi.c builds equals the one readelf's rows
          give (readelf_rows.py), on fixtures built here (frame pointers or not,
          lazy PLT, IBT PLT, no .eh_frame_hdr, clang, static), libc, libz and the
          files of every python of tests/pythons.sh; each build's time printed
          (CPU time < 1 s).  Hand-made hostile tables: build/tests/test_cfi
          under valgrind (errors only).
  eval    user/cpython/evalrange.c: its x86-64 decoder finds exactly objdump's
          direct jumps in each evaluator's hot part; where a .symtab exists the
          jump scan finds what the symbols name (but fragments no direct jump
          reaches); on stripped files the ranges hold >= 90% of the evaluator's
          indirect jmps (objdump: those in the FDEs the hot part jumps into).
  unwind  user/proc/unwind_ref.c against libdwfl, PC by PC, on stopped threads
          (tests/unwind/uwcheck.c): the fixtures (plain, signal handler), and on
          every python the ctypes qsort callback (stopped in os.kill, and
          spinning), zlib.compress, hashlib.sha256, time.sleep, sorted().  Prints the
          match rates; the qsort chain must show evaluator frames on both
          sides of qsort.

One line per check, then "N passed, N failed"; exit 1 on any failure.

    tests/unwind/run.py [-k SUBSTRING] [-n SAMPLES]"""
import collections
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import readelf_rows  # noqa: E402

OUT = os.path.join(ROOT, "build", "unwind")
CFIDUMP = os.path.join(OUT, "cfidump")
UWCHECK = os.path.join(OUT, "uwcheck")
MAX_BUILD_MS = 1000
FIXTURES = {  # name: compiler and flags for tests/unwind/fixture.c
    "omit": ["gcc", "-O2", "-fomit-frame-pointer", "-Wl,-z,lazy"],
    "fp": ["gcc", "-O2", "-fno-omit-frame-pointer", "-Wl,-z,lazy"],
    "nohdr": ["gcc", "-O2", "-Wl,--no-eh-frame-hdr"],
    "ibt": ["gcc", "-O2", "-fcf-protection", "-Wl,-z,now"],
    "clang": ["clang", "-O2", "-Wl,-z,lazy"],
    "static": ["gcc", "-O2", "-static"],
}
SYSTEM_LIBS = ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libz.so.1"]
WORKLOADS = ["qsort", "spin", "zlib", "sha256", "sleep", "sort"]
CHECK_ONLY = None


def sh(*args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def build():
    os.makedirs(OUT, exist_ok=True)
    r = sh("make", "-s", "-C", ROOT, "build/libtachyon.a", "build/tests/test_cfi")
    if r.returncode:
        sys.exit("run.py: make failed:\n" + r.stderr)
    flags = ["-O2", "-g", "-Wall", "-Wextra", "-Werror", "-std=gnu11", "-I" + ROOT + "/include",
             "-I" + ROOT + "/user"]
    libs = [os.path.join(ROOT, "build", "libtachyon.a")] + subprocess.run(
        ["make", "-s", "-C", ROOT, "print-ldlibs"], capture_output=True, text=True, check=True).stdout.split()
    for tool in ("cfidump", "uwcheck"):
        r = sh("gcc", *flags, os.path.join(HERE, tool + ".c"), *libs, "-o", os.path.join(OUT, tool))
        if r.returncode:
            sys.exit("run.py: building %s failed:\n%s" % (tool, r.stderr))
    for name, cc in FIXTURES.items():
        r = sh(*cc, os.path.join(HERE, "fixture.c"), "-o", os.path.join(OUT, "fixture-" + name))
        if r.returncode:
            sys.exit("run.py: building fixture %s failed:\n%s" % (name, r.stderr))
    evalfix = os.path.join(OUT, "evalfix")
    r = sh("gcc", "-rdynamic", os.path.join(HERE, "evalfix.S"), "-o", evalfix)
    if r.returncode or sh("strip", "-o", evalfix + ".stripped", evalfix).returncode:
        sys.exit("run.py: building evalfix failed:\n" + r.stderr)


PROBE = ("import os\n"
         "seen = []\n"
         "for l in open('/proc/self/maps'):\n"
         "    f = l.split(None, 5)\n"
         "    if len(f) == 6:\n"
         "        p = f[5].strip(); b = os.path.basename(p)\n"
         "        if b.startswith(('python', 'libpython')) and '.cpython-' not in b and p not in seen:\n"
         "            seen.append(p)\n"
         "print('\\n'.join(seen))\n")


def pythons():
    """[(label, command, [ELF files: python binary, libpython])]"""
    out = []
    r = sh("bash", os.path.join(ROOT, "tests", "pythons.sh"))
    for line in r.stdout.splitlines():
        ver, kind, cmd = line.split(None, 2)
        files = sh(cmd, "-I", "-c", PROBE).stdout.split()
        out.append(("%s-%s" % (ver, kind.split("-")[0]), cmd, files))
    return out


# ------------------------------------------------------------------ rows

def cfidump(mode, path):
    r = sh(CFIDUMP, mode, path)
    assert r.returncode == 0, "cfidump %s: %s" % (mode, r.stderr.strip())
    return r.stdout.splitlines()


def check_rows(path):
    out = cfidump("rows", path)
    stats = dict(zip(out[0].split()[1::2], out[0].split()[2::2]))
    fdes = [tuple(int(x, 16) for x in l.split()[1:3]) for l in out if l.startswith("fde ")]
    rows = []
    for l in out:
        if l.startswith("row "):
            s = l.split()
            rows.append((int(s[1], 16), s[2], int(s[3]), int(s[4])))
    want_fdes, want_rows = readelf_rows.rows(path)
    assert fdes == want_fdes, "FDEs differ from readelf's (%d vs %d)" % (len(fdes), len(want_fdes))
    for i, (a, b) in enumerate(zip(rows, want_rows)):
        assert a == b, "row %d: ours %s, readelf %s" % (i, (hex(a[0]),) + a[1:], (hex(b[0]),) + b[1:])
    assert len(rows) == len(want_rows), "%d rows, readelf %d" % (len(rows), len(want_rows))
    cpu = float(stats["cpu_ms"])
    assert cpu < MAX_BUILD_MS, "build took %.0f ms of CPU" % cpu
    share = 100.0 * int(stats["rbp_bytes"]) / max(1, int(stats["code_bytes"]))
    return "%d FDEs, %d rows (%d KiB), rbp-based %.1f%%%s, build %s ms (cpu %.0f ms)" % (
        len(fdes), len(rows), len(rows) * 8 // 1024, share,
        ", FP_ONLY" if stats["fp_only"] == "1" else "", stats["ms"], cpu)


def check_valgrind():
    if not shutil.which("valgrind"):
        return "valgrind not installed: skipped"
    r = sh("valgrind", "-q", "--error-exitcode=9", os.path.join(ROOT, "build", "tests", "test_cfi"))
    assert r.returncode == 0, "test_cfi under valgrind: rc %d\n%s" % (r.returncode, r.stderr[-2000:])
    return "test_cfi: every hostile table an error, no memory error"


# ------------------------------------------------------------------ eval

JUMP = re.compile(r"^\s*([0-9a-f]+):\s+(?:(?:bnd|notrack)\s+)?(j[a-z]+)\s+([0-9a-f]+)\b")
INDIRECT = re.compile(r"^\s*([0-9a-f]+):\s+(?:(?:bnd|notrack)\s+)?jmp\s+\*(?!.*\(%rip\))")


def eval_ranges(path):
    out = cfidump("eval", path)
    got = {"symtab": [], "jumps": [], "jump": []}
    for l in out:
        s = l.split()
        if s[0] in got:
            got[s[0]].append((int(s[1], 16), int(s[2], 16)))
    return got


def objdump(path, lo, hi):
    return sh("objdump", "-d", "--no-show-raw-insn", "--start-address=%#x" % lo,
              "--stop-address=%#x" % hi, path).stdout.splitlines()


def exported(path, name):
    for l in sh("nm", "-D", "-S", "--defined-only", path).stdout.splitlines():
        s = l.split()
        if len(s) == 4 and s[3] == name:
            return int(s[0], 16), int(s[0], 16) + int(s[1], 16)
    return None


def has_symtab(path):
    return ".symtab" in sh("readelf", "-S", "-W", path).stdout


def fde_of(fdes, a):
    for f in fdes:
        if f[0] <= a < f[1]:
            return f
    return None


def check_eval(path):
    got = eval_ranges(path)
    hot = [r for r in got["jumps"] if any(r[0] <= a < r[1] for a, _ in got["jump"])] or got["jumps"][:1]
    assert hot, "no evaluator range"
    lo, hi = hot[0]
    # the decoder: exactly objdump's direct jumps in the hot part
    theirs = set()
    for l in objdump(path, lo, hi):
        m = JUMP.match(l)
        if m:
            theirs.add((int(m.group(1), 16), int(m.group(3), 16)))
    mine = set(got["jump"])
    assert mine == theirs, "decoder: %d jumps, objdump %d; only ours %s, only objdump's %s" % (
        len(mine), len(theirs), sorted(mine - theirs)[:3], sorted(theirs - mine)[:3])
    fdes, _ = readelf_rows.rows(path)
    detail = "hot %#x..%#x (%d B, %d direct jumps), ranges %s" % (
        lo, hi, hi - lo, len(mine), " ".join("%#x+%d" % (a, b - a) for a, b in got["jumps"]))
    if got["symtab"]:
        # symtab method == jump method, but for named fragments no direct jump from the hot
        # part reaches (dead .cold blocks reached from other functions)
        extra = set(got["jumps"]) - set(got["symtab"])
        assert not extra, "the jump scan found %s, .symtab does not name it" % sorted(extra)
        for r in set(got["symtab"]) - set(got["jumps"]):
            reached = [j for j in theirs if r[0] <= j[1] < r[1]]
            assert not reached, "the jump scan missed %#x..%#x, reached from %#x" % (r + (reached[0][0],))
            detail += "; .symtab also names %#x+%d (no direct jump from the hot part)" % (r[0], r[1] - r[0])
        return detail + "; = .symtab"
    # stripped: the evaluator's indirect jmps (objdump) are those of the FDEs the hot part
    # jumps into (readelf), exported functions excepted
    sym = exported(path, "_PyEval_EvalFrameDefault")
    names = set(int(l.split()[0], 16) for l in sh("nm", "-D", "--defined-only", path).stdout.splitlines()
                if len(l.split()) == 3)
    evaluator = {fde_of(fdes, sym[0])}
    for a, t in theirs:
        f = fde_of(fdes, t)
        if f and f[0] not in names:
            evaluator.add(f)
    indirect = []
    for f in evaluator:
        indirect += [int(m.group(1), 16) for m in map(INDIRECT.match, objdump(path, f[0], f[1])) if m]
    inside = [a for a in indirect if any(r[0] <= a < r[1] for r in got["jumps"])]
    assert indirect, "no indirect jmp in the evaluator's FDEs"
    share = 100.0 * len(inside) / len(indirect)
    assert share >= 90, "ranges hold %d of %d indirect jmps" % (len(inside), len(indirect))
    return detail + "; holds %d of the evaluator's %d indirect jmps (%.0f%%)" % (
        len(inside), len(indirect), share)


def check_evalfix():
    unstripped = eval_ranges(os.path.join(OUT, "evalfix"))
    stripped = eval_ranges(os.path.join(OUT, "evalfix.stripped"))
    assert len(unstripped["symtab"]) == 3, "symtab: %s" % unstripped["symtab"]
    assert unstripped["symtab"] == stripped["jumps"], "symtab %s, jump scan %s" % (
        unstripped["symtab"], stripped["jumps"])
    return "hot part, .cold and .cold.1 by both methods; decoys (tail jump, call, function entry) left out"


# ------------------------------------------------------------------ unwind

def state_of(pid):
    try:
        return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "?"


def wait_stopped(proc, seconds=20):
    end = time.time() + seconds
    while time.time() < end:
        if state_of(proc.pid) in ("T", "t"):
            return
        assert proc.poll() is None, "the workload exited (rc %s)" % proc.returncode
        time.sleep(0.02)
    raise AssertionError("the workload did not stop itself")


def uwcheck(pid, samples, interval_ms=30):
    r = sh(UWCHECK, "-v", "-n", str(samples), "-i", str(interval_ms), str(pid), timeout=300)
    assert r.returncode == 0, "uwcheck: " + r.stderr.strip()
    result, frames = [], []
    for l in r.stdout.splitlines():
        s = l.split()
        if s[0] == "sample":
            result.append({"ours": int(s[3]), "stop": s[5], "dwfl": int(s[7]), "verdict": s[9],
                           "at": int(s[11])})
            frames = []
            result[-1]["frames"] = frames
        elif s[0] == "frame":
            frames.append({"pc": s[2], "flags": s[3], "name": s[5] if len(s) > 5 else "??"})
    return result


def chain(frames):
    """The evaluator / qsort / evaluator chain of a qsort-callback stack, or None."""
    q = [i for i, f in enumerate(frames) if f["name"] in ("qsort_r", "qsort", "__GI___qsort_r", "msort_with_tmp")]
    if not q:
        return None
    tagged = [i for i, f in enumerate(frames) if "t" in f["flags"]]
    inner = [i for i in tagged if i < q[0]]
    outer = [i for i in tagged if i > q[-1]]
    if not inner or not outer:
        return None
    return "evaluator #%d <- qsort #%d <- evaluator #%d" % (inner[-1], q[0], outer[0])


def summarize(res):
    c = collections.Counter(r["verdict"] for r in res)
    stops = collections.Counter(r["stop"] for r in res if r["verdict"] != "equal")
    depth = sum(r["ours"] for r in res) / max(1, len(res))
    s = "%d/%d equal to libdwfl (%.0f%%), %.1f frames" % (c["equal"], len(res),
                                                          100.0 * c["equal"] / max(1, len(res)), depth)
    other = ", ".join("%s %d" % kv for kv in c.items() if kv[0] != "equal")
    if other:
        s += "; " + other + " (stops: " + ", ".join("%s %d" % kv for kv in stops.items()) + ")"
    return s, c["equal"] / max(1, len(res))


def run_target(cmd, mode, samples, stops_itself):
    proc = subprocess.Popen(cmd + [mode], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        if stops_itself:
            wait_stopped(proc)
        else:
            assert proc.stdout.readline().strip() == "ready", "no 'ready' from the workload"
            time.sleep(0.3)
        return uwcheck(proc.pid, samples)
    finally:
        proc.kill()
        proc.wait()


def check_fixture(name, mode):
    res = run_target([os.path.join(OUT, "fixture-" + name)], mode, 3, True)
    s, rate = summarize(res)
    assert rate == 1.0, s
    if mode == "signal":
        names = [f["name"] for f in res[0]["frames"]]
        assert "main" in names and "leaf" in names, "frames: %s" % names
    return s


def check_python(cmd, mode, samples):
    stops = mode == "qsort"
    res = run_target(cmd.split() + ["-I", os.path.join(HERE, "workload.py")], mode,
                     3 if stops else samples, stops)
    s, rate = summarize(res)
    if mode in ("qsort", "spin"):
        chains = [chain(r["frames"]) for r in res]
        found = [c for c in chains if c]
        assert found, "no evaluator <- qsort <- evaluator chain in %d samples" % len(res)
        s += "; chain in %d/%d: %s" % (len(found), len(res), found[0])
    assert rate >= (1.0 if stops else 0.9), s
    return s


# ------------------------------------------------------------------ main

RESULTS = [0, 0]


def check(name, fn, *args):
    if CHECK_ONLY and CHECK_ONLY not in name:
        return
    t = time.time()
    try:
        detail = fn(*args)
        RESULTS[0] += 1
        print("PASS %s (%.1fs): %s" % (name, time.time() - t, detail), flush=True)
    except Exception as e:  # noqa: BLE001 (one line per failing check, whatever it was)
        RESULTS[1] += 1
        print("FAIL %s: %s" % (name, e), flush=True)


def main():
    global CHECK_ONLY
    samples = 20
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        if a == "-k" and args:
            CHECK_ONLY = args.pop(0)
        elif a == "-n" and args:
            samples = int(args.pop(0))
        else:
            sys.exit(__doc__)
    if os.geteuid() != 0:
        sys.exit("run.py: needs root (ptrace, map_files)")
    build()
    pys = pythons()
    elves = [os.path.join(OUT, "fixture-" + n) for n in FIXTURES] + SYSTEM_LIBS
    for _, _, files in pys:
        elves += [f for f in files if f not in elves]
    for path in elves:
        check("rows %s" % path, check_rows, path)
    check("hostile tables", check_valgrind)
    check("eval evalfix", check_evalfix)
    for path in elves:
        if exported(path, "_PyEval_EvalFrameDefault"):
            check("eval %s" % path, check_eval, path)
    for name in FIXTURES:
        for mode in ("plain", "signal"):
            check("unwind fixture-%s %s" % (name, mode), check_fixture, name, mode)
    for label, cmd, _ in pys:
        for mode in WORKLOADS:
            check("unwind %s %s" % (label, mode), check_python, cmd, mode, samples)
    print("%d passed, %d failed" % tuple(RESULTS))
    sys.exit(1 if RESULTS[1] else 0)


if __name__ == "__main__":
    main()
