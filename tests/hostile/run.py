#!/usr/bin/env python3
"""Hostile-host tests: tachyon-bpf runs as root and reads what other users'
processes control.  Each check plays an attacker for real (an unprivileged
process via setpriv, a planted symlink, a FIFO, crafted captures, a process
that lies about its layout, a fork storm, signals, escape sequences) and
checks the promise of docs/security.md.  One line per check, then
"N passed, N failed"; exit 1 on any failure.

    tests/hostile/run.py [-k SUBSTRING]"""
import json
import re
import os
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import tb  # noqa: E402

BIN = tb.BIN
PY = "/usr/bin/python3.11"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
TMP = tempfile.mkdtemp(prefix="tb-hostile-")
os.chmod(TMP, 0o755)
SPIN = "import time\nend = time.time() + %f\nwhile time.time() < end: pass\n"


def spin_code(filename, seconds):
    """Python source that compiles a spinning function under `filename` and runs it."""
    body = "def spin_here():\n    import time\n    end = time.time() + %f\n" \
           "    while time.time() < end:\n        pass\n" % seconds
    return "ns = {}\nexec(compile(%r, %r, 'exec'), ns)\nns['spin_here']()\n" % (body, filename)


def wait_started(proc, seconds=0.4):
    time.sleep(seconds)
    assert proc.poll() is None, "the target exited early (rc %s)" % proc.returncode


def agent(args, timeout=90, **kw):
    """Run tachyon-bpf; the CompletedProcess (stderr kept as bytes)."""
    return subprocess.run([BIN] + args, capture_output=True, timeout=timeout, **kw)


def no_crash(r, what):
    assert r.returncode >= 0, "%s: killed by signal %d" % (what, -r.returncode)
    assert r.returncode in (0, 1, 2), "%s: exit %d: %s" % (what, r.returncode, r.stderr[-300:])


# ---- files of a target are read with the target's credentials -------------

def test_root_only_source_not_disclosed():
    d = os.path.join(TMP, "disclose")
    os.mkdir(d)
    os.chmod(d, 0o755)
    secret = os.path.join(d, "secret.py")
    with open(secret, "w") as f:
        f.write("# SECRET-TOKEN-4711 (root only)\n" * 20)
    os.chmod(secret, 0o600)
    public = os.path.join(d, "public.py")
    with open(public, "w") as f:
        f.write("# PUBLIC-TEXT-0815\n" * 20)
    os.chmod(public, 0o644)
    code = spin_code(secret, 20) .replace("ns['spin_here']()", "import threading\n"
                                          "threading.Thread(target=ns['spin_here']).start()") + \
        spin_code(public, 20)
    proc = subprocess.Popen(NOBODY + [PY, "-c", code])
    try:
        wait_started(proc)
        out = os.path.join(TMP, "disclose.heatmap.json")
        r = agent(["-q", "-p", str(proc.pid), "-d", "1.5", "-r", "499", "-o", out])
        assert r.returncode == 0, r.stderr
        data = json.load(open(out))
    finally:
        proc.kill()
        proc.wait()
    files = {f["path"]: f for f in data["files"]}
    assert secret in files and public in files, "files in the heatmap: %s" % list(files)
    assert "SECRET-TOKEN" not in json.dumps(data), "the root-only file's text is in the output"
    assert files[public]["source"] and "PUBLIC-TEXT-0815" in files[public]["source"], \
        "a file the target's user can read is not shown"
    return "secret.py: %s; public.py shown" % files[secret]["missing"]


def test_fifo_not_opened():
    """A FIFO named as a source file: opening it for reading as root would be
    seen by a writer blocked on it (and a device node could have effects)."""
    d = os.path.join(TMP, "fifo")
    os.mkdir(d)
    os.chmod(d, 0o777)
    fifo = os.path.join(d, "trap.py")
    os.mkfifo(fifo)
    os.chmod(fifo, 0o666)
    marker = os.path.join(d, "opened")
    code = ("import os, threading\n"
            "def watch():\n"
            "    fd = os.open(%r, os.O_WRONLY)\n"   # returns only when a reader opens it
            "    open(%r, 'w').write('opened')\n"
            "threading.Thread(target=watch, daemon=True).start()\n" % (fifo, marker)) + spin_code(fifo, 20)
    proc = subprocess.Popen(NOBODY + [PY, "-c", code])
    try:
        wait_started(proc)
        out = os.path.join(TMP, "fifo.heatmap.json")
        r = agent(["-q", "-p", str(proc.pid), "-d", "1.5", "-r", "499", "-o", out])
        time.sleep(0.3)
        assert r.returncode == 0, r.stderr
        data = json.load(open(out))
    finally:
        proc.kill()
        proc.wait()
    assert not os.path.exists(marker), "the agent opened the FIFO for reading"
    files = {f["path"]: f for f in data["files"]}
    return "trap.py: %s" % files.get(fifo, {}).get("missing")


# ---- outputs cannot be redirected -------------------------------------------

