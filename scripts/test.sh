#!/usr/bin/env bash
# test.sh: the one command that runs every test on a fresh Debian 12 machine:
# installs the packages it needs, fetches the extra CPython versions and
# their headers, builds the free-threaded ones (in the background), builds,
# then runs the unit, layer, golden-output, cross-check, integration and
# browser suites for real (as root: the integration tests load the BPF
# program), the free-threaded interpreters in every suite that runs each
# interpreter (TB_PYTHONS_FT=1) and in a second `top` run.  Ends with
# "total: N passed, N failed"; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "test: run as root (sudo): tests load the BPF program" >&2; exit 1; }

passed=0
failed=0
failures=()
log_dir=$(mktemp -d /tmp/tb-test.XXXXXX)

suite_times=()
tally() { # name rc passed failed [seconds]
	passed=$((passed + $3))
	failed=$((failed + $4))
	if [ "$2" -ne 0 ] && [ "$4" -eq 0 ]; then failed=$((failed + 1)); fi
	if [ "$2" -ne 0 ] || [ "$4" -ne 0 ]; then failures+=("$1"); fi
	echo "== $1: rc=$2 passed=$3 failed=$4${5:+ (${5} s)}"
	if [ -n "${5:-}" ]; then suite_times+=("$5 $1"); fi
}

suite() { # name command...: a suite counted as one test
	local name=$1 rc t0=$SECONDS
	shift
	echo "== running $name"
	"$@" 2>&1 | tee "$log_dir/$name.log"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -eq 0 ]; then tally "$name" 0 1 0 $((SECONDS - t0)); else tally "$name" "$rc" 0 0 $((SECONDS - t0)); fi
}

set -e
bash scripts/install-deps.sh test
# Free-threaded CPython 3.13t-3.15t, built from sid's sources (tests/setup-ft-pythons.sh): minutes
# on a fresh machine, so in the background and niced while the rest of the set-up, the build and
# the suites that run no interpreter go on; ft_wait before the first suite that may use them.
setsid nice -n 19 bash tests/setup-ft-pythons.sh >"$log_dir/setup-ft-pythons.log" 2>&1 &
ft_pid=$!
trap 'kill -- -$ft_pid 2>/dev/null' EXIT
trap 'exit 130' INT TERM HUP
ft_wait() {
	local t0=$SECONDS
	echo "== waiting for the free-threaded builds"
	wait "$ft_pid" || echo "test: no free-threaded CPython could be built"
	cat "$log_dir/setup-ft-pythons.log"
	echo "== free-threaded builds: waited $((SECONDS - t0))s"
}
bash tests/setup-pythons.sh || echo "test: some sid Pythons could not be set up (see above)"
# sid's arm64 3.13-3.15 (their own loader and libraries): the arm64 layout check under
# qemu-aarch64 and the arm64 kernel matrix's guests run them
TB_PYTHONS_ARCH=arm64 bash tests/setup-pythons.sh || echo "test: some sid arm64 Pythons could not be set up (see above)"
# bullseye's CPython 2.7 and 3.9: the messages test names unsupported versions by number
bash tests/setup-old-pythons.sh || echo "test: bullseye's Python 2.7/3.9 could not be set up (see above)"
# sid's CPython headers: the layout suite checks the default and free-threaded offsets with them
bash tests/layout/fetch-headers.sh || echo "test: sid's CPython headers could not be fetched (see above)"
make -s
echo "== set-up done: ${SECONDS} s"
set +e

# cmocka unit tests: count their tests
unit_bins=$(ls tests/unit/test_*.c | sed 's#tests/unit/\(.*\)\.c#build/tests/\1#')
make -s -j2 $unit_bins || failed=$((failed + 1))
for t in $unit_bins; do
	out=$("$t" 2>&1)
	rc=$?
	echo "$out" | tail -3
	run=$(echo "$out" | sed -n 's/.*\[==========\] \([0-9]*\) test(s) run.*/\1/p' | tail -1)
	bad=$(echo "$out" | sed -n 's/.*\[  FAILED  \] \([0-9]*\) test(s).*/\1/p' | tail -1)
	tally "unit $(basename "$t")" "$rc" $(( ${run:-0} - ${bad:-0} )) "${bad:-0}"
done

# the unit tests build without clang, bpftool or vmlinux.h (only the sampler and the task
# iterator, capture/taskregs_iter.c, need their skeletons)
rm -rf build/noclang
suite unit-without-clang make -s -j2 B=build/noclang CLANG=false BPFTOOL=false \
	$(ls tests/unit/test_*.c | sed 's#tests/unit/\(.*\)\.c#build/noclang/tests/\1#')
# includes point only down the layers (docs/architecture.md)
suite layers python3 scripts/check_layers.py


# scripts that end with "N passed, N failed"
counted() { # name command...
	local name=$1 rc line t0=$SECONDS
	shift
	echo "== running $name"
	"$@" 2>&1 | tee "$log_dir/$name.log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log_dir/$name.log" | tail -1)
	line=${line:-0 passed, 0 failed}
	tally "$name" "$rc" "$(echo "$line" | awk '{print $1}')" "$(echo "$line" | awk '{print $3}')" $((SECONDS - t0))
}

# every output format of fixed captures, byte for byte (SHA-256s)
counted golden python3 tests/golden/check.py
# the tree JSON's version 2 reads back as its version 1; hostile version-2 files refused
counted json-versions python3 tests/golden/roundtrip.py

# browser: Debian's chromium on every page kind (tests/browser/run.sh makes its own captures)
for page_suite in synthetic real diff opcodes heatmap kinds timeline tasks v2 preview layout; do
	counted "browser-$page_suite" bash tests/browser/run.sh "$page_suite"
done

