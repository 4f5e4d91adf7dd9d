"""Deep stack: recurse to a fixed depth (default 400) and spin at the bottom."""
import sys
import time

sys.setrecursionlimit(10000)


def leaf(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def recurse(n, seconds):
    if n == 0:
        leaf(seconds)
    else:
        recurse(n - 1, seconds)


if __name__ == "__main__":
    depth = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    recurse(depth, float(sys.argv[2]) if len(sys.argv) > 2 else 2.0)
