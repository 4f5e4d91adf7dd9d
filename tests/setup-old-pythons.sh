#!/bin/bash
# setup-old-pythons.sh: CPython versions tachyon-bpf does NOT read (bullseye's 2.7 and 3.9), for
# the messages test: a target of an unsupported version must be named by its version with the
# supported range. Fetched through a private apt state of bullseye (tests/sid-apt.sh), unpacked
# under DEST/root; the binaries run with the host's own loader and libraries (bullseye's glibc is
# older than the host's). Prints "python2.7 PATH" / "python3.9 PATH" lines; idempotent.
#
# Usage: tests/setup-old-pythons.sh   (DEST: $TB_OLD_PYTHONS_DIR, else /var/cache/tachyon-bpf/old-pythons)
set -euo pipefail

DEST=${TB_OLD_PYTHONS_DIR:-/var/cache/tachyon-bpf/old-pythons}
PACKAGES=(python2.7-minimal libpython2.7-minimal python3.9-minimal libpython3.9-minimal)
prog=${0##*/}
warn() { printf '%s: %s\n' "$prog" "$*" >&2; }

runs() { "$DEST/root/usr/bin/python$1" -c pass >/dev/null 2>&1; }
show() { for v in 2.7 3.9; do runs "$v" && echo "python$v $DEST/root/usr/bin/python$v"; done; }

mkdir -p "$DEST"
exec 9>"$DEST/.lock"
flock 9
if runs 2.7 && runs 3.9; then show; exit 0; fi

. "$(dirname "${BASH_SOURCE[0]}")/sid-apt.sh"
sid_apt_init "$DEST/apt" deb bullseye || exit 1
work=$DEST/work
rm -rf "$work" "$DEST/root"
sid_apt_fetch_dir "$work"
(cd "$work" && sid_apt_run apt-get -q "${APT_OPTS[@]}" download "${PACKAGES[@]}") || exit 1
mkdir -p "$DEST/root"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$DEST/root"; done
rm -rf "$work"
sid_apt_clean
show
runs 2.7 && runs 3.9 || { warn "bullseye's python2.7/python3.9 do not run here"; exit 1; }
