"""readelf_rows.py: the unwind rows of an ELF file as user/proc/cfi.c must
build them, computed independently from binutils' `readelf -wF` (the CFA and
register rules of every row) and `readelf -wf` (the raw instructions, for the
lazy-PLT CFA expression and its threshold).  Same classification and layout
rules as docs/native-unwinding.md: kinds INVALID/RSP/RBP/PLT/STOP/SIGNAL,
an INVALID row where the next FDE starts more than 15 bytes after one ends,
equal neighbours merged.

    rows(path) -> (fdes [(lo, hi)], rows [(pc, kind, cfa8, rbp8)])"""
import re
import subprocess

MAX_PAD = 15
MAX_CFA = 8 * 65535
MIN_RBP = -1024

ENTRY = re.compile(r"^([0-9a-f]{8}) [0-9a-f]{8,16} [0-9a-f]{8} (CIE|FDE)(.*)$")
FDE_TAIL = re.compile(r" cie=([0-9a-f]{8}) pc=([0-9a-f]+)\.\.([0-9a-f]+)")
ROW = re.compile(r"^([0-9a-f]{16}) +(\S.*)$")
REGISTER_RULE = re.compile(r"\b(r\d+) \((\w+)\)")   # "r10 (r10)": one cell
PLT = re.compile(r"DW_CFA_def_cfa_expression \(DW_OP_breg7 \(rsp\): 8; DW_OP_breg16 \(rip\): 0; "
                 r"DW_OP_lit15; DW_OP_and; DW_OP_lit(\d+); DW_OP_ge; DW_OP_lit3; DW_OP_shl; "
                 r"DW_OP_plus\)")


def readelf(flag, path):
    return subprocess.run(["readelf", flag, path], capture_output=True, text=True,
                          check=False).stdout.splitlines()


def plt_thresholds(path):
    """FDE offset -> the PLT threshold, for FDEs whose only CFA expressions are
    the lazy-PLT one (with one threshold)."""
    out, cur, exprs = {}, None, {}
    for line in readelf("-wf", path):
        m = ENTRY.match(line)
        if m:
            cur = m.group(1) if m.group(2) == "FDE" else None
            continue
        if cur and "DW_CFA_def_cfa_expression" in line:
            p = PLT.search(line)
            exprs.setdefault(cur, set()).add(int(p.group(1)) if p else None)
    for off, s in exprs.items():
        if len(s) == 1 and None not in s:
            n = s.pop()
            if 1 <= n <= 15:
                out[off] = n
    return out


def parse(path):
    """CIEs {offset: (augmentation, initial row)} and FDEs [(offset, cie, lo, hi, rows)],
    rows being [(loc, {column: value})]."""
    cies, fdes, cur, cols = {}, [], None, None
    for line in readelf("-wF", path):
        m = ENTRY.match(line)
        if m:
            off, kind, tail = m.groups()
            cols = None
            if kind == "CIE":
                aug = re.search(r'"([^"]*)"', tail)
                cur = cies[off] = {"aug": aug.group(1) if aug else "", "rows": []}
            else:
                t = FDE_TAIL.search(tail)
                cur = {"off": off, "cie": t.group(1), "lo": int(t.group(2), 16),
                       "hi": int(t.group(3), 16), "rows": []}
                fdes.append(cur)
            continue
        if cur is None:
            continue
        s = line.split()
        if s and s[0] == "LOC":
            cols = s
            continue
        m = ROW.match(line)
        if m and cols:
            vals = REGISTER_RULE.sub(r"\1(\2)", line).split()
            cur["rows"].append((int(m.group(1), 16), dict(zip(cols[1:], vals[1:]))))
    return cies, fdes


def classify(cell, signal, plt):
    """(kind, cfa8, rbp8) of one readelf row."""
    if signal:
        return ("SIGNAL", 0, 0)
    cfa, ra, rbp = cell.get("CFA", "u"), cell.get("ra", "u"), cell.get("rbp", "u")
    if cfa == "u":
        return ("STOP", 0, 0)
    m = re.match(r"^(rsp|rbp)([+-]\d+)$", cfa)
    if m:
        off = int(m.group(2))
        if off < 0 or off > MAX_CFA or off % 8:
            return ("INVALID", 0, 0)
        kind, cfa8 = ("RSP" if m.group(1) == "rsp" else "RBP"), off // 8
    elif cfa == "exp" and plt:
        kind, cfa8 = "PLT", plt
    else:
        return ("INVALID", 0, 0)
    if ra == "u":
        return ("STOP", 0, 0)
    if ra != "c-8":
        return ("INVALID", 0, 0)
    if rbp in ("u", "s"):
        return (kind, cfa8, 0)
    m = re.match(r"^c([+-]\d+)$", rbp)
    if not m:
        return ("INVALID", 0, 0)
    off = int(m.group(1))
    if off >= 0 or off < MIN_RBP or off % 8 or kind == "PLT":
        return ("INVALID", 0, 0)
    return (kind, cfa8, off // 8)


def rows(path):
    cies, fdes = parse(path)
    plts = plt_thresholds(path)
    fdes = sorted((f for f in fdes if f["hi"] > f["lo"]), key=lambda f: (f["lo"], f["hi"]))
    kept = []
    for f in fdes:
        if kept and kept[-1]["lo"] == f["lo"]:
            continue
        if kept and kept[-1]["hi"] > f["lo"]:
            kept[-1]["hi"] = f["lo"]
        kept.append(f)
    out = []

    def emit(pc, r):
        if out and out[-1][0] == pc:
            out.pop()
        if out and out[-1][1:] == r:
            return
        out.append((pc,) + r)

    for i, f in enumerate(kept):
        cie = cies.get(f["cie"], {"aug": "", "rows": []})
        signal = "S" in cie["aug"]
        frows = [(loc, c) for loc, c in f["rows"] if f["lo"] <= loc < f["hi"]]
        if not frows:
            init = cie["rows"][0][1] if cie["rows"] else {}
            frows = [(f["lo"], init)]
        for loc, c in frows:
            emit(loc, classify(c, signal, plts.get(f["off"])))
        nxt = kept[i + 1]["lo"] if i + 1 < len(kept) else None
        if nxt is None or nxt - f["hi"] > MAX_PAD:
            emit(f["hi"], ("INVALID", 0, 0))
    return [(f["lo"], f["hi"]) for f in kept], out
