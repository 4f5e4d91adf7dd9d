#!/usr/bin/env python3
"""names.py: native frames named as perf names them (docs/native-unwinding.md, "Names"), for
real: the agent profiles processes with --native (-p, after their start) and each name is
checked against the files, computed here independently of the agent.

  debug      Debian's stripped python3.11 and libc.so.6 with python3.11-dbg and libc6-dbg
             installed (/usr/lib/debug/.build-id/): a zlib + json + re workload run twice,
             once in a mount namespace where /usr/lib/debug is empty (the baseline: stripped
             code is lib+0xSTART) and once as is: no python3.11+0x / libc.so.6+0x frame is
             left, and each START of the baseline's top leaves is named, in the named run,
             by the FUNC symbol of the debug file (readelf -Ws) that holds it
  perfmap    a pyenv 3.12+ `-X perf` run: CPython's trampolines named py::function:file
             from /tmp/perf-PID.map ([perf-map]), each the Python function of the frame after it
             (>= 90%: a sample between a call and its frame's push pairs it with the caller),
             no [anon] frame left
  debuglink  a library built here, stripped, with .gnu_debuglink to its debug file next
             to it / in .debug/ (no build-id, so the CRC32 is what matches): its static
             function named
  minidebug  the same library with its .symtab in .gnu_debugdata (xz): named
  hostile    (the same library, the process running as uid 1234) a debug file of another
             build (other build-id) under the debuglink name, one whose CRC32 does not
             match, a debuglink name with a '/' pointing at a matching debug file, a
             debuglink symlink to a root-only copy, an xz bomb and garbage in
             .gnu_debugdata: never named from those (lib+0x...), the capture ends normally;
             perf maps (the process in a mount namespace with a /tmp of its own, a map of
             uid 1234 named): a symlink planted by another user at /tmp/perf-PID.map (to a
             root-only map, and to a map of that user), a 70 MB map of garbage, overlapping
             and overflowing lines around the right one: the planted ones not read, the
             right line found, nothing else named

One line per check, then "N passed, N failed"; exit 1 on any failure.

    tests/native/names.py [-k SUBSTRING]"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import tb  # noqa: E402
import importlib.util  # noqa: E402

# the native suite's check() and frames() (and its RESULTS and CHECK_ONLY): tests/native/run.py
_spec = importlib.util.spec_from_file_location("native_run", os.path.join(HERE, "run.py"))
native = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(native)
check, frames, RESULTS = native.check, native.frames, native.RESULTS
USER = "1234"                       # the target's uid in the hostile checks (no passwd entry needed)
PLANTER = "65534"                   # another user (nobody) who plants files in /tmp
STRIPPED_RE = re.compile(r"^(python3\.11|libc\.so\.6)\+0x([0-9a-f]+)$")

DEBUG_WORKLOAD = r"""
import json, re, sys, time, zlib
time.sleep(1.0)
end = time.monotonic() + float(sys.argv[1])
data = json.dumps([{"k%d" % i: [i, str(i) * 3, {"x": i / 3}]} for i in range(3000)])
text = data[:30000].encode()
pat = re.compile(r'"k(\d+)": \[(\d+), "(\d+)"')
while time.monotonic() < end:
    zlib.compress(text, 6)
    json.loads(data)
    sum(1 for _ in pat.finditer(data))
"""

PERF_WORKLOAD = r"""
import sys, time
time.sleep(1.0)
end = time.monotonic() + float(sys.argv[1])
def leaf(n):
    return sum(i * i for i in range(n))
def middle():
    return leaf(2000)
while time.monotonic() < end:
    middle()
"""

# calls `spin` of the library $1 in a loop for $2 seconds (after a second: -p attaches)
LIB_WORKLOAD = r"""
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
lib.spin.argtypes = [ctypes.c_ulong]
time.sleep(1.0)
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    lib.spin(2000000)
"""

LIB_C = r"""
__attribute__((noinline, noclone)) static unsigned long NAME(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++)
		x += i * i;
	return x;
}

unsigned long spin(unsigned long n)
{
	return NAME(n) + 1;
}
"""

# code in an anonymous executable mapping: mov rcx, 20M; 1: dec rcx; jnz 1b; ret.  Its
# address goes to argv[1] (a file), then it runs for argv[2] seconds after 1.5 s of sleep.
ANON_WORKLOAD = r"""
import ctypes, mmap, sys, time
code = bytes.fromhex("48b9") + (20000000).to_bytes(8, "little") + bytes.fromhex("48ffc975fbc3")
mm = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
              prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)    # private: [anon], not /dev/zero
