#!/usr/bin/env python3
"""Build a heatmap page from a heatmap JSON exactly the way the C writer (`-o x.html`) does:

  data  = base64(zlib.compress(json_bytes))      (RFC 1950 stream: DecompressionStream('deflate'))
  page  = template with `@@TB_DATA@@` -> data and `@@TB_TITLE@@` -> html-escaped title,
          each placeholder appearing exactly once in the template.

usage: make_page.py HEATMAP.json OUT.html [--title TITLE] [--template user/out/assets/heatmap.html]
       make_page.py --raw-data TEXT OUT.html     (embed TEXT as is: pages with broken data)
"""
import argparse
import base64
import html
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TEMPLATE = os.path.join(HERE, "..", "..", "user", "assets", "heatmap.html")
PH_DATA, PH_TITLE = "@@TB_DATA@@", "@@TB_TITLE@@"


def build(template: str, data: str, title: str) -> str:
    for ph in (PH_DATA, PH_TITLE):
        if template.count(ph) != 1:
            raise SystemExit("template must contain %s exactly once (found %d)" % (ph, template.count(ph)))
    # Title first: the base64 alphabet cannot produce a placeholder, but keep the C order anyway.
    return template.replace(PH_TITLE, html.escape(title, quote=True)).replace(PH_DATA, data)


def encode(json_bytes: bytes) -> str:
    return base64.b64encode(zlib.compress(json_bytes, 6)).decode("ascii")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="?")
    ap.add_argument("out")
    ap.add_argument("--title", default=None)
    ap.add_argument("--template", default=DEFAULT_TEMPLATE)
    ap.add_argument("--raw-data", default=None, help="embed this text instead of encoding a JSON file")
    a = ap.parse_args()
    with open(a.template, encoding="utf-8") as f:
        template = f.read()
    if a.raw_data is not None:
        data, raw = a.raw_data, b""
    else:
        if not a.json:
            ap.error("a JSON file is needed (or --raw-data)")
        with open(a.json, "rb") as f:
            raw = f.read()
        data = encode(raw)
    title = a.title if a.title is not None else "tachyon-bpf heatmap: " + os.path.basename(a.json or "raw")
    page = build(template, data, title)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(page)
    print("%s: %d bytes (json %d bytes)" % (a.out, len(page), len(raw)), file=sys.stderr)


if __name__ == "__main__":
    main()
