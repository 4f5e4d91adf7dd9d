"""Exports and capture files, end to end.

    python3 tests/integration/test_exports.py [CAPTURE.tbp]

Without an argument, profiles tests/workloads/threads.py (needs root) writing
x.tbp, x.folded, x.speedscope.json and x.pb.gz at once; with one, renders
those from the capture.  Then checks: the speedscope file against the file
format (https://www.speedscope.app/file-format-schema.json), one profile per
thread; the pprof file decoded by `protoc --decode=perftools.profiles.Profile`
(apt: protobuf-compiler) with tests/integration/profile.proto: sample,
location and function tables consistent, thread labels present; and that
`render` of the capture gives the folded file written at capture time, and
refuses a damaged capture cleanly.  Prints one line per check, then
"N passed, N failed"; exits non-zero on any failure."""
import collections
import gzip
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tb  # noqa: E402

results = tb.results
TMP = tempfile.mkdtemp(prefix="tb-exports-")
PROTO = os.path.join(HERE, "profile.proto")
SCHEMA = "https://www.speedscope.app/file-format-schema.json"
UNITS = {"none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"}
THREAD_RE = re.compile(r"^(?P<name>.*) \(tid (?P<tid>\d+)\)$")
SS_NAME_RE = re.compile(r"^(?P<name>.*) \(tid (?P<tid>\d+), pid (?P<pid>\d+)\)$")


check = tb.check


def path(ext):
    return os.path.join(TMP, "x" + ext)


def folded_threads(fold):
    """{tid: samples} from the thread frames of a folded file."""
    out = collections.Counter()
    for frames, n in fold.stacks:
        m = THREAD_RE.match(frames[1]) if len(frames) > 1 else None
        assert m, "no thread frame in %r" % frames[:2]
        out[int(m.group("tid"))] += n
    return out


# ---- producing the files -----------------------------------------------------

def make_files(capture):
    if capture:
        shutil.copy(capture, path(".tbp"))
        r = tb.run(["render", path(".tbp"), "-q", "-o", path(".folded"), "-o", path(".speedscope.json"),
                    "-o", path(".pb.gz"), "-o", path(".json")])
        assert r.returncode == 0, "render exit %d: %s" % (r.returncode, r.stderr.strip())
        return "rendered from %s" % capture
    r = tb.run(["-q", "-r", "199", "-o", path(".tbp"), "-o", path(".folded"), "-o", path(".speedscope.json"),
                "-o", path(".pb.gz"), "-o", path(".json"), "--", sys.executable, tb.workload("threads.py"), "2"])
    assert r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr.strip())
    for ext in (".tbp", ".folded", ".speedscope.json", ".pb.gz", ".json"):
        assert os.path.getsize(path(ext)) > 0, "x%s is empty" % ext
    return "captured threads.py"


# ---- speedscope -------------------------------------------------------------

def test_speedscope():
    doc = json.load(open(path(".speedscope.json"), encoding="utf-8"))
    meta = json.load(open(path(".json"), encoding="utf-8"))["meta"]
    fold = tb.Folded(path(".folded"))
    assert doc.get("$schema") == SCHEMA, "bad $schema"
    assert isinstance(doc.get("shared"), dict) and isinstance(doc["shared"].get("frames"), list)
    assert isinstance(doc.get("profiles"), list) and doc["profiles"], "no profiles"
    for k in ("name", "exporter", "version"):
        assert k not in doc or isinstance(doc[k], str), "%s is not a string" % k
    ai = doc.get("activeProfileIndex", 0)
    assert isinstance(ai, int) and 0 <= ai < len(doc["profiles"]), "bad activeProfileIndex"
    frames = doc["shared"]["frames"]
    for i, f in enumerate(frames):
        assert isinstance(f, dict) and isinstance(f.get("name"), str), "frame %d has no name" % i
        assert "file" not in f or isinstance(f["file"], str), "frame %d: file" % i
        for k in ("line", "col"):
            assert k not in f or isinstance(f[k], (int, float)), "frame %d: %s" % (i, k)
    keys = [(f["name"], f.get("file"), f.get("line")) for f in frames]
    assert len(keys) == len(set(keys)), "duplicate shared frames"
    want = folded_threads(fold)
    seen = {}
    hz = meta["rate_hz"]
    used = set()
    for p in doc["profiles"]:
        assert p.get("type") == "sampled", "profile type %r" % p.get("type")
        assert isinstance(p.get("name"), str)
        assert p.get("unit") in UNITS, "unit %r" % p.get("unit")
        samples, weights = p.get("samples"), p.get("weights")
        assert isinstance(samples, list) and isinstance(weights, list)
        assert len(samples) == len(weights), "%s: %d samples, %d weights" % (p["name"], len(samples), len(weights))
        for st in samples:
            assert isinstance(st, list) and st, "empty stack"
            for i in st:
                assert isinstance(i, int) and 0 <= i < len(frames), "frame index %r out of range" % i
                used.add(i)
        assert all(isinstance(w, (int, float)) and w > 0 for w in weights), "bad weight"
        assert p["startValue"] == 0 and p["endValue"] >= p["startValue"]
        total = sum(weights)
        assert math.isclose(p["endValue"], total, rel_tol=1e-6), "endValue %r != sum %r" % (p["endValue"], total)
        m = SS_NAME_RE.match(p["name"])
        assert m, "profile name %r" % p["name"]
        tid = int(m.group("tid"))
        assert tid not in seen, "two profiles for tid %d" % tid
        count = total * hz if p["unit"] == "seconds" else total
        seen[tid] = count
        assert math.isclose(count, want.get(tid, -1), rel_tol=1e-6), \
            "tid %d: %r samples, folded has %r" % (tid, count, want.get(tid))
    assert set(seen) == set(want), "profiles for %s, folded threads %s" % (sorted(seen), sorted(want))
    assert used == set(range(len(frames))), "unused shared frames"
    names = {frames[st[-1]]["name"] for p in doc["profiles"] for st in p["samples"]}
    if not os.environ.get("TB_CAPTURE"):
        assert "burn" in names, "burn is not a leaf: %s" % sorted(names)[:10]
    return "%d profiles, %d frames" % (len(doc["profiles"]), len(frames))


