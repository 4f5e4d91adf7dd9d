"""One hot line full of attribute loads and integer additions."""
import sys
import time


class Point:
    def __init__(self):
        self.x = 1
        self.y = 2


def hot(seconds):
    p = Point()
    total = 0
    end = time.thread_time() + seconds
    while True:
        for _ in range(1000):
            total = total + p.x + p.y + p.x + p.y  # HOT-LINE attrs and adds
        if time.thread_time() > end:
            break
    return total


if __name__ == "__main__":
    hot(float(sys.argv[1]) if len(sys.argv) > 1 else 2)
