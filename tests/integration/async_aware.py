#!/usr/bin/env python3
"""--async-aware, for real (root): two named tasks doing CPU work in their own
coroutines, gathered by a parent task (tests/workloads/async_tasks.py), on 3.14 and
3.15 (the Debian sid builds), with the event loop on the main thread and on a second
thread: at least 90% of each coroutine's samples are under its own task's frame with
the awaiting task's frame right below; hostile task names come out literally (JSON);
on 3.13 one line says task attribution needs 3.14+ and the profile has no task frames;
hundreds of short-lived tasks (tests/workloads/async_short.py, each living 50-300 ms):
>= 99% of their coroutine's samples under a task frame, >= 97% under the task's own
name (the rest <task (finished)>: gone before the agent read it), and the summary line
that counts them.
Run: python3 tests/integration/async_aware.py [-k NAME]"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tb  # noqa: E402

SID = "/var/cache/tachyon-bpf/pythons/bin/python3.%d"
TMP = tempfile.mkdtemp(prefix="tb-async-")
SECONDS = "4"


def record(py, args, out, *more):
    outs = [a for o in (out,) + more for a in ("-o", o)]
    r = tb.run(["--async-aware", "-q", "-r", "299", "-d", "8"] + outs + ["--", py,
                tb.workload("async_tasks.py"), SECONDS] + args, timeout=60)
    if r.returncode:
        raise AssertionError("exit %d: %s" % (r.returncode, r.stderr.strip()[-400:]))
    return r


def task_shares(fold):
    """{coroutine: (samples, samples right under its task's frame with the awaiting
    task's frame below that)}"""
    want = {"alpha_work": ("<task alpha>", "<task parent>"), "beta_work": ("<task beta>", "<task parent>")}
    got = {}
    for frames, n in fold.stacks:
        funcs = [tb.Folded.func(f) for f in frames]
        for coro, (own, parent) in want.items():
            if coro not in funcs:
                continue
            i = funcs.index(coro)
            ok = i >= 2 and funcs[i - 1] == own and funcs[i - 2] == parent
            tot, good = got.get(coro, (0, 0))
            got[coro] = (tot + n, good + (n if ok else 0))
    return got


def test_tasks(minor, args):
    out = os.path.join(TMP, "t%d%s.folded" % (minor, "".join(args)))
    record(SID % minor, args, out)
    shares = task_shares(tb.Folded(out))
    detail = []
    for coro in ("alpha_work", "beta_work"):
        tot, good = shares.get(coro, (0, 0))
        if tot < 20:
            raise AssertionError("%s: only %d samples" % (coro, tot))
        if good < 0.9 * tot:
            raise AssertionError("%s: %d of %d samples under its task" % (coro, good, tot))
        detail.append("%s %d/%d" % (coro, good, tot))
    return ", ".join(detail)


def test_short_tasks(minor):
    out = os.path.join(TMP, "s%d.folded" % minor)
    r = tb.run(["--async-aware", "-r", "299", "-d", "10", "-o", out, "--", SID % minor,
                tb.workload("async_short.py"), "5", "400"], timeout=60)
    if r.returncode:
        raise AssertionError("exit %d: %s" % (r.returncode, r.stderr.strip()[-400:]))
    note = [l for l in r.stderr.splitlines() if "--async-aware:" in l and "samples ran a task" in l]
    if len(note) != 1:
        raise AssertionError("no summary line of task frames: %r" % r.stderr[-600:])
    tot = framed = named = 0
    for frames, n in tb.Folded(out).stacks:
        funcs = [tb.Folded.func(f) for f in frames]
        if "short_work" not in funcs:
            continue
        i = funcs.index("short_work")
        tot += n
        if i >= 1 and funcs[i - 1].startswith("<task "):
            framed += n
            named += n if funcs[i - 1].startswith("<task short-") else 0
    if tot < 300:
        raise AssertionError("only %d samples of short_work" % tot)
    if framed < 0.99 * tot or named < 0.97 * tot:
        raise AssertionError("short_work: %d samples, %d under a task frame, %d under its own" % (tot, framed, named))
    return "short_work %d samples: %d under a task frame, %d named; %s" % (tot, framed, named, note[0][13:])


def names_in(node, acc):
    if node.get("kind") == "task":
        acc.add(node["name"])
    for c in node.get("children", []):
        names_in(c, acc)
    return acc


def test_hostile(minor):
    out = os.path.join(TMP, "h%d.json" % minor)
    cap = os.path.join(TMP, "h%d.tbp" % minor)
    record(SID % minor, ["hostile"], out, cap)
    tb.same_versions(cap)  # task frames and tasks, as version 2
    data = tb.tree_json.load(out)
    names = names_in(data["tree"], set())
    want = {"<task alpha;<b>\"x\"</b>\n>", "<task beta \\u2028 ] {>", "<task parent>"}
    if not want <= names:
        raise AssertionError("task frames %r, want %r" % (sorted(names), sorted(want)))
    tasks = {t["name"] for t in data.get("tasks", {}).get("list", [])}
    if not want - {"<task parent>"} <= tasks:  # parent only awaits: never the running task
        raise AssertionError("JSON tasks %r" % sorted(tasks))
    return "%d task frames" % len(names)


def test_before_3_14():
    out = os.path.join(TMP, "old.folded")
    r = tb.run(["--async-aware", "-d", "8", "-o", out, "--", SID % 13,
                tb.workload("async_tasks.py"), "2"], timeout=60)
    lines = [l for l in r.stderr.splitlines() if "needs CPython 3.14+" in l]
    if r.returncode or len(lines) != 1:
        raise AssertionError("exit %d, stderr %r" % (r.returncode, r.stderr[-400:]))
    fold = tb.Folded(out)
    if any("<task" in f for frames, _ in fold.stacks for f in frames):
        raise AssertionError("task frames on 3.13")
    if not any("spin_alpha" in f for frames, _ in fold.stacks for f in frames):
        raise AssertionError("no profile")
    return lines[0]


def checks():
    """[(name, function, args...)]: every check of this file (tests/integration/run.py runs them too)."""
    checks = []
    for minor in (14, 15):
        if os.path.exists(SID % minor):
            checks.append(("async_tasks_3.%d" % minor, test_tasks, minor, []))
            checks.append(("async_tasks_thread_3.%d" % minor, test_tasks, minor, ["thread"]))
            checks.append(("async_hostile_names_3.%d" % minor, test_hostile, minor))
            checks.append(("async_short_tasks_3.%d" % minor, test_short_tasks, minor))
    if os.path.exists(SID % 13):
        checks.append(("async_before_3.14", test_before_3_14))
    return checks


def main():
    only = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else ""
    for name, fn, *args in checks():
        if only in name:
            tb.check(name, fn, *args)
    print("%d passed, %d failed" % (tb.results["passed"], tb.results["failed"]))
    return 1 if tb.results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
