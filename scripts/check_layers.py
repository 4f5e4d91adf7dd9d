#!/usr/bin/env python3
"""check_layers.py: every `#include "..."` in user/**/*.c|h must point down the layers
(docs/architecture.md), never up or sideways:

    lib < proc < cpython < model < {capture, out} < cmd

A file may include its own layer and any layer below it; capture and out never include each
other. "tachyon.h" (include/, shared with the BPF program) is allowed everywhere;
"tachyon.skel.h" (the generated BPF skeleton) only in capture/sampler.c. An include that
resolves to no known file is a violation too. System includes (<...>) are not checked.

usage: scripts/check_layers.py [REPO]       (`make layers`)

Prints one line per violation (FILE:LINE: ...), then "N passed, N failed" (one check per
quoted include); exits 1 on any violation, 2 when there is nothing to check.
"""
import os
import re
import sys

# layer -> rank; a file may include a layer of lower rank, or its own layer
RANK = {"lib": 0, "proc": 1, "cpython": 2, "model": 3, "capture": 4, "out": 4, "cmd": 5}
ORDER = "lib < proc < cpython < model < {capture, out} < cmd"
# headers outside user/: allowed in the files listed (None: everywhere)
SHARED = {"tachyon.h": None, "tachyon.skel.h": {"capture/sampler.c"}}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def sources(user):
    for d, _, names in sorted(os.walk(user)):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(d, n), user)


def resolve(user, rel, inc):
    """The layer-relative path an include names: the including file's own folder first
    (as the compiler searches), then user/ (-Iuser); None if it names no file there."""
    for cand in (os.path.join(os.path.dirname(rel), inc), inc):
        cand = os.path.normpath(cand)
        if not cand.startswith("..") and os.path.isfile(os.path.join(user, cand)):
            return cand
    return None


def check(user, rel, inc):
    """None if the include is allowed, else why not."""
    src_layer = rel.split(os.sep)[0]
    if inc in SHARED:
        allowed = SHARED[inc]
        return None if allowed is None or rel in allowed else \
            "%s is only for %s" % (inc, ", ".join(sorted(allowed)))
    target = resolve(user, rel, inc)
    if target is None:
        return "names no file in user/ (nor a shared header: %s)" % ", ".join(sorted(SHARED))
    dst_layer = target.split(os.sep)[0]
    if dst_layer not in RANK:
        return "%s is in no layer" % target
    if dst_layer == src_layer or RANK[dst_layer] < RANK[src_layer]:
        return None
    way = "sideways" if RANK[dst_layer] == RANK[src_layer] else "up"
    return "%s may not include %s (%s; order %s)" % (src_layer, dst_layer, way, ORDER)


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    user = os.path.join(repo, "user")
    passed = failed = 0
    for rel in sources(user):
        layer = rel.split(os.sep)[0]
        if layer not in RANK:
            print("user/%s: file outside the layers (%s)" % (rel, ", ".join(RANK)))
            failed += 1
            continue
        with open(os.path.join(user, rel), encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                why = check(user, rel, m.group(1))
                if why:
                    print('user/%s:%d: #include "%s": %s' % (rel, no, m.group(1), why))
                    failed += 1
                else:
                    passed += 1
    print("%d passed, %d failed" % (passed, failed))
    if failed:
        return 1
    return 0 if passed else 2


if __name__ == "__main__":
    sys.exit(main())
