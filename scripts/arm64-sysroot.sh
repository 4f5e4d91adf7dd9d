#!/bin/bash
# arm64-sysroot.sh: the arm64 sysroot `make ARCH=arm64` builds against: Debian bookworm's
# arm64 packages of the libraries the agent links (headers, .so and .a files) and of glibc,
# fetched through a private apt state (tests/sid-apt.sh) with arm64 as its architecture and
# unpacked with dpkg-deb -x; absolute symbolic links are made relative so that they resolve
# inside the sysroot. The host's apt state is never touched.
#
# Usage: scripts/arm64-sysroot.sh [DESTDIR]
#   DESTDIR defaults to $TB_ARM64_SYSROOT_DIR, else /var/cache/tachyon-bpf/arm64-sysroot; the
#   sysroot is DESTDIR/root. Quiet and quick when it is already there (DESTDIR/root/.complete
#   names the packages and versions; TB_ARM64_SYSROOT_FORCE=1 fetches anew). Exits non-zero
#   with one line on stderr if a package cannot be fetched.
set -euo pipefail

SUITE=bookworm
# what the build includes and links (the -dev packages: headers, .so links, .a files; the
# runtime packages: the .so files those link to) and the C library itself
PACKAGES=(
	libbpf-dev libbpf1
	libelf-dev libelf1
	libdw-dev libdw1
	zlib1g-dev zlib1g
	liblzma-dev liblzma5
	libbz2-dev libbz2-1.0
	libzstd-dev libzstd1
	libc6-dev libc6 linux-libc-dev
)
DEST=${1:-${TB_ARM64_SYSROOT_DIR:-/var/cache/tachyon-bpf/arm64-sysroot}}

prog=${0##*/}
warn() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { warn "$*"; exit 1; }

STAMP=$DEST/root/.complete
cached() { [[ -s $STAMP && ${TB_ARM64_SYSROOT_FORCE:-0} != 1 ]] && [[ $(head -n 1 "$STAMP") == "packages: ${PACKAGES[*]}" ]]; }
cached && exit 0

mkdir -p "$DEST"
exec 9>"$DEST/.lock"
flock 9
cached && exit 0   # another build made it while this one waited

# shellcheck source=tests/sid-apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/sid-apt.sh"
SID_APT_ARCH=arm64
# apt's download user writes its temporary files (gpgv's) here, not in a /tmp it may not write
sid_apt_fetch_dir "$DEST/apt/tmp"
export TMPDIR=$DEST/apt/tmp
sid_apt_init "$DEST/apt" deb "$SUITE" || die "no arm64 sysroot made"
debs=$APTD/debs
rm -rf "$debs"
sid_apt_fetch_dir "$debs"
(cd "$debs" && sid_apt_run apt-get -q "${APT_OPTS[@]}" download "${PACKAGES[@]/%/:arm64}") ||
	die "cannot download the arm64 packages"

rm -rf "$DEST/root.new"
mkdir -p "$DEST/root.new"
for deb in "$debs"/*.deb; do
	dpkg-deb -x "$deb" "$DEST/root.new" || die "cannot unpack $deb"
done
# /lib/x -> /usr/lib/y points outside the sysroot: rewrite each as a relative link
while IFS= read -r link; do
	target=$(readlink "$link")
	rel=$(realpath -m --relative-to="$(dirname "$link")" "$DEST/root.new$target")
	ln -sfn "$rel" "$link"
done < <(find "$DEST/root.new" -type l -lname '/*')
{
	echo "packages: ${PACKAGES[*]}"
	for deb in "$debs"/*.deb; do echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)"; done
} >"$DEST/root.new/.complete"
rm -rf "$DEST/root"
mv "$DEST/root.new" "$DEST/root"
rm -rf "$debs"
sid_apt_clean
echo "$prog: arm64 sysroot ready in $DEST/root ($(($(wc -l <"$DEST/root/.complete") - 1)) packages of $SUITE)"
