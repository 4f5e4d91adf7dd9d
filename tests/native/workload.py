"""workload.py: what tests/native/run.py profiles with --native, one mode per run:

    qsort   py_caller -> libc qsort -> Python callback cmp -> c_leaf -> zlib.crc32
            of 256 KiB (libz): Python, native, Python, native frames
    zlib    zlib.compress of 1.3 MB of text in a loop (libz under the Python frame)
    deep    a 40-deep recursion through C (next(map(recurse, ...)): native frames at
            every level, on every version) spinning at the bottom (native depth)
    dlopen  spins in Python, loads libbz2 with ctypes.CDLL after a second and
            compresses with it in a loop (a library mapped during the capture;
            not libz, which the interpreter maps from the start)
    fork    two fork()ed children run qsort (the parent waits)
    chain   call_chain -> chain_a -> chain_b -> chain_c of the library in
            $TB_CHAIN_LIB (tests/native/chain.c, -O2 -fomit-frame-pointer)
    zero    read_zero: 1 MiB reads of /dev/zero in a loop (kernel frames
            under the native read under the Python line)
    mod     mod_loop: x % y on two-digit ints, calls of small C functions with
            frame pointers (PyNumber_Remainder a leaf at its push rbp and ret)
    slowtable  spins in Python, then loads $TB_SLOW_LIB (run.py's library of
            100,000 functions: its table takes a while) with ctypes and calls its
            spin in spin_loop (samples in it before its table: partial)
    sandwich  sort_loop -> sorted(xs, key=keyfunc): py -> C (builtin_sorted,
            list_sort_impl) -> py
    signal  call_signal -> chain_interrupted of $TB_CHAIN_LIB, interrupted every
            20 ms by a SIGALRM whose handler runs chain_handler -> chain_a -> ...
            (samples unwound through the signal frame)
    cthread a pthread started in C ($TB_CHAIN_LIB's chain_start_worker, named
            c-worker) spins in chain_worker -> chain_a -> ... (no Python thread
            state) while the main thread spins in Python (py_spin)
    imports import_all: 28 stdlib packages imported (module code run once and
            freed), then py_spin
    jsonre  json.dumps/loads of a nested document and re.findall over its text
            (_json, _sre)
    compile ast.parse and compile of 6 stdlib files (the parser, the compiler)
  hostile (tests/native/run.py --hostile):
    rbploop machine code in anonymous memory that points rbp at itself and
            spins (a frame-pointer chain that loops)
    mappings  600 executable mappings (more than a process's 512 ranges), then qsort
    truncated  a copy of libbz2 mapped, then truncated to 64 bytes under the
            process, then qsort
    deleted a copy of libbz2 mapped and deleted, used in a loop

Imports what it needs, sleeps a second (off CPU: a library loaded at start
has its table built meanwhile, as a long-running process would; not with
"nosleep" after the seconds: the work starts at once), then runs for argv[2]
seconds (default 6)."""
import ctypes
import ctypes.util
import mmap
import os
import shutil
import sys
import tempfile
import time
import zlib

MODE = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 6.0
LIBC = ctypes.CDLL(None)
# the chain library, loaded before the second of sleep (its table is built meanwhile)
CHAIN = ctypes.CDLL(os.environ["TB_CHAIN_LIB"]) if MODE in ("chain", "cthread", "signal") else None
# compressible text (deflate's work, not copies), made before the capture's part
TEXT = b" ".join(b"%x" % (i * 2654435761 % 65521) for i in range(1 << 18)) if MODE == "zlib" else b""
if os.environ.get("TB_START_ON_STDIN") == "1":
    sys.stdin.readline()    # tests/native/run.py attached(): once the agent samples
elif "nosleep" not in sys.argv[3:]:
    time.sleep(1.0)
END = time.monotonic() + SECONDS


DATA = os.urandom(1 << 18)


def c_leaf():
    return zlib.crc32(DATA)


def cmp(a, b):
    c_leaf()
    return a[0] - b[0]


def py_caller():
    cmp_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
    callback = cmp_type(cmp)
    arr = (ctypes.c_int * 64)(*range(64, 0, -1))
    while time.monotonic() < END:
        LIBC.qsort(arr, 64, ctypes.sizeof(ctypes.c_int), callback)
        arr[:] = list(range(64, 0, -1))


def compress_loop():
    while time.monotonic() < END:
        zlib.compress(TEXT, 6)


def recurse(n):
    if n == 0:
        x = 0
        while time.monotonic() < END:
            for i in range(1000):
                x += i
        return x
    # through C (next -> map_next -> the call's plumbing -> the evaluator): native frames
    # at every level on every version (3.11+ run a plain Python call in the same evaluator
    # call, without a native frame)
    return next(map(recurse, (n - 1,)))


BZ2 = "/lib/x86_64-linux-gnu/libbz2.so.1.0"


def bz2_loop(lib):
    """BZ2_bzBuffToBuffCompress of 64 KiB, in a loop."""
    data = os.urandom(1 << 16)
    out = ctypes.create_string_buffer(len(data) * 2)
    size = ctypes.c_uint()
    while time.monotonic() < END:
        size.value = len(out)
        lib.BZ2_bzBuffToBuffCompress(out, ctypes.byref(size), data, len(data), 9, 0, 30)


def dlopen_loop():
    t = time.monotonic() + 1.0
    while time.monotonic() < t:
        pass
    bz2_loop(ctypes.CDLL(BZ2))


def fork_children():
    kids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            py_caller()
            os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)


