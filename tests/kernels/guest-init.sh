#!/bin/sh
# guest-init.sh: /init of the kernel matrix's initramfs (tests/kernels/initramfs.sh), run by
# each kernel that tests/kernels/run.sh boots. Mounts what the profiler needs, runs the checks
# (tests/kernels/guest_checks.py, python3.11) and writes their lines to the results port
# (TB_RESULTS: /dev/ttyS1, the second serial port, on amd64; /dev/ttyS0, a 16550 on PCI, on
# arm64; a file on the host), then powers off so that QEMU exits. Its own messages and the
# checks' stderr go to the console (ttyS0 / ttyAMA0, the host's console log).
# Kernel command-line words NAME=VALUE reach it as environment variables: TB_RESULTS, TB_SHAPE
# (the program shape the check "shape" expects) and TB_CHECKS=a,b, which runs only those
# checks (guest_checks.py).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
RESULTS=${TB_RESULTS:-/dev/ttyS1}
# the image has busybox and /bin/sh only: the other applets' links
/bin/busybox --install -s

say() { echo "init: $*"; }
mnt() { # type dir [options]
    mkdir -p "$2"
    mount -t "$1" ${3:+-o "$3"} "$1" "$2" || say "mount -t $1 $2 failed"
}

mnt proc /proc
mnt sysfs /sys
mnt devtmpfs /dev
mnt devpts /dev/pts
mnt tmpfs /dev/shm
mnt tmpfs /tmp
mnt tmpfs /run
mnt debugfs /sys/kernel/debug
mnt tracefs /sys/kernel/tracing
mnt bpf /sys/fs/bpf
mnt cgroup2 /sys/fs/cgroup
# shellcheck disable=SC3045  # busybox sh has ulimit -l
ulimit -l unlimited || say "ulimit -l unlimited failed"
hostname guest
stty -F "$RESULTS" raw -echo 2>/dev/null || say "stty $RESULTS failed"
TB_BOOTED=$(cut -d' ' -f1 /proc/uptime)   # seconds from the kernel's start to here
export TB_BOOTED
say "kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print $2 " kB" }' /proc/meminfo)"

cd /tb || say "no /tb"
# every line the checks print goes to the console and to the results port (their stderr: the console)
python3.11 tests/kernels/guest_checks.py | tee "$RESULTS"
say "checks done"
sync
sleep 1    # let the UART drain before the power goes
poweroff -f
