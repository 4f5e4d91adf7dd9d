"""Thread-heavy benchmark for wall mode: 8 threads each alternate a little
pure-Python work with a short sleep, so the scheduler switches them in and
out thousands of times a second.  Prints its own elapsed time."""
import sys
import threading
import time


def worker(rounds):
    x = 0
    for _ in range(rounds):
        for i in range(300):
            x += i * i
        time.sleep(0.0002)


if __name__ == "__main__":
    rounds = int(float(sys.argv[1]) * 2000) if len(sys.argv) > 1 else 2000
    t0 = time.perf_counter()
    ts = [threading.Thread(target=worker, args=(rounds,)) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("elapsed %.4f" % (time.perf_counter() - t0))
