/* pylayout.c: CPython interpreter layouts as data (see pylayout.h).
 * Built-in tables measured from the 3.10-3.15 headers (reference cpython-layouts.md §2-5, 8),
 * and a defensive reader of the target's _Py_DebugOffsets (3.13+, reference §9, §10).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cpython/layout.h"

#define NO TB_NO_OFFSET
#define NO8 0xff

/* ------------------------------------------------------------------------ */
/* Built-in tables (default, GIL builds). Every field is spelled out.        */

static const struct tb_layout builtin[] = {
	{ /* 3.10: PyFrameObject chain, f_lasti in code units */
		.minor = 10,
		.bpf = {
			.runtime_interp_head = 32, .interp_threads_head = 8, .interp_next = 0,
			.tstate_next = 8, .tstate_thread_id = 176,
			.tstate_frame = 24, .cframe_current_frame = NO,
			.frame_code = 32, .frame_previous = 24, .frame_instr = 96, .frame_owner = NO,
			.code_adaptive = 48, .bytes_sval = 32,
			.code_firstlineno = 40, .code_argcount = 16, .code_version = NO,
			.object_type = 8, .frame_kind = TB_FRAME_OBJECT,
			.owner_skip_min = NO8, .owner_cstack = NO8, .code_tag_mask = 0,
		},
		.code_size = 176, .code_filename = 104, .code_name = 112, .code_qualname = NO,
		.code_linetable = 120, .code_firstlineno = 40, .code_flags = 36, .code_argcount = 16,
		.code_version = NO, .code_adaptive = 48, .code_nunits = NO,
		.bytes_size = 16, .bytes_sval = 32,
		.unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 48, .unicode_compact_data = 72,
		.unicode_kind_shift = 2, .unicode_compact_bit = 5, .unicode_ascii_bit = 6,
		.runtime_gil_locked = 368, .runtime_gil_holder = 360,
		.interp_ceval_gil = NO, .gil_locked = NO, .gil_holder = NO,
		.tstate_native_thread_id = NO, .interp_gc_collecting = 816,
		.interp_modules = 856, .type_flags = 168, .type_basicsize = 32, .type_dictoffset = 288,
		.heaptype_cached_keys = 872,
		.tstate_interp = 16, .tstate_exc_info = 144, .stackitem_exc_value = 8,
	},
	{ /* 3.11: _PyInterpreterFrame via tstate->cframe->current_frame, no shims */
		.minor = 11,
		.bpf = {
			.runtime_interp_head = 40, .interp_threads_head = 16, .interp_next = 0,
			.tstate_next = 8, .tstate_thread_id = 152,
			.tstate_frame = 56, .cframe_current_frame = 8,
			.frame_code = 32, .frame_previous = 48, .frame_instr = 56, .frame_owner = 69,
			.code_adaptive = 184, .bytes_sval = 32,
			.code_firstlineno = 72, .code_argcount = 56, .code_version = NO,
			.object_type = 8, .frame_kind = TB_FRAME_INTERP,
			.owner_skip_min = NO8, .owner_cstack = NO8, .code_tag_mask = 0,
		},
		.code_size = 192, .code_filename = 112, .code_name = 120, .code_qualname = 128,
		.code_linetable = 136, .code_firstlineno = 72, .code_flags = 48, .code_argcount = 56,
		.code_version = NO, .code_adaptive = 184, .code_nunits = 16,
		.bytes_size = 16, .bytes_sval = 32,
		.unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 48, .unicode_compact_data = 72,
		.unicode_kind_shift = 2, .unicode_compact_bit = 5, .unicode_ascii_bit = 6,
		.runtime_gil_locked = 376, .runtime_gil_holder = 368,
		.interp_ceval_gil = NO, .gil_locked = NO, .gil_holder = NO,
		.tstate_native_thread_id = 160, .interp_gc_collecting = 848,
		.interp_modules = 888, .type_flags = 168, .type_basicsize = 32, .type_dictoffset = 288,
		.heaptype_cached_keys = 872,
		.tstate_interp = 16, .tstate_exc_info = 120, .stackitem_exc_value = 0,
	},
	{ /* 3.12: cframe->current_frame @0, C-stack entry frames owner == 3 */
		.minor = 12,
		.bpf = {
			.runtime_interp_head = 40, .interp_threads_head = 72, .interp_next = 0,
			.tstate_next = 8, .tstate_thread_id = 136,
			.tstate_frame = 56, .cframe_current_frame = 0,
			.frame_code = 0, .frame_previous = 8, .frame_instr = 56, .frame_owner = 70,
			.code_adaptive = 192, .bytes_sval = 32,
			.code_firstlineno = 68, .code_argcount = 52, .code_version = 92,
			.object_type = 8, .frame_kind = TB_FRAME_INTERP,
			.owner_skip_min = 3, .owner_cstack = 3, .code_tag_mask = 0,
		},
		.code_size = 200, .code_filename = 112, .code_name = 120, .code_qualname = 128,
		.code_linetable = 136, .code_firstlineno = 68, .code_flags = 48, .code_argcount = 52,
		.code_version = 92, .code_adaptive = 192, .code_nunits = 16,
		.bytes_size = 16, .bytes_sval = 32,
		.unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 40, .unicode_compact_data = 56,
		.unicode_kind_shift = 2, .unicode_compact_bit = 5, .unicode_ascii_bit = 6,
		.runtime_gil_locked = NO, .runtime_gil_holder = NO,
		.interp_ceval_gil = 384, .gil_locked = 16, .gil_holder = 8,
		.tstate_native_thread_id = 144, .interp_gc_collecting = 312,
		.interp_modules = 944, .type_flags = 168, .type_basicsize = 32, .type_dictoffset = 288,
		.heaptype_cached_keys = 880,
		.tstate_interp = 16, .tstate_exc_info = 104, .stackitem_exc_value = 0,
	},
	{ /* 3.13 (fallback; prefer the debug offsets): tstate->current_frame */
		.minor = 13,
		.bpf = {
			.runtime_interp_head = 632, .interp_threads_head = 7344, .interp_next = 7264,
			.tstate_next = 8, .tstate_thread_id = 152,
			.tstate_frame = 72, .cframe_current_frame = NO,
			.frame_code = 0, .frame_previous = 8, .frame_instr = 56, .frame_owner = 70,
			.code_adaptive = 200, .bytes_sval = 32,
			.code_firstlineno = 68, .code_argcount = 52, .code_version = 92,
			.object_type = 8, .frame_kind = TB_FRAME_INTERP,
			.owner_skip_min = 3, .owner_cstack = 3, .code_tag_mask = 0,
		},
		.code_size = 208, .code_filename = 112, .code_name = 120, .code_qualname = 128,
		.code_linetable = 136, .code_firstlineno = 68, .code_flags = 48, .code_argcount = 52,
		.code_version = 92, .code_adaptive = 200, .code_nunits = 16,
		.bytes_size = 16, .bytes_sval = 32,
		.unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 40, .unicode_compact_data = 56,
		.unicode_kind_shift = 2, .unicode_compact_bit = 5, .unicode_ascii_bit = 6,
		.runtime_gil_locked = NO, .runtime_gil_holder = NO,
		.interp_ceval_gil = 16, .gil_locked = 16, .gil_holder = 8,
		.tstate_native_thread_id = 160, .interp_gc_collecting = 7400 + 200,
		.interp_modules = 7656, .type_flags = 168, .type_basicsize = 32, .type_dictoffset = 288,
		.heaptype_cached_keys = 880,
		.tstate_interp = 16, .tstate_exc_info = 120, .stackitem_exc_value = 0,
	},
	{ /* 3.14 (fallback): _PyStackRef f_executable, owner >= 3 (INTERPRETER; CSTACK = 4) */
		.minor = 14,
		.bpf = {
			.runtime_interp_head = 808, .interp_threads_head = 7344, .interp_next = 7272,
			.tstate_next = 8, .tstate_thread_id = 152,
			.tstate_frame = 72, .cframe_current_frame = NO,
			.frame_code = 0, .frame_previous = 8, .frame_instr = 56, .frame_owner = 74,
			.code_adaptive = 208, .bytes_sval = 32,
			.code_firstlineno = 68, .code_argcount = 52, .code_version = 92,
			.object_type = 8, .frame_kind = TB_FRAME_INTERP,
			.owner_skip_min = 3, .owner_cstack = 4, .code_tag_mask = 3,
		},
		.code_size = 216, .code_filename = 112, .code_name = 120, .code_qualname = 128,
		.code_linetable = 136, .code_firstlineno = 68, .code_flags = 48, .code_argcount = 52,
		.code_version = 92, .code_adaptive = 208, .code_nunits = 16,
		.bytes_size = 16, .bytes_sval = 32,
		.unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 40, .unicode_compact_data = 56,
		.unicode_kind_shift = 2, .unicode_compact_bit = 5, .unicode_ascii_bit = 6,
		.runtime_gil_locked = NO, .runtime_gil_holder = NO,
		.interp_ceval_gil = 16, .gil_locked = 16, .gil_holder = 8,
		.tstate_native_thread_id = 160, .interp_gc_collecting = 7408 + 192,
		.interp_modules = 7688, .type_flags = 168, .type_basicsize = 32, .type_dictoffset = 288,
		.heaptype_cached_keys = 880,
		.tstate_interp = 16, .tstate_exc_info = 120, .stackitem_exc_value = 0,
	},
	{ /* 3.15 (fallback): owner >= 3 (INTERPRETER; CSTACK removed), base_frame sentinel */
		.minor = 15,
		.bpf = {
			.runtime_interp_head = 936, .interp_threads_head = 7336, .interp_next = 7264,
			.tstate_next = 8, .tstate_thread_id = 176,
			.tstate_frame = 72, .cframe_current_frame = NO,
			.frame_code = 0, .frame_previous = 8, .frame_instr = 56, .frame_owner = 74,
			.code_adaptive = 208, .bytes_sval = 32,
			.code_firstlineno = 68, .code_argcount = 52, .code_version = 92,
			.object_type = 8, .frame_kind = TB_FRAME_INTERP,
			.owner_skip_min = 3, .owner_cstack = NO8, .code_tag_mask = 3,
		},
		.code_size = 216, .code_filename = 112, .code_name = 120, .code_qualname = 128,
		.code_linetable = 136, .code_firstlineno = 68, .code_flags = 48, .code_argcount = 52,
		.code_version = 92, .code_adaptive = 208, .code_nunits = 16,
		.bytes_size = 16, .bytes_sval = 32,
		.unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 40, .unicode_compact_data = 56,
		.unicode_kind_shift = 2, .unicode_compact_bit = 5, .unicode_ascii_bit = 6,
		.runtime_gil_locked = NO, .runtime_gil_holder = NO,
		.interp_ceval_gil = 16, .gil_locked = 16, .gil_holder = 8,
		.tstate_native_thread_id = 184, .interp_gc_collecting = 7400 + 112,
		.interp_modules = 7592, .type_flags = 168, .type_basicsize = 32, .type_dictoffset = 288,
		.heaptype_cached_keys = 888,
		.tstate_interp = 16, .tstate_exc_info = 144, .stackitem_exc_value = 0,
	},
};