def shared_dir_and_victim(name):
    """A world-writable sticky directory (like /tmp) and a root-owned file an attacker wants clobbered."""
    d = os.path.join(TMP, name)
    os.mkdir(d)
    os.chmod(d, 0o1777)
    victim = os.path.join(TMP, name + "-victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    return d, victim


def test_planted_temp_symlink():
    d, victim = shared_dir_and_victim("outdir")
    final = os.path.join(d, "p.json")
    proc = subprocess.Popen([BIN, "-q", "-r", "99", "-d", "1.5", "-o", final, "--", PY, "-c", SPIN % 5],
                            stderr=subprocess.PIPE)
    # the attacker knows the agent's pid: plant the names it could use
    for name in ("p.json.tmp.%d" % proc.pid, "p.json.tmp"):
        os.symlink(victim, os.path.join(d, name))
    _, err = proc.communicate(timeout=60)
    assert open(victim).read() == "precious\n", "the victim file was overwritten"
    assert proc.returncode == 0, err
    assert os.path.isfile(final) and not os.path.islink(final)
    tb.tree_json.load(final)
    return "victim untouched, output written"


def test_planted_final_symlink():
    d, victim = shared_dir_and_victim("outdir2")
    final = os.path.join(d, "q.json")
    os.symlink(victim, final)
    r = agent(["-q", "-r", "99", "-d", "1", "-o", final, "--", PY, "-c", SPIN % 3])
    assert open(victim).read() == "precious\n", "the victim file was overwritten through the final name"
    assert r.returncode == 0, r.stderr
    assert not os.path.islink(final), "the output is still the planted link"
    return "the link was replaced, not followed"


def test_private_source_output_private():
    """Issue 25, row 6: a uid 65534 process's 0600 source in a 0700 directory, read with its
    credentials into a heatmap: the heatmap (and every other output) is 0600, and owned by the
    user who ran sudo when there is one, so a third user does not read the secret through it."""
    d = os.path.join(TMP, "private")
    os.mkdir(d)
    os.chown(d, 65534, 65534)
    os.chmod(d, 0o700)
    src = os.path.join(d, "mine.py")
    with open(src, "w") as f:
        f.write("# NOBODY-SECRET-2718\n" * 20)
    os.chown(src, 65534, 65534)
    os.chmod(src, 0o600)
    proc = subprocess.Popen(NOBODY + [PY, "-c", spin_code(src, 20)])
    modes = []
    try:
        wait_started(proc)
        outs = [os.path.join(TMP, "private" + ext) for ext in (".heatmap.json", ".json", ".tbp", ".heatmap.html")]
        args = ["-q", "-p", str(proc.pid), "-d", "1.5", "-r", "499"]
        for out in outs:
            args += ["-o", out]
        r = agent(args)
        assert r.returncode == 0, r.stderr
        assert "NOBODY-SECRET-2718" in open(outs[0]).read(), "the target's own source is not in its heatmap"
        for out in outs:
            st = os.stat(out)
            assert st.st_mode & 0o077 == 0, "%s is %o" % (out, st.st_mode & 0o7777)
            modes.append("%s %o" % (os.path.basename(out), st.st_mode & 0o777))
        env = dict(os.environ, SUDO_UID="1234", SUDO_GID="1235")
        r = agent(["-q", "-p", str(proc.pid), "-d", "0.5", "-o", outs[1]], env=env)
        assert r.returncode == 0, r.stderr
        st = os.stat(outs[1])
        assert (st.st_uid, st.st_gid) == (1234, 1235), "under sudo: owner %d:%d" % (st.st_uid, st.st_gid)
    finally:
        proc.kill()
        proc.wait()
    return "%s; the sudo user's under sudo" % ", ".join(modes)


def test_planted_output_directory():
    """Issue 25, row 7: another user makes a directory at the output name in a shared 1777
    directory. Made before the capture: refused at once, in one line (issue 26: outputs checked
    before sampling). Made during the capture: one line says so and where the output is kept
    instead (a random name)."""
    d, _ = shared_dir_and_victim("outdir-dir")
    final = os.path.join(d, "r.json")
    subprocess.run(NOBODY + ["mkdir", final], check=True)
    r = agent(["-q", "-r", "99", "-d", "1", "-o", final, "--", PY, "-c", SPIN % 3])
    lines = r.stderr.decode(errors="replace").strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "is a directory" in lines[0], \
        "planted before: exit %d: %s" % (r.returncode, lines)
    os.rmdir(final)
    proc = subprocess.Popen([BIN, "-q", "-r", "99", "-d", "3", "-o", final, "--", PY, "-c", SPIN % 5],
                            stderr=subprocess.PIPE)
    time.sleep(1.5)
    subprocess.run(NOBODY + ["mkdir", final], check=True)
    _, err = proc.communicate(timeout=60)
    lines = err.decode(errors="replace").strip().splitlines()
    r = subprocess.CompletedProcess(proc.args, proc.returncode, b"", err)
    assert r.returncode == 1, "exit %d: %s" % (r.returncode, lines)
    assert len(lines) == 1 and "the output is kept as " in lines[0], "stderr: %s" % lines
    kept = lines[0].split("the output is kept as ", 1)[1]
    assert os.path.dirname(kept) == d and os.path.basename(kept).startswith("r.json.tmp."), kept
    tb.tree_json.load(kept)
    assert os.path.isdir(final) and not os.listdir(final), "the planted directory was touched"
    return "kept as %s" % os.path.basename(kept)


def test_no_temp_left_on_kill():
    d = os.path.join(TMP, "outdir3")
    os.mkdir(d)
    big = os.path.join(d, "k.html")
    proc = subprocess.Popen([BIN, "-q", "-r", "99", "-o", big, "--", PY, "-c", SPIN % 30])
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.02)
    proc.kill()   # during or after the write
    proc.wait()
    leftovers = [n for n in os.listdir(d) if n != "k.html"]
    assert not leftovers, "temporary files left: %s" % leftovers
    return "nothing but the output (%s)" % ("written" if os.path.exists(big) else "not written")


# ---- crafted captures ---------------------------------------------------------

def test_crafted_captures():
    corpus = os.path.join(HERE, "captures")
    fmts = subprocess.run([BIN, "render", "--list-formats"], capture_output=True, text=True)
    exts = fmts.stdout.split() if fmts.returncode == 0 and fmts.stdout.strip() else \
        [".html", ".json", ".folded", ".speedscope.json", ".pb.gz", ".tbp", ".heatmap.html",
         ".heatmap.json", ".gecko.json", ".jsonl", ".txt"]
    bad = []
    n = 0
    for name in sorted(os.listdir(corpus)):
        for ext in exts:
            out = os.path.join(TMP, "crafted" + ext)
            t0 = time.time()
            try:
                r = agent(["render", "-q", os.path.join(corpus, name), "-o", out], timeout=20)
            except subprocess.TimeoutExpired:
                bad.append("%s %s: over 20 s" % (name, ext))
                continue
            n += 1
            lines = r.stderr.decode(errors="replace").strip().splitlines()
            if r.returncode < 0 or r.returncode > 2:
                bad.append("%s %s: exit %d" % (name, ext, r.returncode))
            elif r.returncode and len(lines) != 1:
                bad.append("%s %s: %d lines on stderr" % (name, ext, len(lines)))
            elif time.time() - t0 > 5:
                bad.append("%s %s: %.1f s" % (name, ext, time.time() - t0))
    assert not bad, "; ".join(bad[:6]) + (" (+%d more)" % (len(bad) - 6) if len(bad) > 6 else "")
    return "%d renders: each a file or one line, none over 5 s" % n


