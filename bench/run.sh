#!/usr/bin/env bash
# bench/run.sh: performance numbers for tachyon-bpf, as markdown tables.
#
#   bash bench/run.sh          (or: make bench)    ~5-8 minutes, needs root
#   bash bench/run.sh SECTION...                   only these sections
#
# Builds ./tachyon-bpf if needed (make), copies it aside so a rebuild by
# someone else mid-run does not change what is measured, then:
#   1. BPF run time per sample (kernel.bpf_stats_enabled + bpftool) for the
#      frame walker and the --bench-floor program, deep.py at several depths,
#      target pinned to one CPU and sampled only there; at depth 50 also
#      --no-opcodes, --opcodes and --bench-walk 1 (when the build has them)
#      and one pyenv 3.13/3.12 build; --kernel (when the build has it): at depth 50
#      (samples in user mode: no kernel stack, the flag's cost) and on
#      tests/workloads/syscalls.py (reads of /dev/zero: kernel stacks of ~10-15
#      frames) with and without it, next to the floor.
#      The same depths again in the program's bounded shape (TB_BPF_BOUNDED=1: the
#      walk as on kernels without bpf_loop, programs chained by tail calls).
#   1b. The same for threads that miss the thread-state cache (bench/many_threads.py):
#      thread-list walks and those the per-process walk budget skipped, per sample.
#   2. Slowdown of bench/cpu_bound.py, paired runs without/with the profiler.
#   3. Agent CPU per sample, lost samples, ring-buffer records/s (from 2).
#   4. Many Python processes at once (--all-python).
#   5. Wall mode.
#   6. soak (not by default: 10 minutes): --all-python -r 1000 under process
#      and thread churn (bench/churn.py soak), the agent's RSS and CPU every
#      30 s (bench/soak.py).
#   7. storm (not by default): a fork storm (bench/churn.py storm) with a
#      spinning survivor, 20 s of --all-python.
#   8. native: BPF run time per sample with --native (native frames unwound
#      in the program), measured as section 1 after the tables are loaded,
#      next to the Python-only walk and the floor: Debian 3.11 (unwind
#      tables), sid 3.15 (frame pointers), and pyenv 3.10 at --native-depth
#      5/20/50 (the cost per native frame).
#   9. async: BPF run time per sample with --async-aware (the running task and its
#      coroutine read per sample) on tests/workloads/async_tasks.py (two tasks
#      spinning under a gathering parent), next to the same walk without the flag
#      and the floor: sid 3.14 and 3.15; and with --bench-task-reads TASK_READS (the two
#      reads made that many more times: their cost amplified above the run-to-run noise).
#   10. anchors: CPython 3.15's own sampler (Tachyon, `python3.15 -m
#       profiling.sampling attach`) next to tachyon-bpf and the empty program on the
#       same 3.15 target in one run: the walk at DEPTHS (the per-frame fit), then
#       bench/anchors.py: target slowdown, profiler CPU and RSS at RATES, rounds
#       of none / tachyon-bpf / floor / Tachyon in rotated order.
#   12. startup: the time from the agent's start to its first sample (BPF load and
#       verification, in both of the program's shapes; discovery of every Python process;
#       the first sample), --all-python with 1 and with 300 Python processes running
#       (STARTUP_NS), and a SIGINT 0.1 s after the start (while it is starting up).
#   11. stacks (not by default: 10 minutes): --all-python -r 1000 on a stack-rich
#       host (bench/churn.py stacks: random call chains over 3,000 functions, nearly
#       every sample a new stack): the live agent's RSS per unique stack (bench/soak.py).
# Sections 6-12 alone replace their part of OUT and keep the rest.
# BPF run-time statistics are kept on by a BPF_ENABLE_STATS descriptor
# (bench/bpf_stats_hold.py) besides the sysctl: another job of a shared
# machine turning kernel.bpf_stats_enabled off does not stop them.
# Prints the tables on stdout (progress on stderr) and writes the same to
# bench/results-latest.md.  Benchmarks, not tests: slow numbers never fail
# the script; broken tooling (build, load, bpftool, a workload) does.
#
# Knobs (environment):
#   PY=/usr/bin/python3.11   target interpreter
#   PY_ALT=auto              extra interpreter for a depth-50 row (auto: newest
#                            /root/.pyenv/versions/3.13*|3.12*; none: skip)
#   REPS=3 SECS=4            section 1: runs per cell, capture seconds per run
#   DEPTHS="1 10 50 200"     section 1: deep.py recursion depths
#   WALK_HZ=999 MAXD=512     section 1: rate and --max-depth
#   TARGET_CPU=1 AGENT_CPU=0 section 1: where the target / the agent run
#   WALK_RING_MB=1 WALK_WARM_MS=2500  sections 1, 1b, 9: ring-buffer size and time left out at the
#                            start of each run: measured once the ring has wrapped (on this VM
#                            the first write to each fresh ring page costs extra; 0: default
#                            ring, no warm-up)
#   TARGET_NICE=-15          section 1: nice (and autogroup nice) of the target, so other jobs on the
#                            shared VM leave its CPU mostly to it (0: off)
#   PAIRS=5 RATES="99 1000 10000" SCALE=1.0   sections 2-3 (SCALE: work size)
#   OVERHEAD_NICE=-15        sections 2-3: autogroup nice of every run (0: off)
#   FLOOR_RATES=10000        section 2: rates also run with --bench-floor (the
#                            cost of the perf interrupts alone; "" = none)
#   NPROCS=20 MULTI_SECS=5 MULTI_HZ=1000      section 4
#   SECTIONS="walk threads native overhead multi wall anchors startup"  which sections to run (or as arguments)
#   ANCHOR_ROUNDS=3 ANCHOR_SCALE=1.0          section 10 (rates: RATES; target: PY315)
#   PY310=auto PY315=auto NATIVE_DEPTHS="5 20 50" NATIVE_WARM_MS=1500   section 8 (auto: pyenv
#                            3.10, sid 3.15; none: skip; time left out at the start)
#   PY314=auto (and PY315 above) TASK_READS=32   section 9 (auto: sid 3.14 / 3.15; none: skip)
#   SOAK_MIN=10 SOAK_HZ=1000 SOAK_EVERY=30    section 6: minutes, rate, seconds per row
#   SOAK_SCOPE=cgroup                         sections 6-7: cgroup (only the generator's own
#                                             cgroup v2, via --cgroup) or host (every Python process)
#   STORM_SECS=20 STORM_HZ=99 STORM_FORKERS=4 section 7
#   STACKS_MIN=10 STACKS_HZ=1000 STACKS_PROCS=2 section 11 (target: PY314, else PY)
#   TB=path                  measure another binary (no build)
#   OUT=bench/results-latest.md
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

