#!/usr/bin/env bash
# run.sh: cross-checks user/cpython/linetable.c against CPython's own co_positions()/co_lines() on stdlib
# code objects, once per interpreter listed by tests/pythons.sh; names the supported versions
# (tests/pythons.sh --versions) it could not test.  LINETABLE_MAX_CODE=N caps code objects
# (0 = whole stdlib).
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
max_code=${LINETABLE_MAX_CODE:-20000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gcc -Wall -Wextra -std=gnu11 -O2 -I"$root/include" -I"$root/user" -o "$work/check" "$here/check.c" \
    "$root/user/cpython/linetable.c" "$root/user/cpython/versions.c" "$root/user/cpython/plumbing.c" "$root/user/cpython/opcodes_gen.c" \
    "$root/user/lib/mem.c" ||
    { echo "linetable: build failed"; exit 1; }

status=0 ran=0 tested=" " seen=" "
while read -r ver kind cmd; do
    case "$ver" in "#"*) continue ;; esac
    [ -n "${cmd:-}" ] || continue
    case "$seen" in *" $cmd "*) continue ;; esac   # sid interpreters may be listed twice
    seen="$seen$cmd "
    label="$ver $kind $cmd"
    (cd "$work" && eval "$cmd" '"$here/dump_positions.py"' --max-code "$max_code") \
        </dev/null 2>"$work/dump.err" | "$work/check" >"$work/check.out" 2>"$work/check.err"
    rcs=("${PIPESTATUS[@]}")
    out=$(cat "$work/check.out")
    if [ "${rcs[0]}" -ne 0 ]; then
        echo "SKIP $label: could not run dump_positions.py"
        tail -n 5 "$work/dump.err" | sed 's/^/     /'
    elif [ "${rcs[1]}" -eq 0 ]; then
        real=$(sed -n 's/^dump_positions: .*(\(.*\))$/\1/p' "$work/dump.err")
        echo "ok   $label (Python ${real:-?}): $out"
        ran=$((ran + 1))
        tested="$tested$ver "
    else
        echo "FAIL $label: ${out:-no result}"
        sed 's/^/     /' "$work/check.err"
        status=1
        ran=$((ran + 1))
        tested="$tested$ver "
    fi
done < <(bash "$root/tests/pythons.sh")

missing=""
for v in $(bash "$root/tests/pythons.sh" --versions); do
    case "$tested" in *" $v "*) ;; *) missing="$missing $v" ;; esac
done
[ -n "$missing" ] && echo "linetable: not tested (no interpreter that runs):$missing"
if [ "$ran" -eq 0 ]; then
    echo "linetable: no interpreter ran"
    exit 1
fi
exit $status