static void set_version(struct tb_layout *l, uint32_t version_hex)
{
	l->version_hex = version_hex;
	l->major = (version_hex >> 24) & 0xff;
	l->minor = (version_hex >> 16) & 0xff;
	l->micro = (version_hex >> 8) & 0xff;
	l->bpf.py_version = version_hex;
}

int tb_layout_builtin(uint32_t version_hex, struct tb_layout *out)
{
	unsigned major = (version_hex >> 24) & 0xff, minor = (version_hex >> 16) & 0xff;

	if (major != 3)
		return -1;
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++) {
		if (builtin[i].minor != minor)
			continue;
		*out = builtin[i];
		set_version(out, version_hex);
		out->free_threaded = 0;
		return 0;
	}
	return -1;
}

/* ------------------------------------------------------------------------ */
/* _Py_DebugOffsets (3.13+). Positions (byte offsets inside _Py_DebugOffsets) */
/* of the fields used, one table per minor (reference §9). 0 = absent.        */

struct dbg_pos {
	unsigned minor;
	uint16_t total;                 /* sizeof(_Py_DebugOffsets) */
	uint16_t runtime_size, runtime_interp_head;
	uint16_t interp_size, interp_next, interp_threads_head, interp_gc, interp_ceval_gil,
		 interp_gil_state, interp_gil_locked, interp_gil_holder;
	uint16_t tstate_size, tstate_next, tstate_interp, tstate_current_frame, tstate_thread_id,
		 tstate_native_thread_id;
	uint16_t frame_size, frame_previous, frame_executable, frame_instr_ptr, frame_owner;
	uint16_t code_size, code_filename, code_name, code_qualname, code_linetable,
		 code_firstlineno, code_argcount, code_adaptive;
	uint16_t pyobject_size, pyobject_ob_type;
	uint16_t bytes_size, bytes_ob_size, bytes_ob_sval;
	uint16_t unicode_size, unicode_state, unicode_length, unicode_ascii_size,
		 unicode_compact_size;
	uint16_t gc_size, gc_collecting;
	uint16_t interp_imports_modules, type_size, type_flags; /* thread names (pythreads.c) */
	uint16_t type_basicsize, type_dictoffset, heaptype_size, heaptype_cached_keys; /* 3.15+ */
};

