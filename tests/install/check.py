#!/usr/bin/env python3
"""check.py: the install story, for real (root: it loads the BPF program, chroots, dpkg -i).

  words      `help`, `help COMMAND` (== COMMAND --help), `version`, `--version` (VERSION and the
             git hash), bad words: one line on stderr, exit 2
  options    every option the completions offer is one its command takes (getopt does not
             call it unrecognized): the usage texts they are read from do not lie
  install    make install DESTDIR=...: the binary, tachyon-bpf(1) (no warning from
             `man --warnings`; every command and format in it), the bash completion
             (commands, options, option values, -o extensions of that command, pids, the
             command after --) and the zsh one (parses, compinit finds it, each command line
             gets its command's specs); make uninstall leaves no file
  static     make dist: "statically linked", ldd "not a dynamic executable", the tarball's
             files; then a bare root (busybox-static, python3.11 with only its own libraries,
             no libbpf/libdw/libelf) where the static binary profiles
             tests/workloads/slices.py (50/30/20) in a chroot: fifty() on top, near 50%
  newcomer   README's first screen: its build and install line (make install DESTDIR=...),
             then its first profile command with the installed binary on a tiny app.py
             (plus -o profile.json beside the page): the page is valid (the browser suite's
             harness opens it: tests/browser/run.sh real PAGE JSON fifty)
  deb        dpkg-buildpackage -b of a copy of the tree (debian/); dpkg -i; --version and
             `man -w`; dpkg -r; none of its files left

usage: tests/install/check.py [PART...]    (default: all, in that order; ends "N passed, N failed")
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import tb  # noqa: E402  check(), Folded, ROOT, BIN

ROOT, BIN = tb.ROOT, tb.BIN
VERSION = open(os.path.join(ROOT, "VERSION")).read().strip()
COMMANDS = ["record", "top", "render", "diff", "dump", "help", "version"]
TMP = tempfile.mkdtemp(prefix="tb-install.")


def sh(args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 600)
    return subprocess.run(args, **kw)


def must(r, what):
    if r.returncode != 0:
        raise AssertionError("%s: exit %d: %s" % (what, r.returncode, (r.stderr or r.stdout).strip()[-600:]))
    return r


def formats(use):
    return tb.run([use, "--list-formats"]).stdout.split()


# ---- words -------------------------------------------------------------------------------------
def words():
    h1, h2 = tb.run(["help"]), tb.run(["--help"])
    assert h1.returncode == 0 and h1.stdout == h2.stdout and "Commands:" in h1.stdout, "help != --help"
    for c in ("record", "top", "render", "diff", "dump"):
        a, b = tb.run(["help", c]), tb.run([c, "--help"])
        assert a.returncode == 0 and b.returncode == 0, "help %s: exit %d / %d" % (c, a.returncode, b.returncode)
        assert a.stdout == b.stdout and a.stdout.startswith("usage: tachyon-bpf"), "help %s != %s --help" % (c, c)
    v1, v2 = tb.run(["version"]), tb.run(["--version"])
    assert v1.stdout == v2.stdout, "version != --version"
    m = re.fullmatch(r"tachyon-bpf (\S+) \(git ([0-9a-f]{7,}(-dirty)?|unknown), CPython 3\.(\d+)-3\.(\d+)\)\n", v1.stdout)
    assert m and m.group(1) == VERSION, "--version: %r (VERSION %s)" % (v1.stdout, VERSION)
    head = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip()
    assert m.group(2).split("-")[0] == head, "--version's hash %s, HEAD %s" % (m.group(2), head)
    for bad in (["help", "nosuch"], ["help", "dump", "x"], ["version", "x"], ["--completion", "fish"],
                ["--completion"]):
        r = tb.run(bad)
        assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1 and \
            r.stderr.startswith("tachyon-bpf: "), "%s: exit %d, %r" % (" ".join(bad), r.returncode, r.stderr)
    return "%s, help == --help for %d commands" % (v1.stdout.strip(), 5)


# ---- the bash completion, run for real ---------------------------------------------------------
def complete(script, words):
    """COMPREPLY of the completion function for the command line `words` (the last is the word
    being completed)."""
    prog = 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tachyon_bpf; ' \
           'printf "%s\\n" "${COMPREPLY[@]}"'
    r = must(sh(["bash", "-c", prog, "bash", script] + words, cwd=TMP), "completion of %r" % words)
    return [w for w in r.stdout.split("\n") if w]


def bash_options(script):
    """{command: (options, options taking a value)} from the generated script's case arms."""
    text = open(script).read()
    out = {}
    for m in re.finditer(r"\n\t(\w+)\)\n\t\topts='([^']*)'\n\t\tcase \$prev in\n(.*?)\t\tesac", text, re.S):
        takes = set(re.findall(r"^\t\t(-[^)]+)\)", m.group(3), re.M))
        out[m.group(1)] = (m.group(2).split(), takes)
    return out


