"""exports.py: the export formats end to end, one runner.

    python3 tests/integration/exports.py [CAPTURE.tbp]

Capture: tests/workloads/threads.py (3 worker threads burning CPU in
alpha_work / beta_work / gamma_work -> burn) profiled once (root) writing
every format `tachyon-bpf render --list-formats` prints (the format table:
a new format is written and compared here without a change); with CAPTURE,
those files are rendered from it instead and the checks that need the
workload's threads are left out.  Then, in sections:

  speedscope   the file format (https://www.speedscope.app/file-format-schema.json),
               one profile per thread, samples agreeing with the folded file;
  pprof        decoded by `protoc --decode=perftools.profiles.Profile` (apt:
               protobuf-compiler) with tests/integration/profile.proto: sample,
               location and function tables consistent, thread labels present;
  gecko        the Firefox Profiler processed format (meta, categories, marker
               schema, every thread's samples / stack / frame / func / resource /
               marker tables and every index into them and into the shared
               string array), one thread per OS thread with the samples of the
               tree JSON; off-CPU markers of sleeper.py in wall mode;
  jsonl        line by line: definitions before use, counts adding up to the
               meta's Python samples, per thread as the tree JSON;
  txt          the table: burn and the three workers, sane percentages and
               times, agreeing with the JSONL stacks;
  render       every format rendered from the capture is byte for byte the
               file written with it (the heatmaps but for their source texts,
               which capture files do not hold); the capture of the capture is the same
               file; --sort / --limit; damaged captures refused with one line
               and no file (and no temporary file) left.

Prints one line per check, then "N passed, N failed"; exits non-zero on any
failure."""
import base64
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
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tb  # noqa: E402

PYTHON = "/usr/bin/python3.11"
RATE = 499
results = tb.results
check = tb.check
TMP = tempfile.mkdtemp(prefix="tb-exports-")
PROTO = os.path.join(HERE, "profile.proto")
SCHEMA = "https://www.speedscope.app/file-format-schema.json"
UNITS = {"none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"}
THREAD_RE = re.compile(r"^(?P<name>.*) \(tid (?P<tid>\d+)\)$")
SS_NAME_RE = re.compile(r"^(?P<name>.*) \(tid (?P<tid>\d+), pid (?P<pid>\d+)\)$")
COLORS = {"transparent", "purple", "green", "orange", "yellow", "lightblue", "blue", "brown",
          "magenta", "red", "lightred", "darkgrey", "grey"}
LABEL_RE = re.compile(r"^(?P<name>.*) \(tid (?P<tid>\d+)\)$")
ROW_RE = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)\s+([\d.]+)  (.*)$")
FUNC_RE = re.compile(r"^(?P<name>.*) \((?P<file>.*):(?P<line>-?\d+)\)$")
# a native or kernel function: "name [module]" (do_syscall_64 [kernel], deflate_slow [libz.so.1])
KIND_FUNC_RE = re.compile(r"^(?P<name>.*) (?P<file>\[[^\]]*\])$")
# an asyncio task (--async-aware): "<task NAME>" alone (its file is "<task>")
TASK_FUNC_RE = re.compile(r"^(?P<name><task .*>)$")
SYNTHETIC_OFF = {"<off-CPU>", "<waiting for GIL>"}
MAX_OUTPUTS = 16  # -o options a capture takes

# what the sections share: the format list, the workload's threads, the tree JSON
STATE = {}


def path(name):
    return os.path.join(TMP, name)


def need(cond, msg):
    if not cond:
        raise AssertionError(msg)


def load(name):
    with open(path(name), encoding="utf-8") as f:
        return json.load(f)


def load_tree(name):
    """A tree JSON as version 1 (scripts/tree_json.py)."""
    return tb.tree_json.load(path(name))


def folded_threads(fold):
    """{tid: samples} from the thread frames of a folded file."""
    out = collections.Counter()
    for frames, n in fold.stacks:
        m = THREAD_RE.match(frames[1]) if len(frames) > 1 else None
        assert m, "no thread frame in %r" % frames[:2]
        out[int(m.group("tid"))] += n
    return out


# ---- capture ------------------------------------------------------------------