static const struct dbg_pos dbg_positions[] = {
	{
		.minor = 13, .total = 584,
		.runtime_size = 24, .runtime_interp_head = 40,
		.interp_size = 48, .interp_next = 64, .interp_threads_head = 72, .interp_gc = 80,
		.interp_ceval_gil = 112, .interp_gil_state = 120, .interp_gil_locked = 136,
		.interp_gil_holder = 144,
		.tstate_size = 152, .tstate_next = 168, .tstate_interp = 176, .tstate_current_frame = 184,
		.tstate_thread_id = 192, .tstate_native_thread_id = 200,
		.frame_size = 224, .frame_previous = 232, .frame_executable = 240,
		.frame_instr_ptr = 248, .frame_owner = 264,
		.code_size = 272, .code_filename = 280, .code_name = 288, .code_qualname = 296,
		.code_linetable = 304, .code_firstlineno = 312, .code_argcount = 320,
		.code_adaptive = 344,
		.pyobject_size = 352, .pyobject_ob_type = 360,
		.bytes_size = 512, .bytes_ob_size = 520, .bytes_ob_sval = 528,
		.unicode_size = 536, .unicode_state = 544, .unicode_length = 552,
		.unicode_ascii_size = 560, .unicode_compact_size = 0,
		.gc_size = 568, .gc_collecting = 576,
		.interp_imports_modules = 88, .type_size = 368, .type_flags = 392,
	},
	{
		.minor = 14, .total = 760,
		.runtime_size = 24, .runtime_interp_head = 40,
		.interp_size = 48, .interp_next = 64, .interp_threads_head = 72, .interp_gc = 88,
		.interp_ceval_gil = 120, .interp_gil_state = 128, .interp_gil_locked = 144,
		.interp_gil_holder = 152,
		.tstate_size = 176, .tstate_next = 192, .tstate_interp = 200, .tstate_current_frame = 208,
		.tstate_thread_id = 216, .tstate_native_thread_id = 224,
		.frame_size = 248, .frame_previous = 256, .frame_executable = 264,
		.frame_instr_ptr = 272, .frame_owner = 288,
		.code_size = 312, .code_filename = 320, .code_name = 328, .code_qualname = 336,
		.code_linetable = 344, .code_firstlineno = 352, .code_argcount = 360,
		.code_adaptive = 384,
		.pyobject_size = 400, .pyobject_ob_type = 408,
		.bytes_size = 592, .bytes_ob_size = 600, .bytes_ob_sval = 608,
		.unicode_size = 616, .unicode_state = 624, .unicode_length = 632,
		.unicode_ascii_size = 640, .unicode_compact_size = 0,
		.gc_size = 648, .gc_collecting = 656,
		.interp_imports_modules = 96, .type_size = 416, .type_flags = 440,
	},
	{
		.minor = 15, .total = 888,
		.runtime_size = 24, .runtime_interp_head = 40,
		.interp_size = 48, .interp_next = 64, .interp_threads_head = 72, .interp_gc = 88,
		.interp_ceval_gil = 120, .interp_gil_state = 128, .interp_gil_locked = 144,
		.interp_gil_holder = 152,
		.tstate_size = 176, .tstate_next = 192, .tstate_interp = 200, .tstate_current_frame = 208,
		.tstate_thread_id = 240, .tstate_native_thread_id = 248,
		.frame_size = 312, .frame_previous = 320, .frame_executable = 328,
		.frame_instr_ptr = 336, .frame_owner = 352,
		.code_size = 376, .code_filename = 384, .code_name = 392, .code_qualname = 400,
		.code_linetable = 408, .code_firstlineno = 416, .code_argcount = 424,
		.code_adaptive = 448,
		.pyobject_size = 464, .pyobject_ob_type = 472,
		.bytes_size = 688, .bytes_ob_size = 696, .bytes_ob_sval = 704,
		.unicode_size = 712, .unicode_state = 720, .unicode_length = 728,
		.unicode_ascii_size = 736, .unicode_compact_size = 744,
		.gc_size = 752, .gc_collecting = 760,
		.interp_imports_modules = 96, .type_size = 480, .type_flags = 504,
		.type_basicsize = 512, .type_dictoffset = 520, .heaptype_size = 528, .heaptype_cached_keys = 536,
	},
};

