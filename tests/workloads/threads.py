"""Multi-threaded workload: each named thread burns CPU in its own function
while the main thread sleeps in join().  Prints "tid name" per thread."""
import sys
import threading
import time


def burn(seconds):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1


def alpha_work(seconds):
    burn(seconds)


def beta_work(seconds):
    burn(seconds)


def gamma_work(seconds):
    burn(seconds)


def main(duration):
    threads = [threading.Thread(target=f, args=(duration,), name=f.__name__.replace("_work", ""))
               for f in (alpha_work, beta_work, gamma_work)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    for t in threads:
        print(t.native_id, t.name, flush=True)
    for t in threads:
        t.join()


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
