#!/usr/bin/env python3
"""make_crafted.py: writes the crafted capture files of tests/hostile/captures/
(the regression corpus of hostile captures: each one crashed, aborted or
stalled a writer once, or is a version 2 file that must be refused in one
line or rendered safely).  They are made from real captures
(tests/golden/captures/diff-base.tbp, version 1; kernel-3.11.tbp, version 2
with kernel frames) by rewriting fields of their payload (layout:
docs/capture-format.md), then recompressed with a valid header.

    tests/hostile/make_crafted.py [OUTDIR]"""
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(ROOT, "tests", "golden", "captures", "diff-base.tbp")
SOURCE_V2 = os.path.join(ROOT, "tests", "golden", "captures", "kernel-3.11.tbp")
META_SIZE = {1: 152, 2: 288}
CODE_NATIVE, CODE_KERNEL = 2, 4     # code object flags (version 2)
MAX_STACK = 1412                    # deepest version 2 stack


class Payload:
    """The payload split into its sections (bytes), code objects and stacks parsed."""

    def __init__(self, data, version=1):
        self.data = data
        self.version = version
        p = META_SIZE[version]
        self.meta = bytearray(data[:p])
        p = self._skip_strings(p)
        p = self._skip_processes(p)
        self.threads_at = p
        p = self._skip_threads(p)
        self.codes_at = p
        self.codes = []    # [bytearray of 36 fixed bytes, line table bytes]
        n, = struct.unpack_from("<I", data, p)
        p += 4
        for _ in range(n):
            tlen, = struct.unpack_from("<I", data, p + 32)
            self.codes.append([bytearray(data[p:p + 36]), data[p + 36:p + 36 + tlen]])
            p += 36 + tlen
        self.stacks_at = p
        self.stacks = []   # [(thread, kind, depth, count, frames bytes)]
        n, = struct.unpack_from("<I", data, p)
        p += 4
        for _ in range(n):
            thread, kind, depth, count = struct.unpack_from("<IHHQ", data, p)
            p += 16
            self.stacks.append([thread, kind, depth, count, data[p:p + depth * 10]])
            p += depth * 10
        assert p == len(data), "trailing bytes"

    def _str(self, p):
        n, = struct.unpack_from("<I", self.data, p)
        return p + 4 + n + 1

    def _skip_strings(self, p):
        n, = struct.unpack_from("<I", self.data, p)
        p += 4
        for _ in range(n):
            p = self._str(p)
        return p

    def _skip_processes(self, p):
        n, = struct.unpack_from("<I", self.data, p)
        p += 4
        for _ in range(n):
            p += 40
            for _ in range(4):
                p = self._str(p)
        return p

    def _skip_threads(self, p):
        n, = struct.unpack_from("<I", self.data, p)
        return p + 4 + n * 92

    def kernel_code(self):
        """The index of the first kernel function."""
        return next(i for i, (c, _) in enumerate(self.codes) if c[14] & CODE_KERNEL)

    def build(self):
        out = bytes(self.meta) + self.data[META_SIZE[self.version]:self.codes_at]
        out += struct.pack("<I", len(self.codes))
        for fixed, table in self.codes:
            struct.pack_into("<I", fixed, 32, len(table))
            out += bytes(fixed) + table
        out += struct.pack("<I", len(self.stacks))
        for thread, kind, depth, count, frames in self.stacks:
            out += struct.pack("<IHHQ", thread, kind, depth, count) + frames
        return out


def capture_file(payload, version=1):
    z = zlib.compress(payload, 6)
    return b"TBPCAP\0\1" + struct.pack("<HHIQQ", version, 1, 0, len(payload), len(z)) + z


def load(version=1):
    data = open(SOURCE if version == 1 else SOURCE_V2, "rb").read()
    assert data[8] == version, "%s is not a version %d capture" % (SOURCE_V2, version)
    return Payload(zlib.decompress(data[32:]), version)


def deep_stack(p, depth):
    """p's first stack made depth frames deep by repeating its frames."""
    thread, kind, d, count, frames = p.stacks[0]
    frames = (frames * (depth // d + 1))[:depth * 10]
    p.stacks = [[thread, kind, depth, count, frames]]
    return p


def one_stack(count):
    p = load()
    p.stacks = p.stacks[:1]
    p.stacks[0][3] = count
    return p


def crafted():
    """{name: payload bytes}"""
    out = {}
    out["count-near-2-64"] = one_stack(2**64 - 5).build()
    out["count-2-33"] = one_stack(2**33).build()
    out["count-1e9"] = one_stack(10**9).build()
    p = load()
    p.stacks = p.stacks[:2]
    p.stacks[0][3] = p.stacks[1][3] = 2**63 + 1   # the sum wraps
    out["sum-wraps"] = p.build()
    p = load()
    struct.pack_into("<I", p.meta, 0, 0)           # rate 0 Hz
    out["rate-zero"] = p.build()
    p = load()
    struct.pack_into("<I", p.meta, 0, 0xffffffff)  # rate 4 GHz
    struct.pack_into("<Q", p.meta, 64, 2**64 - 1)  # python_samples
    out["rate-huge"] = p.build()
    p = load()
    p.codes[0][0][14] |= CODE_KERNEL                 # a kernel function in a version 1 file
    out["v1-kernel-kind"] = p.build()
    return out


def crafted_v2():
    """{name: version 2 payload bytes}: refused in one line, or rendered safely"""
    out = {}
    p = load(2)
    p.codes[p.kernel_code()][1] = b"\x80\x00" * 8   # a kernel function with a line table
    out["v2-kernel-linetable"] = p.build()
    p = load(2)
    struct.pack_into("<I", p.codes[p.kernel_code()][0], 0, 4242)   # ... with a pid
    out["v2-kernel-pid"] = p.build()
    p = load(2)
    p.codes[p.kernel_code()][0][14] = 1 | CODE_NATIVE | CODE_KERNEL
    out["v2-both-kinds"] = p.build()
    out["v2-depth-over"] = deep_stack(load(2), MAX_STACK + 1).build()
    out["v2-depth-max"] = deep_stack(load(2), MAX_STACK).build()     # renders
    p = load(2)
    struct.pack_into("<i", p.meta, 272, 1000)       # kptr_restrict
    out["v2-kptr-restrict"] = p.build()
    p = load(2)
    for off in range(152, 272, 8):                 # every native and kernel count 2^64 - 1
        struct.pack_into("<Q", p.meta, off, 2**64 - 1)
    flags, = struct.unpack_from("<I", p.meta, 140)
    struct.pack_into("<I", p.meta, 140, flags | 4 | 8 | 16)   # --kernel, --native, hidden
    out["v2-counts-huge"] = p.build()               # renders
    return out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "captures")
    os.makedirs(outdir, exist_ok=True)
    n = 0
    for version, made in ((1, crafted()), (2, crafted_v2())):
        for name, payload in made.items():
            with open(os.path.join(outdir, name + ".tbp"), "wb") as f:
                f.write(capture_file(payload, version))
            n += 1
    print("wrote %d crafted captures to %s" % (n, outdir))


if __name__ == "__main__":
    main()
