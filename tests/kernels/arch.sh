# shellcheck shell=bash
# arch.sh: picks the kernel matrix's architecture, sourced by run.sh, fetch-kernels.sh and
# initramfs.sh. TB_KERNELS_ARCH is amd64 (default; x86_64 too) or arm64 (aarch64 too); the
# facts of each are in arch/NAME.sh (KARCH_* names). Also the one table of kernel names
# (5.10 6.1 6.12 7.x) to Debian suites, and karch_name to read a name or a suite name.
case ${TB_KERNELS_ARCH:-amd64} in
amd64 | x86_64) KARCH=amd64 ;;
arm64 | aarch64) KARCH=arm64 ;;
*) printf '%s: TB_KERNELS_ARCH: unknown architecture %s (amd64 or arm64)\n' "${0##*/}" "$TB_KERNELS_ARCH" >&2; exit 1 ;;
esac
# shellcheck source=tests/kernels/arch/amd64.sh
. "$(dirname "${BASH_SOURCE[0]}")/arch/$KARCH.sh"
declare -A KSUITE=([5.10]=bullseye [6.1]=bookworm [6.12]=trixie [7.x]=sid)

karch_name() { # a kernel name or suite name -> the name, if this architecture has it
    local n
    for n in "${KARCH_KERNELS[@]}"; do
        if [[ $1 == "$n" || $1 == "${KSUITE[$n]}" || ($1 == 7 && $n == 7.x) ]]; then echo "$n"; return 0; fi
    done
    return 1
}
