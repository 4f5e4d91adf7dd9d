#!/usr/bin/env python3
"""Synthetic tachyon-bpf tree JSON (docs/profile-json.md) for the flame graph browser test.

  gen_profile.py realistic OUT.json [--seed N]   3 named threads in 2 processes, hostile names,
                                                 truncated/partial markers, lines, opcodes
                                                 (summed, per thread, per instruction; two pool
                                                 threads share call paths)
  gen_profile.py big OUT.json [--nodes 100000]   a ~100,000-node tree (rendering speed)
  gen_profile.py kinds OUT.json [--seed N]       native and kernel frames (--native, --kernel):
                                                 a system call below Python, a callback sandwich
                                                 (Python, native, Python), zlib, an off-CPU stack
                                                 with <off-CPU> at the root of its kernel part,
                                                 a hidden-symbols [kernel] frame

Both satisfy the invariants the C writer guarantees: node value = sum of thread_values[*][0],
self likewise, value >= self + sum(children values), root value = meta.python_samples.
"""
import argparse
import json
import random
import sys

# Marker replaced by raw invalid UTF-8 bytes after serialisation (the page must cope).
BAD_UTF8_MARK = "@@BADUTF8@@"
BAD_UTF8_BYTES = b"\xff\xfe\xc3("
# Marker replaced by a JSON escape of a lone surrogate (valid JSON, not valid Unicode).
LONE_MARK = "@@LONE@@"

HOSTILE_SCRIPT = "</script><script>window.__pwned=1</script>"
HOSTILE_IMG = '<img src=x onerror="window.__pwned=1">'


class Node:
    __slots__ = ("name", "kind", "filename", "lineno", "pid", "value", "self", "tv",
                 "lines", "opcodes", "topcodes", "instr", "children", "order")

    def __init__(self, name, kind, filename=None, lineno=None, pid=None):
        self.name, self.kind, self.filename, self.lineno, self.pid = name, kind, filename, lineno, pid
        self.value = self.self = 0
        self.tv = {}        # tid -> [samples, self]
        self.lines = {}     # line -> [samples, self]
        self.opcodes = {}   # (name, base) -> self
        self.topcodes = {}  # tid -> {(name, base): self}
        self.instr = {}     # (offset, name, base, line, end_line, col, end_col) -> leaf samples
        self.children = {}  # key -> Node
        self.order = 0

    def add(self, tid, n, is_self, line=None):
        self.value += n
        t = self.tv.setdefault(tid, [0, 0])
        t[0] += n
        if is_self:
            self.self += n
            t[1] += n
        if line is not None:
            ln = self.lines.setdefault(line, [0, 0])
            ln[0] += n
            if is_self:
                ln[1] += n

    def child(self, key, *args, **kw):
        c = self.children.get(key)
        if c is None:
            c = self.children[key] = Node(*args, **kw)
        return c


def to_json(node, keep):
    """Serialise, dropping children for which keep(child) is False; returns (dict, pruned)."""
    d = {"name": node.name, "kind": node.kind}
    if node.pid is not None:
        d["pid"] = node.pid
    if node.kind not in ("root", "process"):
        d["filename"] = node.filename or ""
        d["lineno"] = node.lineno if node.lineno is not None else -1
        if node.lines:
            hot = max(node.lines.items(), key=lambda kv: kv[1][0])[0]
            d["location"] = [hot, hot, 4, 4 + (len(node.name) % 30) + 5]
        else:
            d["location"] = [-1, -1, -1, -1]
    d["value"], d["self"] = node.value, node.self
    d["thread_values"] = {str(t): v for t, v in sorted(node.tv.items())}
    if node.kind not in ("root", "process"):
        d["lines"] = [[ln, v[0], v[1]] for ln, v in sorted(node.lines.items(), key=lambda kv: -kv[1][0])]
        if node.instr:
            d["instructions"] = [list(k) + [v] for k, v in sorted(node.instr.items(), key=lambda kv: (-kv[1], kv[0][0]))]
        if node.opcodes:
            d["opcodes"] = [[k[0], k[1], v] for k, v in sorted(node.opcodes.items(), key=lambda kv: -kv[1])]
            d["thread_opcodes"] = {str(t): [[k[0], k[1], v] for k, v in sorted(ops.items(), key=lambda kv: -kv[1])]
                                   for t, ops in sorted(node.topcodes.items())}
    pruned = 0
    kids = []
    for c in node.children.values():
        if keep(c):
            cj, p = to_json(c, keep)
            kids.append(cj)
            pruned += p
        else:
            pruned += count_nodes(c)
    d["children"] = kids
    return d, pruned


