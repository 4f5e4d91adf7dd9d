"""workload.py: what tests/unwind/run.py unwinds, one mode per run:

    qsort   py_caller -> libc qsort -> Python callback -> f(3) -> os.kill(SIGSTOP):
            stops itself in its leaf, with two evaluator segments on the C stack
    spin    the same chain, but the callback spins (sampled while it runs)
    zlib    zlib.compress of a big buffer, in a loop (libz)
    sha256  hashlib.sha256 of a big buffer, in a loop (OpenSSL's assembly)
    sleep   time.sleep, in a loop (clock_nanosleep)
    sort    sorted() of many strings, in a loop (small C functions of the interpreter)

Prints "ready" once the loop or the stop is near."""
import ctypes
import hashlib
import os
import signal
import sys
import time
import zlib

MODE = sys.argv[1]
BUF = os.urandom(1 << 22)


def f(n):
    if n == 0:
        if MODE == "qsort":
            os.kill(os.getpid(), signal.SIGSTOP)
        else:
            while True:
                pass
        return 0
    return f(n - 1)


def callback(a, b):
    f(3)
    return a[0] - b[0]


def py_caller():
    libc = ctypes.CDLL(None)
    cmp_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
    arr = (ctypes.c_int * 3)(3, 1, 2)
    print("ready", flush=True)
    libc.qsort(arr, 3, ctypes.sizeof(ctypes.c_int), cmp_type(callback))


def loop(step):
    print("ready", flush=True)
    while True:
        step()


if MODE in ("qsort", "spin"):
    py_caller()
elif MODE == "zlib":
    loop(lambda: zlib.compress(BUF, 6))
elif MODE == "sha256":
    loop(lambda: hashlib.sha256(BUF).digest())
elif MODE == "sleep":
    loop(lambda: time.sleep(0.05))
elif MODE == "sort":
    words = [str(i * 7919 % 100003) for i in range(100000)]
    loop(lambda: sorted(words))