def test_capture_time_origin_at_the_end_of_time():
    """A real capture whose timeline origin is rewritten to near INT64_MAX ns (issue 25, row 8:
    `render --from` overflowed a signed sum and wrote a negative start time): refused, or
    sliced, in one line; never a start time before 1970."""
    import zlib
    src = os.path.join(TMP, "origin.tbp")
    t0 = time.time_ns()
    r = agent(["-q", "-d", "2", "-o", src, "--", PY, "-c", SPIN % 1.5], timeout=60)
    assert r.returncode == 0, "capture: exit %d: %s" % (r.returncode, r.stderr[-300:])
    data = open(src, "rb").read()
    payload = bytearray(zlib.decompress(data[32:]))
    # the timeline's (width u64, origin u64, buckets u32): the origin is the capture's start
    at = [i for i in range(8, len(payload) - 12)
          if t0 - 60e9 < struct.unpack_from("<q", payload, i)[0] < t0 + 60e9
          and 0 < struct.unpack_from("<Q", payload, i - 8)[0] <= 1 << 52
          and 0 < struct.unpack_from("<I", payload, i + 8)[0] <= 2048]
    assert len(at) == 1, "timeline origin found at %s" % at
    results = []
    for origin in (2**63 - 1000, 2**63 - 1):
        struct.pack_into("<q", payload, at[0], origin)
        z = zlib.compress(bytes(payload), 6)
        bad = os.path.join(TMP, "origin-end.tbp")
        with open(bad, "wb") as f:
            f.write(data[:16] + struct.pack("<QQ", len(payload), len(z)) + z)
        for args in (["--from", "4503600"], ["--from", "0.5", "--to", "1"], []):
            out = os.path.join(TMP, "origin-end.json")
            if os.path.exists(out):
                os.unlink(out)
            r = agent(["render", "-q", bad, "-o", out] + args, timeout=30)
            no_crash(r, "render %s" % " ".join(args))
            lines = r.stderr.decode(errors="replace").strip().splitlines()
            if r.returncode:
                assert len(lines) == 1, "render %s: %d lines on stderr" % (" ".join(args), len(lines))
                results.append(lines[0][:60])
            else:
                start = json.load(open(out))["meta"].get("start_unix", 0)
                assert start >= 0, "render %s: start_unix %s" % (" ".join(args), start)
                results.append("rendered, start %s" % start)
    return "; ".join(sorted(set(results)))


# ---- a lying interpreter ------------------------------------------------------

LIAR = r"""
import ctypes, sys, time, threading
rt = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
# _Py_DebugOffsets of 3.13: thread_state.size at 152, thread_state.current_frame at 184
ctypes.c_uint64.from_address(rt + 152).value = 65535
ctypes.c_uint64.from_address(rt + 184).value = 65000
def spin():
    while True: pass
threading.Thread(target=spin, daemon=True).start()
print("ready", flush=True)
time.sleep(30)
"""


def python313():
    for minor, kind, argv in tb.interpreters():
        if minor == "3.13":
            return argv
    return None