def list_formats():
    r = tb.run(["render", "--list-formats"])
    exts = r.stdout.split()
    need(r.returncode == 0 and exts and all(e.startswith(".") for e in exts),
         "render --list-formats: rc %d, %r" % (r.returncode, r.stdout[:200]))
    need(".tbp" in exts and len(exts) <= MAX_OUTPUTS, "formats %s" % exts)
    STATE["formats"] = exts
    return " ".join(exts)


def capture_threads(capture):
    exts = STATE["formats"]
    if capture:
        shutil.copy(capture, path("x.tbp"))
        args = ["render", path("x.tbp"), "-q"]
        for e in exts:
            if e != ".tbp":
                args += ["-o", path("x" + e)]
        r = tb.run(args)
        need(r.returncode == 0, "render rc %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
        how = "rendered from %s" % capture
    else:
        args = ["-q", "-r", str(RATE)]
        for e in exts:
            args += ["-o", path("x" + e)]
        r = tb.run(args + ["--", PYTHON, tb.workload("threads.py"), "2"])
        need(r.returncode == 0, "rc %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
        workers = {}
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0].isdigit():
                workers[int(parts[0])] = parts[1]
        need(sorted(workers.values()) == ["alpha", "beta", "gamma"], "workload printed %r" % r.stdout)
        STATE["workers"] = workers
        how = "captured threads.py, workers %s" % sorted(workers.values())
    STATE["tree"] = load_tree("x.json")
    if not capture:  # (a given capture may be empty)
        for e in exts:
            need(os.path.getsize(path("x" + e)) > 0, "x%s is empty" % e)
        need(STATE["tree"]["meta"]["rate_hz"] == RATE, "rate %r" % STATE["tree"]["meta"]["rate_hz"])
    return "%s: %d formats, %d Python samples" % (how, len(exts), STATE["tree"]["meta"]["python_samples"])


def capture_wall():
    r = tb.run(["-q", "-r", str(RATE), "--mode", "wall", "-o", path("w.gecko.json"),
                "-o", path("w.json"), "--", PYTHON, tb.workload("sleeper.py"), "1.5"])
    need(r.returncode == 0, "rc %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    STATE["wall_tree"] = load_tree("w.json")
    return "%d Python samples, %d off-CPU" % (STATE["wall_tree"]["meta"]["python_samples"],
                                               STATE["wall_tree"]["meta"]["off_cpu_samples"])


# ---- speedscope -------------------------------------------------------------

def test_speedscope():
    doc = json.load(open(path("x.speedscope.json"), encoding="utf-8"))
    meta = load_tree("x.json")["meta"]
    fold = tb.Folded(path("x.folded"))
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
    raw = gzip.open(path("x.pb.gz")).read()
    r = subprocess.run(["protoc", "--decode=perftools.profiles.Profile", "-I", HERE, PROTO],
                       input=raw, capture_output=True, timeout=60)
    assert r.returncode == 0, "protoc: %s" % r.stderr.decode(errors="replace").strip()
    prof = parse_text(r.stdout.decode("utf-8", errors="replace"))
    meta = load_tree("x.json")["meta"]
    fold = tb.Folded(path("x.folded"))
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


# ---- gecko ------------------------------------------------------------------

def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def table(t, name, cols):
    """A struct-of-arrays table: every column there and as long as length."""
    need(isinstance(t, dict), name + " missing")
    n = t.get("length")
    need(is_int(n) and n >= 0, name + ".length")
    for c in cols:
        need(isinstance(t.get(c), list), "%s.%s missing" % (name, c))
        need(len(t[c]) == n, "%s.%s has %d entries, length %d" % (name, c, len(t[c]), n))
    return n


def index(v, n, what, nullable=False):
    if v is None and nullable:
        return
    need(is_int(v) and 0 <= v < n, "%s: %r out of range [0, %d)" % (what, v, n))


def validate_gecko(g):
    """The processed profile format (preprocessedProfileVersion 57): raises
    on the first inconsistency, returns {tid: (thread, per-thread info)}."""
    meta = g.get("meta")
    need(isinstance(meta, dict), "meta")
    need(is_int(meta.get("version")) and meta["version"] >= 1, "meta.version")
    need(meta.get("preprocessedProfileVersion") == 57, "meta.preprocessedProfileVersion")
    need(isinstance(meta.get("interval"), (int, float)) and meta["interval"] > 0, "meta.interval")
    need(isinstance(meta.get("startTime"), (int, float)), "meta.startTime")
    need(is_int(meta.get("processType")) and meta.get("stackwalk") in (0, 1), "meta.processType/stackwalk")
    need(isinstance(meta.get("product"), str), "meta.product")
    cats = meta.get("categories")
    need(isinstance(cats, list) and cats, "meta.categories")
    for c in cats:
        need(isinstance(c.get("name"), str) and c.get("color") in COLORS, "category %r" % c)
        need(isinstance(c.get("subcategories"), list) and c["subcategories"][:1] == ["Other"],
             "category %r subcategories" % c.get("name"))
    need(any(c["color"] == "grey" for c in cats), "no grey (default) category")
    names = [c["name"] for c in cats]
    for want in ("Python", "GC", "GIL", "Off-CPU"):
        need(want in names, "category %s missing" % want)
    schemas = meta.get("markerSchema")
    need(isinstance(schemas, list), "meta.markerSchema")
    schema_names = set()
    for s in schemas:
        need(isinstance(s.get("name"), str) and isinstance(s.get("display"), list) and
             isinstance(s.get("fields"), list), "marker schema %r" % s)
        for fld in s["fields"]:
            need(isinstance(fld.get("key"), str) and isinstance(fld.get("format"), str), "schema field")
        schema_names.add(s["name"])
    need(isinstance(g.get("libs"), list), "libs")
    strings = g.get("shared", {}).get("stringArray")
    need(isinstance(strings, list) and all(isinstance(s, str) for s in strings), "shared.stringArray")
    ns = len(strings)
    threads = g.get("threads")
    need(isinstance(threads, list) and threads, "threads")
    out = {}
    for th in threads:
        label = th.get("name")
        m = LABEL_RE.match(label or "")
        need(m, "thread name %r" % label)
        tid = th.get("tid")
        need(is_int(tid) and int(m.group("tid")) == tid, "thread tid %r vs %r" % (tid, label))
        need(tid not in out, "thread %d twice" % tid)
        need(isinstance(th.get("pid"), str) and th["pid"].isdigit(), "thread pid (a string)")
        need(isinstance(th.get("isMainThread"), bool), "isMainThread")
        need(isinstance(th.get("processType"), str), "processType")
        for k in ("processStartupTime", "registerTime"):
            need(isinstance(th.get(k), (int, float)), k)
        need(isinstance(th.get("pausedRanges"), list), "pausedRanges")
        st = th["stackTable"]
        nst = table(st, "stackTable", ["frame", "prefix"])
        fr = th["frameTable"]
        nfr = table(fr, "frameTable", ["address", "inlineDepth", "category", "subcategory", "func",
                                       "nativeSymbol", "innerWindowID", "line", "column"])
        fn = th["funcTable"]
        nfn = table(fn, "funcTable", ["name", "isJS", "relevantForJS", "resource", "fileName",
                                      "lineNumber", "columnNumber"])
        rs = th["resourceTable"]
        nrs = table(rs, "resourceTable", ["lib", "name", "host", "type"])
        need(table(th["nativeSymbols"], "nativeSymbols",
                   ["libIndex", "address", "name", "functionSize"]) == 0, "native symbols")
        for i in range(nst):
            index(st["frame"][i], nfr, "stackTable.frame")
            p = st["prefix"][i]
            need(p is None or (is_int(p) and 0 <= p < i), "stackTable.prefix[%d] = %r" % (i, p))
        for i in range(nfr):
            index(fr["func"][i], nfn, "frameTable.func")
            c = fr["category"][i]
            index(c, len(cats), "frameTable.category", nullable=True)
            if c is not None:
                index(fr["subcategory"][i], len(cats[c]["subcategories"]), "frameTable.subcategory")
            need(fr["line"][i] is None or is_int(fr["line"][i]), "frameTable.line")
            need(fr["address"][i] == -1 and fr["inlineDepth"][i] == 0, "address/inlineDepth")
        for i in range(nfn):
            index(fn["name"][i], ns, "funcTable.name")
            index(fn["fileName"][i], ns, "funcTable.fileName", nullable=True)
            need(fn["resource"][i] == -1 or (is_int(fn["resource"][i]) and 0 <= fn["resource"][i] < nrs),
                 "funcTable.resource")
            need(isinstance(fn["isJS"][i], bool) and isinstance(fn["relevantForJS"][i], bool), "isJS")
            need(fn["lineNumber"][i] is None or is_int(fn["lineNumber"][i]), "funcTable.lineNumber")
        for i in range(nrs):
            index(rs["name"][i], ns, "resourceTable.name")
            need(is_int(rs["type"][i]), "resourceTable.type")
        sm = th["samples"]
        need(sm.get("weightType") == "samples", "samples.weightType")
        cols = ["stack", "time"] + (["weight"] if sm.get("weight") is not None else [])
        nsm = table(sm, "samples", cols)
        for s in sm["stack"]:
            index(s, nst, "samples.stack", nullable=True)
        times = sm["time"]
        need(all(isinstance(t, (int, float)) for t in times), "samples.time numbers")
        need(all(times[i] <= times[i + 1] for i in range(nsm - 1)), "samples.time not sorted")
        mk = th["markers"]
        nmk = table(mk, "markers", ["data", "name", "startTime", "endTime", "phase", "category"])
        for i in range(nmk):
            index(mk["name"][i], ns, "markers.name")
            index(mk["category"][i], len(cats), "markers.category")
            need(mk["phase"][i] in (0, 1, 2, 3), "markers.phase")
            if mk["phase"][i] == 1:
                need(mk["startTime"][i] <= mk["endTime"][i], "interval marker ends before it starts")
            d = mk["data"][i]
            need(d is None or d.get("type") in schema_names, "marker data type %r has no schema" % d)
        out[tid] = th
    return out


def func_names(g, th):
    s = g["shared"]["stringArray"]
    return [s[i] for i in th["funcTable"]["name"]]


def sample_leaf_funcs(g, th):
    """Counter of leaf function names over the thread's samples."""
    s = g["shared"]["stringArray"]
    st, fr, fn = th["stackTable"], th["frameTable"], th["funcTable"]
    c = collections.Counter()
    for x in th["samples"]["stack"]:
        c[s[fn["name"][fr["func"][st["frame"][x]]]]] += 1
    return c


def check_gecko():
    g = load("x.gecko.json")
    threads = validate_gecko(g)
    tree = STATE["tree"]
    need(abs(g["meta"]["interval"] - 1000.0 / tree["meta"]["rate_hz"]) < 1e-3, "interval %r" % g["meta"]["interval"])
    need(abs(g["meta"]["startTime"] / 1000 - tree["meta"]["start_unix"]) < 2, "startTime")
    need(set(threads) == {int(t) for t in tree["threads"]},
         "threads %s vs tree %s" % (sorted(threads), sorted(tree["threads"])))
    for tid, th in threads.items():
        want = tree["threads"][str(tid)]["python_samples"]
        need(th["samples"]["length"] == want,
             "tid %d: %d samples, tree JSON says %d" % (tid, th["samples"]["length"], want))
        need(th["pid"] == str(tree["threads"][str(tid)]["pid"]), "tid %d pid" % tid)
        want_name = "%s (tid %d)" % (tree["threads"][str(tid)]["name"], tid)
        need(th["name"] == want_name, "thread name %r, tree JSON says %r" % (th["name"], want_name))
    total = sum(th["samples"]["length"] for th in threads.values())
    need(total == tree["meta"]["python_samples"], "samples %d vs %d" % (total, tree["meta"]["python_samples"]))
    for tid, name in STATE.get("workers", {}).items():
        need(tid in threads, "worker %s (tid %d) missing" % (name, tid))
        funcs = func_names(g, threads[tid])
        need(name + "_work" in funcs and "burn" in funcs, "tid %d functions %s" % (tid, funcs))
        others = {"alpha", "beta", "gamma"} - {name}
        need(not any(o + "_work" in funcs for o in others), "tid %d has another worker's function" % tid)
        leaves = sample_leaf_funcs(g, threads[tid])
        need(leaves["burn"] >= 0.5 * threads[tid]["samples"]["length"], "tid %d leaves %s" % (tid, leaves))
    return "%d threads, %d samples, %d strings" % (len(threads), total, len(g["shared"]["stringArray"]))


def check_gecko_wall():
    g = load("w.gecko.json")
    threads = validate_gecko(g)
    tree = STATE["wall_tree"]
    s = g["shared"]["stringArray"]
    sleeper = [t for t, v in tree["threads"].items() if v["name"] == "sleeper" or
               "sleeper" in func_names(g, threads[int(t)])]
    need(sleeper, "no sleeper thread")
    found = 0
    for tid, th in threads.items():
        need(th["samples"]["length"] == tree["threads"][str(tid)]["python_samples"], "tid %d samples" % tid)
        mk = th["markers"]
        per = collections.Counter()
        for i in range(mk["length"]):
            if mk["data"][i] and "samples" in mk["data"][i] and mk["data"][i]["type"] == "TachyonState":
                per[s[mk["name"][i]]] += mk["data"][i]["samples"]
                got = round((mk["endTime"][i] - mk["startTime"][i]) / g["meta"]["interval"])
                if "timeline" in tree:  # real times: a run lasts as long as it did
                    need(mk["endTime"][i] > mk["startTime"][i], "marker of %d samples ends before it starts" %
                         mk["data"][i]["samples"])
                else:                   # synthesized: one interval per sample
                    need(got == mk["data"][i]["samples"], "marker duration %d vs %d samples" %
                         (got, mk["data"][i]["samples"]))
        leaves = sample_leaf_funcs(g, th)
        off = sum(n for f, n in leaves.items() if f in SYNTHETIC_OFF)
        need(per["Off CPU"] == off, "tid %d: Off CPU markers %d, off-CPU leaves %d" % (tid, per["Off CPU"], off))
        need(per["On CPU"] + per["Off CPU"] == th["samples"]["length"], "tid %d On+Off" % tid)
        need(off == tree["threads"][str(tid)]["status"]["off_cpu"],
             "tid %d: off-CPU %d, status says %d" % (tid, off, tree["threads"][str(tid)]["status"]["off_cpu"]))
        if str(tid) in sleeper:
            found = 1
            need(off > 0.5 * th["samples"]["length"], "sleeper off-CPU %d of %d" % (off, th["samples"]["length"]))
            n_off = sum(1 for i in range(mk["length"]) if s[mk["name"][i]] == "Off CPU")
            need(n_off >= 2, "sleeper: %d Off CPU markers" % n_off)
    need(found, "sleeper thread not in gecko file")
    return "sleeper off-CPU markers ok"


# ---- jsonl ------------------------------------------------------------------

def parse_jsonl(name):
    strs, frames, threads = {}, {}, {}
    stacks, aggs = [], {}
    meta = end = None
    with open(path(name), encoding="utf-8") as f:
        lines = f.read().split("\n")
    need(lines[-1] == "", "no final newline")
    lines = lines[:-1]
    for n, line in enumerate(lines):
        need(line.startswith('{"type":"') and line.endswith("}"), "line %d: %r" % (n, line[:80]))
        o = json.loads(line)
        t = o["type"]
        need(end is None, "line after end")
        if n == 0:
            need(t == "meta", "first line is %s" % t)
            meta = o
            continue
        if t == "str":
            need(o["id"] == len(strs) and isinstance(o["s"], str), "str id %r" % o["id"])
            strs[o["id"]] = o["s"]
        elif t == "process":
            need(is_int(o["pid"]), "process pid")
        elif t == "thread":
            need(o["name"] in strs, "thread name %r not defined yet" % o["name"])
            threads[o["tid"]] = o
        elif t == "frame":
            need(o["id"] == len(frames), "frame id %r" % o["id"])
            need(o["name"] in strs and o["file"] in strs, "frame strings not defined yet")
            need(o["line"] is None or is_int(o["line"]), "frame line")
            need(o.get("kind", "python") in ("python", "native", "kernel", "task"), "frame kind %r" % o.get("kind"))
            file = strs[o["file"]]
            if o.get("kind") == "native":      # as the table shows it: [library file name]
                file = "[%s]" % file.rsplit("/", 1)[-1]
            frames[o["id"]] = (strs[o["name"]], file, o["first_line"], o["line"])
        elif t == "stack":
            need(o["id"] == len(stacks), "stack id")
            need(o["thread"] in threads, "stack thread %r not defined yet" % o["thread"])
            need(o["frames"] and all(x in frames for x in o["frames"]), "stack frames not defined yet")
            need(is_int(o["count"]) and o["count"] > 0, "stack count")
            if "opcode" in o:
                need(o["opcode"] in strs, "opcode string not defined yet")
            stacks.append(o)
        elif t == "agg":
            need(o["frame"] in frames and o["self"] <= o["total"], "agg %r" % o)
            aggs[o["frame"]] = o
        elif t == "end":
            end = o
        else:
            raise AssertionError("unknown type %r" % t)
    need(end is not None, "no end line")
    return meta, strs, frames, threads, stacks, aggs, end


def check_jsonl():
    meta, strs, frames, threads, stacks, aggs, end = parse_jsonl("x.jsonl")
    tree = STATE["tree"]
    total = sum(s["count"] for s in stacks)
    need(total == meta["python_samples"] == end["samples"],
         "counts %d, meta %d, end %d" % (total, meta["python_samples"], end["samples"]))
    need(meta["python_samples"] == tree["meta"]["python_samples"], "meta vs tree JSON")
    need(meta["rate_hz"] == tree["meta"]["rate_hz"] and meta["mode"] == tree["meta"]["mode"], "meta rate/mode")
    need(end["stacks"] == len(stacks) and end["frames"] == len(frames) and end["strings"] == len(strs), "end")
    need(set(aggs) == set(frames), "agg lines for every frame")
    need(sum(a["self"] for a in aggs.values()) == total, "agg self sum")
    per = collections.Counter()
    for s in stacks:
        per[s["thread"]] += s["count"]
    for tid, n in per.items():
        need(n == tree["threads"][str(tid)]["python_samples"], "tid %d: %d vs tree" % (tid, n))
    for tid, name in STATE.get("workers", {}).items():
        leaf = collections.Counter(frames[s["frames"][-1]][0] for s in stacks if s["thread"] == tid)
        need(leaf["burn"] > 0, "tid %d: no burn leaf" % tid)
        roots = {frames[x][0] for s in stacks if s["thread"] == tid for x in s["frames"]}
        need(name + "_work" in roots, "tid %d: no %s_work" % (tid, name))
    STATE["jsonl"] = (frames, stacks)
    return "%d lines of stacks, %d frames, %d strings, %d samples" % (len(stacks), len(frames), len(strs), total)


# ---- text table -------------------------------------------------------------

def parse_txt(name):
    with open(path(name), encoding="utf-8") as f:
        lines = f.read().splitlines()
    need(lines and lines[0].startswith("tachyon-bpf profile: "), "header %r" % lines[:1])
    head = None
    for i, line in enumerate(lines):
        if line.rstrip().endswith("function (file:line)"):
            head = i
            break
    need(head is not None, "no column header")
    rows = []
    for line in lines[head + 1:]:
        if not line:
            break  # --async-aware: the task rows follow
        m = ROW_RE.match(line)
        need(m, "row %r" % line)
        fm = FUNC_RE.match(m.group(7)) or KIND_FUNC_RE.match(m.group(7))
        task = TASK_FUNC_RE.match(m.group(7)) if not fm else None
        need(fm or task, "function %r" % m.group(7))
        rows.append({"own": int(m.group(1)), "total": int(m.group(2)), "own_pct": float(m.group(3)),
                     "total_pct": float(m.group(4)), "own_ms": float(m.group(5)),
                     "total_ms": float(m.group(6)), "func": m.group(7),
                     "name": (fm or task).group("name"), "file": fm.group("file") if fm else "<task>",
                     "line": int((fm.groupdict().get("line") if fm else 0) or 0)})
    return lines[:head], rows


def name_key(r):
    return (r["name"].encode(), r["file"].encode(), r["line"])


def clean_text(x):
    """As the table writes a name: control characters as '?'."""
    return "".join("?" if ord(c) < 0x20 or c == "\x7f" else c for c in x)


def check_txt_workers(rows):
    """threads.py: burn under the three workers."""
    by = {r["name"]: r for r in rows if r["file"].endswith("threads.py")}
    for n in ("burn", "alpha_work", "beta_work", "gamma_work"):
        need(n in by, "%s missing" % n)
    burn = by["burn"]
    workers = sum(by[n]["total"] for n in ("alpha_work", "beta_work", "gamma_work"))
    need(burn["own"] >= 0.9 * burn["total"], "burn own %d total %d" % (burn["own"], burn["total"]))
    need(0.9 * workers <= burn["total"] <= workers, "burn total %d, workers %d" % (burn["total"], workers))
    need(burn["total_pct"] > 50, "burn only %.1f%%" % burn["total_pct"])
    for n in ("alpha_work", "beta_work", "gamma_work"):
        need(by[n]["own"] <= 0.1 * by[n]["total"] and by[n]["total"] > 0, "%s %r" % (n, by[n]))
    return "%d rows; burn %d total (%.1f%%), workers %d" % (len(rows), burn["total"], burn["total_pct"], workers)


def check_txt():
    header, rows = parse_txt("x.txt")
    tree = STATE["tree"]
    py = tree["meta"]["python_samples"]
    rate = tree["meta"]["rate_hz"]
    need("%d Python samples" % py in header[0], "header %r" % header[0])
    need("%d Hz" % rate in header[0], "header %r" % header[0])
    need("1 process" in header[0] or "workers" not in STATE, "header %r" % header[0])
    need(re.search(r"\d+\.\d+ s at", header[0]), "duration in header")
    need(any(line.startswith("process ") for line in header), "process line")
    for r in rows:
        need(r["own"] <= r["total"] <= py, "row %s" % r["func"])
        need(abs(r["own_pct"] - 100.0 * r["own"] / py) < 0.01, "own%% of %s" % r["func"])
        need(abs(r["total_pct"] - 100.0 * r["total"] / py) < 0.01, "total%% of %s" % r["func"])
        need(abs(r["own_ms"] - 1000.0 * r["own"] / rate) < 0.06, "own ms of %s" % r["func"])
        need(abs(r["total_ms"] - 1000.0 * r["total"] / rate) < 0.06, "total ms of %s" % r["func"])
    need(all((a["own"], a["total"]) >= (b["own"], b["total"]) for a, b in zip(rows, rows[1:])),
         "not sorted by own")
    summary = "%d rows" % len(rows)
    if "workers" in STATE:
        summary = check_txt_workers(rows)
    # the same numbers as the JSONL stacks, per function (names cleaned as the table does)
    frames, stacks = STATE["jsonl"]
    own, total = collections.Counter(), collections.Counter()
    for s in stacks:
        fs = [(clean_text(f[0]), clean_text(f[1])) + tuple(f[2:]) for f in (frames[x] for x in s["frames"])]
        own[fs[-1][:3]] += s["count"]
        for key in {f[:3] for f in fs}:
            total[key] += s["count"]
    # (wall mode: an off-CPU stack whose wait was shorter than a sample has no weight: the JSONL
    # leaves it out, the table lists its functions with 0 samples)
    rows = [r for r in rows if r["total"]]
    need(len(rows) == len(total), "%d rows, %d functions in the JSONL" % (len(rows), len(total)))
    for r in rows:
        key = (r["name"], r["file"], r["line"])
        need(own[key] == r["own"] and total[key] == r["total"], "%s: %d/%d vs JSONL %d/%d" %
             (r["func"], r["own"], r["total"], own[key], total[key]))
    return summary


# ---- render -----------------------------------------------------------------

def without_sources(data, ext):
    """A heatmap (page or data) without what only the capture itself has:
    the source texts (capture files do not hold them) and their pid."""
    shell = b""
    if ext.endswith(".html"):
        m = re.search(rb'id="tb-data">([A-Za-z0-9+/=]*)</script>', data)
        need(m, "no data in the %s page" % ext)
        shell = data[:m.start(1)] + data[m.end(1):]
        data = zlib.decompress(base64.b64decode(m.group(1)))
    doc = json.loads(data)
    for f in doc["files"]:
        for k in ("source", "missing", "pid"):
            f.pop(k, None)
    return shell, doc


def test_render_same(capture):
    """Every format rendered from the capture is the file written with it
    (the heatmaps but for their source texts)."""
    exts = [e for e in STATE["formats"] if e != ".tbp"]
    args = ["render", path("x.tbp"), "-q"]
    for e in exts:
        args += ["-o", path("r" + e)]
    r = tb.run(args)
    assert r.returncode == 0, "render exit %d: %s" % (r.returncode, r.stderr.strip())
    differ, heatmaps = [], 0
    for e in exts:
        a, b = open(path("x" + e), "rb").read(), open(path("r" + e), "rb").read()
        if a != b and e.startswith(".heatmap."):
            a, b = without_sources(a, e), without_sources(b, e)
            heatmaps += 1
        if a != b:
            differ.append(e)
    assert not differ, "rendered %s differ from the ones written %s" % (
        " ".join(differ), "by render" if capture else "at capture time")
    return "%d formats identical (%d heatmaps without sources)" % (len(exts), heatmaps)


def test_render_recapture():
    out = path("x.again.tbp")
    r = tb.run(["render", path("x.tbp"), "-q", "-o", out])
    assert r.returncode == 0, r.stderr.strip()
    assert open(out, "rb").read() == open(path("x.tbp"), "rb").read(), "capture of the capture differs"


def test_json_versions():
    return "; ".join(tb.same_versions(path("x.tbp"), extra)
                     for extra in ([], ["--by-line", "--min-fraction", "0"]))


def test_render_refuses_damage():
    data = open(path("x.tbp"), "rb").read()
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


def render_capture(args):
    r = tb.run(["render", "-q", path("x.tbp")] + args)
    need(r.returncode == 0, "render rc %d: %s" % (r.returncode, r.stderr.strip()[-300:]))


def check_render():
    render_capture(["-o", path("r.gecko.json")])
    validate_gecko(load("r.gecko.json"))
    render_capture(["-o", path("n5.txt"), "--sort", "name", "--limit", "5"])
    head, rows = parse_txt("n5.txt")
    need(len(rows) == 5, "%d rows" % len(rows))
    need("sorted by function name" in "\n".join(head), "header says %r" % head)
    render_capture(["-o", path("nall.txt"), "--sort", "name"])
    _, allrows = parse_txt("nall.txt")
    need(len(allrows) > 5, "only %d functions" % len(allrows))
    need([name_key(r) for r in allrows] == sorted(name_key(r) for r in allrows), "not sorted by name")
    need([r["func"] for r in rows] == [r["func"] for r in allrows[:5]], "limit is not the first 5")
    render_capture(["-o", path("t20.txt"), "--sort", "total", "--limit", "20"])
    _, trows = parse_txt("t20.txt")
    need(len(trows) == min(20, len(allrows)), "%d rows" % len(trows))
    need(all(a["total"] >= b["total"] for a, b in zip(trows, trows[1:])), "not sorted by total")
    bad = tb.run(["render", "-q", path("x.tbp"), "-o", path("b.txt"), "--sort", "self"])
    need(bad.returncode == 2 and "--sort" in bad.stderr, "bad --sort: rc %d" % bad.returncode)
    return "5 rows by name: %s" % ", ".join(r["name"] for r in rows)


def main():
    capture = sys.argv[1] if len(sys.argv) > 1 else None
    if capture:
        os.environ["TB_CAPTURE"] = capture
    elif os.geteuid() != 0 or not os.path.exists(PYTHON):
        print("needs root and %s (or give a CAPTURE.tbp)" % PYTHON)
        print("0 passed, 1 failed")
        return 1
    check("formats: render --list-formats", list_formats)
    if "formats" in STATE:
        check("capture: threads.py, every format" if not capture else "capture: render every format",
              capture_threads, capture)
    if "tree" in STATE:
        check("speedscope: structure", test_speedscope)
        check("pprof: decodes with protoc", test_pprof)
        check("gecko: format and threads", check_gecko)
        check("jsonl: line by line", check_jsonl)
        if "jsonl" in STATE:
            check("txt: table", check_txt)
        check("render: every format as written", test_render_same, capture)
        check("render: .tbp -> .tbp", test_render_recapture)
        check("render: tree JSON version 2 = version 1", test_json_versions)
        if not capture:  # (needs more than 5 functions)
            check("render: .txt --sort/--limit", check_render)
        check("render: refuses damage", test_render_refuses_damage)
    if not capture:
        check("capture: sleeper.py --mode wall", capture_wall)
        if "wall_tree" in STATE:
            check("gecko: wall-mode markers", check_gecko_wall)
    if results["failed"] == 0 and not os.environ.get("TB_KEEP"):
        shutil.rmtree(TMP, ignore_errors=True)
    else:
        print("outputs kept in %s" % TMP)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 0 if results["failed"] == 0 and results["passed"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
