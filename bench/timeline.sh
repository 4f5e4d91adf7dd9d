#!/usr/bin/env bash
# bench/timeline.sh: what an hour of a busy host costs with time kept (issue 16): a generated
# host-wide capture (bench/gen_hour.c: 1 hour at 1 kHz on 8 CPUs, each busy half the time, 40
# Python processes of 5 threads, 20,000 unique stacks whose hot set changes every 5 minutes), its
# capture size with and without the timeline, the time to write its page, the page's size, and
# the page's load and brush times in Chromium (tests/browser/timeline_perf.mjs). No root needed.
#
#   bash bench/timeline.sh [SECONDS [CPUS [PROCS]]]     (default 3600 8 40)
#
# Prints a markdown table and writes it to bench/timeline-results.md. Benchmarks, not tests: the
# page's budgets (TB_TIMELINE_LOAD_BUDGET_MS, TB_TIMELINE_BRUSH_BUDGET_MS) only print FAIL lines.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
secs=${1:-3600} cpus=${2:-8} procs=${3:-40}
out=$(mktemp -d /tmp/tb-bench-timeline-XXXXXX)
cd "$repo"
make -s -j2 tachyon-bpf build/libtachyon.a >&2
${CC:-gcc} -O2 -Wall -Wextra -std=gnu11 -Iinclude -Iuser bench/gen_hour.c build/libtachyon.a \
	$(make -s print-ldlibs) -o "$out/gen_hour"
now() { date +%s.%N; }
t0=$(now)
what=$("$out/gen_hour" "$out/hour.tbp" "$secs" "$cpus" "$procs")
t1=$(now)
./tachyon-bpf render -q "$out/hour.tbp" -o "$out/hour.html" -o "$out/plain.folded"
t2=$(now)
size() { stat -c %s "$1"; }
mb() { python3 -c "import sys; print('%.1f MB' % (int(sys.argv[1]) / 1e6))" "$1"; }
perf=$(cd tests/browser && . ../lib/browser-env.sh && browser_env "$PWD" >/dev/null 2>&1 &&
	node timeline_perf.mjs "$out/hour.html" --runs 3 --label hour 2>&1 | grep -E '^# timeline perf|FAIL' || true)
{
	echo "## Timeline: a generated host-wide capture ($secs s, $cpus CPUs at 1 kHz, $procs processes)"
	echo
	echo "$what"
	echo
	echo "| what | value |"
	echo "|---|---|"
	echo "| capture (.tbp, with the timeline) | $(mb "$(size "$out/hour.tbp")") |"
	echo "| generating it (gen_hour, writes the capture) | $(python3 -c "print('%.1f s' % ($t1 - $t0))") |"
	echo "| render .html + .folded from it | $(python3 -c "print('%.1f s' % ($t2 - $t1))") |"
	echo "| page (.html) | $(mb "$(size "$out/hour.html")") |"
	echo "| page in Chromium | ${perf:-not measured (no chromium)} |"
	echo
	echo "Measured $(date -u +%Y-%m-%d) on $(nproc) CPUs ($(uptime | sed 's/.*load average/load average/'))."
} | tee "$here/timeline-results.md"
rm -rf "$out"