mm.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(mm))
fn = ctypes.CFUNCTYPE(None)(addr)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%x\n" % addr)
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(1.5)
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    fn()
"""


def profile(argv, seconds, extra=(), user=None, wait_file=None, before=None):
    """Start argv (as uid user), attach with -p --native for `seconds`: (stacks, stderr).
    before(pid) runs once the process is up (wait_file written, when given)."""
    fd, out = tempfile.mkstemp(suffix=".folded", prefix="tb-names-")
    os.close(fd)
    if user:
        argv = ["setpriv", "--reuid", user, "--regid", user, "--clear-groups"] + argv
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        if wait_file:
            deadline = time.monotonic() + 20
            while not os.path.exists(wait_file) and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.02)
            assert os.path.exists(wait_file), "the workload did not start: %s" % (proc.stderr.read()[-300:]
                                                                                  if proc.poll() is not None else "")
        else:
            time.sleep(0.3)
        if before:
            before(proc.pid)
        r = tb.run(["-r", "199", "--native", "-d", str(seconds), "-o", out, "-p", str(proc.pid)] + list(extra),
                   timeout=120)
        assert r.returncode == 0, "agent exit %d: %s" % (r.returncode, r.stderr.strip()[-400:])
        with open(out, encoding="utf-8", errors="replace") as f:
            stacks = [frames(l) for l in f if l.strip()]
    finally:
        proc.kill()
        proc.wait()
        os.unlink(out)
        if os.path.lexists(perfmap_path(proc.pid)):      # -X perf's, or one a check made
            os.unlink(perfmap_path(proc.pid))
    assert stacks, "no samples"
    return stacks, r.stderr


def func_symbols(path):
    """[(start, end, name, size, binding, index in the table)] of the FUNC symbols of path's
    .symtab (readelf -Ws), in the table's order; a name whole, as the string table has it
    (cfree@GLIBC_2.2.5: what perf and tachyon-bpf show)."""
    out = subprocess.run(["readelf", "-Ws", path], capture_output=True, text=True, check=True).stdout
    syms, in_symtab = [], False
    for line in out.splitlines():
        if line.startswith("Symbol table"):
            in_symtab = "'.symtab'" in line
            continue
        p = line.split()
        if in_symtab and len(p) >= 8 and p[3] in ("FUNC", "IFUNC") and p[6] != "UND":
            start, size = int(p[1], 16), int(p[2], 0) if not p[2].startswith("0x") else int(p[2], 16)
            if start:
                syms.append((start, start + max(size, 1), p[7], size, p[4], len(syms)))
    return syms


def perf_choices(syms):
    """{start: the name perf shows there} (tools/perf/util/symbol.c choose_best_symbol, written
    here from its source, not from the agent's): of the aliases at one start, one with a size,
    then not weak, then global, then the fewest leading underscores, then the longest name,
    then the first in the table."""
    best = {}
    for start, _, name, size, bind, idx in syms:
        key = (size == 0, bind == "WEAK", bind != "GLOBAL", len(name) - len(name.lstrip("_")), -len(name), idx)
        if start not in best or key < best[start][0]:
            best[start] = (key, name)
    return {s: n for s, (_, n) in best.items()}


def names_at(syms, addr):
    """The names of the symbols holding addr (aliases: any of them)."""
    return {n for s, e, n, *_ in syms if s <= addr < e}


def build_id_debug(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    assert m, "%s has no build-id" % path
    d = "/usr/lib/debug/.build-id/%s/%s.debug" % (m.group(1)[:2], m.group(1)[2:])
    assert os.path.exists(d), "%s: no debug file %s (scripts/install-deps.sh test)" % (path, d)
    return d


def leaves(stacks):
    """{(name, module): samples} of the innermost frames."""
    out = {}
    for fr, n in stacks:
        out[fr[-1]] = out.get(fr[-1], 0) + n
    return out


def check_debug(work):
    py = "/usr/bin/python3.11"
    libc = os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6")
    debug = {"python3.11": func_symbols(build_id_debug(py)), "libc.so.6": func_symbols(build_id_debug(libc))}
    script = os.path.join(work, "debug_workload.py")
    with open(script, "w") as f:
        f.write(DEBUG_WORKLOAD)
    os.chmod(script, 0o644)
    empty = os.path.join(work, "empty")
    os.makedirs(empty, exist_ok=True)
    # the baseline: the same binary where /usr/lib/debug is empty (the agent looks inside the
    # target's root, through its mount namespace)
    base, _ = profile(["unshare", "-m", "--propagation", "private", "sh", "-c",
                       "mount --bind %s /usr/lib/debug && exec %s %s 5" % (empty, py, script)], 5)
    named, err = profile([py, script, "5"], 5)
    m = re.search(r"native names: (\d+) files named from their debug files", err)
    assert m and int(m.group(1)) >= 2, "summary: %s" % (m.group(0) if m else err.strip()[-300:])
    total = sum(n for _, n in named)
    left = sum(n for fr, n in named if any(STRIPPED_RE.match(f) for f, _ in fr))
    assert left <= total * 0.01, "%d of %d samples still have a python3.11+0x/libc.so.6+0x frame" % (left, total)
    # the baseline's stripped leaves, by start: each named by the debug file's symbol there
    base_leaves = sorted(((n, f) for f, n in leaves(base).items() if STRIPPED_RE.match(f[0])), reverse=True)
    assert len(base_leaves) >= 3, "baseline: only %d stripped leaves (debug files hidden?)" % len(base_leaves)
    named_leaves = {f[0] for f in leaves(named)}
    named_all = {f for fr, _ in named for f, _ in fr}
    found, missing = 0, []
    for n, (name, module) in base_leaves[:10]:
        mod, start = STRIPPED_RE.match(name).groups()
        want = names_at(debug[mod], int(start, 16))
        assert want, "%s: no FUNC symbol of the debug file holds 0x%s" % (mod, start)
        if want & named_all:
            found += 1
        elif n >= max(10, 0.01 * total):  # a leaf this frequent is in the other run too
            missing.append("%s+0x%s (%d samples): %s" % (mod, start, n, "/".join(sorted(want))))
    assert not missing, "not named as the debug file names them: " + "; ".join(missing)
    assert found >= 0.6 * min(10, len(base_leaves)), "%d of the baseline's top stripped leaves named" % found
    # and every name shown for those modules is a symbol of the debug file (or .dynsym's PLT)
    known = {m: {sym[2] for sym in s} for m, s in debug.items()}
    wrong = {f for fr, _ in named for f, mod in fr
             if mod in known and f not in known[mod] and not f.endswith("@plt")}
    assert not wrong, "names not in the debug files: %s" % sorted(wrong)[:8]
    # and no name is one perf never shows: an alias that loses to another at each of its starts
    # (python3.11's LTO build has PyUnicode_READ_CHAR.lto_priv.{7,8,3,1}.lto_priv.0 at one start)
    shown = {m: set(perf_choices(s).values()) for m, s in debug.items()}
    losers = {f for fr, _ in named for f, mod in fr if mod in shown and f in known[mod] and f not in shown[mod]}
    assert not losers, "aliases perf does not show (another name at their start wins): %s" % sorted(losers)[:8]
    return "%d samples; %d of the baseline's top %d stripped leaves named as readelf -Ws of the debug files" \
        " names their starts" % (total, found, min(10, len(base_leaves)))


def check_perfmap(work, py):
    script = os.path.join(work, "perf_workload.py")
    with open(script, "w") as f:
        f.write(PERF_WORKLOAD)
    stacks, err = profile([py, "-X", "perf", script, "5"], 4)
    total = sum(n for _, n in stacks)
    with_py = sum(n for fr, n in stacks if any(m == "[perf-map]" and f.startswith("py::") for f, m in fr))
    with_anon = sum(n for fr, n in stacks if any(f == "[anon]" for f, _ in fr))
    # each trampoline is named for the Python function it runs: the frame right after it
    pairs = wrong = 0
    for fr, n in stacks:
        for i, (f, m) in enumerate(fr[:-1]):
            if m == "[perf-map]":
                pairs += n
                if f != "py::%s:%s" % fr[i + 1]:
                    wrong += n
    assert with_py >= 0.8 * total, "%d of %d samples with a py:: frame" % (with_py, total)
    assert with_anon <= 0.02 * total, "%d of %d samples with an [anon] frame" % (with_anon, total)
    # (a sample between the trampoline's call and the frame's push, or after its pop, pairs
    # it with the caller's frame: a few percent)
    assert pairs and wrong <= 0.1 * pairs, "%d of %d py:: frames not named for the Python frame after them" % (
        wrong, pairs)
    assert re.search(r"1 perf maps read \(\d+ names\)", err), err.strip()[-300:]
    return "%d of %d samples with py:: frames, %d with [anon]; %d of %d py:: frames name the Python frame after" \
        " them" % (with_py, total, with_anon, pairs - wrong, pairs)


def run(cmd, **kw):
    subprocess.run(cmd, check=True, capture_output=True, **kw)


def build_lib(work, tag, name="hidden_spin_local", build_id=True):
    """libnames-TAG.so (unstripped) built from LIB_C with NAME as its static function."""
    d = os.path.join(work, tag)
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    src, lib = os.path.join(d, "lib.c"), os.path.join(d, "libnames-%s.so" % tag)
    with open(src, "w") as f:
        f.write(LIB_C.replace("NAME", name))
    run(["gcc", "-O2", "-g", "-shared", "-fPIC", "-o", lib, src,
         "-Wl,--build-id" + ("" if build_id else "=none")])
    return d, lib


def split_debug(lib, debug_path):
    """Move lib's symbols to debug_path; strip lib (no debuglink yet)."""
    run(["objcopy", "--only-keep-debug", lib, debug_path])
    run(["strip", "--strip-all", lib])


def lib_leaf(lib, seconds=3, user=None, before=None):
    script = os.path.join(os.path.dirname(lib), "lib_workload.py")
    with open(script, "w") as f:
        f.write(LIB_WORKLOAD)
    os.chmod(script, 0o644)
    stacks, err = profile(["/usr/bin/python3.11", script, lib, str(seconds + 2)], seconds, user=user,
                          before=before)
    mod = os.path.basename(lib)
    total = sum(n for fr, n in stacks if any(m == mod for _, m in fr))
    lv = leaves([(fr, n) for fr, n in stacks if any(m == mod for _, m in fr)])
    top = max(lv.items(), key=lambda kv: kv[1]) if lv else (("", ""), 0)
    assert total >= 50, "%d samples in %s" % (total, mod)
    return top[0][0], top[1], total, err


def check_debuglink(work, where):
    d, lib = build_lib(work, "link-dotdebug" if where else "link-dir", build_id=False)
    dbg_dir = os.path.join(d, where) if where else d
    os.makedirs(dbg_dir, exist_ok=True)
    dbg = os.path.join(dbg_dir, "libnames.debug")
    split_debug(lib, dbg)
    run(["objcopy", "--add-gnu-debuglink=" + dbg, lib])
    leaf, n, total, _ = lib_leaf(lib)
    assert leaf == "hidden_spin_local" and n >= 0.8 * total, "leaf %s in %d of %d" % (leaf, n, total)
    return "hidden_spin_local in %d of %d samples (debug file in %s)" % (n, total, where or "the file's dir")


def check_minidebug(work):
    d, lib = build_lib(work, "mini")
    mini = os.path.join(d, "mini")
    run(["objcopy", "--only-keep-debug", lib, mini])
    run(["objcopy", "--strip-debug", "--remove-section", ".comment", mini])
    run(["xz", "-f", mini])
    run(["strip", "--strip-all", lib])
    run(["objcopy", "--add-section", ".gnu_debugdata=" + mini + ".xz", lib])
    leaf, n, total, err = lib_leaf(lib)
    assert leaf == "hidden_spin_local" and n >= 0.8 * total, "leaf %s in %d of %d" % (leaf, n, total)
    return "hidden_spin_local in %d of %d samples" % (n, total)


def unnamed(leaf, lib):
    return re.match(r"^%s\+0x[0-9a-f]+$" % re.escape(os.path.basename(lib)), leaf)


def check_hostile_debug(work, case):
    d, lib = build_lib(work, "h-" + case, build_id=case == "other-build")
    dbg = os.path.join(d, "libnames.debug")
    if case == "other-build":                   # another build's debug file under the name
        _, other = build_lib(work, "h-other-src", name="other_name_local")
        split_debug(lib, dbg)
        run(["objcopy", "--add-gnu-debuglink=" + dbg, lib])
        os.unlink(dbg)
        split_debug(other, dbg)
    elif case == "crc":                         # the debug file changed after the link
        split_debug(lib, dbg)
        run(["objcopy", "--add-gnu-debuglink=" + dbg, lib])
        with open(dbg, "ab") as f:
            f.write(b"\0")
    elif case == "slash":                       # a debuglink name with a '/': not looked at
        evil = os.path.join(work, "evil.debug")
        split_debug(lib, evil)
        crc = subprocess.run(["python3", "-c", "import zlib,sys;print(zlib.crc32(open(sys.argv[1],'rb').read()))",
                              evil], capture_output=True, text=True, check=True).stdout.strip()
        name = b"../evil.debug\0"
        name += b"\0" * (-len(name) % 4)
        link = os.path.join(d, "link.bin")
        with open(link, "wb") as f:
            f.write(name + int(crc).to_bytes(4, "little"))
        run(["objcopy", "--add-section", ".gnu_debuglink=" + link, lib])
    elif case == "root-only":                   # a symlink to a copy the target cannot read
        hidden = os.path.join(work, "root-only.debug")
        split_debug(lib, hidden)
        os.chmod(hidden, 0o600)
        run(["objcopy", "--add-gnu-debuglink=" + hidden, lib])
        os.makedirs(os.path.join(d, ".debug"), exist_ok=True)
        os.symlink(hidden, os.path.join(d, ".debug", "root-only.debug"))
    elif case == "xz-bomb":                     # 300 MB of zeros: decompression stops at its cap
        bomb = os.path.join(d, "bomb.xz")
        subprocess.run("head -c 300M /dev/zero | xz -1 > %s" % bomb, shell=True, check=True)
        run(["strip", "--strip-all", lib])
        run(["objcopy", "--add-section", ".gnu_debugdata=" + bomb, lib])
    elif case == "xz-garbage":
        junk = os.path.join(d, "junk")
        with open(junk, "wb") as f:
            f.write(b"\xfd7zXZ\0" + os.urandom(4096))
        run(["strip", "--strip-all", lib])
        run(["objcopy", "--add-section", ".gnu_debugdata=" + junk, lib])
    os.chmod(lib, 0o755)
    t0 = time.monotonic()
    leaf, n, total, err = lib_leaf(lib, user=USER)
    took = time.monotonic() - t0
    assert unnamed(leaf, lib), "%s: leaf named %s (%d of %d)" % (case, leaf, n, total)
    assert "other_name_local" not in err and took < 30, "%s: %.1f s" % (case, took)
    return "leaf %s in %d of %d samples (%.1f s)" % (leaf, n, total, took)


def perfmap_path(pid):
    return "/tmp/perf-%d.map" % pid


def in_target(pid, uid, cmd):
    """Run the shell command cmd as uid in the mount namespace of pid (its own /tmp)."""
    run(["nsenter", "-t", str(pid), "-m", "setpriv", "--reuid", uid, "--regid", uid, "--clear-groups",
         "sh", "-c", cmd])


def anon_leaf(writer, user=None, seconds=3):
    """The top leaf of the anonymous-code workload, run (as user) in a mount namespace with a
    /tmp of its own (this machine's /tmp is root's only: other users could not write a map);
    writer(pid, addr) makes its map there."""
    work = tempfile.mkdtemp(prefix="tb-names-", dir="/var/tmp")
    os.chmod(work, 0o777)                   # the workload writes its address here
    script = os.path.join(work, "anon_workload.py")
    with open(script, "w") as f:
        f.write(ANON_WORKLOAD)
    os.chmod(script, 0o644)
    addr_file = os.path.join(work, "addr")
    drop = "setpriv --reuid %s --regid %s --clear-groups " % (user, user) if user else ""
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c",
            "mount -t tmpfs -o mode=1777 tb-names /tmp && exec %s/usr/bin/python3.11 %s %s %d" % (
                drop, script, addr_file, seconds + 3)]

    def before(pid):
        with open(addr_file) as f:
            writer(pid, int(f.read(), 16), work)

    try:
        stacks, err = profile(argv, seconds, wait_file=addr_file, before=before)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lv = leaves(stacks)
    top = max(lv.items(), key=lambda kv: kv[1])
    return top[0], top[1], sum(lv.values()), err


