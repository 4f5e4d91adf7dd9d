#!/usr/bin/env python3
"""roundtrip.py: the tree JSON's two versions say the same (docs/profile-json.md).
Every capture of tests/golden/captures and tests/hostile/captures (kernel,
native, multi-thread, timelines, hostile names), rendered as it is, by line,
and (with a timeline) as a time slice: `render -o a.json --json-version 1`
and `render -o b.json` must give tree_json.load(b) == json.load(a), dumped to
the same text too; the page's embedded data likewise.  Then hostile
version-2 files: bad indices, a parent step pointing forward, counts past the
end of their column, non-integers, and a 100,000-deep chain, each refused with
one TreeJsonError (never another exception) or, the chain, loaded without
recursion.  Ends with "N passed, N failed".

    tests/golden/roundtrip.py [--bin PATH]"""
import base64
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import tree_json  # noqa: E402

CAPTURE_DIRS = [os.path.join(HERE, "captures"), os.path.join(ROOT, "tests", "hostile", "captures")]
VARIANTS = [("default", []), ("by-line", ["--by-line", "--min-fraction", "0"])]
SLICE = ("slice", ["--from", "0.5", "--to", "1.5"])
RESULTS = {"passed": 0, "failed": 0}


def result(name, ok, detail=""):
    RESULTS["passed" if ok else "failed"] += 1
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail) if detail else ""))


def page_data(path):
    m = re.search(rb'id="tb-data">([A-Za-z0-9+/=]*)</script>', open(path, "rb").read())
    return json.loads(zlib.decompress(base64.b64decode(m.group(1)))) if m else None


