"""many_threads.py: a Python process whose threads miss the BPF program's thread-state cache
(bench/run.sh section "threads"): NATIVE threads without a Python state spinning in C (a
helper built with cc at start), churning or not, behind PYTHREADS idle Python threads (the
thread list each miss walks), for SECONDS.

    python3 bench/many_threads.py NATIVE PYTHREADS SECONDS [churn]

churn: each native thread spins ~1 ms and is replaced by a new one (new thread ids all the
time); otherwise they spin until the end."""
import ctypes
import os
import subprocess
import sys
import tempfile
import threading
import time

C = r"""
#include <pthread.h>
#include <time.h>
static volatile int churn;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static void *spin(void *arg) {
    double end = now() + 0.001;
    for (volatile unsigned long x = 0; !churn || now() < end; x++)
        ;
    return arg;
}
static void *keeper(void *arg) {       /* churn: one thread after the other */
    for (;;) { pthread_t t; if (pthread_create(&t, 0, spin, 0)) return arg; pthread_join(t, 0); }
}
int start(int n, int do_churn) {
    churn = do_churn;
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, 0, do_churn ? keeper : spin, 0)) return i;
        pthread_detach(t);
    }
    return n;
}
"""


def main():
    native, pythreads, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    churn = len(sys.argv) > 4 and sys.argv[4] == "churn"
    stop = threading.Event()
    for _ in range(pythreads):
        threading.Thread(target=stop.wait, daemon=True).start()
    with tempfile.TemporaryDirectory() as d:
        src, lib = os.path.join(d, "spin.c"), os.path.join(d, "spin.so")
        with open(src, "w") as f:
            f.write(C)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-pthread", "-o", lib, src], check=True)
        spin = ctypes.CDLL(lib)
    if spin.start(native, int(churn)) != native:
        sys.exit("many_threads.py: could not start %d threads" % native)
    time.sleep(seconds)
    os._exit(0)


if __name__ == "__main__":
    main()
