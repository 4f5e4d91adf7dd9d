#!/bin/bash
# Fetches CPython 3.13, 3.14 and 3.15 from Debian's development suite (sid), through this
# machine's own apt sources, unpacks them under DESTDIR/root and writes wrappers
# DESTDIR/bin/python3.X that run them with sid's own dynamic loader and libraries.
#
# Usage: [TB_PYTHONS_ARCH=arm64] tests/setup-pythons.sh [DESTDIR]
#   TB_PYTHONS_ARCH: amd64 (default) or arm64, the packages' architecture; its facts (library
#   triplet, loader, the qemu user-mode emulator) are tests/kernels/arch/ARCH.sh's.
#   DESTDIR defaults to $TB_PYTHONS_DIR, else /var/cache/tachyon-bpf/pythons (arm64:
#   /var/cache/tachyon-bpf/arm64-pythons).
#   Idempotent: exits quickly when DESTDIR is already set up (TB_PYTHONS_FORCE=1 redoes it).
#   Prints one summary line per version; exits non-zero only if no version could be set up.
#
# Each wrapper execs DESTDIR/root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2, so the
# interpreter's pid is the wrapper's pid and /proc/PID/exe is sid's loader; the python binary
# itself is DESTDIR/root/usr/bin/python3.X (libpython linked statically, as Debian builds it).
# --argv0 makes sys.executable the wrapper (so subprocess/multiprocessing children also run
# under sid's loader), and DESTDIR/lib -> root/usr/lib lets Python find its stdlib from
# there (sys.prefix == DESTDIR) without PYTHONHOME. An arm64 wrapper (ld-linux-aarch64.so.1) on
# a machine that is not aarch64 runs the loader under qemu-aarch64-static (user mode: the layout
# check, TB_LAYOUT_ARCH=arm64 tests/layout/check_headers.sh); on an aarch64 machine (the kernel matrix's arm64
# guests have DESTDIR at the same path) it execs it as it is.
set -euo pipefail

