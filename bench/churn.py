"""churn.py: process and thread churn for bench/soak.py, for SECONDS or
until SIGTERM.

    churn.py soak SECONDS    every second: code compiled under new function
                             names and run, short-lived Python subprocesses
                             (new code in each), fork()ed children that exit at
                             once, a thread pool started and shut down, and
                             threads started and ended
    churn.py stacks SECONDS [PROCS]
                             a stack-rich host: PROCS processes (default 2) run
                             random call chains of depth 8-30 over 3,000
                             functions in 60 files, about a millisecond at the
                             leaf of each, so nearly every sample is a stack
                             never seen before (the agent keeps them all)
    churn.py storm SECONDS [FORKERS]
                             a fork storm: FORKERS processes (default 4) fork
                             as fast as they can, the children exit at once;
                             and one process spins for the whole run
                             (`survivor_spin`)

Prints one JSON line at the end: what it did (counts); in storm mode first
a line with the survivor's pid.  Moderate on purpose in soak mode (about a third of
a core): the machine is shared; the point is the churn, not the load.
"""
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import threading
import time

stopped = False


def stop(signum, frame):
    global stopped
    stopped = True


def running(end):
    return not stopped and time.time() < end


def busy(seconds):
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1
    return n


def fresh_code(tag, n, seconds):
    """Source of n new functions (names never seen before) calling each other."""
    lines = ["import time"]
    for k in range(n):
        lines.append("def churn_%s_%d(t):" % (tag, k))
        if k + 1 < n:
            lines.append("    return churn_%s_%d(t)" % (tag, k + 1))
        else:
            lines.append("    end = time.perf_counter() + t")
            lines.append("    while time.perf_counter() < end: pass")
    lines.append("churn_%s_0(%r)" % (tag, seconds))
    return "\n".join(lines) + "\n"


def soak(seconds):
    counts = dict(rounds=0, code_objects=0, subprocesses=0, forks=0, pool_threads=0, threads=0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # forked children reaped by the kernel
    end = time.time() + seconds
    rnd = 0
    while running(end):
        t0 = time.time()
        rnd += 1
        # new code objects, compiled under a new file name
        src = fresh_code("r%d" % rnd, 8, 0.02)
        exec(compile(src, "<churn round %d>" % rnd, "exec"), {})
        counts["code_objects"] += 8
        # short-lived Python subprocesses, each with code of its own
        procs = [subprocess.Popen([sys.executable, "-c", fresh_code("p%d_%d" % (rnd, i), 4, 0.05)])
                 for i in range(3)]
        counts["subprocesses"] += len(procs)
        # fork()ed children that exit at once
        for _ in range(20):
            if os.fork() == 0:
                os._exit(0)
        counts["forks"] += 20
        # a thread pool, started and shut down
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(busy, [0.005] * 8))
        counts["pool_threads"] += 4
        # plain threads
        ts = [threading.Thread(target=busy, args=(0.01,), name="churn-%d-%d" % (rnd, i)) for i in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        counts["threads"] += len(ts)
        for p in procs:
            p.wait()
        counts["rounds"] += 1
        if running(end):
            time.sleep(max(0.0, 1.0 - (time.time() - t0)))
    return counts


STACK_FILES, STACK_FUNCS = 60, 50


def stack_functions():
    """3,000 functions in 60 files; each calls the next one its chain names, the last spins."""
    table = []
    for fi in range(STACK_FILES):
        src = ["import time"]
        for k in range(STACK_FUNCS):
            src.append("def handler_%d_%d(F, chain, i):" % (fi, k))
            src.append("    if i < len(chain):")
            src.append("        return F[chain[i]](F, chain, i + 1)")
            src.append("    end = time.perf_counter() + 0.001")
            src.append("    while time.perf_counter() < end: pass")
        ns = {}
        exec(compile("\n".join(src) + "\n", "/srv/stackrich/mod%02d.py" % fi, "exec"), ns)
        table += [ns["handler_%d_%d" % (fi, k)] for k in range(STACK_FUNCS)]
    return table


def stack_worker(seconds, seed, out):
    import random
    rng = random.Random(seed)
    table = stack_functions()
    end = time.time() + seconds
    n = 0
    while running(end):
        chain = [rng.randrange(len(table)) for _ in range(rng.randint(8, 30))]
        table[chain[0]](table, chain, 1)
        n += 1
    os.write(out, b"%d\n" % n)
    os._exit(0)


def stacks(seconds, procs):
    r, w = os.pipe()
    kids = []
    for i in range(procs):
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, stop)
            stack_worker(seconds, 1000 + i, w)
        kids.append(pid)
    os.close(w)
    signal.signal(signal.SIGTERM, lambda *_: [os.kill(k, signal.SIGTERM) for k in kids])
    for pid in kids:
        os.waitpid(pid, 0)
    chains = sum(int(x) for x in os.read(r, 65536).split())
    return dict(chains=chains, processes=procs, functions=STACK_FILES * STACK_FUNCS)


def forker(seconds, out):
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    end = time.time() + seconds
    n = 0
    while running(end):
        for _ in range(100):
            if os.fork() == 0:
                os._exit(0)
        n += 100
    os.write(out, b"%d\n" % n)
    os._exit(0)


def survivor_spin(seconds):
    end = time.time() + seconds
    while running(end):
        pass


def storm(seconds, forkers):
    r, w = os.pipe()
    survivor = os.fork()
    if survivor == 0:
        survivor_spin(seconds)
        os._exit(0)
    print(json.dumps(dict(survivor=survivor)), flush=True)
    kids = []
    for _ in range(forkers):
        pid = os.fork()
        if pid == 0:
            forker(seconds, w)
        kids.append(pid)
    os.close(w)
    signal.signal(signal.SIGTERM, lambda *_: [os.kill(k, signal.SIGTERM) for k in kids + [survivor]])
    for pid in kids:
        os.waitpid(pid, 0)
    forks = sum(int(x) for x in os.read(r, 65536).split())
    os.waitpid(survivor, 0)
    return dict(forks=forks, forkers=forkers)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("soak", "storm", "stacks"):
        sys.exit(__doc__)
    seconds = float(sys.argv[2])
    signal.signal(signal.SIGTERM, stop)
    if sys.argv[1] == "soak":
        out = soak(seconds)
    elif sys.argv[1] == "stacks":
        out = stacks(seconds, int(sys.argv[3]) if len(sys.argv) > 3 else 2)
    else:
        out = storm(seconds, int(sys.argv[3]) if len(sys.argv) > 3 else 4)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
