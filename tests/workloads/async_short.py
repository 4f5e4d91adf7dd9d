"""Many short-lived asyncio tasks (tests/integration: --async-aware): rounds of
asyncio.gather of TASKS tasks, each living 50-300 ms and spinning the CPU in its
own coroutine (short_work) between awaits, so that a task is created, sampled
and freed within a few hundred ms.  argv: seconds [tasks per round] [unnamed]
["unnamed": the tasks keep asyncio's own names, Task-N]."""
import asyncio
import random
import sys
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
TASKS = int(sys.argv[2]) if len(sys.argv) > 2 else 100
UNNAMED = "unnamed" in sys.argv[3:]


def spin(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


async def short_work(life):
    end = time.monotonic() + life
    while time.monotonic() < end:
        spin(2000)
        await asyncio.sleep(0)


async def main():
    rng = random.Random(1)
    deadline = time.monotonic() + SECONDS
    rounds = 0
    while time.monotonic() < deadline:
        await asyncio.gather(*(asyncio.create_task(short_work(rng.uniform(0.05, 0.3)), name=None if UNNAMED else "short-%d" % i)
                               for i in range(TASKS)))
        rounds += 1
    print("rounds", rounds, "tasks", rounds * TASKS)


asyncio.run(main())
