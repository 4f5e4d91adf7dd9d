"""A thread that sleeps 90% of the time: 1 ms of work, then 9 ms of time.sleep."""
import sys
import threading
import time


def busy(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def sleeper(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        busy(0.001)
        time.sleep(0.009)  # SLEEP-LINE


if __name__ == "__main__":
    t = threading.Thread(target=sleeper, args=(float(sys.argv[1]) if len(sys.argv) > 1 else 3,),
                         name="sleeper")
    t.start()
    t.join()
