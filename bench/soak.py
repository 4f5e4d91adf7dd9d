"""soak.py: the agent under process and thread churn, watched over time.

    soak.py TB MODE SECONDS [--hz HZ] [--every S] [--forkers N] [--procs N] [--scope cgroup|host]
            [--python PY] [--out-dir DIR]

MODE soak: `TB --all-python -r HZ` for SECONDS while bench/churn.py soak
starts and ends processes, threads and code objects.  --scope cgroup
(default): the generator runs in a cgroup v2 of its own and the agent gets
`--cgroup` too (every Python process in it, the ones started later too), so
other jobs of a shared machine do not count; host: every Python process.  MODE storm: the same
during bench/churn.py storm (FORKERS processes forking as fast as they can,
and one spinning survivor whose samples must all be there).  MODE stacks: the
same during bench/churn.py stacks (PROCS processes running random call chains
over 3,000 functions: nearly every sample a new stack, which the agent keeps),
the rows with the profile's unique stacks and the RSS per stack.  Every S seconds
(default 30) one line on stderr: the agent's RSS (and peak) and its CPU, in
the last S seconds and overall, and the processes / threads its profile holds
(from its progress lines).  At the end a markdown section on stdout.
Benchmarks, not tests: exits non-zero only when something breaks.
"""
import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import tree_json  # noqa: E402
TICK = os.sysconf("SC_CLK_TCK")
SCOPES = {
    "cgroup": " `--cgroup` of the generator's own cgroup (so other jobs of the shared machine do not count: "
              "every Python process in it, the ones started later too)",
    "host": " (every Python process of the machine: other jobs' too)",
}
PROGRESS = re.compile(r"(\d+)s: (\d+) samples .*?, (\d+) processes, (\d+) threads, (\d+) stacks, (\d+) lost")


def die(msg):
    print("soak.py: %s" % msg, file=sys.stderr)
    sys.exit(1)


