"""guest_checks.py: the kernel matrix's checks (tests/kernels/run.sh), run by /init
(tests/kernels/guest-init.sh) with python3.11 inside each booted kernel, against the real BPF
program of /tb/tachyon-bpf. The repo's helpers and host checks are reused as they are
(tests/integration/tb.py and run.py, tests/native/run.py) with their own capture parameters
(a TCG guest keeps up with them), and two flags added where the matrix asks for them:

  split       slices.py: fifty/thirty/twenty within 5 pp of 50/30/20 and the hot loop lines
              (test_slices), then within 3 pp (the accuracy asked of every kernel)
  deep        a 400-deep stack at the default depth, all frames there; cut and marked at
              --max-depth 128 (test_deep)
  all-python  --all-python started first, then spawner.py started mid-capture with short-lived
              children: the spawner and each child seen with their own functions
  wall        --mode wall on sleeper.py: the sleep line's share of the thread's samples within
              5 points of the share the workload measured of itself (~90%; less in a slow
              guest), under <off-CPU>; few in cpu mode (test_sleep_wall)
  native      --native --kernel on ctypes calls into tests/native/chain.c (built -O2
              -fomit-frame-pointer: only .eh_frame unwinds it): chain_a -> chain_b -> chain_c
              under the Python frame call_chain (tests/native/run.py check_chain)
  signal      --native on a SIGALRM handler's chain (chain.c chain_handler): unwound through
              the signal frame to the code it interrupted, and vDSO leaves to their callers
              (tests/native/run.py check_signal)
  dump-native `tachyon-bpf dump --native` of blocked threads: their native frames merged with
              the Python ones, a leaf blocked in flock under its caller (arm64: x30 only the
              kernel gives), the registers the kernel's (its task iterator) from 5.15, guessed
              on 5.10 (test_dump_states); of a thread running in chain.c under Python: one
              sample of the BPF program, spin_chain above chain_a -> chain_b -> chain_c
              (test_dump_running)
  opcodes     --opcodes on opcodes.py: the specialized instructions of the hot line and their
              column span (test_opcodes)
  dump        `tachyon-bpf dump PID` of threads.py: every thread's stack (test_dump; reads the
              process's memory, no BPF)
  shape       the program's shape the agent chose by probing the kernel (bpf_loop, or bounded
              loops and tail calls) is the one TB_SHAPE (run.sh, from the kernel's name) expects,
              and the start-up's times (BPF load, first sample)
  threads     three threads each in its own function (test_threads: the thread-list walk)
  gil         --mode wall on two threads contending for the GIL: held and waited for half the
              time each (test_gil_wall: the futex wait read from the task's saved registers)
  kernel      --kernel on reads of /dev/zero: kernel frames through the system-call entry
              (do_syscall_64; arm64: invoke_syscall, el0_svc...) under the Python line
              (test_kernel_syscalls)
  container   --cgroup and --container alone: the processes of one cgroup v2, running and
              started later, none outside (test_cgroup_alone)

First the BPF program is loaded once (load_check): if it does not load, every check that
needs it fails at once with the agent's first stderr line (a load that fails can take minutes
of verifier time under TCG), and the verifier log goes to the console.

Prints one line per check, "ok NAME: detail" or "FAIL NAME: reason" (a failed capture: the
exit status and the agent's first stderr line), lines starting "#" that say what ran (kernel,
load, time), then "N passed, N failed". TB_CHECKS=a,b (the environment; the kernel command
line sets it) runs only those. TB_SID_PYTHONS=all (run.sh: one kernel per run) also runs split,
deep, threads, native, opcodes and dump on each of sid's interpreters in the image
(/tb/sid-pythons.txt, written by initramfs.sh: arm64's 3.13-3.15), as NAME@VERSION, after the
checks of python3.11 ("# sid's interpreters' checks took N s"); TB_SID_PYTHONS=1 runs split,
threads and dump on each, deep on 3.13, opcodes on 3.14 and native on 3.15 (SID_ONE). TB_UNSUPPORTED=a,b names the checks whose feature the agent may
not support on this architecture (tests/kernels/arch/ARCH.sh): such a check still runs, and if
it fails only because the agent refused the feature (exit non-zero, its line saying "not
ported" or "not supported") it prints "unsupported NAME: the agent's line", counted neither
passed nor failed ("# N unsupported: ..." before the last line); any other failure is a FAIL."""
import contextlib
import importlib.util
import os
import platform
import re
import signal
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import tb  # noqa: E402
import run as it  # noqa: E402  tests/integration/run.py


