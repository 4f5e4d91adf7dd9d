#!/usr/bin/env python3
"""run.py: tachyon-bpf --native-all against Linux perf, both sampling the same process at
the same time (perf record -p PID and tachyon-bpf -p PID, cpu-clock at the same rate), on
tests/perfcmp/workload.py's compile and zlib loops:

  Debian's python3.11    perf --call-graph dwarf (the python binary has no frame pointers)
  sid's python3.15       perf -g (frame pointers: the binary is built with them; libz has
                         none, so the zlib loop is also run with perf --call-graph dwarf)

Every frame of both tools is reduced to one key: the evaluator (a Python frame of
tachyon-bpf, a pc in an evaluator range for perf: the ranges user/cpython/evalrange.c
finds, through tests/unwind/cfidump), else the library and the start of the .eh_frame FDE
holding the pc (perf's addresses through the process's mappings; tachyon-bpf's names
through the library's symbols, its `lib+0xSTART` as it is). So the comparison holds
whichever tool names a function and however (perf from debug files, tachyon-bpf from
.symtab/.dynsym/FDE starts); the names are compared too, and reported.

  leaves   the top-10 native leaf distribution (the union of both tools' top 10, the
           rest as one "other"): total variation distance <= 0.08
  pairs    for each leaf of >= 2% in both, its callers agree: no caller is seen by one
           tool more often than by the other by 10 points and 4 standard errors (about
           150 caller comparisons a run: at 3, CI once flagged noise); where
           one is, the check says which tool lost a frame (the other tool's stacks hold
           the leaf, the missing frame, then this tool's caller; or this tool's stack
           ended at the leaf, or went to no function); fails when tachyon-bpf lost it
           or nothing explains it. The caller->leaf TVD (top-15 pairs) is reported
  names    every leaf both tools sampled that perf names, tachyon-bpf names the same
           (no "other name at the address", none "perf alone names": aliases are
           chosen by perf's rule, proc/nativesym.c; a PLT slot is its own function);
           reported: the share of leaf samples named the same, by neither, and
           those only perf sampled; how many stacks of each tool reach _start

One line per check, then "N passed, N failed"; exit 1 on any failure.

    tests/perfcmp/run.py [-k SUBSTRING] [-s SECONDS] [-r HZ]"""
import bisect
import collections
import importlib.util
import math
import functools
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import tb  # noqa: E402

_spec = importlib.util.spec_from_file_location("unwind_run", os.path.join(ROOT, "tests", "unwind", "run.py"))
unwind_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(unwind_run)  # its build() and cfidump(): FDEs and evaluator ranges

WORKLOAD = os.path.join(HERE, "workload.py")
SECONDS = 8.0
RATE = 499
CHECK_ONLY = None
LEAF_TVD_MAX = 0.08
TOP = 10
PAIR_MIN_SHARE = 0.02      # leaves this common in both tools get their callers compared
# a caller one tool shows more often: this many standard errors of the difference (4: ~150
# comparisons a run, each leaf's ~100 samples; CI had 71% vs 91% at 3.6 once, where the same
# leaf's callers agreed within 8 points in 11 runs here)
Z_MIN = 4
EVAL = "<evaluator>"
END = "<end>"              # the stack ended at this frame
UNKNOWN = "<no mapping>"   # a pc in no file mapping (anonymous code, or a bad return address)
KERNEL_START = 0xffff800000000000


# ------------------------------------------------------------------ perf

