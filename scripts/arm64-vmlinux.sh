#!/bin/bash
# arm64-vmlinux.sh: regenerates vmlinux/arm64/vmlinux.h, the kernel types the arm64 BPF
# program is compiled against, from the BTF of Debian bookworm's cloud-arm64 kernel (6.1, the
# oldest arm64 target: CO-RE relocates the program for 6.12 and 7.x at load time).
# The kernel package comes through a private apt state (tests/sid-apt.sh, arm64); its
# vmlinuz is a gzip-compressed raw Image (no ELF sections), so the BTF blob is found by its
# header (magic 0xeB9F, version 1) in the decompressed image and cut out by the sizes the header
# gives (scripts/btf_from_image.py), then handed to `bpftool btf dump file BLOB format c`.
#
# Usage: scripts/arm64-vmlinux.sh [OUT]      (OUT: vmlinux/arm64/vmlinux.h)
#   The downloaded package is cached in /var/cache/tachyon-bpf/arm64-vmlinux (TB_ARM64_VMLINUX_DIR).
set -euo pipefail

SUITE=bookworm
cd "$(dirname "$0")/.."
OUT=${1:-vmlinux/arm64/vmlinux.h}
DEST=${TB_ARM64_VMLINUX_DIR:-/var/cache/tachyon-bpf/arm64-vmlinux}

prog=${0##*/}
warn() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { warn "$*"; exit 1; }

mkdir -p "$DEST"
exec 9>"$DEST/.lock"
flock 9

if ! compgen -G "$DEST/linux-image-*-cloud-arm64_*.deb" >/dev/null; then
	# shellcheck source=tests/sid-apt.sh
	. tests/sid-apt.sh
	SID_APT_ARCH=arm64
	sid_apt_fetch_dir "$DEST/apt/tmp"
	export TMPDIR=$DEST/apt/tmp   # apt's download user writes gpgv's temporary files here
	sid_apt_init "$DEST/apt" deb "$SUITE" || die "cannot read $SUITE's arm64 packages"
	img=$(apt-cache "${APT_OPTS[@]}" depends linux-image-cloud-arm64 2>/dev/null |
		awk '/Depends: linux-image-.*-cloud-arm64$/ { print $2; exit }')
	[[ -n $img ]] || die "$SUITE: linux-image-cloud-arm64 depends on no linux-image-*-cloud-arm64"
	sid_apt_fetch_dir "$DEST/debs"
	(cd "$DEST/debs" && sid_apt_run apt-get -q "${APT_OPTS[@]}" download "$img:arm64") || die "cannot download $img"
	mv "$DEST"/debs/"$img"_*.deb "$DEST/"
	rm -rf "$DEST/debs"
	sid_apt_clean
fi
deb=$(compgen -G "$DEST/linux-image-*-cloud-arm64_*.deb" | head -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" --wildcards './boot/vmlinuz-*'
vmlinuz=$(compgen -G "$work/boot/vmlinuz-*" | head -n 1) || die "no vmlinuz in $deb"
python3 scripts/btf_from_image.py "$vmlinuz" "$work/btf" || exit 1
mkdir -p "$(dirname "$OUT")"
bpftool btf dump file "$work/btf" format c >"$work/vmlinux.h" || die "bpftool cannot read the BTF blob"
grep -q 'struct user_pt_regs {' "$work/vmlinux.h" || die "the BTF holds no struct user_pt_regs: not an arm64 kernel?"
mv "$work/vmlinux.h" "$OUT"
echo "$prog: $OUT from ${deb##*/} ($(wc -l <"$OUT") lines)"
