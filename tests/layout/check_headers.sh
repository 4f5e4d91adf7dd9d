#!/bin/bash
# check_headers.sh: checks the layouts of user/cpython/versions.c (through layout.c) against real
# CPython headers. For every supported version's (tests/pythons.sh --versions) header set found
# (pyenv builds; Debian sid -dev packages unpacked under $TB_SID_ROOT or fetched by
# tests/layout/fetch-headers.sh into $TB_HEADERS_DIR/root, default /var/cache/tachyon-bpf/headers),
# diffs offsetof() values (print_offsets.c: the layout, the thread-name objects) with
# tb_layout_builtin(); for 3.13+ also parses the headers' own _Py_DebugOffsets initializer, default
# and with Py_GIL_DISABLED: the free-threaded layout the agent makes of it (its thread-local
# bytecode, tag bits, str state bits, GIL, thread-name objects: the row's free-threaded facts)
# must equal what the same headers say. When the matching interpreter is installed, runs
# check_debug_offsets.py inside it (live walk of its own memory). The free-threaded builds of
# tests/setup-ft-pythons.sh ($TB_FT_DIR/3.Xt, default /var/cache/tachyon-bpf/ft) are checked the
# same way through their own headers (header initializer, and live).
# TB_LAYOUT_ARCH=arm64 checks Debian's arm64 builds instead, on this x86_64 host: the helpers
# are cross-built (tests/kernels/arch/arm64.sh's KARCH_CC) and run under qemu-aarch64 user
# mode, print_layout too (the table as the arm64 agent is compiled); bookworm's python3.11:arm64
# against its own headers (libpython3.11-dev:arm64, in tests/kernels/guest-root.sh's root) and
# live, sid's arm64 3.13-3.15 (TB_PYTHONS_ARCH=arm64 tests/setup-pythons.sh) live: their own
# _Py_DebugOffsets parsed == the built-in table, and the walk of their own memory.
# Exit 1 on any mismatch, 2 if nothing could be checked.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/layout
PYENV=${PYENV_ROOT:-/root/.pyenv}
SID=${TB_SID_ROOT:-/var/cache/tachyon-bpf/pythons/root}
HDRS=${TB_HEADERS_DIR:-/var/cache/tachyon-bpf/headers}/root
FT=${TB_FT_DIR:-/var/cache/tachyon-bpf/ft}
TB_KERNELS_ARCH=${TB_LAYOUT_ARCH:-amd64}
# shellcheck source=tests/kernels/arch.sh
. "$ROOT/tests/kernels/arch.sh"   # KARCH, KARCH_CC, KARCH_TRIPLET, KARCH_UNAME_M, KARCH_QEMU_USER
EMULATE=""
if [ "$(uname -m)" = "$KARCH_UNAME_M" ]; then
	CC=${CC:-gcc}
else
	CC=$KARCH_CC EMULATE=$KARCH_QEMU_USER
	command -v "$CC" >/dev/null || { echo "check_headers: $CC not found" >&2; exit 2; }
	command -v "$EMULATE" >/dev/null || { echo "check_headers: $EMULATE not found" >&2; exit 2; }
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail=0
checked=""

# runnable TMP/NAME: a foreign architecture's helper is moved to NAME.elf and NAME runs it under
# the user-mode emulator (with the cross libc: /usr/TRIPLET, libc6-arm64-cross), so the call
# sites (and check_debug_offsets.py's subprocess) run every helper the same way
runnable() {
	[ -n "$EMULATE" ] || return 0
	mv "$TMP/$1" "$TMP/$1.elf"
	printf '#!/bin/sh\nexec %s -L /usr/%s %s "$@"\n' "$EMULATE" "$KARCH_TRIPLET" "$TMP/$1.elf" > "$TMP/$1"
	chmod +x "$TMP/$1"
}

if ! $CC -Wall -Wextra -Werror -std=gnu11 -I"$ROOT/include" -I"$ROOT/user" \
	"$HERE/print_layout.c" "$ROOT/user/cpython/layout.c" "$ROOT/user/cpython/versions.c" "$ROOT/user/cpython/plumbing.c" \
	"$ROOT/user/cpython/opcodes_gen.c" -o "$TMP/print_layout"; then
	echo "check_headers: cannot build print_layout" >&2
	exit 2
fi
runnable print_layout