# ---- pprof ------------------------------------------------------------------

def unescape(s):
    """A protobuf text-format string body -> str."""
    out = bytearray()
    i = 0
    simple = {"n": 10, "t": 9, "r": 13, '"': 34, "'": 39, "\\": 92, "a": 7, "b": 8, "f": 12, "v": 11}
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        n = s[i + 1]
        if n in simple:
            out.append(simple[n])
            i += 2
        elif n in "01234567":
            j = i + 1
            while j < len(s) and j < i + 4 and s[j] in "01234567":
                j += 1
            out.append(int(s[i + 1:j], 8) & 0xff)
            i = j
        elif n == "x":
            j = i + 2
            while j < len(s) and j < i + 4 and s[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(s[i + 2:j], 16))
            i = j
        else:
            raise ValueError("escape \\%s" % n)
    return out.decode("utf-8", errors="replace")


def parse_text(text):
    """protoc's text output -> nested {field: [values]} dicts."""
    root = collections.defaultdict(list)
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
        elif line.endswith("{"):
            child = collections.defaultdict(list)
            stack[-1][line[:-1].strip()].append(child)
            stack.append(child)
        else:
            k, _, v = line.partition(":")
            v = v.strip()
            if v.startswith('"'):
                v = unescape(v[1:-1])
            elif v in ("true", "false"):
                v = v == "true"
            else:
                v = int(v)
            stack[-1][k.strip()].append(v)
    assert len(stack) == 1, "unbalanced protoc output"
    return root


def one(msg, field, default=0):
    v = msg.get(field, [])
    return v[0] if v else default


