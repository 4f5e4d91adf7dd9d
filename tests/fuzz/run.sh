#!/bin/bash
# run.sh: builds the capture-reader fuzzer (clang libFuzzer + ASan/UBSan) and
# runs it for SECONDS (default 60) on a seed corpus of real captures (the
# golden captures of tests/golden/captures, versions 1 and 2, or CAPTURE if
# given): each file itself, and its version byte and decompressed payload.
#   tests/fuzz/run.sh [SECONDS] [CAPTURE.tbp]
# Findings go to build/fuzz/artifacts/; the corpus grows in build/fuzz/corpus/.
# TB_FUZZ_SEED (default 1) fixes libFuzzer's seed so a run can be repeated.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_TO_RUN=${1:-60}
CAPTURE=${2:-}
OUT=$ROOT/build/fuzz
CLANG=${CLANG:-clang}
mkdir -p "$OUT/corpus" "$OUT/seeds" "$OUT/artifacts"

# the agent's library (everything but main and the BPF loader), sanitized, in build/fuzz
FLAGS="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
make -C "$ROOT" -s B=build/fuzz CC="$CLANG" CFLAGS="$FLAGS" build/fuzz/libtachyon.a
$CLANG $FLAGS -fsanitize=fuzzer -std=gnu11 -Wall -Wextra -I"$ROOT/include" -I"$ROOT/user" \
	"$ROOT/tests/fuzz/fuzz_capture.c" "$OUT/libtachyon.a" $(make -s -C "$ROOT" print-ldlibs) -o "$OUT/fuzz_capture"

# Seeds: each capture and its decompressed payload: the golden captures and
# the crafted regression corpus (tests/hostile/captures); or CAPTURE alone.
add_seed() {  # add_seed NAME FILE.tbp
	cp "$2" "$OUT/seeds/$1.tbp"
	python3 - "$2" "$OUT/seeds/$1.payload" <<'PY'
import sys, zlib
data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(data[8:9] + zlib.decompress(data[32:]))
PY
}
rm -f "$OUT"/seeds/*
if [ -n "$CAPTURE" ]; then
	add_seed given "$CAPTURE"
else
	# the golden captures: real ones of every kind (threads, hostile names,
	# 3.10 line tables, truncated stacks, wall mode, subprocesses, empty; kernel frames, v2)
	for f in "$ROOT"/tests/golden/captures/*.tbp; do
		add_seed "$(basename "$f" .tbp)" "$f"
	done
	# the crafted captures that once crashed, aborted or stalled a writer
	for f in "$ROOT"/tests/hostile/captures/*.tbp; do
		add_seed "crafted-$(basename "$f" .tbp)" "$f"
	done
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
