#!/bin/bash
# The kernel matrix: boots Debian's cloud kernels in QEMU (TCG, no KVM needed) and runs the real
# profiling checks inside each (tests/kernels/guest_checks.py: shape, split, deep, threads,
# all-python, wall, gil, kernel, native, opcodes, container, dump) against the binary make dist
# builds from the tree when it runs (static: TB_KERNELS_BIN below), on x86_64 guests (default)
# or arm64 ones (TB_KERNELS_ARCH=arm64: make dist ARCH=arm64's binary, qemu-system-aarch64).
#
# Usage: [TB_KERNELS_ARCH=arm64] tests/kernels/run.sh [KERNEL...]
#   KERNEL: 5.10 6.1 6.12 7.x (Debian bullseye, bookworm, trixie, sid; those names work too).
#   Default: all of the architecture's (tests/kernels/arch/ARCH.sh): amd64 all four, arm64
#   6.1 6.12 7.x (named arm64-6.1 ... in the cache, the logs and the lines printed).
#   1. tests/kernels/fetch-kernels.sh: each kernel's vmlinuz, fetched once through a private apt
#      state into /var/cache/tachyon-bpf/kernels/NAME (then cached: no network work).
#   2. tests/kernels/initramfs.sh: busybox, python3.11, the static binary of make dist (so the
#      image has none of the agent's libraries; TB_KERNELS_BIN=./tachyon-bpf: the dynamic one
#      and its libraries), the workloads and the checks in one initramfs (rebuilt only when an
#      input changed: ~2 s, ~16 MB; arm64: bookworm's arm64 userland, tests/kernels/guest-root.sh,
#      and sid's arm64 3.13-3.15 with their own loader and libraries, ~29 MB).
#   3. each kernel booted with qemu-system-x86_64 (arm64: qemu-system-aarch64 -M virt) -accel tcg
#      -cpu max (arm64: max,pauth-impdef=on) -smp 2 -m 2048, one at a time; its /init
#      (tests/kernels/guest-init.sh) runs the checks, writes their lines to the results port
#      (a file here: amd64 the second serial port, arm64 a PCI serial port) and powers off. A
#      hard timeout ends a guest that hangs.
#   Prints each guest's lines prefixed with its kernel ("[6.1] ok split: ..."), each kernel's
#   time (the guest's boot and checks), and ends with the total "N passed, N failed" (and
#   ", N unsupported (KERNEL:CHECK ...)": checks whose feature the agent refuses on this
#   architecture, arch/ARCH.sh's KARCH_UNSUPPORTED, counted neither way). A kernel
#   that could not be fetched, did not boot or printed no final line counts as a failure (the
#   console log's last lines are printed). Exits non-zero on any failure.
#
# Environment:
#   TB_KERNELS_ARCH   amd64 (default) or arm64 (tests/kernels/arch.sh)
#   TB_KERNELS_LOGS   where the logs go (default /tmp/kernels-logs): NAME.console.log (the
#                     console: the kernel, /init, the checks' stderr), NAME.results (the results
#                     port), NAME.qemu.log
#   TB_KERNELS_JOBS   guests booted at once (default 1). On 2 cores two at once take ~100 s for
#                     the four instead of ~160 s (a TCG guest keeps about one core busy), but
#                     with two guests competing for the cores the split drifted to 2.8 pp off
#                     in the run measured (one at a time: <= 1.3 pp), too near its 3 pp bound
#   TB_KERNELS_CPU    QEMU's -cpu (default arch/ARCH.sh's KARCH_CPU: amd64 max, qemu64 measured
#                     the same; arm64 max,pauth-impdef=on)
#   TB_KERNELS_TIMEOUT  seconds a guest may take (default 400)
#   TB_CHECKS=a,b     only those checks (passed to the guests on the kernel command line)
#   TB_KERNELS_SID_ALL=1  sid's interpreters in the image (arm64: 3.13-3.15, tests/kernels/
#                     initramfs.sh) checked on every kernel of the run with every check (split,
#                     deep, threads, native, opcodes, dump on each: "ok split@3.14: ..."); by
#                     default on the run's last kernel only, split, threads and dump on each and
#                     deep, opcodes and native on one version each (guest_checks.py's SID_ONE)
#   TB_KERNELS_DIR    the cache (default /var/cache/tachyon-bpf/kernels)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${TB_KERNELS_DIR:-/var/cache/tachyon-bpf/kernels}
LOGS=${TB_KERNELS_LOGS:-/tmp/kernels-logs}
JOBS=${TB_KERNELS_JOBS:-1}
TIMEOUT=${TB_KERNELS_TIMEOUT:-400}
prog=${0##*/}
die() { printf '%s: %s\n' "$prog" "$*" >&2; exit 1; }
# shellcheck source=tests/kernels/arch.sh
. "$HERE/arch.sh"
CPU=${TB_KERNELS_CPU:-$KARCH_CPU}

[[ $JOBS =~ ^[1-9]$ ]] || die "TB_KERNELS_JOBS: '$JOBS' is not a small number"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "TB_KERNELS_TIMEOUT: '$TIMEOUT' is not a number of seconds"
[[ ${TB_CHECKS:-} =~ ^[a-z,-]*$ ]] || die "TB_CHECKS: '$TB_CHECKS' is not a list of check names"
command -v "$KARCH_QEMU" >/dev/null || die "$KARCH_QEMU not found (apt-get install $KARCH_QEMU_PKG)"

# the kernels asked for (kernels: fetch-kernels.sh's names), by their names in the cache (names)
kernels=() names=()
for a in "${@:-${KARCH_KERNELS[*]}}"; do
    for w in $a; do
        k=$(karch_name "$w") || die "unknown $KARCH kernel '$w' (${KARCH_KERNELS[*]}, or their Debian suites)"
        kernels+=("$k")
        names+=("$KARCH_CACHE_PREFIX$k")
    done
done

mkdir -p "$LOGS"
for n in "${names[@]}"; do rm -f "$LOGS/$n".*; done

# 1. the kernels (a kernel that is not fetched fails below, the others still run)
TB_KERNELS_DIR=$CACHE bash "$HERE/fetch-kernels.sh" "${kernels[@]}" >"$LOGS/fetch.log" 2>&1 ||
    { echo "fetch-kernels.sh failed:"; tail -n 20 "$LOGS/fetch.log"; }
# 2. the initramfs
t0=$(date +%s.%N)
if [[ -z ${TB_KERNELS_BIN:-} ]]; then
    make -s -C "$HERE/../.." dist "${KARCH_MAKE_ARGS[@]}" >&2 || die "make dist ${KARCH_MAKE_ARGS[*]} failed"
    TB_KERNELS_BIN=$HERE/../../dist/tachyon-bpf-$(cat "$HERE/../../VERSION")-$KARCH_UNAME_M
fi
IMG=$(TB_KERNELS_DIR=$CACHE TB_KERNELS_BIN=$TB_KERNELS_BIN bash "$HERE/initramfs.sh") || die "initramfs.sh failed"
printf 'initramfs: %s (%s MB, %.1f s)\n' "$IMG" "$(($(stat -c %s "$IMG") / 1048576))" \
    "$(echo "$(date +%s.%N) - $t0" | bc)"

# 3. the guests
boot() { # name
    local n=$1 t0 rc=0 results append="console=$KARCH_CONSOLE panic=-1 quiet TB_RESULTS=$KARCH_RESULTS_DEV"
    [[ -n ${TB_CHECKS:-} ]] && append+=" TB_CHECKS=$TB_CHECKS"
    [[ -n $KARCH_UNSUPPORTED ]] && append+=" TB_UNSUPPORTED=$KARCH_UNSUPPORTED"
    # sid's interpreters of the image (arm64: 3.13-3.15) on the run's last kernel, or on all
    if [[ $KARCH_GUEST_SID_PYTHONS == 1 && ${TB_KERNELS_SID_ALL:-0} == 1 ]]; then
        append+=" TB_SID_PYTHONS=all"
    elif [[ $KARCH_GUEST_SID_PYTHONS == 1 && $n == "${names[-1]}" ]]; then
        append+=" TB_SID_PYTHONS=1"
    fi
    # the program shape the agent must find by probing: 5.10 has no bpf_loop (5.17)
    if [[ $n == *5.10 ]]; then append+=" TB_SHAPE=bounded"; else append+=" TB_SHAPE=bpf_loop"; fi
    read -r -a results <<<"$(karch_results_args "$LOGS/$n.results")"
    t0=$(date +%s.%N)
    timeout -k 10 "$TIMEOUT" "$KARCH_QEMU" "${KARCH_QEMU_ARGS[@]}" -accel tcg -cpu "$CPU" -m 2048 -smp 2 \
        -no-reboot -nographic -monitor none -nic none \
        -kernel "$CACHE/$n/vmlinuz" -initrd "$IMG" -append "$append" \
        -serial "file:$LOGS/$n.console.log" "${results[@]}" \
        </dev/null >"$LOGS/$n.qemu.log" 2>&1 || rc=$?
    echo "$rc $(echo "$(date +%s.%N) - $t0" | bc)" >"$LOGS/$n.status"
}

running=0
for n in "${names[@]}"; do
    if [[ ! -s $CACHE/$n/vmlinuz ]]; then
        echo "127 0" >"$LOGS/$n.status"
        continue
    fi
    if ((JOBS == 1)); then
        boot "$n"
    else
        boot "$n" &
        running=$((running + 1))
        if ((running >= JOBS)); then wait -n || true; running=$((running - 1)); fi
    fi
done
wait

# 4. the report
passed=0 failed=0 unsupported=()
for n in "${names[@]}"; do
    read -r rc secs <"$LOGS/$n.status"
    version=$(cut -d' ' -f1 "$CACHE/$n/version" 2>/dev/null || echo "not fetched")
    echo "[$n] kernel $version"
    final=""
    if [[ -f $LOGS/$n.results ]]; then
        tr -d '\r' <"$LOGS/$n.results" >"$LOGS/$n.results.txt"
        while IFS= read -r line; do
            echo "[$n] $line"
            if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then final=$line; fi
            if [[ $line =~ ^unsupported\ ([a-z-]+): ]]; then unsupported+=("$n:${BASH_REMATCH[1]}"); fi
        done <"$LOGS/$n.results.txt"
    fi
    if [[ $final =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        passed=$((passed + BASH_REMATCH[1]))
        failed=$((failed + BASH_REMATCH[2]))
    else
        # the lines it did print count, and so does the missing end
        if [[ -f $LOGS/$n.results.txt ]]; then
            passed=$((passed + $(grep -c '^ok ' "$LOGS/$n.results.txt" || true)))
            failed=$((failed + $(grep -c '^FAIL ' "$LOGS/$n.results.txt" || true)))
        fi
        failed=$((failed + 1))
        if [[ $rc == 127 ]]; then
            echo "[$n] FAIL boot: kernel not fetched (see $LOGS/fetch.log)"
        else
            echo "[$n] FAIL boot: no final line (qemu exit $rc$([[ $rc == 124 ]] && echo ": timed out after $TIMEOUT s")); console's last lines:"
            tail -n 25 "$LOGS/$n.console.log" 2>/dev/null | tr -d '\r' |
                sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' -e "s/^/[$n]   /"
            tail -n 5 "$LOGS/$n.qemu.log" 2>/dev/null | sed "s/^/[$n]   qemu: /"
        fi
    fi
    up=$(sed -n 's/^# kernel .*; booted in \([0-9.]*\) s$/\1/p' "$LOGS/$n.results.txt" 2>/dev/null | head -n 1)
    took=$(sed -n 's/^# checks took \([0-9.]*\) s$/\1/p' "$LOGS/$n.results.txt" 2>/dev/null | head -n 1)
    printf '[%s] time: %.1f s (booted in %s s, checks %s s)\n' "$n" "$secs" "${up:-?}" "${took:-?}"
done
# a check the agent refuses on this architecture (guest_checks.py: TB_UNSUPPORTED) is named here
echo "$passed passed, $failed failed${unsupported[*]:+, ${#unsupported[@]} unsupported (${unsupported[*]})}"
((failed == 0))
