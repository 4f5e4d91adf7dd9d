#!/bin/bash
# run.sh: builds the capture-reader fuzzer (clang libFuzzer + ASan/UBSan) and
# runs it for SECONDS (default 60) on a seed corpus made from real small
# captures (taken with tachyon-bpf, needs root; or CAPTURE if given): each
# file itself and its decompressed payload.
#   tests/fuzz/run.sh [SECONDS] [CAPTURE.tbp]
# Findings go to build/fuzz/artifacts/; the corpus grows in build/fuzz/corpus/.
# TB_FUZZ_SEED (default 1) fixes libFuzzer's seed so a run can be repeated.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_TO_RUN=${1:-60}
CAPTURE=${2:-}
OUT=$ROOT/build/fuzz
CLANG=${CLANG:-clang}
mkdir -p "$OUT/corpus" "$OUT/seeds" "$OUT/artifacts" "$OUT/obj"

make -C "$ROOT" -s tachyon-bpf   # also the BPF skeleton header and assets.o the sources need
FLAGS="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
       -std=gnu11 -Wall -Wextra -I$ROOT/include -I$ROOT/build -I$ROOT/user"
OBJS=()
for src in "$ROOT"/user/*.c; do
	[ "$(basename "$src")" = main.c ] && continue
	obj=$OUT/obj/$(basename "$src" .c).o
	if [ ! -e "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find "$ROOT/user" "$ROOT/include" -name '*.h' -newer "$obj")" ]; then
		$CLANG $FLAGS -c "$src" -o "$obj"
	fi
	OBJS+=("$obj")
done
$CLANG $FLAGS -fsanitize=fuzzer "$ROOT/tests/fuzz/fuzz_capture.c" "${OBJS[@]}" "$ROOT/build/assets.o" \
	-lbpf -lelf -lz -lm -o "$OUT/fuzz_capture"

# Seeds: each capture and its decompressed payload.  Captures are taken here
# (root) from a few workloads: threads, hostile names under 3.10 (its line
# table format), truncated deep stacks under 3.13; or CAPTURE is used alone.
add_seed() {  # add_seed NAME FILE.tbp
	cp "$2" "$OUT/seeds/$1.tbp"
	python3 - "$2" "$OUT/seeds/$1.payload" <<'PY'
import sys, zlib
data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(zlib.decompress(data[32:]))
PY
}
take() {  # take NAME TACHYON-ARGS... : a real capture, taken afresh (the format may change)
	local f=$OUT/captures/$1.tbp
	shift
	rm -f "$f"
	"$ROOT/tachyon-bpf" -q -r 199 -o "$f" "$@" >/dev/null 2>&1 || rm -f "$f"
	[ -s "$f" ] && add_seed "$(basename "$f" .tbp)" "$f"
	return 0
}
mkdir -p "$OUT/captures"
rm -f "$OUT"/seeds/*
if [ -n "$CAPTURE" ]; then
	add_seed given "$CAPTURE"
else
	py() { bash "$ROOT/tests/pythons.sh" 2>/dev/null | awk -v v="$1" '$1 == v { print $3; exit }'; }
	P310=$(py 3.10); P313=$(py 3.13)
	take threads -- python3 "$ROOT/tests/workloads/threads.py" 1
	take hostile -d 1 -- "${P310:-python3}" "$ROOT/tests/workloads/hostile.py" 2
	take deep --max-depth 16 -- "${P313:-python3}" "$ROOT/tests/workloads/deep.py" 40 1
fi
if ! ls "$OUT"/seeds/*.tbp >/dev/null 2>&1; then
	echo "fuzz: no seed capture (run as root, or give CAPTURE.tbp)" >&2
	exit 1
fi
echo "fuzz: seeds: $(cd "$OUT/seeds" && ls | tr '\n' ' '), running ${SECONDS_TO_RUN}s"
cd "$OUT"
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	./fuzz_capture -max_total_time="$SECONDS_TO_RUN" -seed="${TB_FUZZ_SEED:-1}" -max_len=131072 -rss_limit_mb=4096 \
	-timeout=20 -print_final_stats=1 -artifact_prefix="$OUT/artifacts/" "$OUT/corpus" "$OUT/seeds"
