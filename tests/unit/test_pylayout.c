/* test_pylayout.c: cmocka tests of user/cpython/layout.c: built-in tables per minor, parsing of
 * synthetic _Py_DebugOffsets buffers laid out from the reference (cpython-layouts.md §9, values
 * of 3.13.18, 3.14.10, 3.15.2 and 3.13t), and rejection of bad or hostile buffers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpython/layout.h"

#define NO TB_NO_OFFSET

/* ---------------------------------------------------------------- builtin */

static struct tb_layout builtin(uint32_t hex)
{
	struct tb_layout l;

	memset(&l, 0xa5, sizeof(l));
	assert_int_equal(tb_layout_builtin(hex, &l), 0);
	assert_int_equal(l.version_hex, hex);
	assert_int_equal(l.bpf.py_version, hex);
	assert_int_equal(l.major, 3);
	assert_int_equal(l.minor, (hex >> 16) & 0xff);
	assert_int_equal(l.micro, (hex >> 8) & 0xff);
	assert_int_equal(l.free_threaded, 0);
	assert_int_equal(l.bpf.object_type, 8);
	assert_int_equal(l.bpf.tstate_next, 8);
	assert_int_equal(l.bytes_size, 16);
	assert_int_equal(l.bytes_sval, 32);
	assert_int_equal(l.bpf.bytes_sval, 32);
	assert_int_equal(l.unicode_length, 16);
	assert_int_equal(l.unicode_state, 32);
	assert_int_equal(l.unicode_kind_shift, 2);
	assert_int_equal(l.unicode_compact_bit, 5);
	assert_int_equal(l.unicode_ascii_bit, 6);
	/* the BPF copy and the user-space copy agree */
	assert_int_equal(l.bpf.code_firstlineno, l.code_firstlineno);
	assert_int_equal(l.bpf.code_argcount, l.code_argcount);
	assert_int_equal(l.bpf.code_version, l.code_version);
	assert_int_equal(l.bpf.code_adaptive, l.code_adaptive);
	return l;
}

static void test_builtin_310(void **state)
{
	(void)state;
	struct tb_layout l = builtin(0x030a0df0);

	assert_int_equal(l.bpf.frame_kind, TB_FRAME_OBJECT);
	assert_int_equal(l.bpf.runtime_interp_head, 32);
	assert_int_equal(l.bpf.interp_threads_head, 8);
	assert_int_equal(l.bpf.interp_next, 0);
	assert_int_equal(l.bpf.tstate_thread_id, 176);
	assert_int_equal(l.bpf.tstate_frame, 24);
	assert_int_equal(l.bpf.cframe_current_frame, NO);
	assert_int_equal(l.bpf.frame_code, 32);
	assert_int_equal(l.bpf.frame_previous, 24);
	assert_int_equal(l.bpf.frame_instr, 96);
	assert_int_equal(l.bpf.frame_owner, NO);
	assert_int_equal(l.bpf.code_adaptive, 48);
	assert_int_equal(l.bpf.code_version, NO);
	assert_int_equal(l.bpf.owner_skip_min, 0xff);
	assert_int_equal(l.bpf.owner_cstack, 0xff);
	assert_int_equal(l.bpf.code_tag_mask, 0);
	assert_int_equal(l.code_qualname, NO);
	assert_int_equal(l.code_nunits, NO);
	assert_int_equal(l.code_filename, 104);
	assert_int_equal(l.code_linetable, 120);
	assert_int_equal(l.unicode_ascii_data, 48);
	assert_int_equal(l.unicode_compact_data, 72);
	assert_int_equal(l.runtime_gil_locked, 368);
	assert_int_equal(l.runtime_gil_holder, 360);
	assert_int_equal(l.interp_ceval_gil, NO);
	assert_int_equal(l.tstate_native_thread_id, NO);
}

