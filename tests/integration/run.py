"""Integration tests: profile real Python processes with the real BPF
program, for every CPython present.  Prints one line per check and ends
with "N passed, N failed"; exits non-zero on any failure or if nothing ran."""
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tb  # noqa: E402

results = {"passed": 0, "failed": 0}
TMP = tempfile.mkdtemp(prefix="tb-it-")


def check(name, fn, *args):
    t0 = time.time()
    try:
        detail = fn(*args)
        results["passed"] += 1
        print("PASS %-45s %5.1fs %s" % (name, time.time() - t0, detail or ""), flush=True)
    except Exception as e:  # noqa: BLE001
        results["failed"] += 1
        print("FAIL %-45s %s" % (name, e), flush=True)
        if os.environ.get("TB_VERBOSE"):
            traceback.print_exc()


def capture(argv, extra=(), name="out"):
    out = os.path.join(TMP, name + ".folded")
    r = tb.run(["-q", "-o", out] + list(extra) + ["--"] + argv)
    assert r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr.strip())
    return tb.Folded(out), r


# ---- per-interpreter checks -------------------------------------------------

def test_slices(py, tag):
    wl = tb.workload("slices.py")
    fold, _ = capture(py + [wl, "3"], ["-r", "499"], "slices-" + tag)
    share = {"fifty": 0, "thirty": 0, "twenty": 0}
    hot = tb.marked_line(wl, "HOT-LINE spin")
    spin_lines = {}
    for frames, n in fold.stacks:
        names = [tb.Folded.func(f) for f in frames]
        for k in share:
            if k in names:
                share[k] += n
        if names[-1] == "spin":
            ln = tb.Folded.line(frames[-1])
            spin_lines[ln] = spin_lines.get(ln, 0) + n
    total = sum(share.values())
    assert total > 500, "only %d samples in the three functions" % total
    pct = {k: 100.0 * v / total for k, v in share.items()}
    for k, want in (("fifty", 50), ("thirty", 30), ("twenty", 20)):
        assert abs(pct[k] - want) <= 5, "%s has %.1f%%, want %d%%" % (k, pct[k], want)
    spin_total = sum(spin_lines.values())
    on_loop = spin_lines.get(hot, 0) + spin_lines.get(hot + 1, 0)
    assert spin_total and on_loop >= 0.9 * spin_total, \
        "spin lines %s, hot loop is %d-%d" % (spin_lines, hot, hot + 1)
    return "%.1f/%.1f/%.1f%% of %d samples, %.0f%% on the loop lines" % (
        pct["fifty"], pct["thirty"], pct["twenty"], total, 100.0 * on_loop / spin_total)


