#!/usr/bin/env bash
# tests/top/run.sh: drives `tachyon-bpf top` (real BPF sampling, as root) in an
# 80x24 tmux pseudo-terminal: the hot function and status line appear, keys
# change sort and filter, the opcode panel names spin's instructions, no line
# is wider than the pane, a resize re-lays the screen, and q / Ctrl-C /
# SIGTERM leave the program with the terminal restored (main screen, cursor
# shown, canonical mode with echo); with --kernel, kernel functions are
# listed with their module, with --native libz's with its library, with --async-aware the task
# rows and the task filter (y).  Prints "N passed, N failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-/usr/bin/python3.11}
WORK=tests/workloads/slices.py
SOCK="tbtop$$"
pass=0 fail=0

if ! command -v tmux >/dev/null; then
	echo "== installing tmux (Debian package)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq tmux >/dev/null
fi
[ -x ./tachyon-bpf ] || make -s tachyon-bpf || exit 1

T() { tmux -L "$SOCK" "$@"; }
cleanup() { T kill-server 2>/dev/null; }
trap cleanup EXIT

ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/     | /'; }
check() { # NAME CONDITION-STATUS [DETAIL]
	if [ "$2" -eq 0 ]; then ok "$1"; else bad "$1" "${3:-}"; fi
}

# Start COMMAND in session S; the pane's shell reports the exit code and
# the terminal modes afterwards, then waits so the pane can be inspected.
start() { # S COMMAND
	T new-session -d -s "$1" -x 80 -y 24 \
		"$2; echo TOP-EXIT=\$?; stty -a | tr -s ' ;\\n' ' ' | sed 's/^/STTY: /'; echo; sleep 600"
}
screen() { T capture-pane -p -J -t "$1"; }
wait_for() { # S REGEX SECONDS: 0 when the screen matches in time
	local end=$((SECONDS + $3))
	while [ $SECONDS -le "$end" ]; do
		screen "$1" | grep -Eq -- "$2" && return 0
		sleep 0.2
	done
	return 1
}
line() { screen "$1" | sed -n "${2}p"; }
wait_line() { # S ROW REGEX SECONDS: 0 when that row matches in time
	local end=$((SECONDS + $4))
	while [ $SECONDS -le "$end" ]; do
		line "$1" "$2" | grep -Eq -- "$3" && return 0
		sleep 0.2
	done
	return 1
}
fmt() { T display -p -t "$1" "$2"; }
top_pid() { pgrep -P "$(fmt "$1" '#{pane_pid}')" -x tachyon-bpf | head -1; }

# Every line of the screen fits WIDTH columns (-J joins wrapped lines).
fits() { # S WIDTH
	screen "$1" | "$PY" -c 'import sys; w=int(sys.argv[1]); sys.exit(any(len(l.rstrip("\n")) > w for l in sys.stdin))' "$2"
}

# Left cleanly: exit code 0 printed, main screen, cursor shown, cooked tty, no table.
check_left() { # S NAME TOPPID CHILDPID
	local s=$1 name=$2
	wait_for "$s" '^TOP-EXIT=' 5
	check "$name: program exited (exit code 0)" "$(screen "$s" | grep -q '^TOP-EXIT=0$'; echo $?)" "$(screen "$s")"
	check "$name: tachyon-bpf process gone" "$( ! kill -0 "$3" 2>/dev/null; echo $?)"
	if [ -n "$4" ]; then
		check "$name: profiled command stopped" "$( ! kill -0 "$4" 2>/dev/null; echo $?)"
	fi
	check "$name: alternate screen left" "$([ "$(fmt "$s" '#{alternate_on}')" = 0 ]; echo $?)"
	check "$name: cursor shown again" "$([ "$(fmt "$s" '#{cursor_flag}')" = 1 ]; echo $?)"
	check "$name: tty back in canonical mode with echo" \
		"$(screen "$s" | grep '^STTY:' | grep -Eq ' icanon ' && screen "$s" | grep '^STTY:' | grep -Eq ' echo '; echo $?)" \
		"$(screen "$s" | grep '^STTY:')"
	check "$name: table no longer on screen" "$( ! screen "$s" | grep -q 'Function (file:line)'; echo $?)"
	T kill-session -t "$s" 2>/dev/null
}

# q in session S, then check_left under NAME "q" with the program and its child as they were.
quit_checked() { # S NAME
	local tpid cpid
	tpid=$(top_pid "$1")
	cpid=$(pgrep -P "${tpid:-0}" | head -1)
	T send-keys -t "$1" q
	check_left "$1" "$2 q" "$tpid" "$cpid"
}