def check_perfmap_good(work):
    def writer(pid, addr, _):
        in_target(pid, USER, "printf '%x 40 jit_spin\\n' > %s" % (addr, perfmap_path(pid)))
    (leaf, mod), n, total, err = anon_leaf(writer, user=USER)
    assert (leaf, mod) == ("jit_spin", "[perf-map]") and n >= 0.5 * total, "leaf %s (%s): %d of %d" % (
        leaf, mod, n, total)
    return "jit_spin ([perf-map]) in %d of %d samples" % (n, total)


def check_perfmap_planted(work, target):
    def writer(pid, addr, dir_):
        secret = os.path.join(dir_, "secret.map")
        with open(secret, "w") as f:
            f.write("%x 40 SECRET_NAME\n" % addr)
        if target == "root-only":
            os.chmod(secret, 0o600)
        else:                               # the planter's own file, readable by all
            os.chmod(secret, 0o644)
            os.chown(secret, int(PLANTER), int(PLANTER))
        in_target(pid, PLANTER, "ln -s %s %s" % (secret, perfmap_path(pid)))
    (leaf, mod), n, total, err = anon_leaf(writer, user=USER)
    assert "SECRET_NAME" not in leaf and leaf == "[anon]", "leaf %s (%s)" % (leaf, mod)
    return "leaf [anon] in %d of %d samples" % (n, total)


