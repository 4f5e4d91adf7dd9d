"""timeline.py: time slices end to end, one runner (root).

    python3 tests/integration/timeline.py [PYTHON]

Profiles tests/workloads/phases.py (phase_one spins for 2 s of wall time,
then phase_two for 2 s) once into a capture, then renders each phase's
slice (`render --from T --to T`, the bounds as local times of day printed
by the workload) to every format `render --list-formats` prints, and checks
that in each one at least 95% of the slice's samples are in that phase's
function; a slice in seconds since the capture's start (from the timeline
of the tree JSON) says the same; `diff` of the two slices of the one
capture has phase_one elided and phase_two new; speedscope lists the
samples in time order and gecko's sample times are when the phases ran; a
capture without a timeline refuses --from with one line.

Prints one line per check, then "N passed, N failed"; exits non-zero on any
failure."""
import base64
import collections
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tb  # noqa: E402

TMP = tempfile.mkdtemp(prefix="tb-timeline-")
PHASES = ("phase_one", "phase_two")
WANT = 0.95
results = {"passed": 0, "failed": 0}
STATE = {}


def check(name, fn, *args):
    try:
        detail = fn(*args)
        print("PASS %s%s" % (name, ": " + detail if detail else ""))
        results["passed"] += 1
    except Exception as e:  # noqa: BLE001 - report and go on
        print("FAIL %s: %s" % (name, e))
        traceback.print_exc(limit=3, file=sys.stdout)
        results["failed"] += 1


def path(name):
    return os.path.join(TMP, name)


def local(t):
    """A wall time as `render --from` takes it: a local time of day."""
    return time.strftime("%H:%M:%S", time.localtime(t)) + ("%.3f" % (t % 1))[1:]


# ---- per format: {function name: samples whose stack has it}, total -------

def from_folded(p):
    c, total = collections.Counter(), 0
    for line in open(p, encoding="utf-8", errors="replace"):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        names = {tb.Folded.func(f) for f in stack.split(";")}
        total += int(n)
        for k in PHASES:
            c[k] += int(n) if k in names else 0
    return c, total


def tree_counts(root):
    c = collections.Counter()

    def walk(n, inside):
        if n.get("name") in PHASES and n["name"] not in inside:
            c[n["name"]] += n["value"]
            inside = inside | {n["name"]}
        for k in n.get("children", []):
            walk(k, inside)
    walk(root, frozenset())
    return c, root["value"]


def from_tree_json(p):
    return tree_counts(tb.tree_json.load(p)["tree"])


def page_data(p):
    m = re.search(rb'id="tb-data">([A-Za-z0-9+/=]*)</script>', open(p, "rb").read())
    assert m, "no data in %s" % p
    return json.loads(zlib.decompress(base64.b64decode(m.group(1))))


def from_html(p):
    return tree_counts(tb.tree_json.convert(page_data(p))["tree"])


def from_speedscope(p):
    d = json.load(open(p))
    names = [f["name"] for f in d["shared"]["frames"]]
    c, total = collections.Counter(), 0.0
    for prof in d["profiles"]:
        for s, w in zip(prof["samples"], prof["weights"]):
            total += w
            got = {names[i] for i in s}
            for k in PHASES:
                c[k] += w if k in got else 0
    return c, total


def from_pprof(p):
    import exports
    raw = gzip.open(p).read()
    r = subprocess.run(["protoc", "--decode=perftools.profiles.Profile", "-I", HERE,
                        os.path.join(HERE, "profile.proto")], input=raw, capture_output=True)
    assert r.returncode == 0, r.stderr[:200]
    d = exports.parse_text(r.stdout.decode())
    strs = d["string_table"]
    fname = {exports.one(f, "id"): strs[exports.one(f, "name")] for f in d["function"]}
    loc = {exports.one(l, "id"): {fname[exports.one(x, "function_id")] for x in l["line"]}
           for l in d["location"]}
    c, total = collections.Counter(), 0
    for s in d["sample"]:
        n = s["value"][0]
        got = set().union(*(loc[i] for i in s["location_id"]))
        total += n
        for k in PHASES:
            c[k] += n if k in got else 0
    return c, total


def from_gecko(p):
    g = json.load(open(p))
    s = g["shared"]["stringArray"]
    c, total = collections.Counter(), 0
    for th in g["threads"]:
        st, fr, fn = th["stackTable"], th["frameTable"], th["funcTable"]
        w = th["samples"].get("weight") or [1] * len(th["samples"]["stack"])
        for x, n in zip(th["samples"]["stack"], w):
            got = set()
            while x is not None:
                got.add(s[fn["name"][fr["func"][st["frame"][x]]]])
                x = st["prefix"][x]
            total += n
            for k in PHASES:
                c[k] += n if k in got else 0
    return c, total


