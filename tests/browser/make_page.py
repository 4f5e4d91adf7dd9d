#!/usr/bin/env python3
"""Build a flame graph page from a tree JSON exactly the way the C writer (`-o x.html`) does:

  data  = base64(zlib.compress(json_bytes))      (RFC 1950 stream: DecompressionStream('deflate'))
  page  = template with `@@TB_DATA@@` -> data and `@@TB_TITLE@@` -> html-escaped title,
          each placeholder appearing exactly once in the template.

usage: make_page.py PROFILE.json OUT.html [--title TITLE] [--template user/out/assets/flamegraph.html]
"""
import argparse
import base64
import html
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TEMPLATE = os.path.join(HERE, "..", "..", "user", "assets", "flamegraph.html")


def build(template: str, json_bytes: bytes, title: str) -> str:
    for ph in ("@@TB_DATA@@", "@@TB_TITLE@@"):
        if template.count(ph) != 1:
            raise SystemExit("template must contain %s exactly once (found %d)" % (ph, template.count(ph)))
    data = base64.b64encode(zlib.compress(json_bytes, 6)).decode("ascii")
    # Title first: the base64 alphabet cannot produce a placeholder, but keep the C order anyway.
    return template.replace("@@TB_TITLE@@", html.escape(title, quote=True)).replace("@@TB_DATA@@", data)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("out")
    ap.add_argument("--title", default=None)
    ap.add_argument("--template", default=DEFAULT_TEMPLATE)
    a = ap.parse_args()
    with open(a.template, encoding="utf-8") as f:
        template = f.read()
    with open(a.json, "rb") as f:
        raw = f.read()
    title = a.title if a.title is not None else "tachyon-bpf: " + os.path.basename(a.json)
    page = build(template, raw, title)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(page)
    print("%s: %d bytes (json %d bytes)" % (a.out, len(page), len(raw)), file=sys.stderr)


if __name__ == "__main__":
    main()
