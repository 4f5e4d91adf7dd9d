/* test_pylayout.c: cmocka tests of the version table (user/cpython/versions.c) and
 * user/cpython/layout.c: the built-in layout of every version, parsing of synthetic
 * _Py_DebugOffsets buffers laid out from the reference (docs/cpython-layouts.md; values of
 * 3.13.18, 3.14.10, 3.15.2 and 3.13t), and rejection of bad or hostile buffers.
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
#include "cpython/opcodes.h"
#include "cpython/versions.h"

#define NO TB_NO_OFFSET
#define N_ITEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------- the version table */

static void test_versions_table(void **state)
{
	(void)state;
	char range[32];

	assert_null(tb_pyversion(TB_PY_MIN_MINOR - 1));
	assert_null(tb_pyversion(TB_PY_MAX_MINOR + 1));
	assert_null(tb_pyversion(~0u));
	snprintf(range, sizeof(range), "3.%d-3.%d", TB_PY_MIN_MINOR, TB_PY_MAX_MINOR);
	assert_string_equal(tb_python_range(), range);
	for (unsigned minor = TB_PY_MIN_MINOR; minor <= TB_PY_MAX_MINOR; minor++) {
		const struct tb_pyversion *v = tb_pyversion(minor);
		const struct tb_debug_positions *p;

		assert_non_null(v);
		assert_int_equal(v->minor, minor);
		assert_non_null(v->layout);
		assert_non_null(v->threads);
		assert_non_null(v->opcodes);
		assert_int_equal(v->opcodes->minor, minor);
		assert_int_equal(v->lines, minor == 10 ? TB_LINES_LNOTAB_V2 : TB_LINES_LOCATIONS);
		assert_int_equal(v->layout->bpf.frame_kind, minor == 10 ? TB_FRAME_OBJECT : TB_FRAME_INTERP);
		/* a free-threaded build is read from its debug offsets, with its own thread-name objects */
		assert_true(!v->ft || (v->debug && v->ft->threads));
		p = v->debug;
		if (!p)
			continue;
		if (v->ft && v->ft->tlbc)
			assert_true(p->frame_tlbc_index && p->code_tlbc);
		/* every listed field: its own aligned uint64_t after the 24-byte header, inside the struct */
		for (size_t i = 1; i < sizeof(*p) / sizeof(uint16_t); i++) {
			uint16_t pos = ((const uint16_t *)p)[i];

			if (pos == 0)
				continue;
			assert_true(pos >= 24 && pos % 8 == 0 && pos + 8u <= p->total);
			for (size_t j = 1; j < i; j++)
				assert_int_not_equal(pos, ((const uint16_t *)p)[j]);
		}
	}
}

/* ---------------------------------------------------------------- builtin */

/* Every field of struct tb_layout, to compare layouts field by field with useful messages. */
#define FIELD(f) { #f, offsetof(struct tb_layout, f), sizeof(((struct tb_layout *)0)->f) }
static const struct field {
	const char *name;
	size_t off, size;
} fields[] = {
	FIELD(major), FIELD(minor), FIELD(micro), FIELD(version_hex), FIELD(free_threaded),
	FIELD(bpf.py_version), FIELD(bpf.runtime_interp_head), FIELD(bpf.interp_threads_head),
	FIELD(bpf.interp_next), FIELD(bpf.tstate_next), FIELD(bpf.tstate_thread_id),
	FIELD(bpf.tstate_frame), FIELD(bpf.cframe_current_frame), FIELD(bpf.frame_kind),
	FIELD(bpf.frame_code), FIELD(bpf.frame_previous), FIELD(bpf.frame_instr),
	FIELD(bpf.frame_owner), FIELD(bpf.owner_skip_min), FIELD(bpf.owner_cstack),
	FIELD(bpf.code_tag_mask), FIELD(bpf.code_adaptive), FIELD(bpf.code_firstlineno),
	FIELD(bpf.code_argcount), FIELD(bpf.code_version), FIELD(bpf.bytes_sval),
	FIELD(bpf.object_type), FIELD(bpf.frame_tlbc_index), FIELD(bpf.code_tlbc), FIELD(gil_enabled),
	FIELD(code_size), FIELD(code_filename), FIELD(code_name), FIELD(code_qualname),
	FIELD(code_linetable), FIELD(code_firstlineno), FIELD(code_flags), FIELD(code_argcount),
	FIELD(code_version), FIELD(code_adaptive), FIELD(code_nunits), FIELD(bytes_size),
	FIELD(bytes_sval), FIELD(unicode_length), FIELD(unicode_state), FIELD(unicode_ascii_data),
	FIELD(unicode_compact_data), FIELD(unicode_kind_shift), FIELD(unicode_compact_bit),
	FIELD(unicode_ascii_bit), FIELD(runtime_gil_locked), FIELD(runtime_gil_holder),
	FIELD(interp_ceval_gil), FIELD(gil_locked), FIELD(gil_holder), FIELD(tstate_native_thread_id),
	FIELD(tstate_interp), FIELD(tstate_exc_info), FIELD(stackitem_exc_value),
	FIELD(interp_gc_collecting), FIELD(interp_modules), FIELD(type_flags), FIELD(type_basicsize),
	FIELD(type_dictoffset), FIELD(heaptype_cached_keys),
};

