#!/bin/bash
# fetch-headers.sh: CPython's headers (internal ones included) of the versions Debian sid has a
# -dev package of (libpython3.X-dev: 3.13, 3.14, 3.15), for tests/layout/check_headers.sh: it
# measures the default build's offsets from them and, compiled with Py_GIL_DISABLED, the
# free-threaded build's, which is the only check of 3.14t and 3.15t where no free-threaded
# interpreter of theirs can be built (tests/setup-ft-pythons.sh).
#
# Usage: tests/layout/fetch-headers.sh [DESTDIR]
#   DESTDIR defaults to $TB_HEADERS_DIR, else /var/cache/tachyon-bpf/headers. The packages are
#   unpacked (dpkg -x) under DESTDIR/root: DESTDIR/root/usr/include/python3.X and
#   .../x86_64-linux-gnu/python3.X (pyconfig.h). Fetched through this machine's own apt sources
#   with the private sid apt state of tests/sid-apt.sh; nothing is installed.
#   Cached: a stamp (DESTDIR/.fetched) lists what is there; a later run with the stamp in place
#   takes no time (TB_HEADERS_FORCE=1 fetches again).
#   Prints one line per version; exits non-zero only if no header set is there afterwards.
set -euo pipefail

VERSIONS=(3.13 3.14 3.15)
DEST=${1:-${TB_HEADERS_DIR:-/var/cache/tachyon-bpf/headers}}

prog=${0##*/}
warn() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { warn "$*"; exit 1; }

mkdir -p "$DEST"
DEST=$(realpath "$DEST")
STAMP=$DEST/.fetched

have() { [[ -f $DEST/root/usr/include/python$1/internal/pycore_runtime.h ]]; }

# Prints the stamp's lines and succeeds when every header set it lists is there.
cached() {
    local v deb lines=()
    [[ -s $STAMP && ${TB_HEADERS_FORCE:-0} != 1 ]] || return 1
    while read -r v deb; do
        have "$v" || return 1
        lines+=("python$v headers: already fetched (sid $deb) -> $DEST/root/usr/include/python$v")
    done <"$STAMP"
    printf '%s\n' "${lines[@]}"
}
cached && exit 0

exec 9>"$DEST/.lock"
flock 9
cached && exit 0   # fetched by another run while this one waited

. "$(dirname "${BASH_SOURCE[0]}")/../sid-apt.sh"
sid_apt_init "$DEST/apt" deb || die "no sid package index: nothing fetched"
rm -rf "$APTD/debs"
sid_apt_fetch_dir "$APTD/debs"
stage=$DEST/root.new
rm -rf "$stage"
mkdir -p "$stage"
: >"$STAMP.new"
for v in "${VERSIONS[@]}"; do
    pkg=libpython$v-dev
    deb=$(apt-cache "${APT_OPTS[@]}" policy "$pkg" 2>/dev/null | awk '/^  Candidate:/ { print $2; exit }')
    if [[ -z $deb || $deb == "(none)" ]]; then
        echo "python$v headers: skipped: no $pkg in sid"
        continue
    fi
    if ! (cd "$APTD/debs" && sid_apt_run apt-get -q "${APT_OPTS[@]}" download "$pkg"); then
        echo "python$v headers: FAILED: $pkg $deb could not be downloaded"
        continue
    fi
    dpkg -x "$APTD/debs/${pkg}_"*.deb "$stage" || die "dpkg -x of $pkg failed"
    echo "$v $deb" >>"$STAMP.new"
    echo "python$v headers: sid $pkg $deb -> $DEST/root/usr/include/python$v"
done
sid_apt_clean
rm -rf "$APTD/debs"
[[ -s $STAMP.new ]] || { rm -rf "$stage" "$STAMP.new"; die "no header set could be fetched"; }
rm -rf "${DEST:?}/root"
mv "$stage" "$DEST/root"
mv "$STAMP.new" "$STAMP"