static void test_builtin_311(void **state)
{
	(void)state;
	struct tb_layout l = builtin(0x030b07f0);

	assert_int_equal(l.bpf.frame_kind, TB_FRAME_INTERP);
	assert_int_equal(l.bpf.runtime_interp_head, 40);
	assert_int_equal(l.bpf.interp_threads_head, 16);
	assert_int_equal(l.bpf.tstate_thread_id, 152);
	assert_int_equal(l.bpf.tstate_frame, 56);
	assert_int_equal(l.bpf.cframe_current_frame, 8);
	assert_int_equal(l.bpf.frame_code, 32);
	assert_int_equal(l.bpf.frame_previous, 48);
	assert_int_equal(l.bpf.frame_instr, 56);
	assert_int_equal(l.bpf.frame_owner, 69);
	assert_int_equal(l.bpf.owner_skip_min, 0xff);
	assert_int_equal(l.bpf.owner_cstack, 0xff);
	assert_int_equal(l.bpf.code_adaptive, 184);
	assert_int_equal(l.bpf.code_version, NO);
	assert_int_equal(l.code_qualname, 128);
	assert_int_equal(l.code_nunits, 16);
	assert_int_equal(l.runtime_gil_locked, 376);
	assert_int_equal(l.runtime_gil_holder, 368);
	assert_int_equal(l.tstate_native_thread_id, 160);
}

static void test_builtin_312(void **state)
{
	(void)state;
	struct tb_layout l = builtin(0x030c01f0);

	assert_int_equal(l.bpf.interp_threads_head, 72);
	assert_int_equal(l.bpf.tstate_thread_id, 136);
	assert_int_equal(l.bpf.tstate_frame, 56);
	assert_int_equal(l.bpf.cframe_current_frame, 0);
	assert_int_equal(l.bpf.frame_code, 0);
	assert_int_equal(l.bpf.frame_previous, 8);
	assert_int_equal(l.bpf.frame_owner, 70);
	assert_int_equal(l.bpf.owner_skip_min, 3);
	assert_int_equal(l.bpf.code_adaptive, 192);
	assert_int_equal(l.bpf.code_version, 92);
	assert_int_equal(l.unicode_ascii_data, 40);
	assert_int_equal(l.unicode_compact_data, 56);
	assert_int_equal(l.runtime_gil_locked, NO);
	assert_int_equal(l.interp_ceval_gil, 384);
	assert_int_equal(l.gil_locked, 16);
	assert_int_equal(l.gil_holder, 8);
	assert_int_equal(l.tstate_native_thread_id, 144);
}

static void test_builtin_313_314_315(void **state)
{
	(void)state;
	struct tb_layout a = builtin(0x030d12f0), b = builtin(0x030e0af0), c = builtin(0x030f02f0);

	assert_int_equal(a.bpf.runtime_interp_head, 632);
	assert_int_equal(b.bpf.runtime_interp_head, 808);
	assert_int_equal(c.bpf.runtime_interp_head, 936);
	assert_int_equal(a.bpf.tstate_frame, 72);
	assert_int_equal(a.bpf.cframe_current_frame, NO);
	assert_int_equal(a.bpf.frame_owner, 70);
	assert_int_equal(b.bpf.frame_owner, 74);
	assert_int_equal(c.bpf.frame_owner, 74);
	assert_int_equal(a.bpf.code_tag_mask, 0);
	assert_int_equal(b.bpf.code_tag_mask, 3);
	assert_int_equal(c.bpf.code_tag_mask, 3);
	assert_int_equal(a.bpf.owner_skip_min, 3);
	assert_int_equal(b.bpf.owner_skip_min, 3);
	assert_int_equal(c.bpf.owner_skip_min, 3);
	assert_int_equal(b.bpf.owner_cstack, 4);
	assert_int_equal(c.bpf.owner_cstack, 0xff);
	assert_int_equal(a.bpf.code_adaptive, 200);
	assert_int_equal(b.bpf.code_adaptive, 208);
	assert_int_equal(c.bpf.tstate_thread_id, 176);
	assert_int_equal(c.tstate_native_thread_id, 184);
	assert_int_equal(a.interp_gc_collecting, 7600);
	assert_int_equal(c.interp_gc_collecting, 7512);
	assert_int_equal(c.interp_ceval_gil, 16);
}

/* Thread-name fields (measured from the 3.10.13, 3.11.7, 3.12.1, 3.13.0, 3.14.10, 3.15.2 headers). */
static void test_builtin_thread_names(void **state)
{
	(void)state;
	static const struct { uint32_t hex; uint16_t modules, cached_keys; } want[] = {
		{ 0x030a0df0, 856, 872 }, { 0x030b07f0, 888, 872 }, { 0x030c01f0, 944, 880 },
		{ 0x030d00f0, 7656, 880 }, { 0x030e0af0, 7688, 880 }, { 0x030f02f0, 7592, 888 },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct tb_layout l = builtin(want[i].hex);

		assert_int_equal(l.interp_modules, want[i].modules);
		assert_int_equal(l.heaptype_cached_keys, want[i].cached_keys);
		assert_int_equal(l.type_flags, 168);
		assert_int_equal(l.type_basicsize, 32);
		assert_int_equal(l.type_dictoffset, 288);
	}
}