def check_perfmap_garbage(work):
    def writer(pid, addr, _):
        with open("/proc/%d/root%s" % (pid, perfmap_path(pid)), "w") as f:
            f.write("zz yy not a line\n" * 1000)
            f.write("%x 100000 outer_overlapping\n" % (addr - 0x800))
            f.write("ffffffffffffff00 1000 overflowing\n")
            f.write("%x 0 zero_size\n" % addr)
            f.write("%x 40 jit_spin\n" % addr)
            f.write("%x 40 %s\n" % (addr, "x" * 100000))       # a name longer than any kept
            f.write("%x 40 \x1b[31mescape\n" % (addr + 0x1000))
            line = "%x 10 filler_%%d\n" % (addr + 0x100000)
            chunk = "".join(line % i for i in range(20000))
            while f.tell() < 70 << 20:                         # past the 64 MiB read
                f.write(chunk)
            f.write("x" * (5 << 20))                          # and a line without end
    t0 = time.monotonic()
    (leaf, mod), n, total, err = anon_leaf(writer)
    took = time.monotonic() - t0
    assert mod == "[perf-map]" and leaf in ("jit_spin", "outer_overlapping") and n >= 0.5 * total, \
        "leaf %s (%s): %d of %d" % (leaf, mod, n, total)
    return "leaf %s in %d of %d samples (%.1f s with a 75 MB map)" % (leaf, n, total, took)


