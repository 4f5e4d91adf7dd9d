#!/usr/bin/env python3
"""make_crafted.py: writes the crafted capture files of tests/hostile/captures/
(the regression corpus of hostile captures: each one crashed, aborted or
stalled a writer once).  They are made from a real capture
(tests/golden/captures/diff-base.tbp) by rewriting fields of its payload
(layout: docs/capture-format.md), then recompressed with a valid header.

    tests/hostile/make_crafted.py [OUTDIR]"""
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(ROOT, "tests", "golden", "captures", "diff-base.tbp")
META_SIZE = 152


class Payload:
    """The payload split into its sections (bytes), stacks parsed."""

    def __init__(self, data):
        self.data = data
        p = META_SIZE
        self.meta = bytearray(data[:p])
        p = self._skip_strings(p)
        p = self._skip_processes(p)
        self.threads_at = p
        p = self._skip_threads(p)
        self.codes_at = p
        p = self._skip_codes(p)
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

    def _skip_codes(self, p):
        n, = struct.unpack_from("<I", self.data, p)
        p += 4
        for _ in range(n):
            tlen, = struct.unpack_from("<I", self.data, p + 32)
            p += 36 + tlen
        return p

    def build(self):
        out = bytes(self.meta) + self.data[META_SIZE:self.stacks_at]
        out += struct.pack("<I", len(self.stacks))
        for thread, kind, depth, count, frames in self.stacks:
            out += struct.pack("<IHHQ", thread, kind, depth, count) + frames
        return out


def capture_file(payload):
    z = zlib.compress(payload, 6)
    return b"TBPCAP\0\1" + struct.pack("<HHIQQ", 1, 1, 0, len(payload), len(z)) + z


def load():
    data = open(SOURCE, "rb").read()
    return Payload(zlib.decompress(data[32:]))


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
    return out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "captures")
    os.makedirs(outdir, exist_ok=True)
    for name, payload in crafted().items():
        with open(os.path.join(outdir, name + ".tbp"), "wb") as f:
            f.write(capture_file(payload))
    print("wrote %d crafted captures to %s" % (len(crafted()), outdir))


if __name__ == "__main__":
    main()
