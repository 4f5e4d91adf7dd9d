#!/usr/bin/env python3
"""check_bpf_cfg.py: the control-flow check of older kernels' verifiers, run on
a BPF object here, without booting them.

Kernels before 6.4 (check_cfg's loop_ok, e.g. 5.10 and 6.1) accept a loop's
back-edge only on a jump: a plain instruction that falls through into an
instruction still on the depth-first search's stack is "back-edge from insn
X to Y", and the program is refused.  Clang sometimes closes a loop that way.
This replays that search on every function of every program section of the
object (llvm-objdump's disassembly) and names each such edge.

Usage: check_bpf_cfg.py OBJ.bpf.o [OBJDUMP]   exit 0: none; 1: some (listed)."""
import re
import subprocess
import sys

BPF_JMP, BPF_JMP32 = 0x05, 0x06
OP_JA, OP_CALL, OP_EXIT = 0x00, 0x80, 0x90


def functions(obj, objdump):
    """{(section, function): [(index, code, src, off, imm)]} of every function."""
    raw = subprocess.run([objdump, "-d", obj], capture_output=True, text=True, check=True).stdout
    funcs, section, name = {}, None, None
    for line in raw.splitlines():
        m = re.match(r"Disassembly of section (\S+):", line)
        if m:
            section, name = m.group(1), None
            continue
        m = re.match(r"[0-9a-f]+ <([^>]+)>:", line)
        if m:
            if not m.group(1).startswith("LBB"):
                name = m.group(1)
                funcs[(section, name)] = []
            continue
        m = re.match(r"\s*(\d+):\t((?:[0-9a-f]{2} ){7}[0-9a-f]{2})", line)
        if m and name:
            b = bytes(int(x, 16) for x in m.group(2).split())
            off = int.from_bytes(b[2:4], "little", signed=True)
            imm = int.from_bytes(b[4:8], "little", signed=True)
            funcs[(section, name)].append((int(m.group(1)), b[0], b[1] >> 4, off, imm))
    return funcs


def back_edges(insns):
    """The fall-through back-edges check_cfg (loop_ok) refuses, as (from, to)."""
    if not insns:
        return []
    base = insns[0][0]
    at = {i - base: (code, src, off, imm) for i, code, src, off, imm in insns}
    n = max(at) + 2
    state = [0] * n            # 0 new, 1 discovered (on the stack), 2 explored
    found = []

    def succ(t):
        code, src, off, imm = at[t]
        cls, op = code & 7, code & 0xf0
        if code == 0x18:                       # ld_imm64: two slots
            return [(t + 2, False)]
        if cls not in (BPF_JMP, BPF_JMP32):
            return [(t + 1, False)]
        if op == OP_EXIT:
            return []
        if op == OP_CALL:
            return [(t + 1, False)]            # callees are checked as functions of their own
        if op == OP_JA:
            return [(t + off + 1, True)]
        return [(t + 1, True), (t + off + 1, True)]

    stack = [(0, iter(succ(0)))]
    state[0] = 1
    while stack:
        t, it = stack[-1]
        for w, loop_ok in it:
            if w not in at:
                break
            if state[w] == 0:
                state[w] = 1
                stack.append((w, iter(succ(w))))
                break
            if state[w] == 1 and not loop_ok:
                found.append((t + base, w + base))
        else:
            state[t] = 2
            stack.pop()
    return found


def main():
    obj = sys.argv[1]
    objdump = sys.argv[2] if len(sys.argv) > 2 else "llvm-objdump"
    bad = 0
    for (section, name), insns in functions(obj, objdump).items():
        for t, w in back_edges(insns):
            print("%s: %s (%s): back-edge from insn %d to %d (a fall-through)" % (obj, name, section, t, w))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
