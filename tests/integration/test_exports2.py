"""The remaining exports, end to end: Firefox Profiler (.gecko.json), JSON
Lines (.jsonl) and the pstats-style table (.txt).

    python3 tests/integration/test_exports2.py

Needs root (it captures).  Profiles tests/workloads/threads.py (3 worker
threads burning CPU in alpha_work / beta_work / gamma_work -> burn) writing
x.gecko.json, x.jsonl, x.txt, x.json and x.tbp from one capture, and
tests/workloads/sleeper.py in wall mode.  Checks: the gecko file against the
Firefox Profiler processed format (meta, categories, marker schema, every
thread's samples / stack / frame / func / resource / marker tables and every
index into them and into the shared string array), one thread per OS
thread with the samples of the tree JSON; off-CPU markers in wall mode; the
JSONL file line by line (definitions before use, counts adding up to the
meta's Python samples); the text table (burn and the three workers, sane
percentages and times, agreeing with the JSONL stacks); and `render` of the
capture (--sort / --limit).  Prints one line per check, then
"N passed, N failed"; exits non-zero on any failure."""
import collections
import json
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tb  # noqa: E402

PYTHON = "/usr/bin/python3.11"
RATE = 499
results = tb.results
TMP = tempfile.mkdtemp(prefix="tb-exports2-")
COLORS = {"transparent", "purple", "green", "orange", "yellow", "lightblue", "blue", "brown",
          "magenta", "red", "lightred", "darkgrey", "grey"}
LABEL_RE = re.compile(r"^(?P<name>.*) \(tid (?P<tid>\d+)\)$")
ROW_RE = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)\s+([\d.]+)  (.*)$")
FUNC_RE = re.compile(r"^(?P<name>.*) \((?P<file>.*):(?P<line>-?\d+)\)$")
SYNTHETIC_OFF = {"<off-CPU>", "<waiting for GIL>"}


check = tb.check


def path(name):
    return os.path.join(TMP, name)


def need(cond, msg):
    if not cond:
        raise AssertionError(msg)


def load(name):
    with open(path(name), encoding="utf-8") as f:
        return json.load(f)


# ---- captures ---------------------------------------------------------------

STATE = {}


