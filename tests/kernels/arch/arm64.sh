# shellcheck shell=bash
# shellcheck disable=SC2034  # the KARCH_* names are read by the scripts that source arch.sh
# arch/arm64.sh: the kernel matrix's facts about arm64 (aarch64) guests, booted with
# qemu-system-aarch64 -M virt (sourced by tests/kernels/arch.sh; amd64.sh has the same names).
# Debian's cloud-arm64 vmlinuz is a raw Image, which QEMU's -kernel boots as it is.
# virt has one PL011 UART (ttyAMA0: the console). The results go through a 16550 on PCI
# (QEMU's pci-serial; 8250_pci is built in, virtio_console is a module in 6.1's cloud-arm64),
# the guest's first 8250 port.
KARCH_KERNELS=(6.1 6.12 7.x)                  # bookworm, trixie, sid (no 5.10: bullseye is not a target)
KARCH_CACHE_PREFIX=arm64-                     # cache and log names: arm64-6.1
KARCH_FLAVOUR=cloud-arm64
KARCH_UNAME_M=aarch64
KARCH_TRIPLET=aarch64-linux-gnu
KARCH_LOADER=/lib/ld-linux-aarch64.so.1
KARCH_QEMU_USER=qemu-aarch64-static           # user mode on an x86_64 host (qemu-user-static): arm64 programs run there
KARCH_MAKE_ARGS=(ARCH=arm64)                  # make dist ARCH=arm64: dist/tachyon-bpf-VERSION-aarch64
KARCH_CC=aarch64-linux-gnu-gcc                # gcc-aarch64-linux-gnu
KARCH_QEMU=qemu-system-aarch64
KARCH_QEMU_PKG=qemu-system-arm
KARCH_QEMU_ARGS=(-M virt)
# -cpu max with QEMU's own pointer-authentication hash instead of QARMA (pauth-impdef=on): Debian's
# kernels sign every return address, and emulating QARMA made a guest 2.3x slower (6.12: the
# checks 199 s against 88 s, the BPF program's load 7.2 s against 1.6 s)
KARCH_CPU=max,pauth-impdef=on
KARCH_CONSOLE=ttyAMA0
karch_results_args() { echo "-chardev file,id=results,path=$1 -device pci-serial,chardev=results"; }
KARCH_RESULTS_DEV=/dev/ttyS0
KARCH_ELF_MACHINE=AArch64                      # readelf -h: the binary must be one of these
KARCH_UNSUPPORTED=""                          # checks the agent may refuse here (guest_checks.py): none
KARCH_GUEST_SID_PYTHONS=1                     # sid's arm64 3.13-3.15 in the image (initramfs.sh), run on one kernel (run.sh)