static void test_builtin_unsupported(void **state)
{
	(void)state;
	struct tb_layout l;
	uint32_t bad[] = { 0x030912f0, 0x03100000, 0x02070ff0, 0x040a0000, 0, 0xffffffff };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(tb_layout_builtin(bad[i], &l), -1);
}

static void test_debug_offsets_size(void **state)
{
	(void)state;
	assert_int_equal(tb_debug_offsets_size(13), 584);
	assert_int_equal(tb_debug_offsets_size(14), 760);
	assert_int_equal(tb_debug_offsets_size(15), 888);
	assert_int_equal(tb_debug_offsets_size(12), 0);
	assert_int_equal(tb_debug_offsets_size(10), 0);
	assert_int_equal(tb_debug_offsets_size(16), 0);
}

/* ------------------------------------------------- synthetic debug offsets */

/* Reference §9: position of each field in _Py_DebugOffsets (3.13, 3.14, 3.15; 0 = absent)
 * and its value (3.13.18, 3.14.10, 3.15.2 default builds, and 3.13t). Typed from the
 * reference independently of user/cpython/layout.c. */
struct row {
	const char *name;
	uint16_t pos[3];
	uint64_t val[3];
	uint64_t val13t;
};

static const struct row rows[] = {
	{ "runtime_state.size",                 {  24,  24,  24 }, { 283408, 316616, 346560 }, 328384 },
	{ "runtime_state.finalizing",           {  32,  32,  32 }, { 608, 784, 912 }, 608 },
	{ "runtime_state.interpreters_head",    {  40,  40,  40 }, { 632, 808, 936 }, 632 },
	{ "interpreter_state.size",             {  48,  48,  48 }, { 194984, 225864, 226232 }, 215616 },
	{ "interpreter_state.id",               {  56,  56,  56 }, { 7272, 7280, 7272 }, 7272 },
	{ "interpreter_state.next",             {  64,  64,  64 }, { 7264, 7272, 7264 }, 7264 },
	{ "interpreter_state.threads_head",     {  72,  72,  72 }, { 7344, 7344, 7336 }, 7344 },
	{ "interpreter_state.threads_main",     {   0,  80,  80 }, { 0, 7360, 7352 }, 0 },
	{ "interpreter_state.gc",               {  80,  88,  88 }, { 7400, 7408, 7400 }, 7400 },
	{ "interpreter_state.ceval_gil",        { 112, 120, 120 }, { 16, 16, 16 }, 16 },
	{ "interpreter_state.gil_runtime_state", { 120, 128, 128 }, { 7752, 7784, 7736 }, 7760 },
	{ "interpreter_state.gil_runtime_state_locked", { 136, 144, 144 }, { 7768, 7800, 7752 }, 7784 },
	{ "interpreter_state.gil_runtime_state_holder", { 144, 152, 152 }, { 7760, 7792, 7744 }, 7776 },
	{ "thread_state.size",                  { 152, 176, 176 }, { 312, 832, 888 }, 312 },
	{ "thread_state.prev",                  { 160, 184, 184 }, { 0, 0, 0 }, 0 },
	{ "thread_state.next",                  { 168, 192, 192 }, { 8, 8, 8 }, 8 },
	{ "thread_state.interp",                { 176, 200, 200 }, { 16, 16, 16 }, 16 },
	{ "thread_state.current_frame",         { 184, 208, 208 }, { 72, 72, 72 }, 72 },
	{ "thread_state.base_frame",            {   0,   0, 216 }, { 0, 0, 80 }, 0 },
	{ "thread_state.thread_id",             { 192, 216, 240 }, { 152, 152, 176 }, 152 },
	{ "thread_state.native_thread_id",      { 200, 224, 248 }, { 160, 160, 184 }, 160 },
	{ "thread_state.datastack_chunk",       { 208, 232, 256 }, { 232, 232, 256 }, 232 },
	{ "thread_state.status",                { 216, 240, 264 }, { 32, 32, 32 }, 32 },
	{ "interpreter_frame.size",             { 224, 248, 312 }, { 80, 88, 88 }, 80 },
	{ "interpreter_frame.previous",         { 232, 256, 320 }, { 8, 8, 8 }, 8 },
	{ "interpreter_frame.executable",       { 240, 264, 328 }, { 0, 0, 0 }, 0 },
	{ "interpreter_frame.instr_ptr",        { 248, 272, 336 }, { 56, 56, 56 }, 56 },
	{ "interpreter_frame.localsplus",       { 256, 280, 344 }, { 72, 80, 80 }, 72 },
	{ "interpreter_frame.owner",            { 264, 288, 352 }, { 70, 74, 74 }, 70 },
	{ "interpreter_frame.stackpointer",     {   0, 296, 360 }, { 0, 64, 64 }, 0 },
	{ "code_object.size",                   { 272, 312, 376 }, { 208, 216, 216 }, 224 },
	{ "code_object.filename",               { 280, 320, 384 }, { 112, 112, 112 }, 128 },
	{ "code_object.name",                   { 288, 328, 392 }, { 120, 120, 120 }, 136 },
	{ "code_object.qualname",               { 296, 336, 400 }, { 128, 128, 128 }, 144 },
	{ "code_object.linetable",              { 304, 344, 408 }, { 136, 136, 136 }, 152 },
	{ "code_object.firstlineno",            { 312, 352, 416 }, { 68, 68, 68 }, 84 },
	{ "code_object.argcount",               { 320, 360, 424 }, { 52, 52, 52 }, 68 },
	{ "code_object.co_code_adaptive",       { 344, 384, 448 }, { 200, 208, 208 }, 216 },
	{ "pyobject.size",                      { 352, 400, 464 }, { 16, 16, 16 }, 32 },
	{ "pyobject.ob_type",                   { 360, 408, 472 }, { 8, 8, 8 }, 24 },
	{ "type_object.size",                   { 368, 416, 480 }, { 416, 416, 424 }, 432 },
	{ "bytes_object.size",                  { 512, 592, 688 }, { 40, 40, 40 }, 56 },
	{ "bytes_object.ob_size",               { 520, 600, 696 }, { 16, 16, 16 }, 32 },
	{ "bytes_object.ob_sval",               { 528, 608, 704 }, { 32, 32, 32 }, 48 },
	{ "unicode_object.size",                { 536, 616, 712 }, { 64, 64, 64 }, 80 },
	{ "unicode_object.state",               { 544, 624, 720 }, { 32, 32, 32 }, 48 },
	{ "unicode_object.length",              { 552, 632, 728 }, { 16, 16, 16 }, 32 },
	{ "unicode_object.asciiobject_size",    { 560, 640, 736 }, { 40, 40, 40 }, 56 },
	{ "unicode_object.compactunicodeobject_size", { 0, 0, 744 }, { 0, 0, 56 }, 0 },
	{ "gc.size",                            { 568, 648, 752 }, { 240, 264, 176 }, 248 },
	{ "gc.collecting",                      { 576, 656, 760 }, { 200, 192, 112 }, 200 },
	{ "debugger_support.debugger_script_path_size", { 0, 752, 880 }, { 0, 512, 512 }, 0 },
	{ "interpreter_state.imports_modules",  {  88,  96,  96 }, { 7656, 7688, 7592 }, 7664 },
	{ "type_object.tp_flags",               { 392, 440, 504 }, { 168, 168, 168 }, 184 },
	{ "type_object.tp_basicsize",           {   0,   0, 512 }, { 0, 0, 32 }, 0 },
	{ "type_object.tp_dictoffset",          {   0,   0, 520 }, { 0, 0, 288 }, 0 },
	{ "heap_type_object.size",              {   0,   0, 528 }, { 0, 0, 944 }, 0 },
	{ "heap_type_object.ht_cached_keys",    {   0,   0, 536 }, { 0, 0, 888 }, 0 },
};