static uint64_t get(const struct tb_layout *l, const struct field *f)
{
	uint64_t v = 0;

	memcpy(&v, (const char *)l + f->off, f->size);  /* little-endian */
	return v;
}

static const struct field *field(const char *name)
{
	for (size_t i = 0; i < N_ITEMS(fields); i++)
		if (!strcmp(fields[i].name, name))
			return &fields[i];
	fail_msg("no field %s", name);
	return NULL;
}

static void expect_field(const struct tb_layout *l, const struct field *f, uint64_t want)
{
	if (get(l, f) != want)
		fail_msg("3.%u %s: %llu, want %llu", l->minor, f->name, (unsigned long long)get(l, f),
			 (unsigned long long)want);
}

static void expect_equal_layouts(const struct tb_layout *got, const struct tb_layout *want)
{
	for (size_t i = 0; i < N_ITEMS(fields); i++)
		expect_field(got, &fields[i], get(want, &fields[i]));
}

/* Named values a layout must have; NO stands for 0xff in a one-byte field too. */
struct value {
	const char *field;
	uint64_t v;
};

static void expect_values(const struct tb_layout *l, const struct value *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct field *f = field(want[i].field);

		expect_field(l, f, want[i].v == NO && f->size == 1 ? 0xff : want[i].v);
	}
}

#define EXPECT_VALUES(l, ...) do {                                  \
	static const struct value want_[] = { __VA_ARGS__ };         \
	expect_values(l, want_, N_ITEMS(want_));                     \
} while (0)

/* The default builds (docs/cpython-layouts.md, "What differs between versions": the numbers
 * tests/layout/check_headers.sh finds in the headers), one column per version
 * 3.10 ... 3.15; NO: no such field (TB_NO_OFFSET, 0xff in a one-byte field). */
static const uint32_t builtin_hex[] = { 0x030a0df0, 0x030b07f0, 0x030c01f0, 0x030d12f0, 0x030e0af0,
					0x030f02f0 };
static const struct {
	const char *field;
	uint16_t v[N_ITEMS(builtin_hex)];
} builtin_want[] = {
	{ "bpf.runtime_interp_head",   {   32,   40,   40,  632,  808,  936 } },
	{ "bpf.interp_threads_head",   {    8,   16,   72, 7344, 7344, 7336 } },
	{ "bpf.interp_next",           {    0,    0,    0, 7264, 7272, 7264 } },
	{ "bpf.tstate_next",           {    8,    8,    8,    8,    8,    8 } },
	{ "bpf.tstate_thread_id",      {  176,  152,  136,  152,  152,  176 } },
	{ "bpf.tstate_frame",          {   24,   56,   56,   72,   72,   72 } },
	{ "bpf.cframe_current_frame",  {   NO,    8,    0,   NO,   NO,   NO } },
	{ "bpf.frame_kind",            {    0,    1,    1,    1,    1,    1 } },
	{ "bpf.frame_code",            {   32,   32,    0,    0,    0,    0 } },
	{ "bpf.frame_previous",        {   24,   48,    8,    8,    8,    8 } },
	{ "bpf.frame_instr",           {   96,   56,   56,   56,   56,   56 } },
	{ "bpf.frame_owner",           {   NO,   69,   70,   70,   74,   74 } },
	{ "bpf.owner_skip_min",        {   NO,   NO,    3,    3,    3,    3 } },
	{ "bpf.owner_cstack",          {   NO,   NO,    3,    3,    4,   NO } },
	{ "bpf.code_tag_mask",         {    0,    0,    0,    0,    3,    3 } },
	{ "bpf.code_adaptive",         {   48,  184,  192,  200,  208,  208 } },
	{ "bpf.code_firstlineno",      {   40,   72,   68,   68,   68,   68 } },
	{ "bpf.code_argcount",         {   16,   56,   52,   52,   52,   52 } },
	{ "bpf.code_version",          {   NO,   NO,   92,   92,   92,   92 } },
	{ "bpf.bytes_sval",            {   32,   32,   32,   32,   32,   32 } },
	{ "bpf.object_type",           {    8,    8,    8,    8,    8,    8 } },
	{ "code_size",                 {  176,  192,  200,  208,  216,  216 } },
	{ "code_filename",             {  104,  112,  112,  112,  112,  112 } },
	{ "code_name",                 {  112,  120,  120,  120,  120,  120 } },
	{ "code_qualname",             {   NO,  128,  128,  128,  128,  128 } },
	{ "code_linetable",            {  120,  136,  136,  136,  136,  136 } },
	{ "code_flags",                {   36,   48,   48,   48,   48,   48 } },
	{ "code_nunits",               {   NO,   16,   16,   16,   16,   16 } },
	{ "bytes_size",                {   16,   16,   16,   16,   16,   16 } },
	{ "unicode_length",            {   16,   16,   16,   16,   16,   16 } },
	{ "unicode_state",             {   32,   32,   32,   32,   32,   32 } },
	{ "unicode_ascii_data",        {   48,   48,   40,   40,   40,   40 } },
	{ "unicode_compact_data",      {   72,   72,   56,   56,   56,   56 } },
	{ "unicode_kind_shift",        {    2,    2,    2,    2,    2,    2 } },
	{ "unicode_compact_bit",       {    5,    5,    5,    5,    5,    5 } },
	{ "unicode_ascii_bit",         {    6,    6,    6,    6,    6,    6 } },
	{ "runtime_gil_locked",        {  368,  376,   NO,   NO,   NO,   NO } },
	{ "runtime_gil_holder",        {  360,  368,   NO,   NO,   NO,   NO } },
	{ "interp_ceval_gil",          {   NO,   NO,  384,   16,   16,   16 } },
	{ "gil_locked",                {   NO,   NO,   16,   16,   16,   16 } },
	{ "gil_holder",                {   NO,   NO,    8,    8,    8,    8 } },
	{ "gil_enabled",               {   NO,   NO,   NO,   NO,   NO,   NO } },
	{ "bpf.frame_tlbc_index",      {   NO,   NO,   NO,   NO,   NO,   NO } },
	{ "bpf.code_tlbc",             {   NO,   NO,   NO,   NO,   NO,   NO } },
	{ "tstate_native_thread_id",   {   NO,  160,  144,  160,  160,  184 } },
	{ "tstate_interp",             {   16,   16,   16,   16,   16,   16 } },
	{ "tstate_exc_info",           {  144,  120,  104,  120,  120,  144 } },
	{ "stackitem_exc_value",       {    8,    0,    0,    0,    0,    0 } },
	{ "interp_gc_collecting",      {  816,  848,  312, 7600, 7600, 7512 } },
	{ "interp_modules",            {  856,  888,  944, 7656, 7688, 7592 } },
	{ "type_flags",                {  168,  168,  168,  168,  168,  168 } },
	{ "type_basicsize",            {   32,   32,   32,   32,   32,   32 } },
	{ "type_dictoffset",           {  288,  288,  288,  288,  288,  288 } },
	{ "heaptype_cached_keys",      {  872,  872,  880,  880,  880,  888 } },
};

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
	/* the user-space copies of what the BPF walk reads */
	assert_int_equal(l.code_firstlineno, l.bpf.code_firstlineno);
	assert_int_equal(l.code_argcount, l.bpf.code_argcount);
	assert_int_equal(l.code_version, l.bpf.code_version);
	assert_int_equal(l.code_adaptive, l.bpf.code_adaptive);
	assert_int_equal(l.bytes_sval, l.bpf.bytes_sval);
	return l;
}

