#!/bin/bash
# run-elf.sh: builds the ELF fuzzer (tests/fuzz/fuzz_elf.c: the unwind-table builder, the
# evaluator ranges and the symbol loader that --native runs on every file a process maps;
# clang libFuzzer + ASan/UBSan) and runs it for SECONDS (default 60) on seeds made here:
# small real shared libraries of this machine, tests/native/chain.c built with and without
# frame pointers, and the crafted files of tests/hostile/run.py's ELF checks (their sources
# are built here the same way).
#   tests/fuzz/run-elf.sh [SECONDS]
# Findings go to build/fuzz/elf-artifacts/; the corpus grows in build/fuzz/elf-corpus/.
# TB_FUZZ_SEED (default 1) fixes libFuzzer's seed so a run can be repeated.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_TO_RUN=${1:-60}
OUT=$ROOT/build/fuzz
CLANG=${CLANG:-clang}
SEEDS=$OUT/elf-seeds
mkdir -p "$OUT/elf-corpus" "$SEEDS" "$OUT/elf-artifacts"

FLAGS="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
make -C "$ROOT" -s B=build/fuzz CC="$CLANG" CFLAGS="$FLAGS" build/fuzz/libtachyon.a
$CLANG $FLAGS -fsanitize=fuzzer -std=gnu11 -Wall -Wextra -I"$ROOT/include" -I"$ROOT/user" \
	"$ROOT/tests/fuzz/fuzz_elf.c" "$OUT/libtachyon.a" $(make -s -C "$ROOT" print-ldlibs) -o "$OUT/fuzz_elf"

rm -f "$SEEDS"/*
# small real libraries (at most 256 KiB: the inputs' size limit)
for f in /usr/lib/x86_64-linux-gnu/libffi.so.8 /usr/lib/x86_64-linux-gnu/libz.so.1 \
	/usr/lib/x86_64-linux-gnu/libbz2.so.1.0 /usr/lib/x86_64-linux-gnu/libattr.so.1 \
	/usr/lib/x86_64-linux-gnu/libcap.so.2 /usr/lib/x86_64-linux-gnu/libuuid.so.1; do
	f=$(realpath "$f" 2>/dev/null) || continue
	[[ -f $f && $(stat -c %s "$f") -le 262144 ]] && cp "$f" "$SEEDS/"
done
# the native tests' chain, with and without frame pointers, and a crafted CFI bomb
cc -shared -fPIC -O2 -fomit-frame-pointer -o "$SEEDS/chain-nofp.so" "$ROOT/tests/native/chain.c"
cc -shared -fPIC -O0 -fno-omit-frame-pointer -o "$SEEDS/chain-fp.so" "$ROOT/tests/native/chain.c"
# MiniDebugInfo: the chain stripped, its .symtab in .gnu_debugdata (xz), as proc/debugfile.c reads it
cc -shared -fPIC -O2 -o "$SEEDS/chain-mini.so" "$ROOT/tests/native/chain.c"
objcopy --only-keep-debug "$SEEDS/chain-mini.so" "$OUT/mini" && objcopy --strip-debug "$OUT/mini"
xz -f "$OUT/mini" && strip --strip-all "$SEEDS/chain-mini.so"
objcopy --add-section .gnu_debugdata="$OUT/mini.xz" "$SEEDS/chain-mini.so" && rm -f "$OUT/mini.xz"
# a perf map (the same bytes go through its parser)
printf '7f0000001000 40 py::f:/x.py\n0x7f0000002000 0x10 jit\ngarbage\n' >"$SEEDS/perf.map"
python3 - "$ROOT" "$SEEDS" <<'PY'
import os, subprocess, sys
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "hostile"))
root, seeds = sys.argv[1], sys.argv[2]
src = open(os.path.join(root, "tests", "hostile", "run.py")).read()
# the crafted assembly of the hostile checks: CFI_BOMB_S (smaller), EVAL_OVERLAP_S
ns = {}
for name in ("EVAL_OVERLAP_S", "CFI_BOMB_S"):
    start = src.index(name + " = ")
    end = src.index("\n\n\n", start)
    exec(src[start:end], ns)
for name, text in (("eval-overlap", ns["EVAL_OVERLAP_S"]), ("cfi-bomb", ns["CFI_BOMB_S"].replace(".rept 8000", ".rept 80"))):
    s = os.path.join(seeds, name + ".s")
    open(s, "w").write(text)
    subprocess.run(["gcc", "-shared", "-nostdlib", "-o", os.path.join(seeds, name + ".so"), s], check=True)
    os.unlink(s)
PY
echo "fuzz-elf: seeds: $(cd "$SEEDS" && ls | tr '\n' ' '), running ${SECONDS_TO_RUN}s"
cd "$OUT"
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	./fuzz_elf -max_total_time="$SECONDS_TO_RUN" -seed="${TB_FUZZ_SEED:-1}" -max_len=262144 -rss_limit_mb=4096 \
	-timeout=20 -print_final_stats=1 -artifact_prefix="$OUT/elf-artifacts/" "$OUT/elf-corpus" "$SEEDS"
