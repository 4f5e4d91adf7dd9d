#!/usr/bin/env bash
# Browser test of the source heatmap page with Debian's chromium + playwright-core.
#
#   tests/heatmap/run.sh                            a synthetic page built from real code (gen_data.py:
#                                                   tests/workloads/opcodes.py with real dis positions,
#                                                   a hostile file, files without source, a 20,000-line file)
#   tests/heatmap/run.sh PAGE.html HEATMAP.json [FUNCTION] [PAGE2.html HEATMAP2.json [FUNCTION2] ...]
#   TB_PAGE=x.html TB_JSON=x.heatmap.json [TB_FUNC=qualname] tests/heatmap/run.sh
#
# A page may be one written by `tachyon-bpf -o x.html` for a heatmap (with the JSON of the same
# capture from `-o x.heatmap.json`) or built by make_page.py. Screenshots go to
# tests/heatmap/artifacts/. Budget: TB_OPEN_BUDGET_MS (3000) to open the biggest file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

# shellcheck source=../lib/browser-env.sh
. "$repo/tests/lib/browser-env.sh"
browser_env "$here"

args=("$@")
if [ ${#args[@]} -eq 0 ] && [ -n "${TB_PAGE:-}" ]; then
	args=("$TB_PAGE" "${TB_JSON:?TB_JSON must name the JSON of TB_PAGE}")
	[ -n "${TB_FUNC:-}" ] && args+=("$TB_FUNC")
fi

rc=0
total_pass=0 total_fail=0
run_one() { # node test args...; accumulates the "N passed, N failed" lines
	local out last
	out=$(mktemp)
	node "$here/heatmap.test.mjs" "$@" | tee "$out" || true
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

if [ ${#args[@]} -eq 0 ]; then
	py=${PYTHON:-python3}
	if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
		py=$(command -v python3.13 || command -v python3.12 || command -v python3.11 || echo python3)
	fi
	gen="$here/out"
	mkdir -p "$gen"
	"$py" "$here/gen_data.py" "$gen/realistic.json"
	"$py" "$here/make_page.py" "$gen/realistic.json" "$gen/realistic.html" --title 'tachyon-bpf heatmap: synthetic <opcodes.py> "2 s" & more'
	run_one "$gen/realistic.html" "$gen/realistic.json" hot --template "$repo/user/out/assets/heatmap.html"
else
	i=0
	while [ $i -lt ${#args[@]} ]; do
		page=${args[$i]} json=${args[$((i + 1))]:-}
		[ -n "$json" ] || { echo "run.sh: $page needs its JSON" >&2; exit 2; }
		i=$((i + 2))
		fn=()
		if [ $i -lt ${#args[@]} ] && [[ ${args[$i]} != *.html ]]; then fn=("${args[$i]}"); i=$((i + 1)); fi
		run_one "$page" "$json" "${fn[@]}" --label "$(basename "$page" .html)"
	done
fi
echo "screenshots: $here/artifacts/"
echo "$total_pass passed, $total_fail failed"
exit $rc