static const size_t total[3] = { 584, 760, 888 };
static const uint64_t versions[3] = { 0x030d12f0, 0x030e0af0, 0x030f02f0 };

static unsigned char buf[1024];

static void put(size_t pos, uint64_t v)
{
	memcpy(buf + pos, &v, sizeof(v));
}

static const struct row *row(const char *name)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	fail_msg("no row %s", name);
	return NULL;
}

/* Fill buf for minor 13/14/15 (ft: the 3.13t values); returns the buffer length. */
static size_t build(unsigned minor, int ft)
{
	unsigned i = minor - 13;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, "xdebugpy", 8);
	put(8, versions[i]);
	put(16, (uint64_t)ft);
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
		if (rows[r].pos[i])
			put(rows[r].pos[i], ft ? rows[r].val13t : rows[r].val[i]);
	return total[i];
}

static void set(unsigned minor, const char *name, uint64_t v)
{
	put(row(name)->pos[minor - 13], v);
}

static struct tb_layout parse_ok(size_t len)
{
	struct tb_layout l;
	char err[256] = "unset";

	memset(&l, 0x5a, sizeof(l));
	if (tb_layout_from_debug_offsets(buf, len, &l, err, sizeof(err)) != 0)
		fail_msg("parse failed: %s", err);
	assert_string_equal(err, "");
	return l;
}