PY=${PY:-/usr/bin/python3.11}
PY_ALT=${PY_ALT:-auto}
REPS=${REPS:-3}
SECS=${SECS:-4}
DEPTHS=${DEPTHS:-1 10 50 200}
WALK_HZ=${WALK_HZ:-999}
MAXD=${MAXD:-512}
TCPU=${TARGET_CPU:-1}
ACPU=${AGENT_CPU:-0}
NICE=${TARGET_NICE:--15}
ONICE=${OVERHEAD_NICE:--15}
PAIRS=${PAIRS:-5}
FLOOR_RATES=${FLOOR_RATES-10000}
RATES=${RATES:-99 1000 10000}
SCALE=${SCALE:-1.0}
NPROCS=${NPROCS:-20}
MULTI_SECS=${MULTI_SECS:-5}
MULTI_HZ=${MULTI_HZ:-1000}
SECTIONS=${SECTIONS:-walk threads native overhead multi wall anchors startup}
STARTUP_NS=${STARTUP_NS:-1 300}
ANCHOR_ROUNDS=${ANCHOR_ROUNDS:-3}
ANCHOR_SCALE=${ANCHOR_SCALE:-1.0}
PY310=${PY310:-auto}
PY315=${PY315:-auto}
PY314=${PY314:-auto}
TASK_READS=${TASK_READS:-32}
NATIVE_DEPTHS=${NATIVE_DEPTHS:-5 20 50}
NATIVE_WARM_MS=${NATIVE_WARM_MS:-1500}
WALK_WARM_MS=${WALK_WARM_MS:-2500}
WALK_RING_MB=${WALK_RING_MB:-1}
(($#)) && SECTIONS="$*"
SOAK_MIN=${SOAK_MIN:-10}
SOAK_HZ=${SOAK_HZ:-1000}
SOAK_EVERY=${SOAK_EVERY:-30}
STORM_SECS=${STORM_SECS:-20}
STACKS_MIN=${STACKS_MIN:-10}
STACKS_HZ=${STACKS_HZ:-1000}
STACKS_PROCS=${STACKS_PROCS:-2}
STORM_HZ=${STORM_HZ:-99}
STORM_FORKERS=${STORM_FORKERS:-4}
SOAK_SCOPE=${SOAK_SCOPE:-cgroup}
OUT=${OUT:-bench/results-latest.md}
POLL=0.2
HPY=/usr/bin/python3
[[ -x $HPY ]] || HPY=python3
DEEP=$ROOT/tests/workloads/deep.py
WORK=$ROOT/bench/cpu_bound.py

log() { printf '[bench %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { printf 'bench/run.sh: %s\n' "$*" >&2; exit 1; }
want() { [[ " $SECTIONS " == *" $1 "* ]]; }

# ---------------------------------------------------------------- checks
[[ $(id -u) -eq 0 ]] || die "needs root (BPF, perf events, sysctl)"
for c in bpftool taskset setsid renice make; do
	command -v "$c" >/dev/null || die "missing tool: $c"
done
[[ -x $PY ]] || die "PY=$PY is not executable"
[[ -f $DEEP ]] || die "missing $DEEP"
NPROC=$(nproc)
if ((TCPU >= NPROC || ACPU >= NPROC)); then
	die "TARGET_CPU=$TCPU / AGENT_CPU=$ACPU: this machine has $NPROC CPUs"
fi

if [[ $PY_ALT == auto ]]; then
	PY_ALT=none
	for v in 3.13 3.12; do
		c=$(ls -d /root/.pyenv/versions/"$v"*/bin/python"$v" 2>/dev/null | sort -V | tail -n1 || true)
		if [[ -n $c && -x $c ]]; then PY_ALT=$c; break; fi
	done
fi

# ---------------------------------------------------------------- state, cleanup
TMP=$(mktemp -d /tmp/tachyon-bench.XXXXXX)
RAW=$TMP/raw.jsonl
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
BGPIDS=()

cleanup() {
	local rc=$?
	for p in "${BGPIDS[@]:-}"; do
		[[ -n $p ]] && kill "$p" 2>/dev/null || true
	done
	sysctl -qw kernel.bpf_stats_enabled="$STATS_OLD" || true
	rm -rf "$TMP"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

STATS_FD=""
stats_on() {
	sysctl -qw kernel.bpf_stats_enabled=1
	[[ -n $STATS_FD ]] || exec {STATS_FD}> >("$HPY" "$ROOT/bench/bpf_stats_hold.py" >/dev/null)
}
stats_off() {
	sysctl -qw kernel.bpf_stats_enabled="$STATS_OLD"
	if [[ -n $STATS_FD ]]; then exec {STATS_FD}>&-; STATS_FD=""; fi
}

# ---------------------------------------------------------------- build
if [[ -z ${TB:-} ]]; then
	log "make tachyon-bpf"
	make -s tachyon-bpf >&2 || die "build failed"
	TB=$ROOT/tachyon-bpf
	GITREV="$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
	if [[ -n $(git status --porcelain -- bpf user include Makefile 2>/dev/null) ]]; then
		GITREV+=" + uncommitted changes in bpf/ user/ include/"
	fi
else
	GITREV="TB=$TB"
fi
[[ -x $TB ]] || die "no binary at $TB"
cp "$TB" "$TMP/tachyon-bpf"
TB=$TMP/tachyon-bpf

# A machine-speed reference point: one syscall round trip on the target CPU.
SYSCALL_US=""
if command -v perf >/dev/null; then
	SYSCALL_US=$(taskset -c "$TCPU" perf bench syscall basic -l 1000000 2>/dev/null |
		awk '/usecs\/op/ { print $1 }' || true)
fi

T_START=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

# Start a background process, remember it for cleanup; sets $BG.
bg() {
	"$@" &
	BG=$!
	BGPIDS+=("$BG")
}
# Stop a background process we started (it may have exited already).
stop() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# ---------------------------------------------------------------- section 1
# Steal ticks (USER_HZ) of the target CPU so far: the hypervisor running
# something else; run_time_ns includes it when it hits inside the program.
steal_ticks() { awk -v c="cpu$TCPU" '$1 == c { print $9 }' /proc/stat; }
# The target of one capture, into TARGET: deep.py DEPTH (it recurses DEPTH then spins), or
# for "threads:NATIVE:PYTHREADS[:churn]" bench/many_threads.py (threads that miss the
# thread-state cache, section "threads"), or for "syscalls" tests/workloads/syscalls.py
# (a thread reading /dev/zero: samples in the kernel); it ends by itself after SECONDS.
target_argv() {
	local py=$1 spec=$2 secs=$3 n m churn
	if [[ $spec == syscalls ]]; then
		TARGET=("$py" "$ROOT/tests/workloads/syscalls.py" "$secs" read)
	elif [[ $spec == async ]]; then
		TARGET=("$py" "$ROOT/tests/workloads/async_tasks.py" "$secs")
	elif [[ $spec == threads:* ]]; then
		IFS=: read -r _ n m churn <<<"$spec"
		TARGET=("$py" "$ROOT/bench/many_threads.py" "$n" "$m" "$secs" ${churn:+"$churn"})
	else
		TARGET=("$py" "$DEEP" "$spec" "$secs")
	fi
}
# walk_once LABEL VARIANT REP PYTHON DEPTH [extra tachyon-bpf flags...]   (DEPTH: see target_argv)
walk_once() {
	local label=$1 variant=$2 rep=$3 py=$4 depth=$5
	shift 5
	local flags=("$@") d=$TMP/w id="" cmap="" tpid apid m
	[[ $variant == floor ]] && flags+=(--bench-floor)
	rm -rf "$d" && mkdir -p "$d"

	# The target ends by itself after SECS+4 s.
	# Own session = own autogroup, whose nice then gives it CPU TCPU over the
	# other jobs of a shared machine (plain nice only works inside a group).
	# Every run samples longer: the counters are found (a few s on a loaded
	# machine), the warm-up passes (WALK_WARM_MS: the WALK_RING_MB ring has
	# wrapped, so fresh ring pages are not measured; section 8: NATIVE_WARM_MS,
	# the tables are loaded), then SECS are measured.
	local secs warm_ms=$WALK_WARM_MS
	[[ $label == native:* ]] && warm_ms=$NATIVE_WARM_MS
	secs=$((SECS + 3 + (warm_ms + 999) / 1000))
	[[ $WALK_RING_MB != 0 ]] && flags+=(--ringbuf-mb "$WALK_RING_MB")
	target_argv "$py" "$depth" "$((secs + 4))"
	bg setsid taskset -c "$TCPU" "${TARGET[@]}"
	tpid=$BG
	sleep 1
	kill -0 "$tpid" 2>/dev/null || die "target ${TARGET[*]} exited early"
	# the command line: a sid python runs under its own loader (/proc/PID/exe)
	tr '\0' ' ' <"/proc/$tpid/cmdline" | grep -q python || die "pid $tpid is not the target python"
	if [[ $NICE != 0 ]]; then
		renice -n "$NICE" -p "$tpid" >/dev/null
		if [[ -w /proc/$tpid/autogroup ]]; then echo "$NICE" >"/proc/$tpid/autogroup" || true; fi
	fi
	st0=$(steal_ticks)
	bg env "${WALK_ENV[@]}" taskset -c "$ACPU" "$TB" -p "$tpid" --cpu "$TCPU" -r "$WALK_HZ" -d "$secs" \
		--max-depth "$MAXD" -o "$d/out.json" "${flags[@]}"  2>"$d/err"
	apid=$BG
	for _ in $(seq 200); do
		id=$(grep -o 'program id [0-9]*' "$d/err" | awk '{print $3}' || true)
		[[ -n $id ]] && break
		kill -0 "$apid" 2>/dev/null || break
		sleep 0.05
	done
	[[ -n $id ]] || { cat "$d/err" >&2; die "no BPF program id from tachyon-bpf ($label $variant)"; }
	for m in $(taskset -c "$ACPU" bpftool prog show id "$id" --json | "$HPY" -c 'import json,sys; print(*json.load(sys.stdin).get("map_ids", []))'); do
		if bpftool map show id "$m" --json 2>/dev/null | grep -q '"name":"counters"'; then cmap=$m; fi
	done
	[[ -n $cmap ]] || die "no 'counters' map on BPF program $id"
	# Poll until the agent exits: keep the last (prog stats, counters) pair
	# read while the program was still loaded, and the first pair read
	# warm_ms in: the run is measured from there.
	local warm_until=""
	((warm_ms > 0)) && warm_until=$(($(date +%s%N) + warm_ms * 1000000))
	while kill -0 "$apid" 2>/dev/null; do
		# counters first: the target count then never exceeds run_cnt
		if taskset -c "$ACPU" bpftool map dump id "$cmap" --json >"$d/m.tmp" 2>/dev/null &&
			taskset -c "$ACPU" bpftool prog show id "$id" --json >"$d/p.tmp" 2>/dev/null; then
			mv "$d/p.tmp" "$d/prog.json"
			mv "$d/m.tmp" "$d/map.json"
			if [[ -n $warm_until && ! -s $d/prog0.json ]] && (($(date +%s%N) >= warm_until)); then
				cp "$d/prog.json" "$d/prog0.json"
				cp "$d/map.json" "$d/map0.json"
			fi
		fi
		sleep "$POLL"
	done
	if ! wait "$apid"; then
		cat "$d/err" >&2
		die "tachyon-bpf failed ($label $variant)"
	fi
	st1=$(steal_ticks)
	stop "$tpid"
	[[ -s $d/prog.json && -s $d/map.json ]] || die "could not read the BPF program's stats ($label $variant)"
	"$HPY" "$ROOT/bench/stats.py" walk "$RAW" "$label" "$variant" "$rep" \
		"$d/prog.json" "$d/map.json" "$d/out.json" "$((st1 - st0))" "$d/err" "$d/prog0.json" "$d/map0.json"
	tail -n1 "$RAW" | "$HPY" -c 'import json,sys; r=json.loads(sys.stdin.read()); print("    %-22s %-6s %6.0f ns/run  runs %5d  target %5d  frames/sample %s" % (r["label"], r["variant"], r["ns_per_run"], r["run_cnt"], r["target_runs"], "%.1f" % r["frames_per_sample"] if r["frames_per_sample"] else "-"))' >&2
}

# Environment of the agent in walk_once (the bounded rows: TB_BPF_BOUNDED=1).
WALK_ENV=()
# Does this build accept these options? (rows for newer flags are optional)
supports() { "$TB" "$@" --help >/dev/null 2>&1; }

if want walk; then
	stats_on
	log "section 1: BPF run time per sample (REPS=$REPS, ${SECS}s each, $WALK_HZ Hz, CPU $TCPU)"
	for rep in $(seq "$REPS"); do
		for depth in $DEPTHS; do
			walk_once "depth $depth" walker "$rep" "$PY" "$depth"
			walk_once "depth $depth" floor "$rep" "$PY" "$depth"
			# the program's shape for kernels without bpf_loop (5.10-5.16), here forced
			WALK_ENV=(TB_BPF_BOUNDED=1)
			walk_once "bounded shape, depth $depth" walker "$rep" "$PY" "$depth"
			WALK_ENV=()
		done
		walk_once "depth 50, --no-opcodes" walker "$rep" "$PY" 50 --no-opcodes
		if supports --opcodes; then
			walk_once "depth 50, --opcodes (every frame)" walker "$rep" "$PY" 50 --opcodes
		fi
		if supports --bench-walk 1; then
			walk_once "depth 50, --bench-walk 1 (no code-object read)" walker "$rep" "$PY" 50 --bench-walk 1
		fi
		if supports --kernel; then
			walk_once "depth 50, --kernel (samples in user mode)" walker "$rep" "$PY" 50 --kernel
			walk_once "syscalls.py (reads of /dev/zero)" walker "$rep" "$PY" syscalls
			walk_once "syscalls.py (reads of /dev/zero)" floor "$rep" "$PY" syscalls
			walk_once "syscalls.py, --kernel" walker "$rep" "$PY" syscalls --kernel
			walk_once "syscalls.py, --kernel" floor "$rep" "$PY" syscalls --kernel
		fi
		if [[ $PY_ALT != none ]]; then
			walk_once "depth 50, $(basename "$PY_ALT") ($("$PY_ALT" -c 'import platform; print(platform.python_version())'))" \
				walker "$rep" "$PY_ALT" 50
		fi
	done
	stats_off
fi

# ---------------------------------------------------------------- section 1b
# Thread-list walks: threads without a Python state (native, spinning; or churning: new
# thread ids all the time) behind 500 idle Python threads, so that each walk after a
# thread-state cache miss visits ~500 entries; the per-process walk budget caps them.
if want threads; then
	stats_on
	log "section 1b: thread-list walks (REPS=$REPS, ${SECS}s each, $WALK_HZ Hz, CPU $TCPU)"
	for rep in $(seq "$REPS"); do
		walk_once "threads: 64 native" walker "$rep" "$PY" threads:64:500
		walk_once "threads: 64 native, churning" walker "$rep" "$PY" threads:64:500:churn
		walk_once "threads: 64 native" floor "$rep" "$PY" threads:64:500
	done
	stats_off
fi

# ---------------------------------------------------------------- section 8
# --native: deep.py 50 as in section 1, the tables loaded first (NATIVE_WARM).
pick_python() { # VAR-VALUE GLOB...: auto -> the newest match, none -> none
	local v=$1 c
	shift
	if [[ $v != auto ]]; then echo "$v"; return; fi
	c=$(ls -d "$@" 2>/dev/null | sort -V | tail -n1 || true)
	[[ -n $c && -x $c ]] && echo "$c" || echo none
}
pyname() { echo "$(basename "$1") $("$1" -c 'import platform; print(platform.python_version())')"; }
if want native; then
	supports --native || die "this build has no --native"
	PY310=$(pick_python "$PY310" /root/.pyenv/versions/3.10*/bin/python3.10)
	PY315=$(pick_python "$PY315" /var/cache/tachyon-bpf/pythons/bin/python3.15)
	stats_on
	log "section 8: --native (REPS=$REPS, ${SECS}s each from ${NATIVE_WARM_MS} ms in, $WALK_HZ Hz, CPU $TCPU)"
	for rep in $(seq "$REPS"); do
		for py in "$PY" "$PY315"; do
			[[ $py == none ]] && continue
			walk_once "native: $(pyname "$py"), Python only" walker "$rep" "$py" 50
			walk_once "native: $(pyname "$py"), Python only" floor "$rep" "$py" 50
			walk_once "native: $(pyname "$py"), --native" walker "$rep" "$py" 50 --native
		done
		if [[ $PY310 != none ]]; then
			walk_once "native: $(pyname "$PY310"), Python only" walker "$rep" "$PY310" 50
			for n in $NATIVE_DEPTHS; do
				walk_once "native: $(pyname "$PY310"), --native-depth $n" walker "$rep" "$PY310" 50 \
					--native-depth "$n"
			done
		fi
	done
	stats_off
fi

# ---------------------------------------------------------------- section 9
# --async-aware: two spinning tasks under a gathering parent, with and without the flag.
if want async; then
	supports --async-aware || die "this build has no --async-aware"
	PY314=$(pick_python "$PY314" /var/cache/tachyon-bpf/pythons/bin/python3.14)
	PY315=$(pick_python "$PY315" /var/cache/tachyon-bpf/pythons/bin/python3.15)
	stats_on
	log "section 9: --async-aware (REPS=$REPS, ${SECS}s each, $WALK_HZ Hz, CPU $TCPU)"
	for rep in $(seq "$REPS"); do
		for py in "$PY314" "$PY315"; do
			[[ $py == none ]] && continue
			walk_once "async: $(pyname "$py"), without the flag" walker "$rep" "$py" async
			walk_once "async: $(pyname "$py"), without the flag" floor "$rep" "$py" async
			walk_once "async: $(pyname "$py"), --async-aware" walker "$rep" "$py" async --async-aware
			walk_once "async: $(pyname "$py"), --async-aware --bench-task-reads $TASK_READS" walker "$rep" "$py" async \
				--async-aware --bench-task-reads "$TASK_READS"
		done
	done
	stats_off
fi

# ---------------------------------------------------------------- section 10
# Anchors: the walk on the 3.15 target (the fit), then Tachyon next to tachyon-bpf.
if want anchors; then
	PY315=$(pick_python "$PY315" /var/cache/tachyon-bpf/pythons/bin/python3.15)
	[[ $PY315 != none ]] || die "section anchors needs CPython 3.15 (PY315=)"
	"$PY315" -c 'import profiling.sampling' 2>/dev/null || die "$PY315 has no profiling.sampling (Tachyon)"
	stats_on
	log "section 10: anchors, walk on $(pyname "$PY315") (REPS=$REPS, DEPTHS=$DEPTHS)"
	for rep in $(seq "$REPS"); do
		for depth in $DEPTHS; do
			walk_once "anchors: depth $depth" walker "$rep" "$PY315" "$depth"
			walk_once "anchors: depth $depth" floor "$rep" "$PY315" "$depth"
		done
	done
	stats_off
	log "section 10: anchors, overhead at $RATES Hz, $ANCHOR_ROUNDS rounds"
	"$HPY" "$ROOT/bench/anchors.py" "$TB" "$PY315" "$RAW" --rates "$RATES" --rounds "$ANCHOR_ROUNDS" \
		--scale "$ANCHOR_SCALE" || die "bench/anchors.py failed"
fi

# ---------------------------------------------------------------- sections 2-3
# Run a command in its own session (= its own autogroup) at autogroup nice
# ONICE: the same treatment for the runs with and without the profiler.
prio() {
	if [[ $ONICE == 0 ]]; then
		"$@"
	else
		setsid bash -c 'echo "$0" >/proc/self/autogroup 2>/dev/null || true
			exec nice -n "$0" "$@"' "$ONICE" "$@"
	fi
}
if want overhead; then
	[[ -f $WORK ]] || die "missing $WORK"
	log "sections 2-3: cpu_bound.py slowdown, PAIRS=$PAIRS at $RATES Hz (+ --bench-floor at ${FLOOR_RATES:-none})"
	# pair_runs HZ VARIANT: PAIRS alternating without/with runs
	pair_runs() {
		local hz=$1 variant=$2 pair d=$TMP/p flags=()
		[[ $variant == floor ]] && flags=(--bench-floor)
		for pair in $(seq "$PAIRS"); do
			rm -rf "$d" && mkdir -p "$d"
			run_base() { prio "$PY" "$WORK" "$SCALE" >"$d/base.out" || die "workload failed"; }
			run_with() {
				prio "$TB" -q -r "$hz" "${flags[@]}" -o "$d/with.json" -- "$PY" "$WORK" "$SCALE" \
					>"$d/with.out" || die "tachyon-bpf -r $hz ${flags[*]} -- cpu_bound.py failed"
			}
			if ((pair % 2)); then run_base; run_with; else run_with; run_base; fi
			"$HPY" "$ROOT/bench/stats.py" pair "$RAW" "$hz" "$pair" "$d/base.out" "$d/with.out" \
				"$d/with.json" "$variant"
			tail -n1 "$RAW" | "$HPY" -c 'import json,sys; r=json.loads(sys.stdin.read()); print("    %5d Hz %-6s pair %d: %.3f s / %.3f s = %.3f, %d samples, agent %.1f us/sample, lost %d" % (r["hz"], r["variant"], r["pair"], r["with_s"], r["base_s"], r["ratio"], r["samples"], 1e6*r["agent_cpu_s"]/max(1,r["samples"]), r["lost"]))' >&2
		done
	}
	for hz in $RATES; do
		pair_runs "$hz" walker
		if [[ " $FLOOR_RATES " == *" $hz "* ]]; then pair_runs "$hz" floor; fi
	done
fi

# ---------------------------------------------------------------- section 4
if want multi; then
	log "section 4: $NPROCS spinning Python processes, --all-python -r $MULTI_HZ -d $MULTI_SECS"
	spin=()
	for _ in $(seq "$NPROCS"); do
		bg "$PY" "$DEEP" 10 "$((MULTI_SECS + 15))"
		spin+=("$BG")
	done
	sleep 1.5
	for p in "${spin[@]}"; do kill -0 "$p" 2>/dev/null || die "a spinning python exited early"; done
	"$TB" -q --all-python -d "$MULTI_SECS" -r "$MULTI_HZ" -o "$TMP/multi.json" ||
		die "tachyon-bpf --all-python failed"
	for p in "${spin[@]}"; do stop "$p"; done
	"$HPY" "$ROOT/bench/stats.py" multi "$RAW" "$NPROCS" "$TMP/multi.json"
fi


# ---------------------------------------------------------------- section 5
# Wall mode: a sched_switch program records every profiled switch-out. Paired
# slowdown of a thread-heavy program, switch-outs per second handled, and the
# program's cost per switch (all switches on the host, profiled or not).
if want wall; then
	log "section 5: wall mode on bench/thread_switch.py, PAIRS=$PAIRS"
	ratios=()
	for pair in $(seq "$PAIRS"); do
		b=$(prio "$PY" "$ROOT/bench/thread_switch.py" "$SCALE" | awk '{print $2}')
		w=$(prio "$TB" -q --mode wall -r 99 -o "$TMP/wall.json" -- "$PY" "$ROOT/bench/thread_switch.py" "$SCALE" | awk '{print $2}')
		ratios+=("$("$HPY" -c "print($w / $b)")")
		log "    pair $pair: $w s / $b s"
	done
	old_stats=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
	"$TB" --mode wall -r 99 -o "$TMP/wall2.json" -- "$PY" "$ROOT/bench/thread_switch.py" \
		"$("$HPY" -c "print(4 * $SCALE)")" >/dev/null 2>"$TMP/wall.err" &
	wpid=$!
	switch_stats() {
		bpftool prog show --json 2>/dev/null | "$HPY" -c '
import json, sys
progs = [p for p in json.load(sys.stdin) if p.get("name") == "tb_switch"]
p = max(progs, key=lambda p: p["id"]) if progs else {}
print(p.get("run_time_ns", 0), p.get("run_cnt", 0))'
	}
	sleep 1
	read -r rt0 cnt0 <<<"$(switch_stats)"
	sleep 1
	read -r rt1 cnt1 <<<"$(switch_stats)"
	sw="$((rt1 - rt0)) $((cnt1 - cnt0))"
	wait "$wpid" || true
	sysctl -qw kernel.bpf_stats_enabled="$old_stats"
	"$HPY" - "$TMP/wall.json" "$sw" "${ratios[@]}" >"$TMP/wall.md" <<'PYEOF'
import json, statistics, sys
meta = json.load(open(sys.argv[1]))["meta"]
rt, cnt = (int(x) for x in sys.argv[2].split())
ratios = sorted(float(x) for x in sys.argv[3:])
print("\n## 5. Wall mode (`--mode wall`)\n")
print("`bench/thread_switch.py`: 8 threads alternating ~0.1 ms of Python with `time.sleep(0.0002)`; "
      "paired runs without / with `tachyon-bpf --mode wall -r 99`. The sched_switch program runs on every "
      "switch of the host; for tasks that are not profiled it stops after two hash lookups.\n")
print("| pairs | median slowdown | spread | sched_switch runs/s (all tasks) | ns per switch (all tasks) | off-CPU stacks recorded | lost |")
print("|---:|---:|---:|---:|---:|---:|---:|")
med = statistics.median(ratios) - 1 if ratios else 0
dur = 1.0
print("| %d | %+.1f%% | %+.1f%% .. %+.1f%% | %s | %s | %d | %d |" % (
    len(ratios), 100 * med, 100 * (ratios[0] - 1) if ratios else 0, 100 * (ratios[-1] - 1) if ratios else 0,
    "{:,}".format(int(cnt / dur)) if cnt else "n/a", "{:,}".format(rt // cnt) if cnt else "n/a",
    meta.get("off_cpu_records", 0), meta.get("lost", 0)))
PYEOF
fi

# ---------------------------------------------------------------- sections 6-7
# Churn: the agent's memory and CPU over time (bench/soak.py prints a section).
if want soak; then
	log "section 6: soak, $SOAK_MIN min of --all-python -r $SOAK_HZ under churn"
	"$HPY" "$ROOT/bench/soak.py" "$TB" soak "$((SOAK_MIN * 60))" --hz "$SOAK_HZ" --every "$SOAK_EVERY" \
		--scope "$SOAK_SCOPE" --python "$PY" --out-dir "$TMP/soak" >"$TMP/soak.md" || die "the soak failed"
fi
if want storm; then
	log "section 7: fork storm, $STORM_SECS s of --all-python -r $STORM_HZ, $STORM_FORKERS forkers"
	"$HPY" "$ROOT/bench/soak.py" "$TB" storm "$STORM_SECS" --hz "$STORM_HZ" --every 5 \
		--forkers "$STORM_FORKERS" --scope "$SOAK_SCOPE" --python "$PY" --out-dir "$TMP/storm" >"$TMP/storm.md" ||
		die "the storm failed"
fi
if want stacks; then
	log "section 11: a stack-rich host, $STACKS_MIN min of --all-python -r $STACKS_HZ"
	"$HPY" "$ROOT/bench/soak.py" "$TB" stacks "$((STACKS_MIN * 60))" --hz "$STACKS_HZ" --every "$SOAK_EVERY" \
		--procs "$STACKS_PROCS" --scope "$SOAK_SCOPE" --python "$PY" --out-dir "$TMP/stacks" >"$TMP/stacks.md" ||
		die "the stack-rich run failed"
fi
# ---------------------------------------------------------------- section 12
# Start-up: N Python processes (N-1 asleep, one spinning), --all-python -d 1; the agent's
# own "start-up:" line (BPF program loaded, processes found, first sample), REPS runs each.
if want startup; then
	log "section 12: start-up with STARTUP_NS=\"$STARTUP_NS\" Python processes"
	{
		echo "## 12. Start-up: from the agent's start to its first sample"
		echo
		echo "\`--all-python -d 1\` with N Python processes running (N-1 asleep, one spinning), median of $REPS"
		echo "runs (min-max); the agent's own start-up line: BPF program loaded (and verified), every"
		echo "process found, first sample.  Kernel $(uname -r)."
		echo
		echo "| processes | program shape | BPF load | processes found in | first sample after |"
		echo "|---:|---|---:|---:|---:|"
	} >"$TMP/startup.md"
	for n in $STARTUP_NS; do
		sl=()
		for _ in $(seq $((n - 1))); do bg "$PY" -c 'import time; time.sleep(600)'; sl+=("$BG"); done
		bg "$PY" -c 'while True: pass'
		sl+=("$BG")
		sleep $((2 + n / 100))
		for shape in loop bounded; do
			: >"$TMP/startup.txt"
			for _ in $(seq "$REPS"); do
				env TB_BPF_BOUNDED=$([[ $shape == bounded ]] && echo 1 || echo 0) \
					"$TB" --all-python -d 1 -o "$TMP/startup.json" 2>&1 >/dev/null |
					grep 'start-up:' >>"$TMP/startup.txt" || die "no start-up line (N=$n, $shape)"
			done
			"$HPY" - "$n" "$shape" "$TMP/startup.txt" >>"$TMP/startup.md" <<'PYEOF'
import re, statistics, sys
n, shape, path = sys.argv[1:4]
rows = [re.search(r"loaded in ([0-9.]+) s, (\d+) process(?:es)? found in ([0-9.]+) s, first sample ([0-9.]+) s", l)
        for l in open(path)]
rows = [m for m in rows if m]
def col(i):
    v = [float(m.group(i)) for m in rows]
    return "%.3f s (%.3f-%.3f)" % (statistics.median(v), min(v), max(v)) if v else "—"
found = max((int(m.group(2)) for m in rows), default=0)
print("| %s (%d found) | %s | %s | %s | %s |" % (n, found, "bpf_loop" if shape == "loop" else "bounded (5.10-5.16)",
                                                col(1), col(3), col(4)))
PYEOF
		done
		if [[ $n == "${STARTUP_NS##* }" ]]; then
			"$TB" --all-python -d 30 -o "$TMP/startup-sig.json" 2>"$TMP/startup-sig.err" &
			apid=$!
			t0=$(date +%s%N)
			sleep 0.1
			kill -INT "$apid"
			rc=0
			wait "$apid" || rc=$?
			t1=$(date +%s%N)
			{
				echo
				echo "SIGINT 0.1 s after the start with $n processes: exit $rc after $(( (t1 - t0) / 1000000 )) ms," \
					"output $([[ -s $TMP/startup-sig.json ]] && echo written || echo MISSING)."
			} >>"$TMP/startup-sig.md"
		fi
		for p in "${sl[@]}"; do stop "$p"; done
	done
	[[ -f $TMP/startup-sig.md ]] && cat "$TMP/startup-sig.md" >>"$TMP/startup.md"
fi

if ! want walk && ! want overhead && ! want multi && ! want wall; then
	# only the churn and native sections: they replace their own part of OUT
	want native && "$HPY" "$ROOT/bench/stats.py" native "$RAW" "$TCPU" "$WALK_HZ" >"$TMP/native.md"
	want anchors && "$HPY" "$ROOT/bench/stats.py" anchors "$RAW" "$TCPU" "$WALK_HZ" "$PY315" >"$TMP/anchors.md"
	want async && "$HPY" "$ROOT/bench/stats.py" async "$RAW" "$TCPU" "$WALK_HZ" >"$TMP/async.md"
	for f in "$TMP/soak.md" "$TMP/storm.md" "$TMP/native.md" "$TMP/async.md" "$TMP/anchors.md" "$TMP/stacks.md" "$TMP/startup.md"; do
		[[ -f $f ]] || continue
		"$HPY" - "$OUT" "$f" <<'PYEOF'
import re, sys
out, new = sys.argv[1], open(sys.argv[2]).read().strip("\n")
head = new.split("\n", 1)[0]                       # "## 6. ..." .. "## 10. ..."
number = head.split()[1]
try:
    old = open(out).read()
except OSError:
    old = "# tachyon-bpf benchmarks\n"
parts = re.split(r"(?m)^(?=## )", old)
kept = [p for p in parts if not p.startswith("## " + number + " ")]
text = "".join(kept).rstrip("\n") + "\n\n" + new + "\n"
open(out, "w").write(text)
PYEOF
		cat "$f"
	done
	log "updated $OUT"
	exit 0
fi

# ---------------------------------------------------------------- report
alt_desc=$PY_ALT
[[ $PY_ALT != none ]] && alt_desc="$PY_ALT ($("$PY_ALT" -c 'import platform; print(platform.python_version())'))"
{
	echo "DATE=$(date '+%Y-%m-%d %H:%M %Z')"
	echo "NPROC=$NPROC"
	echo "CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "KERNEL=$(uname -r)"
	echo "PY=$PY"
	echo "PYVER=$("$PY" -c 'import platform; print(platform.python_version())')"
	echo "GITREV=$GITREV"
	echo "LOAD0=$LOAD0"
	echo "LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "SYSCALL_US=$SYSCALL_US"
	echo "VULNS=$(for f in /sys/devices/system/cpu/vulnerabilities/*; do
		v=$(cat "$f" 2>/dev/null || true)
		[[ -z $v || $v == "Not affected" ]] || printf '%s (%s); ' "$(basename "$f")" "$v"
	done | sed 's/; $//')"
	echo "ONICE=$ONICE"
	echo "ELAPSED=$(($(date +%s) - T_START))"
	echo "TCPU=$TCPU"
	echo "ACPU=$ACPU"
	echo "NICE=$NICE"
	echo "WALK_HZ=$WALK_HZ"
	echo "SECS=$SECS"
	echo "MAXD=$MAXD"
	echo "WALK_RING_MB=$WALK_RING_MB"
	echo "WALK_WARM_MS=$WALK_WARM_MS"
	echo "REPS=$REPS"
	echo "MULTI_SECS=$MULTI_SECS"
	echo "KNOBS=REPS=$REPS SECS=$SECS DEPTHS=\"$DEPTHS\" PAIRS=$PAIRS RATES=\"$RATES\" FLOOR_RATES=\"$FLOOR_RATES\" SCALE=$SCALE NPROCS=$NPROCS PY_ALT=$alt_desc"
} >"$TMP/header.env"
"$HPY" "$ROOT/bench/stats.py" render "$RAW" "$TMP/header.env" >"$TMP/results.md"
[[ -f $TMP/wall.md ]] && cat "$TMP/wall.md" >>"$TMP/results.md"
want native && "$HPY" "$ROOT/bench/stats.py" native "$RAW" "$TCPU" "$WALK_HZ" >"$TMP/native.md"
want anchors && "$HPY" "$ROOT/bench/stats.py" anchors "$RAW" "$TCPU" "$WALK_HZ" "$PY315" >"$TMP/anchors.md"
want async && "$HPY" "$ROOT/bench/stats.py" async "$RAW" "$TCPU" "$WALK_HZ" >"$TMP/async.md"
for f in "$TMP/soak.md" "$TMP/storm.md" "$TMP/native.md" "$TMP/async.md" "$TMP/anchors.md" "$TMP/stacks.md" "$TMP/startup.md"; do
	[[ -f $f ]] && cat "$f" >>"$TMP/results.md"
done
cp "$TMP/results.md" "$OUT"
cat "$TMP/results.md"
log "wrote $OUT"
