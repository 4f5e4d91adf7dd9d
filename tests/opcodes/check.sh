#!/usr/bin/env bash
# check.sh: the generated opcode tables (user/cpython/opcodes_gen.c) must agree, for
# every opcode number, with the dis/opcode metadata of every Python present; a supported
# version (tests/pythons.sh --versions) with no interpreter is named.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)/print_table
gcc -O1 -Wall -Wextra -Iinclude -Iuser -o "$bin" tests/opcodes/print_table.c user/cpython/opcodes.c \
	user/cpython/opcodes_gen.c user/cpython/versions.c user/cpython/plumbing.c || exit 1
ran=0
failed=0
seen=""
while read -r minor kind cmd; do
	[ -n "$minor" ] || continue
	want=$(eval "$cmd scripts/gen_opcodes.py --dump" 2>&1) || { echo "opcodes $minor $kind: cannot run"; failed=1; continue; }
	got=$("$bin" "${minor#3.}")
	if [ "$want" = "$got" ]; then
		echo "opcodes $minor ($kind): $(echo "$got" | wc -l) opcodes match"
	else
		echo "opcodes $minor ($kind): MISMATCH"
		diff <(echo "$want") <(echo "$got") | head -10
		failed=1
	fi
	ran=$((ran + 1))
	seen="$seen $minor"
done < <(bash tests/pythons.sh 2>/dev/null)
for v in $(bash tests/pythons.sh --versions); do
	case " $seen " in *" $v "*) ;; *) echo "opcodes: $v not checked (no interpreter)";; esac
done
[ "$ran" -gt 0 ] && [ "$failed" -eq 0 ]