/* The parse must fail with a one-sentence message containing want. */
static void parse_bad(size_t len, const char *want)
{
	struct tb_layout l, orig;
	char err[256] = "";

	memset(&l, 0x5a, sizeof(l));
	orig = l;
	assert_int_equal(tb_layout_from_debug_offsets(buf, len, &l, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not mention \"%s\"", err, want);
	assert_true(strlen(err) > 20);
	assert_int_equal(err[strlen(err) - 1], '.');
	assert_memory_equal(&l, &orig, sizeof(l)); /* *out untouched on failure */
	/* a NULL or zero-size err buffer is fine too */
	assert_int_equal(tb_layout_from_debug_offsets(buf, len, &l, NULL, 0), -1);
	assert_int_equal(tb_layout_from_debug_offsets(buf, len, &l, err, 0), -1);
}

/* The parsed default-build layout must equal the built-in table for the same version. */
static void test_debug_equals_builtin(void **state)
{
	(void)state;
	for (unsigned minor = 13; minor <= 15; minor++) {
		size_t len = build(minor, 0);
		struct tb_layout d = parse_ok(len), b;

		assert_int_equal(len, tb_debug_offsets_size(minor));
		assert_int_equal(tb_layout_builtin((uint32_t)versions[minor - 13], &b), 0);
		/* compare field by field for a useful message, then as a whole */
#define EQ(f) assert_int_equal(d.f, b.f)
		EQ(major); EQ(minor); EQ(micro); EQ(version_hex); EQ(free_threaded);
		EQ(bpf.py_version); EQ(bpf.runtime_interp_head); EQ(bpf.interp_threads_head);
		EQ(bpf.interp_next); EQ(bpf.tstate_next); EQ(bpf.tstate_thread_id); EQ(bpf.tstate_frame);
		EQ(bpf.cframe_current_frame); EQ(bpf.frame_code); EQ(bpf.frame_previous);
		EQ(bpf.frame_instr); EQ(bpf.frame_owner); EQ(bpf.code_adaptive); EQ(bpf.bytes_sval);
		EQ(bpf.code_firstlineno); EQ(bpf.code_argcount); EQ(bpf.code_version);
		EQ(bpf.object_type); EQ(bpf.frame_kind); EQ(bpf.owner_skip_min); EQ(bpf.owner_cstack);
		EQ(bpf.code_tag_mask);
		EQ(code_size); EQ(code_filename); EQ(code_name); EQ(code_qualname); EQ(code_linetable);
		EQ(code_firstlineno); EQ(code_flags); EQ(code_argcount); EQ(code_version);
		EQ(code_adaptive); EQ(code_nunits); EQ(bytes_size); EQ(bytes_sval);
		EQ(unicode_length); EQ(unicode_state); EQ(unicode_ascii_data); EQ(unicode_compact_data);
		EQ(unicode_kind_shift); EQ(unicode_compact_bit); EQ(unicode_ascii_bit);
		EQ(runtime_gil_locked); EQ(runtime_gil_holder); EQ(interp_ceval_gil);
		EQ(gil_locked); EQ(gil_holder); EQ(tstate_native_thread_id); EQ(interp_gc_collecting);
		EQ(interp_modules); EQ(type_flags); EQ(type_basicsize); EQ(type_dictoffset);
		EQ(heaptype_cached_keys);
#undef EQ
		assert_memory_equal(&d.bpf, &b.bpf, sizeof(d.bpf));
	}
}

static void test_debug_values(void **state)
{
	(void)state;
	struct tb_layout l;
	char s[32];

	build(15, 0);
	l = parse_ok(888);
	assert_int_equal(l.version_hex, 0x030f02f0);
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.15.2");
	assert_int_equal(l.bpf.tstate_thread_id, 176);
	assert_int_equal(l.tstate_native_thread_id, 184);
	assert_int_equal(l.unicode_compact_data, 56);
	assert_int_equal(l.interp_gc_collecting, 7400 + 112);
	assert_int_equal(l.gil_locked, 16);
	assert_int_equal(l.gil_holder, 8);
	assert_int_equal(l.bpf.owner_skip_min, 3);
	assert_int_equal(l.bpf.owner_cstack, 0xff);
	assert_int_equal(l.bpf.code_tag_mask, 3);

	/* 3.15: compactunicodeobject_size is taken from the buffer, not derived */
	set(15, "unicode_object.compactunicodeobject_size", 48);
	l = parse_ok(888);
	assert_int_equal(l.unicode_compact_data, 48);

	build(14, 0);
	l = parse_ok(760);
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.14.10");
	assert_int_equal(l.bpf.frame_owner, 74);
	assert_int_equal(l.bpf.owner_cstack, 4);
	assert_int_equal(l.interp_gc_collecting, 7408 + 192);

	/* a bad thread-name field only disables that field */
	build(15, 0);
	set(15, "interpreter_state.imports_modules", 0xffffffffull);
	set(15, "heap_type_object.ht_cached_keys", 100); /* inside the embedded PyTypeObject */
	set(15, "type_object.tp_dictoffset", 289);
	l = parse_ok(888);
	assert_int_equal(l.interp_modules, NO);
	assert_int_equal(l.heaptype_cached_keys, NO);
	assert_int_equal(l.type_dictoffset, NO);
	assert_int_equal(l.type_basicsize, 32);
	assert_int_equal(l.type_flags, 168);

	/* a longer buffer than needed is fine */
	build(13, 0);
	l = parse_ok(sizeof(buf));
	assert_int_equal(l.bpf.frame_owner, 70);
	assert_int_equal(l.bpf.code_tag_mask, 0);
	assert_int_equal(l.unicode_compact_data, 56);
}

static void test_debug_313t(void **state)
{
	(void)state;
	struct tb_layout l;
	char s[32];

	build(13, 1);
	l = parse_ok(584);
	assert_int_equal(l.free_threaded, 1);
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.13.18t");
	assert_int_equal(l.bpf.object_type, 24);
	assert_int_equal(l.bpf.code_adaptive, 216);
	assert_int_equal(l.bpf.code_firstlineno, 84);
	assert_int_equal(l.bpf.code_argcount, 68);
	assert_int_equal(l.bpf.code_version, 108);
	assert_int_equal(l.code_flags, 64);
	assert_int_equal(l.code_filename, 128);
	assert_int_equal(l.code_qualname, 144);
	assert_int_equal(l.code_nunits, 32);
	assert_int_equal(l.code_size, 224);
	assert_int_equal(l.bytes_sval, 48);
	assert_int_equal(l.unicode_length, 32);
	assert_int_equal(l.unicode_state, 48);
	assert_int_equal(l.unicode_ascii_data, 56);
	assert_int_equal(l.unicode_compact_data, 72);
	assert_int_equal(l.gil_locked, 24);
	assert_int_equal(l.gil_holder, 16);
	assert_int_equal(l.bpf.frame_owner, 70);
	assert_int_equal(l.bpf.tstate_frame, 72);
	assert_int_equal(l.interp_modules, 7664);
	assert_int_equal(l.type_flags, 184);
	assert_int_equal(l.type_basicsize, NO); /* not listed before 3.15, t value not measured */
	assert_int_equal(l.heaptype_cached_keys, NO);

	/* free_threaded flag that contradicts the object header */
	build(13, 1);
	put(16, 0);
	parse_bad(584, "free_threaded");
}

static void test_debug_reject_header(void **state)
{
	(void)state;

	build(13, 0);
	buf[0] = 'X';
	parse_bad(584, "cookie");

	build(13, 0);
	parse_bad(0, "truncated");
	parse_bad(23, "truncated");
	parse_bad(583, "truncated");
	build(15, 0);
	parse_bad(760, "truncated"); /* a 3.14-sized read of a 3.15 runtime */

	struct tb_layout l;
	assert_int_equal(tb_layout_from_debug_offsets(NULL, 584, &l, NULL, 0), -1);

	build(13, 0);
	put(8, 0x030c01f0);
	parse_bad(584, "3.12");
	put(8, 0x031000f0);
	parse_bad(584, "3.16 is not supported");
	put(8, 0x040000f0);
	parse_bad(584, "not a CPython 3.x");
	put(8, 0xffffffffffffffffull);
	parse_bad(584, "not a CPython 3.x");
	put(8, 0x030e00a3); /* 3.14.0a3 */
	parse_bad(584, "pre-release");

	build(14, 0);
	put(16, 2);
	parse_bad(760, "free_threaded");
	put(16, 1);
	parse_bad(760, "free-threaded 3.14t is not supported yet");
	build(15, 0);
	put(16, 1);
	parse_bad(888, "free-threaded 3.15t is not supported yet");
}

static void test_debug_reject_offsets(void **state)
{
	(void)state;
	static const struct { const char *field; uint64_t v; const char *want; } cases[] = {
		{ "thread_state.current_frame", 0xffffffffull, "thread_state.current_frame" },
		{ "thread_state.current_frame", 0xffffffffffffffffull, "thread_state.current_frame" },
		{ "thread_state.thread_id", 4096, "thread_state.thread_id" },   /* beyond sizeof */
		{ "thread_state.next", 12, "aligned" },
		{ "interpreter_state.threads_head", 70000, "interpreter_state.threads_head" },
		{ "interpreter_state.next", 0xffff, "interpreter_state.next" },
		{ "runtime_state.interpreters_head", 1u << 20, "runtime_state.interpreters_head" },
		{ "runtime_state.size", 0, "runtime_state.size" },
		{ "runtime_state.size", 0xffffffffffffffffull, "runtime_state.size" },
		{ "interpreter_frame.owner", 200, "interpreter_frame.owner" },
		{ "interpreter_frame.instr_ptr", 0xfff8, "interpreter_frame.instr_ptr" },
		{ "interpreter_frame.size", 0xffffffffull, "interpreter_frame.size" },
		{ "code_object.size", 1u << 30, "code_object.size" },
		{ "code_object.size", 64, "code_object" },                      /* fields fall outside */
		{ "code_object.filename", 0xffffffffull, "code_object.filename" },
		{ "code_object.co_code_adaptive", 100000, "code_object.co_code_adaptive" },
		{ "code_object.co_code_adaptive", 80, "co_version" },           /* before co_version */
		{ "code_object.firstlineno", 210, "code_object.firstlineno" },
		{ "pyobject.ob_type", 0xffffffffull, "pyobject.ob_type" },
		{ "pyobject.ob_type", 0, "free_threaded" },                     /* header mismatch */
		{ "bytes_object.ob_sval", 0xffffffffull, "bytes_object.ob_sval" },
		{ "unicode_object.state", 1000, "unicode_object.state" },
		{ "unicode_object.asciiobject_size", 0xffffffffull, "unicode_object.asciiobject_size" },
		{ "gc.collecting", 0xffffffffull, "gc.collecting" },
		{ "interpreter_state.gc", 0xffffffffull, "interpreter_state.gc" },
		{ "interpreter_state.gil_runtime_state_locked", 0xffffffffull, "GIL" },
		{ "interpreter_state.gil_runtime_state_holder", 100, "GIL" },   /* below the struct */
		{ "interpreter_state.gil_runtime_state", 0xffffffffffffffffull, "GIL" },
		{ "interpreter_state.ceval_gil", 0xffffffffull, "interpreter_state.ceval_gil" },
		{ "bytes_object.ob_size", 24, "object header" },               /* not after PyObject */
		{ "bytes_object.ob_sval", 16, "object header" },
		{ "pyobject.size", 32, "object header" },
		{ "unicode_object.length", 40, "str fields" },                 /* past PyASCIIObject */
		{ "unicode_object.asciiobject_size", 64, "str fields" },       /* compact would pass sizeof */
	};

	for (unsigned minor = 13; minor <= 15; minor++) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			size_t len = build(minor, 0);

			parse_ok(len);
			set(minor, cases[i].field, cases[i].v);
			parse_bad(len, cases[i].want);
		}
		size_t len = build(minor, 0);
		if (minor == 15) {
			set(15, "unicode_object.compactunicodeobject_size", 0xffffffffull);
			parse_bad(len, "compactunicodeobject_size");
			set(15, "unicode_object.compactunicodeobject_size", 32); /* below PyASCIIObject */
			parse_bad(len, "str fields");
		}
	}
}

