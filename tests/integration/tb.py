"""Helpers for the integration tests: the interpreters present, running
tachyon-bpf for real, and reading its folded output."""
import collections
import os
import re
import subprocess
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import tree_json  # noqa: E402  the tree JSON reader (both versions): tb.tree_json.load(path)
sys.path.insert(0, os.path.join(ROOT, "tests", "golden"))
import roundtrip  # noqa: E402
BIN = os.path.join(ROOT, "tachyon-bpf")
WORKLOADS = os.path.join(ROOT, "tests", "workloads")
# the supported versions, from the agent's own table (user/cpython/versions.h)
EXPECTED = subprocess.run(["bash", os.path.join(ROOT, "tests", "pythons.sh"), "--versions"],
                          capture_output=True, text=True, check=True).stdout.split()


def interpreters():
    """[(minor, kind, argv)] from tests/pythons.sh; with TB_ONE_PER_VERSION=1 the first
    of each version (and of each free-threaded version)."""
    out = subprocess.run(["bash", os.path.join(ROOT, "tests", "pythons.sh")],
                         capture_output=True, text=True, check=True)
    sys.stderr.write(out.stderr)
    found, seen = [], set()
    one = os.environ.get("TB_ONE_PER_VERSION") == "1"
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        key = (parts[0], parts[1].startswith("ft-"))
        if one and key in seen:
            continue
        seen.add(key)
        found.append((parts[0], parts[1], parts[2:]))
    return found


def run(args, timeout=120, **kw):
    return subprocess.run([BIN] + args, capture_output=True, text=True, timeout=timeout, **kw)


def workload(name):
    return os.path.join(WORKLOADS, name)


FRAME_RE = re.compile(r"^(?P<name>.*) \((?P<file>.*):(?P<line>-?\d+)\)$")


class Folded:
    """Parsed collapsed stacks: [(frames root-first, count)]."""

    def __init__(self, path):
        self.stacks = []
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line:
                    continue
                stack, _, count = line.rpartition(" ")
                self.stacks.append((stack.split(";"), int(count)))

    def total(self):
        return sum(c for _, c in self.stacks)

    @staticmethod
    def func(frame):
        m = FRAME_RE.match(frame)
        return m.group("name") if m else frame

    @staticmethod
    def line(frame):
        m = FRAME_RE.match(frame)
        return int(m.group("line")) if m else None

    def self_by_func(self):
        c = collections.Counter()
        for frames, n in self.stacks:
            c[self.func(frames[-1])] += n
        return c

    def threads(self):
        """{thread frame: Counter of function names seen under it}"""
        out = collections.defaultdict(collections.Counter)
        for frames, n in self.stacks:
            if len(frames) >= 2:
                for f in frames[2:]:
                    out[frames[1]][self.func(f)] += n
        return out


def marked_line(path, marker):
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if marker in line:
                return i
    raise AssertionError("marker %r not in %s" % (marker, path))


results = {"passed": 0, "failed": 0}


def check(name, fn, *args):
    """Run one check: PASS/FAIL line with its detail or error, counted in results."""
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


def same_versions(tbp, extra=()):
    """The tree JSON of a capture as version 2 reads back as its version 1 (file and page):
    tests/golden/roundtrip.py.  Returns what was compared."""
    why, detail = roundtrip.compare(BIN, tbp, extra)
    assert not why, "%s %s: version 2 is not version 1: %s" % (os.path.basename(tbp), " ".join(extra), why)
    return detail