def options():
    path = os.path.join(TMP, "tachyon-bpf.bash")
    with open(path, "w") as f:
        f.write(must(tb.run(["--completion", "bash"]), "--completion bash").stdout)
    opts = bash_options(path)
    assert sorted(opts) == sorted(COMMANDS), "completion arms: %s" % sorted(opts)
    n = 0
    for cmd, (names, takes) in opts.items():
        for o in names:
            # the option, then --help: parsed in order, so help ends it before any sampling
            args = [cmd, o] + (["1"] if o in takes else []) + ["--help"]
            r = tb.run(args, timeout=20)
            assert "unrecognized option" not in r.stderr and "invalid option" not in r.stderr, \
                "%s: %s" % (" ".join(args), r.stderr.strip())
            assert r.returncode in (0, 2), "%s: exit %d" % (" ".join(args), r.returncode)
            n += 1
    rec = opts["record"][0]
    for o in ("--pid", "--all-python", "--output", "--sort", "--native", "--help"):
        assert o in rec, "record's completion lacks %s" % o
    return "%d options of %d commands, each taken by its command" % (n, len(opts))


# ---- make install ------------------------------------------------------------------------------
def install():
    dest = os.path.join(TMP, "dest")
    must(sh(["make", "-C", ROOT, "-s", "install", "DESTDIR=" + dest, "PREFIX=/usr/local"]), "make install")
    files = sorted(os.path.relpath(os.path.join(d, f), dest) for d, _, fs in os.walk(dest) for f in fs)
    want = ["usr/local/bin/tachyon-bpf", "usr/local/share/bash-completion/completions/tachyon-bpf",
            "usr/local/share/man/man1/tachyon-bpf.1", "usr/local/share/zsh/site-functions/_tachyon-bpf"]
    assert files == want, "installed %s" % files
    assert os.access(os.path.join(dest, want[0]), os.X_OK)
    man = os.path.join(dest, want[2])
    r = must(sh(["man", "--warnings", "-l", man], env=dict(os.environ, MANWIDTH="100", LC_ALL="C.UTF-8",
                                                           MAN_KEEP_FORMATTING="")), "man -l")
    assert r.stderr == "", "man --warnings: %s" % r.stderr.strip()[:400]
    for c in COMMANDS[:5]:
        assert "%s COMMAND" % c.upper() in r.stdout, "man page: no %s section" % c
    for e in formats("render"):
        assert e in r.stdout, "man page: no format %s" % e
    assert re.search(r"^\s+--native-table-mb N$", r.stdout, re.M), "man page: --native-table-mb"

    bash_c = os.path.join(dest, want[1])
    got = complete(bash_c, ["tachyon-bpf", ""])
    assert got == COMMANDS, "first word: %s" % got
    assert complete(bash_c, ["tachyon-bpf", "re"]) == ["record", "render"]
    assert complete(bash_c, ["tachyon-bpf", "--all"]) == ["--all-python"]
    assert complete(bash_c, ["tachyon-bpf", "render", "--li"]) == ["--limit", "--list-formats"]
    assert complete(bash_c, ["tachyon-bpf", "help", "d"]) == ["diff", "dump"]
    assert complete(bash_c, ["tachyon-bpf", "--sort", ""]) == ["own", "total", "name"]
    got = complete(bash_c, ["tachyon-bpf", "-o", "out/prof"])
    assert got == ["out/prof" + e for e in formats("render")], "-o out/prof: %s" % got
    assert complete(bash_c, ["tachyon-bpf", "-o", "p.speed"]) == ["p.speedscope.json"]
    got = complete(bash_c, ["tachyon-bpf", "diff", "a.tbp", "b.tbp", "--output", "d"])
    assert got == ["d" + e for e in formats("diff")], "diff -o: %s" % got
    assert str(os.getpid()) in complete(bash_c, ["tachyon-bpf", "top", "-p", str(os.getpid())])
    assert "python3" in complete(bash_c, ["tachyon-bpf", "-d", "5", "--", "python"])
    assert complete(bash_c, ["tachyon-bpf", "-d", "5", "--", "python3", "--"]) == []

    zsh_c = os.path.join(dest, want[3])
    must(sh(["zsh", "-n", zsh_c]), "zsh -n")
    r = must(sh(["zsh", "-f", "-c", 'fpath=(%s $fpath); autoload -Uz compinit; compinit -u -D; '
                 'print -r -- $_comps[tachyon-bpf]' % os.path.dirname(zsh_c)]), "zsh compinit")
    assert r.stdout.strip() == "_tachyon-bpf", "zsh: compinit maps tachyon-bpf to %r" % r.stdout.strip()

    # its dispatch, with _arguments and _describe replaced by printers: which specs each
    # command line gets (zsh's own reading of the specs is not run here)
    def zsh_calls(*words):
        prog = ('_arguments() { print -rl -- _arguments "$@"; }; '
                '_describe() { print -rl -- _describe "${(@P)2}"; }; '
                'words=("${@:2}"); CURRENT=$#words; PREFIX=${words[-1]}; source "$1"')
        return must(sh(["zsh", "-f", "-c", prog, "zsh", zsh_c] + list(words)), "zsh %s" % (words,)).stdout.split("\n")
    got = zsh_calls("tachyon-bpf", "")
    assert got[0] == "_describe" and [w.split(":")[0] for w in got[1:] if w] == COMMANDS, "zsh first word: %s" % got
    assert any(w.startswith("--list-formats[print the extensions") for w in zsh_calls("tachyon-bpf", "render", "--li"))
    assert any(w.startswith("--window[") for w in zsh_calls("tachyon-bpf", "--live", ""))
    spec = [w for w in zsh_calls("tachyon-bpf", "diff", "-o", "x") if w.startswith("-o[")]
    assert spec and spec[0].endswith(":_tachyon_bpf_output " + " ".join(formats("diff"))), "zsh diff -o: %s" % spec

    must(sh(["make", "-C", ROOT, "-s", "uninstall", "DESTDIR=" + dest, "PREFIX=/usr/local"]), "make uninstall")
    left = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs]
    assert not left, "left after uninstall: %s" % left
    return "4 files; man page without warnings; 12 bash completions, 4 zsh dispatches right; " \
        "uninstall left nothing"


