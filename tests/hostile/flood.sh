#!/usr/bin/env bash
# flood.sh: hash flooding and complexity checks on generated captures
# (tests/hostile/gen_flood.c, written with the agent's capture writer):
#   flood    200,000 function names that all collide under the old string
#            table's hash (FNV-1a, seed 0): `render -o x.json` (then, untimed,
#            .folded to see every name)
#   diff     2,000 threads per side: `diff -o x.json` (thread matching)
#   heatmap  40,000 source files: `render -o x.heatmap.json`
# Each must finish within its CPU-time budget (user + system seconds of the
# render, so a loaded machine does not fail it) and write a sane output.
#   tests/hostile/flood.sh          (TB_BIN=path: another tachyon-bpf binary)
# Ends with "N passed, N failed".
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BIN=${TB_BIN:-$ROOT/tachyon-bpf}
TIMEOUT=${TB_HOSTILE_TIMEOUT:-120}   # seconds of wall time before giving up on one
passed=0
failed=0

make -s tachyon-bpf build/libtachyon.a || exit 1
mkdir -p build/hostile
cc -O2 -g -Wall -Wextra -std=gnu11 -Iinclude -Iuser -o build/hostile/gen_flood tests/hostile/gen_flood.c \
	build/libtachyon.a $(make -s print-ldlibs) || exit 1
tmp=$(mktemp -d /tmp/tb-hostile.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

result() { # name ok message
	if [ "$2" = 1 ]; then
		passed=$((passed + 1))
		echo "PASS $1: $3"
	else
		failed=$((failed + 1))
		echo "FAIL $1: $3"
	fi
}

# timed NAME BUDGET CMD...: runs CMD; sets rc, cpu (user + system seconds)
# and ok (1: exit 0 within the budget); a failure's output is shown
timed() {
	local name=$1 budget=$2 t
	shift 2
	t=$( { TIMEFORMAT='%U %S'; time timeout "$TIMEOUT" "$@" >"$tmp/$name.out" 2>&1; } 2>&1 )
	rc=$?
	cpu=$(echo "$t" | tail -1 | awk '{printf "%.2f", $1 + $2}')
	ok=$(awk -v c="$cpu" -v b="$budget" -v rc="$rc" 'BEGIN { print (rc == 0 && c < b) ? 1 : 0 }')
	[ "$rc" -eq 0 ] || tail -5 "$tmp/$name.out"
}

build/hostile/gen_flood flood 200000 "$tmp/flood.tbp" || exit 1
build/hostile/gen_flood threads 2000 "$tmp/base.tbp" "$tmp/cur.tbp" >/dev/null || exit 1
build/hostile/gen_flood files 40000 "$tmp/files.tbp" >/dev/null || exit 1

timed flood 3 "$BIN" render "$tmp/flood.tbp" -o "$tmp/flood.json" -q
if [ "$ok" = 1 ]; then
	"$BIN" render "$tmp/flood.tbp" -o "$tmp/flood.folded" -q   # every name, untimed
	lines=$(wc -l <"$tmp/flood.folded")
	names=$(sed 's/.*;//; s/ (.*//' "$tmp/flood.folded" | sort -u | wc -l)
	python3 scripts/tree_json.py --v1 "$tmp/flood.json" >/dev/null 2>&1 && json=1 || json=0
	[ "$lines" = 200000 ] && [ "$names" = 200000 ] && [ "$json" = 1 ] && good=1 || good=0
	result flood "$good" "200,000 colliding names in ${cpu} s CPU: $lines stacks, $names names, json $json"
else
	result flood 0 "${cpu} s CPU (budget 3 s), exit $rc"
fi

timed diff 1 "$BIN" diff "$tmp/base.tbp" "$tmp/cur.tbp" -o "$tmp/diff.json" -q
if [ "$ok" = 1 ]; then
	# every current thread matched its baseline twin: (process, name, ordinal by tid)
	matched=$(python3 - "$tmp/diff.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(len(d["tree"]["thread_base"]))
PY
)
	[ "$matched" = 2000 ] && good=1 || good=0
	result diff "$good" "2,000 threads per side in ${cpu} s CPU: $matched threads matched at the root"
else
	result diff 0 "${cpu} s CPU (budget 1 s), exit $rc"
fi

timed heatmap 1 "$BIN" render "$tmp/files.tbp" -o "$tmp/files.heatmap.json" -q
if [ "$ok" = 1 ]; then
	files=$(python3 - "$tmp/files.heatmap.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fs = d["files"]
ok = all(len(f["functions"]) == 1 and len(f["lines"]) == 1 and len(f["instructions"]) == 1
         for f in fs if f["path"] != "/app.py")
print(len(fs) if ok else "bad")
PY
)
	[ "$files" = 40001 ] && good=1 || good=0
	result heatmap "$good" "40,000 files in ${cpu} s CPU: $files files listed"
else
	result heatmap 0 "${cpu} s CPU (budget 1 s), exit $rc"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
