#!/usr/bin/env python3
"""check.py: the golden-output test.  Renders every capture of
tests/golden/captures/ in every output format (and the diff outputs of the
diff-base/diff-cur pair; both lists from the binary's --list-formats, so a
new format is rendered here, and fails until --update records it), normalizes what depends on the rendering machine
(host name, kernel release, CPU count: taken at render time), and compares a
SHA-256 of each output with tests/golden/expected.txt.  A refactoring must
leave every line equal; a deliberate change of an output regenerates the
file with --update (and says so in its commit).

    tests/golden/check.py [--update] [--bin PATH] [--machine M]

--machine: what uname -m says where the binary runs (default this host's;
tests/arm64/check-user.sh runs the arm64 binary under qemu-aarch64: aarch64).

Pages (.html) are compared on their template and their embedded data, the
data decompressed first (the data holds the host name).  Ends with
"N passed, N failed"."""
import base64
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CAPTURES = os.path.join(HERE, "captures")
EXPECTED = os.path.join(HERE, "expected.txt")

# (variant name, extra render arguments, formats; None: every format render
# writes, as `render --list-formats` prints the format table): option
# variants worth pinning
VARIANTS = [
    ("default", [], None),
    ("by-line", ["--by-line", "--min-fraction", "0"], [".json", ".speedscope.json", ".txt"]),
    ("sorted", ["--sort", "total", "--limit", "3"], [".txt"]),
    # the tree JSON's version 1 (the default is version 2: docs/profile-json.md), file and page
    ("json-v1", ["--json-version", "1"], [".json", ".html"]),
]
# and for captures with a timeline (version 3, timeline-*.tbp): a time slice in every format
SLICE_VARIANTS = [("slice", ["--from", "0.5", "--to", "1.5"], None)]


MACHINE = os.uname().machine


def machine_strings():
    u = os.uname()
    cpus = os.cpu_count() or 0
    return [
        ('"host":' + jstr(u.nodename), '"host":"HOST"'),
        ('"kernel":' + jstr(u.release), '"kernel":"KERNEL"'),
        ('"oscpu":' + jstr("%s %s %s" % (u.sysname, u.release, MACHINE)), '"oscpu":"OSCPU"'),
        ('"abi":' + jstr(MACHINE), '"abi":"ABI"'),
        ('"physicalCPUs":%d,"logicalCPUs":%d' % (cpus, cpus), '"physicalCPUs":N,"logicalCPUs":N'),
    ]


def jstr(s):
    # the writers escape <, > and & as \u00XX; machine names rarely hold them
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def normalize(data, ext):
    if ext.endswith(".html"):
        m = re.search(rb'(<script type="application/octet-stream" id="tb-data">)([A-Za-z0-9+/=]*)(</script>)',
                      data)
        if not m:
            return b"NO EMBEDDED DATA\n" + data
        inner = zlib.decompress(base64.b64decode(m.group(2)))
        return data[:m.start(2)] + b"@@DATA@@" + data[m.end(2):] + b"\n@@EMBEDDED@@\n" + \
            normalize(inner, ".json")
    if ext in (".pb.gz", ".tbp"):
        return data
    text = data
    for old, new in machine_strings():
        text = text.replace(old.encode(), new.encode())
    return text


def digest(data, ext):
    return hashlib.sha256(normalize(data, ext)).hexdigest()


def run(binary, args):
    r = subprocess.run([binary] + args, capture_output=True)
    return r.returncode, r.stderr


def list_formats(binary, command):
    """The extensions of the format table that `command` writes."""
    r = subprocess.run([binary, command, "--list-formats"], capture_output=True, text=True)
    exts = r.stdout.split()
    if r.returncode != 0 or not exts or not all(e.startswith(".") for e in exts):
        sys.exit("%s %s --list-formats: exit %d, %r" % (binary, command, r.returncode, r.stdout[:200]))
    return exts


def render_all(binary, tmp):
    """{key: sha256} for every output (key 'capture variant ext')."""
    formats_all = list_formats(binary, "render")
    diff_formats = list_formats(binary, "diff")
    out = {}
    for cap in sorted(os.listdir(CAPTURES)):
        if not cap.endswith(".tbp"):
            continue
        name = cap[:-4]
        path = os.path.join(CAPTURES, cap)
        for variant, extra, formats in VARIANTS + (SLICE_VARIANTS if name.startswith("timeline-") else []):
            formats = formats or formats_all
            outs = [os.path.join(tmp, "%s.%s%s" % (name, variant, ext)) for ext in formats]
            args = ["render", "--summary", path] + extra
            for o in outs:
                args += ["-o", o]
            rc, err = run(binary, args)
            if rc != 0:
                out["%s %s render" % (name, variant)] = "exit %d: %s" % (rc, err.decode(errors="replace").strip())
                continue
            # the summary on stderr, without the "wrote FILE" lines (temporary names)
            summary = b"".join(l for l in err.splitlines(True) if not l.startswith(b"tachyon-bpf: wrote "))
            out["%s %s summary" % (name, variant)] = hashlib.sha256(summary).hexdigest()
            for ext, o in zip(formats, outs):
                with open(o, "rb") as f:
                    out["%s %s %s" % (name, variant, ext)] = digest(f.read(), ext)
    base, cur = (os.path.join(CAPTURES, "diff-%s.tbp" % s) for s in ("base", "cur"))
    outs = [os.path.join(tmp, "diff%s" % ext) for ext in diff_formats]
    args = ["diff", base, cur, "-q"]
    for o in outs:
        args += ["-o", o]
    rc, err = run(binary, args)
    if rc != 0:
        out["diff render"] = "exit %d: %s" % (rc, err.decode(errors="replace").strip())
    else:
        for ext, o in zip(diff_formats, outs):
            with open(o, "rb") as f:
                out["diff-base+cur diff %s" % ext] = digest(f.read(), ext)
    return out


def main():
    global MACHINE
    update = "--update" in sys.argv
    if "--machine" in sys.argv:
        MACHINE = sys.argv[sys.argv.index("--machine") + 1]
    binary = os.path.join(ROOT, "tachyon-bpf")
    if "--bin" in sys.argv:
        binary = sys.argv[sys.argv.index("--bin") + 1]
    with tempfile.TemporaryDirectory() as tmp:
        got = render_all(binary, tmp)
    if update:
        with open(EXPECTED, "w") as f:
            f.write("# tests/golden/check.py --update: sha256 of each normalized output\n")
            for k in sorted(got):
                f.write("%s %s\n" % (k, got[k]))
        print("wrote %s (%d outputs)" % (EXPECTED, len(got)))
        return 0
    want = {}
    with open(EXPECTED) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            k, v = line.rstrip("\n").rsplit(" ", 1)
            want[k] = v
    passed = failed = 0
    for k in sorted(set(want) | set(got)):
        if want.get(k) == got.get(k):
            passed += 1
            continue
        failed += 1
        print("FAIL %s: expected %s, got %s" % (k, want.get(k, "(no such output)"), got.get(k, "(not written)")))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
