#!/bin/bash
# Builds free-threaded CPython 3.13t, 3.14t and 3.15t from the upstream sources in Debian sid's
# source packages (python3.13, ...), fetched through this machine's own apt sources with a
# private apt state (tests/sid-apt.sh), and installs each under DESTDIR/3.Xt with the
# executable DESTDIR/3.Xt/bin/python3.Xt.
#
# Usage: tests/setup-ft-pythons.sh [DESTDIR]
#   DESTDIR defaults to $TB_FT_DIR, else /var/cache/tachyon-bpf/ft.
#   TB_FT_VERSIONS="3.13 3.14" builds only those; TB_FT_JOBS=N runs make -jN (default nproc);
#   TB_FT_FORCE=1 rebuilds what is already built.
#   Cached: a version whose stamp (DESTDIR/3.Xt/.tb-ft-built) is there and whose interpreter
#   passes the smoke test is not rebuilt, so a later run takes seconds.
#   Prints one line per version (its build time, or why it failed: a failed version does not
#   stop the others); exits non-zero only if no version is ready. Build logs: DESTDIR/logs.
#
# Build: the source package's orig tarball is CPython's release tarball; it is configured as
# is. Debian's patches are not applied: they adapt CPython to Debian's /usr layout, multiarch
# and package split, and several change configure.ac (so configure would have to be
# regenerated with bookworm's autoconf); none of 3.13's changes a structure the profiler reads
# (gchead-alignment.diff only states the alignment x86-64 already has). The unpatched tree is
# what pyenv, uv or a python.org tarball give users. --disable-gil, no PGO, no LTO,
# --with-ensurepip=no, --disable-test-modules; 3.13t with --enable-shared (the interpreter's
# runtime in libpython3.13t.so, found through an rpath), the others static, so both kinds of
# free-threaded build are covered. Build dependencies: scripts/install-deps.sh test.
#
# When sid's Sources list several versions of a source package and the newest cannot be
# downloaded (a mirror that lags behind its index), the older ones are tried, newest first.
set -euo pipefail

read -ra VERSIONS <<<"${TB_FT_VERSIONS:-3.13 3.14 3.15}"
SHARED_VERSIONS=" 3.13 "
DEST=${1:-${TB_FT_DIR:-/var/cache/tachyon-bpf/ft}}
JOBS=${TB_FT_JOBS:-$(nproc)}