# ---- make dist and a bare root -------------------------------------------------------------------
PY = "/usr/bin/python3.11"


def bare_root(static_bin):
    """A root with busybox-static, python3.11, the libraries ldd names for it, the workload and
    the static binary; its stdlib is bind-mounted read-only when it runs."""
    root = os.path.join(TMP, "root")
    for d in ("bin", "proc", "sys", "tmp", "w", "usr/bin", "usr/lib/python3.11"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    bb = os.path.realpath(shutil.which("busybox"))
    assert "statically linked" in sh(["file", "-L", bb]).stdout, "%s is not static (busybox-static)" % bb
    shutil.copy(bb, os.path.join(root, "bin/busybox"))
    os.symlink("busybox", os.path.join(root, "bin/sh"))
    shutil.copy(PY, os.path.join(root, PY[1:]))
    libs = re.findall(r"(/\S+) \(0x", sh(["ldd", PY]).stdout)
    for lib in libs:
        os.makedirs(os.path.dirname(os.path.join(root, lib[1:])), exist_ok=True)
        shutil.copy(lib, os.path.join(root, lib[1:]))
    shutil.copy(static_bin, os.path.join(root, "tachyon-bpf"))
    shutil.copy(tb.workload("slices.py"), os.path.join(root, "w/slices.py"))
    return root, libs


def static():
    r = must(sh(["make", "-C", ROOT, "-s", "-j2", "dist"]), "make dist")
    assert "warning" not in (r.stdout + r.stderr).lower(), "make dist warned: %s" % r.stderr[-400:]
    arch = os.uname().machine
    name = "tachyon-bpf-%s-%s" % (VERSION, arch)
    binary = os.path.join(ROOT, "dist", name)
    f = sh(["file", binary]).stdout
    assert "statically linked" in f, "file: %s" % f.strip()
    ldd = sh(["ldd", binary])
    assert "not a dynamic executable" in ldd.stdout + ldd.stderr, "ldd: %s" % (ldd.stdout + ldd.stderr).strip()
    tar = sh(["tar", "tzf", os.path.join(ROOT, "dist", name + ".tar.gz")]).stdout.split()
    for want in ("bin/tachyon-bpf", "share/man/man1/tachyon-bpf.1",
                 "share/bash-completion/completions/tachyon-bpf", "share/zsh/site-functions/_tachyon-bpf"):
        assert "%s/%s" % (name, want) in tar, "tarball lacks %s" % want

    root, libs = bare_root(binary)
    agent_libs = [os.path.join(d, x) for d, _, fs in os.walk(root) for x in fs
                  if re.match(r"lib(bpf|dw|elf|z|zstd|lzma|bz2)[.-]", x)]
    assert not any(re.search(r"lib(bpf|dw|elf)[.-]", p) for p in agent_libs), "in the root: %s" % agent_libs
    inner = ("set -e; mount --bind /usr/lib/python3.11 {r}/usr/lib/python3.11; "
             "mount -o remount,bind,ro {r}/usr/lib/python3.11; mount -t proc proc {r}/proc; "
             "mount -t sysfs sysfs {r}/sys; "
             "exec chroot {r} /tachyon-bpf -q -r 499 -o /w/out.folded -o /w/out.html -- {py} /w/slices.py 3"
             ).format(r=root, py=PY)
    r = sh(["unshare", "--mount", "--propagation", "private", "sh", "-c", inner], timeout=120)
    assert r.returncode == 0, "in the chroot: exit %d: %s" % (r.returncode, r.stderr.strip()[-500:])
    fd = tb.Folded(os.path.join(root, "w/out.folded"))
    total = fd.total()
    share = {fn: sum(n for fr, n in fd.stacks if any(tb.Folded.func(x) == fn for x in fr)) / max(total, 1)
             for fn in ("fifty", "thirty", "twenty")}
    top = max(share, key=share.get)
    assert total > 300 and top == "fifty" and abs(share["fifty"] - 0.5) < 0.1, \
        "%d samples, shares %s" % (total, share)
    assert os.path.getsize(os.path.join(root, "w/out.html")) > 10000
    return "%s (%d KB), in a bare root with %d libraries of python's only: %d samples, " \
        "fifty %.0f%% thirty %.0f%% twenty %.0f%%" % (
            name, os.path.getsize(binary) // 1024, len(libs), total, 100 * share["fifty"],
            100 * share["thirty"], 100 * share["twenty"])


# ---- README's first screen ---------------------------------------------------------------------
def first_screen():
    """The build-and-install line and the first profile command of README's "A first profile"."""
    text = open(os.path.join(ROOT, "README.md")).read()
    m = re.search(r"^## A first profile\n.*?```sh\n(.*?)```", text, re.S | re.M)
    assert m, "README: no '## A first profile' with a sh block"
    lines = [ln.split("#")[0].strip() for ln in m.group(1).splitlines()]
    build = next((ln for ln in lines if "make install" in ln), None)
    prof = next((ln for ln in lines if ln.startswith("sudo tachyon-bpf ") and " -- python3 " in ln), None)
    assert build and prof, "README's first profile block: %r" % m.group(1)
    assert text.index("## A first profile") < text.index("## Install") < text.index("## Tests"), \
        "README: first profile, then Install, then Tests"
    return build, prof


def newcomer():
    build, prof = first_screen()
    dest = os.path.join(TMP, "newcomer")
    # "make && sudo make install": the same steps, into DESTDIR
    assert build.replace("sudo ", "") == "make && make install", "README's build line: %r" % build
    must(sh(["make", "-C", ROOT, "-s", "-j2"]), "make")
    must(sh(["make", "-C", ROOT, "-s", "install", "DESTDIR=" + dest]), "make install")
    installed = os.path.join(dest, "usr/local/bin/tachyon-bpf")
    work = os.path.join(TMP, "work")
    os.makedirs(work)
    shutil.copy(tb.workload("slices.py"), os.path.join(work, "app.py"))
    args = prof.split()[1:]  # without sudo: we are root
    assert args[0] == "tachyon-bpf" and "-o" in args and args[-2:] == ["python3", "app.py"], prof
    page = args[args.index("-o") + 1]
    args = [installed, "-o", "profile.json"] + args[1:]
    r = sh(args, cwd=work, timeout=120)
    assert r.returncode == 0, "%s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()[-400:])
    assert "wrote %s" % page in r.stderr, "no 'wrote %s' in: %s" % (page, r.stderr[-300:])
    b = sh(["bash", os.path.join(ROOT, "tests/browser/run.sh"), "real", os.path.join(work, page),
            os.path.join(work, "profile.json"), "fifty"], timeout=300)
    last = (b.stdout.strip().splitlines() or [""])[-1]
    assert b.returncode == 0 and re.fullmatch(r"[1-9]\d* passed, 0 failed", last), \
        "browser harness: exit %d, %s\n%s" % (b.returncode, last, b.stdout[-800:])
    return "README: %r -> %s (%d KB), browser harness: %s" % (
        prof, page, os.path.getsize(os.path.join(work, page)) // 1024, last)


# ---- the .deb ------------------------------------------------------------------------------------
def deb():
    base = os.path.join(TMP, "deb")
    src = os.path.join(base, "tachyon-bpf-" + VERSION)
    os.makedirs(src)
    files = sh(["git", "-C", ROOT, "ls-files", "-co", "--exclude-standard"]).stdout.split("\n")
    files = [f for f in files if f and not f.startswith(("tests/browser/node_modules/", "dist/"))
             and os.path.isfile(os.path.join(ROOT, f))]
    must(sh(["tar", "-C", ROOT, "-cf", os.path.join(base, "src.tar")] + files), "tar")
    must(sh(["tar", "-C", src, "-xf", os.path.join(base, "src.tar")]), "untar")
    chg = open(os.path.join(ROOT, "debian/changelog")).readline()
    assert "(%s)" % VERSION in chg, "debian/changelog's version is not VERSION's %s: %s" % (VERSION, chg)
    head = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip()
    must(sh(["dpkg-buildpackage", "-b", "-us", "-uc"], cwd=src, env=dict(os.environ, GIT=head)),
         "dpkg-buildpackage")
    pkg = os.path.join(base, "tachyon-bpf_%s_amd64.deb" % VERSION)
    listed = must(sh(["dpkg-deb", "-c", pkg]), "dpkg-deb -c").stdout
    assert "./usr/bin/tachyon-bpf" in listed and "tachyon-bpf.1.gz" in listed
    if sh(["dpkg-query", "-W", "tachyon-bpf"]).returncode == 0:
        raise AssertionError("a tachyon-bpf package is installed already: not touching it")
    must(sh(["dpkg", "-i", pkg]), "dpkg -i")
    try:
        owned = [p for p in sh(["dpkg-query", "-L", "tachyon-bpf"]).stdout.split("\n")
                 if p and os.path.isfile(p)]
        v = must(sh(["/usr/bin/tachyon-bpf", "--version"]), "installed --version").stdout.strip()
        assert v.startswith("tachyon-bpf %s (git %s" % (VERSION, head)), v
        man = must(sh(["man", "-w", "tachyon-bpf"]), "man -w").stdout.strip()
        assert man == "/usr/share/man/man1/tachyon-bpf.1.gz", man
    finally:
        must(sh(["dpkg", "-r", "tachyon-bpf"]), "dpkg -r")
    left = [p for p in owned if os.path.exists(p)]
    assert not left, "left after dpkg -r: %s" % left
    status = sh(["dpkg-query", "-W", "-f=${db:Status-Status}", "tachyon-bpf"]).stdout
    assert status in ("", "not-installed"), "after dpkg -r: status %r" % status
    return "%s (%d KB): %s; man -w %s; dpkg -r removed its %d files" % (
        os.path.basename(pkg), os.path.getsize(pkg) // 1024, v, man, len(owned))


PARTS = [("words", words), ("options", options), ("install", install), ("static", static),
         ("newcomer", newcomer), ("deb", deb)]


def main():
    names = sys.argv[1:] or [n for n, _ in PARTS]
    unknown = [n for n in names if n not in dict(PARTS)]
    if unknown:
        print("check.py: unknown part %s (%s)" % (", ".join(unknown), " ".join(n for n, _ in PARTS)),
              file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("check.py: run as root (BPF, chroot, dpkg)", file=sys.stderr)
        return 2
    must(sh(["make", "-C", ROOT, "-s", "-j2"]), "make")
    try:
        for n in names:
            tb.check(n, dict(PARTS)[n])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("%d passed, %d failed" % (tb.results["passed"], tb.results["failed"]))
    return 1 if tb.results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