static void test_builtin(void **state)
{
	(void)state;
	assert_int_equal(N_ITEMS(builtin_hex), TB_PY_MAX_MINOR - TB_PY_MIN_MINOR + 1);
	for (size_t i = 0; i < N_ITEMS(builtin_hex); i++) {
		struct tb_layout l = builtin(builtin_hex[i]);

		for (size_t k = 0; k < N_ITEMS(builtin_want); k++) {
			struct value want = { builtin_want[k].field, builtin_want[k].v[i] };

			expect_values(&l, &want, 1);
		}
	}
}

static void test_builtin_unsupported(void **state)
{
	(void)state;
	struct tb_layout l;
	uint32_t bad[] = { 0x030012f0u | (TB_PY_MIN_MINOR - 1) << 16, 0x03000000u | (TB_PY_MAX_MINOR + 1) << 16,
			   0x02070ff0, 0x040a0000, 0, 0xffffffff };

	for (size_t i = 0; i < N_ITEMS(bad); i++)
		assert_int_equal(tb_layout_builtin(bad[i], &l), -1);
}

/* ------------------------------------------------- synthetic debug offsets */

/* Position of each field in _Py_DebugOffsets (one column per version DBG_FIRST...,
 * 0 = absent) and its value (3.13.18, 3.14.10, 3.15.2 default builds, and their free-threaded
 * builds: the headers' initializer with Py_GIL_DISABLED, tests/layout/dump_debug_offsets.c).
 * Typed from the reference (docs/cpython-layouts.md) independently of user/cpython/versions.c. */
#define DBG_FIRST 13   /* the first minor with debug offsets: column 0 */
#define DBG_N 3        /* columns: 3.13, 3.14, 3.15 */
#define DBG_LAST (DBG_FIRST + DBG_N - 1)
struct row {
	const char *name;
	uint16_t pos[DBG_N];
	uint64_t val[DBG_N];
	uint64_t valt[DBG_N];   /* the free-threaded build's */
};

