/* layout.c: CPython interpreter layouts as data (see layout.h): the built-in layout of
 * each version (its row in versions.c), and a defensive reader of the target's
 * _Py_DebugOffsets (3.13+). Sources of every number: docs/cpython-layouts.md.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cpython/layout.h"
#include "cpython/versions.h"

#define NO TB_NO_OFFSET

static void set_version(struct tb_layout *l, uint32_t version_hex)
{
	l->version_hex = version_hex;
	l->major = (version_hex >> 24) & 0xff;
	l->minor = (version_hex >> 16) & 0xff;
	l->micro = (version_hex >> 8) & 0xff;
	l->bpf.py_version = version_hex;
}

/* The user-space copies of the fields the BPF walk reads too. */
static void copy_bpf_fields(struct tb_layout *l)
{
	l->code_firstlineno = l->bpf.code_firstlineno;
	l->code_argcount = l->bpf.code_argcount;
	l->code_version = l->bpf.code_version;
	l->code_adaptive = l->bpf.code_adaptive;
	l->bytes_sval = l->bpf.bytes_sval;
	/* and the other way: the tables give co_flags to the agent (flags of a code read) */
	l->bpf.code_flags = l->code_flags;
}

int tb_layout_builtin(uint32_t version_hex, struct tb_layout *out)
{
	unsigned major = (version_hex >> 24) & 0xff, minor = (version_hex >> 16) & 0xff;
	const struct tb_pyversion *v = tb_pyversion(minor);

	if (major != 3 || !v)
		return -1;
	*out = *v->layout;
	copy_bpf_fields(out);
	set_version(out, version_hex);
	out->free_threaded = 0;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The fixed read buffers and the fields read from each (layout.h).             */

/* What a reader can hold of each buffer. The BPF program's read sizes are a __u8
 * masked with BUF - 1 (bpf/tachyon.bpf.c), walk.c reads into BUF-byte arrays. */
static const struct {
	unsigned limit;
	const char *what;
} read_bufs[TB_READ_NBUFS] = {
	[TB_READ_TSTATE] = { TB_TSTATE_BUF - 1, "a thread state" },
	[TB_READ_FRAME] = { TB_FRAME_BUF - 1, "a frame" },
	[TB_READ_CODE_HEAD] = { TB_CODE_BUF - 1, "a code object's header" },
	[TB_READ_CODE] = { TB_CODE_READ_MAX, "a code object" },
	[TB_READ_STR] = { TB_STR_HEAD_MAX, "a str header" },
	/* gbuf holds 64 bytes, its offsets are masked with 31 */
	[TB_READ_GIL] = { 32, "the GIL state" },
};

#define ANY_FRAME 0xff
#define AT(field) (uint16_t)offsetof(struct tb_layout, field)

/* Every field read out of a buffer, with its width: one row per (buffer, field). */
static const struct read_field {
	uint8_t buf;            /* enum tb_read_buf */
	uint8_t width;
	uint8_t frame_kind;     /* read only with this TB_FRAME_*, or ANY_FRAME */
	uint16_t at;            /* offsetof the uint16_t offset in struct tb_layout */
	const char *name;
} read_fields[] = {
	{ TB_READ_TSTATE, 8, ANY_FRAME, AT(bpf.tstate_thread_id), "thread_state.thread_id" },
	{ TB_READ_TSTATE, 8, ANY_FRAME, AT(bpf.tstate_frame), "thread_state.current_frame" },
	{ TB_READ_TSTATE, 8, ANY_FRAME, AT(bpf.tstate_next), "thread_state.next" },
	{ TB_READ_TSTATE, 8, ANY_FRAME, AT(tstate_interp), "thread_state.interp" },
	{ TB_READ_TSTATE, 8, ANY_FRAME, AT(tstate_exc_info), "thread_state.exc_info" },
	{ TB_READ_TSTATE, 8, ANY_FRAME, AT(tstate_native_thread_id), "thread_state.native_thread_id" },
	{ TB_READ_FRAME, 8, ANY_FRAME, AT(bpf.frame_code), "interpreter_frame.executable" },
	{ TB_READ_FRAME, 8, ANY_FRAME, AT(bpf.frame_previous), "interpreter_frame.previous" },
	{ TB_READ_FRAME, 8, ANY_FRAME, AT(bpf.frame_instr), "interpreter_frame.instr_ptr" },
	{ TB_READ_FRAME, 1, ANY_FRAME, AT(bpf.frame_owner), "interpreter_frame.owner" },
	{ TB_READ_FRAME, 4, ANY_FRAME, AT(bpf.frame_tlbc_index), "interpreter_frame.tlbc_index" },
	{ TB_READ_CODE_HEAD, 8, ANY_FRAME, AT(bpf.object_type), "pyobject.ob_type" },
	{ TB_READ_CODE_HEAD, 4, ANY_FRAME, AT(bpf.code_firstlineno), "code_object.firstlineno" },
	{ TB_READ_CODE_HEAD, 4, ANY_FRAME, AT(bpf.code_argcount), "code_object.argcount" },
	{ TB_READ_CODE_HEAD, 4, ANY_FRAME, AT(bpf.code_version), "code_object.co_version" },
	{ TB_READ_CODE_HEAD, 4, ANY_FRAME, AT(bpf.code_flags), "code_object.co_flags" },
	/* 3.10: co_code, the bytes object of the bytecode; 3.11+ the bytecode starts there */
	{ TB_READ_CODE_HEAD, 8, TB_FRAME_OBJECT, AT(bpf.code_adaptive), "code_object.co_code" },
	{ TB_READ_CODE, 8, ANY_FRAME, AT(bpf.object_type), "pyobject.ob_type" },
	{ TB_READ_CODE, 4, ANY_FRAME, AT(code_firstlineno), "code_object.firstlineno" },
	{ TB_READ_CODE, 4, ANY_FRAME, AT(code_argcount), "code_object.argcount" },
	{ TB_READ_CODE, 4, ANY_FRAME, AT(code_version), "code_object.co_version" },
	{ TB_READ_CODE, 8, ANY_FRAME, AT(code_filename), "code_object.filename" },
	{ TB_READ_CODE, 8, ANY_FRAME, AT(code_name), "code_object.name" },
	{ TB_READ_CODE, 8, ANY_FRAME, AT(code_qualname), "code_object.qualname" },
	{ TB_READ_CODE, 8, ANY_FRAME, AT(code_linetable), "code_object.linetable" },
	{ TB_READ_CODE, 8, ANY_FRAME, AT(code_nunits), "code_object.ob_size" },
	{ TB_READ_STR, 8, ANY_FRAME, AT(unicode_length), "unicode_object.length" },
	{ TB_READ_STR, 4, ANY_FRAME, AT(unicode_state), "unicode_object.state" },
	/* a legacy (not compact) str keeps its data pointer there */
	{ TB_READ_STR, 8, ANY_FRAME, AT(unicode_compact_data), "unicode_object.compactunicodeobject_size" },
	{ TB_READ_GIL, 4, ANY_FRAME, AT(gil_locked), "gil_runtime_state.locked" },
	{ TB_READ_GIL, 8, ANY_FRAME, AT(gil_holder), "gil_runtime_state.last_holder" },
	{ TB_READ_GIL, 4, ANY_FRAME, AT(gil_enabled), "gil_runtime_state.enabled" },
};

/* The offset a row names in l, or TB_NO_OFFSET when the row does not apply. */
static uint16_t field_offset(const struct tb_layout *l, const struct read_field *f)
{
	uint16_t v;

	if (f->frame_kind != ANY_FRAME && f->frame_kind != l->bpf.frame_kind)
		return NO;
	memcpy(&v, (const unsigned char *)l + f->at, sizeof(v));
	return v;
}

unsigned tb_layout_read_limit(enum tb_read_buf b)
{
	return (unsigned)b < TB_READ_NBUFS ? read_bufs[b].limit : 0;
}

unsigned tb_layout_read_size(const struct tb_layout *l, enum tb_read_buf b)
{
	unsigned span = 0, limit = tb_layout_read_limit(b);

	for (size_t i = 0; i < sizeof(read_fields) / sizeof(read_fields[0]); i++) {
		const struct read_field *f = &read_fields[i];
		uint16_t off = f->buf == b ? field_offset(l, f) : NO;

		if (off != NO && off + f->width > span)
			span = off + f->width;
	}
	return span <= limit ? span : 0;
}

int tb_layout_check_reads(const struct tb_layout *l, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(read_fields) / sizeof(read_fields[0]); i++) {
		const struct read_field *f = &read_fields[i];
		uint16_t off = field_offset(l, f);

		if (off == NO || off + f->width <= read_bufs[f->buf].limit)
			continue;
		if (err && errlen)
			snprintf(err, errlen, "field %s at offset %u (%u bytes) lies beyond the %u bytes of %s that are read.",
				 f->name, off, f->width, read_bufs[f->buf].limit, read_bufs[f->buf].what);
		return -1;
	}
	if (err && errlen)
		err[0] = '\0';
	return 0;
}

