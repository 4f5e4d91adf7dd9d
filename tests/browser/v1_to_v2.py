#!/usr/bin/env python3
"""Tree JSON version 1 -> version 2 (docs/profile-json.md, issue 18's columnar layout), exactly as
the format text says, for the page tests before (and beside) the C writer: a second implementation
to cross-check it. "meta", "threads", "timeline", "tasks" are copied; "tree" becomes "strings",
"kinds", "functions", "locations", "frames", "threads_order" and "nodes" (v1 written order: root 0,
then depth first, children in order; a node's parent as a step back).

  v1_to_v2.py IN.json OUT.json [--stats]

The input is read as the page reads it (UTF-8, invalid bytes replaced), so the page shows the same
strings from both. A v1 node the format cannot carry (a thread not in "threads", opcodes without
thread_opcodes) is refused with one line on stderr and exit status 1. --stats prints per column
its entries and the bytes of its JSON, raw and deflated (what it costs in a page).
Root, process and marker nodes carry no filename, lineno, location or lines in version 2 (the C
writer writes none): a v1 JSON that has them (gen_profile.py's) loses them.
Functions are (kind, name, filename, lineno) as v1 shows them: with by_line the line shown, not
co_firstlineno (v1 does not carry it); a reader gets the same version-1 tree either way.
"""
import json
import sys
import zlib

KINDS = ["root", "process", "frame", "kernel", "native", "task", "truncated", "partial"]
NO_FRAME_FIELDS = {"root", "process", "truncated", "partial"}   # no filename/lineno/location/lines


class Refused(Exception):
    pass


class Interner:
    """Values (hashable) -> dense indices in first-seen order."""

    def __init__(self, first=()):
        self.index, self.items = {}, []
        for x in first:
            self.get(x)

    def get(self, x):
        i = self.index.get(x)
        if i is None:
            i = self.index[x] = len(self.items)
            self.items.append(x)
        return i


class Sparse:
    """A sparse column: step (node index minus the previous listed node's, the first from 0),
    then the entry's own numbers."""

    def __init__(self):
        self.out, self.last = [], 0

    def add(self, node, nums):
        self.out.append(node - self.last)
        self.out.extend(nums)
        self.last = node


def walk(tree):
    """(node, parent index) in v1 written order, iteratively."""
    out, stack = [], [(tree, 0)]
    while stack:
        j, p = stack.pop()
        if not isinstance(j, dict):
            raise Refused("a tree node is not an object")
        out.append((j, p))
        me = len(out) - 1
        kids = j.get("children") or []
        for c in reversed(kids):
            stack.append((c, me))
    return out


