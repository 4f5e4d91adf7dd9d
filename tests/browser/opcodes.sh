#!/usr/bin/env bash
# End-to-end test of the Instructions panel of the flame graph page with the real binary (run as
# root: BPF):
#
#   1. captures tests/workloads/opcodes.py (hot() spends its time on one line of attribute loads
#      and integer adds) and tests/workloads/threads.py (three named threads burn CPU in burn());
#   2. runs the page test with the Instructions panel checks (run.sh --opcodes) on each:
#      - opcodes.py: selects hot, the rows equal the JSON's opcodes of that node (names, base
#        names, counts), BINARY_OP_ADD_INT / LOAD_ATTR_INSTANCE_VALUE listed as specialized,
#        the specialized share, locations and hot lines (the HOT-LINE of the workload);
#      - threads.py: selects the thread running alpha_work, then burn: the rows switch to that
#        thread's thread_opcodes; tooltip, all call paths and inverted view likewise.
#
#   tests/browser/opcodes.sh
#   TB_PYTHON=/usr/bin/python3.11 TB_SECONDS=2 tests/browser/opcodes.sh
#
# Pages and JSONs go to tests/browser/out/opcodes/, screenshots to tests/browser/artifacts/
# (opcodes.png, opcodes-dark.png, opcodes-per-thread.png, opcodes-threads*.png). The last line is "N passed, N failed";
# non-zero exit on failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/tachyon-bpf
py=${TB_PYTHON:-/usr/bin/python3.11}
secs=${TB_SECONDS:-2}
out=$here/out/opcodes
ops=$repo/tests/workloads/opcodes.py
thr=$repo/tests/workloads/threads.py

STEPS_NAME=opcodes.sh
# shellcheck source=../lib/steps.sh
. "$repo/tests/lib/steps.sh"

# The page template is embedded at build time: rebuild when it is newer than the binary.
if [ ! -x "$bin" ] || [ "$repo/user/out/assets/flamegraph.html" -nt "$bin" ]; then
	step "make (template embedded in the binary)" make -C "$repo" -s
fi
[ -x "$py" ] || { bad "python $py not found (set TB_PYTHON)"; finish; }
rm -rf "$out"
mkdir -p "$out"

step "capture opcodes.py ($secs s at 999 Hz)" "$bin" -q -r 999 -o "$out/op.html" -o "$out/op.json" -- "$py" "$ops" "$secs"
step "capture threads.py ($secs s at 499 Hz)" "$bin" -q -r 499 -o "$out/t.html" -o "$out/t.json" -- "$py" "$thr" "$secs" >/dev/null
hot_line=$(grep -n 'HOT-LINE' "$ops" | cut -d: -f1)
[ -n "$hot_line" ] && ok "HOT-LINE of opcodes.py is line $hot_line" || bad "no HOT-LINE marker in $ops"
# The captures carry what the panel needs.
if python3 - "$out/op.json" "$out/t.json" <<'PY'; then ok "the JSONs have opcodes, thread_opcodes, instructions and lines on hot / burn"; else bad "JSON content (see above)"; fi
import json, sys
def frames(n):
    if n.get("kind") == "frame":
        yield n
    for c in n.get("children", []):
        yield from frames(c)
okay = True
for path, fn in ((sys.argv[1], "hot"), (sys.argv[2], "burn")):
    d = json.load(open(path))
    ns = [n for n in frames(d["tree"]) if n["name"] == fn]
    for k in ("opcodes", "thread_opcodes", "instructions", "lines"):
        if not ns or not all(n.get(k) for n in ns):
            print("  %s: %s nodes lack %r" % (path, fn, k))
            okay = False
sys.exit(0 if okay else 1)
PY

log=$(mktemp)
bash "$here/run.sh" \
	--opcodes "$out/op.html" "$out/op.json" hot --label opcodes \
	--expect-op BINARY_OP_ADD_INT=BINARY_OP --expect-op LOAD_ATTR_INSTANCE_VALUE=LOAD_ATTR --expect-line "${hot_line:-0}" \
	--opcodes "$out/t.html" "$out/t.json" burn --label opcodes-threads --thread-of alpha_work | tee "$log"
last=$(tail -n 1 "$log")
rm -f "$log"
if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
	pass=$((pass + BASH_REMATCH[1]))
	fail=$((fail + BASH_REMATCH[2]))
else
	bad "browser test did not report its totals"
fi
finish