# --- plain view: status, sort and filter keys, layout, q -------------------
s=plain
start $s "./tachyon-bpf top -r 499 -- $PY $WORK 20"
wait_for $s '^> .*spin \(' 5
check "spin appears (selected, first row) within 5 s" $? "$(screen $s)"
tpid=$(top_pid $s)
cpid=$(pgrep -P "${tpid:-0}" | head -1)
l1=$(line $s 1)
check "status line has a rate" "$(echo "$l1" | grep -Eq '[0-9]+ samples/s'; echo $?)" "$l1"
check "status line shows 0 lost" "$(echo "$l1" | grep -Eq 'lost 0( |$)'; echo $?)" "$l1"
check "status line counts 1 process" "$(echo "$l1" | grep -Eq 'procs 1( |$)'; echo $?)" "$l1"
check "header marks the own column" "$(line $s 4 | grep -q '\*%Own'; echo $?)" "$(line $s 4)"
check "80x24: no line wider than 80 columns" "$(fits $s 80; echo $?)" "$(screen $s)"
check "80x24: 24 lines on screen" "$([ "$(screen $s | wc -l)" -eq 24 ]; echo $?)"
T send-keys -t $s t
wait_for $s '\*%Total' 2
check "t: header marks the total column" $? "$(line $s 4)"
check "t: status says Sort: total" "$(line $s 2 | grep -q 'Sort: total'; echo $?)" "$(line $s 2)"
T send-keys -t $s o
wait_for $s 'Sort: own' 2
check "o: back to sorting by own" $? "$(line $s 2)"
T send-keys -t $s h
wait_for $s 'Filter: thread [0-9]+ ' 2
check "h: a thread is selected" $? "$(line $s 2)"
wait_for $s '^> .*spin \(' 3
check "h: spin is in that thread's view" $? "$(screen $s)"
T send-keys -t $s p
wait_for $s "Filter: process $cpid " 2
check "p: the command's process is selected" $? "$(line $s 2)"
T send-keys -t $s Tab
wait_for $s 'Filter: thread [0-9]+ .*\(pid '"$cpid"'\)' 2
check "Tab: a thread of that process" $? "$(line $s 2)"
T send-keys -t $s a
wait_for $s 'Filter: all' 2
check "a: back to all" $? "$(line $s 2)"
T send-keys -t $s j
wait_line $s 6 '^>' 2
check "j: selection moves to the second row" $? "$(screen $s | sed -n 4,7p)"
# the user's selection follows its function through a re-sort
chosen=$(line $s 6 | sed -E 's/^> +([0-9.]+% +){2}([0-9.]+s +){2}//; s/ +$//')
T send-keys -t $s t
wait_for $s '\*%Total' 2
check "j then t: the selection follows its function ($chosen)" \
	"$(screen $s | grep '^>' | grep -qF -- "$chosen"; echo $?)" "$(screen $s | sed -n 4,12p)"
T send-keys -t $s o
wait_for $s '\*%Own' 2
T send-keys -t $s '?'
wait_for $s '^q quit' 2
check "?: help line" $? "$(line $s 3)"
T send-keys -t $s q
check_left $s "q" "$tpid" "$cpid"

