"""Time in the kernel, below known Python lines: a thread reading 4 MiB blocks
of /dev/zero (read_zero, under do_syscall_64), and one sleeping in small
steps (do_nanosleep: off CPU in wall mode), for --kernel.

    syscalls.py SECONDS [read|sleep|both]"""
import os
import sys
import threading
import time


def read_zero(seconds):
    end = time.perf_counter() + seconds
    fd = os.open("/dev/zero", os.O_RDONLY)
    try:
        while time.perf_counter() < end:
            os.read(fd, 1 << 22)  # READ-LINE
    finally:
        os.close(fd)


def nap(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        time.sleep(0.01)  # SLEEP-LINE


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3
    what = sys.argv[2] if len(sys.argv) > 2 else "both"
    threads = []
    if what in ("read", "both"):
        threads.append(threading.Thread(target=read_zero, args=(seconds,), name="reader"))
    if what in ("sleep", "both"):
        threads.append(threading.Thread(target=nap, args=(seconds,), name="napper"))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