def count_nodes(n):
    return 1 + sum(count_nodes(c) for c in n.children.values())


def make_keeper(root, threads, min_fraction):
    def keep(n):
        if n.value >= min_fraction * root.value:
            return True
        for tid, (v, _s) in n.tv.items():
            if v >= max(1, 0.001 * threads[tid]["python_samples"]):
                return True
        return False
    return keep


def functions_of(n, acc):
    if n.kind in ("frame", "native", "kernel"):
        acc.add((n.name, n.filename))
    for c in n.children.values():
        functions_of(c, acc)
    return acc


def pick(rnd, stacks, total_w):
    """One of stacks [(thread, weight, frames)] drawn by weight: (thread, frames)."""
    r = rnd.uniform(0, total_w)
    for tid, w, st in stacks:
        r -= w
        if r <= 0:
            break
    return tid, st


# --------------------------------------------------------------------------- realistic profile
def realistic(seed):
    rnd = random.Random(seed)
    rate, duration = 99, 3.02
    A, B = 4242, 5151
    procs = [
        {"pid": A, "ns_pid": A, "comm": "python3.12",
         "cmdline": "python3.12 -m app.server --port 8080 --banner '<b>hi</b>'",
         "python": "3.12.3", "elf": "/usr/bin/python3.12", "samples": 0},
        {"pid": B, "ns_pid": 7, "comm": "python3.11",
         "cmdline": "python3.11 /srv/batch/run.py --job=\"nightly\"",
         "python": "3.11.2", "elf": "/usr/local/bin/python3.11", "samples": 0},
    ]
    threads = {
        A: {"pid": A, "ns_tid": A, "name": "MainThread", "samples": 0, "python_samples": 0},
        A + 8: {"pid": A, "ns_tid": A + 8, "name": 'worker-1 "pool"', "samples": 0, "python_samples": 0},
        A + 9: {"pid": A, "ns_tid": A + 9, "name": "worker-2", "samples": 0, "python_samples": 0},
        B: {"pid": B, "ns_tid": 7, "name": "batch<svg onload=window.__pwned=1>", "samples": 0,
            "python_samples": 0},
    }
    srv = "/srv/app/app/server.py"
    std = "/usr/lib/python3.12/"
    F = {  # short id -> (qualname, filename, firstlineno)
        "main": ("main", "/srv/app/app/__main__.py", 3),
        "run": ("Server.run", srv, 40),
        "serve": ("BaseServer.serve_forever", std + "socketserver.py", 215),
        "select": ("_PollSelector.select", std + "selectors.py", 402),
        "handle": ("Handler.handle_request", srv, 88),
        "route": ("Router.dispatch", "/srv/app/app/routing.py", 12),
        "loads": ("loads", std + "json/__init__.py", 299),
        "decode": ("JSONDecoder.decode", std + "json/decoder.py", 332),
        "raw": ("JSONDecoder.raw_decode", std + "json/decoder.py", 343),
        "render": ("Template.render", "/srv/app/venv/lib/python3.12/site-packages/jinja2/environment.py", 1290),
        "root_render": ("root", "<template>", 1),
        "evil1": (HOSTILE_SCRIPT, "/srv/app/app/templates/<x>.py", 1),
        "evil2": (HOSTILE_IMG, "/srv/app/app/evil \"quoted\" 'file'.py", 7),
        "ctl": ("ctl\x01\x1b[31mred\x7f", "/srv/app/app/ctl\tfile.py", 9),
        "uni": ("naïve_函数_🔥", "/srv/app/app/ünï.py", 21),
        "bad": ("bad_utf8_" + BAD_UTF8_MARK, "/srv/app/app/bad_" + BAD_UTF8_MARK + ".py", 5),
        "lone": ("lone" + LONE_MARK + "surrogate", "/srv/app/app/lone.py", 2),
        "compute": ("compute_report", "/srv/app/app/report.py", 55),
        "fib": ("fib", "/srv/app/app/report.py", 10),
        "sha": ("sha256_file", "/srv/app/app/report.py", 80),
        "bootstrap": ("Thread._bootstrap", std + "threading.py", 990),
        "binner": ("Thread._bootstrap_inner", std + "threading.py", 1030),
        "trun": ("Thread.run", std + "threading.py", 970),
        "worker": ("_worker", std + "concurrent/futures/thread.py", 69),
        "wrun": ("_WorkItem.run", std + "concurrent/futures/thread.py", 53),
        "crunch": ("crunch_numbers", "/srv/app/app/tasks.py", 14),
        "sumsq": ("sum_squares", "/srv/app/app/tasks.py", 30),
        "listcomp": ("sum_squares.<locals>.<listcomp>", "/srv/app/app/tasks.py", 31),
        "qget": ("Queue.get", std + "queue.py", 154),
        "bmain": ("<module>", "/srv/batch/run.py", 1),
        "gc": ("<GC>", "<synthetic>", 0),
        "bjob": ("run_job", "/srv/batch/run.py", 20),
        "csv": ("DictReader.__next__", "/usr/lib/python3.11/csv.py", 109),
        "transform": ("transform_row", "/srv/batch/transform.py", 8),
        "regex": ("Pattern.sub", "/srv/batch/transform.py", 30),
        "write": ("BufferedWriter.write", "/srv/batch/io.py", 3),
    }
    # (thread, weight, stack outer->inner)
    T1, T2, T3, T4 = A, A + 8, B, A + 9
    stacks = [
        (T1, 6, ["main", "run", "serve", "select"]),
        (T1, 10, ["main", "run", "serve", "handle", "route", "loads", "decode", "raw"]),
        (T1, 3, ["main", "run", "serve", "handle", "route", "loads", "decode"]),
        (T1, 7, ["main", "run", "serve", "handle", "route", "render", "root_render", "evil1"]),
        (T1, 3, ["main", "run", "serve", "handle", "route", "render", "root_render", "evil2"]),
        (T1, 2, ["main", "run", "serve", "handle", "route", "render", "ctl"]),
        (T1, 2, ["main", "run", "serve", "handle", "route", "uni"]),
        (T1, 1, ["main", "run", "serve", "handle", "bad"]),
        (T1, 1, ["main", "run", "serve", "handle", "lone"]),
        (T1, 8, ["main", "run", "serve", "handle", "route", "compute", "fib", "fib", "fib", "fib", "fib"]),
        (T1, 4, ["main", "run", "serve", "handle", "route", "compute", "fib", "fib", "fib"]),
        (T1, 5, ["main", "run", "serve", "handle", "route", "compute", "sha"]),
        (T2, 14, ["bootstrap", "binner", "trun", "worker", "wrun", "crunch", "sumsq", "listcomp"]),
        (T2, 4, ["bootstrap", "binner", "trun", "worker", "wrun", "crunch", "sumsq"]),
        (T2, 3, ["bootstrap", "binner", "trun", "worker", "wrun", "crunch", "evil2"]),
        (T2, 5, ["bootstrap", "binner", "trun", "worker", "qget"]),
        # a second pool thread on the same call paths: their nodes hold both threads' samples
        (T4, 9, ["bootstrap", "binner", "trun", "worker", "wrun", "crunch", "sumsq", "listcomp"]),
        (T4, 3, ["bootstrap", "binner", "trun", "worker", "wrun", "crunch", "sumsq"]),
        (T4, 3, ["bootstrap", "binner", "trun", "worker", "qget"]),
        (T3, 6, ["bmain", "bjob", "csv"]),
        (T3, 9, ["bmain", "bjob", "transform", "regex"]),
        (T3, 3, ["bmain", "bjob", "transform"]),
        (T3, 5, ["bmain", "bjob", "write"]),
        (T3, 2, ["bmain", "bjob", "transform", "uni"]),
        (T1, 2, ["main", "run", "serve", "handle", "route", "loads", "decode", "raw", "gc"]),
    ]
    opnames = [("BINARY_OP_ADD_INT", "BINARY_OP"), ("LOAD_ATTR_INSTANCE_VALUE", "LOAD_ATTR"),
               ("CALL_PY_EXACT_ARGS", "CALL"), ("FOR_ITER_LIST", "FOR_ITER"),
               ("COMPARE_OP_INT", "COMPARE_OP"), ("STORE_FAST", "STORE_FAST"),
               ("CALL_ADAPTIVE", "CALL"), ('<img src=x onerror="window.__pwned=1">', "LOAD_FAST")]
    total_w = sum(w for _, w, _ in stacks)
    n_records = 3010
    root = Node("all", "root")
    pnodes = {p["pid"]: Node("%s (pid %d)" % (p["comm"], p["pid"]), "process", pid=p["pid"]) for p in procs}
    no_py = truncated = partial = frames = 0
    for _ in range(n_records):
        tid, st = pick(rnd, stacks, total_w)
        pid = threads[tid]["pid"]
        threads[tid]["samples"] += 1
        next(p for p in procs if p["pid"] == pid)["samples"] += 1
        if rnd.random() < 0.003:
            no_py += 1
            continue
        threads[tid]["python_samples"] += 1
        pnode = root.child(pid, pnodes[pid].name, "process", pid=pid)
        root.add(tid, 1, False)
        pnode.add(tid, 1, False)
        cur = pnode
        marker = rnd.random()
        if marker < 0.01:
            truncated += 1
            cur = cur.child("<truncated>", "<truncated>", "truncated", "", -1)
            cur.add(tid, 1, False)
            st = st[2:]
        elif marker < 0.018:
            partial += 1
            cur = cur.child("<partial stack>", "<partial stack>", "partial", "", -1)
            cur.add(tid, 1, False)
            st = st[1:]
        for i, fid in enumerate(st):
            name, fn, first = F[fid]
            leaf = i == len(st) - 1
            cur = cur.child((name, fn, first), name, "frame", fn, first)
            line = first + 1 + (rnd.randrange(6) if leaf else (sum(map(ord, fid)) % 4))
            cur.add(tid, 1, leaf, line)
            frames += 1
            if leaf:
                # 80% of leaf samples with an opcode; the instruction (offset, position) follows
                # from the opcode and the line, so locations repeat
                op = None
                if rnd.random() < 0.8:
                    op = opnames[rnd.randrange(len(opnames))] if rnd.random() < 0.5 else opnames[sum(map(ord, fid)) % 3]
                    cur.opcodes[op] = cur.opcodes.get(op, 0) + 1
                    t_ops = cur.topcodes.setdefault(tid, {})
                    t_ops[op] = t_ops.get(op, 0) + 1
                k = opnames.index(op) if op else len(opnames)
                col = 4 + 6 * k
                ins = (2 * (k + 8 * (line - first)), op[0] if op else None, op[1] if op else None,
                       line, line, col, col + 5 + k)
                cur.instr[ins] = cur.instr.get(ins, 0) + 1
    return finish(root, procs, threads, rate, duration, n_records, no_py, truncated, partial, frames,
                  min_fraction=0.001, lost=3, unresolved=2)