# compare LABEL EXPECTED ACTUAL: name=value files, prints one summary line.
compare() {
	local label=$1 exp=$2 act=$3 n bad
	sort "$exp" > "$TMP/e" && sort "$act" > "$TMP/a"
	n=$(wc -l < "$TMP/e")
	bad=$(join -t= -a1 -a2 -e MISSING -o 0,1.2,2.2 "$TMP/e" "$TMP/a" | awk -F= '$2 != $3')
	if [ -z "$bad" ] && [ "$n" -gt 0 ]; then
		echo "$label: $n fields match"
		return 0
	fi
	echo "$label: MISMATCH"
	echo "$bad" | awk -F= '{ printf "    %s: headers=%s table=%s\n", $1, $2, $3 }'
	return 1
}

# check_one PYBIN ROOT INCDIR... : one header set (PYBIN may be empty; ROOT: where Debian's
# pyconfig.h wrapper may be, ROOT/usr/include).
check_one() {
	local pybin=$1 root=$2; shift 2
	local incs=() d ver minor tag headers_ft
	for d in "$@"; do incs+=(-isystem "$d"); done
	incs+=(-idirafter "$root/usr/include")   # Debian's pyconfig.h wrapper

	if ! $CC -Wall -Wextra -Werror -std=gnu11 -DPy_BUILD_CORE "${incs[@]}" \
		"$HERE/print_offsets.c" -o "$TMP/po" 2> "$TMP/cc.err"; then
		echo "headers $1: print_offsets.c does not compile:"; sed 's/^/    /' "$TMP/cc.err" | head -20
		fail=1
		return
	fi
	runnable po
	"$TMP/po" > "$TMP/headers.txt"
	ver=$(awk -F= '$1=="version_hex"{print $2}' "$TMP/headers.txt")
	minor=$(awk -F= '$1=="minor"{print $2}' "$TMP/headers.txt")
	headers_ft=$(awk -F= '$1=="free_threaded"{print $2}' "$TMP/headers.txt")
	tag=$(awk -F= '{v[$1]=$2} END {print v["major"] "." v["minor"] "." v["micro"] (v["free_threaded"]=="1" ? "t" : "")}' "$TMP/headers.txt")

	if [ "$headers_ft" = 1 ]; then
		checked="$checked 3.${minor}t"
		echo "layout $tag: not compared (the built-in tables are the default build's)"
	else
		checked="$checked 3.$minor"
		if ! "$TMP/print_layout" builtin "$ver" > "$TMP/table.txt"; then
			echo "layout $tag: no built-in table"; fail=1
		elif ! compare "layout $tag" "$TMP/headers.txt" "$TMP/table.txt"; then
			fail=1
		fi
	fi

	# 3.13+: _Py_DebugOffsets as built by the headers' own initializer, default and free-threaded.
	local ft flags label facts
	facts=$("$TMP/print_layout" version "$minor" 2>/dev/null)
	for ft in 0 1; do
		grep -qx 'debug_size=0' <<<"$facts" && break
		flags=(-DPy_BUILD_CORE -DPy_DEFAULT_RECURSION_LIMIT=1000)
		label="debug offsets $tag (header initializer)"
		if [ $ft = 1 ]; then
			case $tag in *t) continue ;; esac
			flags+=(-DPy_GIL_DISABLED=1)
			label="debug offsets ${tag}t (header initializer, Py_GIL_DISABLED)"
		fi
		if ! $CC -std=gnu11 "${flags[@]}" "${incs[@]}" "$HERE/print_offsets.c" -o "$TMP/po_d" 2> "$TMP/cc.err" ||
		   ! $CC -std=gnu11 -no-pie -Wl,--unresolved-symbols=ignore-all "${flags[@]}" "${incs[@]}" \
			"$HERE/dump_debug_offsets.c" -o "$TMP/dump" 2>> "$TMP/cc.err"; then
			# a helper that does not build on new headers is reported, not counted as a mismatch
			echo "$label: not checked (helper does not compile: $(grep -m1 error "$TMP/cc.err"))"
			continue
		fi
		runnable po_d
		runnable dump
		"$TMP/po_d" > "$TMP/headers_d.txt"
		"$TMP/dump" "$TMP/dbg.bin"
		if "$TMP/print_layout" debug "$TMP/dbg.bin" > "$TMP/dbg.txt" 2> "$TMP/dbg.err"; then
			compare "$label" "$TMP/headers_d.txt" "$TMP/dbg.txt" || fail=1
		elif { [ $ft = 1 ] || [ "$headers_ft" = 1 ]; } && grep -qx 'free_threaded_ok=0' <<<"$facts" &&
		     grep -q "free-threaded.*not supported" "$TMP/dbg.err"; then
			echo "$label: rejected as intended ($(sed 's/^print_layout: //' "$TMP/dbg.err"))"
		else
			echo "$label: MISMATCH, parse failed: $(cat "$TMP/dbg.err")"; fail=1
		fi
	done

	# Live: the interpreter's own memory, read through ctypes (3.13+: its _Py_DebugOffsets).
	if [ -n "$pybin" ] && [ -x "$pybin" ] && [ "$headers_ft" = 1 ] && grep -qx 'free_threaded_ok=0' <<<"$facts"; then
		echo "live $tag: not run (free-threaded 3.${minor}t is not supported)"
	elif [ -n "$pybin" ] && [ -x "$pybin" ]; then
		live_one "$pybin"
	fi
}