static const struct row rows[] = {
	{ "runtime_state.size",                 {  24,  24,  24 }, { 283408, 316616, 346560 }, { 328384, 365624, 409296 } },
	{ "runtime_state.finalizing",           {  32,  32,  32 }, { 608, 784, 912 }, { 608, 784, 912 } },
	{ "runtime_state.interpreters_head",    {  40,  40,  40 }, { 632, 808, 936 }, { 632, 808, 936 } },
	{ "interpreter_state.size",             {  48,  48,  48 }, { 194984, 225864, 226232 }, { 215616, 249976, 250328 } },
	{ "interpreter_state.id",               {  56,  56,  56 }, { 7272, 7280, 7272 }, { 7272, 7280, 7272 } },
	{ "interpreter_state.next",             {  64,  64,  64 }, { 7264, 7272, 7264 }, { 7264, 7272, 7264 } },
	{ "interpreter_state.threads_head",     {  72,  72,  72 }, { 7344, 7344, 7336 }, { 7344, 7344, 7336 } },
	{ "interpreter_state.threads_main",     {   0,  80,  80 }, { 0, 7360, 7352 }, { 0, 7360, 7352 } },
	{ "interpreter_state.gc",               {  80,  88,  88 }, { 7400, 7408, 7400 }, { 7400, 7408, 7400 } },
	{ "interpreter_state.ceval_gil",        { 112, 120, 120 }, { 16, 16, 16 }, { 16, 16, 16 } },
	{ "interpreter_state.gil_runtime_state", { 120, 128, 128 }, { 7752, 7784, 7736 }, { 7760, 7808, 7736 } },
	{ "interpreter_state.gil_runtime_state_locked", { 136, 144, 144 }, { 7768, 7800, 7752 }, { 7784, 7832, 7760 } },
	{ "interpreter_state.gil_runtime_state_holder", { 144, 152, 152 }, { 7760, 7792, 7744 }, { 7776, 7824, 7752 } },
	{ "interpreter_state.gil_runtime_state_enabled", { 128, 136, 136 }, { 0, 0, 0 }, { 0, 0, 0 } },
	{ "thread_state.size",                  { 152, 176, 176 }, { 312, 832, 888 }, { 312, 832, 888 } },
	{ "thread_state.prev",                  { 160, 184, 184 }, { 0, 0, 0 }, { 0, 0, 0 } },
	{ "thread_state.next",                  { 168, 192, 192 }, { 8, 8, 8 }, { 8, 8, 8 } },
	{ "thread_state.interp",                { 176, 200, 200 }, { 16, 16, 16 }, { 16, 16, 16 } },
	{ "thread_state.current_frame",         { 184, 208, 208 }, { 72, 72, 72 }, { 72, 72, 72 } },
	{ "thread_state.base_frame",            {   0,   0, 216 }, { 0, 0, 80 }, { 0, 0, 80 } },
	{ "thread_state.thread_id",             { 192, 216, 240 }, { 152, 152, 176 }, { 152, 152, 176 } },
	{ "thread_state.native_thread_id",      { 200, 224, 248 }, { 160, 160, 184 }, { 160, 160, 184 } },
	{ "thread_state.datastack_chunk",       { 208, 232, 256 }, { 232, 232, 256 }, { 232, 232, 256 } },
	{ "thread_state.status",                { 216, 240, 264 }, { 32, 32, 32 }, { 32, 32, 32 } },
	{ "interpreter_frame.size",             { 224, 248, 312 }, { 80, 88, 88 }, { 80, 88, 88 } },
	{ "interpreter_frame.previous",         { 232, 256, 320 }, { 8, 8, 8 }, { 8, 8, 8 } },
	{ "interpreter_frame.executable",       { 240, 264, 328 }, { 0, 0, 0 }, { 0, 0, 0 } },
	{ "interpreter_frame.instr_ptr",        { 248, 272, 336 }, { 56, 56, 56 }, { 56, 56, 56 } },
	{ "interpreter_frame.localsplus",       { 256, 280, 344 }, { 72, 80, 80 }, { 72, 80, 80 } },
	{ "interpreter_frame.owner",            { 264, 288, 352 }, { 70, 74, 74 }, { 70, 78, 78 } },
	{ "interpreter_frame.stackpointer",     {   0, 296, 360 }, { 0, 64, 64 }, { 0, 64, 64 } },
	{ "interpreter_frame.tlbc_index",       {   0, 304, 368 }, { 0, 0, 0 }, { 0, 72, 72 } },
	{ "code_object.size",                   { 272, 312, 376 }, { 208, 216, 216 }, { 224, 240, 240 } },
	{ "code_object.filename",               { 280, 320, 384 }, { 112, 112, 112 }, { 128, 128, 128 } },
	{ "code_object.name",                   { 288, 328, 392 }, { 120, 120, 120 }, { 136, 136, 136 } },
	{ "code_object.qualname",               { 296, 336, 400 }, { 128, 128, 128 }, { 144, 144, 144 } },
	{ "code_object.linetable",              { 304, 344, 408 }, { 136, 136, 136 }, { 152, 152, 152 } },
	{ "code_object.firstlineno",            { 312, 352, 416 }, { 68, 68, 68 }, { 84, 84, 84 } },
	{ "code_object.argcount",               { 320, 360, 424 }, { 52, 52, 52 }, { 68, 68, 68 } },
	{ "code_object.co_code_adaptive",       { 344, 384, 448 }, { 200, 208, 208 }, { 216, 232, 232 } },
	{ "code_object.co_tlbc",                {   0, 392, 456 }, { 0, 0, 0 }, { 0, 224, 224 } },
	{ "pyobject.size",                      { 352, 400, 464 }, { 16, 16, 16 }, { 32, 32, 32 } },
	{ "pyobject.ob_type",                   { 360, 408, 472 }, { 8, 8, 8 }, { 24, 24, 24 } },
	{ "type_object.size",                   { 368, 416, 480 }, { 416, 416, 424 }, { 432, 432, 440 } },
	{ "bytes_object.size",                  { 512, 592, 688 }, { 40, 40, 40 }, { 56, 56, 56 } },
	{ "bytes_object.ob_size",               { 520, 600, 696 }, { 16, 16, 16 }, { 32, 32, 32 } },
	{ "bytes_object.ob_sval",               { 528, 608, 704 }, { 32, 32, 32 }, { 48, 48, 48 } },
	{ "unicode_object.size",                { 536, 616, 712 }, { 64, 64, 64 }, { 80, 80, 80 } },
	{ "unicode_object.state",               { 544, 624, 720 }, { 32, 32, 32 }, { 48, 48, 48 } },
	{ "unicode_object.length",              { 552, 632, 728 }, { 16, 16, 16 }, { 32, 32, 32 } },
	{ "unicode_object.asciiobject_size",    { 560, 640, 736 }, { 40, 40, 40 }, { 56, 56, 56 } },
	{ "unicode_object.compactunicodeobject_size", { 0, 0, 744 }, { 0, 0, 56 }, { 0, 0, 72 } },
	{ "gc.size",                            { 568, 648, 752 }, { 240, 264, 176 }, { 248, 288, 176 } },
	{ "gc.collecting",                      { 576, 656, 760 }, { 200, 192, 112 }, { 200, 192, 112 } },
	{ "debugger_support.debugger_script_path_size", { 0, 752, 880 }, { 0, 512, 512 }, { 0, 512, 512 } },
	{ "interpreter_state.imports_modules",  {  88,  96,  96 }, { 7656, 7688, 7592 }, { 7664, 7712, 7592 } },
	{ "type_object.tp_flags",               { 392, 440, 504 }, { 168, 168, 168 }, { 184, 184, 184 } },
	{ "type_object.tp_basicsize",           {   0,   0, 512 }, { 0, 0, 32 }, { 0, 0, 48 } },
	{ "type_object.tp_dictoffset",          {   0,   0, 520 }, { 0, 0, 288 }, { 0, 0, 304 } },
	{ "heap_type_object.size",              {   0,   0, 528 }, { 0, 0, 944 }, { 0, 0, 968 } },
	{ "heap_type_object.ht_cached_keys",    {   0,   0, 536 }, { 0, 0, 888 }, { 0, 0, 904 } },
};

