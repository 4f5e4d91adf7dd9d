#!/usr/bin/env python3
"""tree_json.py: the reader of the tree JSON (`-o profile.json`,
docs/profile-json.md), both versions: load(path) gives the document as
version 1 has it (a version-1 file as json.load reads it; a version-2 file
rebuilt: the same keys, values and order), every index of a version-2 file
checked first and the tree rebuilt without recursion.  A file that is not a
tree JSON, or not a consistent one, raises TreeJsonError with one sentence.

    python3 scripts/tree_json.py --v1 IN.json     (prints it as version 1)

Used by the tests for every tree JSON they read."""
import json
import os
import sys

FORMAT = "tachyon-bpf-tree"
# version-2 keys that replace version 1's "tree"
V2_KEYS = ("strings", "kinds", "functions", "locations", "frames", "threads_order", "nodes")
# node kinds without filename, lineno, location and lines
NOT_FRAMES = ("root", "process", "truncated", "partial")
DENSE = ("parent", "frame", "value", "self", "thread")


class TreeJsonError(ValueError):
    pass


def fail(msg):
    raise TreeJsonError(msg)


def is_int(v):
    return type(v) is int  # not bool, not float


def ints(doc, key, width=1, where="", lo=None):
    a = doc.get(key)
    if not isinstance(a, list) or not all(is_int(v) for v in a):
        fail("%s%r is not a list of integers" % (where, key))
    if len(a) % width:
        fail("%s%r has %d entries, not a multiple of %d" % (where, key, len(a), width))
    if lo is not None and any(v < lo for v in a):
        fail("%s%r holds a value below %d" % (where, key, lo))
    return a


def index(v, n, what):
    if not is_int(v) or v < 0 or v >= n:
        fail("%s index %r out of range (0..%d)" % (what, v, n - 1))
    return v


class Sparse:
    """A sparse column: [step, count, count entries of width values]..."""

    def __init__(self, nodes, key, width, count_nodes):
        self.key, self.width, self.n = key, width, count_nodes
        self.a = ints(nodes, key, where="nodes: ")
        self.pos, self.node = 0, -1
        self.entries = {}  # node -> (start, count)
        a, last = self.a, -1
        while self.pos < len(a):
            if len(a) - self.pos < 2:
                fail("nodes: %r ends inside an entry" % key)
            step, count = a[self.pos], a[self.pos + 1]
            if step < (0 if last < 0 else 1):
                fail("nodes: %r step %d does not move forward" % (key, step))
            node = (0 if last < 0 else last) + step
            if node >= count_nodes:
                fail("nodes: %r names node %d of %d" % (key, node, count_nodes))
            start = self.pos + 2
            if count < 0 or count > (len(a) - start) // max(width, 1):
                fail("nodes: %r count %d at node %d is more than what is left" % (key, count, node))
            self.pos = self.skip(start, count)
            self.entries[node] = (start, count)
            last = node

    def skip(self, start, count):
        return start + count * self.width


class ThreadOpcodes(Sparse):
    """Per thread: k, n, then n triples."""

    def skip(self, start, count):
        a, pos = self.a, start
        for _ in range(count):
            if len(a) - pos < 2:
                fail("nodes: 'thread_opcodes' ends inside an entry")
            n = a[pos + 1]
            if n < 0 or n > (len(a) - pos - 2) // 3:
                fail("nodes: 'thread_opcodes' count %d is more than what is left" % n)
            pos += 2 + 3 * n
        return pos


def strings_list(doc, key, where=""):
    a = doc.get(key)
    if not isinstance(a, list) or not all(isinstance(s, str) for s in a):
        fail("%s%r is not a list of strings" % (where, key))
    return a


