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
# tests/kernels/guest-init.sh as /init.
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
# static libpythons of config-3.11*, also python3.11-dbg's 47 MB config-3.11d-*).
STDLIB_EXCLUDES=(
    --exclude=python3.11/test --exclude=python3.11/idlelib --exclude=python3.11/tkinter
    --exclude=python3.11/ensurepip --exclude=python3.11/pydoc_data --exclude=python3.11/lib2to3
    --exclude=python3.11/distutils --exclude=python3.11/turtledemo --exclude=python3.11/unittest
    --exclude='python3.11/config-3.11*' --exclude=python3.11/site-packages
    --exclude=python3.11/dist-packages --exclude=python3.11/sqlite3 --exclude=python3.11/curses
    --exclude=python3.11/dbm --exclude='*.opt-1.pyc' --exclude='*.opt-2.pyc'
    --exclude='lib-dynload/_test*' --exclude='lib-dynload/_xxtestfuzz*' --exclude='lib-dynload/xxlimited*'
    --exclude='lib-dynload/_ctypes_test*' --exclude='lib-dynload/_ssl.*' --exclude='lib-dynload/_hashlib.*'
    --exclude='lib-dynload/_sqlite3.*' --exclude='lib-dynload/_curses*' --exclude='lib-dynload/_dbm.*'
    --exclude='lib-dynload/readline.*' --exclude='lib-dynload/nis.*' --exclude='lib-dynload/ossaudiodev.*'
    --exclude='lib-dynload/_tkinter.*'
)

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

# the shared libraries of every ELF file in the image (NEEDED, recursively; found where the
# guest's loader looks without an ld.so.cache), at the same paths, and the loader
LIBDIRS=("/lib/$KARCH_TRIPLET" "/usr/lib/$KARCH_TRIPLET" /lib /usr/lib)
needed() { readelf -dW "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }
declare -A copied=()
mapfile -t queue < <(find . -type f \( -perm -u+x -o -name '*.so*' \) ! -name '*.py' -print0 |
    xargs -0 file -N -F '|' | awk -F'|' '/ELF .*dynamically linked|ELF .*shared object/ { print $1 }')
while ((${#queue[@]})); do
    elf=${queue[0]}
    queue=("${queue[@]:1}")
    while read -r lib; do
        [[ -n $lib && -z ${copied[$lib]:-} ]] || continue
        found=""
        for d in "${LIBDIRS[@]}"; do
            if [[ -e $ROOTFS$d/$lib ]]; then found=$d/$lib; break; fi
        done
        [[ -n $found ]] || die "$lib (needed by ${elf#./}) is not in $ROOTFS${ROOTFS:+ (tests/kernels/guest-root.sh: PACKAGES)}"
        mkdir -p ".$(dirname "$found")"
        cp -L "$ROOTFS$found" ".$found"
        copied[$lib]=$found
        queue+=(".$found")
    done < <(needed "$elf")
done
mkdir -p ".$(dirname "$KARCH_LOADER")"
cp -L "$ROOTFS$KARCH_LOADER" ".$KARCH_LOADER" || die "the dynamic loader $KARCH_LOADER was not copied"

printf 'root:x:0:0:root:/root:/bin/sh\n' >etc/passwd
printf 'root:x:0:\n' >etc/group

# ---- pack ----------------------------------------------------------------------------------
rm -f "$OUTDIR/${KARCH_CACHE_PREFIX}initramfs-"*.cpio.gz
find . -mindepth 1 -print0 | sort -z | cpio --null -o -H newc --owner=0:0 --quiet | gzip -1 >"$IMG.tmp"
mv "$IMG.tmp" "$IMG"
echo "$IMG"
