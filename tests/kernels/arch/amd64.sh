# shellcheck shell=bash
# shellcheck disable=SC2034  # the KARCH_* names are read by the scripts that source arch.sh
# arch/amd64.sh: the kernel matrix's facts about x86_64 guests (sourced by tests/kernels/arch.sh;
# arm64.sh beside it has the same names). Nothing else in tests/kernels/ names an architecture.
KARCH_KERNELS=(5.10 6.1 6.12 7.x)             # the kernels of the matrix, by name (arch.sh: suites)
KARCH_CACHE_PREFIX=""                         # cache and log names: 6.1 (the matrix's first names)
KARCH_FLAVOUR=cloud-amd64                     # Debian's kernel flavour: linux-image-cloud-amd64
KARCH_UNAME_M=x86_64                          # uname -m, and make dist's binary suffix
KARCH_TRIPLET=x86_64-linux-gnu                # multiarch library directories
KARCH_LOADER=/lib64/ld-linux-x86-64.so.2      # the dynamic loader the guest's ELF files name
KARCH_QEMU_USER=""                            # this is the host's architecture: no user-mode emulator
KARCH_MAKE_ARGS=()                            # make dist: the host's own build
KARCH_CC=cc                                   # builds tests/native/chain.c for the guest
KARCH_QEMU=qemu-system-x86_64
KARCH_QEMU_PKG=qemu-system-x86
KARCH_QEMU_ARGS=()                            # the default machine (pc)
KARCH_CPU=max                                 # QEMU's -cpu (TB_KERNELS_CPU overrides)
KARCH_CONSOLE=ttyS0                           # the kernel's console: the first serial port
# the results channel: the second serial port (a file on the host), /dev/ttyS1 in the guest
karch_results_args() { echo "-serial file:$1"; }
KARCH_RESULTS_DEV=/dev/ttyS1
KARCH_ELF_MACHINE="Advanced Micro Devices X86-64"   # readelf -h: the binary must be one of these
KARCH_UNSUPPORTED=""                          # checks the agent may refuse here (guest_checks.py): none
KARCH_GUEST_SID_PYTHONS=0                     # sid's 3.13-3.15 not in the image (the host's suites run them)