def main():
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        if a == "-k" and args:
            native.CHECK_ONLY = args.pop(0)
        else:
            sys.exit(__doc__)
    if os.geteuid() != 0:
        sys.exit("names.py: needs root (BPF)")
    work = tempfile.mkdtemp(prefix="tb-names-")
    os.chmod(work, 0o755)
    try:
        check("debug python3.11 libc", check_debug, work)
        perf_py = sorted(glob.glob("/root/.pyenv/versions/3.1[2-9]*/bin/python3.1[2-9]"))
        if perf_py:
            check("perfmap -X perf %s" % os.path.basename(perf_py[0]), check_perfmap, work, perf_py[0])
        else:
            print("SKIP perfmap: no pyenv 3.12+ (tests/pythons.sh)")
        check("debuglink dir", check_debuglink, work, "")
        check("debuglink .debug/", check_debuglink, work, ".debug")
        check("minidebug", check_minidebug, work)
        for case in ("other-build", "crc", "slash", "root-only", "xz-bomb", "xz-garbage"):
            check("hostile debug %s" % case, check_hostile_debug, work, case)
        check("perfmap owned by the target's user", check_perfmap_good, work)
        check("hostile perfmap planted root-only", check_perfmap_planted, work, "root-only")
        check("hostile perfmap planted other user", check_perfmap_planted, work, "other-user")
        check("hostile perfmap garbage", check_perfmap_garbage, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % tuple(RESULTS))
    sys.exit(1 if RESULTS[1] else 0)


if __name__ == "__main__":
    main()