def test_pprof():
    assert shutil.which("protoc"), "protoc not found (apt-get install protobuf-compiler)"
    raw = gzip.open(path(".pb.gz")).read()
    r = subprocess.run(["protoc", "--decode=perftools.profiles.Profile", "-I", HERE, PROTO],
                       input=raw, capture_output=True, timeout=60)
    assert r.returncode == 0, "protoc: %s" % r.stderr.decode(errors="replace").strip()
    prof = parse_text(r.stdout.decode("utf-8", errors="replace"))
    meta = json.load(open(path(".json"), encoding="utf-8"))["meta"]
    fold = tb.Folded(path(".folded"))
    strs = prof["string_table"]
    assert strs and strs[0] == "", "string_table[0] is not empty"

    def s(i):
        assert 0 <= i < len(strs), "string index %d out of range" % i
        return strs[i]

    measure = "wall" if meta.get("mode") == "wall" else "cpu"
    st = [(s(one(v, "type")), s(one(v, "unit"))) for v in prof["sample_type"]]
    assert st == [("samples", "count"), (measure, "nanoseconds")], "sample_type %r" % st
    pt = prof["period_type"][0]
    assert (s(one(pt, "type")), s(one(pt, "unit"))) == (measure, "nanoseconds")
    period = one(prof, "period")
    assert abs(period - 1e9 / meta["rate_hz"]) <= 1, "period %d" % period
    assert one(prof, "time_nanos") == meta["start_unix"] * 10**9
    funcs = {one(f, "id"): f for f in prof["function"]}
    assert len(funcs) == len(prof["function"]) and 0 not in funcs, "function ids not unique and nonzero"
    for f in funcs.values():
        s(one(f, "name")), s(one(f, "system_name")), s(one(f, "filename"))
    locs = {one(l, "id"): l for l in prof["location"]}
    assert len(locs) == len(prof["location"]) and 0 not in locs, "location ids not unique and nonzero"
    pairs = set()
    for l in locs.values():
        assert len(l["line"]) == 1, "location with %d lines" % len(l["line"])
        fid = one(l["line"][0], "function_id")
        assert fid in funcs, "location names function %d" % fid
        pairs.add((fid, one(l["line"][0], "line")))
    assert len(pairs) == len(locs), "two locations for one (function, line)"
    total = 0
    tids = collections.Counter()
    for smp in prof["sample"]:
        ids = smp["location_id"]
        assert ids and all(i in locs for i in ids), "sample names a missing location"
        vals = smp["value"]
        assert len(vals) == 2 and vals[0] > 0 and vals[1] == vals[0] * period, "values %r" % vals
        total += vals[0]
        labels = {}
        for lab in smp["label"]:
            labels[s(one(lab, "key"))] = s(one(lab, "str")) if "str" in lab else one(lab, "num")
        assert set(labels) == {"thread", "thread_id", "pid", "process"}, "labels %r" % sorted(labels)
        assert labels["thread"] and labels["process"], "empty thread or process label"
        tids[labels["thread_id"]] += vals[0]
    assert total == fold.total(), "pprof has %d samples, folded %d" % (total, fold.total())
    assert tids == folded_threads(fold), "per-thread samples differ: %r" % dict(tids)
    assert len(prof["sample"]) >= len([1 for _, n in fold.stacks if n]), "fewer samples than folded lines"
    # every (function, line) of the folded frames is a location
    def clean(x):  # as the folded writer does
        return "".join(":" if c == ";" else "?" if ord(c) < 0x20 or c == "\x7f" else c for c in x)

    named = {(clean(s(one(f, "name"))), clean(s(one(f, "filename"))), one(l["line"][0], "line"))
             for l in locs.values() for f in [funcs[one(l["line"][0], "function_id")]]}
    for frames, n in fold.stacks:
        if not n:
            continue  # wall mode: an off-CPU stack that never got weight (pprof skips it)
        for fr in frames[2:]:
            m = tb.FRAME_RE.match(fr)
            if m and fr.isascii():
                key = (m.group("name"), m.group("file"), int(m.group("line")))
                assert key in named, "no location for %s" % fr
    return "%d samples, %d locations, %d functions, %d threads" % (
        len(prof["sample"]), len(locs), len(funcs), len(tids))


# ---- render -----------------------------------------------------------------

def test_render_folded(capture):
    out = path(".rendered.folded")
    r = tb.run(["render", path(".tbp"), "-q", "-o", out])
    assert r.returncode == 0, "render exit %d: %s" % (r.returncode, r.stderr.strip())
    a = open(path(".folded"), "rb").read()
    b = open(out, "rb").read()
    assert a == b, "rendered folded differs from the one written %s" % (
        "by render" if capture else "at capture time")
    return "%d bytes identical" % len(a)


def test_render_recapture():
    out = path(".again.tbp")
    r = tb.run(["render", path(".tbp"), "-q", "-o", out])
    assert r.returncode == 0, r.stderr.strip()
    assert open(out, "rb").read() == open(path(".tbp"), "rb").read(), "capture of the capture differs"


def test_render_refuses_damage():
    data = open(path(".tbp"), "rb").read()
    cases = {"truncated": data[: len(data) // 2], "bad-magic": b"XX" + data[2:],
             "future": data[:8] + b"\x09\x00" + data[10:], "empty": b""}
    for name, blob in cases.items():
        src = os.path.join(TMP, name + ".tbp")
        dst = os.path.join(TMP, name + ".folded")
        open(src, "wb").write(blob)
        r = tb.run(["render", src, "-o", dst])
        assert r.returncode == 1, "%s: exit %d" % (name, r.returncode)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tachyon-bpf: render: %s: " % src), \
            "%s: stderr %r" % (name, r.stderr)
        assert not os.path.exists(dst), "%s: output written" % name
        assert not [f for f in os.listdir(TMP) if ".tmp." in f], "temporary file left"
    return "%d damaged captures refused" % len(cases)


def main():
    capture = sys.argv[1] if len(sys.argv) > 1 else None
    if capture:
        os.environ["TB_CAPTURE"] = capture
    check("exports: produce files", make_files, capture)
    if results["failed"]:
        print("%d passed, %d failed" % (results["passed"], results["failed"]))
        return 1
    check("exports: speedscope structure", test_speedscope)
    check("exports: pprof decodes with protoc", test_pprof)
    check("exports: render .tbp -> .folded", test_render_folded, capture)
    check("exports: render .tbp -> .tbp", test_render_recapture)
    check("exports: render refuses damage", test_render_refuses_damage)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    if not results["failed"] and not os.environ.get("TB_KEEP"):
        shutil.rmtree(TMP, ignore_errors=True)
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
