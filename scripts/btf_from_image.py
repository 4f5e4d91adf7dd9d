#!/usr/bin/env python3
"""btf_from_image.py: cuts the kernel's BTF out of a raw kernel image (arm64's
Image has no ELF sections to find .BTF by): the largest well-formed blob,
found by its header: magic 0xeB9F, version 1, flags, hdr_len 24, type_off 0,
type_len, str_off = type_len, str_len, the string section starting with its
empty string.  A gzip-compressed image (Debian's arm64 vmlinuz) is
decompressed first.

Usage: btf_from_image.py IMAGE OUT    exit 1 with one line if there is none."""
import gzip
import struct
import sys

MAGIC = b"\x9f\xeb\x01\x00"


def btf_blob(image):
    best = None
    at = image.find(MAGIC)
    while at >= 0:
        if at + 24 <= len(image):
            hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<IIIII", image, at + 4)
            end = at + hdr_len + str_off + str_len
            if (hdr_len == 24 and type_off == 0 and str_off == type_len and type_len > 0
                    and 0 < str_len < (1 << 30) and end <= len(image)
                    and image[at + hdr_len + str_off] == 0 and (best is None or end - at > best[1] - best[0])):
                best = (at, end)
        at = image.find(MAGIC, at + 1)
    return best


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: btf_from_image.py IMAGE OUT")
    with open(sys.argv[1], "rb") as f:
        image = f.read()
    if image[:2] == b"\x1f\x8b":
        image = gzip.decompress(image)
    best = btf_blob(image)
    if best is None:
        sys.exit("btf_from_image.py: %s: no BTF blob in the kernel image" % sys.argv[1])
    with open(sys.argv[2], "wb") as f:
        f.write(image[best[0]:best[1]])
    print("btf_from_image.py: BTF at offset %#x, %d bytes" % (best[0], best[1] - best[0]), file=sys.stderr)


if __name__ == "__main__":
    main()