def first_difference(a, b, where="$"):
    """Where two parsed documents differ (iteratively: trees are deep)."""
    todo = [(a, b, where)]
    while todo:
        x, y, w = todo.pop()
        if type(x) is not type(y):
            return "%s: %r vs %r" % (w, x, y)
        if isinstance(x, dict):
            if list(x) != list(y):
                return "%s: keys %s vs %s" % (w, list(x), list(y))
            todo.extend((x[k], y[k], w + "." + k) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return "%s: %d vs %d entries" % (w, len(x), len(y))
            todo.extend((u, v, "%s[%d]" % (w, i)) for i, (u, v) in enumerate(zip(x, y)))
        elif x != y:
            return "%s: %r vs %r" % (w, x, y)
    return None


def same(v1, v2):
    """None when the version-1 document equals the version-2 one read as version 1."""
    got = tree_json.convert(v2)
    if got != v1:
        return first_difference(v1, got) or "not equal"
    if json.dumps(got, sort_keys=False) != json.dumps(v1, sort_keys=False):
        return "the same values, not the same text"
    return None


def compare(binary, capture, extra=()):
    """(None, what was compared) when the capture's two versions, file and page, say the same;
    (why not, None) otherwise.  Also used by the integration tests (tb.same_versions)."""
    with tempfile.TemporaryDirectory() as tmp:
        a, b, pa, pb = (os.path.join(tmp, x) for x in ("a.json", "b.json", "a.html", "b.html"))
        for outs, version in (((a, pa), ["--json-version", "1"]), ((b, pb), [])):
            r = subprocess.run([binary, "render", "-q", capture, "-o", outs[0], "-o", outs[1]] + list(extra) +
                               version, capture_output=True, text=True)
            if r.returncode:
                return "render exit %d: %s" % (r.returncode, r.stderr.strip()), None
        v1, v2 = json.load(open(a)), json.load(open(b))
        if v1.get("version") != 1 or v2.get("version") != 2:
            return "versions %r, %r" % (v1.get("version"), v2.get("version")), None
        why = same(v1, v2)
        if not why and tree_json.load(b) != v1:
            why = "tree_json.load differs from convert"
        if not why:
            why = same(page_data(pa), page_data(pb))
            why = why and "page: " + why
        if not why and page_data(pa) != v1:
            why = "the v1 page's data is not the v1 file"
        return why, "%d nodes, %d -> %d bytes" % (v2["nodes"]["count"], os.path.getsize(a), os.path.getsize(b))


# ---- hostile version-2 files ------------------------------------------------

def refused(name, doc, mutate):
    bad = copy.deepcopy(doc)
    mutate(bad)
    try:
        tree_json.convert(bad)
    except tree_json.TreeJsonError as e:
        return result("hostile " + name, "\n" not in str(e), "refused: %s" % e)
    except Exception as e:  # noqa: BLE001  anything else is the bug
        return result("hostile " + name, False, "%s: %s" % (type(e).__name__, e))
    result("hostile " + name, False, "loaded")


def set_in(path, value):
    def f(doc):
        *head, last = path
        for k in head:
            doc = doc[k]
        doc[last] = value
    return f


def chain(depth):
    """A version-2 document of root -> process -> depth frames, each the child of the one before."""
    return {
        "format": "tachyon-bpf-tree", "version": 2, "meta": {}, "threads": {"7": {}},
        "strings": ["", "all", "p (pid 7)", "f", "/f.py"],
        "kinds": ["root", "process", "frame"],
        "functions": [0, 1, 0, 0, 1, 2, 0, 7, 2, 3, 4, 1],
        "locations": [-1, -1, -1, -1, 2, 2, 0, 4],
        "frames": [0, 0, 0, 1, 0, 0, 2, 1, 1],
        "threads_order": ["7"],
        "nodes": {"count": depth + 2, "parent": [0] + [1] * (depth + 1), "frame": [0, 1] + [2] * depth,
                  "value": [1] * (depth + 2), "self": [0] * (depth + 1) + [1], "thread": [0] * (depth + 2),
                  "thread_values": [], "lines": [], "opcodes": [], "thread_opcodes": [], "instructions": []},
    }


def hostile(binary, tmp):
    cap = os.path.join(HERE, "captures", "threads-3.11.tbp")
    out = os.path.join(tmp, "h.json")
    subprocess.run([binary, "render", "-q", cap, "-o", out], check=True)
    doc = json.load(open(out))
    n = doc["nodes"]
    assert n["thread_values"] and n["lines"] and n["opcodes"] and n["thread_opcodes"] and n["instructions"]
    huge = 10 ** 18
    cases = [
        ("string index", set_in(["functions", 1], len(doc["strings"]))),
        ("negative string index", set_in(["functions", 5], -1)),
        ("kind index", set_in(["functions", 0], len(doc["kinds"]))),
        ("function index", set_in(["frames", 0], len(doc["functions"]) // 4)),
        ("location index", set_in(["frames", 2], len(doc["locations"]) // 4)),
        ("frame index", set_in(["nodes", "frame", 1], len(doc["frames"]) // 3)),
        ("parent forward", set_in(["nodes", "parent", 3], -1)),
        ("parent to itself", set_in(["nodes", "parent", 3], 0)),
        ("parent before the root", set_in(["nodes", "parent", 3], 4)),
        ("root with a parent", set_in(["nodes", "parent", 0], 1)),
        ("thread index", set_in(["nodes", "thread", 5], len(doc["threads_order"]))),
        ("thread -1 without values", set_in(["nodes", "thread_values"], [])),
        ("thread_values thread", set_in(["nodes", "thread_values", 2], 99)),
        ("huge sparse count", set_in(["nodes", "thread_values", 1], huge)),
        ("huge lines count", set_in(["nodes", "lines", 1], huge)),
        ("huge thread_opcodes count", set_in(["nodes", "thread_opcodes", 3], huge)),
        ("sparse step past the nodes", set_in(["nodes", "opcodes", 0], huge)),
        ("sparse step backwards", lambda d: d["nodes"]["lines"].extend([0, 0])),
        ("sparse entry cut", lambda d: d["nodes"]["instructions"].append(1)),
        ("opcode string index", set_in(["nodes", "opcodes", 2], len(doc["strings"]))),
        ("instruction name index", set_in(["nodes", "instructions", 3], -2)),
        ("count past the columns", set_in(["nodes", "count"], huge)),
        ("count zero", set_in(["nodes", "count"], 0)),
        ("a float", set_in(["nodes", "value", 2], 1.5)),
        ("a bool", set_in(["nodes", "self", 2], True)),
        ("a string", set_in(["nodes", "parent", 2], "1")),
        ("strings not strings", set_in(["strings", 1], 5)),
        ("nodes not an object", set_in(["nodes"], [])),
        ("unknown version", set_in(["version"], 3)),
        ("not a tree JSON", set_in(["format"], "tachyon-bpf-diff")),
        ("functions cut", lambda d: d["functions"].pop()),
    ]
    for name, mutate in cases:
        refused(name, doc, mutate)
    # huge counts that are only numbers load as they are
    big = copy.deepcopy(doc)
    big["nodes"]["value"][0] = 10 ** 30
    result("hostile huge value", tree_json.convert(big)["tree"]["value"] == 10 ** 30)
    # a deep chain: loaded without recursion (and refused as version 1 by json.load's own limit)
    deep = tree_json.convert(chain(100000))
    depth, x = 0, deep["tree"]
    while x["children"]:
        (x,) = x["children"]
        depth += 1
    result("hostile 100,000-deep chain", depth == 100001, "depth %d" % depth)
    path = os.path.join(tmp, "deep.json")
    json.dump(chain(100000), open(path, "w"))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "tree_json.py"), "--v1", path],
                       capture_output=True, text=True)
    result("hostile deep chain --v1", r.returncode == 1 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr,
           r.stderr.strip())


def main():
    # the deepest captures (tests/hostile: v2-depth-max) nest deeper than json.load's default
    # limit as version 1; the version-2 reader needs no such thing
    sys.setrecursionlimit(20000)
    binary = os.path.join(ROOT, "tachyon-bpf")
    if "--bin" in sys.argv:
        binary = sys.argv[sys.argv.index("--bin") + 1]
    with tempfile.TemporaryDirectory() as tmp:
        for d in CAPTURE_DIRS:
            for cap in sorted(os.listdir(d)):
                if not cap.endswith(".tbp"):
                    continue
                path = os.path.join(d, cap)
                if subprocess.run([binary, "render", "-q", path, "-o", os.path.join(tmp, "t.json")],
                                  capture_output=True).returncode:
                    continue  # a capture refused (tests/hostile): nothing to compare
                for variant, extra in VARIANTS + ([SLICE] if cap.startswith("timeline-") else []):
                    why, detail = compare(binary, path, extra)
                    result("%s %s" % (cap, variant), not why, why or detail)
        hostile(binary, tmp)
    print("%d passed, %d failed" % (RESULTS["passed"], RESULTS["failed"]))
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
