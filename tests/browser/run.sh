#!/usr/bin/env bash
# Browser test of the flame graph page with Debian's chromium + playwright-core.
#
#   tests/browser/run.sh                          synthetic pages: realistic (hostile names,
#                                                 3 threads) and a 100,000-node one (--perf)
#   tests/browser/run.sh PAGE.html PROFILE.json [FUNCTION] [PAGE2.html PROFILE2.json [FUNCTION2] ...]
#   TB_PAGE=x.html TB_JSON=x.json [TB_FUNC=name] tests/browser/run.sh
#   tests/browser/run.sh --diff PAGE.html DIFF.json [--label L] [--expect CASE] [--diff PAGE2.html DIFF2.json ...]
#                                                 differential pages (`tachyon-bpf diff ... -o x.html -o x.json`)
#                                                 with diff.test.mjs; tests/browser/diff.sh makes real ones
#   tests/browser/run.sh --opcodes PAGE.html PROFILE.json FUNCTION [--label L] [--thread-of CALLER]
#                        [--expect-op NAME=BASE ...] [--expect-line N] [--opcodes PAGE2.html ...]
#                                                 the whole page test plus the Instructions panel of
#                                                 FUNCTION (opcodes, per thread with --thread-of);
#                                                 tests/browser/opcodes.sh makes real captures
#
# A page may be one written by `tachyon-bpf -o x.html` (with the tree JSON from `-o x.json`
# of the same capture) or built by make_page.py. Screenshots and the exported SVG go to
# tests/browser/artifacts/. Budgets: TB_FIRST_RENDER_BUDGET_MS (2000), TB_INTERACTION_BUDGET_MS (500).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

# shellcheck source=../lib/browser-env.sh
. "$repo/tests/lib/browser-env.sh"
browser_env "$here"

# Arguments (or TB_* variables) name the pages; without them, build synthetic ones.
args=("$@")
if [ ${#args[@]} -eq 0 ] && [ -n "${TB_PAGE:-}" ]; then
	args=("$TB_PAGE" "${TB_JSON:?TB_JSON must name the JSON of TB_PAGE}")
	[ -n "${TB_FUNC:-}" ] && args+=("$TB_FUNC")
fi

rc=0
total_pass=0 total_fail=0
run_one() { # [--script diff.test.mjs] test args...; accumulates the "N passed, N failed" lines
	local out script=flamegraph.test.mjs
	if [ "${1:-}" = --script ]; then script=$2; shift 2; fi
	out=$(mktemp)
	node "$here/$script" "$@" | tee "$out" || true
	local last
	last=$(tail -n 1 "$out")
	rm -f "$out"
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		total_pass=$((total_pass + BASH_REMATCH[1]))
		total_fail=$((total_fail + BASH_REMATCH[2]))
		[ "${BASH_REMATCH[2]}" -eq 0 ] && [ "${BASH_REMATCH[1]}" -gt 0 ] || rc=1
	else
		total_fail=$((total_fail + 1))
		rc=1
	fi
}

if [ ${#args[@]} -gt 0 ] && [ "${args[0]}" = --opcodes ]; then
	# groups: --opcodes PAGE JSON FUNCTION [options for flamegraph.test.mjs ...]
	i=0
	while [ $i -lt ${#args[@]} ]; do
		[ "${args[$i]}" = --opcodes ] || { echo "run.sh: expected --opcodes, got ${args[$i]}" >&2; exit 2; }
		page=${args[$((i + 1))]:-} json=${args[$((i + 2))]:-} fn=${args[$((i + 3))]:-}
		[ -n "$page" ] && [ -n "$json" ] && [ -n "$fn" ] || { echo "run.sh: --opcodes needs PAGE.html PROFILE.json FUNCTION" >&2; exit 2; }
		i=$((i + 4))
		opts=()
		while [ $i -lt ${#args[@]} ] && [ "${args[$i]}" != --opcodes ]; do opts+=("${args[$i]}"); i=$((i + 1)); done
		has_label=0
		for o in "${opts[@]}"; do [ "$o" = --label ] && has_label=1; done
		[ $has_label -eq 1 ] || opts+=(--label opcodes)
		run_one "$page" "$json" "$fn" --opcodes "$fn" --perf "${opts[@]}"
	done
elif [ ${#args[@]} -gt 0 ] && [ "${args[0]}" = --diff ]; then
	# groups: --diff PAGE JSON [options for diff.test.mjs ...]
	i=0
	while [ $i -lt ${#args[@]} ]; do
		[ "${args[$i]}" = --diff ] || { echo "run.sh: expected --diff, got ${args[$i]}" >&2; exit 2; }
		page=${args[$((i + 1))]:-} json=${args[$((i + 2))]:-}
		[ -n "$page" ] && [ -n "$json" ] || { echo "run.sh: --diff needs PAGE.html DIFF.json" >&2; exit 2; }
		i=$((i + 3))
		opts=()
		while [ $i -lt ${#args[@]} ] && [ "${args[$i]}" != --diff ]; do opts+=("${args[$i]}"); i=$((i + 1)); done
		run_one --script diff.test.mjs "$page" "$json" "${opts[@]}"
	done
elif [ ${#args[@]} -eq 0 ]; then
	gen="$here/out"
	mkdir -p "$gen"
	python3 "$here/gen_profile.py" realistic "$gen/realistic.json"
	python3 "$here/make_page.py" "$gen/realistic.json" "$gen/realistic.html" --title 'tachyon-bpf: synthetic <realistic> "3 threads"'
	python3 "$here/gen_profile.py" big "$gen/big.json" --nodes 100000
	python3 "$here/make_page.py" "$gen/big.json" "$gen/big.html" --title 'tachyon-bpf: synthetic 100k nodes'
	run_one "$gen/realistic.html" "$gen/realistic.json" --template "$repo/user/out/assets/flamegraph.html"
	run_one "$gen/big.html" "$gen/big.json" --perf --label big
else
	i=0
	while [ $i -lt ${#args[@]} ]; do
		page=${args[$i]} json=${args[$((i + 1))]:-}
		[ -n "$json" ] || { echo "run.sh: $page needs its JSON" >&2; exit 2; }
		i=$((i + 2))
		fn=()
		if [ $i -lt ${#args[@]} ] && [[ ${args[$i]} != *.html ]]; then fn=("${args[$i]}"); i=$((i + 1)); fi
		run_one "$page" "$json" "${fn[@]}" --perf --label "$(basename "$page" .html)"
	done
fi
echo "screenshots: $here/artifacts/"
echo "$total_pass passed, $total_fail failed"
exit $rc
