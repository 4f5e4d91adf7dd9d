"""A thread that sleeps 90% of the time: 1 ms of work, then 9 ms of time.sleep.
With a second argument, a file, it writes there what it measured of itself: the seconds
spent on the sleep line and in the whole loop ("slept total"), so that a slow machine's
share (a TCG guest: more than 1 ms between two sleeps) is known, not assumed to be 90%.
The two clock reads are on lines of their own, around the sleep line: what they measure
is that line whole (its call, the system call's way in and out), and little else."""
import sys
import threading
import time


def busy(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def sleeper(seconds, spent):
    start = time.perf_counter()
    end = start + seconds
    slept = 0.0
    while time.perf_counter() < end:
        busy(0.001)
        t = time.perf_counter()
        time.sleep(0.009)  # SLEEP-LINE
        slept += time.perf_counter() - t
    spent.extend((slept, time.perf_counter() - start))


if __name__ == "__main__":
    spent = []
    t = threading.Thread(target=sleeper, args=(float(sys.argv[1]) if len(sys.argv) > 1 else 3, spent),
                         name="sleeper")
    t.start()
    t.join()
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write("%.6f %.6f\n" % tuple(spent))
