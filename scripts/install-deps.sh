#!/usr/bin/env bash
# install-deps.sh: installs what building and testing tachyon-bpf needs on
# Debian 12 (apt-get, as root). Quick when everything is already there.
# Usage: scripts/install-deps.sh [build|test|arm64]   (arm64: build and the cross build's tools)
set -euo pipefail
what=${1:-build}
pkgs=(make gcc clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev pkg-config python3 util-linux)
# make dist links these statically: libbpf.a, libelf.a, libdw.a and libz.a come with the -dev
# packages above, liblzma.a and libbz2.a with theirs (libdw's compressed sections), libzstd.a too
pkgs+=(liblzma-dev libbz2-dev libzstd-dev)
if [ "$what" = test ]; then
	pkgs+=(libcmocka-dev chromium nodejs npm dpkg-dev ca-certificates valgrind protobuf-compiler
	       libclang-rt-14-dev tmux)
	# tests/setup-ft-pythons.sh builds CPython (gcc, make, zlib1g-dev above): ctypes needs
	# libffi-dev; ssl/hashlib, bz2 and lzma come with theirs; xz-utils unpacks the sources
	pkgs+=(libffi-dev libssl-dev libbz2-dev liblzma-dev xz-utils)
	# tests/perfcmp: Linux perf beside tachyon-bpf on the same process (bookworm's linux-perf
	# ships /usr/bin/perf itself; tests/perfcmp/run.py also finds a wrapper's perf_X.Y)
	pkgs+=(linux-perf)
	# tests/kernels: Debian's kernels booted under QEMU with a busybox initramfs
	pkgs+=(qemu-system-x86 busybox-static cpio bc)
	# ... and arm64's (TB_KERNELS_ARCH=arm64): qemu-system-aarch64, and tests/native/chain.c
	# cross-built for the guest (the cross gcc, below, links against libc6-dev-arm64-cross)
	pkgs+=(qemu-system-arm libc6-dev-arm64-cross)
	# tests/install: the .deb (debhelper), the man page checked by man --warnings (groff-base),
	# the zsh completion loaded by zsh
	pkgs+=(debhelper man-db groff-base zsh)
	# tests/native names: Debian's separate debug files (/usr/lib/debug/.build-id/...) of
	# python3.11 and libc, named by build-id; the check compares with readelf -s of them
	pkgs+=(python3.11-dbg libc6-dbg)
fi
if [ "$what" = test ] || [ "$what" = arm64 ]; then
	# make ARCH=arm64 (Debian's cross compiler; the arm64 libraries come from
	# scripts/arm64-sysroot.sh) and tests/arm64/check-user.sh's qemu-aarch64
	pkgs+=(gcc-aarch64-linux-gnu qemu-user-static)
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node/npm may come from elsewhere (nodesource): accept working binaries
if [ "$what" = test ] && command -v node >/dev/null && command -v npm >/dev/null; then
	missing=("${missing[@]/nodejs/}"); missing=("${missing[@]/npm/}")
fi
read -r -a missing <<<"${missing[*]:-}"
if [ "${#missing[@]}" -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
