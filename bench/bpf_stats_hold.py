"""bpf_stats_hold.py: keep BPF run-time statistics on until stdin closes.

    python3 bpf_stats_hold.py    (root; prints "on" once they are)

Holds the file descriptor of bpf(BPF_ENABLE_STATS, BPF_STATS_RUN_TIME): the
kernel counts run_time_ns while any such descriptor is open or the sysctl
kernel.bpf_stats_enabled is 1, so another job on a shared machine that turns
the sysctl off does not stop the measurement (bench/run.sh).
"""
import ctypes
import os
import sys

SYS_BPF = 321            # x86_64
BPF_ENABLE_STATS = 32
BPF_STATS_RUN_TIME = 0


def main():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    attr = (ctypes.c_uint32 * 32)(BPF_STATS_RUN_TIME)  # union bpf_attr, enable_stats.type first
    fd = libc.syscall(SYS_BPF, BPF_ENABLE_STATS, ctypes.byref(attr), ctypes.sizeof(attr))
    if fd < 0:
        print(f"bpf_stats_hold.py: BPF_ENABLE_STATS: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
        sys.exit(1)
    print("on", flush=True)
    sys.stdin.read()     # until the caller closes it (or exits)


if __name__ == "__main__":
    main()