def rebuild(doc):
    """A version-2 document as version 1."""
    strs = strings_list(doc, "strings")
    kinds = strings_list(doc, "kinds")
    tids = strings_list(doc, "threads_order")
    funcs = ints(doc, "functions", 4)
    locs = ints(doc, "locations", 4)
    frames = ints(doc, "frames", 3)
    nodes = doc.get("nodes")
    if not isinstance(nodes, dict):
        fail("'nodes' is not an object")
    count = nodes.get("count")
    if not is_int(count) or count < 1:
        fail("nodes: 'count' is not a positive integer")
    cols = {}
    for key in DENSE:
        cols[key] = ints(nodes, key, where="nodes: ")
        if len(cols[key]) != count:
            fail("nodes: %r has %d entries for %d nodes" % (key, len(cols[key]), count))
    parent, frame, value, self_, thread = (cols[k] for k in DENSE)
    nf, nl, nfr, ns, nk = len(funcs) // 4, len(locs) // 4, len(frames) // 3, len(strs), len(kinds)
    for i in range(nfr):
        index(frames[3 * i], nf, "frames: function")
        index(frames[3 * i + 2], nl, "frames: location")
    for i in range(nf):
        index(funcs[4 * i], nk, "functions: kind")
        index(funcs[4 * i + 1], ns, "functions: name")
        index(funcs[4 * i + 2], ns, "functions: filename")
    if parent[0] != 0:
        fail("nodes: the root's parent step is %r, not 0" % parent[0])
    for i in range(count):
        if i and not 1 <= parent[i] <= i:
            fail("nodes: node %d's parent step %r does not point to an earlier node" % (i, parent[i]))
        index(frame[i], nfr, "nodes: frame")
        if not -1 <= thread[i] < len(tids):
            fail("nodes: node %d's thread %r out of range" % (i, thread[i]))
        if value[i] < 0 or self_[i] < 0:
            fail("nodes: node %d has a negative count" % i)

    tv = Sparse(nodes, "thread_values", 3, count)
    lines = Sparse(nodes, "lines", 3, count)
    ops = Sparse(nodes, "opcodes", 3, count)
    tops = ThreadOpcodes(nodes, "thread_opcodes", 0, count)
    insns = Sparse(nodes, "instructions", 8, count)

    def string(v):
        return strs[index(v, ns, "strings")]

    def tid(k):
        return tids[index(k, len(tids), "threads_order")]

    def triples(a, start, n):
        return [[string(a[j]), string(a[j + 1]), a[j + 2]] for j in range(start, start + 3 * n, 3)]

    out = []
    for i in range(count):
        fn, line_shown, loc = frames[3 * frame[i]: 3 * frame[i] + 3]
        k, name, filename, lineno = funcs[4 * fn: 4 * fn + 4]
        kind = kinds[k]
        x = {"name": strs[name], "kind": kind}
        if kind == "process":
            x["pid"] = lineno
        is_frame = kind not in NOT_FRAMES
        if is_frame:
            x["filename"] = strs[filename]
            x["lineno"] = line_shown
            x["location"] = locs[4 * loc: 4 * loc + 4]
            if i in lines.entries:
                start, n = lines.entries[i]
                a = lines.a
                x["lines"] = [a[j: j + 3] for j in range(start, start + 3 * n, 3)]
            else:
                x["lines"] = [[locs[4 * loc], value[i], self_[i]]]
        elif i in lines.entries:
            fail("nodes: 'lines' lists node %d, a %s" % (i, kind))
        x["value"], x["self"] = value[i], self_[i]
        if thread[i] >= 0:
            if i in tv.entries:
                fail("nodes: 'thread_values' lists node %d, whose thread is %d" % (i, thread[i]))
            x["thread_values"] = {tids[thread[i]]: [value[i], self_[i]]}
        else:
            if i not in tv.entries:
                fail("nodes: node %d has thread -1 and no 'thread_values'" % i)
            start, n = tv.entries[i]
            a = tv.a
            x["thread_values"] = {tid(a[j]): [a[j + 1], a[j + 2]] for j in range(start, start + 3 * n, 3)}
        if i in insns.entries:
            start, n = insns.entries[i]
            a = insns.a
            x["instructions"] = [
                [a[j], None if a[j + 1] == -1 else string(a[j + 1]),
                 None if a[j + 2] == -1 else string(a[j + 2])] + a[j + 3: j + 8]
                for j in range(start, start + 8 * n, 8)]
        if i in ops.entries:
            start, n = ops.entries[i]
            x["opcodes"] = triples(ops.a, start, n)
            if i in tops.entries:
                start, n = tops.entries[i]
                a, pos, per = tops.a, start, {}
                for _ in range(n):
                    per[tid(a[pos])] = triples(a, pos + 2, a[pos + 1])
                    pos += 2 + 3 * a[pos + 1]
                x["thread_opcodes"] = per
            elif thread[i] >= 0:
                x["thread_opcodes"] = {tids[thread[i]]: triples(ops.a, *ops.entries[i])}
            else:
                fail("nodes: node %d has opcodes of several threads and no 'thread_opcodes'" % i)
        elif i in tops.entries:
            fail("nodes: 'thread_opcodes' lists node %d, which has no opcodes" % i)
        x["children"] = []
        if i:
            out[i - parent[i]]["children"].append(x)
        out.append(x)

    v1 = {}
    for key, val in doc.items():
        if key == "version":
            v1[key] = 1
        elif key not in V2_KEYS:
            v1[key] = val
    v1["tree"] = out[0]
    return v1


def convert(doc):
    """A parsed tree JSON (either version) as version 1."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        fail("not a tree JSON (no \"format\": %r)" % FORMAT)
    version = doc.get("version")
    if version == 1 and is_int(version):
        if not isinstance(doc.get("tree"), dict):
            fail("version 1 without a \"tree\" object")
        return doc
    if version == 2 and is_int(version):
        return rebuild(doc)
    fail("unknown version %r (this reader knows 1 and 2)" % (version,))


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except RecursionError:
        fail("%s: nested too deeply to parse" % path)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))
    try:
        return convert(doc)
    except TreeJsonError as e:
        fail("%s: %s" % (path, e))


def main(argv):
    if len(argv) != 3 or argv[1] != "--v1":
        sys.stderr.write("usage: tree_json.py --v1 IN.json   (prints the tree JSON as version 1)\n")
        return 2
    try:
        doc = load(argv[2])
    except TreeJsonError as e:
        sys.stderr.write("tree_json.py: %s\n" % e)
        return 1
    try:
        json.dump(doc, sys.stdout, separators=(",", ":"), ensure_ascii=False)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except RecursionError:
        sys.stderr.write("tree_json.py: %s: nested too deeply to print as version 1\n" % argv[2])
        return 1
    except BrokenPipeError:  # the reader left (| head): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
