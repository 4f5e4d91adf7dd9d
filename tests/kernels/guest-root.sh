#!/bin/bash
# Prints the root directory whose userland the kernel matrix's initramfs (initramfs.sh) copies:
# busybox-static, bash, python3.11 and its stdlib, and the libraries they load. For the host's
# own architecture that is "/" (tests/kernels need busybox-static and python3.11 installed:
# scripts/install-deps.sh test). For another one (TB_KERNELS_ARCH=arm64) it is Debian bookworm's
# packages of that architecture (the PACKAGES below), fetched through a private apt state
# (tests/sid-apt.sh, under DESTDIR/apt/ARCH-bookworm) and unpacked with dpkg-deb -x into
# DESTDIR/root-ARCH-HASH (HASH: of the package list); then cached: fetched again only when PACKAGES change or
# TB_KERNELS_FORCE=1. DESTDIR is $TB_KERNELS_DIR, else /var/cache/tachyon-bpf/kernels.
set -euo pipefail

DEST=${TB_KERNELS_DIR:-/var/cache/tachyon-bpf/kernels}
prog=${0##*/}
warn() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { warn "$*"; exit 1; }
# shellcheck source=tests/kernels/arch.sh
. "$(dirname "${BASH_SOURCE[0]}")/arch.sh"

if [[ $(dpkg --print-architecture) == "$KARCH" ]]; then
    echo /
    exit 0
fi

# The guest's userland: the shells, the interpreter (python3.11-minimal has the binary,
# libpython3.11-stdlib the extension modules the checks load) and the libraries of all of them
# and of a dynamic agent (libbpf1, libelf1, libdw1); initramfs.sh copies only the ones named
# as NEEDED and fails on one that is missing here. libpython3.11-dev: the interpreter's headers,
# which tests/layout/check_headers.sh (TB_LAYOUT_ARCH=arm64) checks the layout against (not
# copied into the image).
PACKAGES=(
    busybox-static bash libc6 libgcc-s1 libtinfo6
    python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libpython3.11-dev
    libexpat1 zlib1g libffi8 libbz2-1.0 liblzma5 libuuid1 libcrypt1
    libbpf1 libelf1 libdw1 libzstd1
)
SUITE=bookworm
want="$SUITE ${PACKAGES[*]}"
# one directory per package list: a run with another list (an older tree) neither refetches
# nor removes this one while it is copied from
ROOT=$DEST/root-$KARCH-$(sha256sum <<<"$want" | cut -c1-8)
if [[ -s $ROOT/.packages && $(cat "$ROOT/.packages") == "$want" && ${TB_KERNELS_FORCE:-0} != 1 ]]; then
    echo "$ROOT"
    exit 0
fi

mkdir -p "$DEST"
exec 9>"$DEST/.root-$KARCH.lock"
flock 9
# shellcheck source=tests/sid-apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../sid-apt.sh"
SID_APT_ARCH=$KARCH
sid_apt_init "$DEST/apt/$KARCH-$SUITE" deb "$SUITE" >&2 || die "no $SUITE $KARCH package index"
work=$APTD/work
rm -rf "$work" "$ROOT.new"
sid_apt_fetch_dir "$work"
(cd "$work" && sid_apt_run apt-get -q "${APT_OPTS[@]}" download "${PACKAGES[@]}") || die "download failed"
mkdir -p "$ROOT.new"
for deb in "$work"/*.deb; do
    dpkg-deb -x "$deb" "$ROOT.new" || die "cannot unpack $deb"
done
# bookworm's packages put some libraries under /lib (merged /usr on the host): keep both paths
echo "$want" >"$ROOT.new/.packages"
rm -rf "$ROOT" "$work"
mv "$ROOT.new" "$ROOT"
sid_apt_clean
echo "$ROOT"