def from_jsonl(p):
    strs, frames, c, total = {}, {}, collections.Counter(), 0
    for line in open(p, encoding="utf-8"):
        o = json.loads(line)
        if o["type"] == "str":
            strs[o["id"]] = o["s"]
        elif o["type"] == "frame":
            frames[o["id"]] = strs[o["name"]]
        elif o["type"] == "stack":
            got = {frames[x] for x in o["frames"]}
            total += o["count"]
            for k in PHASES:
                c[k] += o["count"] if k in got else 0
    return c, total


def from_txt(p):
    c = collections.Counter()
    for line in open(p, encoding="utf-8"):
        for k in PHASES:
            m = re.search(r"\s%s \(" % k, line)
            if m:
                cols = line.split()
                c[k] = int(cols[1])  # the "total" column
    m = re.search(r"(\d+) Python samples", open(p, encoding="utf-8").read())
    assert m, "no Python samples in the header"
    return c, int(m.group(1))


def from_heatmap(doc):
    c, total = collections.Counter(), 0
    for f in doc["files"]:
        if not f["path"].endswith("phases.py"):
            continue
        for name, _line, _self, tot in f["functions"]:
            if name in PHASES:
                c[name] += tot
            if name == "<module>":
                total += tot
    return c, total


def from_heatmap_json(p):
    return from_heatmap(json.load(open(p)))


def from_heatmap_html(p):
    return from_heatmap(page_data(p))


def from_tbp(p):
    out = p + ".folded"
    r = tb.run(["render", "-q", p, "-o", out])
    assert r.returncode == 0, r.stderr
    return from_folded(out)


READERS = {".folded": from_folded, ".collapsed": from_folded, ".json": from_tree_json,
           ".html": from_html, ".speedscope.json": from_speedscope, ".pb.gz": from_pprof,
           ".gecko.json": from_gecko, ".jsonl": from_jsonl, ".txt": from_txt,
           ".heatmap.json": from_heatmap_json, ".heatmap.html": from_heatmap_html, ".tbp": from_tbp}


# ---- the checks -------------------------------------------------------------

def capture(py):
    cap = path("phases.tbp")
    r = tb.run(["-q", "-r", "999", "-o", cap, "--", py, tb.workload("phases.py"), "2"], timeout=60)
    assert r.returncode == 0, r.stderr
    m = re.search(r"phases ([\d.]+) ([\d.]+) ([\d.]+)", r.stdout)
    assert m, "the workload printed no phases: %r" % r.stdout[-200:]
    STATE["cap"], STATE["bounds"] = cap, [float(x) for x in m.groups()]
    r = tb.run(["render", "--list-formats"])
    STATE["formats"] = r.stdout.split()
    missing = set(STATE["formats"]) - set(READERS)
    assert not missing, "no reader here for %s" % missing
    return "%s, phases at %s" % (os.path.getsize(cap), " ".join(local(t) for t in STATE["bounds"]))


def slice_shares(name, args):
    """Render the slice to every format: that phase's share in each."""
    outs = [path("%s%s" % (name, e)) for e in STATE["formats"]]
    cmd = ["render", "-q", STATE["cap"]] + args
    for o in outs:
        cmd += ["-o", o]
    r = tb.run(cmd)
    assert r.returncode == 0, r.stderr
    shares = {}
    for e, o in zip(STATE["formats"], outs):
        c, total = READERS[e](o)
        assert total > 0, "%s: no samples" % e
        shares[e] = (c, total)
    return shares


def check_phase(which, args):
    want = PHASES[which]
    shares = slice_shares(want, args)
    low = []
    for e, (c, total) in shares.items():
        share = c[want] / total
        if share < WANT:
            low.append("%s %.1f%% (%s of %s)" % (e, 100 * share, c[want], total))
    assert not low, "%s below %d%%: %s" % (want, 100 * WANT, "; ".join(low))
    worst = min(c[want] / t for c, t in shares.values())
    return "%d formats, %s >= %.1f%% in each (%d samples in the folded slice)" % (
        len(shares), want, 100 * worst, shares[".folded"][1])


def test_phase_local(which):
    b = STATE["bounds"]
    return check_phase(which, ["--from", local(b[which]), "--to", local(b[which + 1])])


def test_phase_seconds(which):
    tree = tb.tree_json.load(path("phase_one.json"))  # a slice: its own timeline
    whole = path("whole.json")
    r = tb.run(["render", "-q", STATE["cap"], "-o", whole])
    assert r.returncode == 0, r.stderr
    tl = tb.tree_json.load(whole).get("timeline")
    assert tl and tree.get("timeline"), "no timeline in the tree JSON"
    start = tl["start_unix_ms"] / 1000.0
    b = STATE["bounds"]
    # the first phase may begin a little before the first sample (the start): not before 0
    f, t = max(0.0, b[which] - start), b[which + 1] - start
    return check_phase(which, ["--from", "%.3f" % f, "--to", "%.3f" % t])


def test_json_versions():
    b = STATE["bounds"]
    return "; ".join(tb.same_versions(STATE["cap"], extra)
                     for extra in ([], ["--from", local(b[1]), "--to", local(b[2])]))