# --- --opcodes: the instruction panel, and a resize -----------------------
s=ops
start $s "./tachyon-bpf top -r 499 --opcodes -- $PY $WORK 20"
wait_for $s '^Instructions of spin ' 5
check "--opcodes: panel for spin" $? "$(screen $s)"
wait_for $s '^ +[0-9.]+%  (COMPARE_OP|CALL)[A-Z_]* ' 3
check "--opcodes: panel shows COMPARE_OP or a CALL form" $? "$(screen $s | tail -8)"
check "--opcodes: panel title on row 17 of 24" "$(line $s 17 | grep -q '^Instructions of'; echo $?)" "$(screen $s)"
check "--opcodes 80x24: no line wider than 80 columns" "$(fits $s 80; echo $?)" "$(screen $s)"
tpid=$(top_pid $s)
T resize-window -t $s -x 100 -y 30
# the panel is on the screen before the resize too: wait for it on its new row (the redraw
# after SIGWINCH comes within the next tick, later on a loaded machine)
wait_line $s 23 '^Instructions of' 3
check "SIGWINCH: panel moves to row 23 of 30" $? "$(screen $s | grep -n Instructions)"
full="spin ($PWD/$WORK:8)" # the function column grows with the width (63 columns at 100)
if [ ${#full} -le 63 ]; then
	screen $s | grep -qF "$full"
else
	screen $s | grep 'spin (' | awk 'length > 80 { f = 1 } END { exit !f }'
fi
check "SIGWINCH: wider function column" $? "$(screen $s | grep 'spin (')"
check "100x30: no line wider than 100 columns" "$(fits $s 100; echo $?)" "$(screen $s)"
kill -TERM "$tpid"
check_left $s "SIGTERM" "$tpid" ""

# --- --live alias, Ctrl-C -------------------------------------------------
s=live
start $s "./tachyon-bpf --live -r 499 -- $PY $WORK 20"
wait_for $s 'spin \(' 5
check "--live: same view" $? "$(screen $s)"
tpid=$(top_pid $s)
cpid=$(pgrep -P "${tpid:-0}" | head -1)
T send-keys -t $s C-c
check_left $s "Ctrl-C" "$tpid" "$cpid"

# --- --kernel: kernel functions with their module ---------------------------
s=kernel
start $s "./tachyon-bpf top --kernel -r 499 -- $PY tests/workloads/syscalls.py 20 read"
wait_for $s '\[kernel\] +read_zero' 8
check "--kernel: read_zero listed with the [kernel] module" $? "$(screen $s)"
check "--kernel: header has a Module column" "$(line $s 4 | grep -q 'Module'; echo $?)" "$(line $s 4)"
T send-keys -t $s t
wait_for $s '\[kernel\] +do_syscall_64' 5
check "--kernel t: do_syscall_64 by total" $? "$(screen $s)"
check "--kernel: read_zero (Python) listed with its file" "$(screen $s | grep -q 'read_zero (.*py:'; echo $?)" "$(screen $s)"
check "--kernel 80x24: no line wider than 80 columns" "$(fits $s 80; echo $?)" "$(screen $s)"
quit_checked $s "--kernel"

# --- --native: native functions with their library ---------------------------
s=native
start $s "./tachyon-bpf top --native -r 499 -- $PY tests/native/workload.py zlib 20"
wait_for $s 'libz\.so[.0-9]* *$|libz\.so' 10
check "--native: a libz function listed with its library" $? "$(screen $s)"
T send-keys -t $s t
check "--native t: compress_loop (Python) listed by total with its file" "$(wait_for $s 'compress_loop \(.*py:' 5; echo $?)" "$(screen $s)"
# a selection the user never moved is the first row, not the function first by own when the
# table was first drawn (a libz leaf, far down by total: a full run found the table scrolled to it)
check "--native t: the selection is still the first row" "$(line $s 5 | grep -q '^>'; echo $?)" "$(screen $s | sed -n 4,9p)"
check "--native 80x24: no line wider than 80 columns" "$(fits $s 80; echo $?)" "$(screen $s)"
quit_checked $s "--native"

# --- --async-aware: task rows, y filters by the running task -----------------
APY=/var/cache/tachyon-bpf/pythons/bin/python3.14
if [ -x "$APY" ]; then
	s=tasks
	start $s "./tachyon-bpf top --async-aware -r 499 -- $APY tests/workloads/async_tasks.py 20"
	T send-keys -t $s t
	wait_for $s '<task alpha>' 10
	check "--async-aware: task rows (<task alpha>) by total" $? "$(screen $s)"
	T send-keys -t $s y
	wait_for $s 'Filter: task <task ' 5
	check "--async-aware y: filter by a task" $? "$(screen $s)"
	for _ in 1 2 3 4; do
		screen $s | grep -q 'Filter: task <task alpha>' && break
		T send-keys -t $s y
		sleep 0.5
	done
	wait_for $s 'alpha_work' 5 && ! screen $s | grep -q 'beta_work'
	check "--async-aware y: task alpha's view has alpha_work, not beta_work" $? "$(screen $s)"
	check "--async-aware 80x24: no line wider than 80 columns" "$(fits $s 80; echo $?)" "$(screen $s)"
	quit_checked $s "--async-aware"
fi

# --- not a terminal ---------------------------------------------------------
err=$(./tachyon-bpf top -- "$PY" "$WORK" 1 2>&1 >/dev/null)
rc=$?
check "stdout not a terminal: exit 2" "$([ $rc -eq 2 ]; echo $?)" "rc=$rc"
check "stdout not a terminal: one line on stderr" "$([ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] &&
	echo "$err" | grep -q 'needs a terminal'; echo $?)" "$err"

cleanup
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
