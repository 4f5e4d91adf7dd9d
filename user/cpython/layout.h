/* layout.h: the CPython interpreter layout as plain data: the built-in offsets of each
 * supported version (its row in versions.c), and a parser for the target's own
 * _Py_DebugOffsets (3.13+), producing what the BPF walk and symbolization need.
 * Where the numbers come from: docs/cpython-layouts.md.
 */
#ifndef TB_LAYOUT_H
#define TB_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "tachyon.h"

struct tb_layout {
	unsigned major, minor, micro;   /* from PY_VERSION_HEX */
	uint32_t version_hex;
	int free_threaded;
	struct tb_py_offsets bpf;       /* what the BPF walk needs (include/tachyon.h) */
	/* user space only, for symbolization of code objects and strings: */
	uint16_t code_size;             /* sizeof(PyCodeObject): bounds the offsets below, not what is read */
	uint16_t code_filename, code_name, code_qualname /* TB_NO_OFFSET on 3.10 */, code_linetable, code_firstlineno;
	uint16_t code_flags, code_argcount, code_version /* TB_NO_OFFSET < 3.12 */;
	uint16_t code_adaptive;         /* 3.11+: offset of co_code_adaptive; 3.10: co_code (PyBytesObject*) */
	uint16_t code_nunits;           /* 3.11+: ob_size (# code units); 3.10: TB_NO_OFFSET */
	uint16_t bytes_size, bytes_sval;/* PyBytesObject ob_size / ob_sval */
	uint16_t unicode_length, unicode_state, unicode_ascii_data, unicode_compact_data;
	uint8_t unicode_kind_shift, unicode_compact_bit, unicode_ascii_bit;
	/* GIL etc.: */
	uint16_t runtime_gil_locked, runtime_gil_holder;   /* <=3.11: offsets in _PyRuntime; TB_NO_OFFSET after */
	uint16_t interp_ceval_gil;                         /* 3.12+: interp -> struct _gil_runtime_state* */
	uint16_t gil_locked, gil_holder;                   /* 3.12+: offsets inside struct _gil_runtime_state */
	uint16_t gil_enabled;                              /* free-threaded: `enabled` inside it (0: no GIL) */
	uint16_t tstate_native_thread_id;                  /* TB_NO_OFFSET on 3.10 */
	uint16_t tstate_interp, tstate_exc_info, stackitem_exc_value; /* exception being handled */
	uint16_t interp_gc_collecting;                     /* absolute offset in PyInterpreterState of gc.collecting, or TB_NO_OFFSET */
	/* Python thread names (threadnames.c); TB_NO_OFFSET when unknown: */
	uint16_t interp_modules;        /* PyInterpreterState -> sys.modules (3.10/3.11 modules, 3.12+ imports.modules) */
	uint16_t type_flags, type_basicsize, type_dictoffset; /* PyTypeObject tp_flags, tp_basicsize, tp_dictoffset */
	uint16_t heaptype_cached_keys;  /* PyHeapTypeObject -> ht_cached_keys (keys shared by instances) */
};

/* Where the fields used sit inside one minor's _Py_DebugOffsets: byte positions in the
 * struct, 0 when the version does not list the field (docs/cpython-layouts.md). */
struct tb_debug_positions {
	uint16_t total;                 /* sizeof(_Py_DebugOffsets) */
	uint16_t runtime_size, runtime_interp_head;
	uint16_t interp_size, interp_next, interp_threads_head, interp_gc, interp_ceval_gil,
		 interp_gil_state, interp_gil_enabled, interp_gil_locked, interp_gil_holder;
	uint16_t tstate_size, tstate_next, tstate_interp, tstate_current_frame, tstate_thread_id,
		 tstate_native_thread_id;
	uint16_t frame_size, frame_previous, frame_executable, frame_instr_ptr, frame_owner,
		 frame_tlbc_index /* 3.14+ */;
	uint16_t code_size, code_filename, code_name, code_qualname, code_linetable,
		 code_firstlineno, code_argcount, code_adaptive, code_tlbc /* 3.14+ */;
	uint16_t pyobject_size, pyobject_ob_type;
	uint16_t bytes_size, bytes_ob_size, bytes_ob_sval;
	uint16_t unicode_size, unicode_state, unicode_length, unicode_ascii_size,
		 unicode_compact_size;
	uint16_t gc_size, gc_collecting;
	uint16_t interp_imports_modules, type_size, type_flags; /* thread names (threadnames.c) */
	uint16_t type_basicsize, type_dictoffset, heaptype_size, heaptype_cached_keys; /* 3.15+ */
};

/* The fixed buffers that hold the first bytes of a target's struct, read in one go by the
 * BPF program or the agent. Every offset used on one must fit it (tb_layout_check_reads), and
 * a reader reads tb_layout_read_size bytes: the span of its fields, never a size the target
 * declares (a declared size only bounds the offsets). */
enum tb_read_buf {
	TB_READ_TSTATE,     /* PyThreadState: the BPF program's tbuf, walk.c */
	TB_READ_FRAME,      /* a frame: the BPF program's fbuf, walk.c */
	TB_READ_CODE_HEAD,  /* a code object's identity (type, code id): the BPF program's cbuf, walk.c */
	TB_READ_CODE,       /* a code object for symbolization (names, line table): symbolize.c */
	TB_READ_STR,        /* a str header: pyread.c */
	TB_READ_GIL,        /* struct _gil_runtime_state (3.12+): the BPF program's gbuf */
	TB_READ_NBUFS,
};

/* Bytes of a code object (symbolize.c) and of a str header (pyread.c) read at most. */
#define TB_CODE_READ_MAX 512
#define TB_STR_HEAD_MAX 128

/* The most bytes a reader may read of buffer b (its fixed size). */
unsigned tb_layout_read_limit(enum tb_read_buf b);
/* Bytes to read so that every field of l used on buffer b is covered: at most the limit,
 * 0 when some field does not fit (a layout that fails tb_layout_check_reads). */
unsigned tb_layout_read_size(const struct tb_layout *l, enum tb_read_buf b);
/* 0 when every field of l fits the buffer it is read from; else -1 and one sentence in err
 * naming the field. tb_layout_from_debug_offsets returns only layouts that pass (and the
 * unit tests check the built-in ones). */
int tb_layout_check_reads(const struct tb_layout *l, char *err, size_t errlen);

/* The default (GIL) build's layout of the version_hex's minor (its row in versions.c): the
 * whole layout for 3.10-3.12, a fallback when the debug offsets cannot be read after.
 * version_hex = PY_VERSION_HEX. Returns 0, or -1 for an unsupported version. */
int tb_layout_builtin(uint32_t version_hex, struct tb_layout *out);

/* Bytes of _Py_DebugOffsets to read from _PyRuntime+0 for this minor
 * (3.13: 584, 3.14: 760, 3.15: 888), 0 if none. */
size_t tb_debug_offsets_size(unsigned minor);

/* Fill *out from a copy of the target's _Py_DebugOffsets (read from
 * _PyRuntime+0). The buffer is untrusted: every offset is range-checked.
 * On failure returns -1 and writes one sentence into err. */
int tb_layout_from_debug_offsets(const unsigned char *buf, size_t len, struct tb_layout *out,
				 char *err, size_t errlen);

/* "3.13.0", "3.14.10", "3.13.1t", "3.14.0rc1" style string; returns buf. */
const char *tb_layout_version_str(const struct tb_layout *l, char *buf, size_t len);

#endif /* TB_LAYOUT_H */