def test_diff_slices():
    b = STATE["bounds"]
    out = path("diff.json")
    # 50 ms clear of the switch: its bucket holds both phases
    r = tb.run(["diff", STATE["cap"], "-q", "-o", out, "--base-from", local(b[0]), "--base-to",
                local(b[1] - 0.05), "--from", local(b[1] + 0.05), "--to", local(b[2])])
    assert r.returncode == 0, r.stderr
    d = json.load(open(out))
    classes, elided = {}, {}

    def walk(n, into):
        if n.get("kind") == "frame" and n["name"] in PHASES:
            into[n["name"]] = n.get("class") if into is classes else bool(n.get("elided"))
        for k in n["children"]:
            walk(k, into)
    walk(d["tree"], classes)
    walk(d["elided"], elided)
    if elided.get("phase_one"):
        classes["phase_one"] = "elided"
    assert classes.get("phase_two") == "new", classes
    assert classes.get("phase_one") == "elided", (classes, elided)
    return "phase_two new, phase_one %s" % classes.get("phase_one", "gone")


def test_time_order():
    """The whole capture: speedscope's samples of each thread in time order (phase_one's weight
    all before phase_two's), gecko's sample times real (each phase within 150 ms of when the
    workload says it ran)."""
    ss, gk = path("whole.speedscope.json"), path("whole.gecko.json")
    r = tb.run(["render", "-q", STATE["cap"], "-o", ss, "-o", gk])
    assert r.returncode == 0, r.stderr
    d = json.load(open(ss))
    names = [f["name"] for f in d["shared"]["frames"]]
    prof = max(d["profiles"], key=lambda x: x["endValue"])
    at, seen = 0.0, {k: [] for k in PHASES}
    for smp, w in zip(prof["samples"], prof["weights"]):
        for k in PHASES:
            if k in {names[i] for i in smp}:
                seen[k].append(at)
        at += w
    assert seen["phase_one"] and seen["phase_two"] and max(seen["phase_one"]) < min(seen["phase_two"]), \
        "speedscope: phase_one at %s, phase_two at %s" % (seen["phase_one"][-3:], seen["phase_two"][:3])
    assert len(prof["samples"]) == len(prof["weights"]) < 200, \
        "speedscope: %d entries (one per run of a stack expected)" % len(prof["samples"])
    g = json.load(open(gk))
    s = g["shared"]["stringArray"]
    when = {k: [] for k in PHASES}
    for th in g["threads"]:
        st, fr, fn, times = th["stackTable"], th["frameTable"], th["funcTable"], th["samples"]["time"]
        assert all(a <= b for a, b in zip(times, times[1:])), "gecko: times out of order"
        for x, t in zip(th["samples"]["stack"], times):
            while x is not None:
                name = s[fn["name"][fr["func"][st["frame"][x]]]]
                if name in PHASES:
                    when[name].append(g["meta"]["startTime"] / 1000.0 + t / 1000.0)
                x = st["prefix"][x]
    b = STATE["bounds"]
    for i, k in enumerate(PHASES):
        lo, hi = min(when[k]), max(when[k])
        assert abs(lo - b[i]) < 0.15 and abs(hi - b[i + 1]) < 0.15, \
            "gecko: %s from %.3f to %.3f, ran %.3f to %.3f" % (k, lo, hi, b[i], b[i + 1])
    return "speedscope: %d entries in time order; gecko: phases where they ran (+-150 ms)" % len(prof["samples"])


def test_refusals():
    old = os.path.join(tb.ROOT, "tests", "golden", "captures")
    v1 = sorted(os.path.join(old, f) for f in os.listdir(old) if f.endswith(".tbp"))[0]
    out = path("refused.folded")
    for args, what in (([v1, "--from", "1"], "no timeline"),
                       ([STATE["cap"], "--from", "3", "--to", "1"], "before"),
                       ([STATE["cap"], "--from", "ten"], "neither"),
                       ([STATE["cap"], "--from", "25:99"], "not a local time"),
                       ([STATE["cap"], "--from", "9999"], "no time bucket")):
        r = tb.run(["render", "-q"] + args + ["-o", out])
        lines = r.stderr.strip().splitlines()
        assert r.returncode != 0 and len(lines) == 1 and what in lines[0], (args, r.stderr)
        assert not os.path.exists(out), "%s written" % out
    return "no timeline, reversed, bad numbers and times, an empty slice: one line each"


def main():
    if os.geteuid() != 0:
        print("timeline.py needs root")
        return 1
    py = sys.argv[1] if len(sys.argv) > 1 else "/usr/bin/python3.11"
    check("capture", capture, py)
    if results["failed"]:
        return 1
    for which in (0, 1):
        check("slice %s (local times)" % PHASES[which], test_phase_local, which)
    for which in (0, 1):
        check("slice %s (seconds)" % PHASES[which], test_phase_seconds, which)
    check("diff of two slices", test_diff_slices)
    check("tree JSON version 2 = version 1 (whole, slice)", test_json_versions)
    check("time order (speedscope, gecko)", test_time_order)
    check("refusals", test_refusals)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 0 if results["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