def load_native_run():
    spec = importlib.util.spec_from_file_location("native_run", os.path.join(ROOT, "tests", "native", "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


nr = load_native_run()
PY = [sys.executable]
TAG = "%d.%d-debian-static" % sys.version_info[:2]   # the host checks' tag for /usr/bin/python3.11
CHAIN_LIB = os.path.join(ROOT, "lib", "libchain.so")  # tests/native/chain.c, built by initramfs.sh

# Capture parameters: the host checks' own (TCG keeps up with them: test_slices gets ~3000
# samples at 999 Hz), shorter where that costs nothing.
NATIVE_SECONDS = 3.0
ALLPY_CHILDREN, ALLPY_SECONDS = 3, 0.5


def first_line(text):
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return ""


@contextlib.contextmanager
def agent_flags(*flags):
    """Every capture the reused checks start (they all go through tb.run) gets FLAGS before
    its "--"."""
    orig = tb.run

    def run(args, timeout=120, **kw):
        args = list(args)
        if args and args[0] != "dump":
            i = args.index("--") if "--" in args else len(args)
            args[i:i] = flags
        return orig(args, timeout=timeout, **kw)
    tb.run = run
    try:
        yield
    finally:
        tb.run = orig


def slice_shares(fold):
    share = {"fifty": 0, "thirty": 0, "twenty": 0}
    for frames, n in fold.stacks:
        names = [tb.Folded.func(f) for f in frames]
        for k in share:
            if k in names:
                share[k] += n
    total = sum(share.values())
    return {k: 100.0 * v / max(1, total) for k, v in share.items()}, total


def check_split(py=PY, tag=TAG):
    detail = it.test_slices(py, tag)   # within 5 pp, the hot loop lines
    pct, total = slice_shares(tb.Folded(os.path.join(it.TMP, "slices-%s.folded" % tag)))
    worst = max(abs(pct[k] - w) for k, w in (("fifty", 50), ("thirty", 30), ("twenty", 20)))
    assert worst <= 3.0, "%s; off by %.1f pp (> 3)" % (detail, worst)
    return "%s; at most %.1f pp off (<= 3)" % (detail, worst)


def check_deep(py=PY, tag=TAG):
    return it.test_deep(py, tag)


def check_all_python(py=PY, tag=TAG):
    """--all-python: processes started after the capture began are found and read."""
    out = os.path.join(it.TMP, "allpy.json")
    agent = subprocess.Popen([tb.BIN, "--all-python", "-r", "499", "-d", "120", "--min-fraction", "0",
                              "-o", out], stderr=subprocess.PIPE, text=True)
    head = []
    try:
        # attached when it says "sampling ..." (the BPF program loaded); stderr until then
        while True:
            line = agent.stderr.readline()
            if not line:
                agent.wait(timeout=30)
                raise AssertionError("exit %s: %s" % (agent.returncode, first_line("".join(head))))
            head.append(line)
            if "sampling" in line:
                break
        sp = subprocess.run(py + [tb.workload("spawner.py"), str(ALLPY_CHILDREN), str(ALLPY_SECONDS), py[0]],
                            capture_output=True, text=True, timeout=120)
        pids = [int(x) for x in sp.stdout.split()]
        assert len(pids) == ALLPY_CHILDREN, "spawner: %s" % first_line(sp.stderr)
    finally:
        if agent.poll() is None:
            agent.send_signal(signal.SIGINT)
    _, err = agent.communicate(timeout=120)
    assert agent.returncode == 0, "exit %d: %s" % (agent.returncode, first_line("".join(head) + err))
    data = tb.tree_json.load(out)
    funcs = it.functions_by_pid(data)
    seen = [p for p in pids if "short_task" in funcs.get(p, ())]
    others = [p for p in funcs if p not in pids]   # this script, the spawner
    assert len(seen) == len(pids), "%d of %d children seen in short_task (pids %s, seen %s)" % (
        len(seen), len(pids), pids, sorted(funcs))
    return "%d children started mid-capture seen in short_task; %d other Python processes" % (
        len(seen), len(others))


# A TCG guest emulates each instruction: the kernel's own paths (a system call's way in and
# out, a futex wake) take a larger share of a thread's time than on a host. Measured in
# the guests: cpu mode at the sleep line 1-10% (x86_64), 18-21% (arm64 6.12); GIL held +
# waited 0.87-0.89 (arm64), 0.90-0.95 (x86_64 5.10), the rest a futex wake of the other thread.
TCG_CPU_SLEEP_MAX = 25
# a library's table built later under emulation: 1-8 of ~750 chain samples partial (arm64)
TCG_PARTIAL_FLOOR = 10
TCG_MIN_HELD_WAIT = 0.8


def check_wall(py=PY, tag=TAG):
    return it.test_sleep_wall(py, tag, TCG_CPU_SLEEP_MAX)


# sid's interpreters start through a wrapper script (tests/setup-pythons.sh), and the agent
# holds a command it launches at the entry of its first exec, the script's (proc/launch.c): the
# interpreter's own tables (sid's python, libc) were built after the script exec'd it, while the
# workload ran (0.12 s of CPU on the host; 2.5-2.8 s under TCG, 7.x: 84-763 of 700-1350
# samples partial in 3 s, 129-274 of ~2200 in 10 s). So their chain is captured with -p once
# the workload is up (tests/native/run.py attached(); without --kernel), let go
# SID_TABLES_GRACE after the agent samples: -p waits at most 2 s for the tables (7.x: 44 of
# 605 samples partial, the chain whole in 81-85% when let go at once).
SID_TABLES_GRACE = 3.0


def check_native(py=PY, tag=TAG):
    os.environ["TB_CHAIN_LIB"] = CHAIN_LIB
    nr.SECONDS = NATIVE_SECONDS
    nr.PARTIAL_FLOOR = TCG_PARTIAL_FLOOR
    nr.ATTACH = None if py is PY else SID_TABLES_GRACE
    try:
        with agent_flags("--kernel"):
            return nr.check_chain(py)
    finally:
        nr.ATTACH = None


def check_signal(py=PY, tag=TAG):
    os.environ["TB_CHAIN_LIB"] = CHAIN_LIB
    nr.SECONDS = NATIVE_SECONDS
    return nr.check_signal(py)


def check_dump_native(py=PY, tag=TAG):
    os.environ["TB_CHAIN_LIB"] = CHAIN_LIB
    return "%s; %s" % (it.test_dump_states(py, tag), it.test_dump_running(py, tag))


def check_opcodes(py=PY, tag=TAG):
    with agent_flags("--opcodes"):
        return it.test_opcodes(py, tag)


def check_dump(py=PY, tag=TAG):
    return it.test_dump(py, tag)


def check_shape(py=PY, tag=TAG):
    """The shape probed (not guessed from the version) is the expected one; start-up times."""
    r = tb.run(["-d", "1", "-o", os.path.join(it.TMP, "shape.json"), "--"] + py + ["-c", "while True: pass"])
    assert r.returncode == 0, "exit %d: %s" % (r.returncode, first_line(r.stderr))
    line = [l.strip() for l in r.stderr.splitlines() if "start-up:" in l]
    assert line, "no start-up line in: %s" % first_line(r.stderr)
    want = os.environ.get("TB_SHAPE", "")
    got = "bounded" if "bounded" in line[0] else "bpf_loop" if "(bpf_loop)" in line[0] else "?"
    assert not want or got == want, "shape %s, want %s: %s" % (got, want, line[0])
    return line[0].replace("start-up: ", "")


def check_threads(py=PY, tag=TAG):
    return it.test_threads(py, tag)


def check_gil(py=PY, tag=TAG):
    return it.test_gil_wall(py, tag, TCG_MIN_HELD_WAIT)


def check_kernel(py=PY, tag=TAG):
    return it.test_kernel_syscalls(py, tag)


def check_container(py=PY, tag=TAG):
    return it.test_cgroup_alone([(tag.split("-", 1)[0], tag.split("-", 1)[1], py)])


CHECKS = [("shape", check_shape), ("split", check_split), ("deep", check_deep), ("threads", check_threads),
          ("all-python", check_all_python), ("wall", check_wall), ("gil", check_gil), ("kernel", check_kernel),
          ("native", check_native), ("signal", check_signal), ("opcodes", check_opcodes),
          ("container", check_container), ("dump", check_dump), ("dump-native", check_dump_native)]
# the checks that load the BPF program: all failed at once when it does not load
BPF_CHECKS = {name for name, _ in CHECKS} - {"dump"}
# run on sid's interpreters of the image too (run.sh asks one kernel of a run for them), named
# NAME@VERSION ("ok split@3.14: ..."): TB_SID_PYTHONS=all runs every one of SID_CHECKS on each
# (about 39 s a version under TCG); TB_SID_PYTHONS=1 (CI) those of SID_EACH on each and every
# other one on one version, SID_ONE (about 64 s for the three)
SID_CHECKS = ("split", "deep", "threads", "native", "opcodes", "dump")
SID_EACH = ("split", "threads", "dump")
SID_ONE = {"deep": "3.13", "opcodes": "3.14", "native": "3.15"}
SID_PYTHONS = os.path.join(ROOT, "sid-pythons.txt")   # initramfs.sh: "3.13 sid-static WRAPPER" lines


def sid_pythons():
    """sid's interpreters in the image (tests/setup-pythons.sh's wrappers, at their host paths):
    [(version, tag, argv)]; none unless TB_SID_PYTHONS=1."""
    if os.environ.get("TB_SID_PYTHONS") not in ("1", "all") or not os.path.exists(SID_PYTHONS):
        return []
    found = []
    with open(SID_PYTHONS) as f:
        for line in f:
            version, kind, cmd = line.split()
            found.append((version, "%s-%s" % (version, kind), [cmd]))
    return found


def planned(only):
    """The runs this guest makes, in order: (name as printed, check name, function, argv, tag)."""
    runs = [(name, name, fn, PY, TAG) for name, fn in CHECKS if not only or name in only]
    every = os.environ.get("TB_SID_PYTHONS") == "all"
    for version, tag, argv in sid_pythons():
        runs += [("%s@%s" % (name, version), name, dict(CHECKS)[name], argv, tag)
                 for name in SID_CHECKS if (not only or name in only) and
                 (every or name in SID_EACH or SID_ONE.get(name) == version)]
    return runs


def load_check():
    """Loads the BPF program once (a capture of `python3.11 -c pass`, TB_DEBUG_BPF=1): None if
    it loads, else the agent's own first stderr line (what every capture would fail with). On
    a failure the agent's stderr goes to the console (its first 30 and last 60 lines: libbpf's
    messages and the verifier log), and a "# load error" line gives libbpf's first messages and
    the verifier's last word."""
    t0 = time.time()
    try:
        r = subprocess.run([tb.BIN, "-q", "-d", "1", "-o", os.path.join(it.TMP, "load.folded"), "--"] + PY +
                           ["-c", "pass"], capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, TB_DEBUG_BPF="1"))
    except subprocess.TimeoutExpired:
        print("# load error: no capture after 300 s", flush=True)
        return "the BPF program did not load in 300 s"
    if r.returncode == 0:
        print("# the BPF program loads (a capture of python3.11 -c pass: %.1f s)" % (time.time() - t0), flush=True)
        return None
    lines = r.stderr.splitlines()
    shown = lines if len(lines) <= 90 else lines[:30] + ["... (%d lines)" % (len(lines) - 90)] + lines[-60:]
    sys.stderr.write("--- TB_DEBUG_BPF=1 tachyon-bpf: exit %d, %d lines of stderr:\n%s\n---\n" % (
        r.returncode, len(lines), "\n".join(shown)))
    libbpf, verdict, in_log = [], [], False
    for line in lines:
        if "-- BEGIN PROG LOAD LOG --" in line:
            in_log, verdict = True, []
        elif "-- END PROG LOAD LOG --" in line:
            in_log = False
        elif in_log:
            if line.strip() and not line.startswith(("processed ", "verification time", "stack depth")):
                verdict = [line.strip()]
        elif line.startswith("libbpf:"):
            libbpf.append(line.strip())
    print("# load error (%.1f s; the log is on the console): %s" % (
        time.time() - t0, " | ".join(libbpf[:2] + ["verifier: " + v for v in verdict])), flush=True)
    agent = [l for l in lines if l.startswith("tachyon-bpf:")]
    return "exit %d: %s" % (r.returncode, agent[0] if agent else first_line(r.stderr))


# the agent's own refusal of a feature, as a failed capture reports it ("exit 2: tachyon-bpf: ...")
REFUSED = re.compile(r"exit [1-9][0-9]*: tachyon-bpf: .*\bnot (ported|supported)\b")


def main():
    only = [c for c in os.environ.get("TB_CHECKS", "").split(",") if c]
    may_be_unsupported = [c for c in os.environ.get("TB_UNSUPPORTED", "").split(",") if c]
    unsupported = []
    unknown = [c for c in only if c not in dict(CHECKS)]
    if unknown:
        print("FAIL checks: unknown TB_CHECKS %s" % ",".join(unknown), flush=True)
    passed, failed = 0, len(unknown)
    version = subprocess.run([tb.BIN, "--version"], capture_output=True, text=True).stdout.strip()
    print("# kernel %s, python %s, %s; booted in %s s" % (platform.release(), platform.python_version(), version,
                                                         os.environ.get("TB_BOOTED", "?")), flush=True)
    start = time.time()
    runs = planned(only)
    load_error = load_check() if any(check in BPF_CHECKS for _, check, _, _, _ in runs) else None
    sid_start = None
    for name, check, fn, py, tag in runs:
        if py is not PY and sid_start is None:
            sid_start = time.time()
            print("# sid's interpreters: %s" % ", ".join(t for _, t, _ in sid_pythons()), flush=True)
        if load_error and check in BPF_CHECKS:
            failed += 1
            print("FAIL %s: %s" % (name, load_error), flush=True)
            continue
        t0 = time.time()
        try:
            detail = fn(py, tag)
            passed += 1
            print("ok %s: %s [%.1f s]" % (name, detail or "", time.time() - t0), flush=True)
        except Exception as e:  # noqa: BLE001  any error is the check's failure
            reason = first_line(e) or type(e).__name__
            if check in may_be_unsupported and REFUSED.search(reason):
                unsupported.append(name)
                print("unsupported %s: %s [%.1f s]" % (name, reason, time.time() - t0), flush=True)
                continue
            failed += 1
            print("FAIL %s: %s [%.1f s]" % (name, reason, time.time() - t0), flush=True)
            traceback.print_exc()
    if sid_start is not None:
        print("# sid's interpreters' checks took %.1f s" % (time.time() - sid_start), flush=True)
    print("# checks took %.1f s" % (time.time() - start), flush=True)
    if unsupported:
        print("# %d unsupported: %s" % (len(unsupported), ",".join(unsupported)), flush=True)
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
