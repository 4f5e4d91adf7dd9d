#!/bin/bash
# Lists the CPython interpreters on this machine that the tests can profile, one per line:
#   <minor-version> <kind> <command...>     e.g.  3.11 debian-static /usr/bin/python3.11
# Kind is <source>-<static|shared>: source debian, pyenv, sid (tests/setup-pythons.sh) or ft
# (free-threaded builds of tests/setup-ft-pythons.sh); static/shared is whether the real python
# binary links libpython dynamically (NEEDED).
#
# Considers /usr/bin/python3.11, pyenv builds of the supported versions (`pyenv root`, else
# $PYENV_ROOT or ~/.pyenv) and the sid wrappers in $TB_PYTHONS_DIR/bin (default
# /var/cache/tachyon-bpf/pythons/bin). Each candidate is run to check it works and to get
# its version. Supported versions with no interpreter at all are named on stderr.
#
# Free-threaded interpreters (3.13t ...) are listed only on request: `pythons.sh --ft` or
# TB_PYTHONS_FT=1 in the environment (which reaches pythons.sh through every suite that runs
# it). They are then the builds in $TB_FT_DIR/3.Xt/bin/python3.Xt (default
# /var/cache/tachyon-bpf/ft), of kind ft-static or ft-shared, after the other interpreters
# of their version. Without the request, no free-threaded build is listed, whatever its source.
#
# pythons.sh --versions: prints the supported versions ("3.10" ... one a line) and exits.
# They come from the agent's table (user/cpython/versions.h): `tachyon-bpf --version`
# ("tachyon-bpf VERSION (git HASH, CPython 3.10-3.15)") when built, else the header's
# TB_PY_MIN_MINOR / TB_PY_MAX_MINOR through the C preprocessor. Nothing here repeats them.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

supported_versions() {
    local range lo hi m
    range=$("$ROOT/tachyon-bpf" --version 2>/dev/null </dev/null |
        sed -n 's/.*CPython 3\.\([0-9][0-9]*\)-3\.\([0-9][0-9]*\)).*/\1 \2/p' || true)
    if [[ -z $range ]]; then
        range=$(printf '#include "cpython/versions.h"\nTB_PY_MIN_MINOR TB_PY_MAX_MINOR\n' |
            ${CC:-gcc} -E -P -I"$ROOT/include" -I"$ROOT/user" - | tail -n 1)
    fi
    read -r lo hi <<<"$range"
    if ! [[ $lo =~ ^[0-9]+$ && $hi =~ ^[0-9]+$ ]] || ((lo > hi)); then
        echo "${0##*/}: cannot read the supported versions from user/cpython/versions.h" >&2
        return 1
    fi
    for ((m = lo; m <= hi; m++)); do echo "3.$m"; done
}

if [[ ${1:-} == --versions ]]; then
    supported_versions
    exit
fi
WITH_FT=${TB_PYTHONS_FT:-0}
case ${1:-} in
--ft) WITH_FT=1 ;;
"") ;;
*) echo "usage: ${0##*/} [--ft | --versions]" >&2; exit 2 ;;
esac
mapfile -t EXPECTED < <(supported_versions)
((${#EXPECTED[@]})) || exit 1
SID_DIR=${TB_PYTHONS_DIR:-/var/cache/tachyon-bpf/pythons}
FT_DIR=${TB_FT_DIR:-/var/cache/tachyon-bpf/ft}
prog=${0##*/}

# Prints "<major.minor> <free-threaded: 1 or 0> <path of the python ELF binary it runs>". The
# binary is found in /proc/self/maps, since for the sid wrappers sys.executable is a script
# and /proc/self/exe is the dynamic loader.
PROBE='import os, sys
real = ""
for line in open("/proc/self/maps"):
    f = line.split(None, 5)
    if len(f) == 6:
        name = os.path.basename(f[5].strip())
        if name.startswith("python") and ".so" not in name:
            real = f[5].strip()
            break
print("%d.%d %d %s" % (sys.version_info[0], sys.version_info[1], "t" in getattr(sys, "abiflags", ""),
                      real or os.path.realpath(sys.executable)))'

# "shared" if the ELF file $1 has libpython among its NEEDED libraries, else "static".
linkage() {
    local needed
    if command -v readelf >/dev/null; then
        needed=$(readelf -d "$1" 2>/dev/null || true)
    else
        needed=$(ldd "$1" 2>/dev/null || true)
    fi
    if grep -q 'libpython' <<<"$needed"; then echo shared; else echo static; fi
}

candidates=() # "source<TAB>command"
add() { [[ -x $2 && ! -d $2 ]] && candidates+=("$1"$'\t'"$2"); return 0; }

add debian /usr/bin/python3.11

pyenv_root=""
if command -v pyenv >/dev/null; then
    pyenv_root=$(pyenv root 2>/dev/null || true)
fi
for r in "$pyenv_root" "${PYENV_ROOT:-}" "${HOME:-/root}/.pyenv" /root/.pyenv; do
    if [[ -n $r && -d $r/versions ]]; then
        pyenv_root=$r
        break
    fi
done
if [[ -n $pyenv_root && -d $pyenv_root/versions ]]; then
    while read -r d; do
        [[ $d =~ ^3\.([0-9]+)\.[0-9]+$ && " ${EXPECTED[*]} " == *" 3.${BASH_REMATCH[1]} "* ]] || continue
        add pyenv "$pyenv_root/versions/$d/bin/python3.${BASH_REMATCH[1]}"
    done < <(for d in "$pyenv_root"/versions/3.*; do echo "${d##*/}"; done | sort -V)
fi

shopt -s nullglob
for w in "$SID_DIR"/bin/python3.*; do
    [[ ${w##*/} =~ ^python3\.[0-9]+$ ]] && add sid "$w"
done
if [[ $WITH_FT == 1 ]]; then
    for w in "$FT_DIR"/3.*t/bin/python3.*t; do
        [[ $w =~ /(3\.[0-9]+)t/bin/python([0-9.]+)t$ && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] && add ft "$w"
    done
fi
shopt -u nullglob

lines=()
declare -A found=()
for c in "${candidates[@]}"; do
    src=${c%%$'\t'*}
    cmd=${c#*$'\t'}
    if ! out=$(timeout 60 "$cmd" -I -c "$PROBE" </dev/null 2>/dev/null); then
        continue
    fi
    read -r ver threaded real <<<"$out"
    [[ $ver =~ ^[0-9]+\.[0-9]+$ && -n $real ]] || continue
    # free-threaded builds: only ours (kind ft-...), which are only candidates on request
    [[ $threaded == "$([[ $src == ft ]] && echo 1 || echo 0)" ]] || continue
    lines+=("$ver $src-$(linkage "$real") $cmd")
    found[$ver]=1
done

if ((${#lines[@]})); then
    printf '%s\n' "${lines[@]}" | sort -s -V -k1,1
fi
for v in "${EXPECTED[@]}"; do
    [[ -n ${found[$v]:-} ]] || echo "$prog: no CPython $v found" >&2
done
((${#lines[@]})) || exit 1
