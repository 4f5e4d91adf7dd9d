"""The classic differential case: `baseline` runs slow_function,
fast_function and medium_function; `current` makes slow_function faster,
fast_function slower, drops medium_function and adds new_function.
Each spins in its own body (self time). Times are CPU time (thread_time) so a loaded machine does not skew them."""
import sys
import time


def slow_function(s):
    end = time.thread_time() + s
    while time.thread_time() < end:
        pass


def fast_function(s):
    end = time.thread_time() + s
    while time.thread_time() < end:
        pass


def medium_function(s):
    end = time.thread_time() + s
    while time.thread_time() < end:
        pass


def new_function(s):
    end = time.thread_time() + s
    while time.thread_time() < end:
        pass


PLANS = {
    "baseline": [(slow_function, 0.040), (fast_function, 0.010), (medium_function, 0.020)],
    "current": [(slow_function, 0.020), (fast_function, 0.020), (new_function, 0.020)],
}

if __name__ == "__main__":
    plan = PLANS[sys.argv[1]]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    for _ in range(rounds):
        for fn, s in plan:
            fn(s)
