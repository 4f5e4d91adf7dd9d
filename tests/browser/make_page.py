#!/usr/bin/env python3
"""Build a page from its JSON exactly the way the C writer (`-o x.html`, user/output/page.c) does:

  data  = base64(zlib.compress(json_bytes))      (RFC 1950 stream: DecompressionStream('deflate'))
  page  = template with `@@TB_TITLE@@` -> html-escaped title and `@@TB_DATA@@` -> data,
          each placeholder appearing exactly once in the template.

The template follows the JSON's "format": a heatmap JSON (docs/heatmap-json.md) goes into
user/output/assets/heatmap.html, a tree or diff JSON (docs/profile-json.md, docs/diff-json.md) into
user/output/assets/flamegraph.html; --kind or --template choose otherwise.

usage: make_page.py DATA.json OUT.html [--title TITLE] [--kind flamegraph|heatmap] [--template FILE]
       make_page.py --raw-data TEXT OUT.html [--kind ...]    (embed TEXT as is: pages with broken data)
"""
import argparse
import base64
import html
import json
import os
import sys
import zlib

ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "user", "output", "assets")
# kind -> (template, default title prefix)
KINDS = {
    "flamegraph": ("flamegraph.html", "tachyon-bpf: "),
    "heatmap": ("heatmap.html", "tachyon-bpf heatmap: "),
}
PH_DATA, PH_TITLE = "@@TB_DATA@@", "@@TB_TITLE@@"


def build(template: str, data: str, title: str) -> str:
    for ph in (PH_DATA, PH_TITLE):
        if template.count(ph) != 1:
            raise SystemExit("make_page.py: the template must contain %s exactly once (found %d)" % (ph, template.count(ph)))
    # Title first: the base64 alphabet cannot produce a placeholder, but keep the C order anyway.
    return template.replace(PH_TITLE, html.escape(title, quote=True)).replace(PH_DATA, data)


def kind_of(raw: bytes) -> str:
    """The page a JSON belongs on, from its "format" (anything unreadable: the flame graph)."""
    try:
        fmt = json.loads(raw).get("format")
    except (ValueError, AttributeError):
        return "flamegraph"
    return "heatmap" if fmt == "tachyon-bpf-heatmap" else "flamegraph"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="?")
    ap.add_argument("out")
    ap.add_argument("--title", default=None)
    ap.add_argument("--kind", choices=sorted(KINDS), default=None)
    ap.add_argument("--template", default=None)
    ap.add_argument("--raw-data", default=None, help="embed this text instead of encoding a JSON file")
    a = ap.parse_args()
    if a.raw_data is not None:
        data, raw = a.raw_data, b""
    elif a.json:
        with open(a.json, "rb") as f:
            raw = f.read()
        data = base64.b64encode(zlib.compress(raw, 6)).decode("ascii")
    else:
        ap.error("a JSON file is needed (or --raw-data)")
    kind = a.kind or (kind_of(raw) if raw else "flamegraph")
    tpl_name, prefix = KINDS[kind]
    with open(a.template or os.path.join(ASSETS, tpl_name), encoding="utf-8") as f:
        template = f.read()
    title = a.title if a.title is not None else prefix + os.path.basename(a.json or "raw")
    page = build(template, data, title)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(page)
    print("%s: %d bytes (%s page, json %d bytes)" % (a.out, len(page), kind, len(raw)), file=sys.stderr)


if __name__ == "__main__":
    main()