def test_lying_debug_offsets():
    py = python313()
    if not py:
        return "skipped: no CPython 3.13 here"
    proc = subprocess.Popen(py + ["-c", LIAR], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        r = agent(["dump", str(proc.pid)], timeout=30)
        no_crash(r, "dump")
        r2 = agent(["-q", "-p", str(proc.pid), "-d", "1", "-o", os.path.join(TMP, "liar.json")], timeout=30)
        no_crash(r2, "capture")
    finally:
        proc.kill()
        proc.wait()
    return "dump rc %d (%s), capture rc %d" % (r.returncode, r.stderr.decode(errors="replace").strip()[:80],
                                               r2.returncode)


# More lies of a 3.13 process: (name, [(position in _Py_DebugOffsets, value)], code run
# before "ready"). Positions: docs/cpython-layouts.md.
LIAR_VARIANT = r"""
import ctypes, sys, time, threading
rt = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
for pos, value in %r:
    ctypes.c_uint64.from_address(rt + pos).value = value
ctypes.pythonapi.PyThreadState_Get.restype = ctypes.c_void_p
main_ts = ctypes.pythonapi.PyThreadState_Get()
started = threading.Event()
def spin():
    me = sys._getframe()
    %s
    started.set()
    while True: pass
threading.Thread(target=spin, daemon=True).start()
started.wait()
print("ready", flush=True)
time.sleep(30)
"""
# spin(): make its own frame its caller (PyFrameObject.f_frame at 24, previous at 8), or put
# the main thread's state after the newest one (the spinning thread's): a thread-list loop
FRAME_LOOP = "f = ctypes.c_uint64.from_address(id(me) + 24).value; ctypes.c_uint64.from_address(f + 8).value = f"
THREAD_LOOP = "ctypes.c_uint64.from_address(main_ts + 8).value = ctypes.pythonapi.PyThreadState_Get()"
LIES = [
    ("frame field beyond the frame buffer", [(224, 4096), (232, 4000)], "pass"),
    ("code object line table at 4000", [(272, 4096), (304, 4000)], "pass"),
    ("str header beyond the buffer", [(536, 4096), (560, 1024)], "pass"),
    ("every size 65535", [(24, 65535), (48, 65535), (152, 65535), (224, 4096), (272, 4096)], "pass"),
    ("current frame overlapping next", [(184, 8)], "pass"),
    ("previous frame overlapping the code", [(232, 0)], "pass"),
    ("current frame at the end of the buffer", [(152, 65535), (184, 240)], "pass"),
    ("owner at the end of the frame buffer", [(224, 4096), (264, 126)], "pass"),
    ("next thread is prev", [(168, 0)], "pass"),
    ("frame chain loops back", [], FRAME_LOOP),
    ("thread list loops back", [], THREAD_LOOP),
]


def test_lying_debug_offsets_variants():
    py = python313()
    if not py:
        return "skipped: no CPython 3.13 here"
    seen = []
    for name, lies, act in LIES:
        proc = subprocess.Popen(py + ["-c", LIAR_VARIANT % (lies, act)], stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip() == "ready", "%s: the target did not start" % name
            t0 = time.time()
            r = agent(["dump", str(proc.pid)], timeout=30)
            no_crash(r, "dump (%s)" % name)
            assert time.time() - t0 < 10, "%s: dump took %.1f s" % (name, time.time() - t0)
            r2 = agent(["-q", "-p", str(proc.pid), "-d", "1", "-r", "999", "-o",
                        os.path.join(TMP, "liar2.json")], timeout=30)
            no_crash(r2, "capture (%s)" % name)
            if "loops back" in name:
                assert r.returncode == 0 and b"loops back" in r.stdout + r.stderr, \
                    "%s: dump rc %d does not report the loop: %s" % (name, r.returncode, r.stderr[-200:])
        finally:
            proc.kill()
            proc.wait()
        seen.append("%s: %d/%d" % (name, r.returncode, r2.returncode))
    return "%d lies, dump/capture rc: %s" % (len(LIES), "; ".join(seen))


# ---- memory ----------------------------------------------------------------------

SHARED_TABLE = r"""
import sys, time
def spin(s):
    end = time.perf_counter() + s
    while time.perf_counter() < end:
        pass
big = bytes(range(256)) * 4096          # one 1 MiB line table, shared by every copy
fns = [type(spin)(spin.__code__.replace(co_linetable=big, co_name="f%d" % i,
                                        co_qualname="f%d" % i), globals()) for i in range(int(sys.argv[1]))]
print("ready", flush=True)
for f in fns:
    f(0.003)
"""


def agent_max_rss_mb(args, timeout=120):
    """Run the agent as a child of a fresh Python: its peak RSS in MiB, and the result."""
    code = ("import resource, subprocess, sys\n"
            "r = subprocess.run(sys.argv[1:], capture_output=True)\n"
            "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "print(r.returncode, u.ru_maxrss, u.ru_utime + u.ru_stime)\n"
            "sys.stderr.buffer.write(r.stderr)\n")
    r = subprocess.run([sys.executable, "-c", code, BIN] + args, capture_output=True, text=True,
                       timeout=timeout)
    rc, rss, cpu = r.stdout.split()
    return int(rc), int(rss) / 1024.0, float(cpu), r.stderr


def test_shared_linetable_memory():
    out = os.path.join(TMP, "shared.json")
    rc, rss, _, err = agent_max_rss_mb(["-q", "-r", "999", "-o", out, "--", PY, "-c", SHARED_TABLE, "1800"])
    assert rc == 0, err
    data = tb.tree_json.load(out)
    funcs = data["meta"]["functions"]
    assert funcs >= 300, "only %d functions sampled" % funcs
    assert rss < 200, "agent peak RSS %.0f MiB for %d functions sharing one 1 MiB line table" % (rss, funcs)
    return "peak RSS %.0f MiB, %d functions" % (rss, funcs)


DISTINCT_TABLES = r"""
import sys, time
def spin(s):
    end = time.perf_counter() + s
    while time.perf_counter() < end:
        pass
big = bytes(range(256)) * 4096          # 1 MiB, made distinct per function below
fns = [type(spin)(spin.__code__.replace(co_linetable=bytes([i]) + big[1:], co_name="f%d" % i,
                                        co_qualname="f%d" % i), globals()) for i in range(int(sys.argv[1]))]
print("ready", flush=True)
end = time.time() + 30
while time.time() < end:
    for f in fns:
        f(0.002)
"""


def test_distinct_linetables_budget():
    """Every function with a line table of its own (1 MiB each, 64 MiB in the target): the
    agent keeps what fits the budget (16 MiB per process) and counts the rest."""
    proc = subprocess.Popen([PY, "-c", DISTINCT_TABLES, "64"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        out = os.path.join(TMP, "distinct.json")
        # the target is not the agent's child here: the peak RSS is the agent's alone
        rc, rss, _, err = agent_max_rss_mb(["-p", str(proc.pid), "-d", "3", "-r", "999", "-o", out])
    finally:
        proc.kill()
        proc.wait()
    assert rc == 0, err
    data = tb.tree_json.load(out)
    funcs, dropped = data["meta"]["functions"], data["meta"].get("line_tables_dropped", 0)
    assert funcs >= 60, "only %d functions sampled" % funcs
    assert rss < 45, "agent peak RSS %.0f MiB for %d functions with 1 MiB line tables each" % (rss, funcs)
    assert dropped >= funcs - 20, "%d functions, only %d line tables dropped" % (funcs, dropped)
    assert "first line only" in err, "the summary does not say so"
    return "peak RSS %.0f MiB, %d functions, %d line tables over the budget" % (rss, funcs, dropped)


FORKER = r"""
import os, signal, sys, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # children reaped by the kernel
end = time.time() + float(sys.argv[1])
n = 0
while time.time() < end:
    for _ in range(100):
        if os.fork() == 0:
            os._exit(0)
    n += 100
print(n, flush=True)
"""


def cpu_seconds(pid):
    """user+system CPU time of a process, from /proc/PID/stat."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_fork_storm():
    secs = 20
    survivor = subprocess.Popen([PY, "-c", "def survivor_spin():\n" + "\n".join(
        "    " + l for l in (SPIN % (secs + 15)).splitlines()) + "\nsurvivor_spin()\n"])
    storm = subprocess.Popen([PY, "-c", FORKER, str(secs + 5)], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        out = os.path.join(TMP, "storm.folded")
        t0 = time.time()
        cpu0 = cpu_seconds(survivor.pid)
        rc, rss, cpu, err = agent_max_rss_mb(["-q", "--all-python", "-d", str(secs), "-r", "99", "-o", out],
                                             timeout=secs + 60)
        wall = time.time() - t0
        ran = cpu_seconds(survivor.pid) - cpu0
        forks = int(storm.communicate(timeout=60)[0])
    finally:
        for p in (survivor, storm):
            p.kill()
            p.wait()
    assert rc == 0, err
    fold = tb.Folded(out)
    got = sum(n for frames, n in fold.stacks if any("survivor_spin" in f for f in frames))
    want = int(99 * ran)   # the survivor's samples follow the CPU time it got
    assert rss < 100, "agent peak RSS %.0f MiB during %d forks" % (rss, forks)
    assert cpu < 0.25 * wall, "agent used %.1f s of CPU in %.1f s" % (cpu, wall)
    assert got >= 0.8 * want, "the surviving process has %d samples, want about %d" % (got, want)
    return "%d forks: peak RSS %.0f MiB, agent CPU %.0f%% of a core, survivor %d/%d samples" % (
        forks, rss, 100 * cpu / wall, got, want)


# ---- crashes -----------------------------------------------------------------------

TRUNCATOR_C = r"""
/* Maps a copy of a Python binary (named like one) and toggles its size:
 * pages past the first 4 KiB vanish and come back, over and over. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char buf[65536];
	int in = open(argv[2], O_RDONLY), fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	ssize_t n;
	struct stat st;
	time_t end = time(NULL) + atoi(argv[3]);

	while ((n = read(in, buf, sizeof(buf))) > 0)
		write(fd, buf, n);
	fstat(fd, &st);
	if (mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
		return 1;
	printf("ready\n");
	fflush(stdout);
	while (time(NULL) < end) {
		ftruncate(fd, 4096);
		ftruncate(fd, st.st_size);
	}
	return 0;
}
"""


def test_truncated_mapping_no_sigbus():
    """libelf reading through mmap takes SIGBUS when the file shrinks under it."""
    d = os.path.join(TMP, "trunc")
    os.mkdir(d)
    src = os.path.join(d, "truncator.c")
    with open(src, "w") as f:
        f.write(TRUNCATOR_C.replace("#include <time.h>", "#include <stdlib.h>\n#include <time.h>"))
    exe = os.path.join(d, "truncator")
    subprocess.run(["gcc", "-O1", "-w", "-o", exe, src], check=True)
    procs = []
    try:
        for i in range(3):
            p = subprocess.Popen([exe, os.path.join(d, "python3.%d9" % i), os.path.realpath(PY), "40"],
                                 stdout=subprocess.PIPE, text=True)
            procs.append(p)
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        rcs = []
        for _ in range(10):   # every start scans every process again
            r = agent(["-q", "--all-python", "-d", "0.3", "-o", os.path.join(TMP, "trunc.json")], timeout=30)
            rcs.append(r.returncode)
            no_crash(r, "capture")
    finally:
        for p in procs:
            p.kill()
            p.wait()
    return "10 captures beside 3 truncating processes: exits %s" % sorted(set(rcs))


# ---- crafted ELF files mapped by an unprivileged process (--native) ------------------

# A shared library whose .symtab has the evaluator's name and four ".cold" parts, each starting
# before it and all holding its address (issue 25, row 1: the agent's range selection had no
# range it could drop and wrote out of bounds).
EVAL_OVERLAP_S = """
    .text
""" + "".join("""    .globl _PyEval_EvalFrameDefault.cold.{k}
    .type _PyEval_EvalFrameDefault.cold.{k}, @function
_PyEval_EvalFrameDefault.cold.{k}:
    .fill 16, 1, 0x90
""".format(k=k) for k in (3, 2, 1, 0)) + """    .globl _PyEval_EvalFrameDefault
    .type _PyEval_EvalFrameDefault, @function
_PyEval_EvalFrameDefault:
    .fill 64, 1, 0x90
    ret
end_of_eval:
""" + "".join("""    .size _PyEval_EvalFrameDefault.cold.{k}, end_of_eval - _PyEval_EvalFrameDefault.cold.{k}
""".format(k=k) for k in (3, 2, 1, 0)) + """    .size _PyEval_EvalFrameDefault, end_of_eval - _PyEval_EvalFrameDefault
    .section .note.GNU-stack,"",@progbits
"""


def crafted_dir(name):
    """A new directory under TMP that uid 65534 can read."""
    d = os.path.join(TMP, name)
    os.mkdir(d)
    os.chmod(d, 0o755)
    return d


def assemble(d, name, text):
    """d/NAME.so from the assembly text (gcc -shared -nostdlib), readable by all."""
    src, lib = os.path.join(d, name + ".s"), os.path.join(d, "lib%s.so" % name)
    with open(src, "w") as f:
        f.write(text)
    subprocess.run(["gcc", "-shared", "-nostdlib", "-o", lib, src], check=True)
    os.chmod(lib, 0o755)
    return lib


def native_capture_mapping(code, name, settle=0.8, seconds=3):
    """Run code (it maps crafted files, then spins) as uid 65534 and capture it with --native
    -d seconds: (exit code, peak RSS MiB, CPU s, stderr, wall s, the .folded path)."""
    target = subprocess.Popen(NOBODY + [PY, "-c", code])
    try:
        wait_started(target, settle)
        out = os.path.join(TMP, name + ".folded")
        t0 = time.time()
        rc, rss, cpu, err = agent_max_rss_mb(["--native", "-p", str(target.pid), "-d", str(seconds), "-o", out])
        took = time.time() - t0
    finally:
        target.kill()
        target.wait()
    assert rc == 0, "exit %d: %s" % (rc, err[-300:])
    return rc, rss, cpu, err, took, out


def crafted_eval_overlap(d):
    lib = assemble(d, "evil", EVAL_OVERLAP_S)
    syms = subprocess.run(["readelf", "-Ws", lib], capture_output=True, text=True, check=True).stdout
    assert syms.count("_PyEval_EvalFrameDefault") >= 5, "the crafted library lacks its symbols"
    return lib


def test_crafted_eval_symbols():
    """--native on a target (uid 65534) that maps a library whose five evaluator symbols all
    hold the evaluator's address: the capture ends normally with the target's samples."""
    lib = crafted_eval_overlap(crafted_dir("evalsyms"))
    out = native_capture_mapping("import ctypes\nctypes.CDLL(%r)\n%s" % (lib, SPIN % 6.0), "evalsyms",
                                 seconds=2)[5]
    fold = tb.Folded(out)
    assert fold.total() > 50, "only %d samples" % fold.total()
    return "%d samples of a target mapping 5 overlapping evaluator symbols" % fold.total()


# Call-frame programs that ask libdw for too much (issue 25, rows 2 and 3): a register number
# of 2^24 then 8,000 remember/restore pairs (each remember copied a state sized by that
# register: the build ran for minutes), and a register of 2^26 then 10 remembers (gigabytes).
CFI_BOMB_S = """
    .text
    .globl bomb_a
    .type bomb_a, @function
bomb_a:
    .cfi_startproc
    .cfi_escape 0x07, 0x80, 0x80, 0x80, 0x08
    .rept 8000
    .cfi_remember_state
    .cfi_restore_state
    .endr
    nop
    ret
    .cfi_endproc
    .size bomb_a, .-bomb_a
    .globl bomb_b
    .type bomb_b, @function
bomb_b:
    .cfi_startproc
    .cfi_escape 0x07, 0x80, 0x80, 0x80, 0x20
    .rept 10
    .cfi_remember_state
    .endr
    nop
    ret
    .cfi_endproc
    .size bomb_b, .-bomb_b
    .section .note.GNU-stack,"",@progbits
"""


def crafted_cfi_bomb(d):
    lib = assemble(d, "bomb", CFI_BOMB_S)
    frames = subprocess.run(["readelf", "--debug-dump=frames", lib], capture_output=True, text=True).stdout
    assert frames.count("DW_CFA_remember_state") >= 8000, "the crafted library lacks its CFI"
    return lib


def test_crafted_cfi_bounded():
    """--native on a target (uid 65534) that maps a library whose .eh_frame asks libdw for a
    register numbered 2^24 or 2^26 and thousands of remembered states: the file gets no table
    (one line says why), the capture ends on time with the target's samples, the agent stays
    small."""
    lib = crafted_cfi_bomb(crafted_dir("cfibomb"))
    _, rss, _, err, took, out = native_capture_mapping(
        "import ctypes\nctypes.CDLL(%r)\n%s" % (lib, SPIN % 8.0), "cfibomb")
    assert took < 3 + 2, "-d 3 took %.1f s" % took
    assert rss < 300, "agent peak RSS %.0f MiB" % rss
    said = [l for l in err.splitlines() if "libbomb" in l or "call-frame program" in l]
    assert said, "no line about the refused table: %s" % err[-400:]
    fold = tb.Folded(out)
    assert fold.total() > 100, "only %d samples" % fold.total()
    return "%.1f s, %d samples; %s" % (took, fold.total(), said[0][:90])


def many_symbols_elf(small, out, count, name):
    """out: the ELF file small (gcc's) with its .symtab replaced by count FUNC symbols, all named
    name and all at the address of its first function (a new .symtab and .strtab appended, the
    section headers written again after them)."""
    data = bytearray(open(small, "rb").read())
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    sh = [list(struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)) for i in range(shnum)]
    symtab = [i for i, h in enumerate(sh) if h[1] == 2][0]        # SHT_SYMTAB
    strtab = sh[symtab][6]                                          # its sh_link
    text = [h for h in sh if h[1] == 1 and h[2] & 4][0]            # SHT_PROGBITS, SHF_EXECINSTR
    names = b"\0" + name.encode() + b"\0"
    sym = struct.pack("<IBBHQQ", 1, 0x12, 0, sh.index(text), text[3], 16)   # GLOBAL FUNC
    at = (len(data) + 7) & ~7
    data += b"\0" * (at - len(data))
    data += bytes(24) + sym * count
    sh[symtab][4], sh[symtab][5], sh[symtab][7] = at, 24 * (count + 1), 1
    sh[strtab][4], sh[strtab][5] = len(data), len(names)
    data += names
    new_shoff = (len(data) + 7) & ~7
    data += b"\0" * (new_shoff - len(data))
    for h in sh:
        data += struct.pack("<IIQQQQIIQQ", *h)
    struct.pack_into("<Q", data, 0x28, new_shoff)
    with open(out, "wb") as f:
        f.write(data)


ONE_FUNCTION_S = """    .text
    .globl f
    .type f, @function
f:
    .cfi_startproc
    ret
    .cfi_endproc
    .size f, 1
    .section .note.GNU-stack,"",@progbits
"""


def crafted_many_symbols(d):
    small, lib = assemble(d, "small", ONE_FUNCTION_S), os.path.join(d, "libmany.so")
    many_symbols_elf(small, lib, 2000000, "F" * 473)
    os.chmod(lib, 0o755)
    return lib


def test_many_symbol_names_bounded():
    """Issue 25, row 4: a 48 MB library whose .symtab names one address 2,000,000 times with a
    473-byte name, mapped executable by uid 65534: the agent keeps one name (not 946 MiB),
    stays small and ends on time."""
    lib = crafted_many_symbols(crafted_dir("manysyms"))
    _, rss, cpu, err, took, out = native_capture_mapping(
        "import ctypes\nctypes.CDLL(%r)\n%s" % (lib, SPIN % 12.0), "manysyms", settle=1.5)
    assert took < 3 + 3, "-d 3 took %.1f s" % took
    assert rss < 300, "agent peak RSS %.0f MiB" % rss
    assert tb.Folded(out).total() > 100, "too few samples"
    return "%.1f s, peak RSS %.0f MiB, CPU %.1f s (48 MB of symbols)" % (took, rss, cpu)


def crafted_sparse(d):
    """A library whose .eh_frame claims 900 MiB at the end of a sparse file."""
    lib = assemble(d, "sparse", ONE_FUNCTION_S)
    data = bytearray(open(lib, "rb").read())
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    names_off = struct.unpack_from("<IIQQQQIIQQ", data, shoff + shstrndx * shentsize)[4]
    big = 900 << 20
    for i in range(shnum):
        h = list(struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize))
        name = data[names_off + h[0]:data.index(b"\0", names_off + h[0])]
        if name == b".eh_frame":
            h[4], h[5] = (len(data) + 4095) & ~4095, big      # at the end of the file, 900 MiB
            struct.pack_into("<IIQQQQIIQQ", data, shoff + i * shentsize, *h)
            end = h[4] + big
    with open(lib, "wb") as f:
        f.write(data)
        f.truncate(end)                                   # sparse: nothing written there
    os.chmod(lib, 0o755)
    return lib


def test_sparse_eh_frame_bounded():
    """Issue 25, row 9: a library whose .eh_frame claims 900 MiB in a sparse file (a few KB on
    disk), mapped executable by uid 65534: the section is not read (one line), the agent stays
    small and ends on time."""
    lib = crafted_sparse(crafted_dir("sparse"))
    code = "import mmap, os\nfd = os.open(%r, os.O_RDONLY)\nm = mmap.mmap(fd, 4096, prot=mmap.PROT_READ | " \
           "mmap.PROT_EXEC)\n%s" % (lib, SPIN % 8.0)
    _, rss, cpu, err, took, _ = native_capture_mapping(code, "sparse")
    assert took < 3 + 2, "-d 3 took %.1f s" % took
    assert rss < 200, "agent peak RSS %.0f MiB" % rss
    said = [l for l in err.splitlines() if "larger than 64 MiB" in l]
    assert said, "no line about the section: %s" % err[-300:]
    return "%.1f s, peak RSS %.0f MiB, CPU %.1f s; %s" % (took, rss, cpu, said[0][-60:])


# A process with many executable mappings (past the 512 the BPF program takes: its walks meet
# pcs it cannot place, and each asks the agent to reread its maps) and tens of thousands of
# others (a slow reread).
MANY_MAPS = r"""
import ctypes, sys, time
libc = ctypes.CDLL(None)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
nexec, nother = int(sys.argv[1]), int(sys.argv[2])
for i in range(nexec + nother):
    # every other mapping PROT_NONE, so that none merge
    prot = (5 if i < nexec else 1) if i % 2 == 0 else 0
    if libc.mmap(None, 4096, prot, 0x22, -1, 0) in (None, 2**64 - 1):
        break
print("ready", flush=True)
end = time.time() + float(sys.argv[3])
while time.time() < end:
    pass
"""


def test_many_mappings_reread_bounded():
    """Issue 25, row 5: 600 executable and ~60,000 other mappings (uid 65534), sampled with
    --native: the maps are reread no more often than ten times what a reread costs, so the
    rereads take at most about a tenth of the capture, and -d is kept."""
    target = subprocess.Popen(NOBODY + [PY, "-c", MANY_MAPS, "1200", "60000", "40"], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert target.stdout.readline().strip() == "ready", "the target did not map its regions"
        with open("/proc/%d/maps" % target.pid) as f:
            nmaps = sum(1 for _ in f)
        t0 = time.time()
        r = agent(["--native", "-p", str(target.pid), "-d", "6", "-o", os.path.join(TMP, "maps.folded")],
                  timeout=120)
        took = time.time() - t0
    finally:
        target.kill()
        target.wait()
    no_crash(r, "capture")
    err = r.stderr.decode(errors="replace")
    assert r.returncode == 0, err[-300:]
    m = re.search(r"maps reread (\d+) times \(([0-9.]+) s\)", err)
    assert m, "no reread count in the summary: %s" % err[-300:]
    n, secs = int(m.group(1)), float(m.group(2))
    assert took < 6 + 3, "-d 6 took %.1f s" % took
    assert secs <= 0.12 * took + 0.1, "%d rereads took %.2f s of a %.1f s capture" % (n, secs, took)
    return "%d mappings: %d rereads in %.2f s of a %.1f s capture" % (nmaps, n, secs, took)


def test_all_crafted_at_once():
    """Issue 25's end-to-end check: on a host where one process of uid 65534 maps every crafted
    file at once (five evaluator symbols, the CFI bombs, 2,000,000 symbol names, a 900 MiB sparse
    .eh_frame) and another has ~60,000 mappings, `--native --all-python -d 4` ends on time,
    writes every output, stays under 300 MiB, and profiles a third, ordinary process normally:
    its C chain (tests/native/chain.c, no frame pointers) whole under its Python caller."""
    d = crafted_dir("all")
    libs = [crafted_eval_overlap(d), crafted_cfi_bomb(d), crafted_many_symbols(d)]
    sparse = crafted_sparse(d)
    chain = os.path.join(d, "libchain.so")
    subprocess.run(["cc", "-O2", "-fomit-frame-pointer", "-shared", "-fPIC", "-o", chain,
                    os.path.join(ROOT, "tests", "native", "chain.c")], check=True)
    os.chmod(chain, 0o755)
    mapper = "import ctypes, mmap, os\n" + "".join("ctypes.CDLL(%r)\n" % l for l in libs) + \
        "fd = os.open(%r, os.O_RDONLY)\nm = mmap.mmap(fd, 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)\n" % sparse + \
        SPIN % 40.0
    procs = [subprocess.Popen(NOBODY + [PY, "-c", mapper])]
    procs.append(subprocess.Popen(NOBODY + [PY, "-c", MANY_MAPS, "1200", "60000", "40"], stdout=subprocess.PIPE,
                                  text=True))
    try:
        assert procs[1].stdout.readline().strip() == "ready", "the many-mappings process did not start"
        wait_started(procs[0], 0.5)
        out = os.path.join(TMP, "all")
        outs = [out + ext for ext in (".folded", ".json", ".tbp", ".html")]
        args = ["--native", "--all-python", "-d", "4", "-r", "499"]
        for o in outs:
            args += ["-o", o]
        ordinary = subprocess.Popen([PY, os.path.join(ROOT, "tests", "native", "workload.py"), "chain", "8"],
                                    env=dict(os.environ, TB_CHAIN_LIB=chain))
        procs.append(ordinary)
        t0 = time.time()
        rc, rss, cpu, err = agent_max_rss_mb(args)
        took = time.time() - t0
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert rc == 0, "exit %d: %s" % (rc, err[-300:])
    assert took < 4 + 2, "-d 4 took %.1f s" % took
    assert rss < 300, "agent peak RSS %.0f MiB" % rss
    for o in outs:
        assert os.path.getsize(o) > 0, "%s is empty" % o
    whole = under = 0
    for frames, n in tb.Folded(outs[0]).stacks:
        if not frames[0].endswith("(pid %d)" % ordinary.pid):
            continue
        names = [tb.Folded.func(f) for f in frames]
        if "call_chain" in names:
            under += n
            # the library's own frames below the Python caller (ctypes' and libffi's between)
            below = [f.split(" ")[0] for f in frames[names.index("call_chain") + 1:] if "(libchain.so" in f]
            whole += n if below[:3] == ["chain_a", "chain_b", "chain_c"] else 0
    assert under >= 100, "only %d samples of the ordinary process in call_chain" % under
    assert whole >= 0.9 * under, "its C chain whole in %d of %d samples" % (whole, under)
    return "%.1f s, peak RSS %.0f MiB, CPU %.1f s; the ordinary process's chain whole in %d of %d" % (
        took, rss, cpu, whole, under)


# ---- signals ------------------------------------------------------------------------

def signal_ends_capture(sig):
    out = os.path.join(TMP, "sig-%d.json" % sig)
    errf = open(os.path.join(TMP, "sig-%d.err" % sig), "w+")
    proc = subprocess.Popen([BIN, "-r", "199", "-o", out, "--", PY, "-c", SPIN % 30], stderr=errf)
    # the signal once it samples (a loaded machine takes longer than a fixed wait to load the
    # program: a signal during the start-up ends the capture too, with nothing sampled)
    end = time.time() + 30
    while time.time() < end and "tachyon-bpf: sampling " not in open(errf.name).read():
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(sig)
    try:
        proc.wait(timeout=15)
    finally:
        proc.kill()
    errf.seek(0)
    assert proc.returncode == 0, "exit %d after %s: %s" % (proc.returncode, signal.Signals(sig).name,
                                                          errf.read()[-200:])
    data = tb.tree_json.load(out)
    assert data["meta"]["samples"] > 0
    return "outputs written (%d samples)" % data["meta"]["samples"]


def test_sighup():
    return signal_ends_capture(signal.SIGHUP)


def test_sigquit():
    return signal_ends_capture(signal.SIGQUIT)


def test_sigpipe():
    return signal_ends_capture(signal.SIGPIPE)


def test_closed_stderr():
    """The reader of stderr goes away (`2>&1 | head -1`): the next progress line
    ends the capture (EPIPE, not SIGPIPE) and the outputs are still written."""
    out = os.path.join(TMP, "closed-stderr.json")
    proc = subprocess.Popen([BIN, "-r", "199", "-o", out, "--", PY, "-c", SPIN % 30], stderr=subprocess.PIPE)
    first = proc.stderr.readline()
    proc.stderr.close()
    try:
        proc.wait(timeout=20)   # a progress line every 5 s
    finally:
        proc.kill()
    assert proc.returncode == 0, "exit %d after the reader of stderr left" % proc.returncode
    data = tb.tree_json.load(out)
    assert data["meta"]["samples"] > 0 and first.startswith(b"tachyon-bpf: sampling")
    return "ended at the next progress line, outputs written (%d samples)" % data["meta"]["samples"]


def test_second_ctrl_c_aborts():
    """Two signals sent back to back merge into one pending SIGINT in the
    kernel, and a normal end takes ~50 ms: the command ignores SIGTERM, so
    the agent is still waiting for it when the second Ctrl-C comes."""
    out = os.path.join(TMP, "twice.json")
    stubborn = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n" + SPIN % 8
    proc = subprocess.Popen([BIN, "-q", "-r", "199", "-o", out, "--", PY, "-c", stubborn],
                            stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    t0 = time.time()
    proc.wait(timeout=15)
    assert proc.returncode != 0, "a second Ctrl-C still ended normally"
    assert not os.path.exists(out), "an output was written after the abort"
    return "aborted in %.2f s, exit %d" % (time.time() - t0, proc.returncode)


# ---- terminal escapes -----------------------------------------------------------------

ESCAPES = "\x1b]0;pwned-title\x07\x1b[2J\x1b[31mred\r0 lost\u202egnp.exe"
ESCAPER = r"""
import sys, threading, time
name = sys.argv[1]
ns = {}
exec(compile("def f():\n    import time\n    end = time.time() + 20\n    while time.time() < end: pass\n",
             name, "exec"), ns)
f = ns["f"]
f.__code__ = f.__code__.replace(co_name=name, co_qualname=name)
t = threading.Thread(target=f, name=name, daemon=True)
t.start()
print("ready", flush=True)
time.sleep(20)
"""


def test_terminal_escapes_sanitized():
    proc = subprocess.Popen([PY, "-c", ESCAPER, ESCAPES], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        txt = os.path.join(TMP, "esc.txt")
        r = agent(["-p", str(proc.pid), "-d", "1", "-r", "499", "-o", os.path.join(TMP, "esc.json"), "-o", txt])
        d = agent(["dump", str(proc.pid)])
    finally:
        proc.kill()
        proc.wait()
    assert r.returncode == 0, r.stderr
    table = open(txt, "rb").read()
    for what, text in (("summary", r.stderr), ("dump", d.stdout + d.stderr), (".txt table", table)):
        bad = [c for c in text if c < 0x20 and c not in (0x0a, 0x09)]
        assert not bad, "%s writes control bytes %s" % (what, sorted(set(bad)))
        assert "\u202e".encode() not in text, "%s writes a bidi override (U+202E) raw" % what
    assert b"pwned-title" in r.stderr, "the hostile name is not shown at all in the summary"
    assert b"pwned-title" in table and b"\\u202e" in table, "the .txt table does not show the name escaped"
    return "summary, dump and the .txt table: names shown, no control byte, no raw bidi override"


CHECKS = [v for k, v in sorted(globals().items()) if k.startswith("test_")]


def main():
    if os.geteuid() != 0:
        print("hostile: run as root (the tests load the BPF program)")
        return 1
    only = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else ""
    for fn in CHECKS:
        if only in fn.__name__:
            tb.check(fn.__name__[5:], fn)
    shutil.rmtree(TMP, ignore_errors=True)
    print("%d passed, %d failed" % (tb.results["passed"], tb.results["failed"]))
    return 0 if tb.results["failed"] == 0 and tb.results["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
