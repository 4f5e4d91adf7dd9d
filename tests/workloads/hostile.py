"""Hostile names: code objects whose names and file names carry HTML and
script, quotes, control characters and odd Unicode, spinning in threads.
A profiler page must show them literally and never run them."""
import sys
import threading
import time

NAMES = [
    '</script><script>window.__pwned=1</script>',
    '<img src=x onerror="window.__pwned=1">',
    "quote'\"`;&amp;\u202e\u0007tab\tend",
]
FILE = '"><svg onload=window.__pwned=1>.py'

SRC = '''
def spin(seconds):
    import time
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
'''


def make(name):
    ns = {}
    exec(compile(SRC, FILE, "exec"), ns)
    f = ns["spin"]
    code = f.__code__
    if hasattr(code, "co_qualname"):
        f.__code__ = code.replace(co_name=name, co_qualname=name)
    else:
        f.__code__ = code.replace(co_name=name)
    return f


def main(seconds):
    funcs = [make(n) for n in NAMES]
    threads = [threading.Thread(target=f, args=(seconds,), name="hostile-%d" % i)
               for i, f in enumerate(funcs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 2)