# arm64: make dist ARCH=arm64's static binary under qemu-aarch64 says what the x86_64 one says
# (help, man page, completions, every golden output)
counted arm64-user bash tests/arm64/check-user.sh
# arm64 unwind rows against readelf on the sysroot's libc and ld.so (made by the arm64 build above:
# the unit run skips the test without it, this one requires it)
suite arm64-cfi env TB_REQUIRE_ARM64_SYSROOT=1 build/tests/test_cfi_arm64
# the layouts of Debian's arm64 builds under qemu-aarch64: bookworm's 3.11 against its headers,
# sid's 3.13-3.15 their own debug offsets == the built-in table; each walks its own memory
suite arm64-layout env TB_LAYOUT_ARCH=arm64 bash tests/layout/check_headers.sh

# install: help/version words, make install (man page, completions), make dist's static binary
# profiling in a chroot without libbpf/libdw/libelf, README's first screen to a page, the .deb
counted install python3 tests/install/check.py

ft_wait
# the suites that run every interpreter of tests/pythons.sh run the free-threaded ones too
with_ft=(env TB_PYTHONS_FT=1)
ft_python=$(bash tests/pythons.sh --ft 2>/dev/null | awk '$2 ~ /^ft-/ { print $3; exit }')
suite linetable-vs-cpython "${with_ft[@]}" bash tests/linetable/run.sh
suite layout-vs-headers bash tests/layout/check_headers.sh    # finds the free-threaded builds itself
suite opcodes-vs-dis "${with_ft[@]}" bash tests/opcodes/check.sh

# integration: real BPF, real Python processes
counted integration "${with_ft[@]}" /usr/bin/python3 tests/integration/run.py
# the program's bounded shape (kernels without bpf_loop, 5.10-5.16, booted by the kernel matrix
# below), forced here on each CPython version: walks, deep stacks, threads, wall mode, GIL waits,
# opcodes, kernel stacks, asyncio tasks (3.14, 3.15)
counted integration-bounded "${with_ft[@]}" TB_BPF_BOUNDED=1 TB_ONE_PER_VERSION=1 \
	TB_ONLY=test_slices,test_threads,test_deep,test_gil_wall,test_sleep_wall,test_opcodes,test_kernel_syscalls,async_tasks \
	/usr/bin/python3 tests/integration/run.py
counted timeline python3 tests/integration/timeline.py
counted exports /usr/bin/python3 tests/integration/exports.py
# native unwinding from .eh_frame: tables vs readelf, the user-space reference unwinder vs
# libdwfl on every interpreter (tests/unwind/run.py); then --native for real (tests/native/run.py)
counted unwind-reference python3 tests/unwind/run.py
counted native "${with_ft[@]}" python3 tests/native/run.py
# native names from debug files (python3.11-dbg, libc6-dbg), MiniDebugInfo and perf maps
counted native-names python3 tests/native/names.py
# side by side with Linux perf on the same process at once: leaves and caller->leaf pairs
# (compile and zlib loops; perf --call-graph dwarf on Debian 3.11, -g on sid 3.15)
counted perf-comparison python3 tests/perfcmp/run.py
counted python-thread-names "${with_ft[@]}" bash tests/pythreads/check.sh
counted top bash tests/top/run.sh
if [ -n "$ft_python" ]; then
	counted top-free-threaded env PYTHON="$ft_python" bash tests/top/run.sh
else
	echo "== top-free-threaded: no free-threaded CPython was built: not run"
fi
# the kernel matrix: 5.10, 6.1, 6.12 and 7.x booted under QEMU, the checks run inside each
counted kernels bash tests/kernels/run.sh
# the same checks on arm64: Debian's cloud-arm64 kernels under qemu-system-aarch64 (TCG) with
# the static binary of make dist ARCH=arm64; the oldest and the newest each run (6.1, 7.x:
# ~3 min, and ~2 min for sid's arm64 3.13-3.15 on 7.x), TB_KERNELS_ARM64="6.1 6.12 7.x" for
# all three (~4.6 min)
counted kernels-arm64 env TB_KERNELS_ARCH=arm64 bash tests/kernels/run.sh ${TB_KERNELS_ARM64:-6.1 7.x}
# the arm64 BPF object CO-RE-relocated against the arm64 kernels' BTF (the images the kernel
# matrix fetched): every relocation resolved
counted arm64-core bash tests/arm64/check-core.sh
counted hostile python3 tests/hostile/run.py
counted hostile-flood bash tests/hostile/flood.sh
suite fuzz-capture-reader bash tests/fuzz/run.sh "${TB_FUZZ_SECONDS:-60}"
# what --native reads of every mapped file: the unwind tables, evaluator ranges and symbols
suite fuzz-elf bash tests/fuzz/run-elf.sh "${TB_FUZZ_SECONDS:-60}"

# what failed, at the end: CI keeps only the run's last lines. Each failed suite's FAIL lines
# (else its log's last lines), cut to 300 characters, at most 12 lines a suite
for name in "${failures[@]}"; do
	log="$log_dir/$name.log"
	echo
	echo "== failed: $name"
	if [ ! -f "$log" ]; then
		echo "   (no log of its own: see its lines above)"
	elif grep -qE '(^|\] )FAIL' "$log"; then
		grep -E '(^|\] )FAIL' "$log" | head -n 12 | cut -c1-300 | sed 's/^/   /'
	else
		tail -n 12 "$log" | cut -c1-300 | sed 's/^/   /'
	fi
done

echo
echo "time per suite (s), the longest first; the whole run: ${SECONDS} s"
printf '%s\n' "${suite_times[@]}" | sort -rn | head -n 15 | sed 's/^/  /'
[ "${#failures[@]}" -eq 0 ] || echo "failed suites: ${failures[*]}"
echo "logs: $log_dir"
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