/* Any single corrupted word either is rejected or yields offsets inside their structs. */
static void test_debug_fuzz(void **state)
{
	(void)state;
	unsigned seed = 12345;
	const uint64_t specials[] = { 0, 1, 7, 8, 0xfffe, 0xffff, 0x10000, 0x7fffffff, 0xffffffff,
				      0x8000000000000000ull, 0xffffffffffffffffull };

	for (int iter = 0; iter < 20000; iter++) {
		unsigned minor = 13 + iter % 3;
		size_t len = build(minor, iter % 7 == 0 && minor == 13);
		size_t pos = 24 + 8 * (rand_r(&seed) % ((len - 24) / 8));
		uint64_t v = (iter & 1) ? specials[rand_r(&seed) % (sizeof(specials) / sizeof(specials[0]))]
					: ((uint64_t)rand_r(&seed) << 32 | (unsigned)rand_r(&seed)) >> (rand_r(&seed) % 64);
		struct tb_layout l;
		char err[256];

		put(pos, v);
		if (tb_layout_from_debug_offsets(buf, len, &l, err, sizeof(err)) != 0) {
			assert_true(err[0] != '\0');
			continue;
		}
		assert_true(l.code_size <= 4096);
		assert_true(l.code_filename + 8u <= l.code_size);
		assert_true(l.code_name + 8u <= l.code_size);
		assert_true(l.code_qualname + 8u <= l.code_size);
		assert_true(l.code_linetable + 8u <= l.code_size);
		assert_true(l.code_firstlineno + 4u <= l.code_size);
		assert_true(l.code_argcount + 4u <= l.code_size);
		assert_true(l.code_version + 4u <= l.code_size);
		assert_true(l.code_adaptive < l.code_size);
		assert_true(l.bpf.frame_instr < 4096 && l.bpf.frame_previous < 4096 &&
			    l.bpf.frame_code < 4096 && l.bpf.frame_owner < 4096);
		assert_true(l.bpf.tstate_frame < NO && l.bpf.tstate_thread_id < NO &&
			    l.bpf.tstate_next < NO && l.bpf.interp_threads_head < NO &&
			    l.bpf.interp_next < NO && l.bpf.runtime_interp_head < NO);
		assert_true(l.interp_gc_collecting < NO && l.interp_ceval_gil < NO);
		assert_true(l.gil_locked < 4096 && l.gil_holder < 4096);
		assert_true(l.unicode_state < 4096 && l.unicode_compact_data < 4096);
		assert_true(l.unicode_length + 8u <= l.unicode_ascii_data);
		assert_true(l.unicode_state + 4u <= l.unicode_ascii_data);
		assert_true(l.unicode_ascii_data <= l.unicode_compact_data);
		assert_true(l.bpf.object_type + 8u <= l.code_size);
		assert_true(l.code_nunits + 8u <= l.code_adaptive);
		assert_true(l.interp_modules == NO || l.interp_modules + 8u <= 250000u);
		assert_true(l.type_flags == NO || l.type_flags + 8u <= 4096u);
		assert_true(l.type_basicsize == NO || l.type_basicsize + 8u <= 4096u);
		assert_true(l.type_dictoffset == NO || l.type_dictoffset + 8u <= 4096u);
		assert_true(l.heaptype_cached_keys == NO || l.heaptype_cached_keys + 8u <= 4096u);
	}
}

