#!/bin/bash
# check.sh: Python thread names read from a live process (user/cpython/threadnames.c), for every
# interpreter tests/pythons.sh lists (the free-threaded builds too with TB_PYTHONS_FT=1: their
# objects have their own layout). Per interpreter:
#   names    a Python process with named threads ("alpha", "beta-ünï" (latin-1), "gamma-Ωλ"
#            (UCS-2), "delta-🧵" (UCS-4), a 100-character name, a Thread subclass with its own
#            attributes, a thread renamed after start, threads whose instance dict was
#            materialized or grown past the shared keys, and the main thread) prints
#            threading.get_ident() and name of each thread; print_names --expect must return
#            every pair (names longer than 63 bytes cut to 63 bytes at a character boundary);
#   churn    threads starting and stopping in a loop: print_names --churn calls it many times
#            (no crash, every name sane, each call bounded in time);
#   garbage  the same process read through wrong runtime addresses and every built-in layout.
# Plus once: garbage on a non-Python process (sleep). One line per check, "N passed, N failed"
# at the end; exit 1 on a failure or if nothing ran.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CC=${CC:-gcc}
CHURN_CALLS=${CHURN_CALLS:-300}
TMP=$(mktemp -d)
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

if ! make -C "$ROOT" -s build/libtachyon.a ||
   ! $CC -O2 -g -Wall -Wextra -Werror -std=gnu11 -I"$ROOT/include" -I"$ROOT/user" \
    -o "$TMP/print_names" "$ROOT/tests/pythreads/print_names.c" "$ROOT/build/libtachyon.a" $(make -s -C "$ROOT" print-ldlibs); then
    echo "check.sh: cannot build print_names" >&2
    exit 1
fi
PN=$TMP/print_names

cat > "$TMP/named.py" <<'EOF'
import sys, threading, time

stop = threading.Event()

class Worker(threading.Thread):
    def __init__(self):
        super().__init__(name="worker-sub", daemon=True)
        self.extra_one, self.extra_two = 1, "two"
    def run(self):
        stop.wait()

names = ["alpha", "beta-\u00fcn\u00ef", "gamma-\u03a9\u03bb", "delta-\U0001f9f5",
         "long-" + "0123456789" * 9 + "abcde", "to-rename", "materialized", "grown"]
threads = [threading.Thread(target=stop.wait, name=n, daemon=True) for n in names]
threads.append(Worker())
for t in threads:
    t.start()
threads[5].name = "renamed-after-start"
vars(threads[6])                      # materialize the instance dict (3.11+)
for i in range(40):                   # more attributes than the shared keys hold
    setattr(threads[7], "attr%d" % i, i)
with open(sys.argv[1], "w", encoding="utf-8") as f:
    for t in threading.enumerate():
        f.write("%d\t%s\n" % (t.ident, t.name))
print("READY", flush=True)
stop.wait(300)
EOF

cat > "$TMP/churn.py" <<'EOF'
import threading, time

def work(i):
    time.sleep(0.0005 * (i % 4))

print("READY", flush=True)
deadline = time.monotonic() + 300
i = 0
while time.monotonic() < deadline:
    ts = [threading.Thread(target=work, args=(i + k,), name="churn-%d-%s" % (i + k, "\u00e9\u03a9" * (k * 9)))
          for k in range(6)]
    for t in ts:
        t.start()
    if i % 3 == 0:
        ts[0].name = "churn-renamed-%d" % i
    for t in ts:
        t.join()
    i += 6
EOF

passed=0
failed=0
report() { # status label detail
    if [ "$1" = 0 ]; then passed=$((passed + 1)); echo "PASS $2: $3"; else failed=$((failed + 1)); echo "FAIL $2: $3"; fi
}

# start_py OUT CMD...: runs CMD in the background with stdout to OUT, waits for READY.
# Sets PY_PID; returns 1 if it did not get ready in 60 s.
start_py() {
    local out=$1; shift
    "$@" > "$out" 2>&1 &
    PY_PID=$!
    PIDS+=("$PY_PID")
    for _ in $(seq 600); do
        grep -q READY "$out" 2>/dev/null && return 0
        kill -0 "$PY_PID" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

stop_py() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

if ! list=$(bash "$ROOT/tests/pythons.sh"); then
    echo "check.sh: no interpreters found" >&2
    exit 1
fi

i=0
while read -r minor kind cmd; do
    [ -n "$minor" ] || continue
    i=$((i + 1))
    label="$minor $kind"
    read -ra argv <<<"$cmd"

    if ! start_py "$TMP/named.$i.out" "${argv[@]}" -I "$TMP/named.py" "$TMP/expect.$i"; then
        report 1 "$label names" "python did not start: $(head -c 300 "$TMP/named.$i.out")"
        continue
    fi
    out=$("$PN" --expect "$TMP/expect.$i" "$PY_PID" 2>&1); rc=$?
    report $rc "$label names" "$(echo "$out" | tail -n 1)"
    [ $rc = 0 ] || echo "$out" | head -n -1
    out=$("$PN" --garbage "$PY_PID" 2>&1); rc=$?
    report $rc "$label garbage" "$out"
    stop_py "$PY_PID"

    if ! start_py "$TMP/churn.$i.out" "${argv[@]}" -I "$TMP/churn.py"; then
        report 1 "$label churn" "python did not start: $(head -c 300 "$TMP/churn.$i.out")"
        continue
    fi
    out=$("$PN" --churn "$CHURN_CALLS" "$PY_PID" 2>&1); rc=$?
    report $rc "$label churn" "$(echo "$out" | tail -n 1)"
    [ $rc = 0 ] || echo "$out" | head -n -1
    stop_py "$PY_PID"
done <<<"$list"

sleep 300 &
SLEEP_PID=$!
PIDS+=("$SLEEP_PID")
out=$("$PN" --garbage "$SLEEP_PID" 2>&1); rc=$?
report $rc "non-Python (sleep) garbage" "$out"
stop_py "$SLEEP_PID"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 1 ]