def find_perf():
    """The real perf binary: $TB_PERF, /usr/bin/perf if it is not Debian's wrapper script,
    else the newest /usr/bin/perf_X.Y or /usr/lib/linux-tools*/perf that runs."""
    cands = [os.environ.get("TB_PERF", "")]
    cands.append("/usr/bin/perf")
    for d, pat in (("/usr/bin", r"^perf_\d+\.\d+$"), ("/usr/lib", r"^linux-tools")):
        try:
            names = sorted((n for n in os.listdir(d) if re.match(pat, n)), reverse=True)
        except OSError:
            names = []
        cands += [os.path.join(d, n) if d == "/usr/bin" else os.path.join(d, n, "perf") for n in names]
    for c in cands:
        if not c or not os.path.isfile(c):
            continue
        with open(c, "rb") as f:
            if f.read(4) != b"\x7fELF":
                continue  # Debian's wrapper script wants perf_X.Y of the running kernel
        r = subprocess.run([c, "--version"], capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.startswith("perf version"):
            return c, r.stdout.strip()
    raise AssertionError("no working perf binary (scripts/install-deps.sh test installs linux-perf)")


def perf_stacks(perf, data, pid):
    """perf script's samples of thread pid: [[(ip, sym, dso)] leaf first, user frames only]."""
    r = subprocess.run([perf, "script", "-i", data, "-F", "tid,ip,sym,symoff,dso", "--no-inline"],
                       capture_output=True, text=True, errors="replace", timeout=300)
    assert r.returncode == 0, "perf script: " + r.stderr.strip()[-300:]
    stacks, cur, tid = [], None, None
    frame_re = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)$")
    for line in r.stdout.splitlines():
        if not line.strip():
            if cur is not None and tid == pid and cur:
                stacks.append(cur)
            cur = None
            continue
        if not line[0].isspace() or cur is None and not frame_re.match(line):
            tid = int(line.split()[0]) if line.split()[0].isdigit() else None
            cur = []
            continue
        m = frame_re.match(line)
        if not m:
            continue
        ip = int(m.group(1), 16)
        if ip >= KERNEL_START or "kernel.kallsyms" in m.group(3):
            continue  # the kernel part (tachyon-bpf runs without --kernel)
        cur.append((ip, m.group(2), m.group(3)))
    if cur and tid == pid:
        stacks.append(cur)
    return stacks


# ------------------------------------------------------------------ files

def debug_file(path):
    """path's debug file under /usr/lib/debug/.build-id/, or None."""
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    d = m and "/usr/lib/debug/.build-id/%s/%s.debug" % (m.group(1)[:2], m.group(1)[2:])
    return d if d and os.path.exists(d) else None


class Elf:
    """One mapped ELF: its PT_LOADs, FDE starts, evaluator ranges, function symbols."""

    def __init__(self, path):
        self.name = os.path.basename(path)
        self.loads = []
        self.plt = []  # PLT slot starts (below): a slot is its own function
        with open(path, "rb") as f:
            head = f.read(64)
            assert head[:4] == b"\x7fELF" and head[4] == 2 and head[5] == 1, path + ": not ELF64 LE"
            entry, phoff = struct.unpack_from("<QQ", head, 24)
            phentsize, phnum = struct.unpack_from("<HH", head, 54)
            f.seek(phoff)
            ph = f.read(phentsize * min(phnum, 256))
        for i in range(min(phnum, 256)):
            p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", ph, i * phentsize)
            if p_type == 1:
                self.loads.append((p_offset, p_vaddr, p_filesz))
        fdes = [l.split() for l in unwind_run.cfidump("rows", path) if l.startswith("fde ")]
        self.fde_lo = [int(a, 16) for _, a, _ in fdes]
        self.fde_hi = [int(b, 16) for _, _, b in fdes]
        ev = [l.split() for l in unwind_run.cfidump("eval", path)] if self.name.startswith(("python", "libpython")) else []
        sym = [(int(a, 16), int(b, 16)) for k, a, b, *_ in ev if k == "symtab"]
        self.eval = sym or [(int(a, 16), int(b, 16)) for k, a, b, *_ in ev if k == "jumps"]
        self.entry = self.key(entry) if self.fde_lo else None  # _start's key: a stack's root
        self.syms = {}
        # the file's symbols, and its debug file's (by build-id), which tachyon-bpf names stripped
        # functions from (proc/debugfile.c) as perf does
        for p in (path, debug_file(path)):
            out = subprocess.run(["readelf", "-sW", p], capture_output=True, text=True).stdout if p else ""
            for line in out.splitlines():
                f = line.split()
                if len(f) >= 8 and f[3] in ("FUNC", "IFUNC") and f[6] != "UND" and int(f[1], 16):
                    self.syms.setdefault(f[7].split("@")[0], int(f[1], 16))
        # PLT entries, which tachyon-bpf names name@plt (proc/nativesym.c) as objdump does
        out = subprocess.run(["objdump", "-d", "-j", ".plt", "-j", ".plt.sec", path],
                             capture_output=True, text=True).stdout
        for m in re.finditer(r"^([0-9a-f]+) <([^<>]+@plt)>:", out, re.M):
            self.syms.setdefault(m.group(2), int(m.group(1), 16))
            self.plt.append(int(m.group(1), 16))
        self.plt.sort()

    def vaddr(self, file_off):
        for off, va, size in self.loads:
            if off <= file_off < off + size:
                return file_off - off + va
        return None

    def key(self, va):
        """The key of the function holding vaddr va: evaluator, name+0xSLOT in a PLT, or
        name+0xFDESTART."""
        if any(lo <= va < hi for lo, hi in self.eval):
            return EVAL
        j = bisect.bisect_right(self.plt, va) - 1
        if j >= 0 and va < self.plt[j] + 16:
            return "%s+0x%x" % (self.name, self.plt[j])
        i = bisect.bisect_right(self.fde_lo, va) - 1
        if i >= 0 and va < self.fde_hi[i]:
            return "%s+0x%x" % (self.name, self.fde_lo[i])
        return "%s:nofde" % self.name