def finish(root, procs, threads, rate, duration, n_records, no_py, truncated, partial, frames,
           min_fraction, lost, unresolved):
    keep = make_keeper(root, threads, min_fraction)
    tree, pruned = to_json(root, keep)
    meta = {
        "rate_hz": rate, "duration_s": duration, "mode": "cpu", "host": "synthetic<host>",
        "kernel": "6.18.44", "start_unix": 1764410000, "samples": n_records,
        "python_samples": root.value, "no_python_samples": no_py, "lost": lost,
        "truncated": truncated, "partial": partial, "frames": frames,
        "unresolved_frames": unresolved, "max_depth": 128, "by_line": False,
        "min_fraction": min_fraction, "pruned_nodes": pruned,
        "functions": len(functions_of(root, set())), "processes": procs,
    }
    return {"format": "tachyon-bpf-tree", "version": 1, "meta": meta,
            "threads": {str(t): v for t, v in threads.items()}, "tree": tree}


# --------------------------------------------------------------------------- native and kernel frames
def kinds(seed):
    rnd = random.Random(seed)
    pid = 7070
    T1, T2 = pid, pid + 1
    procs = [{"pid": pid, "ns_pid": pid, "comm": "python3.13", "cmdline": "python3.13 kinds.py",
              "python": "3.13.1", "elf": "/usr/bin/python3.13", "samples": 0}]
    threads = {T1: {"pid": pid, "ns_tid": T1, "name": "MainThread", "samples": 0, "python_samples": 0},
               T2: {"pid": pid, "ns_tid": T2, "name": "napper", "samples": 0, "python_samples": 0}}
    libc, libz, app = "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libz.so.1", "/srv/kinds.py"
    F = {  # id -> (name, file, first line, kind)
        "main": ("main", app, 3, "frame"), "work": ("work", app, 10, "frame"),
        "key": ("key_fn", app, 20, "frame"), "tmain": ("Thread.run", app, 30, "frame"),
        "nap": ("nap", app, 40, "frame"), "off": ("<off-CPU>", "<synthetic>", 0, "frame"),
        "entry": ("entry_SYSCALL_64_after_hwframe", "[kernel]", 0, "kernel"),
        "sys": ("do_syscall_64", "[kernel]", 0, "kernel"), "ksys": ("ksys_read", "[kernel]", 0, "kernel"),
        "rz": ("read_zero", "[kernel]", 0, "kernel"), "nano": ("do_nanosleep", "[kernel]", 0, "kernel"),
        "sched": ("schedule", "[kernel]", 0, "kernel"), "hidden": ("[kernel]", "[kernel]", 0, "kernel"),
        "qsort": ("qsort_r", libc, 0, "native"), "msort": ("msort_with_tmp", libc, 0, "native"),
        "defl": ("deflate_slow", libz, 0, "native"), "strip": ("libz.so.1+0x1230", libz, 0, "native"),
    }
    stacks = [  # (thread, weight, outer -> inner)
        (T1, 10, ["main", "work", "entry", "sys", "ksys", "rz"]),
        (T1, 2, ["main", "work", "entry", "sys"]),
        (T1, 6, ["main", "work", "qsort", "msort", "key"]),
        (T1, 2, ["main", "work", "qsort", "msort", "key", "entry", "sys"]),
        (T1, 3, ["main", "work", "key"]),
        (T1, 4, ["main", "work", "defl", "strip"]),
        (T1, 3, ["main", "work"]),
        (T2, 8, ["tmain", "nap", "off", "nano", "sched"]),
        (T2, 2, ["tmain", "nap"]),
        (T2, 3, ["tmain", "hidden"]),
    ]
    total_w = sum(w for _, w, _ in stacks)
    n_records = 600
    root = Node("all", "root")
    pnode = Node("python3.13 (pid %d)" % pid, "process", pid=pid)
    frames = 0
    for _ in range(n_records):
        tid, st = pick(rnd, stacks, total_w)
        threads[tid]["samples"] += 1
        threads[tid]["python_samples"] += 1
        procs[0]["samples"] += 1
        root.add(tid, 1, False)
        cur = root.child(pid, pnode.name, "process", pid=pid)
        cur.add(tid, 1, False)
        for i, fid in enumerate(st):
            name, fn, first, kind = F[fid]
            leaf = i == len(st) - 1
            cur = cur.child((kind, name, fn, first), name, kind, fn, first)
            cur.add(tid, 1, leaf, first + 1 if kind == "frame" and fn != "<synthetic>" else 0)
            frames += kind == "frame"
    data = finish(root, procs, threads, 99, 6.0, n_records, 0, 0, 0, frames, min_fraction=0.0, lost=0,
                  unresolved=0)
    data["meta"]["kernel_stacks"] = {"enabled": True, "samples": 0, "frames": 0, "symbols_hidden": False,
                                     "kptr_restrict": 0}
    data["meta"]["native_stacks"] = {"enabled": True, "samples": 0, "frames": 0, "merged": 0,
                                     "unmerged": 0, "truncated": 0, "stops": [0] * 8}
    return data