# push rbp; sub rsp,16; mov [rsp],rsp; lea rax,[rip+13]; mov [rsp+8],rax;
# mov rbp,rsp; mov ecx,0x10000000; L: loop L; add rsp,16; pop rbp; ret
RBP_LOOP = bytes.fromhex("55 4883ec10 48892424 488d050d000000 4889442408 4889e5"
                         "b900000010 e2fe 4883c410 5d c3")


def rbp_loop():
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(RBP_LOOP)
    fn = ctypes.CFUNCTYPE(None)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
    while time.monotonic() < END:
        fn()


def many_mappings(n=600):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                          ctypes.c_long]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    size = mmap.PAGESIZE
    base = libc.mmap(None, 2 * n * size, mmap.PROT_READ, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    for i in range(n):  # every other page executable: n mappings
        libc.mprotect(base + 2 * i * size, size, mmap.PROT_READ | mmap.PROT_EXEC)
    return base


def lib_copy(src, name):
    d = tempfile.mkdtemp(prefix="tb-native-")
    path = os.path.join(d, name)
    shutil.copy(src, path)
    return d, path


def call_chain():
    lib = CHAIN
    lib.chain_a.argtypes = [ctypes.c_uint64]
    lib.chain_a.restype = ctypes.c_uint64
    while time.monotonic() < END:
        lib.chain_a(2000000)


def call_signal():
    lib = CHAIN
    lib.chain_interrupted.argtypes = [ctypes.c_double]
    while time.monotonic() < END:
        assert lib.chain_interrupted(1.0) == 0, "chain_interrupted: no handler or timer"


def mod_loop():
    x, y = 3 ** 40, 7 ** 11
    while time.monotonic() < END:
        for i in range(10000):
            x % y
            x % (y + i)


def spin_loop():
    t = time.monotonic() + 0.5
    while time.monotonic() < t:
        pass
    lib = ctypes.CDLL(os.environ["TB_SLOW_LIB"])
    while time.monotonic() < END:
        lib.spin(1000000)


def keyfunc(x):
    return (x * 2654435761) % 1000003


def sort_loop():
    xs = list(range(100000))
    while time.monotonic() < END:
        sorted(xs, key=keyfunc)


def py_spin():
    n = 0
    while time.monotonic() < END:
        for i in range(10000):
            n += i * i
    return n


def c_thread():
    """A pthread started in C (chain_start_worker): no Python thread state, spinning in
    chain_worker -> chain_a -> chain_b -> chain_c while the main thread runs Python."""
    CHAIN.chain_start_worker.argtypes = [ctypes.c_double]
    CHAIN.chain_start_worker.restype = ctypes.c_int
    assert CHAIN.chain_start_worker(SECONDS) == 0
    py_spin()


IMPORTS = ("json", "decimal", "email.message", "http.client", "xml.dom.minidom", "argparse",
           "logging", "tarfile", "zipfile", "csv", "configparser", "difflib", "pydoc", "ast",
           "inspect", "dataclasses", "fractions", "statistics", "textwrap", "unittest", "asyncio",
           "urllib.request", "sqlite3", "pickletools", "calendar", "smtplib", "imaplib", "ftplib")


def import_all():
    """Imports stdlib packages, as any program does at its start (each module's code run
    once, then freed), then spins in Python for the rest of the time."""
    import importlib
    for name in IMPORTS:
        importlib.import_module(name)
    py_spin()


def json_re_loop():
    """json.dumps/loads of a nested document and re over its text, in a loop (_json, _sre)."""
    import json
    import re
    doc = {"k%d" % i: [i, "v%d" % i * 3, {"x": i / 7, "y": [True, None]}] for i in range(400)}
    pat = re.compile(r'"(k\d+)": \[(\d+), "((?:v\d+)+)"')
    while time.monotonic() < END:
        text = json.dumps(doc)
        assert json.loads(text) == doc
        assert len(pat.findall(text)) == 400


def compile_loop():
    """ast.parse and compile of 6 of the interpreter's own stdlib files, in a loop."""
    import ast
    lib = os.path.dirname(os.__file__)
    sources = []
    for name in ("argparse.py", "difflib.py", "inspect.py", "tarfile.py", "typing.py", "zipfile.py"):
        path = os.path.join(lib, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                sources.append((path, f.read()))
    while time.monotonic() < END:
        for path, text in sources:
            ast.parse(text, path)
            compile(text, path, "exec")


def read_zero():
    with open("/dev/zero", "rb", buffering=0) as f:
        while time.monotonic() < END:
            f.read(1 << 20)


if MODE == "qsort":
    py_caller()
elif MODE == "chain":
    call_chain()
elif MODE == "signal":
    call_signal()
elif MODE == "zero":
    read_zero()
elif MODE == "mod":
    mod_loop()
elif MODE == "slowtable":
    spin_loop()
elif MODE == "fork":
    fork_children()
elif MODE == "rbploop":
    rbp_loop()
elif MODE == "mappings":
    many_mappings()
    py_caller()
elif MODE == "truncated":
    d, path = lib_copy(BZ2, "libbz2-truncated.so")
    lib = ctypes.CDLL(path)
    with open(path, "r+b") as f:
        f.truncate(64)
    py_caller()
    shutil.rmtree(d)
elif MODE == "deleted":
    d, path = lib_copy(BZ2, "libbz2-deleted.so")
    lib = ctypes.CDLL(path)
    shutil.rmtree(d)
    bz2_loop(lib)
elif MODE == "zlib":
    compress_loop()
elif MODE == "jsonre":
    json_re_loop()
elif MODE == "compile":
    compile_loop()
elif MODE == "deep":
    recurse(40)
elif MODE == "sandwich":
    sort_loop()
elif MODE == "cthread":
    c_thread()
elif MODE == "imports":
    import_all()
elif MODE == "dlopen":
    dlopen_loop()