/* What the debug offsets do not describe, per minor (reference §4.2, §5, §10). */
struct dbg_knowledge {
	uint16_t tstate_exc_info; /* not in the debug offsets before 3.15's exc_state */
	unsigned minor;
	uint8_t owner_skip_min, owner_cstack, code_tag_mask;
	uint16_t code_flags, code_version; /* default build; +16 in free-threaded builds */
	int free_threaded_ok;              /* 3.14t/3.15t: per-thread bytecode, not walked yet */
	/* default build, when the debug offsets do not list them (before 3.15) */
	uint16_t type_basicsize, type_dictoffset, heaptype_cached_keys;
};

static const struct dbg_knowledge dbg_knowledge[] = {
	{ .minor = 13, .tstate_exc_info = 120, .owner_skip_min = 3, .owner_cstack = 3, .code_tag_mask = 0,
	  .code_flags = 48, .code_version = 92, .free_threaded_ok = 1,
	  .type_basicsize = 32, .type_dictoffset = 288, .heaptype_cached_keys = 880 },
	{ .minor = 14, .tstate_exc_info = 120, .owner_skip_min = 3, .owner_cstack = 4, .code_tag_mask = 3,
	  .code_flags = 48, .code_version = 92, .free_threaded_ok = 0,
	  .type_basicsize = 32, .type_dictoffset = 288, .heaptype_cached_keys = 880 },
	{ .minor = 15, .tstate_exc_info = 144, .owner_skip_min = 3, .owner_cstack = NO8, .code_tag_mask = 3,
	  .code_flags = 48, .code_version = 92, .free_threaded_ok = 0,
	  .type_basicsize = 32, .type_dictoffset = 288, .heaptype_cached_keys = 888 },
};