# live_one PYBIN: check_debug_offsets.py run by the interpreter (its own memory; 3.13+: its own
# _Py_DebugOffsets parsed and compared with the built-in table)
live_one() {
	"$1" "$HERE/check_debug_offsets.py" "$TMP/print_layout" "$TMP/live.bin" || fail=1
}

VERSIONS=$(bash "$ROOT/tests/pythons.sh" --versions) || exit 2
# The supported versions no check above covered ($checked), in one line saying why ($1).
say_missing() {
	local missing="" v
	for v in $VERSIONS; do
		case " $checked " in *" $v "*) ;; *) missing="$missing $v" ;; esac
	done
	if [ -n "$missing" ]; then echo "not checked ($1):$missing"; fi
}

if [ "$KARCH" = arm64 ]; then
	# bookworm's 3.11: its headers and, live, its interpreter under the emulator (-L: the root's
	# loader, libraries and stdlib at their own paths)
	if ARM=$(TB_KERNELS_ARCH=arm64 bash "$ROOT/tests/kernels/guest-root.sh"); then
		printf '#!/bin/sh\nexec %s -L %s %s "$@"\n' "$EMULATE" "$ARM" "$ARM/usr/bin/python3.11" > "$TMP/python3.11"
		chmod +x "$TMP/python3.11"
		inc=$ARM/usr/include/python3.11
		check_one "$TMP/python3.11" "$ARM" "$inc" "$inc/internal" "$ARM/usr/include/$KARCH_TRIPLET/python3.11"
	fi
	# sid's 3.13+: live (their wrappers run the loader under the emulator themselves)
	for py in "${TB_PYTHONS_DIR:-/var/cache/tachyon-bpf/arm64-pythons}"/bin/python3.*; do
		[ -x "$py" ] || continue
		live_one "$py" && checked="$checked ${py##*/python}"
	done
	say_missing "no arm64 build here"
	[ -n "$checked" ] || { echo "check_headers: no arm64 CPython found" >&2; exit 2; }
	exit $fail
fi
for v in $VERSIONS; do
	m=${v#3.}
	for dir in "$PYENV"/versions/3.$m.*; do
		[ -d "$dir/include/python3.$m/internal" ] || continue
		check_one "$dir/bin/python3.$m" "$SID" "$dir/include/python3.$m" "$dir/include/python3.$m/internal"
	done
	# Debian sid -dev packages (dpkg -x into $SID or $HDRS); no interpreter run from here.
	for root in "$SID" "$HDRS"; do
		inc=$root/usr/include/python3.$m
		[ -d "$inc/internal" ] || continue
		dirs=("$inc" "$inc/internal")
		[ -d "$root/usr/include/x86_64-linux-gnu/python3.$m" ] && dirs+=("$root/usr/include/x86_64-linux-gnu/python3.$m")
		check_one "" "$root" "${dirs[@]}"
		break
	done
	# free-threaded builds (tests/setup-ft-pythons.sh): their own pyconfig.h defines Py_GIL_DISABLED
	inc=$FT/3.${m}t/include/python3.${m}t
	[ -d "$inc/internal" ] && check_one "$FT/3.${m}t/bin/python3.${m}t" "$SID" "$inc" "$inc/internal"
done

say_missing "no headers found"
if [ -z "$checked" ]; then
	echo "check_headers: no CPython headers found" >&2
	exit 2
fi
exit $fail
