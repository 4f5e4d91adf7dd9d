"""Starts N short-lived Python children (each spins in `short_task` for
SECONDS), a few at a time; prints each child's pid."""
import subprocess
import sys

CHILD = """
import time
def short_task(s):
    end = time.thread_time() + s
    while time.thread_time() < end:
        pass
short_task(%f)
"""

if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
    python = sys.argv[3] if len(sys.argv) > 3 else sys.executable
    running = []
    for i in range(n):
        running.append(subprocess.Popen([python, "-c", CHILD % seconds]))
        print(running[-1].pid, flush=True)
        if len(running) >= 4:
            running.pop(0).wait()
    for p in running:
        p.wait()
