#!/usr/bin/env bash
# bench/agent_marginal.sh: the agent's CPU per sample at a rate, start-up left out: each
# binary profiles one spinning CPython 3.15 thread (30 frames deep) for SHORT and for LONG
# seconds, and the difference of its user and system CPU (/usr/bin/time) is divided by the
# difference of the samples it took, so loading the BPF program, reading the target and
# writing the output count in neither.  Binaries alternate, ROUNDS times; prints one line a
# round and binary.  Root.  Benchmarks, not tests.
#
#   bash bench/agent_marginal.sh [TB ...]      (default ./tachyon-bpf)
#   RATE=10000 SHORT=2 LONG=25 ROUNDS=3 PY=/var/cache/tachyon-bpf/pythons/bin/python3.15
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${RATE:-10000} SHORT=${SHORT:-2} LONG=${LONG:-25} ROUNDS=${ROUNDS:-3}
PY=${PY:-/var/cache/tachyon-bpf/pythons/bin/python3.15}
[[ $# -gt 0 ]] || set -- ./tachyon-bpf
tmp=$(mktemp -d /tmp/tb-marginal-XXXXXX)
bins=("$@")
secs=$(( (SHORT + LONG + 8) * ROUNDS * ${#bins[@]} + 30 ))
"$PY" -c "
import time, sys
def f(n):
    return f(n - 1) if n else spin()
def spin():
    end = time.time() + $secs
    while time.time() < end: pass
f(30)" &
target=$!
trap 'kill $target 2>/dev/null; rm -rf "$tmp"' EXIT
sleep 1
echo "agent CPU per sample at $RATE Hz (runs of $LONG s minus runs of $SHORT s), load $(cut -d' ' -f1 /proc/loadavg)"
for ((r = 1; r <= ROUNDS; r++)); do
	for b in "${bins[@]}"; do
		for d in "$SHORT" "$LONG"; do
			/usr/bin/time -f '%U %S' -o "$tmp/time.$d" "$b" -q -p "$target" -r "$RATE" -d "$d" \
				-o "$tmp/out.$d.json"
		done
		python3 - "$b" "$r" "$tmp" "$SHORT" "$LONG" <<'PYEOF'
import json, sys
sys.path.insert(0, "scripts")
import tree_json
b, r, tmp, short, long_ = sys.argv[1:]
def one(d):
    u, s = map(float, open("%s/time.%s" % (tmp, d)).read().split())
    return u, s, tree_json.load("%s/out.%s.json" % (tmp, d))["meta"]["samples"]
u0, s0, n0 = one(short)
u1, s1, n1 = one(long_)
n = n1 - n0
print("round %s  %-40s %.2f us per sample (user %.2f, system %.2f) over %d samples" % (
    r, b, ((u1 - u0) + (s1 - s0)) / n * 1e6, (u1 - u0) / n * 1e6, (s1 - s0) / n * 1e6, n))
PYEOF
	done
done
echo "load $(cut -d' ' -f1 /proc/loadavg)"
