#!/usr/bin/env bash
# run.sh: cross-checks user/cpython/linetable.c against CPython's own co_positions()/co_lines() on stdlib
# code objects, once per interpreter listed by tests/pythons.sh (plus any sid interpreters in
# /var/cache/tachyon-bpf/pythons/bin).  LINETABLE_MAX_CODE=N caps code objects (0 = whole stdlib).
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
max_code=${LINETABLE_MAX_CODE:-20000}
sid_bin=/var/cache/tachyon-bpf/pythons/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Prints "<minor> <kind> <command...>" lines: tests/pythons.sh when present, else known paths.
list_pythons() {
    if [ -f "$root/tests/pythons.sh" ]; then
        bash "$root/tests/pythons.sh"
    else
        [ -x /usr/bin/python3.11 ] && echo "3.11 debian /usr/bin/python3.11"
        local v
        for v in 3.10.13 3.11.7 3.12.1 3.13.0; do
            local p=/root/.pyenv/versions/$v/bin/python${v%.*}
            [ -x "$p" ] && echo "${v%.*} pyenv $p"
        done
    fi
    local p
    for p in "$sid_bin"/python3.1[0-9]; do
        [ -x "$p" ] && echo "$(basename "$p" | sed 's/^python//') sid $p"
    done
}

gcc -Wall -Wextra -std=gnu11 -O2 -I"$root/user" -o "$work/check" \
    "$here/check.c" "$root/user/cpython/linetable.c" || { echo "linetable: build failed"; exit 1; }

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
done < <(list_pythons)

missing=""
for v in 3.10 3.11 3.12 3.13 3.14 3.15; do
    case "$tested" in *" $v "*) ;; *) missing="$missing $v" ;; esac
done
[ -n "$missing" ] && echo "linetable: not tested (no interpreter that runs):$missing"
if [ "$ran" -eq 0 ]; then
    echo "linetable: no interpreter ran"
    exit 1
fi
exit $status
