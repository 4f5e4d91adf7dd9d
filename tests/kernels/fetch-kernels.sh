#!/bin/bash
# Fetches the Debian cloud kernels of the kernel matrix (tests/kernels/run.sh) and caches each
# one's vmlinuz as DESTDIR/NAME/vmlinuz, with DESTDIR/NAME/version ("RELEASE PACKAGE VERSION")
# and DESTDIR/NAME/config (its build config, for reading, where the package has it). The cloud
# flavours (-cloud-amd64, -cloud-arm64) have BTF, virtio and what the guest needs built in, so no
# modules are fetched.
#
# Usage: [TB_KERNELS_ARCH=arm64] tests/kernels/fetch-kernels.sh [NAME...]
#   NAME: 5.10 (bullseye), 6.1 (bookworm), 6.12 (trixie), 7.x (sid); the suite names are
#   accepted too. Default: all of the architecture's (tests/kernels/arch/ARCH.sh: amd64 all four,
#   arm64 6.1 6.12 7.x, cached as arm64-6.1 ...). DESTDIR is $TB_KERNELS_DIR, else
#   /var/cache/tachyon-bpf/kernels. Prints one line per kernel: NAME DIR RELEASE.
#   Cached: a kernel whose vmlinuz and version are there is not fetched again (no network
#   work); TB_KERNELS_FORCE=1 fetches anew. Exits non-zero if a kernel could not be fetched.
#
# Each suite has its own private apt state (tests/sid-apt.sh, under DESTDIR/apt/SUITE, arm64's
# under DESTDIR/apt/arm64-SUITE) made
# from this machine's own apt sources; the host's apt state is never touched. The kernel is
# the one linux-image-FLAVOUR of that suite depends on; where that image package holds
# no vmlinuz (sid: it is in linux-binary-RELEASE-FLAVOUR), the linux-binary-* package it
# depends on is unpacked instead.
set -euo pipefail

DEST=${TB_KERNELS_DIR:-/var/cache/tachyon-bpf/kernels}
prog=${0##*/}
warn() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { warn "$*"; exit 1; }

# shellcheck source=tests/kernels/arch.sh
. "$(dirname "${BASH_SOURCE[0]}")/arch.sh"

names=()
for a in "${@:-${KARCH_KERNELS[@]}}"; do
    n=$(karch_name "$a") || die "unknown $KARCH kernel '$a' (known: ${KARCH_KERNELS[*]} or their suites)"
    names+=("$n")
done

mkdir -p "$DEST"
exec 9>"$DEST/.lock"
flock 9

# shellcheck source=tests/sid-apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/../sid-apt.sh"
SID_APT_ARCH=$KARCH

# The (Pre-)Depends of package $1 that match the regex $2, one a line.
deps_matching() {
    apt-cache "${APT_OPTS[@]}" depends "$1" 2>/dev/null |
        awk -v re="$2" '/^[ \t]*\|?(Pre)?Depends:/ { n = $2; if (n ~ re && n !~ /^</) print n }'
}
candidate_version() {
    apt-cache "${APT_OPTS[@]}" policy "$1" 2>/dev/null | awk '/^  Candidate:/ { print $2; exit }'
}

# Unpacks package $1 (downloaded into $2) into $3; prints the vmlinuz path inside, if any:
# boot/vmlinuz-RELEASE, or usr/lib/modules/RELEASE/vmlinuz (sid's linux-binary-*).
unpack_vmlinuz() {
    local deb
    deb=$(compgen -G "$2/${1}_*.deb" | head -n 1 || true)
    [[ -n $deb ]] || return 1
    dpkg-deb -x "$deb" "$3" || return 1
    { compgen -G "$3/boot/vmlinuz-*" || compgen -G "$3/usr/lib/modules/*/vmlinuz" || true; } | head -n 1
}

fetch_one() { # name
    local name=$1 suite=${KSUITE[$1]} dir=$DEST/$KARCH_CACHE_PREFIX$1 img ver binpkg pkg vmlinuz work release
    if [[ -s $dir/vmlinuz && -s $dir/version && ${TB_KERNELS_FORCE:-0} != 1 ]]; then
        echo "$KARCH_CACHE_PREFIX$name $dir $(cut -d' ' -f1 "$dir/version") (cached)"
        return 0
    fi
    sid_apt_init "$DEST/apt/$KARCH_CACHE_PREFIX$suite" deb "$suite" || return 1
    img=$(deps_matching "linux-image-$KARCH_FLAVOUR" "^linux-image-.*-$KARCH_FLAVOUR\$" | head -n 1)
    [[ -n $img ]] || { warn "$suite: linux-image-$KARCH_FLAVOUR depends on no linux-image-*-$KARCH_FLAVOUR"; return 1; }
    work=$APTD/work
    rm -rf "$work"
    sid_apt_fetch_dir "$work/debs"
    mkdir -p "$work/root"
    (cd "$work/debs" && sid_apt_run apt-get -q "${APT_OPTS[@]}" download "$img") || return 1
    pkg=$img
    vmlinuz=$(unpack_vmlinuz "$img" "$work/debs" "$work/root") || { warn "$suite: cannot unpack $img"; return 1; }
    if [[ -z $vmlinuz ]]; then
        # sid: the image package is a small one that depends on linux-binary-RELEASE-...
        binpkg=$(deps_matching "$img" "^linux-binary-.*-$KARCH_FLAVOUR\$" | grep -v unsigned | head -n 1)
        [[ -n $binpkg ]] || { warn "$suite: no vmlinuz in $img and no linux-binary-* dependency"; return 1; }
        (cd "$work/debs" && sid_apt_run apt-get -q "${APT_OPTS[@]}" download "$binpkg") || return 1
        pkg=$binpkg
        vmlinuz=$(unpack_vmlinuz "$binpkg" "$work/debs" "$work/root") || { warn "$suite: cannot unpack $binpkg"; return 1; }
        [[ -n $vmlinuz ]] || { warn "$suite: no vmlinuz in $binpkg"; return 1; }
    fi
    ver=$(candidate_version "$pkg")
    if [[ $vmlinuz == */boot/vmlinuz-* ]]; then release=${vmlinuz##*/vmlinuz-}; else release=$(basename "$(dirname "$vmlinuz")"); fi
    rm -rf "$dir.new"
    mkdir -p "$dir.new"
    cp "$vmlinuz" "$dir.new/vmlinuz"
    for f in "$work/root/boot/config-$release" "$work/root/usr/lib/modules/$release/config"; do
        if [[ -f $f ]]; then cp "$f" "$dir.new/config"; break; fi
    done
    echo "$release $pkg $ver" >"$dir.new/version"
    rm -rf "$dir"
    mv "$dir.new" "$dir"
    rm -rf "$work"
    sid_apt_clean
    echo "$KARCH_CACHE_PREFIX$name $dir $release (fetched $pkg $ver)"
}

failed=0
for n in "${names[@]}"; do
    fetch_one "$n" || { warn "$KARCH_CACHE_PREFIX$n (${KSUITE[$n]}): not fetched"; failed=1; }
done
exit $failed
