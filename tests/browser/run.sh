#!/usr/bin/env bash
# run.sh: the one driver of the browser tests: Debian's chromium through playwright-core
# (tests/lib/browser-env.sh installs both), one page test per page (*.test.mjs on harness.mjs).
#
#   tests/browser/run.sh SUITE [ARGS]
#
#   synthetic   generated flame graph pages (gen_profile.py, make_page.py): "realistic" (hostile
#               names, 3 threads in 2 processes, opcodes) with the bare-template checks, and a
#               100,000-node one as version 1 and version 2 (v1_to_v2.py), with the timing
#               budgets on version 2
#   real        pages of real captures (root: BPF): tests/workloads/threads.py (alpha_work) and
#               hostile.py (Thread.run), with the timing budgets
#   real PAGE.html PROFILE.json [FUNCTION] [PAGE2.html PROFILE2.json [FUNCTION2] ...]
#               the same test on pages written by `tachyon-bpf -o x.html -o x.json`
#   diff        differential pages: diffcase.py `baseline` vs `current` (slow_function faster,
#               fast_function slower, medium_function gone, new_function new), and each against
#               an empty capture (a sleeping process), through `tachyon-bpf diff`
#   opcodes     the Instructions panel on captures of opcodes.py (hot: its HOT-LINE, specialized
#               BINARY_OP_ADD_INT and LOAD_ATTR_INSTANCE_VALUE) and threads.py (burn, per thread)
#   heatmap     source heatmap pages: a generated one from real code (gen_data.py: opcodes.py
#               with real dis positions, a hostile file, files without source, a 20,000-line
#               file) with the bare-template and broken-data checks, and a capture of opcodes.py
#   heatmap PAGE.heatmap.html HEATMAP.json [FUNCTION] ...   the same test on given pages
#   kinds       native and kernel frames (kinds.test.mjs): colours, legend, the "hide native" /
#               "hide kernel" toggles on a generated page (gen_profile.py kinds; the realistic page
#               has no toggles), on the golden capture with hidden kernel symbols, then on a
#               capture of tests/workloads/syscalls.py with --kernel (root: BPF) in wall mode
#   timeline    the timeline strip (timeline.test.mjs) on a capture of tests/workloads/phases.py
#               (root: BPF): brushing each phase shows what `render --from --to` writes, >= 95%
#               that phase's function; mouse drag, hover, keys, reset
#   tasks       asyncio task frames (tasks.test.mjs): the task selector on a --async-aware capture of
#               tests/workloads/async_tasks.py with hostile task names (root: BPF; sid 3.14)
#   v2          tree JSON version 2 (v2.test.mjs): every golden capture and the synthetic realistic and
#               kinds profiles as pages from version 1 and from version 2 (v1_to_v2.py; and from the
#               binary's own when it writes one): the same objects and view; hostile version-2 data
#               refused with one line; the bare template opens a version-2 file; a 100,000-deep chain
#   preview     a big tree's page (preview.test.mjs): bench/gen_big.c's capture of 100,000 unique
#               stacks (1.7 million tree nodes) with version-2 and version-1 data: the preview drawn
#               first, within TB_PREVIEW_BUDGET_MS (1000), the same wide frames as the whole view, a
#               zoom and a search kept when the data comes in, a broken preview passed over; a small
#               capture's page has none
#   layout      the flame graph page at 1280x800, 1400x900 and 1920x1080 (layout.test.mjs) on
#               captures (root: BPF) of deep.py (60 frames deep: graph width, one-line toolbars,
#               labels whole, no jump on zoom, the graph back after Esc, timeline lanes, dark
#               strip), threads.py in wall mode (the sidebar's stats), an idle process (0 samples:
#               the message) and threads.py at 29 Hz for 0.6 s (< 50 samples: the banner); the
#               width and toolbars of a diff of the two, and of the synthetic kinds and realistic pages
#   all         every suite above, one after the other
#
# Environment: TB_PYTHON (/usr/bin/python3.11) runs the workloads; budgets TB_FIRST_RENDER_BUDGET_MS
# (2000), TB_INTERACTION_BUDGET_MS (500), TB_OPEN_BUDGET_MS (3000). The binary is rebuilt when a
# page template is newer. Generated pages, JSONs and captures go to tests/browser/out/SUITE/,
# screenshots and exported SVGs to tests/browser/artifacts/. Every line is "ok - ..." or
# "FAIL - ..."; the last one is "N passed, N failed"; the exit status is non-zero on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=$repo/tachyon-bpf
py=${TB_PYTHON:-/usr/bin/python3.11}
suite=${1:-}
[ $# -gt 0 ] && shift
out=$here/out/$suite
wl=$repo/tests/workloads

STEPS_NAME="run.sh $suite"
# shellcheck source=../lib/steps.sh
. "$repo/tests/lib/steps.sh"
# shellcheck source=../lib/browser-env.sh
. "$repo/tests/lib/browser-env.sh"

# counted CMD...: runs CMD (output shown) and adds its closing "N passed, N failed" to the totals
counted() {
	local log last
	log=$(mktemp)
	"$@" | tee "$log"
	last=$(tail -n 1 "$log")
	rm -f "$log"
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		pass=$((pass + BASH_REMATCH[1]))
		fail=$((fail + BASH_REMATCH[2]))
		[ "${BASH_REMATCH[1]}" -gt 0 ] || [ "${BASH_REMATCH[2]}" -gt 0 ] || bad "$* checked nothing"
	else
		bad "$* did not report its totals"
	fi
}

# as_v1 FILE: FILE itself, or for a tree JSON of version 2 (what tachyon-bpf writes by default) a
# version-1 copy next to it (scripts/tree_json.py): the page tests read the data as version 1
# while the pages themselves carry what the binary wrote
as_v1() {
	local f=$1
	if [[ $f == *.json && -f $f ]] && head -c 64 "$f" | grep -q '"format":"tachyon-bpf-tree","version":2'; then
		python3 "$repo/scripts/tree_json.py" --v1 "$f" >"${f%.json}.v1.json" || bad "$f: not readable as version 1"
		f=${f%.json}.v1.json
	fi
	printf '%s\n' "$f"
}

# page_test TEST.test.mjs ARGS...: one page test
page_test() {
	local test=$1 a args=()
	shift
	for a in "$@"; do args+=("$(as_v1 "$a")"); done
	counted node "$here/$test" "${args[@]}"
}

# pages TEST [OPTION...] -- PAGE.html DATA.json [FUNCTION] ...: the test on each group, labelled
# by the page's name
pages() {
	local test=$1 opts=() page json fn
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	while [ $# -gt 0 ]; do
		page=$1 json=${2:-} fn=()
		[ -n "$json" ] || { bad "$page needs its JSON"; finish; }
		shift 2
		if [ $# -gt 0 ] && [[ $1 != *.html ]]; then fn=("$1"); shift; fi
		page_test "$test" "$page" "$json" "${fn[@]}" "${opts[@]}" --label "$(basename "$page" .html)"
	done
}

# The page templates are embedded at build time: rebuild when one is newer than the binary.
need_binary() {
	local t
	for t in "$repo"/user/output/assets/*.html; do
		if [ ! -x "$bin" ] || [ "$t" -nt "$bin" ]; then
			step "make (templates embedded in the binary)" make -C "$repo" -s
			break
		fi
	done
	[ -x "$py" ] || { bad "python $py not found (set TB_PYTHON)"; finish; }
}

fresh_out() { rm -rf "$out" && mkdir -p "$out"; }
quiet() { "$@" >/dev/null; }   # a workload that prints

suite_synthetic() {
	fresh_out
	step "generate the realistic profile" python3 "$here/gen_profile.py" realistic "$out/realistic.json"
	step "make its page" python3 "$here/make_page.py" "$out/realistic.json" "$out/realistic.html" \
		--title 'tachyon-bpf: synthetic <realistic> "3 threads"'
	step "generate a 100,000-node profile" python3 "$here/gen_profile.py" big "$out/big.json" --nodes 100000
	step "make its page" python3 "$here/make_page.py" "$out/big.json" "$out/big.html" --title 'tachyon-bpf: synthetic 100k nodes'
	step "its version 2" python3 "$here/v1_to_v2.py" "$out/big.json" "$out/big.v2.json"
	step "make that page" python3 "$here/make_page.py" "$out/big.v2.json" "$out/big.v2.html" --title 'tachyon-bpf: synthetic 100k nodes (v2)'
	page_test flamegraph.test.mjs "$out/realistic.html" "$out/realistic.json" --template "$repo/user/output/assets/flamegraph.html"
	# The budgets on the data `-o x.html` writes (version 2: first render ~0.9 s here); the
	# version-1 page (`--json-version 1`: 22 MB of JSON to inflate and parse, ~1.6-1.9 s) is
	# checked for everything but time.
	page_test flamegraph.test.mjs "$out/big.html" "$out/big.json" --label big-v1
	page_test flamegraph.test.mjs "$out/big.v2.html" "$out/big.v2.json" --perf --label big
}

suite_real() {
	if [ $# -eq 0 ]; then
		need_binary
		fresh_out
		step "capture threads.py (2 s at 499 Hz)" quiet "$bin" -q -r 499 -o "$out/threads.html" -o "$out/threads.json" -- \
			"$py" "$wl/threads.py" 2
		step "capture hostile.py (2 s at 499 Hz)" "$bin" -q -r 499 -o "$out/hostile.html" -o "$out/hostile.json" -- \
			"$py" "$wl/hostile.py" 2
		set -- "$out/threads.html" "$out/threads.json" alpha_work "$out/hostile.html" "$out/hostile.json" Thread.run
	fi
	pages flamegraph.test.mjs --perf -- "$@"
}

suite_diff() {
	local rate=999 rounds=30 idle
	need_binary
	fresh_out
	step "capture baseline ($rounds rounds at $rate Hz)" "$bin" -q -r "$rate" -o "$out/base.tbp" -- "$py" "$wl/diffcase.py" baseline "$rounds"
	step "capture current" "$bin" -q -r "$rate" -o "$out/cur.tbp" -- "$py" "$wl/diffcase.py" current "$rounds"
	# an empty profile: a Python process that only sleeps has no on-CPU sample
	"$py" "$wl/idle.py" 10 &
	idle=$!
	sleep 0.5
	step "capture an empty profile (a sleeping process)" "$bin" -q -r "$rate" -d 0.5 -p "$idle" -o "$out/empty.tbp"
	kill "$idle" 2>/dev/null
	wait "$idle" 2>/dev/null
	step "tachyon-bpf diff baseline current" "$bin" diff "$out/base.tbp" "$out/cur.tbp" -o "$out/diff.html" -o "$out/diff.json"
	step "tachyon-bpf diff baseline empty" "$bin" diff "$out/base.tbp" "$out/empty.tbp" -o "$out/empty-current.html" -o "$out/empty-current.json"
	step "tachyon-bpf diff empty current" "$bin" diff "$out/empty.tbp" "$out/cur.tbp" -o "$out/empty-baseline.html" -o "$out/empty-baseline.json"
	page_test diff.test.mjs "$out/diff.html" "$out/diff.json" --label diff --expect diffcase
	page_test diff.test.mjs "$out/empty-current.html" "$out/empty-current.json" --label empty-current --expect empty-current
	page_test diff.test.mjs "$out/empty-baseline.html" "$out/empty-baseline.json" --label empty-baseline --expect empty-baseline
}

suite_opcodes() {
	local secs=2 hot_line
	need_binary
	fresh_out
	step "capture opcodes.py ($secs s at 999 Hz)" "$bin" -q -r 999 -o "$out/op.html" -o "$out/op.json" -- "$py" "$wl/opcodes.py" "$secs"
	step "capture threads.py ($secs s at 499 Hz)" quiet "$bin" -q -r 499 -o "$out/t.html" -o "$out/t.json" -- "$py" "$wl/threads.py" "$secs"
	hot_line=$(grep -n 'HOT-LINE' "$wl/opcodes.py" | cut -d: -f1)
	if [ -n "$hot_line" ]; then ok "HOT-LINE of opcodes.py is line $hot_line"; else bad "no HOT-LINE marker in opcodes.py"; fi
	# the captures carry what the panel needs
	if TB_REPO=$repo python3 - "$out/op.json" "$out/t.json" <<'PY'; then ok "the JSONs have opcodes, thread_opcodes, instructions and lines on hot / burn"; else bad "JSON content (see above)"; fi
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["TB_REPO"], "scripts"))
import tree_json
def frames(n):
    if n.get("kind") == "frame":
        yield n
    for c in n.get("children", []):
        yield from frames(c)
okay = True
for path, fn in ((sys.argv[1], "hot"), (sys.argv[2], "burn")):
    d = tree_json.load(path)
    ns = [n for n in frames(d["tree"]) if n["name"] == fn]
    for k in ("opcodes", "thread_opcodes", "instructions", "lines"):
        if not ns or not all(n.get(k) for n in ns):
            print("  %s: %s nodes lack %r" % (path, fn, k))
            okay = False
sys.exit(0 if okay else 1)
PY
	page_test flamegraph.test.mjs "$out/op.html" "$out/op.json" hot --opcodes hot --perf --label opcodes \
		--expect-op BINARY_OP_ADD_INT=BINARY_OP --expect-op LOAD_ATTR_INSTANCE_VALUE=LOAD_ATTR --expect-line "${hot_line:-0}"
	page_test flamegraph.test.mjs "$out/t.html" "$out/t.json" burn --opcodes burn --perf --label opcodes-threads --thread-of alpha_work
}

suite_heatmap() {
	local gpy=$py
	if [ $# -eq 0 ]; then
		fresh_out
		# gen_data.py needs Python >= 3.11 (co_positions, adaptive disassembly)
		"$gpy" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null ||
			gpy=$(command -v python3.13 || command -v python3.12 || command -v python3.11 || echo python3)
		step "generate a heatmap from real code ($gpy)" "$gpy" "$here/gen_data.py" "$out/realistic.json"
		step "make its page" python3 "$here/make_page.py" "$out/realistic.json" "$out/realistic.html" \
			--title 'tachyon-bpf heatmap: synthetic <opcodes.py> "2 s" & more'
		page_test heatmap.test.mjs "$out/realistic.html" "$out/realistic.json" hot --template "$repo/user/output/assets/heatmap.html"
		need_binary
		step "capture opcodes.py (1.5 s at 999 Hz)" "$bin" -q -r 999 -o "$out/heat.heatmap.html" -o "$out/heat.heatmap.json" -- \
			"$py" "$wl/opcodes.py" 1.5
		set -- "$out/heat.heatmap.html" "$out/heat.heatmap.json"
	fi
	pages heatmap.test.mjs -- "$@"
}

suite_kinds() {
	fresh_out
	step "generate the kinds profile" python3 "$here/gen_profile.py" kinds "$out/kinds.json"
	step "make its page" python3 "$here/make_page.py" "$out/kinds.json" "$out/kinds.html" --title 'tachyon-bpf: synthetic kinds'
	step "generate the realistic profile" python3 "$here/gen_profile.py" realistic "$out/realistic.json"
	step "make its page" python3 "$here/make_page.py" "$out/realistic.json" "$out/realistic.html"
	page_test kinds.test.mjs "$out/kinds.html" "$out/kinds.json" --plain "$out/realistic.html" --label kinds
	need_binary
	step "render the golden capture with hidden kernel symbols" "$bin" render -q "$repo/tests/golden/captures/kernel-hidden-3.11.tbp" \
		-o "$out/hidden.html" -o "$out/hidden.json"
	page_test kinds.test.mjs "$out/hidden.html" "$out/hidden.json" --label kernel-hidden
	step "capture syscalls.py with --kernel, wall mode (2 s at 299 Hz)" "$bin" -q --kernel --mode wall -r 299 \
		-o "$out/kernel.html" -o "$out/kernel.json" -- "$py" "$wl/syscalls.py" 2
	page_test kinds.test.mjs "$out/kernel.html" "$out/kernel.json" --label kernel-capture
}

suite_timeline() {
	need_binary
	fresh_out
	local line start sw end t0 one two
	step "capture phases.py (2 s + 2 s at 999 Hz)" "$bin" -q -r 999 -o "$out/phases.tbp" -- "$py" "$wl/phases.py" 2 >"$out/phases.txt"
	line=$(grep '^phases ' "$out/phases.txt") || { bad "phases.py printed no phases"; return; }
	read -r _ start sw end <<<"$line"
	step "render the whole capture" "$bin" render -q "$out/phases.tbp" -o "$out/phases.html" -o "$out/phases.json"
	t0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["timeline"]["start_unix_ms"] / 1000)' "$out/phases.json")
	# phase one may begin a little before the first sample (the capture's start): from 0
	one=$(python3 -c 'import sys; a, b, t = map(float, sys.argv[1:]); print("%.3f,%.3f" % (max(0.0, a - t), b - t))' "$start" "$sw" "$t0")
	two=$(python3 -c 'import sys; a, b, t = map(float, sys.argv[1:]); print("%.3f,%.3f" % (a - t, b - t))' "$sw" "$end" "$t0")
	step "render phase one's slice" "$bin" render -q "$out/phases.tbp" --from "${one%,*}" --to "${one#*,}" -o "$out/one.json"
	step "render phase two's slice" "$bin" render -q "$out/phases.tbp" --from "${two%,*}" --to "${two#*,}" -o "$out/two.json"
	page_test timeline.test.mjs "$out/phases.html" "$out/phases.json" "$out/one.json" "$out/two.json" --one "$one" --two "$two"
}

suite_tasks() {
	local apy=/var/cache/tachyon-bpf/pythons/bin/python3.14
	need_binary
	fresh_out
	[ -x "$apy" ] || apy=/var/cache/tachyon-bpf/pythons/bin/python3.15
	step "capture async_tasks.py with --async-aware, hostile names (3 s at 499 Hz)" "$bin" -q --async-aware -r 499 \
		-o "$out/tasks.html" -o "$out/tasks.json" -- "$apy" "$wl/async_tasks.py" 3 hostile
	page_test tasks.test.mjs "$out/tasks.html" "$out/tasks.json" --label tasks
}

# v1_json CAPTURE OUT.json: the capture's tree JSON version 1 (before --json-version: the default)
v1_json() {
	"$bin" render -q "$1" --json-version 1 -o "$2" 2>/dev/null || "$bin" render -q "$1" -o "$2"
}

suite_v2() {
	need_binary
	fresh_out
	local c b pairs=() synth=()
	step "generate the realistic profile" python3 "$here/gen_profile.py" realistic "$out/realistic.json"
	step "generate the kinds profile" python3 "$here/gen_profile.py" kinds "$out/kinds.json"
	for c in "$repo"/tests/golden/captures/*.tbp; do
		b=$(basename "$c" .tbp)
		step "render $b (version 1)" v1_json "$c" "$out/$b.json"
	done
	for c in "$out"/*.json; do
		b=${c%.json}
		step "$(basename "$b"): version 2 and both pages" python3 "$here/v1_to_v2.py" "$c" "$b.v2.json"
		quiet python3 "$here/make_page.py" "$c" "$b.html" 2>/dev/null
		quiet python3 "$here/make_page.py" "$b.v2.json" "$b.v2.html" 2>/dev/null
		case $(basename "$b") in
		realistic | kinds) synth+=("$b.html" "$b.v2.html") ;;   # gen_profile.py's own key order
		*) pairs+=("$b.html" "$b.v2.html") ;;
		esac
		if [ -f "$repo/tests/golden/captures/$(basename "$b").tbp" ] &&
			"$bin" render -q "$repo/tests/golden/captures/$(basename "$b").tbp" --json-version 2 -o "$b.c2.json" 2>/dev/null; then
			quiet python3 "$here/make_page.py" "$b.c2.json" "$b.c2.html" 2>/dev/null
			pairs+=("$b.html" "$b.c2.html")   # the C writer's version 2
		fi
	done
	# (not page_test: these take version-2 files as they are)
	counted node "$here/v2.test.mjs" "${synth[@]}" --synthetic --label v2-synthetic
	counted node "$here/v2.test.mjs" "${pairs[@]}" --hostile "$out/threads-3.11.v2.json" --open "$out/realistic.v2.json" --deep 100000 --out "$out"
}

suite_preview() {
	need_binary
	fresh_out
	step "make build/libtachyon.a" make -C "$repo" -s build/libtachyon.a
	# shellcheck disable=SC2046 # the libraries, one word each
	step "build bench/gen_big.c" ${CC:-gcc} -O2 -Wall -Wextra -std=gnu11 -I"$repo/include" -I"$repo/user" \
		"$repo/bench/gen_big.c" "$repo/build/libtachyon.a" $(make -C "$repo" -s print-ldlibs) -o "$out/gen_big"
	step "generate 100,000 unique stacks" quiet "$out/gen_big" "$out/big.tbp" 100000
	step "render its page" "$bin" render -q "$out/big.tbp" -o "$out/big.html"
	step "render its page with version-1 data" "$bin" render -q "$out/big.tbp" --json-version 1 -o "$out/big-v1.html"
	step "render a small capture's page" "$bin" render -q "$repo/tests/golden/captures/threads-3.11.tbp" -o "$out/small.html"
	counted node "$here/preview.test.mjs" "$out/big.html" "$out/big-v1.html" --small "$out/small.html" --out "$out"
}

suite_layout() {
	local idle
	need_binary
	fresh_out
	# from a long directory, so the page's title (the command line) is longer than any header:
	# CI's checkout path made it wrap the toolbar where /work/main did not
	local long=$out/a-checkout-path-as-long-as-some-CI-runners-give-it-0123456789abcdef/tachyon-bpf/tests/workloads
	mkdir -p "$long" && cp "$wl/deep.py" "$long/"
	step "capture deep.py (60 frames, 1.5 s at 499 Hz)" "$bin" -q -r 499 -o "$out/deep.html" -o "$out/deep.json" -o "$out/deep.tbp" -- "$py" "$long/deep.py" 60 1.5
	step "capture threads.py in wall mode (1.5 s at 99 Hz)" quiet "$bin" -q --mode wall -r 99 -o "$out/wall.html" -o "$out/wall.json" -- \
		"$py" "$wl/threads.py" 1.5
	step "capture threads.py briefly (0.6 s at 29 Hz: under 50 samples)" quiet "$bin" -q -r 29 -o "$out/few.html" -o "$out/few.json" -o "$out/few.tbp" -- \
		"$py" "$wl/threads.py" 0.6
	"$py" "$wl/idle.py" 10 &
	idle=$!
	sleep 0.5
	step "capture an idle process (0 samples)" "$bin" -q -r 99 -d 0.5 -p "$idle" -o "$out/empty.html" -o "$out/empty.json"
	kill "$idle" 2>/dev/null
	wait "$idle" 2>/dev/null
	# the toolbars of pages with more controls: a diff (its own row), native and kernel frames
	# (two more buttons), hostile names in the selectors
	step "tachyon-bpf diff deep few" "$bin" diff "$out/deep.tbp" "$out/few.tbp" -o "$out/diff.html"
	step "generate the kinds profile" python3 "$here/gen_profile.py" kinds "$out/kinds.json"
	step "make its page" python3 "$here/make_page.py" "$out/kinds.json" "$out/kinds.html"
	step "generate the realistic profile" python3 "$here/gen_profile.py" realistic "$out/realistic.json"
	step "make its page" python3 "$here/make_page.py" "$out/realistic.json" "$out/realistic.html"
	page_test layout.test.mjs --deep "$out/deep.html" "$out/deep.json" --wall "$out/wall.html" "$out/wall.json" \
		--empty "$out/empty.html" "$out/empty.json" --few "$out/few.html" "$out/few.json" \
		--toolbars "$out/diff.html" --toolbars "$out/kinds.html" --toolbars "$out/realistic.html"
}

suite_all() {
	local s
	for s in synthetic real diff opcodes heatmap kinds timeline tasks v2 preview layout; do
		counted bash "$0" "$s"
	done
}

case $suite in
synthetic | real | diff | opcodes | heatmap | kinds | timeline | tasks | v2 | preview | layout | all) ;;
*)
	echo "usage: tests/browser/run.sh synthetic|real|diff|opcodes|heatmap|kinds|timeline|tasks|v2|preview|layout|all [PAGE.html DATA.json [FUNCTION]]..." >&2
	echo "0 passed, 1 failed"
	exit 2
	;;
esac
if [ "$suite" != all ]; then
	browser_env "$here" || { bad "chromium, node and playwright-core (tests/lib/browser-env.sh)"; finish; }
fi
"suite_$suite" "$@"
echo "# screenshots: $here/artifacts/"
finish
