#!/usr/bin/env python3
"""The command line's messages, table-driven (root: some rows load the BPF program): every bad
input and every odd end of a capture gets one line on stderr that says what happened and what
to do, with the exit code that says so. ROWS are (name, argv, exit code, words the one line
holds); argv may hold {tmp}, {py}, {py27}, {py39}, {fifo}, {dir}, {ro}. Rows that check
before sampling also check that the capture never started (the command after -- never ran)
and that they answered at once. The functions below the table check the ends of a capture:
outputs that fail at the end (the capture is saved), a second Ctrl-C, no or few samples, a
diff of small captures, render without and with --summary, how the command after -- ended.
CPython 2.7 and 3.9 come from tests/setup-old-pythons.sh (bullseye's).
Run: python3 tests/integration/messages.py [-k NAME]"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tb  # noqa: E402

TMP = tempfile.mkdtemp(prefix="tb-msg-")
OLD = os.environ.get("TB_OLD_PYTHONS_DIR", "/var/cache/tachyon-bpf/old-pythons") + "/root/usr/bin/python%s"
SLEEP = "import time; time.sleep(20)"
# a command that leaves a mark if it runs: the rows checked before sampling must not start it
MARK = "import pathlib, time; pathlib.Path(%r).touch(); time.sleep(5)"

ROWS = [
    # targets
    ("no target", ["-d", "1"], 2, ["no target: give -- CMD", "--all-python"]),
    ("-p with --all-python", ["-p", "1", "--all-python"], 2, ["-p and --all-python both given"]),
    ("-p with a command", ["-p", "1", "--", "{py}", "-c", "{mark}"], 2, ["a command after --", "not both"]),
    ("--all-python with a command", ["--all-python", "--", "{py}", "-c", "{mark}"], 2, ["a command after --"]),
    # options
    ("unknown long option", ["--bogus", "-p", "1"], 2, ["unknown option --bogus", "tachyon-bpf --help"]),
    ("unknown short option", ["-Z", "-p", "1"], 2, ["unknown option -Z"]),
    ("option without its value", ["-p"], 2, ["option -p needs a value"]),
    ("long option without its value", ["-p", "1", "--mode"], 2, ["option --mode needs a value"]),
    ("bad rate", ["-r", "5x", "-p", "1"], 2, ["-r takes a rate from 1 to 20000"]),
    ("render: no capture", ["render", "-o", "{tmp}/r.html"], 2, ["give exactly one capture file",
                                                                 "tachyon-bpf render --help"]),
    ("render: unknown option", ["render", "--bogus"], 2, ["unknown option --bogus", "render --help"]),
    ("diff: one capture", ["diff", "{tmp}/a.tbp"], 2, ["give BASELINE and CURRENT", "diff --help"]),
    ("top: unknown option", ["top", "--bogus"], 2, ["unknown option --bogus", "top --help"]),
    # outputs, checked before sampling
    ("output in a missing directory", ["-o", "/nonexistent-tb/x.html", "--", "{py}", "-c", "{mark}"], 2,
     ["/nonexistent-tb/x.html", "its directory does not exist"]),
    ("output is a FIFO", ["-o", "{fifo}", "--", "{py}", "-c", "{mark}"], 2, ["is a FIFO", "the name of a file"]),
    ("output is a directory", ["-o", "{dir}", "--", "{py}", "-c", "{mark}"], 2, ["is a directory"]),
    ("output on a read-only filesystem", ["-o", "{ro}/x.html", "--", "{py}", "-c", "{mark}"], 2,
     ["cannot create a file in its directory", "Read-only file system"]),
    ("unknown output format", ["-o", "{tmp}/x.unknownext", "-p", "1"], 2, ["unknown output format", ".html"]),
    # targets that are no supported CPython
    ("CPython 2.7 launched", ["-o", "{tmp}/x.folded", "--", "{py27}", "-c", SLEEP], 1,
     ["CPython 2.7", "is not supported", "reads CPython 3.10 to 3.15"]),
    ("CPython 3.9 launched", ["-o", "{tmp}/x.folded", "--", "{py39}", "-c", SLEEP], 1,
     ["CPython 3.9", "is not supported", "reads CPython 3.10 to 3.15"]),
    ("CPython 3.9 attached", ["-o", "{tmp}/x.folded", "-p", "{pid39}"], 1, ["CPython 3.9", "is not supported"]),
    ("CPython 2.7 dumped", ["dump", "{pid27}"], 1, ["CPython 2.7", "is not supported"]),
    ("not Python", ["-o", "{tmp}/x.folded", "-p", "{sleep}"], 1, ["not a Python process"]),
    ("no such process", ["-o", "{tmp}/x.folded", "-p", "999999"], 1, ["no such process"]),
]


def one_line(r, words):
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, "not one line: %r" % r.stderr[-600:]
    for w in words:
        assert w in lines[0], "%r not in %r" % (w, lines[0])
    return lines[0]


class Fixtures:
    """What the rows refer to: files, a read-only mount, processes of old Pythons."""

    def __init__(self):
        self.procs = []
        self.values = {"tmp": TMP, "py": sys.executable, "py27": OLD % "2.7", "py39": OLD % "3.9",
                       "fifo": os.path.join(TMP, "fifo.html"), "dir": os.path.join(TMP, "dir.html"),
                       "ro": os.path.join(TMP, "ro")}
        os.mkfifo(self.values["fifo"])
        os.mkdir(self.values["dir"])
        os.mkdir(self.values["ro"])
        subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tb-ro", self.values["ro"]], check=True)
        self.values["sleep"] = str(self.spawn(["sleep", "60"]))
        for v in ("2.7", "3.9"):
            if os.path.exists(OLD % v):
                self.values["pid" + v.replace(".", "")] = str(self.spawn([OLD % v, "-c", SLEEP]))
        time.sleep(0.5)  # their loaders done

    def spawn(self, argv):
        p = subprocess.Popen(argv)
        self.procs.append(p)
        return p.pid

    def argv(self, row_argv, mark):
        values = dict(self.values, mark=MARK % mark)
        return [a.format(**values) for a in row_argv]

    def close(self):
        for p in self.procs:
            p.kill()
            p.wait()
        subprocess.run(["umount", self.values["ro"]])


def row_check(fx, argv, rc, words):
    mark = os.path.join(TMP, "ran-%d" % time.monotonic_ns())
    try:
        args = fx.argv(argv, mark)
    except KeyError as e:
        raise AssertionError("fixture %s missing (tests/setup-old-pythons.sh not run?)" % e)
    t0 = time.time()
    r = tb.run(args, timeout=60)
    took = time.time() - t0
    line = one_line(r, words)
    assert r.returncode == rc, "exit %d, not %d: %s" % (r.returncode, rc, line)
    assert not os.path.exists(mark), "the command ran: the problem was found after it started"
    assert took < 15, "answered after %.1f s" % took
    return "exit %d in %.2f s: %s" % (rc, took, line[:110])


def test_rescued_capture():
    """The output's directory disappears during the capture: exit 1, the output's line, and the
    capture saved (beside it: gone; so in the working directory) and said; it renders."""
    out_dir, cwd = os.path.join(TMP, "gone"), os.path.join(TMP, "cwd")
    os.mkdir(out_dir)
    os.mkdir(cwd)
    proc = subprocess.Popen([tb.BIN, "-q", "-d", "3", "-r", "299", "-o", os.path.join(out_dir, "x.html"),
                             "--", sys.executable, tb.workload("slices.py"), "10"], cwd=cwd,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    os.rmdir(out_dir)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, "exit %d: %s" % (proc.returncode, err)
    saved = [f for f in os.listdir(cwd) if f.startswith("tachyon-bpf-rescued-") and f.endswith(".tbp")]
    assert len(saved) == 1, "rescued captures: %s; stderr %r" % (saved, err)
    assert "the capture is saved in " + saved[0] in err and "x.html" in err, err
    r = tb.run(["render", os.path.join(cwd, saved[0]), "-o", os.path.join(TMP, "again.folded")])
    assert r.returncode == 0, r.stderr
    fold = tb.Folded(os.path.join(TMP, "again.folded"))
    assert fold.total() > 100, "the rescued capture has %d samples" % fold.total()
    return "saved as %s, %d samples render" % (saved[0], fold.total())


def test_second_interrupt():
    """Ctrl-C then SIGTERM while the first is handled: aborted at once, said, nothing written."""
    out = os.path.join(TMP, "twice.html")
    proc = subprocess.Popen([tb.BIN, "-o", out, "--", sys.executable, tb.workload("slices.py"), "30"],
                            stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode in (130, 143), "exit %d: %s" % (proc.returncode, err[-300:])
    assert "stopped again: aborted at once, no output written" in err, err[-300:]
    assert not os.path.exists(out), "an output was written"
    return "exit %d: stopped again, nothing written" % proc.returncode


def test_no_samples():
    """An idle target: exit 0, the page written, and a warning that says why and what to try."""
    pid = subprocess.Popen([sys.executable, "-c", SLEEP])
    try:
        time.sleep(0.5)
        out = os.path.join(TMP, "idle.html")
        r = tb.run(["-d", "1", "-o", out, "-p", str(pid.pid)])
        assert r.returncode == 0, r.stderr
        assert os.path.getsize(out) > 0
        warn = [l for l in r.stderr.splitlines() if "warning" in l]
        assert len(warn) == 1 and "no samples with Python frames" in warn[0] and "--mode wall" in warn[0], warn
        return warn[0][:100]
    finally:
        pid.kill()
        pid.wait()


def small_capture(name, seconds, rate="49"):
    out = os.path.join(TMP, name + ".tbp")
    r = tb.run(["-q", "-r", rate, "-d", "5", "-o", out, "--", sys.executable, tb.workload("slices.py"), seconds])
    assert r.returncode == 0, r.stderr
    return out


def test_few_samples():
    """Small captures: render warns (and prints the summary only with --summary), diff says how
    large a change must be to be called; a large capture warns of neither."""
    a, b = small_capture("few-a", "0.6"), small_capture("few-b", "0.6")
    r = tb.run(["render", a, "-o", os.path.join(TMP, "few.folded")])
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert not any("top functions" in l for l in lines), "render printed the summary: %r" % r.stderr
    warn = [l for l in lines if "warning: only" in l and "too few" in l]
    assert len(warn) == 1, r.stderr
    r = tb.run(["render", "--summary", a, "-o", os.path.join(TMP, "few.folded")])
    assert "top functions by self samples" in r.stderr, "--summary: %r" % r.stderr
    r = tb.run(["diff", a, b, "-o", os.path.join(TMP, "few.diff.html")])
    assert r.returncode == 0, r.stderr
    dwarn = [l for l in r.stderr.splitlines() if "diff: warning: only" in l]
    assert len(dwarn) == 1 and "called changed only if it drops by" in dwarn[0], r.stderr
    big = small_capture("many", "3", "999")
    r = tb.run(["diff", big, big, "-o", os.path.join(TMP, "many.diff.html")])
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    return "%s | %s" % (warn[0][13:80], dwarn[0][19:100])


def test_command_end():
    """How the command after -- ended, one line: killed by a signal (said even with -q), a
    non-zero status (not with -q), still running at the end of -d (stopped with SIGTERM), or
    when the agent was stopped by SIGTERM (said even with -q); nothing when it exits 0. The
    capture is written and the exit is 0 each time."""
    cases = [
        ("signal -q", ["-q"], "import os, time; time.sleep(0.3); os.kill(os.getpid(), 9)",
         "the command was killed by signal 9 (Killed)"),
        ("status", [], "import sys, time; time.sleep(0.3); sys.exit(3)", "the command exited with status 3"),
        ("status -q", ["-q"], "import sys, time; time.sleep(0.3); sys.exit(3)", None),
        ("running at -d", ["-d", "0.6"], "import time; time.sleep(20)",
         "the command was still running at the end of the capture: stopped with SIGTERM"),
        ("status 0", [], "import time; time.sleep(0.3)", None),
        ("agent stopped by SIGTERM -q", ["-q"], "import os, time; os.kill(os.getppid(), 15); time.sleep(20)",
         "the command was still running when the capture was stopped by signal 15 (Terminated): stopped with"
         " SIGTERM"),
    ]
    said = []
    for name, extra, code, want in cases:
        out = os.path.join(TMP, "end.folded")
        if os.path.exists(out):
            os.unlink(out)
        r = tb.run(extra + ["-o", out, "--", sys.executable, "-c", code], timeout=60)
        assert r.returncode == 0 and os.path.exists(out), "%s: exit %d, written %s: %s" % (
            name, r.returncode, os.path.exists(out), r.stderr)
        lines = [l for l in r.stderr.splitlines() if "the command " in l]
        if want is None:
            assert not lines, "%s: %r" % (name, lines)
        else:
            assert lines == ["tachyon-bpf: " + want], "%s: %r" % (name, r.stderr[-400:])
            said.append(want[12:40])
    return "; ".join(said)


def checks():
    """[(name, function, args...)] (tests/integration/run.py runs them too)."""
    fx = Fixtures()
    out = [("message: " + name, row_check, fx, argv, rc, words) for name, argv, rc, words in ROWS]
    out += [("message: " + fn.__name__[5:], fn) for fn in (test_rescued_capture, test_second_interrupt,
                                                            test_no_samples, test_few_samples,
                                                            test_command_end)]
    return out, fx


def main():
    only = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else ""
    rows, fx = checks()
    try:
        for name, fn, *args in rows:
            if only in name:
                tb.check(name, fn, *args)
    finally:
        fx.close()
    print("%d passed, %d failed" % (tb.results["passed"], tb.results["failed"]))
    return 1 if tb.results["failed"] or not tb.results["passed"] else 0


if __name__ == "__main__":
    sys.exit(main())
