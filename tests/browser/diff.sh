#!/usr/bin/env bash
# End-to-end test of the differential flame graph with the real binary (run as root: BPF):
#
#   1. captures tests/workloads/diffcase.py `baseline` and `current` (slow_function gets faster,
#      fast_function slower, medium_function disappears, new_function appears), and an empty
#      capture (--mode exception while no exception is handled: zero Python samples);
#   2. `tachyon-bpf diff` writes three pages + JSONs: baseline vs current, baseline vs empty
#      (everything elided), empty vs current (everything new);
#   3. runs tests/browser/diff.test.mjs on each (through run.sh --diff).
#
#   tests/browser/diff.sh
#   TB_PYTHON=/usr/bin/python3.11 TB_RATE=999 TB_ROUNDS=30 tests/browser/diff.sh
#
# Pages, JSONs and captures go to tests/browser/out/diff/, screenshots to tests/browser/artifacts/
# (diff.png, diff-elided.png, ...). The last line is "N passed, N failed"; non-zero exit on failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/tachyon-bpf
py=${TB_PYTHON:-/usr/bin/python3.11}
rate=${TB_RATE:-999}
rounds=${TB_ROUNDS:-30}
out=$here/out/diff
work=$repo/tests/workloads/diffcase.py

STEPS_NAME=diff.sh
# shellcheck source=../lib/steps.sh
. "$repo/tests/lib/steps.sh"

# The page template is embedded at build time: rebuild when it is newer than the binary.
if [ ! -x "$bin" ] || [ "$repo/user/out/assets/flamegraph.html" -nt "$bin" ]; then
	step "make (template embedded in the binary)" make -C "$repo" -s
fi
[ -x "$py" ] || { bad "python $py not found (set TB_PYTHON)"; finish; }
rm -rf "$out"
mkdir -p "$out"

step "capture baseline ($rounds rounds at $rate Hz)" "$bin" -q -r "$rate" -o "$out/base.tbp" -- "$py" "$work" baseline "$rounds"
step "capture current" "$bin" -q -r "$rate" -o "$out/cur.tbp" -- "$py" "$work" current "$rounds"
# an empty profile: a Python process that only sleeps has no on-CPU sample
"$py" "$repo/tests/workloads/idle.py" 10 &
idle=$!
sleep 0.5
step "capture an empty profile (a sleeping process)" "$bin" -q -r "$rate" -d 0.5 -p "$idle" -o "$out/empty.tbp"
kill "$idle" 2>/dev/null
wait "$idle" 2>/dev/null
step "tachyon-bpf diff baseline current" "$bin" diff "$out/base.tbp" "$out/cur.tbp" -o "$out/diff.html" -o "$out/diff.json"
step "tachyon-bpf diff baseline empty" "$bin" diff "$out/base.tbp" "$out/empty.tbp" -o "$out/empty-current.html" -o "$out/empty-current.json"
step "tachyon-bpf diff empty current" "$bin" diff "$out/empty.tbp" "$out/cur.tbp" -o "$out/empty-baseline.html" -o "$out/empty-baseline.json"

log=$(mktemp)
bash "$here/run.sh" \
	--diff "$out/diff.html" "$out/diff.json" --label diff --expect diffcase \
	--diff "$out/empty-current.html" "$out/empty-current.json" --label empty-current --expect empty-current \
	--diff "$out/empty-baseline.html" "$out/empty-baseline.json" --label empty-baseline --expect empty-baseline | tee "$log"
last=$(tail -n 1 "$log")
rm -f "$log"
if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
	pass=$((pass + BASH_REMATCH[1]))
	fail=$((fail + BASH_REMATCH[2]))
else
	bad "browser test did not report its totals"
fi
finish
