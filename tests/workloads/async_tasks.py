"""Two named tasks doing CPU work in their own coroutines, gathered by a parent
task (tests/integration: --async-aware).  argv: seconds [thread] [hostile]:
"thread" runs the event loop in a second thread; "hostile" names the tasks with
characters every output must show literally."""
import asyncio
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
IN_THREAD = "thread" in sys.argv[2:]
HOSTILE = "hostile" in sys.argv[2:]
NAMES = (["alpha;<b>\"x\"</b>\n", "beta \\u2028 ] {"] if HOSTILE else ["alpha", "beta"])


def spin_alpha(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def spin_beta(n):
    x = 0
    for i in range(n):
        x ^= i * 3
    return x


async def alpha_work(deadline):
    while time.monotonic() < deadline:
        spin_alpha(20000)
        await asyncio.sleep(0)


async def beta_work(deadline):
    while time.monotonic() < deadline:
        spin_beta(20000)
        await asyncio.sleep(0)


async def parent(deadline):
    await asyncio.gather(asyncio.create_task(alpha_work(deadline), name=NAMES[0]),
                         asyncio.create_task(beta_work(deadline), name=NAMES[1]))


async def main():
    deadline = time.monotonic() + SECONDS
    await asyncio.create_task(parent(deadline), name="parent")


def run_loop():
    asyncio.run(main())


if IN_THREAD:
    t = threading.Thread(target=run_loop, name="loop-thread")
    t.start()
    t.join()
else:
    run_loop()
