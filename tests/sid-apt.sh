# shellcheck shell=bash
# sid-apt.sh: a private apt state for one Debian suite, by default the development suite (sid),
# sourced by tests/setup-pythons.sh (binary packages), tests/setup-ft-pythons.sh (source
# packages) and tests/kernels/fetch-kernels.sh (the cloud kernels of bullseye ... sid).
# It has its own sources.list, lists, cache and status under one directory, made from this
# machine's own apt sources: the first enabled binary (deb) entry of the main archive (a plain
# suite name such as bookworm, not bookworm-updates or bookworm-security), its type changed to
# the one asked for and its suite to the one asked for (sid unless told), its URIs,
# components, Signed-By and options kept. The host's apt state is never touched.
#
#   sid_apt_init DIR TYPE [SUITE]
#                           TYPE is deb or deb-src, SUITE a plain suite name (default sid).
#                           Writes DIR/etc, empties DIR/log, sets APTD=DIR, SID_APT_LOG and the
#                           array APT_OPTS (pass it to apt-get and apt-cache), then runs apt-get
#                           update. Returns 1 with one line on stderr if there is no usable
#                           entry or the update fails.
#   sid_apt_run CMD...      runs CMD with its output appended to the log; on failure prints
#                           "failed: CMD" and the log's last lines on stderr and returns 1.
#                           Its TMPDIR is DIR/tmp, writable by apt's _apt user (apt-get update
#                           verifies signatures as _apt with temporary files there: a /tmp
#                           without the sticky, world-writable mode made every update fail).
#   sid_apt_fetch_dir DIR   creates DIR, writable by apt's download user (_apt).
#   sid_apt_clean           removes the package lists and apt's caches (needed only while
#                           fetching); the sources and the log stay.
# Callers define warn() (one line on stderr, prefixed with their name).

SID_APT_ARCH=amd64