prog=${0##*/}
warn() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { warn "$*"; exit 1; }

for v in "${VERSIONS[@]}"; do
    [[ $v =~ ^3\.[0-9]+$ ]] || die "TB_FT_VERSIONS: '$v' is not a version like 3.13"
done
[[ $JOBS =~ ^[1-9][0-9]{0,2}$ ]] || die "TB_FT_JOBS: '$JOBS' is not a number of jobs"
mkdir -p "$DEST"
DEST=$(realpath "$DEST")

prefix_of() { echo "$DEST/${1}t"; }
exe_of() { echo "$DEST/${1}t/bin/python${1}t"; }
stamp_of() { echo "$DEST/${1}t/.tb-ft-built"; }
linkage_of() { if [[ $SHARED_VERSIONS == *" $1 "* ]]; then echo shared; else echo static; fi; }

# Smoke test of version $1's interpreter: prints its full version; fails if it does not run,
# cannot import what the tests use, or has the GIL enabled.
SMOKE='import sys, ctypes, threading, json, zlib, sysconfig
assert sysconfig.get_config_var("Py_GIL_DISABLED") == 1, "not a free-threaded build"
assert not sys._is_gil_enabled(), "the GIL is enabled"
print("%d.%d.%d" % sys.version_info[:3])'
smoke() { timeout 60 "$(exe_of "$1")" -I -c "$SMOKE" </dev/null 2>&1; }

# Prints "python3.Xt: already built ..." and succeeds if version $1 needs no build.
already_built() {
    local v=$1 stamp out sv debver link secs
    stamp=$(stamp_of "$v")
    [[ ${TB_FT_FORCE:-0} != 1 && -s $stamp ]] || return 1
    read -r sv debver link secs <"$stamp" || return 1
    [[ $sv == "$v" ]] || return 1
    out=$(smoke "$v") || return 1
    echo "python${v}t: already built: $out (sid source $debver, $link libpython, built in ${secs}s) -> $(exe_of "$v")"
}

# Keeps in TODO those of the given versions that need a build; prints the others' lines.
need_build() {
    local v
    TODO=()
    for v in "$@"; do
        already_built "$v" || TODO+=("$v")
    done
}

need_build "${VERSIONS[@]}"
((${#TODO[@]})) || exit 0

# One build at a time per DESTDIR; someone else may have built some while we waited.
exec 9>"$DEST/.lock"
flock 9
need_build "${TODO[@]}"
((${#TODO[@]})) || exit 0
good=$((${#VERSIONS[@]} - ${#TODO[@]}))

missing=()
for tool in gcc make tar xz; do command -v "$tool" >/dev/null || missing+=("$tool"); done
((${#missing[@]} == 0)) || die "missing ${missing[*]}: run scripts/install-deps.sh test; nothing built"

. "$(dirname "${BASH_SOURCE[0]}")/sid-apt.sh"
sid_apt_init "$DEST/apt" deb-src || die "no source package could be fetched; nothing built"
mkdir -p "$DEST/logs"

# The versions of source package $1 in the private apt state's index, newest first.
source_versions() {
    apt-cache "${APT_OPTS[@]}" showsrc "$1" 2>/dev/null | awk -v pkg="$1" '
        /^Package:/ { p = $2 }
        /^Version:/ && p == pkg { print $2 }' | sort -u -V -r
}

# Downloads source package python$1 into $2 (emptied first). Sets DEBVER; fails if no
# listed version could be downloaded (apt checks each file against the signed index).
download_source() {
    local v=$1 dir=$2 ver tried=()
    for ver in $(source_versions "python$v"); do
        [[ $ver =~ ^[0-9A-Za-z.+~:-]+$ ]] || continue
        rm -rf "$dir"
        sid_apt_fetch_dir "$dir"
        tried+=("$ver")
        if (cd "$dir" && apt-get -q "${APT_OPTS[@]}" source --download-only "python$v=$ver") >>"$LOG" 2>&1; then
            DEBVER=$ver
            return 0
        fi
    done
    rm -rf "$dir"
    FAIL="no source package python$v in sid could be downloaded (tried: ${tried[*]:-none listed})"
    return 1
}

# Unpacks the orig tarball in $1 (one of python$2_*.orig.tar.*) into $1/src.
unpack_source() {
    local dir=$1 v=$2 origs top
    mapfile -t origs < <(find "$dir" -maxdepth 1 -type f -name "python${v}_*.orig.tar.*" ! -name '*.asc')
    if ((${#origs[@]} != 1)); then
        FAIL="expected one python${v}_*.orig.tar.* in the source package, found ${#origs[@]}"
        return 1
    fi
    # CPython's release tarballs hold one directory, Python-X.Y.Z/.
    top=$(tar -tf "${origs[0]}" 2>>"$LOG" | awk -F/ '{ print $1 }' | sort -u)
    if ! [[ $top =~ ^Python-$v\.[0-9]+[0-9a-z]*$ ]]; then
        FAIL="${origs[0]##*/} is not one Python-$v.* directory"
        return 1
    fi
    mkdir -p "$dir/src"
    if ! tar -xf "${origs[0]}" -C "$dir/src" --strip-components=1 --no-same-owner >>"$LOG" 2>&1; then
        FAIL="cannot unpack ${origs[0]##*/}"
        return 1
    fi
}

# Runs one build step in $SRC with its output in $LOG, adding its time to STEP_TIMES.
step() { # name cmd...
    local name=$1 t0=$SECONDS
    shift
    echo "== $name: $*" >>"$LOG"
    if ! (cd "$SRC" && "$@") >>"$LOG" 2>&1; then
        FAIL="$name failed after $((SECONDS - t0))s"
        tail -n 5 "$LOG" | sed 's/^/    /' >&2   # the compiler's or configure's last words
        return 1
    fi
    STEP_TIMES+="${STEP_TIMES:+, }$name $((SECONDS - t0))s"
}

# Builds and installs version $1. Sets FAIL on failure.
build_one() {
    local v=$1 prefix work flags t0=$SECONDS
    prefix=$(prefix_of "$v")
    work=$DEST/build/python$v
    SRC=$work/src
    download_source "$v" "$work" || return 1
    unpack_source "$work" "$v" || return 1
    STEP_TIMES="fetch $((SECONDS - t0))s"
    flags=(--prefix="$prefix" --disable-gil --with-ensurepip=no --disable-test-modules)
    if [[ $(linkage_of "$v") == shared ]]; then
        flags+=(--enable-shared "LDFLAGS=-Wl,-rpath,$prefix/lib")
    fi
    rm -rf "$prefix"
    # The build must not pick up another Python's settings from the environment.
    step configure env -u PYTHONPATH -u PYTHONHOME ./configure "${flags[@]}" || return 1
    step make env -u PYTHONPATH -u PYTHONHOME make -j"$JOBS" || return 1
    step install env -u PYTHONPATH -u PYTHONHOME make altinstall || return 1
    rm -rf "$work"
}

for v in "${TODO[@]}"; do
    LOG=$DEST/logs/python${v}t.log
    : >"$LOG"
    FAIL="" STEP_TIMES="" DEBVER=""
    t0=$SECONDS
    rm -f "$(stamp_of "$v")"
    if build_one "$v"; then
        if out=$(smoke "$v"); then
            secs=$((SECONDS - t0))
            echo "$v $DEBVER $(linkage_of "$v") $secs" >"$(stamp_of "$v")"
            echo "python${v}t: ok $out (sid source $DEBVER, $(linkage_of "$v") libpython, built in ${secs}s: $STEP_TIMES) -> $(exe_of "$v")"
            good=$((good + 1))
            continue
        fi
        FAIL="smoke test failed: $(tail -n 1 <<<"$out")"
    fi
    echo "python${v}t: FAILED after $((SECONDS - t0))s: $FAIL (log: $LOG)"
done

# The source index and apt's caches are only needed while building.
sid_apt_clean
rmdir "$DEST/build" 2>/dev/null || true
((good > 0)) || die "no free-threaded interpreter could be built"
exit 0