def capture_threads():
    outs = ["x.gecko.json", "x.jsonl", "x.txt", "x.json", "x.tbp"]
    args = ["-q", "-r", str(RATE)]
    for o in outs:
        args += ["-o", path(o)]
    r = tb.run(args + ["--", PYTHON, tb.workload("threads.py"), "2"])
    need(r.returncode == 0, "rc %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    workers = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit():
            workers[int(parts[0])] = parts[1]
    need(sorted(workers.values()) == ["alpha", "beta", "gamma"], "workload printed %r" % r.stdout)
    for o in outs:
        need(os.path.getsize(path(o)) > 0, o + " empty")
    STATE["workers"] = workers
    STATE["tree"] = load("x.json")
    return "workers %s, %d Python samples" % (
        sorted(workers), STATE["tree"]["meta"]["python_samples"])


def capture_wall():
    r = tb.run(["-q", "-r", str(RATE), "--mode", "wall", "-o", path("w.gecko.json"),
                "-o", path("w.json"), "--", PYTHON, tb.workload("sleeper.py"), "1.5"])
    need(r.returncode == 0, "rc %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    STATE["wall_tree"] = load("w.json")
    return "%d Python samples, %d off-CPU" % (STATE["wall_tree"]["meta"]["python_samples"],
                                               STATE["wall_tree"]["meta"]["off_cpu_samples"])


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
    need(abs(g["meta"]["interval"] - 1000.0 / RATE) < 1e-3, "interval %r" % g["meta"]["interval"])
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
    for tid, name in STATE["workers"].items():
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
            frames[o["id"]] = (strs[o["name"]], strs[o["file"]], o["first_line"], o["line"])
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
    need(meta["rate_hz"] == RATE and meta["mode"] == "cpu", "meta rate/mode")
    need(end["stacks"] == len(stacks) and end["frames"] == len(frames) and end["strings"] == len(strs), "end")
    need(set(aggs) == set(frames), "agg lines for every frame")
    need(sum(a["self"] for a in aggs.values()) == total, "agg self sum")
    per = collections.Counter()
    for s in stacks:
        per[s["thread"]] += s["count"]
    for tid, n in per.items():
        need(n == tree["threads"][str(tid)]["python_samples"], "tid %d: %d vs tree" % (tid, n))
    for tid, name in STATE["workers"].items():
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
        m = ROW_RE.match(line)
        need(m, "row %r" % line)
        fm = FUNC_RE.match(m.group(7))
        need(fm, "function %r" % m.group(7))
        rows.append({"own": int(m.group(1)), "total": int(m.group(2)), "own_pct": float(m.group(3)),
                     "total_pct": float(m.group(4)), "own_ms": float(m.group(5)),
                     "total_ms": float(m.group(6)), "func": m.group(7), "name": fm.group("name"),
                     "file": fm.group("file"), "line": int(fm.group("line"))})
    return lines[:head], rows


def name_key(r):
    return (r["name"].encode(), r["file"].encode(), r["line"])


def check_txt():
    header, rows = parse_txt("x.txt")
    tree = STATE["tree"]
    py = tree["meta"]["python_samples"]
    need("%d Python samples" % py in header[0], "header %r" % header[0])
    need("%d Hz" % RATE in header[0] and "1 process" in header[0], "header %r" % header[0])
    need(re.search(r"\d+\.\d+ s at", header[0]), "duration in header")
    need(any(line.startswith("process ") for line in header), "process line")
    for r in rows:
        need(r["own"] <= r["total"] <= py, "row %s" % r["func"])
        need(abs(r["own_pct"] - 100.0 * r["own"] / py) < 0.01, "own%% of %s" % r["func"])
        need(abs(r["total_pct"] - 100.0 * r["total"] / py) < 0.01, "total%% of %s" % r["func"])
        need(abs(r["own_ms"] - 1000.0 * r["own"] / RATE) < 0.06, "own ms of %s" % r["func"])
        need(abs(r["total_ms"] - 1000.0 * r["total"] / RATE) < 0.06, "total ms of %s" % r["func"])
    need(all((a["own"], a["total"]) >= (b["own"], b["total"]) for a, b in zip(rows, rows[1:])),
         "not sorted by own")
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
    # the same numbers as the JSONL stacks, per function
    frames, stacks = STATE["jsonl"]
    own, total = collections.Counter(), collections.Counter()
    for s in stacks:
        fs = [frames[x] for x in s["frames"]]
        own[fs[-1][:3]] += s["count"]
        for key in {f[:3] for f in fs}:
            total[key] += s["count"]
    need(len(rows) == len(total), "%d rows, %d functions in the JSONL" % (len(rows), len(total)))
    for r in rows:
        key = (r["name"], r["file"], r["line"])
        need(own[key] == r["own"] and total[key] == r["total"], "%s: %d/%d vs JSONL %d/%d" %
             (r["func"], r["own"], r["total"], own[key], total[key]))
    return "%d rows; burn %d total (%.1f%%), workers %d" % (len(rows), burn["total"], burn["total_pct"], workers)


def render(args):
    r = tb.run(["render", "-q", path("x.tbp")] + args)
    need(r.returncode == 0, "render rc %d: %s" % (r.returncode, r.stderr.strip()[-300:]))


def check_render():
    render(["-o", path("r.txt"), "-o", path("r.jsonl"), "-o", path("r.gecko.json")])
    with open(path("r.txt")) as a, open(path("x.txt")) as b:
        need(a.read() == b.read(), "render .txt differs from the capture's")
    with open(path("r.jsonl")) as a, open(path("x.jsonl")) as b:
        need(a.read() == b.read(), "render .jsonl differs from the capture's")
    validate_gecko(load("r.gecko.json"))
    render(["-o", path("n5.txt"), "--sort", "name", "--limit", "5"])
    head, rows = parse_txt("n5.txt")
    need(len(rows) == 5, "%d rows" % len(rows))
    need("sorted by function name" in "\n".join(head), "header says %r" % head)
    render(["-o", path("nall.txt"), "--sort", "name"])
    _, allrows = parse_txt("nall.txt")
    need(len(allrows) > 5, "only %d functions" % len(allrows))
    need([name_key(r) for r in allrows] == sorted(name_key(r) for r in allrows), "not sorted by name")
    need([r["func"] for r in rows] == [r["func"] for r in allrows[:5]], "limit is not the first 5")
    render(["-o", path("t20.txt"), "--sort", "total", "--limit", "20"])
    _, trows = parse_txt("t20.txt")
    need(len(trows) == min(20, len(allrows)), "%d rows" % len(trows))
    need(all(a["total"] >= b["total"] for a, b in zip(trows, trows[1:])), "not sorted by total")
    bad = tb.run(["render", "-q", path("x.tbp"), "-o", path("b.txt"), "--sort", "self"])
    need(bad.returncode == 2 and "--sort" in bad.stderr, "bad --sort: rc %d" % bad.returncode)
    return "5 rows by name: %s" % ", ".join(r["name"] for r in rows)


def main():
    if os.geteuid() != 0:
        print("needs root")
        print("0 passed, 1 failed")
        return 1
    if not os.path.exists(PYTHON):
        print("%s missing" % PYTHON)
        print("0 passed, 1 failed")
        return 1
    check("capture threads.py", capture_threads)
    if "tree" in STATE:
        check("gecko: format and threads", check_gecko)
        check("jsonl: line by line", check_jsonl)
        if "jsonl" in STATE:
            check("txt: table", check_txt)
        check("render: .txt --sort/--limit", check_render)
    check("capture sleeper.py --mode wall", capture_wall)
    if "wall_tree" in STATE:
        check("gecko: wall-mode markers", check_gecko_wall)
    if results["failed"] == 0:
        shutil.rmtree(TMP, ignore_errors=True)
    else:
        print("outputs kept in %s" % TMP)
    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    return 0 if results["failed"] == 0 and results["passed"] > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
