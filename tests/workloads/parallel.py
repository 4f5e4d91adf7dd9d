"""Four threads, each spinning in its own function for a fixed CPU time (thread_time):
on a free-threaded build they run at once, one per CPU. With --wait it prints READY and
starts on a line on stdin. Each thread prints "tid name" as it starts, then the main thread
"cpu name SECONDS" per thread and "wall SECONDS" at the end."""
import sys
import threading
import time


def spin(seconds):
    end = time.thread_time() + seconds
    n = 0
    while time.thread_time() < end:
        for _ in range(100):
            n += 1
    return n


def north(seconds):
    return spin(seconds)


def south(seconds):
    return spin(seconds)


def east(seconds):
    return spin(seconds)


def west(seconds):
    return spin(seconds)


def main(seconds):
    cpu = {}

    def run(f):
        sys.stdout.write("%d %s\n" % (threading.get_native_id(), f.__name__))  # one write: whole lines
        sys.stdout.flush()
        f(seconds)
        cpu[f.__name__] = time.thread_time()

    start = time.perf_counter()
    threads = [threading.Thread(target=run, args=(f,), name=f.__name__) for f in (north, south, east, west)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name, secs in sorted(cpu.items()):
        print("cpu", name, "%.3f" % secs)
    print("wall %.3f" % (time.perf_counter() - start), flush=True)


if __name__ == "__main__":
    if "--wait" in sys.argv:
        print("READY", flush=True)
        sys.stdin.readline()
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