# The main archive entry of a deb822 .sources file, rewritten to TYPE and SUITE (or nothing).
sid_apt_deb822_main() { # file type suite
    awk -v type="$2" -v suite="$3" '
        BEGIN { RS = ""; found = 0 }
        found { next }
        {
            n = split($0, L, "\n"); types = ""; suites = ""; enabled = "yes"
            for (i = 1; i <= n; i++) {
                if (L[i] ~ /^Types:/)   { types = L[i];  sub(/^Types:[ \t]*/, "", types) }
                if (L[i] ~ /^Suites:/)  { suites = L[i]; sub(/^Suites:[ \t]*/, "", suites) }
                if (L[i] ~ /^Enabled:/) { enabled = tolower(L[i]); sub(/^enabled:[ \t]*/, "", enabled) }
            }
            if (enabled == "no" || (" " types " ") !~ / deb /) next
            ok = 0; m = split(suites, S, /[ \t]+/)
            for (j = 1; j <= m; j++) if (S[j] != "" && S[j] !~ /[-\/]/) ok = 1
            if (!ok) next
            skip = 0
            for (i = 1; i <= n; i++) {
                if (L[i] ~ /^[ \t]/) { if (!skip) print L[i]; continue }   # continuation line
                skip = 0
                if (L[i] ~ /^#/) continue
                if (L[i] ~ /^Types:/)  { print "Types: " type; skip = 1; continue }
                if (L[i] ~ /^Suites:/) { print "Suites: " suite; skip = 1; continue }
                print L[i]
            }
            found = 1
        }' "$1"
}

# The main archive line of a one-line-style .list file, rewritten to TYPE and SUITE (or nothing).
sid_apt_oneline_main() { # file type suite
    awk -v type="$2" -v newsuite="$3" '
        /^[ \t]*deb[ \t]/ {
            line = $0; sub(/#.*/, "", line); nf = split(line, F, /[ \t]+/)
            i = 1; while (i <= nf && F[i] == "") i++
            i++                                           # skip "deb"
            opts = ""
            if (F[i] ~ /^\[/) {                           # [ option=value ... ]
                while (i <= nf) { opts = opts (opts == "" ? "" : " ") F[i]; if (F[i] ~ /\]$/) { i++; break }; i++ }
            }
            uri = F[i]; suite = F[i + 1]
            if (uri == "" || suite == "" || suite ~ /[-\/]/) next
            comps = ""; for (k = i + 2; k <= nf; k++) if (F[k] != "") comps = comps " " F[k]
            if (comps == "") next
            print type " " (opts == "" ? "" : opts " ") uri " " newsuite comps
            exit
        }' "$1"
}

sid_apt_run() {
    if ! TMPDIR=$APTD/tmp "$@" >>"$SID_APT_LOG" 2>&1; then
        warn "failed: $*"
        tail -n 20 "$SID_APT_LOG" >&2
        return 1
    fi
}

sid_apt_fetch_dir() {
    mkdir -p "$1"
    if id -u _apt >/dev/null 2>&1 && [[ $(id -u) == 0 ]]; then chown _apt "$1"; fi
}

sid_apt_clean() { rm -rf "${APTD:?}/lists" "${APTD:?}/cache"; }

sid_apt_init() { # dir type [suite]
    local type=$2 suite=${3:-sid} host_sl host_sp entry="" f out
    APTD=$1
    SID_APT_LOG=$APTD/log
    rm -rf "${APTD:?}/etc"
    mkdir -p "$APTD/etc/sources.list.d" "$APTD/etc/preferences.d"
    sid_apt_fetch_dir "$APTD/lists/partial"
    sid_apt_fetch_dir "$APTD/cache/archives/partial"
    sid_apt_fetch_dir "$APTD/tmp"
    : >"$APTD/etc/sources.list"
    : >"$APTD/status"
    : >"$SID_APT_LOG"

    eval "$(apt-config shell host_sl Dir::Etc::sourcelist/f host_sp Dir::Etc::sourceparts/d)"
    host_sl=${host_sl:-/etc/apt/sources.list}
    host_sp=${host_sp:-/etc/apt/sources.list.d/}
    # .sources (deb822) files first, then one-line lists; the entry is written in its own style
    for f in "$host_sp"*.sources "$host_sl" "$host_sp"*.list; do
        [[ -f $f ]] || continue
        if [[ $f == *.sources ]]; then
            entry=$(sid_apt_deb822_main "$f" "$type" "$suite") out=$APTD/etc/sources.list.d/$suite.sources
        else
            entry=$(sid_apt_oneline_main "$f" "$type" "$suite") out=$APTD/etc/sources.list
        fi
        if [[ -n $entry ]]; then
            printf '%s\n' "$entry" >"$out"
            break
        fi
    done
    if [[ -z $entry ]]; then
        warn "no main Debian archive entry found in $host_sl or $host_sp"
        return 1
    fi

    APT_OPTS=(
        -o "Dir::Etc::sourcelist=$APTD/etc/sources.list"
        -o "Dir::Etc::sourceparts=$APTD/etc/sources.list.d"
        -o "Dir::Etc::preferences=$APTD/etc/preferences"
        -o "Dir::Etc::preferencesparts=$APTD/etc/preferences.d"
        -o "Dir::State::Lists=$APTD/lists"
        -o "Dir::State::status=$APTD/status"
        -o "Dir::Cache=$APTD/cache"
        -o "Dir::Cache::pkgcache=pkgcache.bin"
        -o "Dir::Cache::srcpkgcache=srcpkgcache.bin"
        -o "APT::Architecture=$SID_APT_ARCH"
        -o "APT::Default-Release=$suite"
        -o "Acquire::Languages=none"
    )
    if ! sid_apt_run apt-get -q "${APT_OPTS[@]}" update; then
        warn "apt-get update for $suite ($type) failed"
        return 1
    fi
    if grep -q '^[WE]:' "$SID_APT_LOG"; then
        warn "apt-get update reported:"
        grep '^[WE]:' "$SID_APT_LOG" >&2
    fi
    return 0
}