static const size_t total[DBG_N] = { 584, 760, 888 };
static const uint64_t versions[DBG_N] = { 0x030d12f0, 0x030e0af0, 0x030f02f0 };

static unsigned char buf[1024];

/* Every version with debug offsets has its column above, and the sizes agree. */
static void test_debug_offsets_size(void **state)
{
	(void)state;
	for (unsigned minor = TB_PY_MIN_MINOR; minor <= TB_PY_MAX_MINOR; minor++)
		assert_int_equal(tb_debug_offsets_size(minor),
				 minor >= DBG_FIRST && minor <= DBG_LAST ? total[minor - DBG_FIRST] : 0);
	assert_int_equal(tb_debug_offsets_size(TB_PY_MAX_MINOR + 1), 0);
	assert_int_equal(tb_debug_offsets_size(13), 584);
}

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

/* Fill buf for a minor DBG_FIRST..DBG_LAST (ft: the free-threaded values); returns the buffer length. */
static size_t build(unsigned minor, int ft)
{
	unsigned i = minor - DBG_FIRST;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, "xdebugpy", 8);
	put(8, versions[i]);
	put(16, (uint64_t)ft);
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
		if (rows[r].pos[i])
			put(rows[r].pos[i], ft ? rows[r].valt[i] : rows[r].val[i]);
	return total[i];
}

