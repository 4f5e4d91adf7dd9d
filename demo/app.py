"""Demo workload for tachyon-bpf: a small "service" with named worker
threads doing different kinds of work (JSON, regex, sorting, arithmetic),
so the flame graph has something to show.  Runs for argv[1] seconds."""
import json
import random
import re
import sys
import threading
import time

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


class Order:
    def __init__(self, i, rng):
        self.id = i
        self.items = [rng.choice(WORDS) for _ in range(8)]
        self.price = rng.random() * 100

    def total(self):
        return sum(len(item) * self.price for item in self.items)


def encode_orders(rng):
    orders = [{"id": i, "items": rng.sample(WORDS, 4), "qty": rng.randint(1, 9)} for i in range(200)]
    return json.loads(json.dumps(orders))


def parse_logs(rng):
    pattern = re.compile(r"(\w+)=(\d+)")
    line = " ".join("%s=%d" % (rng.choice(WORDS), rng.randint(0, 999)) for _ in range(50))
    return sum(int(v) for _, v in pattern.findall(line))


def price_orders(rng):
    orders = [Order(i, rng) for i in range(300)]
    return sorted(orders, key=Order.total)[-1].id


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def worker(kind, deadline):
    rng = random.Random(kind)
    jobs = {"json": encode_orders, "logs": parse_logs, "pricing": price_orders}
    job = jobs[kind]
    while time.time() < deadline:
        job(rng)


def main(seconds):
    deadline = time.time() + seconds
    threads = [threading.Thread(target=worker, args=(k, deadline), name="worker-" + k)
               for k in ("json", "logs", "pricing")]
    for t in threads:
        t.start()
    while time.time() < deadline:
        fib(18)
        time.sleep(0.01)
    for t in threads:
        t.join()


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 10)
