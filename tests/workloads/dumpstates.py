"""dumpstates.py: threads in known states for `dump` (tests/integration/run.py test_dump_states):
http-worker-0 and http-worker-1 sleep in time.sleep, "locked" waits in lock.acquire, "spinner"
spins in Python (active, the GIL holder), "flocked" waits in fcntl.flock for a file the main
thread holds locked (libc's flock is a leaf system-call wrapper: on arm64 its return address
is still in x30 while it blocks, so only the kernel's saved registers unwind it), and the main
thread sleeps in a Python callback (cmp) called by libc's qsort through ctypes (its native
frames: Python, native, Python, native). Prints "ready" and runs for argv[1] seconds (default 60).
With argv[2] the path of tests/native/chain.c built as a library, the spinner is "c-spinner"
instead: spin_chain calls its chain_a -> chain_b -> chain_c through ctypes (the GIL released),
spinning in C under Python (one running thread, five blocked: test_dump_running)."""
import ctypes
import fcntl
import sys
import tempfile
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
CHAIN = ctypes.CDLL(sys.argv[2]) if len(sys.argv) > 2 else None
lock = threading.Lock()
lock.acquire()


def sleeper():
    time.sleep(SECONDS)


def locked():
    lock.acquire()


held = tempfile.TemporaryFile()
fcntl.flock(held, fcntl.LOCK_EX)


def flocked():
    # a second open of the same file: its own lock, which waits for held's
    with open("/proc/self/fd/%d" % held.fileno(), "rb") as f:
        fcntl.flock(f, fcntl.LOCK_EX)


def spin():
    x = 0
    while True:
        x += 1


def spin_chain():
    while True:
        CHAIN.chain_a(1 << 26)  # ~0.1 s in chain_c per call


for i in range(2):
    threading.Thread(target=sleeper, name="http-worker-%d" % i, daemon=True).start()
threading.Thread(target=locked, name="locked", daemon=True).start()
threading.Thread(target=flocked, name="flocked", daemon=True).start()
if CHAIN:
    threading.Thread(target=spin_chain, name="c-spinner", daemon=True).start()
else:
    threading.Thread(target=spin, name="spinner", daemon=True).start()

CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))


def cmp(a, b):
    time.sleep(SECONDS)
    return a[0] - b[0]


def call_sorted():
    arr = (ctypes.c_int * 2)(2, 1)
    ctypes.CDLL(None).qsort(arr, 2, ctypes.sizeof(ctypes.c_int), CMP(cmp))


print("ready", flush=True)
call_sorted()