static const struct dbg_pos *dbg_pos_for(unsigned minor)
{
	for (size_t i = 0; i < sizeof(dbg_positions) / sizeof(dbg_positions[0]); i++)
		if (dbg_positions[i].minor == minor)
			return &dbg_positions[i];
	return NULL;
}

size_t tb_debug_offsets_size(unsigned minor)
{
	const struct dbg_pos *p = dbg_pos_for(minor);

	return p ? p->total : 0;
}

static uint64_t get_u64(const unsigned char *buf, uint16_t pos)
{
	uint64_t v;

	memcpy(&v, buf + pos, sizeof(v));
	return v;
}

/* Reader state: the buffer, and the first error (later ones are dropped). */
struct dbg_reader {
	const unsigned char *buf;
	char *err;
	size_t errlen;
	int failed;
};

static void fail(struct dbg_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct dbg_reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return;
	r->failed = 1;
	if (r->err && r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errlen, fmt, ap);
		va_end(ap);
	}
}

/* A struct size: 0 < v <= max. */
static uint64_t rd_size(struct dbg_reader *r, uint16_t pos, const char *name, uint64_t max)
{
	uint64_t v = get_u64(r->buf, pos);

	if (v == 0 || v > max) {
		fail(r, "_Py_DebugOffsets field %s = %llu is out of range (must be 1..%llu).",
		     name, (unsigned long long)v, (unsigned long long)max);
		return 0;
	}
	return v;
}

/* A field offset: a field of width bytes that lies inside a struct of
 * struct_size bytes, below TB_NO_OFFSET, and aligned to align. */
static uint16_t rd_off(struct dbg_reader *r, uint16_t pos, const char *name, unsigned width,
		       uint64_t struct_size, unsigned align)
{
	uint64_t v = get_u64(r->buf, pos);
	uint64_t limit = struct_size < TB_NO_OFFSET ? struct_size : TB_NO_OFFSET;

	if (r->failed)
		return NO;
	if (v >= TB_NO_OFFSET || v + width > TB_NO_OFFSET) {
		fail(r, "_Py_DebugOffsets field %s = %llu is out of range (it must fit a 16-bit offset).",
		     name, (unsigned long long)v);
		return NO;
	}
	if (v + width > limit) {
		fail(r, "_Py_DebugOffsets field %s = %llu is out of range (it must lie within its %llu-byte struct).",
		     name, (unsigned long long)v, (unsigned long long)struct_size);
		return NO;
	}
	if (align > 1 && v % align) {
		fail(r, "_Py_DebugOffsets field %s = %llu is not %u-byte aligned.",
		     name, (unsigned long long)v, align);
		return NO;
	}
	return (uint16_t)v;
}

/* Largest plausible sizes; anything bigger means the buffer is not what we think. */
#define MAX_RUNTIME_SIZE  (16u << 20)
#define MAX_INTERP_SIZE   (16u << 20)
#define MAX_TSTATE_SIZE   65535u
#define MAX_OBJ_SIZE      4096u     /* frame, code, object, bytes, str headers */
#define MAX_GC_SIZE       65535u
#define MAX_GIL_STRUCT    4096u     /* struct _gil_runtime_state */

/* An optional field (thread names): a width-aligned field inside a struct of struct_size
 * bytes, at least at min. TB_NO_OFFSET when absent (pos 0), zero or out of range: a bad
 * value disables thread names only, it does not reject the layout. */
static uint16_t opt_off(const unsigned char *buf, uint16_t pos, uint64_t struct_size, unsigned width,
			uint64_t min)
{
	uint64_t v;

	if (!pos)
		return NO;
	v = get_u64(buf, pos);
	if (v == 0 || v < min || v % width || v + width > struct_size || v + width > NO)
		return NO;
	return (uint16_t)v;
}

/* sys.modules and the type fields that locate instance attributes. 3.13/3.14 list
 * neither tp_basicsize/tp_dictoffset nor ht_cached_keys: default-build values then. */
