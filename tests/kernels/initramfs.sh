#!/bin/bash
# Builds the initramfs that tests/kernels/run.sh boots under each kernel: a gzip'ed newc cpio
# with busybox-static (its applet links made by /init: busybox --install -s), bash, the binary
# as /tb/tachyon-bpf ($TB_KERNELS_BIN: run.sh gives make dist's static one, so none of the
# agent's libraries is in the image; default ./tachyon-bpf), /usr/bin/python3.11 with the part
# of its stdlib the checks use, bpftool (if installed, amd64 only; for debugging), the shared
# libraries all of these name as NEEDED (readelf -d, recursively, plus the dynamic loader), the
# workloads and helpers the checks reuse (tests/integration, tests/native, tests/workloads,
# scripts/tree_json.py, tests/golden/roundtrip.py, tests/pythons.sh: laid out under /tb as in
# the repo), tests/native/chain.c built here as /tb/lib/libchain.so (-O2 -fomit-frame-pointer,
# so only its .eh_frame unwinds it), tests/kernels/guest_checks.py, and
# tests/kernels/guest-init.sh as /init. Where arch/ARCH.sh says KARCH_GUEST_SID_PYTHONS=1
# (arm64), also sid's interpreters of that architecture (tests/setup-pythons.sh) at their host
# paths: wrappers, binaries, a trimmed stdlib, sid's loader and the libraries they need, listed
# in /tb/sid-pythons.txt for guest_checks.py.
#
# TB_KERNELS_ARCH (tests/kernels/arch.sh) picks the guest's architecture: amd64 (default) takes
# the userland from this machine ("/"), arm64 from Debian bookworm's arm64 packages
# (tests/kernels/guest-root.sh) and builds chain.c with aarch64-linux-gnu-gcc; the binary must
# be one for that architecture.
#
# Usage: tests/kernels/initramfs.sh [OUTDIR]
#   OUTDIR defaults to $TB_KERNELS_DIR, else /var/cache/tachyon-bpf/kernels. Prints the path
#   of the image: OUTDIR/initramfs-HASH.cpio.gz (arm64: OUTDIR/arm64-initramfs-HASH.cpio.gz), HASH being of every input (the files'
#   contents for the repo's files and the binary; path, size and mtime for the userland's
#   files), so an image is built only when an input changed (the architecture's older images
#   are removed).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUTDIR=${1:-${TB_KERNELS_DIR:-/var/cache/tachyon-bpf/kernels}}
prog=${0##*/}
die() { printf '%s: %s\n' "$prog" "$*" >&2; exit 1; }
# shellcheck source=tests/kernels/arch.sh
. "$HERE/arch.sh"

ROOTFS=$(bash "$HERE/guest-root.sh") || die "no $KARCH userland (tests/kernels/guest-root.sh failed)"
ROOTFS=${ROOTFS%/}
PY=$ROOTFS/usr/bin/python3.11
PYLIB=$ROOTFS/usr/lib/python3.11
BUSYBOX=$(realpath "$ROOTFS/bin/busybox" 2>/dev/null) || die "no $ROOTFS/bin/busybox (apt-get install busybox-static)"
[[ $(readelf -l "$BUSYBOX") != *INTERP* ]] || die "$BUSYBOX is not static (apt-get install busybox-static)"
BASH_BIN=$(realpath "$ROOTFS/bin/bash")
BPFTOOL=""
[[ -z $ROOTFS ]] && BPFTOOL=$(command -v bpftool || true)
BIN=${TB_KERNELS_BIN:-$ROOT/tachyon-bpf}
[[ -x $BIN ]] || die "no $BIN: run make first"
machine=$(readelf -h "$BIN" 2>/dev/null | sed -n 's/^ *Machine: *//p')
[[ $machine == "$KARCH_ELF_MACHINE" ]] || die "$BIN is not an $KARCH binary (ELF machine: ${machine:-none})"
[[ -x $PY && -d $PYLIB ]] || die "$PY (and $PYLIB) needed"
command -v "$KARCH_CC" >/dev/null || die "$KARCH_CC needed (for tests/native/chain.c)"

# The repo's files, at their paths under /tb.
REPO_FILES=(
    scripts/tree_json.py
    tests/pythons.sh
    tests/golden/roundtrip.py
    tests/integration/tb.py
    tests/integration/run.py
    tests/integration/async_aware.py
    tests/integration/messages.py
    tests/native/run.py
    tests/native/workload.py
    tests/native/chain.c
    tests/kernels/guest_checks.py
)
mapfile -t WORKLOADS < <(cd "$ROOT" && ls tests/workloads/*.py)
REPO_FILES+=("${WORKLOADS[@]}")

# The stdlib, less what no check uses (and the extension modules whose libraries are big; the
# static libpythons of config-3.X*, also python3.11-dbg's 47 MB config-3.11d-*), for version $1;
# sid's interpreters ($2 = sid) run only SID_CHECKS' workloads: also no asyncio, email, ...
stdlib_excludes() { # version [sid]
    local v=python$1 d
    for d in test idlelib tkinter ensurepip pydoc_data lib2to3 distutils turtledemo unittest \
        'config-3.*' site-packages dist-packages sqlite3 curses dbm; do
        printf '%s\n' "--exclude=$v/$d"
    done
    printf '%s\n' --exclude='*.opt-1.pyc' --exclude='*.opt-2.pyc'
    for d in '_test*' '_xxtestfuzz*' 'xxlimited*' '_ctypes_test*' '_ssl.*' '_hashlib.*' '_sqlite3.*' \
        '_curses*' '_dbm.*' 'readline.*' 'nis.*' 'ossaudiodev.*' '_tkinter.*'; do
        printf '%s\n' "--exclude=lib-dynload/$d"
    done
    [[ ${2:-} == sid ]] || return 0
    for d in asyncio email xml multiprocessing http urllib _pyrepl concurrent html xmlrpc wsgiref \
        tomllib zoneinfo venv pydoc.py pdb.py turtle.py _pydecimal.py 'encodings/cp*' \
        'encodings/mac_*' 'encodings/iso*' 'encodings/*_jp.py' 'encodings/*_kr.py' \
        'encodings/*_cn.py' 'encodings/*_tw.py' 'encodings/*_hk.py'; do
        printf '%s\n' "--exclude=$v/$d"
    done
    for d in '_decimal.*' '_gdbm.*' '_lzma.*' '_bz2.*' '_zoneinfo.*' '_codecs_*' '_multibytecodec.*' \
        '_asyncio.*' '_remote_debugging.*' '_interp*' 'pyexpat.*' '_elementtree.*'; do
        printf '%s\n' "--exclude=lib-dynload/$d"
    done
}
mapfile -t STDLIB_EXCLUDES < <(stdlib_excludes 3.11)

# sid's interpreters of this architecture (tests/setup-pythons.sh: their own loader and
# libraries under SID_DIR, wrappers SID_DIR/bin/python3.X), copied at the same paths, when
# arch/ARCH.sh asks for them (KARCH_GUEST_SID_PYTHONS); /tb/sid-pythons.txt lists them
SID_DIR="" SID_VERSIONS=()
if [[ $KARCH_GUEST_SID_PYTHONS == 1 ]]; then
    SID_DIR=${TB_PYTHONS_DIR:-/var/cache/tachyon-bpf/${KARCH_CACHE_PREFIX}pythons}
    TB_PYTHONS_ARCH=$KARCH bash "$ROOT/tests/setup-pythons.sh" "$SID_DIR" >/dev/null ||
        die "no sid $KARCH interpreters (tests/setup-pythons.sh failed)"
    SID_DIR=$(realpath "$SID_DIR")
    mapfile -t SID_VERSIONS < <(awk '{ print $1 }' "$SID_DIR/.setup-complete")
fi

# ---- the inputs' hash ----------------------------------------------------------------------
hash_inputs() {
    echo "$KARCH"
    (cd "$ROOT" && sha256sum "${REPO_FILES[@]}" tests/kernels/guest-init.sh tests/kernels/initramfs.sh \
        "tests/kernels/arch/$KARCH.sh")
    sha256sum <"$BIN"
    # the userland's files: path, size, mtime (a package upgrade changes them), the libraries too
    find "$BUSYBOX" "$BASH_BIN" "$PY" ${BPFTOOL:+"$BPFTOOL"} "$ROOTFS/lib/$KARCH_TRIPLET/" \
        "$ROOTFS/usr/lib/$KARCH_TRIPLET/" -maxdepth 1 -printf '%p %s %T@\n' 2>/dev/null | sort
    find "$PYLIB" -printf '%p %s %T@\n' | sort
    if [[ -n $SID_DIR ]]; then
        find "$SID_DIR/bin" "$SID_DIR/root" -path "$SID_DIR/root/usr/share" -prune -o -printf '%p %s %T@\n' | sort
    fi
    "$KARCH_CC" --version | head -n 1
}
HASH=$(hash_inputs | sha256sum | cut -c1-16)
mkdir -p "$OUTDIR"
exec 8>"$OUTDIR/.initramfs.lock"
flock 8
IMG=$OUTDIR/${KARCH_CACHE_PREFIX}initramfs-$HASH.cpio.gz
if [[ -s $IMG ]]; then
    echo "$IMG"
    exit 0
fi

# ---- stage ---------------------------------------------------------------------------------
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/tb-initramfs.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
cd "$STAGE"
mkdir -p bin sbin usr/bin usr/sbin lib64 proc sys dev tmp root run etc tb/lib

# busybox, and sh for /init (the other applet links: /init's busybox --install -s)
cp "$BUSYBOX" bin/busybox
ln -s busybox bin/sh
cp "$BASH_BIN" bin/bash
cp "$PY" usr/bin/python3.11
ln -sf python3.11 usr/bin/python3
[[ -n $BPFTOOL ]] && cp "$(realpath "$BPFTOOL")" usr/sbin/bpftool

# the repo's files under /tb, the init script, the chain library
for f in "${REPO_FILES[@]}"; do
    mkdir -p "tb/$(dirname "$f")"
    cp -p "$ROOT/$f" "tb/$f"
done
cp "$BIN" tb/tachyon-bpf
cp "$HERE/guest-init.sh" init
chmod 755 init
"$KARCH_CC" -O2 -fomit-frame-pointer -shared -fPIC -o tb/lib/libchain.so "$ROOT/tests/native/chain.c"

# the stdlib
mkdir -p usr/lib
tar -C "$ROOTFS/usr/lib" "${STDLIB_EXCLUDES[@]}" -cf - python3.11 | tar -C usr/lib -xf -

# copy_needed ROOT DIR...: the shared libraries that the ELF files named on stdin need (NEEDED,
# recursively), found in ROOT's DIRs (where the loader looks without an ld.so.cache), copied
# into the image at their paths under ROOT
needed() { readelf -dW "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }
copy_needed() {
    local root=$1 elf lib d found queue=()
    shift
    local -A copied=()
    mapfile -t queue
    while ((${#queue[@]})); do
        elf=${queue[0]}
        queue=("${queue[@]:1}")
        while read -r lib; do
            [[ -n $lib && -z ${copied[$lib]:-} ]] || continue
            found=""
            for d in "$@"; do
                if [[ -e $root$d/$lib ]]; then found=$d/$lib; break; fi
            done
            [[ -n $found ]] || die "$lib (needed by ${elf#./}) is not in $root$1${root:+ (tests/kernels/guest-root.sh: PACKAGES)}"
            mkdir -p ".$(dirname "$found")"
            cp -L "$root$found" ".$found"
            copied[$lib]=$found
            queue+=(".$found")
        done < <(needed "$elf")
    done
}
elf_files() { # DIR...: the dynamic ELF files under them
    find "$@" -type f \( -perm -u+x -o -name '*.so*' \) ! -name '*.py' -print0 |
        xargs -0 -r file -N -F '|' | awk -F'|' '/ELF .*dynamically linked|ELF .*shared object/ { print $1 }'
}
# the image's own userland (sid's interpreters, staged below, have theirs)
elf_files . | copy_needed "$ROOTFS" "/lib/$KARCH_TRIPLET" "/usr/lib/$KARCH_TRIPLET" /lib /usr/lib
mkdir -p ".$(dirname "$KARCH_LOADER")"
cp -L "$ROOTFS$KARCH_LOADER" ".$KARCH_LOADER" || die "the dynamic loader $KARCH_LOADER was not copied"

# sid's interpreters: wrappers, binaries, stdlibs, their loader and the libraries they need
if [[ -n $SID_DIR ]]; then
    S=.$SID_DIR
    mkdir -p "$S/bin" "$S/root/usr/bin" "$S/root/usr/lib"
    ln -s root/usr/lib "$S/lib"
    : >tb/sid-pythons.txt
    for v in "${SID_VERSIONS[@]}"; do
        cp "$SID_DIR/bin/python$v" "$S/bin/"
        cp "$SID_DIR/root/usr/bin/python$v" "$S/root/usr/bin/"
        mapfile -t excludes < <(stdlib_excludes "$v" sid)
        tar -C "$SID_DIR/root/usr/lib" "${excludes[@]}" -cf - "python$v" | tar -C "$S/root/usr/lib" -xf -
        echo "$v sid-static $SID_DIR/bin/python$v" >>tb/sid-pythons.txt
    done
    loader=$SID_DIR/root/usr/lib/$KARCH_TRIPLET/${KARCH_LOADER##*/}   # the wrappers' (sid is usr-merged)
    [[ -f $loader ]] || die "no $loader"
    mkdir -p ".$(dirname "$loader")"
    cp -L "$loader" ".$loader"
    elf_files "$S" | copy_needed "" "$SID_DIR/root/usr/lib/$KARCH_TRIPLET" "$SID_DIR/root/lib/$KARCH_TRIPLET"
fi

printf 'root:x:0:0:root:/root:/bin/sh\n' >etc/passwd
printf 'root:x:0:\n' >etc/group

# ---- pack ----------------------------------------------------------------------------------
rm -f "$OUTDIR/${KARCH_CACHE_PREFIX}initramfs-"*.cpio.gz
find . -mindepth 1 -print0 | sort -z | cpio --null -o -H newc --owner=0:0 --quiet | gzip -1 >"$IMG.tmp"
mv "$IMG.tmp" "$IMG"
echo "$IMG"
