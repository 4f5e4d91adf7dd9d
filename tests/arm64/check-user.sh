#!/bin/bash
# check-user.sh: the arm64 binary's user-space side, checked on an x86_64 host without arm64
# hardware: the static binary (make dist ARCH=arm64) runs under qemu-aarch64 (qemu-user-static)
# and must say exactly what the x86_64 binary says: --version, every command's help, the man
# page, the completions, the format lists; every golden capture rendered in every format and
# the diff outputs (tests/golden/check.py with the arm64 binary: the x86_64 SHA-256s of
# tests/golden/expected.txt). The BPF program is not loaded here, nor --native run (the arm64
# kernels in QEMU do that: the kernel matrix).
#
# Usage: tests/arm64/check-user.sh [ARM64_BINARY]    (default: builds dist/tachyon-bpf-VERSION-aarch64)
# Ends with "N passed, N failed"; exits non-zero on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
prog=${0##*/}
QEMU=qemu-aarch64-static
command -v "$QEMU" >/dev/null || { echo "$prog: $QEMU not found (apt-get install qemu-user-static)" >&2; exit 1; }

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

make -s -j2 tachyon-bpf >/dev/null || { echo "$prog: the x86_64 build failed" >&2; exit 1; }
X86=./tachyon-bpf
if [[ $# -ge 1 ]]; then
	ARM=$1
else
	make -s -j2 ARCH=arm64 dist >/dev/null || { echo "$prog: make dist ARCH=arm64 failed" >&2; exit 1; }
	ARM=dist/tachyon-bpf-$(cat VERSION)-aarch64
fi
[[ -x $ARM ]] || { echo "$prog: $ARM: no such binary" >&2; exit 1; }

what=$(file -b "$ARM")
if [[ $what == *"ARM aarch64"* && $what == *"statically linked"* ]]; then ok "file: $what"; else fail "file: $what"; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\nexec %s %q "$@"\n' "$QEMU" "$(realpath "$ARM")" >"$tmp/arm64-bin"
chmod +x "$tmp/arm64-bin"

# the same words, byte for byte, and the same exit status
same() { # name args...
	local name=$1 x a
	shift
	"$X86" "$@" >"$tmp/x86.out" 2>&1
	x=$?
	"$tmp/arm64-bin" "$@" >"$tmp/arm.out" 2>&1
	a=$?
	if [[ $x == "$a" ]] && cmp -s "$tmp/x86.out" "$tmp/arm.out"; then
		ok "$name ($(wc -c <"$tmp/x86.out") bytes, exit $x)"
	else
		fail "$name: exit $x vs $a; $(diff "$tmp/x86.out" "$tmp/arm.out" | head -n 4 | tr '\n' ' ')"
	fi
}
same "--version" --version
same "--help" --help
same "help" help
for c in record top render diff dump help version; do same "help $c" help "$c"; done
same "--help-man" --help-man
same "--completion bash" --completion bash
same "--completion zsh" --completion zsh
same "render --list-formats" render --list-formats
same "diff --list-formats" diff --list-formats
same "bad option" --no-such-option
same "render of a missing file" render "$tmp/none.tbp" -o "$tmp/none.html"
same "render of a capture with no samples" render --summary tests/golden/captures/empty-3.11.tbp -o "$tmp/e.txt"

# every golden capture in every format, compared with the x86_64 binary's expected hashes
python3 tests/golden/check.py --bin "$tmp/arm64-bin" --machine aarch64 >"$tmp/golden" 2>&1
rc=$?
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/golden" | tail -n 1)
if [[ $rc -eq 0 && -n $line ]]; then
	ok "golden outputs under qemu-aarch64: $line"
else
	grep '^FAIL' "$tmp/golden" | head -n 10
	fail "golden outputs under qemu-aarch64: exit $rc, ${line:-$(tail -n 3 "$tmp/golden")}"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