def test_threads(py, tag):
    out = os.path.join(TMP, "threads-%s.folded" % tag)
    proc = subprocess.Popen([tb.BIN, "-q", "-r", "499", "-o", out, "--"] + py +
                            [tb.workload("threads.py"), "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    tids = {}
    for line in stdout.splitlines():
        tid, name = line.split()
        tids[tid] = name
    assert len(tids) == 3, "workload printed %r" % stdout
    fold = tb.Folded(out)
    by_thread = fold.threads()
    seen = []
    for tid, name in tids.items():
        frames = [k for k in by_thread if k.endswith("(tid %s)" % tid)]
        assert frames, "thread %s (%s) missing; threads: %s" % (tid, name, list(by_thread))
        funcs = by_thread[frames[0]]
        own = name + "_work"
        assert funcs[own] > 50, "thread %s: %s has %d samples" % (tid, own, funcs[own])
        others = [n + "_work" for n in tids.values() if n != name]
        assert all(funcs[o] == 0 for o in others), "thread %s saw %s" % (tid, dict(funcs))
        seen.append("%s:%d" % (name, funcs[own]))
    return ", ".join(seen)


def test_deep(py, tag):
    fold, r = capture(py + [tb.workload("deep.py"), "400", "1.5"], ["-r", "499", "--max-depth", "512"],
                      "deep-" + tag)
    leaf = [(frames, n) for frames, n in fold.stacks if tb.Folded.func(frames[-1]) == "leaf"]
    assert leaf, "no samples in leaf"
    best = max(leaf, key=lambda x: x[1])[0]
    depth = sum(1 for f in best if tb.Folded.func(f) == "recurse")
    assert depth == 401, "recurse appears %d times, want 401" % depth
    assert not any("<truncated>" in f for f in best)
    assert tb.Folded.func(best[2]) == "<module>", "root frame is %s" % best[2]
    # the default depth cuts it: must be marked, never silently cut
    fold2, _ = capture(py + [tb.workload("deep.py"), "400", "1"], ["-r", "499"], "deep128-" + tag)
    trunc = sum(n for frames, n in fold2.stacks if "<truncated>" in frames)
    leafs = sum(n for frames, n in fold2.stacks if tb.Folded.func(frames[-1]) == "leaf")
    assert leafs and trunc >= leafs, "%d leaf samples, only %d marked truncated" % (leafs, trunc)
    return "401 recurse frames at --max-depth 512; %d/%d truncated at 128" % (trunc, leafs)


def test_attach(py, tag):
    proc = subprocess.Popen(py + [tb.workload("slices.py"), "4"])
    try:
        time.sleep(0.5)
        out = os.path.join(TMP, "attach-%s.folded" % tag)
        r = tb.run(["-q", "-r", "499", "-d", "1.5", "-p", str(proc.pid), "-o", out])
        assert r.returncode == 0, r.stderr
        fold = tb.Folded(out)
        self_ = fold.self_by_func()
        assert self_["spin"] > 0.8 * fold.total(), "spin self %d of %d" % (self_["spin"], fold.total())
        assert all(s[0][0].endswith("(pid %d)" % proc.pid) for s in fold.stacks)
        return "%d samples, pid frame ok" % fold.total()
    finally:
        proc.kill()
        proc.wait()


# ---- bad input --------------------------------------------------------------

def one_line_error(r, needle):
    assert r.returncode != 0, "exit 0"
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, "stderr: %r" % r.stderr
    assert needle in lines[0], "stderr: %r" % lines[0]
    return lines[0]


def test_not_python():
    proc = subprocess.Popen(["sleep", "30"])
    try:
        out = os.path.join(TMP, "np.folded")
        r = tb.run(["-p", str(proc.pid), "-o", out])
        msg = one_line_error(r, "not a Python process")
        assert not os.path.exists(out)
        return msg
    finally:
        proc.kill()


def test_no_such_pid():
    return one_line_error(tb.run(["-p", "999999", "-o", os.path.join(TMP, "x.folded")]), "no such process")


def test_cmd_not_found():
    return one_line_error(tb.run(["-o", os.path.join(TMP, "x.folded"), "--", "/nonexistent/cmd"]),
                          "No such file")


def test_cmd_not_python():
    return one_line_error(tb.run(["-o", os.path.join(TMP, "x.folded"), "--", "sleep", "20"], timeout=60),
                          "not a Python process")


def test_not_root():
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", tb.BIN,
                        "-p", "1", "-o", "/tmp/x.folded"], capture_output=True, text=True)
    return one_line_error(r, "root")


def test_bad_output():
    return one_line_error(tb.run(["-o", "x.unknownext", "-p", "1"]), "unknown output format")


def test_sigint_writes_output():
    out = os.path.join(TMP, "sigint.folded")
    proc = subprocess.Popen([tb.BIN, "-q", "-o", out, "--", sys.executable, tb.workload("slices.py"), "30"],
                            stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    fold = tb.Folded(out)
    assert fold.total() > 50, "only %d samples" % fold.total()
    return "%d samples after SIGTERM" % fold.total()


def main():
    if os.geteuid() != 0:
        print("integration tests need root")
        return 1
    pys = tb.interpreters()
    present = sorted({m for m, _, _ in pys})
    missing = [v for v in tb.EXPECTED if v not in present]
    print("interpreters: %s" % ", ".join("%s (%s)" % (m, k) for m, k, _ in pys))
    if missing:
        print("MISSING versions, not tested: %s" % " ".join(missing))
    only = os.environ.get("TB_ONLY")
    for minor, kind, argv in pys:
        tag = "%s-%s" % (minor, kind)
        for fn in (test_slices, test_threads, test_deep, test_attach):
            if only and only not in fn.__name__:
                continue
            check("%s %s" % (fn.__name__, tag), fn, argv, tag)
    for fn in (test_not_python, test_no_such_pid, test_cmd_not_found, test_cmd_not_python,
               test_not_root, test_bad_output, test_sigint_writes_output):
        if only and only not in fn.__name__:
            continue
        check(fn.__name__, fn)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 0 if results["failed"] == 0 and results["passed"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