def convert(v1):
    if v1.get("format") != "tachyon-bpf-tree" or v1.get("version") != 1 or not isinstance(v1.get("tree"), dict):
        raise Refused("not a tachyon-bpf tree JSON version 1")
    strings = Interner([""])
    kinds = Interner(KINDS)
    funcs, locs, frames = Interner(), Interner([(-1, -1, -1, -1)]), Interner()
    order = [str(t) for t in (v1.get("threads") or {})]
    tpos = {t: k for k, t in enumerate(order)}
    cols = {k: [] for k in ("parent", "frame", "value", "self", "thread")}
    sparse = {k: Sparse() for k in ("thread_values", "lines", "opcodes", "thread_opcodes", "instructions")}

    def tk(tid):
        if tid not in tpos:
            raise Refused("thread %r of a node is not in \"threads\"" % tid)
        return tpos[tid]

    def op_triples(rows):
        out = []
        for r in rows:
            out += [strings.get(r[0]), strings.get(r[1]), r[2]]
        return out

    nodes = walk(v1["tree"])
    for i, (j, p) in enumerate(nodes):
        kind = j.get("kind", "frame")
        name = j.get("name", "")
        value, self_ = j.get("value", 0), j.get("self", 0)
        if kind in NO_FRAME_FIELDS:
            fn = (kinds.get(kind), strings.get(name), 0, j["pid"] if kind == "process" else 0)
            fr = (funcs.get(fn), fn[3], 0)
            line0 = None
        else:
            loc = tuple(j["location"])
            fn = (kinds.get(kind), strings.get(name), strings.get(j["filename"]), j["lineno"])
            fr = (funcs.get(fn), j["lineno"], locs.get(loc))
            line0 = loc[0]
        cols["parent"].append(i - p)
        cols["frame"].append(frames.get(fr))
        cols["value"].append(value)
        cols["self"].append(self_)
        tv = j.get("thread_values", {})
        one = len(tv) == 1 and next(iter(tv.values())) == [value, self_]
        thread = tk(next(iter(tv))) if one else -1
        cols["thread"].append(thread)
        if thread < 0:
            nums = [len(tv)]
            for tid, (v, s) in tv.items():
                nums += [tk(tid), v, s]
            sparse["thread_values"].add(i, nums)
        if line0 is not None:
            lines = j["lines"]
            if lines != [[line0, value, self_]]:
                sparse["lines"].add(i, [len(lines)] + [x for r in lines for x in r])
        if "instructions" in j:
            nums = [len(j["instructions"])]
            for r in j["instructions"]:
                nums += [r[0], -1 if r[1] is None else strings.get(r[1]), -1 if r[2] is None else strings.get(r[2])] + r[3:8]
            sparse["instructions"].add(i, nums)
        if "opcodes" in j:
            sparse["opcodes"].add(i, [len(j["opcodes"])] + op_triples(j["opcodes"]))
        if "thread_opcodes" in j:
            to = j["thread_opcodes"]
            if not ("opcodes" in j and thread >= 0 and to == {order[thread]: j["opcodes"]}):
                nums = [len(to)]
                for tid, rows in to.items():
                    nums += [tk(tid), len(rows)] + op_triples(rows)
                sparse["thread_opcodes"].add(i, nums)
        elif "opcodes" in j and thread >= 0:
            raise Refused("a node with opcodes and one thread has no thread_opcodes")

    out = {"format": "tachyon-bpf-tree", "version": 2}
    for k in ("meta", "threads", "timeline", "tasks"):
        if k in v1:
            out[k] = v1[k]
    out["strings"] = strings.items
    out["kinds"] = kinds.items
    out["functions"] = [x for f in funcs.items for x in f]
    out["locations"] = [x for l in locs.items for x in l]
    out["frames"] = [x for f in frames.items for x in f]
    out["threads_order"] = order
    out["nodes"] = {"count": len(nodes), **cols, **{k: s.out for k, s in sparse.items()}}
    return out


def dumps(obj):
    """Compact JSON as UTF-8 bytes; a lone surrogate (from a v1 \\u escape) stays an escape."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "backslashreplace")


def stats(v2):
    rows = []
    for k, v in list(v2.items()) + [("nodes." + k, v) for k, v in v2["nodes"].items()]:
        if k == "nodes":
            continue
        raw = dumps(v)
        n = len(v) if isinstance(v, (list, dict)) else 1
        rows.append((k, n, len(raw), len(zlib.compress(raw, 6))))
    print("%-22s %10s %12s %12s %12s" % ("column", "entries", "JSON bytes", "deflated", "as base64"))
    for k, n, raw, z in rows:
        print("%-22s %10d %12d %12d %12d" % (k, n, raw, z, (z + 2) // 3 * 4))
    whole = dumps(v2)
    z = len(zlib.compress(whole, 6))
    print("%-22s %10s %12d %12d %12d" % ("whole file", "", len(whole), z, (z + 2) // 3 * 4))


def main():
    args = [a for a in sys.argv[1:] if a != "--stats"]
    if len(args) != 2:
        print("usage: v1_to_v2.py IN.json OUT.json [--stats]", file=sys.stderr)
        sys.exit(2)
    with open(args[0], "rb") as f:
        text = f.read().decode("utf-8", "replace")   # as the page decodes it
    try:
        v2 = convert(json.loads(text))
    except (Refused, ValueError, KeyError, TypeError, IndexError) as e:
        print("v1_to_v2.py: %s: %s" % (args[0], e), file=sys.stderr)
        sys.exit(1)
    with open(args[1], "wb") as f:
        f.write(dumps(v2))
    if "--stats" in sys.argv:
        stats(v2)


if __name__ == "__main__":
    main()