@functools.lru_cache(maxsize=None)
def real_path(path):
    """A file's one name (/lib is /usr/lib: perf and /proc may say either)."""
    return os.path.realpath(path) if os.path.exists(path) else path


class Maps:
    """A process's file mappings (read while it runs) and their Elf objects."""

    def __init__(self, pid, elfs):
        self.maps = []
        with open("/proc/%d/maps" % pid) as f:
            for line in f:
                p = line.split(None, 5)
                if len(p) == 6 and "x" in p[1] and p[5].startswith("/"):
                    lo, hi = (int(x, 16) for x in p[0].split("-"))
                    self.maps.append((lo, hi, int(p[2], 16), real_path(p[5].strip())))
        self.elfs = elfs
        self.by_name = {}
        for _, _, _, path in self.maps:
            if path not in elfs and os.path.exists(path):
                elfs[path] = Elf(path)
            if path in elfs:
                self.by_name.setdefault(os.path.basename(path), elfs[path])
        self.roots = {e.entry for e in self.by_name.values() if e.entry and e.entry != EVAL}

    def runtime_vaddr(self, ip, path):
        """The vaddr in file path of runtime address ip, if path is mapped there."""
        for lo, hi, off, p in self.maps:
            if p == path and lo <= ip < hi:
                return self.elfs[p].vaddr(ip - lo + off)
        return None

    def key(self, ip):
        for lo, hi, off, path in self.maps:
            if lo <= ip < hi and path in self.elfs:
                e = self.elfs[path]
                va = e.vaddr(ip - lo + off)
                return e.key(va) if va is not None else "%s:noload" % e.name
        return UNKNOWN


# ------------------------------------------------------------------ stacks as keys

PY_RE = re.compile(r"^(?P<name>.*) \((?P<file>.*):-?\d+\)$")
NATIVE_RE = re.compile(r"^(?P<name>.*) \((?P<lib>[^()]*)\)$")
SYNTHETIC = ("<GC>", "<off-CPU>")  # what the sample was doing, not a frame of the program
STRIPPED_RE = re.compile(r"^(?P<lib>[^ ()]+)\+0x(?P<start>[0-9a-f]+)$")


