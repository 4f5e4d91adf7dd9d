#!/bin/bash
# make_captures.sh: takes the fixed captures of tests/golden/captures/ (root:
# it profiles real processes).  Run once; the files are committed so that
# every later build renders the same inputs (check.py compares the outputs).
# Kept to show how each capture was made, not run by the test suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=tests/golden/captures
W=tests/workloads
P=/root/.pyenv/versions
tb() { ./tachyon-bpf -q "$@"; }
tb -r 199 -o $out/threads-3.11.tbp -- /usr/bin/python3.11 $W/threads.py 1.5 >/dev/null
tb -r 199 -o $out/hostile-3.11.tbp -- /usr/bin/python3.11 $W/hostile.py 1.5
tb -r 499 --opcodes -o $out/opcodes-3.12.tbp -- $P/3.12.1/bin/python3.12 $W/opcodes.py 1
tb -r 199 --mode wall -o $out/wall-3.13.tbp -- $P/3.13.0/bin/python3.13 $W/sleeper.py 1.5
tb -r 299 -o $out/gc-3.10.tbp -- $P/3.10.13/bin/python3.10 $W/gc_exc.py 1
tb -r 199 --max-depth 24 -o $out/deep-3.11.tbp -- $P/3.11.7/bin/python3.11 $W/deep.py 60 1
tb -r 199 --by-line -o $out/byline-3.12.tbp -- $P/3.12.1/bin/python3.12 $W/slices.py 1.5
tb -r 199 --mode gil -o $out/gil-3.10.tbp -- $P/3.10.13/bin/python3.10 $W/gil.py 1.5
tb -r 199 --subprocesses -o $out/spawner-3.11.tbp -- /usr/bin/python3.11 $W/spawner.py 6 0.2 >/dev/null
tb -r 99 -o $out/empty-3.11.tbp -- /usr/bin/python3.11 $W/idle.py 0.5
tb -r 499 -o $out/diff-base.tbp -- /usr/bin/python3.11 $W/diffcase.py baseline 10
tb -r 499 -o $out/diff-cur.tbp -- /usr/bin/python3.11 $W/diffcase.py current 10
# version 2 (--kernel): a system call below a Python line, a wall-mode capture (off-CPU stacks
# trimmed up to __schedule, <off-CPU> at the root of their kernel part), hidden kernel symbols
tb -r 199 --kernel -o $out/kernel-3.11.tbp -- /usr/bin/python3.11 $W/syscalls.py 1.5 read
tb -r 199 --kernel --mode wall -o $out/kernel-wall-3.12.tbp -- $P/3.12.1/bin/python3.12 $W/syscalls.py 1.5
kptr=$(sysctl -n kernel.kptr_restrict)
sysctl -qw kernel.kptr_restrict=2
tb -r 199 --kernel -o $out/kernel-hidden-3.11.tbp -- /usr/bin/python3.11 $W/syscalls.py 1 read || true
sysctl -qw kernel.kptr_restrict="$kptr"
# version 3 with a timeline (check.py also renders their slice 0.5-1.5 s): two 1-second phases,
# and a wall-mode capture (off-CPU weight spread over the time it was off CPU)
tb -r 199 -o $out/timeline-phases-3.11.tbp -- /usr/bin/python3.11 $W/phases.py 1 >/dev/null
tb -r 199 --mode wall -o $out/timeline-wall-3.12.tbp -- $P/3.12.1/bin/python3.12 $W/sleeper.py 1.5
ls -la $out