/* ------------------------------------------------------------------------ */
/* _Py_DebugOffsets (3.13+). Where each field sits in it: the version's row     */
/* (versions.c); what it does not list: the row's default-build layout.         */

static const struct tb_debug_positions *dbg_pos_for(unsigned minor)
{
	const struct tb_pyversion *v = tb_pyversion(minor);

	return v ? v->debug : NULL;
}

/* "3.13, 3.14, 3.15" into buf: the minors with known debug offsets; returns the oldest. */
static unsigned debug_minors(char *buf, size_t len)
{
	unsigned first = 0;
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned m = TB_PY_MIN_MINOR; m <= TB_PY_MAX_MINOR; m++) {
		if (!dbg_pos_for(m))
			continue;
		if (!first)
			first = m;
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s3.%u", n ? ", " : "", m);
	}
	return first;
}

size_t tb_debug_offsets_size(unsigned minor)
{
	const struct tb_debug_positions *p = dbg_pos_for(minor);

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
 * neither tp_basicsize/tp_dictoffset nor ht_cached_keys: default-build values (def) then,
 * moved by shift (the free-threaded object header's 16 more bytes: a type object is one). */
static void thread_name_fields(struct tb_layout *l, const unsigned char *buf,
			       const struct tb_debug_positions *p, const struct tb_layout *def,
			       uint64_t interp_size, unsigned shift)
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
	} else {
		l->type_basicsize = (uint16_t)(def->type_basicsize + shift);
		l->type_dictoffset = (uint16_t)(def->type_dictoffset + shift);
		l->heaptype_cached_keys = (uint16_t)(def->heaptype_cached_keys + shift);
	}
}