VERSIONS=(3.13 3.14 3.15)
prog=${0##*/}
warn() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { warn "$*"; exit 1; }

# the architecture's facts: KARCH, KARCH_TRIPLET, KARCH_LOADER, KARCH_UNAME_M, KARCH_QEMU_USER
TB_KERNELS_ARCH=${TB_PYTHONS_ARCH:-amd64}
# shellcheck source=tests/kernels/arch.sh
. "$(dirname "${BASH_SOURCE[0]}")/kernels/arch.sh"
DEST=${1:-${TB_PYTHONS_DIR:-/var/cache/tachyon-bpf/${KARCH_CACHE_PREFIX}pythons}}
TRIPLET=$KARCH_TRIPLET
LOADER_NAME=${KARCH_LOADER##*/}
if [[ $(uname -m) != "$KARCH_UNAME_M" ]]; then
    command -v "$KARCH_QEMU_USER" >/dev/null || die "$KARCH_QEMU_USER not found (apt-get install qemu-user-static)"
fi

mkdir -p "$DEST"
DEST=$(realpath "$DEST")

# Quote a string for /bin/sh.
sq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

# True if the wrapper for version $1 runs.
wrapper_ok() { timeout 60 "$DEST/bin/python$1" -c pass >/dev/null 2>&1; }

# ---- quick exit when already set up -------------------------------------------------------
STAMP=$DEST/.setup-complete
quick_check() {
    [[ -s $STAMP && ${TB_PYTHONS_FORCE:-0} != 1 ]] || return 1
    local v deb lines=()
    while read -r v deb; do
        [[ -n $v ]] || continue
        wrapper_ok "$v" || return 1
        lines+=("python$v: already set up (sid $deb) -> $DEST/bin/python$v")
    done <"$STAMP"
    ((${#lines[@]})) || return 1
    printf '%s\n' "${lines[@]}"
}
quick_check && exit 0

# One setup at a time per DESTDIR.
exec 9>"$DEST/.lock"
flock 9
quick_check && exit 0   # someone else may have finished while we waited

# ---- private apt state (tests/sid-apt.sh) ------------------------------------------------------
# shellcheck source=tests/sid-apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/sid-apt.sh"
SID_APT_ARCH=$KARCH
rm -rf "$DEST/apt/debs"
sid_apt_init "$DEST/apt" deb || die "nothing set up"
sid_apt_fetch_dir "$APTD/debs"

# Prints those of the given packages that have a downloadable candidate.
with_candidate() {
    apt-cache "${APT_OPTS[@]}" policy "$@" 2>/dev/null | awk '
        /^[^ \t].*:$/ { pkg = $0; sub(/:$/, "", pkg); next }
        /^  Candidate:/ { if ($2 != "(none)") print pkg }'
}
candidate_version() {
    apt-cache "${APT_OPTS[@]}" policy "$1" 2>/dev/null | awk '/^  Candidate:/ { print $2; exit }'
}
# Prints the (Pre-)Depends of the given packages, first non-virtual alternative of each group.
depends_of() {
    apt-cache "${APT_OPTS[@]}" depends --important "$@" 2>/dev/null | awk '
        /^[ \t]*\|?(Pre)?Depends:/ {
            alt = ($1 ~ /^\|/); name = $2; sub(/:.*/, "", name)
            if (!done && name !~ /^</) { print name; done = 1 }
            if (!alt) done = 0
        }' | sort -u
}

# ---- pick packages -------------------------------------------------------------------------
declare -A PKGS_OF=()   # version -> its four python packages
ok_versions=()
for v in "${VERSIONS[@]}"; do
    want=("python$v-minimal" "libpython$v-minimal" "libpython$v-stdlib" "libpython$v")
    mapfile -t have < <(with_candidate "${want[@]}")
    missing=()
    for p in "${want[@]}"; do
        [[ " ${have[*]} " == *" $p "* ]] || missing+=("$p")
    done
    if ((${#missing[@]})); then
        echo "python$v: skipped: not in sid: ${missing[*]}"
        continue
    fi
    PKGS_OF[$v]="${want[*]}"
    ok_versions+=("$v")
done
((${#ok_versions[@]})) || die "none of ${VERSIONS[*]} is available in sid; nothing set up"

# Run-time libraries: libc6 plus the closure of the library packages (lib*, zlib*) that the
# interpreters depend on (libexpat1, zlib1g, libssl3t64, libffi8, libzstd1, ... whatever sid
# names them). Data/config packages (tzdata, netbase, media-types, ...) are not needed.
declare -A SEEN=()
all=()
frontier=(libc6)
for v in "${ok_versions[@]}"; do
    read -ra ps <<<"${PKGS_OF[$v]}"
    frontier+=("${ps[@]}")
done
while ((${#frontier[@]})); do
    new=()
    for p in "${frontier[@]}"; do
        [[ -n ${SEEN[$p]:-} ]] && continue
        SEEN[$p]=1
        all+=("$p")
        new+=("$p")
    done
    ((${#new[@]})) || break
    frontier=()
    while read -r d; do
        [[ ($d == lib* || $d == zlib*) && -z ${SEEN[$d]:-} ]] || continue
        [[ $d == libpython3.* ]] && continue   # ours are in SEEN already; never another version's
        frontier+=("$d")
    done < <(depends_of "${new[@]}")
done

mapfile -t avail < <(with_candidate "${all[@]}")
get=()
for p in "${all[@]}"; do
    if [[ " ${avail[*]} " == *" $p "* ]]; then get+=("$p"); else warn "no sid candidate for $p; skipping it"; fi
done

# ---- download and unpack -------------------------------------------------------------------
(cd "$APTD/debs" && sid_apt_run apt-get -q "${APT_OPTS[@]}" download "${get[@]}") ||
    die "apt-get download failed; nothing set up"

STAGE=$DEST/root.new
rm -rf "$STAGE"
mkdir -p "$STAGE"
for deb in "$APTD"/debs/*.deb; do
    dpkg -x "$deb" "$STAGE" || die "dpkg -x $deb failed"
done

# The loader: sid is usr-merged, so the real file is usr/lib/$TRIPLET (usr/lib64 is a symlink).
LOADER=""
for cand in usr/lib/$TRIPLET lib/$TRIPLET usr/lib64 lib64; do
    if [[ -f $STAGE/$cand/$LOADER_NAME && ! -L $STAGE/$cand/$LOADER_NAME ]]; then
        LOADER=$cand/$LOADER_NAME
        break
    fi
done
[[ -n $LOADER ]] || die "sid's libc6 has no $LOADER_NAME where expected"

rm -rf "${DEST:?}/root" "${DEST:?}/bin" "${DEST:?}/lib" "$STAMP"
mv "$STAGE" "$DEST/root"
rm -rf "$APTD/debs"
mkdir -p "$DEST/bin"
ln -s root/usr/lib "$DEST/lib"

# ---- wrappers and checks -------------------------------------------------------------------
LIBPATH=$DEST/root/usr/lib/$TRIPLET:$DEST/root/lib/$TRIPLET
good=0
for v in "${ok_versions[@]}"; do
    w=$DEST/bin/python$v
    real=$DEST/root/usr/bin/python$v
    debver=$(candidate_version "python$v-minimal")
    if [[ ! -x $real ]]; then
        echo "python$v: FAILED: $real missing after unpacking"
        continue
    fi
    execline="exec ${KARCH_QEMU_USER:+\$emulator }$(sq "$DEST/root/$LOADER") --library-path $(sq "$LIBPATH") --argv0 $(sq "$w") $(sq "$real") \"\$@\""
    {
        echo '#!/bin/sh'
        echo "# CPython $v from Debian sid (python$v-minimal $debver), written by tests/setup-pythons.sh."
        echo "# Runs under sid's own loader and libraries: /proc/PID/exe is the loader, the python"
        echo "# binary is $real."
        if [[ -n $KARCH_QEMU_USER ]]; then
            echo "# Elsewhere than on $KARCH_UNAME_M, under $KARCH_QEMU_USER (user mode)."
            echo "emulator=; [ \"\$(uname -m)\" = $KARCH_UNAME_M ] || emulator=$KARCH_QEMU_USER"
        fi
        echo "$execline"
    } >"$w"
    chmod 755 "$w"

    # Besides the basics, import the extension modules that use sid's libraries, and make sure
    # no library of the host's (one that ld.so found outside --library-path) got mapped. (The
    # host's locale data and gconv cache are used, which is fine.)
    check='import sys, threading, json, dis, importlib
assert sys.prefix == sys.argv[1], ("sys.prefix", sys.prefix)
assert sys.executable == sys.argv[2], ("sys.executable", sys.executable)
bad = []
for m in ("ssl", "hashlib", "ctypes", "sqlite3", "lzma", "bz2", "zlib", "decimal", "uuid",
          "curses", "readline", "zoneinfo", "pyexpat", "_multiprocessing"):
    try:
        importlib.import_module(m)
    except Exception:
        bad.append(m)
root = sys.argv[1] + "/root/"
maps = {l.split(None, 5)[5].strip() for l in open("/proc/self/maps") if len(l.split(None, 5)) == 6}
host = sorted(p for p in maps if ".so" in p.rsplit("/", 1)[-1] and not p.startswith(root))
assert not host, ("host libraries mapped", host)
print("%d.%d.%d" % sys.version_info[:3], ",".join(bad))'
    if ! out=$(timeout 60 "$w" -c "$check" "$DEST" "$w" 2>&1); then
        echo "python$v: FAILED: $w: $(tail -n 1 <<<"$out")"
        rm -f "$w"
        continue
    fi
    read -r pyver bad <<<"$out"
    extra=""
    if [[ -d $DEST/root/usr/lib/python$v/profiling/sampling ]]; then
        if timeout 60 "$w" -m profiling.sampling --help >/dev/null 2>&1; then
            extra=", profiling.sampling ok"
        else
            extra=", profiling.sampling --help FAILED"
        fi
    elif [[ $v == 3.15 ]]; then
        extra=", no profiling.sampling in its stdlib"
    fi
    [[ -z $bad ]] || extra+=", cannot import: $bad"
    echo "python$v: ok $pyver (sid $debver $KARCH$extra) -> $w"
    echo "$v $debver" >>"$STAMP"
    good=$((good + 1))
done

# Report shared libraries that some unpacked ELF file needs but nobody shipped (optional
# extension modules whose library is missing would fail only when imported).
declare -A HAVE_SO=()
while read -r so; do HAVE_SO[$so]=1; done < <(find "$DEST/root" \( -type f -o -type l \) -name '*.so*' -printf '%f\n')
unresolved=$( (find "$DEST/root/usr/bin" "$DEST/root/usr/lib" -type f \( -name '*.so*' -o -name 'python3.*' \) \
    -exec readelf -d {} + 2>/dev/null || true) | awk '/\(NEEDED\)/ { gsub(/[][]/, "", $NF); print $NF }' | sort -u |
    while read -r so; do [[ -n ${HAVE_SO[$so]:-} ]] || printf '%s ' "$so"; done)
[[ -z $unresolved ]] || warn "libraries needed but not unpacked: $unresolved"

((good > 0)) || die "no interpreter could be set up"
# The package lists and apt's caches are only needed while setting up.
sid_apt_clean
exit 0
