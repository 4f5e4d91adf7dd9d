#!/usr/bin/env python3
"""check_debug_offsets.py: live check of user/cpython/layout.c inside a running interpreter.

3.13+: copies _Py_DebugOffsets from this process's own _PyRuntime (ctypes), has
PRINT_LAYOUT parse it (tb_layout_from_debug_offsets) and compares with the built-in table.
Any version 3.10+: walks this process's memory with the layout (thread list, thread ids,
current frame, code object fields, str/bytes, GIL holder, gc.collecting) and checks the
values against what Python itself reports. Exit 0 when all agree.
Usage: python3.X check_debug_offsets.py PRINT_LAYOUT_BINARY DUMP_FILE
"""
import ctypes
import subprocess
import sys
import threading

NO = 0xFFFF


def u64(addr):
    return ctypes.c_uint64.from_address(addr).value


def u32(addr):
    return ctypes.c_uint32.from_address(addr).value


def u8(addr):
    return ctypes.c_uint8.from_address(addr).value


def run_layout(tool, *args):
    out = subprocess.run([tool, *args], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (line.split("=", 1) for line in out.split())}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tool, dump = sys.argv[1], sys.argv[2]
    minor = sys.version_info.minor
    rt = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
    dbg_size = run_layout(tool, "version", str(minor))["debug_size"]  # sizeof(_Py_DebugOffsets), 0: none
    if dbg_size:
        with open(dump, "wb") as f:
            f.write(ctypes.string_at(rt, dbg_size))
        lay, what = run_layout(tool, "debug", dump), "debug offsets"
    else:
        lay, what = run_layout(tool, "builtin", hex(sys.hexversion)), "builtin table"
    errors = []

    def check(what, got, want):
        if got != want:
            errors.append(f"{what}: got {got:#x}, want {want:#x}")

    # 1. parsed debug offsets == built-in fallback table (default builds only)
    if dbg_size and not lay["free_threaded"]:
        ref = run_layout(tool, "builtin", hex(lay["version_hex"]))
        for k in sorted(ref):
            if ref[k] != lay[k]:
                errors.append(f"builtin {k}={ref[k]} but debug offsets give {lay[k]}")

    # 2. walk our own interpreter with the parsed offsets
    check("version_hex", lay["version_hex"], sys.hexversion)
    interp = u64(rt + lay["bpf.runtime_interp_head"])
    ts, me = u64(interp + lay["bpf.interp_threads_head"]), None
    for _ in range(512):
        if not ts:
            break
        if u64(ts + lay["bpf.tstate_thread_id"]) == threading.get_ident():
            me = ts
            break
        ts = u64(ts + lay["bpf.tstate_next"])
    if me is None:
        errors.append("no thread state with thread_id == threading.get_ident()")
    else:
        if lay["tstate_native_thread_id"] != NO:
            check("native_thread_id", u64(me + lay["tstate_native_thread_id"]), threading.get_native_id())
        mask = ~lay["bpf.code_tag_mask"] & 0xFFFFFFFFFFFFFFFF

        def python_frame(frame):  # skip shim (C-stack entry) frames
            for _ in range(16):
                if lay["bpf.frame_owner"] == NO or \
                   u8(frame + lay["bpf.frame_owner"]) < lay["bpf.owner_skip_min"]:
                    return frame
                frame = u64(frame + lay["bpf.frame_previous"])
            return frame

        # the innermost frame, while reading it, is u64()'s; its caller is main()
        frame = u64(me + lay["bpf.tstate_frame"])
        if lay["bpf.cframe_current_frame"] != NO:
            frame = u64(frame + lay["bpf.cframe_current_frame"])
        frame = python_frame(frame)
        check("innermost frame code", u64(frame + lay["bpf.frame_code"]) & mask, id(u64.__code__))
        frame = python_frame(u64(frame + lay["bpf.frame_previous"]))
        code = u64(frame + lay["bpf.frame_code"]) & mask
        co = main.__code__
        check("caller frame code", code, id(co))
        check("code ob_type", u64(code + lay["bpf.object_type"]), id(type(co)))
        if lay["code_qualname"] != NO:
            check("co_qualname", u64(code + lay["code_qualname"]), id(co.co_qualname))
        check("co_name", u64(code + lay["code_name"]), id(co.co_name))
        check("co_filename", u64(code + lay["code_filename"]), id(co.co_filename))
        check("co_linetable", u64(code + lay["code_linetable"]), id(co.co_linetable))
        check("co_firstlineno", u32(code + lay["code_firstlineno"]), co.co_firstlineno)
        check("co_argcount", u32(code + lay["code_argcount"]), co.co_argcount)
        check("co_flags", u32(code + lay["code_flags"]), co.co_flags)
        if lay["bpf.frame_kind"] == 0:   # 3.10: f_lasti (code units), co_code bytes*
            check("co_code", u64(code + lay["code_adaptive"]), id(co.co_code))
            off = 2 * ctypes.c_int32.from_address(frame + lay["bpf.frame_instr"]).value
        else:
            check("code ob_size", u64(code + lay["code_nunits"]), len(co.co_code) // 2)
            off = u64(frame + lay["bpf.frame_instr"]) - (code + lay["bpf.code_adaptive"])
        if not 0 <= off < len(co.co_code):
            errors.append(f"instruction offset {off} outside the bytecode")
        if lay["code_version"] != NO and u32(code + lay["code_version"]) == 0:
            errors.append("co_version is 0")
        qn = co.co_qualname if lay["code_qualname"] != NO else co.co_name
        state = u32(id(qn) + lay["unicode_state"])
        check("str compact+ascii", (state >> lay["unicode_compact_bit"]) & 1
              and (state >> lay["unicode_ascii_bit"]) & 1, 1)
        check("str kind", (state >> lay["unicode_kind_shift"]) & 7, 1)
        check("str length", u64(id(qn) + lay["unicode_length"]), len(qn))
        data = ctypes.string_at(id(qn) + lay["unicode_ascii_data"], len(qn))
        if data != qn.encode():
            errors.append(f"qualname bytes {data!r} != {qn!r}")
        b = co.co_linetable
        check("bytes ob_size", u64(id(b) + lay["bytes_size"]), len(b))
        if ctypes.string_at(id(b) + lay["bytes_sval"], len(b)) != b:
            errors.append("co_linetable bytes differ")
        if lay["runtime_gil_locked"] != NO:
            check("gil locked", u32(rt + lay["runtime_gil_locked"]), 1)
            check("gil holder", u64(rt + lay["runtime_gil_holder"]), me)
        elif not lay["free_threaded"]:
            gil = u64(interp + lay["interp_ceval_gil"])
            check("gil locked", u32(gil + lay["gil_locked"]), 1)
            check("gil holder", u64(gil + lay["gil_holder"]), me)
        check("gc.collecting", u32(interp + lay["interp_gc_collecting"]), 0)
    ver = "%d.%d.%d%s" % (*sys.version_info[:3], "t" if lay["free_threaded"] else "")
    if errors:
        for e in errors:
            print(f"live {what} {ver}: MISMATCH {e}")
        return 1
    extra = ", equal to the built-in table," if dbg_size and not lay["free_threaded"] else ""
    print(f"live {what} {ver}: parsed{extra} and the walk of this process checks out")
    return 0


if __name__ == "__main__":
    sys.exit(main())
