"""Known workload: three functions spin for fixed shares (50/30/20%) of
the thread's CPU time (thread_time, so a loaded machine does not skew the
shares), in one clearly marked loop line.  Runs on 3.10-3.15."""
import sys
import time


def spin(seconds):
    end = time.thread_time() + seconds
    n = 0
    while time.thread_time() < end:  # HOT-LINE spin
        n += 1
    return n


def fifty():
    return spin(0.010)


def thirty():
    return spin(0.006)


def twenty():
    return spin(0.004)


def main(duration):
    end = time.thread_time() + duration
    while time.thread_time() < end:
        fifty()
        thirty()
        twenty()


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