int tb_layout_from_debug_offsets(const unsigned char *buf, size_t len, struct tb_layout *out,
				 char *err, size_t errlen)
{
	struct dbg_reader r = { .buf = buf, .err = err, .errlen = errlen, .failed = 0 };
	const struct tb_debug_positions *p;
	struct tb_layout l, def;  /* def: the default build's, for what the debug offsets lack */
	const struct tb_ft_facts *fts;  /* the free-threaded build's, NULL for a default one */
	uint64_t version, ft;
	unsigned major, minor, level;
	char known[64];

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
	if (!p || tb_layout_builtin((uint32_t)version, &def)) {
		if (minor < debug_minors(known, sizeof(known)))
			fail(&r, "_Py_DebugOffsets claims Python 3.%u, which has no debug offsets (corrupt or wrong address).", minor);
		else
			fail(&r, "Python 3.%u is not supported: its _Py_DebugOffsets layout is unknown (known: %s).",
			     minor, known);
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
	fts = ft ? tb_pyversion(minor)->ft : NULL;
	if (ft && !fts) {
		fail(&r, "free-threaded 3.%ut is not supported (what its build changes beyond _Py_DebugOffsets is unknown).",
		     minor);
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
	b->owner_skip_min = def.bpf.owner_skip_min;
	b->owner_cstack = def.bpf.owner_cstack;
	b->owner_entry = def.bpf.owner_entry;
	b->frame_is_entry = def.bpf.frame_is_entry;
	b->code_tag_mask = fts ? fts->code_tag_mask : def.bpf.code_tag_mask;
	/* asyncio (cpython/asyncio.c): the default build's; a t build's are not known */
	b->tstate_running_task = fts ? 0 : def.bpf.tstate_running_task;
	b->task_coro = fts ? 0 : def.bpf.task_coro;

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
	/* state bits: interned 0-1, kind 2-4, compact 5, ascii 6 (3.12-3.15 default, 3.13t);
	 * 3.14t+: interned is a whole byte, the rest moves by 6 bits. */
	l.unicode_kind_shift = fts ? fts->unicode_kind_shift : def.unicode_kind_shift;
	l.unicode_compact_bit = fts ? fts->unicode_compact_bit : def.unicode_compact_bit;
	l.unicode_ascii_bit = fts ? fts->unicode_ascii_bit : def.unicode_ascii_bit;
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
	l.code_flags = (uint16_t)(def.code_flags + shift);
	b->code_flags = l.code_flags;
	l.code_version = (uint16_t)(def.code_version + shift);
	b->code_version = l.code_version;
	if (l.code_version + 4u > code_size || l.code_version + 4u > b->code_adaptive) {
		fail(&r, "_Py_DebugOffsets code_object.size = %llu is too small for co_version at %u.",
		     (unsigned long long)code_size, l.code_version);
		return -1;
	}
	l.code_size = (uint16_t)code_size;

	/* thread-local bytecode: the frame's copy is co_tlbc->entries[tlbc_index] */
	b->frame_tlbc_index = b->code_tlbc = NO;
	if (fts && fts->tlbc) {
		b->frame_tlbc_index = rd_off(&r, p->frame_tlbc_index, "interpreter_frame.tlbc_index", 4, frame_size, 4);
		b->code_tlbc = rd_off(&r, p->code_tlbc, "code_object.co_tlbc", 8, code_size, 8);
		/* 0 is what a build without them says (the struct's first field is another) */
		if (!b->frame_tlbc_index || !b->code_tlbc)
			fail(&r, "_Py_DebugOffsets of free-threaded 3.%ut lack interpreter_frame.tlbc_index or code_object.co_tlbc (thread-local bytecode).",
			     minor);
	}
	if (r.failed)
		return -1;

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
		/* free-threaded: `enabled` (an int), given inside the GIL struct, not the interpreter */
		l.gil_enabled = NO;
		if (ft && !r.failed) {
			uint64_t en = get_u64(buf, p->interp_gil_enabled);

			if (en % 4 || en + 4 > MAX_GIL_STRUCT || gs + en + 4 > interp_size ||
			    (en < l.gil_locked + 4u && l.gil_locked < en + 4) ||
			    (en < l.gil_holder + 8u && l.gil_holder < en + 4))
				fail(&r, "_Py_DebugOffsets gil_runtime_state_enabled = %llu is out of range or overlaps the GIL's other fields.",
				     (unsigned long long)en);
			else
				l.gil_enabled = (uint16_t)en;
		}
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
	l.tstate_exc_info = def.tstate_exc_info;
	l.stackitem_exc_value = 0;
	if (r.failed)
		return -1;
	thread_name_fields(&l, buf, p, &def, interp_size, shift);
	{
		char why[160];

		if (tb_layout_check_reads(&l, why, sizeof(why))) {
			fail(&r, "_Py_DebugOffsets %s", why);
			return -1;
		}
	}
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
