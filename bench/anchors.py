"""anchors.py: tachyon-bpf next to CPython 3.15's own sampler (Tachyon) in one run.

    anchors.py TB PY315 RAW [--rates "99 1000 10000"] [--rounds 3] [--scale 1.0]
               [--variants "none tachyon-bpf floor tachyon"]

The same 3.15 target, bench/cpu_bound.py held at a gate until the profiler
is attached, then run to the end; per rate, rounds of four runs in rotated
order: no profiler, `tachyon-bpf -p PID -r HZ`, `tachyon-bpf --bench-floor`
(the perf interrupts and an empty program) and `python3.15 -m
profiling.sampling attach -r HZ PID`.  Per run: the target's own elapsed
time (slowdown = with / the same round's run without), the profiler's CPU
(every thread's schedstat run time while the target works: start-up and
output writing left out), its samples and its peak RSS.  One JSON object per run is
appended to RAW; `stats.py anchors RAW` renders the table.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "bench", "cpu_bound.py")
VARIANTS = ("none", "tachyon-bpf", "floor", "tachyon")
ATTACH_WAIT_S = 30.0   # a profiler that has not started sampling by then is broken
SETTLE_S = 1.0         # after it says it samples (Tachyon says nothing: this long after start)


def die(msg):
    print(f"anchors.py: {msg}", file=sys.stderr)
    sys.exit(1)


def cpu_ns(pid):
    """CPU time of a process, all its threads, in ns (schedstat: exact, not in ticks); None once gone."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total


def start_target(py, scale):
    env = dict(os.environ, BENCH_GATE="1")
    return subprocess.Popen([py, WORK, str(scale)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def start_profiler(variant, tb, py, hz, pid, out):
    err = open(out + ".err", "w")
    if variant == "tachyon":
        argv = [py, "-m", "profiling.sampling", "attach", "-r", str(hz), "--collapsed", "-o", out, str(pid)]
    else:
        argv = [tb, "-p", str(pid), "-r", str(hz), "-o", out] + (["--bench-floor"] if variant == "floor" else [])
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)


def ready(variant, prof, out):
    """tachyon-bpf prints its program id once attached; Tachyon says nothing, but has
    mapped its reader (_remote_debugging) by the time it attaches (a loaded machine can
    take seconds to import it)."""
    if variant != "tachyon":
        return "program id" in open(out + ".err").read()
    try:
        return "_remote_debugging" in open(f"/proc/{prof.pid}/maps").read()
    except OSError:
        return False


def wait_sampling(variant, prof, out):
    """Until the profiler samples, then SETTLE_S more."""
    deadline = time.monotonic() + ATTACH_WAIT_S
    while time.monotonic() < deadline and prof.poll() is None and not ready(variant, prof, out):
        time.sleep(0.05)
    if prof.poll() is not None:
        die(f"{variant} exited before the target ran: {open(out + '.err').read()[-400:]}")
    time.sleep(SETTLE_S)


def samples_of(variant, out):
    """Samples of the work: Tachyon samples wall time, the gate's wait too, so only its
    stacks in one_round count; tachyon-bpf samples on-CPU time (the gate is off CPU)."""
    if variant == "tachyon":
        n = 0
        with open(out) as f:
            for line in f:
                m = re.search(r" (\d+)$", line.rstrip("\n"))
                n += int(m.group(1)) if m and "one_round" in line else 0
        return n
    with open(out) as f:
        return json.load(f)["meta"].get("samples", 0)


def one_run(variant, tb, py, hz, scale, tmp):
    target = start_target(py, scale)
    prof, out = None, os.path.join(tmp, f"out-{variant}" + (".txt" if variant == "tachyon" else ".json"))
    if variant != "none":
        prof = start_profiler(variant, tb, py, hz, target.pid, out)
        wait_sampling(variant, prof, out)
    c0 = cpu_ns(prof.pid) if prof else None
    stdout, stderr = target.communicate("go\n")
    c1 = cpu_ns(prof.pid) if prof else None
    if target.returncode:
        die(f"the target failed: {stderr[-400:]}")
    m = re.search(r"^elapsed_s ([0-9.]+)$", stdout, re.M)
    c = re.search(r"^checksum (\S+)", stdout, re.M)
    if not m or not c:
        die(f"no elapsed_s/checksum from the target:\n{stdout[-400:]}")
    rec = {"kind": "anchor", "variant": variant, "hz": hz, "elapsed_s": float(m.group(1)),
           "checksum": c.group(1)}
    if prof:
        try:
            _, status, ru = os.wait4(prof.pid, 0)
        except ChildProcessError:
            die(f"{variant}: lost its process")
        prof.returncode = os.waitstatus_to_exitcode(status)
        if prof.returncode:
            die(f"{variant} failed ({prof.returncode}): {open(out + '.err').read()[-400:]}")
        rec["cpu_s"] = (c1 - c0) / 1e9 if c0 is not None and c1 is not None else None
        rec["rss_kib"] = ru.ru_maxrss
        rec["samples"] = samples_of(variant, out)
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tb")
    ap.add_argument("py")
    ap.add_argument("raw")
    ap.add_argument("--rates", default="99 1000 10000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--variants", default=" ".join(VARIANTS),
                    help="the runs of a round (a subset: agent CPU before/after a change)")
    a = ap.parse_args()
    variants = tuple(a.variants.split())
    if not variants or any(v not in VARIANTS for v in variants):
        die(f"--variants: each of {' '.join(VARIANTS)}")
    with tempfile.TemporaryDirectory(prefix="tachyon-anchors.") as tmp:
        for hz in (int(x) for x in a.rates.split()):
            for rnd in range(a.rounds):
                k = rnd % len(variants)
                for variant in variants[k:] + variants[:k]:
                    rec = one_run(variant, a.tb, a.py, hz, a.scale, tmp)
                    rec["round"] = rnd
                    with open(a.raw, "a") as f:
                        f.write(json.dumps(rec) + "\n")
                    print("    %5d Hz round %d %-11s %.3f s%s" % (
                        hz, rnd, variant, rec["elapsed_s"],
                        "" if variant == "none" else ", profiler CPU %.3f s, %d samples, RSS %.1f MiB" % (
                            rec["cpu_s"] or 0, rec["samples"], rec["rss_kib"] / 1024)), file=sys.stderr)


if __name__ == "__main__":
    main()