def proc_rss_mib(pid):
    """(VmRSS, VmHWM) of pid in MiB, or None once it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            v = dict(l.split(":", 1) for l in f if ":" in l)
        return int(v["VmRSS"].split()[0]) / 1024.0, int(v["VmHWM"].split()[0]) / 1024.0
    except (OSError, KeyError, ValueError):
        return None


def proc_cpu_s(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


def last_progress(path):
    try:
        with open(path, errors="replace") as f:
            found = PROGRESS.findall(f.read())
    except OSError:
        return None
    return found[-1] if found else None


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("tb")
    ap.add_argument("mode", choices=("soak", "storm", "stacks"))
    ap.add_argument("seconds", type=float)
    ap.add_argument("--hz", type=int, default=1000)
    ap.add_argument("--every", type=float, default=30.0)
    ap.add_argument("--forkers", type=int, default=4)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--scope", choices=("cgroup", "host"), default="cgroup")
    ap.add_argument("--python", default="/usr/bin/python3.11")
    ap.add_argument("--out-dir", default=None)
    a = ap.parse_args()
    work = a.out_dir or tempfile.mkdtemp(prefix="tachyon-soak.")
    os.makedirs(work, exist_ok=True)
    # stacks: a capture (hundreds of thousands of stacks); meta from the last progress line
    out = os.path.join(work, "soak.tbp" if a.mode == "stacks" else "soak.json")
    err = os.path.join(work, "agent.err")

    # the generator runs until told to stop (the agent may take long to start on a loaded machine)
    gen_args = [a.python, os.path.join(HERE, "churn.py"), a.mode, str(a.seconds + 600)]
    if a.mode == "storm":
        gen_args.append(str(a.forkers))
    if a.mode == "stacks":
        gen_args.append(str(a.procs))
    cg = make_cgroup() if a.scope == "cgroup" else None
    join = (lambda: open(os.path.join(cg, "cgroup.procs"), "w").write(str(os.getpid()))) if cg else None
    gen = subprocess.Popen(gen_args, stdout=subprocess.PIPE, text=True, start_new_session=True,
                           preexec_fn=join)
    try:
        run(a, gen, out, err, ["--cgroup", cg] if cg else [])
    finally:
        try:
            os.killpg(gen.pid, signal.SIGKILL)   # its forkers and survivor too
        except ProcessLookupError:
            pass
        gen.wait()
        if cg:
            remove_cgroup(cg)


def cgroup2_root():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            if " - cgroup2 " in line:
                return line.split()[4]
    die("no cgroup2 mount: use --scope host")


def make_cgroup():
    cg = os.path.join(cgroup2_root(), "tachyon-soak-%d" % os.getpid())
    os.mkdir(cg)
    return cg


def remove_cgroup(cg):
    """Kill what is left in it, then remove it."""
    for _ in range(20):
        try:
            with open(os.path.join(cg, "cgroup.procs")) as f:
                pids = [int(x) for x in f.read().split()]
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            os.rmdir(cg)
            return
        except OSError:
            time.sleep(0.1)


def run(a, gen, out, err, scope):
    survivor = json.loads(gen.stdout.readline())["survivor"] if a.mode == "storm" else None
    time.sleep(1.0)
    if gen.poll() is not None:
        die("the churn generator exited early")
    with open(err, "w") as ef:
        agent = subprocess.Popen([a.tb, "--all-python", "-r", str(a.hz), "-d", str(a.seconds),
                                  "-o", out] + scope, stderr=ef, stdout=subprocess.DEVNULL)
    # time runs from the start of sampling (loading can take seconds on a loaded machine)
    while agent.poll() is None and "sampling" not in open(err, errors="replace").read():
        time.sleep(0.05)
    t0 = time.time()
    surv0 = proc_cpu_s(survivor) if survivor else None
    cpu0 = proc_cpu_s(agent.pid) or 0.0
    rows = []
    last_t, last_cpu, next_t = t0, cpu0, t0 + a.every
    while agent.poll() is None:
        time.sleep(0.2)
        now = time.time()
        if now < next_t:
            continue
        next_t += a.every
        rss, cpu = proc_rss_mib(agent.pid), proc_cpu_s(agent.pid)
        if rss is None or cpu is None:
            break
        prog = last_progress(err)
        row = dict(t=now - t0, rss=rss[0], hwm=rss[1], cpu_pct=100 * (cpu - last_cpu) / (now - last_t),
                   cpu_all_pct=100 * (cpu - cpu0) / (now - t0),
                   procs=int(prog[2]) if prog else None, threads=int(prog[3]) if prog else None,
                   stacks=int(prog[4]) if prog else None)
        rows.append(row)
        last_t, last_cpu = now, cpu
        print("[soak %4.0fs] agent RSS %6.1f MiB (peak %6.1f), CPU %5.2f%% of a core (last %.0f s), "
              "%5.2f%% overall; profile: %s processes, %s threads, %s stacks" % (
                  row["t"], rss[0], rss[1], row["cpu_pct"], a.every, row["cpu_all_pct"],
                  row["procs"], row["threads"], row["stacks"]), file=sys.stderr, flush=True)
    rc = agent.wait()
    wall = time.time() - t0
    if survivor:
        churn_survivor = proc_cpu_s(survivor) - surv0
    gen.terminate()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)   # the agent (the generator is still running)
    gen_out = gen.communicate(timeout=120)[0]
    if rc != 0:
        sys.stderr.write(open(err, errors="replace").read()[-2000:])
        die("tachyon-bpf exited %d" % rc)
    try:
        churn = json.loads(gen_out.strip().splitlines()[-1])
        if a.mode == "stacks":
            prog = last_progress(err)
            data = dict(meta=dict(samples=int(prog[1]), lost=int(prog[5])))
            a.out_size = os.path.getsize(out)
        else:
            data = tree_json.load(out)   # version 1 from either version
    except (ValueError, IndexError, OSError) as e:
        die("unreadable results: %s" % e)
    if survivor:
        churn["survivor_cpu_s"] = round(churn_survivor, 2)
    report(a, rows, churn, data, ru.ru_maxrss / 1024.0, ru.ru_utime + ru.ru_stime - cpu0, wall)


def survivor_samples(node):
    """Samples under frames named survivor_spin (each stack counted once: its top-most match)."""
    if node.get("kind") == "frame" and node.get("name") == "survivor_spin":
        return node.get("value", 0)
    return sum(survivor_samples(c) for c in node.get("children", []))


def report(a, rows, churn, data, peak, cpu, wall):
    """cpu: the agent's CPU seconds from the start of sampling to its exit (writing included)."""
    meta = data["meta"]
    if a.mode == "soak":
        print("\n## 6. Soak: churn under `--all-python -r %d` (`bash bench/run.sh soak`)\n" % a.hz)
        print("`bench/churn.py soak`: every second new code objects (8 new function names, exec'd), 3 "
              "short-lived Python subprocesses with code of their own, 20 fork()ed children that exit at "
              "once, a 4-thread pool started and shut down, 4 threads started and ended. "
              "`tachyon-bpf --all-python -r %d -d %.0f`%s. One row per %.0f s: the agent's RSS and its "
              "CPU in that interval; the profile's size from the agent's progress line.\n" % (
                  a.hz, a.seconds, SCOPES[a.scope], a.every))
    elif a.mode == "stacks":
        print("\n## 11. Stack-rich host: the live agent's memory (`bash bench/run.sh stacks`)\n")
        print("`bench/churn.py stacks`: %d processes run random call chains of depth 8-30 over 3,000 "
              "functions in 60 files, about 1 ms at each chain's leaf, so nearly every sample is a stack "
              "never seen before, and the agent keeps every one (the issue-18 workload, live). "
              "`tachyon-bpf --all-python -r %d -d %.0f`%s. One row per %.0f s: the agent's RSS, its CPU in "
              "that interval, the profile's unique stacks and the RSS per stack.\n" % (
                  a.procs, a.hz, a.seconds, SCOPES[a.scope], a.every))
        print("| time | agent RSS | peak RSS so far | agent CPU, % of a core (interval) | unique stacks | RSS per stack |")
        print("|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            st = r["stacks"] or 0
            print("| %.0f s | %.1f MiB | %.1f MiB | %.2f%% | %s | %s |" % (
                r["t"], r["rss"], r["hwm"], r["cpu_pct"], st,
                "%.0f B" % (r["rss"] * 1048576 / st) if st else "-"))
        print()
        print("| duration | workload | agent peak RSS (writing included) | agent CPU, % of a core | samples | lost | output |")
        print("|---:|---|---:|---:|---:|---:|---:|")
        ch = ", ".join("%s %s" % (v, k.replace("_", " ")) for k, v in churn.items())
        print("| %.0f s | %s | %.1f MiB | %.2f%% | %d | %d | %.1f MB |" % (
            wall, ch, peak, 100 * cpu / wall, meta.get("samples", 0), meta.get("lost", 0),
            a.out_size / 1e6))
        print()
        return
    else:
        print("\n## 7. Fork storm under `--all-python -r %d` (`bash bench/run.sh storm`)\n" % a.hz)
        print("`bench/churn.py storm`: %d processes fork as fast as they can (the children exit at once) "
              "and one process spins all along (`survivor_spin`); `tachyon-bpf --all-python -r %d -d %.0f`%s.\n"
              % (a.forkers, a.hz, a.seconds, SCOPES[a.scope]))
    print("| time | agent RSS | peak RSS so far | agent CPU, % of a core (interval) | processes in the profile | threads |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %.0f s | %.1f MiB | %.1f MiB | %.2f%% | %s | %s |" % (
            r["t"], r["rss"], r["hwm"], r["cpu_pct"], r["procs"] if r["procs"] is not None else "-",
            r["threads"] if r["threads"] is not None else "-"))
    print()
    print("| duration | churn | agent peak RSS | RSS first / last row | agent CPU, % of a core | samples | lost | processes / threads in the output |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    ch = ", ".join("%s %s" % (v, k.replace("_", " ")) for k, v in churn.items())
    print("| %.0f s | %s | %.1f MiB | %s | %.2f%% | %d | %d | %d / %d |" % (
        wall, ch, peak,
        "%.1f / %.1f MiB" % (rows[0]["rss"], rows[-1]["rss"]) if rows else "-",
        100 * cpu / wall, meta.get("samples", 0), meta.get("lost", 0),
        len(meta.get("processes", [])), len(data.get("threads", {}))))
    if a.mode == "storm":
        got = survivor_samples(data["tree"])
        want = churn["survivor_cpu_s"] * a.hz
        print("\nSurvivor: %d samples for %.1f s of CPU during the capture at %d Hz (%.0f%% of %d)." % (
                  got, churn["survivor_cpu_s"], a.hz, 100 * got / max(1, want), want))
    print()


if __name__ == "__main__":
    main()
