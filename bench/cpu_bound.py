"""cpu_bound.py: deterministic pure-Python CPU-bound workload for bench/run.sh.

A fixed amount of work (no I/O, no randomness, no threads): function calls,
dict and list operations, string formatting, sorting, and a small recursion
to depth ~30.  About 2-3 s on the reference VM with Debian's python3.11.

    python cpu_bound.py [SCALE]      # SCALE multiplies the work (default 1.0)

Prints `elapsed_s <seconds>` (perf_counter around the work only, so
interpreter start-up and profiler attach are excluded), `cpu_s <seconds>`
(process_time over the same span) and a checksum that must be identical
between runs, with or without a profiler.  With BENCH_GATE set in the
environment it reads one line from stdin first (bench/anchors.py attaches a
profiler meanwhile).
"""
import os
import sys
import time

ROUNDS = 1500  # ~2.4 s at SCALE 1.0 on the reference VM (python3.11, CPU not contended)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def descend(n, acc):
    """Plain recursion to depth n, a little work per level."""
    if n == 0:
        return acc
    return descend(n - 1, (acc * 31 + n) & 0xFFFFFFFF)


class Point:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def norm1(self):
        return abs(self.x) + abs(self.y)


def dict_work(n):
    d = {}
    for i in range(n):
        d["k%d" % (i % 97)] = d.get("k%d" % (i % 97), 0) + i
    return sum(d.values())


def list_work(n):
    xs = [(i * 7919) % 1009 for i in range(n)]
    xs.sort()
    ys = [x * 2 for x in xs if x & 1]
    return len(ys) + xs[n // 2]


def string_work(n):
    parts = []
    for i in range(n):
        parts.append(f"{i:05d}:{i * 3.5:.2f}:{'ab' * (i % 4)}")
    s = "|".join(parts)
    return len(s) + s.count("ab")


def object_work(n):
    pts = [Point(i - n // 2, (i * 13) % 101 - 50) for i in range(n)]
    return sum(p.norm1() for p in pts)


def one_round(r):
    total = 0
    total += fib(16)
    for k in range(20):
        total += descend(30, r + k)
    total += dict_work(2000)
    total += list_work(3000)
    total += string_work(800)
    total += object_work(1500)
    return total & 0xFFFFFFFF


def main():
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    rounds = max(1, int(ROUNDS * scale))
    if os.environ.get("BENCH_GATE"):
        sys.stdin.readline()
    t0 = time.perf_counter()
    c0 = time.process_time()
    check = 0
    for r in range(rounds):
        check = (check * 1000003 + one_round(r)) & 0xFFFFFFFF
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    print(f"checksum {check:08x} rounds {rounds}")
    print(f"elapsed_s {elapsed:.4f}")
    print(f"cpu_s {cpu:.4f}")


if __name__ == "__main__":
    main()
