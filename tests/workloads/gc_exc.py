"""Frequent garbage collections (cycles with a low threshold) in one
function, and a loop spinning inside an except: block in another."""
import gc
import sys
import time


class Node:
    def __init__(self):
        self.other = self


def make_garbage(seconds):
    gc.set_threshold(50, 1, 1)
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        [Node() for _ in range(200)]


def spin(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def in_handler(seconds):
    try:
        raise ValueError("handled")
    except ValueError:
        spin(seconds)  # an exception is being handled here


def no_handler(seconds):
    spin(seconds)


if __name__ == "__main__":
    s = float(sys.argv[1]) if len(sys.argv) > 1 else 1
    make_garbage(s)
    end = time.thread_time() + s
    while time.thread_time() < end:
        in_handler(0.01)
        no_handler(0.01)