static void set(unsigned minor, const char *name, uint64_t v)
{
	put(row(name)->pos[minor - DBG_FIRST], v);
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
	for (unsigned minor = DBG_FIRST; minor <= DBG_LAST; minor++) {
		size_t len = build(minor, 0);
		struct tb_layout d = parse_ok(len), b;

		assert_int_equal(len, tb_debug_offsets_size(minor));
		assert_int_equal(tb_layout_builtin((uint32_t)versions[minor - DBG_FIRST], &b), 0);
		/* compare field by field for a useful message, then as a whole */
		expect_equal_layouts(&d, &b);
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
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.15.2");
	EXPECT_VALUES(&l, { "version_hex", 0x030f02f0 }, { "bpf.tstate_thread_id", 176 },
		      { "tstate_native_thread_id", 184 }, { "unicode_compact_data", 56 },
		      { "interp_gc_collecting", 7400 + 112 }, { "gil_locked", 16 }, { "gil_holder", 8 },
		      { "bpf.owner_skip_min", 3 }, { "bpf.owner_cstack", NO }, { "bpf.code_tag_mask", 3 });

	/* 3.15: compactunicodeobject_size is taken from the buffer, not derived */
	set(15, "unicode_object.compactunicodeobject_size", 48);
	l = parse_ok(888);
	assert_int_equal(l.unicode_compact_data, 48);

	build(14, 0);
	l = parse_ok(760);
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.14.10");
	EXPECT_VALUES(&l, { "bpf.frame_owner", 74 }, { "bpf.owner_cstack", 4 },
		      { "interp_gc_collecting", 7408 + 192 });

	/* a bad thread-name field only disables that field */
	build(15, 0);
	set(15, "interpreter_state.imports_modules", 0xffffffffull);
	set(15, "heap_type_object.ht_cached_keys", 100); /* inside the embedded PyTypeObject */
	set(15, "type_object.tp_dictoffset", 289);
	l = parse_ok(888);
	EXPECT_VALUES(&l, { "interp_modules", NO }, { "heaptype_cached_keys", NO }, { "type_dictoffset", NO },
		      { "type_basicsize", 32 }, { "type_flags", 168 });

	/* a longer buffer than needed is fine */
	build(13, 0);
	l = parse_ok(sizeof(buf));
	EXPECT_VALUES(&l, { "bpf.frame_owner", 70 }, { "bpf.code_tag_mask", 0 }, { "unicode_compact_data", 56 });
}

static void test_debug_313t(void **state)
{
	(void)state;
	struct tb_layout l;
	char s[32];

	build(13, 1);
	l = parse_ok(584);
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.13.18t");
	/* every object field 16 bytes further (the free-threaded object header) */
	EXPECT_VALUES(&l, { "free_threaded", 1 }, { "bpf.object_type", 24 }, { "bpf.code_adaptive", 216 },
		      { "bpf.code_firstlineno", 84 }, { "bpf.code_argcount", 68 }, { "bpf.code_version", 108 },
		      { "code_flags", 64 }, { "code_filename", 128 }, { "code_qualname", 144 },
		      { "code_nunits", 32 }, { "code_size", 224 }, { "bytes_sval", 48 },
		      { "unicode_length", 32 }, { "unicode_state", 48 }, { "unicode_ascii_data", 56 },
		      { "unicode_compact_data", 72 }, { "gil_locked", 24 }, { "gil_holder", 16 },
		      { "bpf.frame_owner", 70 }, { "bpf.tstate_frame", 72 }, { "interp_modules", 7664 },
		      { "type_flags", 184 }, { "gil_enabled", 0 }, { "bpf.code_tag_mask", 0 },
		      { "unicode_kind_shift", 2 }, { "unicode_compact_bit", 5 }, { "unicode_ascii_bit", 6 },
		      /* no thread-local bytecode in 3.13t */
		      { "bpf.frame_tlbc_index", NO }, { "bpf.code_tlbc", NO },
		      /* not listed before 3.15: the default build's + 16 */
		      { "type_basicsize", 48 }, { "type_dictoffset", 304 }, { "heaptype_cached_keys", 896 });

	/* free_threaded flag that contradicts the object header */
	build(13, 1);
	put(16, 0);
	parse_bad(584, "free_threaded");
}

/* 3.14t and 3.15t: thread-local bytecode, their own stack-ref tag bits and str state bits
 * (the values of their headers with Py_GIL_DISABLED; no build of them is run here). */
static void test_debug_314t_315t(void **state)
{
	(void)state;
	struct tb_layout l;
	char s[32];

	build(14, 1);
	l = parse_ok(760);
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.14.10t");
	EXPECT_VALUES(&l, { "free_threaded", 1 }, { "bpf.object_type", 24 }, { "bpf.code_adaptive", 232 },
		      { "bpf.frame_owner", 78 }, { "bpf.frame_tlbc_index", 72 }, { "bpf.code_tlbc", 224 },
		      { "bpf.code_tag_mask", 1 }, { "code_size", 240 }, { "code_flags", 64 },
		      { "bpf.code_version", 108 }, { "gil_enabled", 0 }, { "gil_locked", 24 }, { "gil_holder", 16 },
		      { "unicode_kind_shift", 8 }, { "unicode_compact_bit", 11 }, { "unicode_ascii_bit", 12 },
		      { "type_basicsize", 48 }, { "type_dictoffset", 304 }, { "heaptype_cached_keys", 896 });
	assert_int_equal(tb_layout_read_size(&l, TB_READ_FRAME), 79); /* up to the owner byte at 78, tlbc_index (72) within */

	build(15, 1);
	l = parse_ok(888);
	assert_string_equal(tb_layout_version_str(&l, s, sizeof(s)), "3.15.2t");
	EXPECT_VALUES(&l, { "bpf.frame_tlbc_index", 72 }, { "bpf.code_tlbc", 224 }, { "bpf.code_tag_mask", 3 },
		      { "bpf.owner_cstack", NO }, { "unicode_kind_shift", 8 }, { "unicode_compact_data", 72 },
		      /* listed from 3.15 */
		      { "type_basicsize", 48 }, { "type_dictoffset", 304 }, { "heaptype_cached_keys", 904 });

	/* the offsets of thread-local bytecode are required, and checked like every other */
	build(14, 1);
	set(14, "interpreter_frame.tlbc_index", 0);
	parse_bad(760, "interpreter_frame.tlbc_index");
	build(14, 1);
	set(14, "interpreter_frame.tlbc_index", 74);
	parse_bad(760, "aligned");
	build(14, 1);
	set(14, "interpreter_frame.tlbc_index", 200);
	parse_bad(760, "interpreter_frame.tlbc_index");  /* beyond sizeof(_PyInterpreterFrame) */
	build(15, 1);
	set(15, "code_object.co_tlbc", 0xffffffffull);
	parse_bad(888, "code_object.co_tlbc");
	build(15, 1);
	set(15, "code_object.co_tlbc", 0);
	parse_bad(888, "code_object.co_tlbc");
	/* the GIL's enabled flag: inside the GIL struct's first 32 bytes, apart from locked and holder */
	build(14, 1);
	set(14, "interpreter_state.gil_runtime_state_enabled", 24);
	parse_bad(760, "gil_runtime_state_enabled");
	build(14, 1);
	set(14, "interpreter_state.gil_runtime_state_enabled", 2);
	parse_bad(760, "gil_runtime_state_enabled");
	build(14, 1);
	set(14, "interpreter_state.gil_runtime_state_enabled", 1u << 20);
	parse_bad(760, "gil_runtime_state_enabled");
	build(13, 1);
	set(13, "interpreter_state.gil_runtime_state_enabled", 32);
	parse_bad(584, "gil_runtime_state.enabled");   /* does not fit the 32 bytes read */
	/* a default build never reads them */
	build(14, 0);
	set(14, "interpreter_frame.tlbc_index", 0xffffffffull);
	set(14, "interpreter_state.gil_runtime_state_enabled", 0xffffffffull);
	l = parse_ok(760);
	EXPECT_VALUES(&l, { "bpf.frame_tlbc_index", NO }, { "bpf.code_tlbc", NO }, { "gil_enabled", NO });
}

static void test_debug_reject_header(void **state)
{
	(void)state;
	char want[64];

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
	put(8, 0x030000f0u | (TB_PY_MAX_MINOR + 1) << 16);
	snprintf(want, sizeof(want), "3.%d is not supported", TB_PY_MAX_MINOR + 1);
	parse_bad(584, want);
	put(8, 0x040000f0);
	parse_bad(584, "not a CPython 3.x");
	put(8, 0xffffffffffffffffull);
	parse_bad(584, "not a CPython 3.x");
	put(8, 0x030e00a3); /* 3.14.0a3 */
	parse_bad(584, "pre-release");

	build(14, 0);
	put(16, 2);
	parse_bad(760, "free_threaded");
	put(16, 1);   /* a default build's offsets with the t flag: its object header disagrees */
	parse_bad(760, "free_threaded");
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

	for (unsigned minor = DBG_FIRST; minor <= DBG_LAST; minor++) {
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
		unsigned minor = DBG_FIRST + iter % DBG_N;
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
		assert_int_equal(tb_layout_check_reads(&l, NULL, 0), 0);
		for (int b = 0; b < TB_READ_NBUFS; b++)
			assert_true(tb_layout_read_size(&l, (enum tb_read_buf)b) <=
				    tb_layout_read_limit((enum tb_read_buf)b));
	}
}

/* Every built-in and parsed layout fits the read buffers, and the read sizes are the
 * spans of the fields read (what tb_target_to_proc gives the BPF program). */
static void test_reads_fit(void **state)
{
	(void)state;
	struct tb_layout l;
	char err[256];

	for (unsigned minor = TB_PY_MIN_MINOR; minor <= TB_PY_MAX_MINOR; minor++) {
		assert_int_equal(tb_layout_builtin(0x030000f0u | minor << 16, &l), 0);
		if (tb_layout_check_reads(&l, err, sizeof(err)))
			fail_msg("3.%u: %s", minor, err);
		for (int b = 0; b < TB_READ_NBUFS; b++) {
			unsigned size = tb_layout_read_size(&l, (enum tb_read_buf)b);

			assert_true(size <= tb_layout_read_limit((enum tb_read_buf)b));
			assert_true(size > 0 || (b == TB_READ_GIL && minor < 12));
		}
	}
	for (unsigned minor = DBG_FIRST; minor <= DBG_LAST; minor++) {
		l = parse_ok(build(minor, 0));
		assert_int_equal(tb_layout_check_reads(&l, NULL, 0), 0);
	}
	l = parse_ok(build(13, 1));
	assert_int_equal(tb_layout_check_reads(&l, NULL, 0), 0);
	/* 3.13: a thread state up to thread_id (152) + 8, a frame up to owner (70) + 1,
	 * a code object's header up to co_version (92) + 4, for symbolization up to the line table */
	assert_int_equal(tb_layout_builtin(0x030d00f0, &l), 0);
	assert_int_equal(tb_layout_read_size(&l, TB_READ_TSTATE), 168); /* native_thread_id 160 (dump) */
	assert_int_equal(tb_layout_read_size(&l, TB_READ_FRAME), 71);
	assert_int_equal(tb_layout_read_size(&l, TB_READ_CODE_HEAD), 96);
	assert_int_equal(tb_layout_read_size(&l, TB_READ_CODE), 144);
	assert_int_equal(tb_layout_read_size(&l, TB_READ_STR), 64);
	assert_int_equal(tb_layout_read_size(&l, TB_READ_GIL), 20);
	/* 3.10: co_code (a pointer at 48) is read by the BPF program, f_lasti (int at 96) too */
	assert_int_equal(tb_layout_builtin(0x030a00f0, &l), 0);
	assert_int_equal(tb_layout_read_size(&l, TB_READ_FRAME), 104);
	assert_int_equal(tb_layout_read_size(&l, TB_READ_CODE_HEAD), 56);
	assert_int_equal(tb_layout_read_limit(TB_READ_NBUFS), 0);
}

/* A target that rewrites its _Py_DebugOffsets: sizes of 65535 with fields far inside, fields
 * overlapping, fields exactly at the end of what is read. A struct's declared size bounds its
 * offsets, the fixed read buffers bound them too. */
static void test_debug_lying_offsets(void **state)
{
	(void)state;
	static const struct { const char *size, *field; uint64_t size_v, field_v; const char *want; } lies[] = {
		/* the scenario of tests/hostile/run.py: a field inside its declared struct, far beyond the buffer */
		{ "thread_state.size", "thread_state.current_frame", 65535, 65000, "thread_state.current_frame at offset 65000" },
		{ "thread_state.size", "thread_state.thread_id", 65535, 65000, "thread_state.thread_id" },
		{ "thread_state.size", "thread_state.next", 65535, 65520, "thread_state.next" },
		{ "thread_state.size", "thread_state.native_thread_id", 4096, 4088, "thread_state.native_thread_id" },
		{ "thread_state.size", "thread_state.interp", 1024, 256, "thread_state.interp" },
		{ "interpreter_frame.size", "interpreter_frame.previous", 4096, 4000, "interpreter_frame.previous" },
		{ "interpreter_frame.size", "interpreter_frame.owner", 4096, 127, "interpreter_frame.owner at offset 127" },
		{ "interpreter_frame.size", "interpreter_frame.instr_ptr", 4096, 120, "interpreter_frame.instr_ptr" },
		{ "interpreter_frame.size", "interpreter_frame.executable", 256, 248, "interpreter_frame.executable" },
		{ "code_object.size", "code_object.firstlineno", 4096, 4092, "code_object.firstlineno" },
		{ "code_object.size", "code_object.argcount", 4096, 124, "code_object.argcount" },
		{ "code_object.size", "code_object.linetable", 4096, 4000, "code_object.linetable" },
		{ "code_object.size", "code_object.qualname", 4096, 512, "code_object.qualname" },
		{ "unicode_object.size", "unicode_object.state", 4096, 1000, "str fields" },
	};

	for (size_t i = 0; i < N_ITEMS(lies); i++) {
		for (unsigned minor = DBG_FIRST; minor <= DBG_LAST; minor++) {
			size_t len = build(minor, 0);

			set(minor, lies[i].size, lies[i].size_v);
			set(minor, lies[i].field, lies[i].field_v);
			parse_bad(len, lies[i].want);
		}
	}
	/* a str header beyond what pyread.c reads (3.13, 3.14: the compact header follows the ASCII one) */
	build(13, 0);
	set(13, "unicode_object.size", 4096);
	set(13, "unicode_object.asciiobject_size", 200);
	parse_bad(584, "unicode_object.compactunicodeobject_size at offset 216");
	for (unsigned minor = DBG_FIRST; minor <= DBG_LAST; minor++) {
		struct tb_layout l;
		size_t len = build(minor, 0);

		/* a declared size of 65535 alone is no reason to read more */
		set(minor, "thread_state.size", 65535);
		set(minor, "interpreter_frame.size", 4096);
		set(minor, "code_object.size", 4096);
		l = parse_ok(len);
		assert_int_equal(l.code_size, 4096);
		assert_true(tb_layout_read_size(&l, TB_READ_TSTATE) <= 192);
		assert_true(tb_layout_read_size(&l, TB_READ_CODE) <= 160);
		/* fields at the very end of the buffers read (the last aligned place of an 8-byte
		 * field in 255 bytes is 240): accepted, read in full */
		set(minor, "thread_state.current_frame", 240);
		set(minor, "interpreter_frame.owner", 126);
		set(minor, "interpreter_frame.previous", 112);
		l = parse_ok(len);
		assert_int_equal(tb_layout_read_size(&l, TB_READ_TSTATE), 248);
		assert_int_equal(tb_layout_read_size(&l, TB_READ_FRAME), 127);
		/* one byte further: rejected (aligned fields: the next aligned offset) */
		set(minor, "interpreter_frame.owner", 127);
		parse_bad(len, "interpreter_frame.owner at offset 127 (1 bytes) lies beyond the 127 bytes of a frame");
		set(minor, "interpreter_frame.owner", 126);
		set(minor, "thread_state.current_frame", 248);
		parse_bad(len, "thread_state.current_frame at offset 248");
		/* overlapping fields read the same bytes: nothing out of bounds, the walkers cope */
		len = build(minor, 0);
		set(minor, "thread_state.current_frame", 8);
		set(minor, "thread_state.next", 8);
		set(minor, "interpreter_frame.previous", 0);
		set(minor, "code_object.name", 8);
		l = parse_ok(len);
		assert_int_equal(l.bpf.tstate_frame, l.bpf.tstate_next);
		assert_int_equal(l.bpf.frame_previous, l.bpf.frame_code);
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
		cmocka_unit_test(test_versions_table),
		cmocka_unit_test(test_builtin),
		cmocka_unit_test(test_builtin_unsupported),
		cmocka_unit_test(test_debug_offsets_size),
		cmocka_unit_test(test_debug_equals_builtin),
		cmocka_unit_test(test_debug_values),
		cmocka_unit_test(test_debug_313t),
		cmocka_unit_test(test_debug_314t_315t),
		cmocka_unit_test(test_debug_reject_header),
		cmocka_unit_test(test_debug_reject_offsets),
		cmocka_unit_test(test_debug_fuzz),
		cmocka_unit_test(test_reads_fit),
		cmocka_unit_test(test_debug_lying_offsets),
		cmocka_unit_test(test_version_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