static void thread_name_fields(struct tb_layout *l, const unsigned char *buf, const struct dbg_pos *p,
			       const struct dbg_knowledge *k, uint64_t interp_size)
{
	uint64_t type_size = get_u64(buf, p->type_size);
	uint64_t heap_size = p->heaptype_size ? get_u64(buf, p->heaptype_size) : 0;

	if (type_size > MAX_OBJ_SIZE)
		type_size = 0;
	if (heap_size > MAX_OBJ_SIZE)
		heap_size = 0;
	l->interp_modules = opt_off(buf, p->interp_imports_modules, interp_size, 8, 0);
	l->type_flags = opt_off(buf, p->type_flags, type_size, 8, 0);
	l->type_basicsize = l->type_dictoffset = l->heaptype_cached_keys = NO;
	if (p->type_basicsize) {
		l->type_basicsize = opt_off(buf, p->type_basicsize, type_size, 8, 0);
		l->type_dictoffset = opt_off(buf, p->type_dictoffset, type_size, 8, 0);
		/* ht_cached_keys follows the PyTypeObject that a heap type starts with */
		l->heaptype_cached_keys = opt_off(buf, p->heaptype_cached_keys, heap_size, 8, type_size);
	} else if (!l->free_threaded) {
		l->type_basicsize = k->type_basicsize;
		l->type_dictoffset = k->type_dictoffset;
		l->heaptype_cached_keys = k->heaptype_cached_keys;
	}
}