static void test_version_str(void **state)
{
	(void)state;
	struct tb_layout l;
	char s[32];

	assert_int_equal(tb_layout_builtin(0x030d00f0, &l), 0);
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.13.0");
	l.free_threaded = 1;
	l.micro = 1;
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.13.1t");
	assert_int_equal(tb_layout_builtin(0x030e0af0, &l), 0);
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.14.10");
	assert_int_equal(tb_layout_builtin(0x030e00c1, &l), 0);
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.14.0rc1");
	assert_int_equal(tb_layout_builtin(0x030f00b2, &l), 0);
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.15.0b2");
	assert_int_equal(tb_layout_builtin(0x030a0000, &l), 0); /* 3.10, level unknown */
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.10.0");
	assert_int_equal(tb_layout_builtin(0x030e0af0, &l), 0);
	assert_string_equal(tb_layout_version_str(&l, s, 5), "3.14"); /* truncated, terminated */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_310),
		cmocka_unit_test(test_builtin_311),
		cmocka_unit_test(test_builtin_312),
		cmocka_unit_test(test_builtin_313_314_315),
		cmocka_unit_test(test_builtin_thread_names),
		cmocka_unit_test(test_builtin_unsupported),
		cmocka_unit_test(test_debug_offsets_size),
		cmocka_unit_test(test_debug_equals_builtin),
		cmocka_unit_test(test_debug_values),
		cmocka_unit_test(test_debug_313t),
		cmocka_unit_test(test_debug_reject_header),
		cmocka_unit_test(test_debug_reject_offsets),
		cmocka_unit_test(test_debug_fuzz),
		cmocka_unit_test(test_version_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