def tachyon_stacks(path, pid, maps):
    """The folded file's stacks of thread pid as (keys leaf first, names leaf first, count)."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            if len(frames) < 3 or not frames[1].endswith("(tid %d)" % pid):
                continue
            keys, names = [], []
            for fr in reversed(frames[2:]):
                if fr.split(" (")[0] in SYNTHETIC:
                    continue
                k, name = tachyon_key(fr, maps)
                keys.append(k)
                names.append(name)
            out.append((keys, names, int(n)))
    return out


def tachyon_key(frame, maps):
    """(key, name or None) of one folded frame (see the top of output/folded.c)."""
    if frame.startswith("<"):
        return frame.split(" (")[0], None  # <native truncated>, <native tables not ready> ...
    if PY_RE.match(frame):
        return EVAL, None
    m = STRIPPED_RE.match(frame)
    if m:
        e = maps.by_name.get(m.group("lib"))
        start = int(m.group("start"), 16)
        return (e.key(start) if e else "%s+0x%x" % (m.group("lib"), start)), None
    m = NATIVE_RE.match(frame)
    if not m:
        return "?" + frame, None
    name, lib = m.group("name"), m.group("lib")
    e = maps.by_name.get(lib)
    va = e.syms.get(name if name.endswith("@plt") else name.split("@")[0]) if e else None
    return (e.key(va) if va is not None else "%s:%s" % (lib, name)), name


def perf_resolver(stacks, maps):
    """How perf script prints each file's pcs: perf 6.1 prints a --call-graph dwarf frame's
    pc as its offset in the file, a -g frame's as the address in the process. Decided per
    file by the frames whose symbol the file's own tables name (symbol + offset must be
    the pc): {path: "runtime" or "offset"}."""
    votes = collections.defaultdict(collections.Counter)
    for st in stacks[:2000]:
        for ip, sym, path in st:
            path = real_path(path)
            m = re.match(r"^(.*)\+0x([0-9a-f]+)$", sym)
            e = maps.elfs.get(path)
            if not m or not e or m.group(1) not in e.syms:
                continue
            want = e.syms[m.group(1)] + int(m.group(2), 16)
            if maps.runtime_vaddr(ip, path) == want:
                votes[path]["runtime"] += 1
            if e.vaddr(ip) == want:
                votes[path]["offset"] += 1
    modes = {path: v.most_common(1)[0][0] for path, v in votes.items()}
    every = sum(votes.values(), collections.Counter())
    modes[None] = every.most_common(1)[0][0] if every else "runtime"  # for files without a vote
    return modes


def perf_keys(stack, maps, modes):
    """(keys leaf first, names leaf first) of one perf sample; return addresses at ip - 1."""
    keys, names = [], []
    for i, (ip, sym, dso) in enumerate(stack):
        pc = ip - 1 if i else ip
        dso = real_path(dso)
        e = maps.elfs.get(dso)
        if e and modes.get(dso, modes[None]) == "offset":
            va = e.vaddr(pc)
            keys.append(e.key(va) if va is not None else "%s:noload" % e.name)
        else:
            keys.append(maps.key(pc))
        names.append(None if sym.startswith("[unknown]") else re.sub(r"\+0x[0-9a-f]+$", "", sym))
    return keys, names


class Profile:
    """One tool's samples as keys: leaves, (caller, leaf) pairs, (caller's caller, caller,
    leaf) triples, leaf names, stacks reaching _start."""

    def __init__(self, tool):
        self.tool = tool
        self.total = 0
        self.leaves = collections.Counter()
        self.callers = collections.defaultdict(collections.Counter)   # leaf -> caller -> n
        self.chains = collections.defaultdict(collections.Counter)    # leaf -> (f1, f2, f3) -> n
        self.names = collections.defaultdict(collections.Counter)     # key -> name -> n
        self.rooted = 0

    def add(self, roots, keys, names, n=1):
        if not keys:
            return
        pairs = list(zip(keys, names))
        seq = [pairs[0]]  # consecutive evaluator keys as one: 3.11+ run several Python
        # frames in one evaluator call, where perf sees one _PyEval_EvalFrameDefault
        for k, nm in pairs[1:]:
            if not (k == EVAL and seq[-1][0] == EVAL):
                seq.append((k, nm))
        keys = [k for k, _ in seq] + [END]
        self.total += n
        self.leaves[keys[0]] += n
        self.callers[keys[0]][keys[1]] += n
        self.chains[keys[0]][tuple(keys[1:6])] += n
        self.names[keys[0]][seq[0][1]] += n
        if seq[-1][0] in roots:
            self.rooted += n

    def share(self, key):
        return self.leaves[key] / self.total if self.total else 0.0


def tvd(a, b, keys):
    """Total variation distance of two counters over keys plus one "other"."""
    ta, tb_ = sum(a.values()) or 1, sum(b.values()) or 1
    pa = [a[k] / ta for k in keys]
    pb = [b[k] / tb_ for k in keys]
    return 0.5 * (sum(abs(x - y) for x, y in zip(pa, pb)) + abs((1 - sum(pa)) - (1 - sum(pb))))


def top(counter, n):
    return [k for k, _ in counter.most_common(n)]


def label(key, prof_a, prof_b):
    """A key with a name when either tool has one."""
    if key in (EVAL, END, UNKNOWN) or key.startswith("<"):
        return key
    names = [nm for p in (prof_a, prof_b) for nm, _ in p.names[key].most_common() if nm]
    return "%s [%s]" % (names[0], key) if names else key


# ------------------------------------------------------------------ one comparison

def capture(py, mode, callgraph, work):
    """Run the workload, perf record and tachyon-bpf on it at once: (perf Profile,
    tachyon Profile, stderr lines worth reporting)."""
    perf, _ = find_perf()
    d = tempfile.mkdtemp(prefix="tb-perfcmp-")
    folded, data = os.path.join(d, "tb.folded"), os.path.join(d, "perf.data")
    proc = subprocess.Popen(py + [WORKLOAD, mode, str(SECONDS + 40)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready", "the workload did not start"
        cg = ["--call-graph", "dwarf"] if callgraph == "dwarf" else ["-g"]
        perf_p = subprocess.Popen([perf, "record", "-q", "-N", "-e", "cpu-clock", "-F", str(RATE)] + cg +
                                  ["-p", str(proc.pid), "-o", data, "--", "sleep", str(SECONDS)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        r = tb.run(["--native-all", "-r", str(RATE), "-d", str(SECONDS), "-p", str(proc.pid),
                    "-o", folded], timeout=SECONDS + 60)
        perf_err = perf_p.communicate(timeout=SECONDS + 60)[1]
        assert r.returncode == 0, "tachyon-bpf exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])
        assert perf_p.returncode == 0, "perf record exit %d: %s" % (perf_p.returncode, perf_err.strip()[-300:])
        maps = Maps(proc.pid, work["elfs"])
    finally:
        proc.kill()
        proc.wait()
    try:
        prof_p, prof_t = Profile("perf"), Profile("tachyon-bpf")
        stacks = perf_stacks(perf, data, proc.pid)
        modes = perf_resolver(stacks, maps)
        for st in stacks:
            prof_p.add(maps.roots, *perf_keys(st, maps, modes))
        for keys, names, n in tachyon_stacks(folded, proc.pid, maps):
            prof_t.add(maps.roots, keys, names, n)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    notes = [l for l in r.stderr.splitlines() if "native:" in l]
    return prof_p, prof_t, notes


def check_leaves(res):
    p, t = res["perf"], res["tachyon"]
    assert p.total >= 500 and t.total >= 500, "samples: perf %d, tachyon-bpf %d" % (p.total, t.total)
    keys = sorted(set(top(p.leaves, TOP)) | set(top(t.leaves, TOP)), key=lambda k: -(p.share(k) + t.share(k)))
    d = tvd(p.leaves, t.leaves, keys)
    res["leaf_tvd"] = d
    table = "; ".join("%s %.1f/%.1f%%" % (label(k, p, t), 100 * p.share(k), 100 * t.share(k)) for k in keys[:10])
    assert d <= LEAF_TVD_MAX, "leaf TVD %.3f > %.2f (perf/tachyon-bpf: %s)" % (d, LEAF_TVD_MAX, table)
    return "TVD %.3f over %d keys, %d/%d samples (perf/tachyon-bpf: %s)" % (d, len(keys), p.total, t.total, table)


def chain_has(prof, leaf, first, later):
    """Does prof have stacks leaf <- first <- ... <- later (later up to 4 frames on)?"""
    return any(c and c[0] == first and later in c[1:] for c in prof.chains[leaf])


def compare_callers(p, t, leaf):
    """[(who lost a frame: perf, tachyon or unexplained; text)] for the callers of leaf
    that one tool shows significantly more often than the other (>= 10 points, and more
    than Z_MIN standard errors of the difference of two proportions); [] when they agree."""
    cp, ct = p.callers[leaf], t.callers[leaf]
    n_p, n_t = sum(cp.values()), sum(ct.values())
    more = {"perf": [], "tachyon": []}
    for c in set(cp) | set(ct):
        a, b = cp[c] / n_p, ct[c] / n_t
        pool = (cp[c] + ct[c]) / (n_p + n_t)
        if abs(a - b) >= 0.10 and abs(a - b) > Z_MIN * math.sqrt(pool * (1 - pool) * (1 / n_p + 1 / n_t)):
            more["perf" if a > b else "tachyon"].append(c)
    share = {"perf": lambda k: cp[k] / n_p, "tachyon": lambda k: ct[k] / n_t}
    out = []
    for x, px, o, po in (("perf", p, "tachyon", t), ("tachyon", t, "perf", p)):
        def gain(keys):  # what o shows more often than x among keys
            return sum(max(0.0, share[o](k) - share[x](k)) for k in keys)
        for c in more[x]:  # x shows leaf <- c more often than o: where are o's samples instead?
            deficit = share[x](c) - share[o](c)
            head = "%s <- %s in %.0f%% (perf) vs %.0f%% (tachyon-bpf): " % (
                label(leaf, p, t), label(c, p, t), 100 * cp[c] / n_p, 100 * ct[c] / n_t)
            astray = [k for k in set(cp) | set(ct)
                      if k in (END, UNKNOWN) or k.endswith((":nofde", ":noload")) or k.startswith("<native")]
            above = {k for k in set(cp) | set(ct) if k != c and chain_has(px, leaf, c, k)}
            below = {k for k in set(cp) | set(ct) if k != c and chain_has(po, leaf, k, c)}
            if c == END:
                out.append((x, head + "%s's stack ended at the leaf" % px.tool))
            elif c.startswith("<native"):
                out.append((x, head + "tachyon-bpf's walk stopped there"))
            elif c == UNKNOWN or c.endswith((":nofde", ":noload")):
                out.append((x, head + "%s's return address is in no function" % px.tool))
            elif gain(below) >= deficit / 2:   # o: leaf <- k <- c
                out.append((x, head + "%s lost the frame between (%s has it)" % (px.tool, po.tool)))
            elif gain(above) >= deficit / 2:   # x: leaf <- c <- k, o: leaf <- k
                out.append((o, head + "%s lost it (goes from the leaf to its callers)" % po.tool))
            elif gain(astray) >= deficit / 2:
                out.append((o, head + "%s lost it (its stack ended or went astray there)" % po.tool))
            else:
                def callers(prof, counts, n):  # the leaf's 4 commonest callers, each with its own 2
                    def then(k):
                        nxt = collections.Counter()
                        for ch, m in prof.chains[leaf].items():
                            if ch and ch[0] == k:
                                nxt[ch[1] if len(ch) > 1 else END] += m
                        return "/".join(label(x, p, t) for x, _ in nxt.most_common(2))
                    return ", ".join("%s %.0f%% (then %s)" % (label(k, p, t), 100 * v / n, then(k))
                                     for k, v in counts.most_common(4))
                out.append(("unexplained", head + "no chain explains it; perf's callers: %s; tachyon-bpf's: %s" % (
                    callers(p, cp, n_p), callers(t, ct, n_t))))
    return out


def check_pairs(res):
    p, t = res["perf"], res["tachyon"]
    leaves = [k for k in set(p.leaves) | set(t.leaves) if p.share(k) >= PAIR_MIN_SHARE and t.share(k) >= PAIR_MIN_SHARE]
    assert leaves, "no leaf has %.0f%% of the samples in both tools" % (100 * PAIR_MIN_SHARE)
    verdicts = collections.defaultdict(list)
    disagree = 0
    for leaf in sorted(leaves, key=lambda k: -p.share(k)):
        v = compare_callers(p, t, leaf)
        disagree += bool(v)
        for who, text in v:
            verdicts[who].append(text)
    pairs_p = collections.Counter({(c, l): n for l, cs in p.callers.items() for c, n in cs.items()})
    pairs_t = collections.Counter({(c, l): n for l, cs in t.callers.items() for c, n in cs.items()})
    pk = set(top(pairs_p, 15)) | set(top(pairs_t, 15))
    res["pair_tvd"] = tvd(pairs_p, pairs_t, pk)
    msg = "%d leaves compared, %d agree; caller->leaf TVD %.3f (top-15 pairs)" % (
        len(leaves), len(leaves) - disagree, res["pair_tvd"])
    for who in ("perf", "tachyon", "unexplained"):
        if verdicts[who]:
            msg += "; %s: %s" % ({"perf": "perf lost frames", "tachyon": "TACHYON-BPF LOST FRAMES",
                                  "unexplained": "UNEXPLAINED"}[who], " | ".join(verdicts[who]))
    assert not verdicts["tachyon"] and not verdicts["unexplained"], msg
    return msg


def report_names(res):
    """Name agreement on the leaves: a leaf perf names is named the same by tachyon-bpf."""
    p, t = res["perf"], res["tachyon"]
    kinds, missing, other = collections.Counter(), collections.Counter(), collections.Counter()
    for key, n in p.leaves.items():
        if key in (EVAL, UNKNOWN) or key.startswith("<"):
            continue
        pn = p.names[key].most_common(1)[0][0]
        tn = t.names[key].most_common(1)[0][0] if t.names[key] else None
        if key not in t.leaves:
            kinds["tachyon-bpf never has it"] += n
            missing[key] += n
        elif pn and tn:
            kinds["same name" if pn == tn else "other name at the address"] += n
            if pn != tn:
                other["%s (perf) / %s at %s" % (pn, tn, key)] += n
        else:
            kinds[{(True, False): "perf alone names", (False, True): "tachyon-bpf alone names",
                   (False, False): "neither names"}[(bool(pn), bool(tn))]] += n
    tot = sum(kinds.values()) or 1
    assert not other and not kinds["perf alone names"], "perf names %d leaf samples otherwise: %s" % (
        sum(other.values()) + kinds["perf alone names"],
        ", ".join("%s %d" % kv for kv in other.most_common(6)) or "perf alone names them")
    return ", ".join("%s %.1f%%" % (k, 100 * v / tot) for k, v in kinds.most_common()) + \
        " (most: %s)" % ", ".join("%s %d" % (label(k, p, t), n) for k, n in missing.most_common(3)) + \
        ("; other names: %s" % ", ".join("%s %d" % kv for kv in other.most_common(4)) if other else "") + \
        "; stacks reaching _start: perf %.1f%%, tachyon-bpf %.1f%%" % (
            100 * p.rooted / max(p.total, 1), 100 * t.rooted / max(t.total, 1))


# ------------------------------------------------------------------ main

def interpreters():
    """{'3.11': argv of Debian's python3.11, '3.15': argv of sid's python3.15} as present."""
    out = {}
    for minor, kind, argv in tb.interpreters():
        if (minor, kind) in (("3.11", "debian-static"), ("3.15", "sid-static")):
            out[minor] = argv
    return out


def main():
    global CHECK_ONLY, SECONDS, RATE
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        if a == "-k" and args:
            CHECK_ONLY = args.pop(0)
        elif a == "-s" and args:
            SECONDS = float(args.pop(0))
        elif a == "-r" and args:
            RATE = int(args.pop(0))
        else:
            sys.exit(__doc__)
    if os.geteuid() != 0:
        sys.exit("run.py: needs root (BPF, perf -p)")
    unwind_run.build()
    pys = interpreters()
    work = {"elfs": {}}
    tb.check("perf binary", lambda: " ".join(find_perf()))
    # 3.15's zlib twice: -g loses libz's callers (no frame pointers there), dwarf keeps them
    runs = [("3.11", "dwarf", "compile"), ("3.11", "dwarf", "zlib"), ("3.15", "fp", "compile"), ("3.15", "fp", "zlib"),
            ("3.15", "dwarf", "zlib")]
    for minor, cg, mode in runs:
        name = "%s %s perf %s" % (mode, minor, "--call-graph dwarf" if cg == "dwarf" else "-g")
        if CHECK_ONLY and CHECK_ONLY not in name:
            continue
        res = {}

        def run_both(minor=minor, cg=cg, mode=mode, res=res):
            assert minor in pys, "no %s interpreter (tests/pythons.sh)" % minor
            t0 = time.time()
            res["perf"], res["tachyon"], notes = capture(pys[minor], mode, cg, work)
            return "%.0f s; %s" % (time.time() - t0, " ".join(notes)[:300])
        tb.check(name + ": capture", run_both)
        if "perf" not in res:
            continue
        tb.check(name + ": leaves", check_leaves, res)
        tb.check(name + ": pairs", check_pairs, res)
        tb.check(name + ": names", report_names, res)
    print("%d passed, %d failed" % (tb.results["passed"], tb.results["failed"]))
    sys.exit(1 if tb.results["failed"] else 0)


if __name__ == "__main__":
    main()
