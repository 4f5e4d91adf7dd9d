"""Two threads contending for the GIL in pure-Python loops."""
import sys
import threading
import time


def contend_a(seconds):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1


def contend_b(seconds):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1


if __name__ == "__main__":
    s = float(sys.argv[1]) if len(sys.argv) > 1 else 3
    ts = [threading.Thread(target=f, args=(s,), name=f.__name__) for f in (contend_a, contend_b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