# --------------------------------------------------------------------------- 100k-node profile
def big(n_nodes, seed):
    rnd = random.Random(seed)
    pid = 31337
    tids = [pid, pid + 1, pid + 2, pid + 3]
    names = ["MainThread", "Thread-1 (worker)", "Thread-2 (worker)", "asyncio_0"]
    threads = {t: {"pid": pid, "ns_tid": t, "name": names[i], "samples": 0, "python_samples": 0}
               for i, t in enumerate(tids)}
    procs = [{"pid": pid, "ns_pid": pid, "comm": "python3.13", "cmdline": "python3.13 -m bigapp",
              "python": "3.13.1", "elf": "/usr/bin/python3.13", "samples": 0}]
    n_funcs = 6000
    funcs = []
    for i in range(n_funcs):
        pkg, mod = i % 37, i % 211
        funcs.append(("%s_%d" % (rnd.choice(["get", "handle", "compute", "parse", "render", "load",
                                               "Visitor.visit", "Cache.lookup", "_inner", "run"]), i),
                      "/srv/bigapp/pkg%d/mod%d.py" % (pkg, mod), 1 + (i * 7) % 900))
    root = Node("all", "root")
    proc = root.child(pid, "python3.13 (pid %d)" % pid, "process", pid=pid)
    count = 2
    # Explicit-stack DFS: each node gets a random number of children, fewer deeper down,
    # until the node budget is used; some hot chains go deep (up to ~120 frames).
    stack = [(proc, 0, 6)]
    all_nodes = []
    while stack and count < n_nodes - 700:
        # Mostly expand a random pending node (a bushy tree), sometimes the newest (deep chains).
        i = len(stack) - 1 if rnd.random() < 0.3 else rnd.randrange(len(stack))
        stack[i], stack[-1] = stack[-1], stack[i]
        parent, depth, k = stack.pop()
        for _ in range(k):
            if count >= n_nodes:
                break
            f = funcs[int(rnd.paretovariate(0.9) * 3 + rnd.randrange(40) * (depth % 5)) % n_funcs]
            key = (f[0], f[1], f[2])
            if key in parent.children:
                continue
            c = parent.child(key, f[0], "frame", f[1], f[2])
            count += 1
            all_nodes.append(c)
            if depth < 120:
                r = rnd.random()
                kids = 0 if r < 0.30 else 1 if r < 0.62 else 2 if r < 0.80 else rnd.randint(3, 9)
                if depth < 3:
                    kids = rnd.randint(4, 12)
                if kids:
                    stack.append((c, depth + 1, kids))
    # A few deep chains (recursion-like), as real profiles have: up to ~110 frames deep.
    while count < n_nodes:
        cur = rnd.choice(all_nodes[: len(all_nodes) // 3])
        for j in range(rnd.randint(40, 90)):
            if count >= n_nodes:
                break
            f = funcs[(j * 13 + count) % n_funcs] if j % 3 else ("descend", "/srv/bigapp/tree/walk.py", 12)
            cur = cur.child((f[0], f[1], f[2], j), f[0], "frame", f[1], f[2])
            count += 1
            all_nodes.append(cur)
    # Self samples, heavy tailed; per-thread split; then propagate bottom-up.
    for n in all_nodes:
        s = int(rnd.paretovariate(1.3)) - 1
        if not n.children:
            s = max(1, s)  # every leaf carries weight, so no node is empty
        if rnd.random() < 0.003:
            s += rnd.randint(50, 400)
        for _ in range(s):
            tid = tids[min(3, int(rnd.expovariate(1.2)))]
            n.tv.setdefault(tid, [0, 0])
            n.tv[tid][0] += 1
            n.tv[tid][1] += 1
            n.value += 1
            n.self += 1

    def propagate(n):
        for c in n.children.values():
            propagate(c)
            for t, (v, _s) in c.tv.items():
                n.tv.setdefault(t, [0, 0])[0] += v
                n.value += v
    sys.setrecursionlimit(10000)
    propagate(root)
    # Drop zero-weight nodes (the C writer never emits them), lines from self.
    def clean(n):
        n.children = {k: c for k, c in n.children.items() if c.value > 0}
        for c in n.children.values():
            clean(c)
        if n.kind == "frame":
            first = n.lineno
            n.lines = {first + 1: [n.value - n.self, 0]} if n.value > n.self else {}
            if n.self:
                a = n.self // 2
                n.lines.setdefault(first + 2, [0, 0])
                n.lines[first + 2][0] += a
                n.lines[first + 2][1] += a
                n.lines.setdefault(first + 3, [0, 0])
                n.lines[first + 3][0] += n.self - a
                n.lines[first + 3][1] += n.self - a
    clean(root)
    for t in tids:
        v = root.tv.get(t, [0, 0])[0]
        threads[t]["python_samples"] = v
        threads[t]["samples"] = v
    procs[0]["samples"] = root.value
    frames = sum(n.value for n in all_nodes)
    return finish(root, procs, threads, 99, 60.0, root.value, 0, 0, 0, frames,
                  min_fraction=0.0, lost=0, unresolved=0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["realistic", "big", "kinds"])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nodes", type=int, default=100000)
    a = ap.parse_args()
    data = realistic(a.seed) if a.kind == "realistic" else kinds(a.seed) if a.kind == "kinds" else \
        big(a.nodes, a.seed)
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    raw = raw.replace(BAD_UTF8_MARK.encode(), BAD_UTF8_BYTES).replace(LONE_MARK.encode(), b"\\ud800")
    with open(a.out, "wb") as f:
        f.write(raw)
    n = 0
    stack = [data["tree"]]
    while stack:
        x = stack.pop()
        n += 1
        stack.extend(x["children"])
    print("%s: %d nodes, %d python samples, %d bytes" % (a.out, n, data["meta"]["python_samples"], len(raw)))


if __name__ == "__main__":
    main()
