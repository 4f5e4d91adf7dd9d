#!/usr/bin/env bash
# bench/big.sh: what rendering a capture of many unique stacks costs (issue 18): generated
# captures (bench/gen_big.c: 1,000,704 samples in N unique stacks of depth 8-30 over 3,000
# functions, one process, one thread, nothing pruned) rendered to a page and the tree JSON in one
# run (`render X.tbp -o x.html -o x.json`): tree nodes, wall time, peak RSS, output sizes; and
# when tests/browser's playwright-core is installed, the page in headless Chromium
# (bench/page_load.mjs: medians of 3 loads of the first render, the whole profile shown, a zoom and
# a thread switch). No root needed.
#
#   bash bench/big.sh [N ...]     (default 10000 100000 1000000)
#   TACHYON=/path/to/tachyon-bpf bash bench/big.sh ...   (another build, e.g. the one before a change)
#
# Prints a markdown table (append it to bench/big-results.md by hand, with the commit), then a
# second one of the capture file's own cost, the same captures made again: peak RSS and wall time of
# reading one (`render X.tbp -o x.txt`, the smallest output) and of reading and writing it again
# (`-o x.tbp`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000)
out=$(mktemp -d /tmp/tb-bench-big-XXXXXX)
trap 'rm -rf "$out"' EXIT
cd "$repo"
make -s -j2 tachyon-bpf build/libtachyon.a >&2
${CC:-gcc} -O2 -Wall -Wextra -std=gnu11 -Iinclude -Iuser bench/gen_big.c build/libtachyon.a \
	$(make -s print-ldlibs) -o "$out/gen_big"
tachyon=${TACHYON:-./tachyon-bpf}
mb() { python3 -c "import sys; print('%.1f' % (int(sys.argv[1]) / 1e6))" "$1"; }
# the page in headless Chromium (bench/page_load.mjs), when tests/browser's playwright-core is there
page_cols=0
[ -f tests/browser/node_modules/playwright-core/package.json ] && [ -x "${CHROMIUM:-/usr/bin/chromium}" ] && page_cols=1
if [ $page_cols = 1 ]; then
	echo "| unique stacks | tree nodes | render .html + .json: wall (s) | CPU user + sys (s) | peak RSS (MB) | page (MB) | JSON (MB) |" \
		"Chromium: first render / whole profile (ms from navigation) | zoom / thread switch (ms) |"
	echo "|---|---|---|---|---|---|---|---|---|"
else
	echo "| unique stacks | tree nodes | render .html + .json: wall (s) | CPU user + sys (s) | peak RSS (MB) | page (MB) | JSON (MB) |"
	echo "|---|---|---|---|---|---|---|"
fi
for n in "${sizes[@]}"; do
	nodes=$("$out/gen_big" "$out/big.tbp" "$n" | sed -n 's/.*, \([0-9]*\) tree nodes/\1/p')
	/usr/bin/time -f '%e %M %U %S' -o "$out/time" "$tachyon" render -q "$out/big.tbp" \
		-o "$out/big.html" -o "$out/big.json"
	read -r wall rss_kb user sys <"$out/time"
	page=""
	if [ $page_cols = 1 ]; then
		# "script S first F whole W zoom Z unzoom U thread T", or "- why"
		read -r _ _ _ first _ whole _ zoom _ _ _ thread < <(node bench/page_load.mjs "$out/big.html" 3)
		page=" $first / $whole | $zoom / $thread |"
	fi
	echo "| $n | $nodes | $wall | $(python3 -c "print('%.2f' % ($user + $sys))") | $((rss_kb / 1024)) | $(mb "$(stat -c %s "$out/big.html")") |" \
		"$(mb "$(stat -c %s "$out/big.json")") |$page"
	rm -f "$out/big.tbp" "$out/big.html" "$out/big.json"
done
echo
echo "| unique stacks | capture (MB) | render -o .txt: peak RSS (MB) | wall (s) | render -o .tbp: peak RSS (MB) | wall (s) |"
echo "|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
	"$out/gen_big" "$out/big.tbp" "$n" >/dev/null
	row="| $n | $(mb "$(stat -c %s "$out/big.tbp")") |"
	for o in txt tbp; do
		/usr/bin/time -f '%e %M' -o "$out/time" "$tachyon" render -q "$out/big.tbp" -o "$out/again.$o"
		read -r wall rss_kb <"$out/time"
		row="$row $((rss_kb / 1024)) | $wall |"
	done
	echo "$row"
	rm -f "$out/big.tbp" "$out/again.txt" "$out/again.tbp"
done