int tb_layout_from_debug_offsets(const unsigned char *buf, size_t len, struct tb_layout *out,
				 char *err, size_t errlen)
{
	struct dbg_reader r = { .buf = buf, .err = err, .errlen = errlen, .failed = 0 };
	const struct dbg_pos *p;
	const struct dbg_knowledge *k = NULL;
	struct tb_layout l;
	uint64_t version, ft;
	unsigned major, minor, level;

	if (err && errlen)
		err[0] = '\0';
	if (!buf || len < 24) {
		fail(&r, "_Py_DebugOffsets buffer is truncated (%zu bytes, need at least 24 for the header).", len);
		return -1;
	}
	if (memcmp(buf, "xdebugpy", 8) != 0) {
		fail(&r, "no \"xdebugpy\" cookie at _PyRuntime+0 (not CPython 3.13+, or a wrong _PyRuntime address).");
		return -1;
	}
	version = get_u64(buf, 8);
	ft = get_u64(buf, 16);
	major = (version >> 24) & 0xff;
	minor = (version >> 16) & 0xff;
	level = (version >> 4) & 0xf;
	if (version >> 32 || major != 3) {
		fail(&r, "_Py_DebugOffsets version 0x%llx is not a CPython 3.x version.",
		     (unsigned long long)version);
		return -1;
	}
	p = dbg_pos_for(minor);
	for (size_t i = 0; i < sizeof(dbg_knowledge) / sizeof(dbg_knowledge[0]); i++)
		if (dbg_knowledge[i].minor == minor)
			k = &dbg_knowledge[i];
	if (!p || !k) {
		if (minor < 13)
			fail(&r, "_Py_DebugOffsets claims Python 3.%u, which has no debug offsets (corrupt or wrong address).", minor);
		else
			fail(&r, "Python 3.%u is not supported: its _Py_DebugOffsets layout is unknown (known: 3.13, 3.14, 3.15).", minor);
		return -1;
	}
	if (level < 0xb) {
		fail(&r, "pre-release Python 3.%u.%u (alpha) is not supported: its _Py_DebugOffsets layout may differ from the release.",
		     minor, (unsigned)((version >> 8) & 0xff));
		return -1;
	}
	if (len < p->total) {
		fail(&r, "_Py_DebugOffsets buffer is truncated (%zu bytes, Python 3.%u needs %u).", len, minor, p->total);
		return -1;
	}
	if (ft > 1) {
		fail(&r, "_Py_DebugOffsets free_threaded = %llu is neither 0 nor 1.", (unsigned long long)ft);
		return -1;
	}
	if (ft && !k->free_threaded_ok) {
		fail(&r, "free-threaded 3.%ut is not supported yet (per-thread bytecode is not walked).", minor);
		return -1;
	}

	memset(&l, 0, sizeof(l));
	set_version(&l, (uint32_t)version);
	l.free_threaded = (int)ft;

	/* Struct sizes first: every field offset is checked against its struct. */
	uint64_t runtime_size = rd_size(&r, p->runtime_size, "runtime_state.size", MAX_RUNTIME_SIZE);
	uint64_t interp_size = rd_size(&r, p->interp_size, "interpreter_state.size", MAX_INTERP_SIZE);
	uint64_t tstate_size = rd_size(&r, p->tstate_size, "thread_state.size", MAX_TSTATE_SIZE);
	uint64_t frame_size = rd_size(&r, p->frame_size, "interpreter_frame.size", MAX_OBJ_SIZE);
	uint64_t code_size = rd_size(&r, p->code_size, "code_object.size", MAX_OBJ_SIZE);
	uint64_t obj_size = rd_size(&r, p->pyobject_size, "pyobject.size", MAX_OBJ_SIZE);
	uint64_t bytes_size = rd_size(&r, p->bytes_size, "bytes_object.size", MAX_OBJ_SIZE);
	uint64_t str_size = rd_size(&r, p->unicode_size, "unicode_object.size", MAX_OBJ_SIZE);
	uint64_t gc_size = rd_size(&r, p->gc_size, "gc.size", MAX_GC_SIZE);
	if (r.failed)
		return -1;

	struct tb_py_offsets *b = &l.bpf;
	b->runtime_interp_head = rd_off(&r, p->runtime_interp_head, "runtime_state.interpreters_head", 8, runtime_size, 8);
	b->interp_threads_head = rd_off(&r, p->interp_threads_head, "interpreter_state.threads_head", 8, interp_size, 8);
	b->interp_next = rd_off(&r, p->interp_next, "interpreter_state.next", 8, interp_size, 8);
	b->tstate_next = rd_off(&r, p->tstate_next, "thread_state.next", 8, tstate_size, 8);
	b->tstate_thread_id = rd_off(&r, p->tstate_thread_id, "thread_state.thread_id", 8, tstate_size, 8);
	b->tstate_frame = rd_off(&r, p->tstate_current_frame, "thread_state.current_frame", 8, tstate_size, 8);
	b->cframe_current_frame = NO;
	b->frame_code = rd_off(&r, p->frame_executable, "interpreter_frame.executable", 8, frame_size, 8);
	b->frame_previous = rd_off(&r, p->frame_previous, "interpreter_frame.previous", 8, frame_size, 8);
	b->frame_instr = rd_off(&r, p->frame_instr_ptr, "interpreter_frame.instr_ptr", 8, frame_size, 8);
	b->frame_owner = rd_off(&r, p->frame_owner, "interpreter_frame.owner", 1, frame_size, 1);
	/* co_code_adaptive is the trailing bytecode array: at least one code unit inside sizeof. */
	b->code_adaptive = rd_off(&r, p->code_adaptive, "code_object.co_code_adaptive", 2, code_size, 2);
	b->bytes_sval = rd_off(&r, p->bytes_ob_sval, "bytes_object.ob_sval", 1, bytes_size, 1);
	b->code_firstlineno = rd_off(&r, p->code_firstlineno, "code_object.firstlineno", 4, code_size, 4);
	b->code_argcount = rd_off(&r, p->code_argcount, "code_object.argcount", 4, code_size, 4);
	b->object_type = rd_off(&r, p->pyobject_ob_type, "pyobject.ob_type", 8, obj_size, 8);
	b->frame_kind = TB_FRAME_INTERP;
	b->owner_skip_min = k->owner_skip_min;
	b->owner_cstack = k->owner_cstack;
	b->code_tag_mask = k->code_tag_mask;

	l.code_filename = rd_off(&r, p->code_filename, "code_object.filename", 8, code_size, 8);
	l.code_name = rd_off(&r, p->code_name, "code_object.name", 8, code_size, 8);
	l.code_qualname = rd_off(&r, p->code_qualname, "code_object.qualname", 8, code_size, 8);
	l.code_linetable = rd_off(&r, p->code_linetable, "code_object.linetable", 8, code_size, 8);
	l.code_firstlineno = b->code_firstlineno;
	l.code_argcount = b->code_argcount;
	l.code_adaptive = b->code_adaptive;
	/* The code object's ob_size is the PyVarObject one, as in bytes. */
	l.bytes_size = rd_off(&r, p->bytes_ob_size, "bytes_object.ob_size", 8, bytes_size, 8);
	l.code_nunits = l.bytes_size;
	l.bytes_sval = b->bytes_sval;
	l.unicode_length = rd_off(&r, p->unicode_length, "unicode_object.length", 8, str_size, 8);
	l.unicode_state = rd_off(&r, p->unicode_state, "unicode_object.state", 4, str_size, 4);
	/* sizeof(PyASCIIObject) <= sizeof(PyUnicodeObject) */
	l.unicode_ascii_data = rd_off(&r, p->unicode_ascii_size, "unicode_object.asciiobject_size", 0, str_size, 8);
	if (p->unicode_compact_size)
		l.unicode_compact_data = rd_off(&r, p->unicode_compact_size,
						"unicode_object.compactunicodeobject_size", 0, str_size, 8);
	else if (!r.failed)
		/* PyCompactUnicodeObject = PyASCIIObject + utf8_length + utf8 (3.12+). */
		l.unicode_compact_data = l.unicode_ascii_data + 16;
	/* state bits: interned 0-1, kind 2-4, compact 5, ascii 6 (3.12-3.15 default, 3.13t). */
	l.unicode_kind_shift = 2;
	l.unicode_compact_bit = 5;
	l.unicode_ascii_bit = 6;
	if (r.failed)
		return -1;

	/* Structural invariants, so readers can size header reads from these numbers:
	 * PyVarObject.ob_size follows the PyObject header, which every code object starts
	 * with; str length/state lie in PyASCIIObject, which PyCompactUnicodeObject extends. */
	if (l.bytes_size != obj_size || obj_size > code_size || l.bytes_size + 8u > l.bytes_sval ||
	    l.code_nunits + 8u > b->code_adaptive) {
		fail(&r, "_Py_DebugOffsets object header fields are inconsistent (pyobject.size %llu, bytes ob_size %u, ob_sval %u).",
		     (unsigned long long)obj_size, l.bytes_size, l.bytes_sval);
		return -1;
	}
	if (l.unicode_length + 8u > l.unicode_ascii_data || l.unicode_state + 4u > l.unicode_ascii_data ||
	    l.unicode_ascii_data > l.unicode_compact_data || l.unicode_compact_data > str_size) {
		fail(&r, "_Py_DebugOffsets str fields are inconsistent (length %u, state %u, ascii size %u, compact size %u).",
		     l.unicode_length, l.unicode_state, l.unicode_ascii_data, l.unicode_compact_data);
		return -1;
	}

	/* Fields the debug offsets do not list: fixed relative to the object header. */
	unsigned shift = b->object_type - 8; /* 0, or 16 with the free-threaded header */
	if (shift != (ft ? 16u : 0u)) {
		fail(&r, "_Py_DebugOffsets pyobject.ob_type = %u does not match free_threaded = %llu.",
		     b->object_type, (unsigned long long)ft);
		return -1;
	}
	l.code_flags = (uint16_t)(k->code_flags + shift);
	l.code_version = (uint16_t)(k->code_version + shift);
	b->code_version = l.code_version;
	if (l.code_version + 4u > code_size || l.code_version + 4u > b->code_adaptive) {
		fail(&r, "_Py_DebugOffsets code_object.size = %llu is too small for co_version at %u.",
		     (unsigned long long)code_size, l.code_version);
		return -1;
	}
	l.code_size = (uint16_t)code_size;

	/* GIL: the interpreter's own _gil, given as absolute offsets in PyInterpreterState. */
	l.runtime_gil_locked = NO;
	l.runtime_gil_holder = NO;
	l.interp_ceval_gil = rd_off(&r, p->interp_ceval_gil, "interpreter_state.ceval_gil", 8, interp_size, 8);
	{
		uint64_t gs = get_u64(buf, p->interp_gil_state);
		uint64_t lk = get_u64(buf, p->interp_gil_locked);
		uint64_t hd = get_u64(buf, p->interp_gil_holder);

		if (!r.failed && (gs >= interp_size || lk < gs || hd < gs ||
				  lk - gs + 4 > MAX_GIL_STRUCT || hd - gs + 8 > MAX_GIL_STRUCT ||
				  lk + 4 > interp_size || hd + 8 > interp_size || (hd - gs) % 8 || (lk - gs) % 4))
			fail(&r, "_Py_DebugOffsets GIL fields (gil_runtime_state %llu, locked %llu, holder %llu) are inconsistent.",
			     (unsigned long long)gs, (unsigned long long)lk, (unsigned long long)hd);
		l.gil_locked = r.failed ? NO : (uint16_t)(lk - gs);
		l.gil_holder = r.failed ? NO : (uint16_t)(hd - gs);
	}
	l.tstate_native_thread_id = rd_off(&r, p->tstate_native_thread_id, "thread_state.native_thread_id", 8,
					   tstate_size, 8);
	{
		uint16_t gc = rd_off(&r, p->interp_gc, "interpreter_state.gc", 8, interp_size, 8);
		uint16_t coll = rd_off(&r, p->gc_collecting, "gc.collecting", 4, gc_size, 4);

		if (!r.failed && ((uint64_t)gc + coll + 4 > interp_size || (uint64_t)gc + coll >= TB_NO_OFFSET))
			fail(&r, "_Py_DebugOffsets interpreter_state.gc + gc.collecting = %u is out of range.",
			     gc + coll);
		l.interp_gc_collecting = r.failed ? NO : (uint16_t)(gc + coll);
	}
	l.tstate_interp = rd_off(&r, p->tstate_interp, "thread_state.interp", 8, tstate_size, 8);
	l.tstate_exc_info = k->tstate_exc_info;
	l.stackitem_exc_value = 0;
	if (r.failed)
		return -1;
	thread_name_fields(&l, buf, p, k, interp_size);
	*out = l;
	return 0;
}

const char *tb_layout_version_str(const struct tb_layout *l, char *buf, size_t len)
{
	unsigned level = (l->version_hex >> 4) & 0xf, serial = l->version_hex & 0xf;
	/* level 0 (unknown, e.g. a 3.10 version guessed from a file name) prints no suffix */
	const char *lv = level == 0xa ? "a" : level == 0xb ? "b" : level == 0xc ? "rc" : "";
	char pre[8] = "";

	if (!buf || !len)
		return buf;
	if (*lv)
		snprintf(pre, sizeof(pre), "%s%u", lv, serial);
	snprintf(buf, len, "%u.%u.%u%s%s", l->major, l->minor, l->micro, pre, l->free_threaded ? "t" : "");
	return buf;
}
