/* test_merge.c: tb_merge, table-driven: 3.10 (one evaluator call per
 * Python frame), 3.11 (is_entry), 3.12-3.15 (entry shims), the innermost
 * evaluator without its frame, a native walk cut short (depth, unknown
 * mapping), a Python walk cut short, counts that disagree, no native walk,
 * no Python frame; then the native code entries (names, function starts,
 * return addresses, plumbing hidden or shown), each version's list of call
 * plumbing (cpython/plumbing.c), and a py -> C -> py sandwich on a stripped
 * 3.15 (the C part, unnamed, stays between the two Python frames). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "lib/strtab.h"
#include "model/merge.h"
#include "cpython/plumbing.h"
#include "cpython/versions.h"

struct merge_case {
	const char *what;
	unsigned minor;
	const char *native;   /* leaf first: n native, E evaluator */
	const char *python;   /* innermost first: p frame, P entry frame */
	uint32_t stop;
	int python_truncated;
	const char *want;     /* nI native word I, pI Python frame I, T / U markers */
	enum tb_merge_verdict verdict;
};

static const struct merge_case cases[] = {
	{ "3.10: each frame its own call", 10, "nEnnEn", "pp", TB_NS_DONE, 0,
	  "n0 p0 n2 n3 p1 n5", TB_MV_MERGED },
	{ "3.11: is_entry ends a segment", 11, "nEnE", "pPpP", TB_NS_DONE, 0,
	  "n0 p0 p1 n2 p2 p3", TB_MV_MERGED },
	{ "3.12+: inlined calls share a segment", 12, "nEnnEn", "ppPP", TB_NS_DONE, 0,
	  "n0 p0 p1 p2 n2 n3 p3 n5", TB_MV_MERGED },
	{ "3.15: the outermost segment", 15, "EnEnn", "pPP", TB_NS_DONE, 0,
	  "p0 p1 n1 p2 n3 n4", TB_MV_MERGED },
	{ "3.11: innermost evaluator without a frame", 11, "EnEnE", "pPP", TB_NS_DONE, 0,
	  "n1 p0 p1 n3 p2", TB_MV_TOLERATED },
	{ "3.10: innermost evaluator without a frame", 10, "EnEnE", "pp", TB_NS_DONE, 0,
	  "n1 p0 n3 p1", TB_MV_TOLERATED },
	{ "native depth reached: the rest after a marker", 10, "nEnE", "pppp", TB_NS_DEPTH, 0,
	  "n0 p0 n2 p1 T p2 p3", TB_MV_TRUNCATED },
	{ "unknown mapping at the leaf", 12, "", "pP", TB_NS_UNKNOWN_MAP, 0,
	  "T p0 p1", TB_MV_TRUNCATED },
	/* issue 27: a leaf before its table is kept, its callers found by frame pointer;
	 * the record says NO_TABLE (partial) whatever ended the walk */
	{ "partial leaf, frame pointers reached every evaluator", 12, "nnEnE", "pPP",
	  TB_NS_NO_TABLE, 0, "n0 n1 p0 p1 n3 p2", TB_MV_MERGED },
	{ "partial leaf, frame pointers skipped an evaluator", 12, "nE", "pPP", TB_NS_NO_TABLE, 0,
	  "n0 p0 p1 T p2", TB_MV_TRUNCATED },
	{ "a walk cut short that matched every evaluator", 11, "nE", "pP", TB_NS_READ, 0,
	  "n0 p0 p1", TB_MV_MERGED },
	{ "an evaluator frame missing from a whole walk", 11, "nEn", "pPpP", TB_NS_DONE, 0,
	  "n0 n1 n2 U p0 p1 p2 p3", TB_MV_UNMERGED },
	{ "evaluator frames without Python frames", 12, "EEE", "P", TB_NS_DONE, 0,
	  "n0 n1 n2 U p0", TB_MV_UNMERGED },
	{ "Python walk cut short: outer evaluators stay", 11, "EnEnE", "pPp", TB_NS_DONE, 1,
	  "p0 p1 n1 p2 n3 n4", TB_MV_MERGED },
	{ "no native walk (tables loading)", 11, "", "pPp", TB_NS_NONE, 0,
	  "p0 p1 p2", TB_MV_PYTHON_ONLY },
	{ "no Python frame (a C thread)", 11, "nnE", "", TB_NS_DONE, 0,
	  "n0 n1 n2", TB_MV_NATIVE_ONLY },
	{ "3.10 deep: two evaluators for five frames, depth reached", 10, "EnnEnn", "ppppp",
	  TB_NS_DEPTH, 0, "p0 n1 n2 p1 n4 n5 T p2 p3 p4", TB_MV_TRUNCATED },
};

static void render(const struct tb_merge_item *it, uint32_t n, char *out, size_t len)
{
	size_t at = 0;

	out[0] = '\0';
	for (uint32_t i = 0; i < n && at < len; i++) {
		const char *sep = i ? " " : "";

		switch (it[i].kind) {
		case TB_MI_PYTHON:
			at += (size_t)snprintf(out + at, len - at, "%sp%u", sep, it[i].index);
			break;
		case TB_MI_NATIVE:
			at += (size_t)snprintf(out + at, len - at, "%sn%u", sep, it[i].index);
			break;
		case TB_MI_TRUNCATED:
			at += (size_t)snprintf(out + at, len - at, "%sT", sep);
			break;
		default:
			at += (size_t)snprintf(out + at, len - at, "%sU", sep);
		}
	}
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct merge_case *k = &cases[c];
		uint64_t words[64];
		struct tb_frame frames[64];
		struct tb_merge_item items[130];
		struct tb_merge_in in = { words, (uint32_t)strlen(k->native), k->stop, frames,
					  (uint32_t)strlen(k->python), k->python_truncated, k->minor };
		enum tb_merge_verdict v = TB_MV_MAX;
		char got[512];
		uint32_t n;

		memset(frames, 0, sizeof(frames));
		for (uint32_t i = 0; i < in.nwords; i++)
			words[i] = (0x400000 + 16 * i) | TB_NF_RA | (k->native[i] == 'E' ? TB_NF_EVAL : 0);
		for (uint32_t i = 0; i < in.nframes; i++) {
			frames[i].code = 0x1000 * (i + 1);
			frames[i].flags = k->python[i] == 'P' ? TB_FF_ENTRY : 0;
		}
		n = tb_merge(&in, items, &v);
		assert_true(n <= in.nwords + in.nframes + 1);
		render(items, n, got, sizeof(got));
		if (strcmp(got, k->want) || v != k->verdict)
			fail_msg("%s: got \"%s\" (%s), want \"%s\" (%s)", k->what, got,
				 tb_merge_verdict_names[v], k->want, tb_merge_verdict_names[k->verdict]);
	}
}

/* ---- native code entries ---- */

struct fake_place {
	struct tb_nsym_file syms;
	int interp;
	uint64_t file_id;
};

static int fake_find(void *ctx, uint32_t pid, uint64_t pc, struct tb_native_place *out)
{
	struct fake_place *f = ctx;

	if (pid != 7 || pc < 0x10000 || pc >= 0x20000)
		return -1;
	out->module = f->syms.module;
	out->syms = &f->syms;
	out->file_id = f->file_id ? f->file_id : 3;
	out->vaddr = pc - 0x10000;    /* bias 0x10000 */
	out->interp = f->interp;
	return 0;
}

static void test_native_codes(void **state)
{
	static struct tb_nsym syms[] = {
		{ 0x100, 0x180, 0, 0 },     /* leaf_fn */
		{ 0x200, 0x240, 8, 0 },     /* PyObject_Vectorcall */
	};
	static char names[] = "leaf_fn\0PyObject_Vectorcall";
	static struct tb_code_range fdes[] = { { 0x100, 0x180 }, { 0x200, 0x240 }, { 0x300, 0x3a0 } };
	struct fake_place place;
	struct tb_native_resolver res = { &place, fake_find };
	struct tb_strtab strs;
	struct tb_symbolizer sym;
	struct tb_native_codes c;
	int32_t off;
	int64_t a, b, d, e;

	(void)state;
	memset(&place, 0, sizeof(place));
	snprintf(place.syms.module, sizeof(place.syms.module), "libpython3.11.so.1.0");
	place.syms.syms = syms;
	place.syms.nsyms = 2;
	place.syms.names = names;
	place.syms.fdes = fdes;
	place.syms.nfdes = 3;
	place.interp = 1;
	tb_strtab_init(&strs);
	tb_sym_init(&sym, &strs);
	memset(&c, 0, sizeof(c));
	c.resolver = &res;

	/* a leaf pc and a return address in one function: one code */
	a = tb_native_code(&c, &sym, 7, 0x10140, 11, &off);
	assert_true(a >= 0);
	assert_int_equal(off, 0x40);
	b = tb_native_code(&c, &sym, 7, 0x10180 | TB_NF_RA, 11, &off); /* call at 0x17f */
	assert_int_equal(b, a);
	assert_string_equal(tb_str(&strs, sym.codes[a].qualname), "leaf_fn");
	assert_string_equal(tb_str(&strs, sym.codes[a].filename), "libpython3.11.so.1.0");
	assert_int_equal(sym.codes[a].kind, TB_CODE_NATIVE);
	/* stripped code: the FDE's start names it */
	d = tb_native_code(&c, &sym, 7, 0x10310, 11, &off);
	assert_true(d >= 0 && d != a);
	assert_string_equal(tb_str(&strs, sym.codes[d].qualname), "libpython3.11.so.1.0+0x300");
	assert_int_equal(off, 0x10);
	/* plumbing of the interpreter: hidden (by name, on its version's list); an
	 * unnamed function never, not even between Python frames */
	assert_int_equal(tb_native_code(&c, &sym, 7, 0x10210, 11, &off), -1);
	assert_int_equal(tb_native_code(&c, &sym, 7, 0x10310, 11, &off), d);
	assert_int_equal(c.stats.hidden, 1);
	c.show_all = 1;
	e = tb_native_code(&c, &sym, 7, 0x10210, 11, &off);
	assert_true(e >= 0);
	assert_string_equal(tb_str(&strs, sym.codes[e].qualname), "PyObject_Vectorcall");
	assert_int_equal(c.stats.hidden, 1);
	c.show_all = 0;
	assert_int_equal(tb_native_code(&c, &sym, 7, 0x10210, 11, &off), -1);
	/* not the interpreter's file: its PyObject_Vectorcall is not hidden */
	place.interp = 0;
	place.file_id = 4;
	a = tb_native_code(&c, &sym, 7, 0x10210, 11, &off);
	assert_true(a >= 0 && a != e);
	assert_string_equal(tb_str(&strs, sym.codes[a].qualname), "PyObject_Vectorcall");
	/* no mapping */
	a = tb_native_code(&c, &sym, 8, 0x10210, 11, &off);
	assert_string_equal(tb_str(&strs, sym.codes[a].qualname), "[unknown]");
	assert_int_equal(c.stats.unknown, 1);

	tb_native_codes_free(&c);
	tb_sym_free(&sym);
	tb_strtab_free(&strs);
}

/* ---- each version's call plumbing ---- */

static void test_plumbing_lists(void **state)
{
	static const struct {
		const char *name;
		unsigned minor;
		int plumbing;
	} cases[] = {
		/* 3.15's StackRef helpers of CALL, in both spellings; not before 3.15 */
		{ "_Py_VectorCall_StackRefSteal", 15, 1 },
		{ "_Py_VectorCallInstrumentation_StackRefSteal", 15, 1 },
		{ "_Py_BuiltinCallFastWithKeywords_StackRef", 15, 1 },
		{ "_Py_BuiltinCallFastWithKeywords_StackRefSteal", 15, 1 },
		{ "_Py_BuiltinCallFast_StackRef", 15, 1 },
		{ "_Py_CallBuiltinClass_StackRef", 15, 1 },
		{ "_PyCallMethodDescriptorFast_StackRef", 15, 1 },
		{ "_PyCallMethodDescriptorFastWithKeywords_StackRefSteal", 15, 1 },
		{ "_Py_VectorCall_StackRefSteal", 14, 0 },
		{ "_Py_BuiltinCallFast_StackRef", 13, 0 },
		/* every version */
		{ "PyObject_Vectorcall", 10, 1 }, { "PyObject_Vectorcall", 15, 1 },
		{ "_PyFunction_Vectorcall", 12, 1 }, { "cfunction_vectorcall_O", 11, 1 },
		{ "method_vectorcall_FASTCALL_KEYWORDS", 15, 1 }, { "PyObject_CallOneArg", 14, 1 },
		/* debug files' names of local functions: the clone suffix is not the name */
		{ "cfunction_vectorcall_O.lto_priv.0", 11, 1 }, { "do_call_core.isra.0", 12, 1 },
		{ "list_sort_impl.lto_priv.0", 11, 0 }, { "call_functions", 10, 0 },
		/* per version: ceval.c's helpers of their time */
		{ "call_function", 10, 1 }, { "call_function", 11, 0 },
		{ "do_call_core", 12, 1 }, { "do_call_core", 13, 0 },
		{ "_PyEvalFramePushAndInit", 13, 1 }, { "_PyEvalFramePushAndInit", 11, 0 },
		/* exact names are not prefixes; the C work of a call is not plumbing */
		{ "PyObject_CallFinalizerFromDealloc", 15, 0 }, { "PyObject_Calloc", 15, 0 },
		{ "PyObject_VectorcallDictX", 15, 0 },
		{ "builtin_sorted", 15, 0 }, { "list_sort_impl", 15, 0 }, { "_PyEval_EvalFrameDefault", 15, 0 },
		{ "", 15, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (tb_plumbing_has(tb_plumbing_of(cases[i].minor), cases[i].name) != cases[i].plumbing)
			fail_msg("3.%u %s: want %s", cases[i].minor, cases[i].name,
				 cases[i].plumbing ? "plumbing" : "not plumbing");
	/* one list per supported version, none outside */
	for (unsigned m = TB_PY_MIN_MINOR; m <= TB_PY_MAX_MINOR; m++)
		assert_non_null(tb_plumbing_of(m));
	assert_null(tb_plumbing_of(TB_PY_MIN_MINOR - 1));
	assert_null(tb_plumbing_of(TB_PY_MAX_MINOR + 1));
	assert_int_equal(tb_plumbing_has(NULL, "PyObject_Vectorcall"), 0);
	assert_int_equal(tb_plumbing_has(tb_plumbing_of(15), NULL), 0);
}

/* sorted(xs, key=keyfunc) in sort_loop on a stripped 3.15: builtin_sorted and
 * list_sort_impl have no names (static), the calls around them are exported
 * plumbing.  Addresses: the ELF vaddrs of the fake python3.15 (bias 0x10000). */
static void test_sandwich(void **state)
{
	static struct tb_nsym syms[] = {
		{ 0x1000, 0x2000, 0, 0 },   /* _PyEval_EvalFrameDefault */
		{ 0x2000, 0x2100, 25, 0 },  /* _Py_VectorCall_StackRefSteal */
		{ 0x2100, 0x2180, 54, 0 },  /* PyObject_CallOneArg */
		{ 0x2180, 0x2200, 74, 0 },  /* _PyFunction_Vectorcall */
		{ 0x7000, 0x7100, 97, 0 },  /* Py_RunMain */
	};
	static char names[] = "_PyEval_EvalFrameDefault\0_Py_VectorCall_StackRefSteal\0PyObject_CallOneArg\0"
			      "_PyFunction_Vectorcall\0Py_RunMain";
	static struct tb_code_range fdes[] = {
		{ 0x1000, 0x2000 }, { 0x2000, 0x2100 }, { 0x2100, 0x2180 }, { 0x2180, 0x2200 },
		{ 0x3000, 0x3400 },         /* builtin_sorted, stripped */
		{ 0x4000, 0x4800 },         /* list_sort_impl, stripped */
		{ 0x7000, 0x7100 },
	};
	/* leaf first: keyfunc's evaluator, the call into it, list_sort_impl,
	 * builtin_sorted, the CALL helper, sort_loop's evaluator, main */
	static const uint64_t words[] = {
		0x11100 | TB_NF_EVAL, 0x121a0 | TB_NF_RA, 0x12150 | TB_NF_RA, 0x14400 | TB_NF_RA,
		0x13200 | TB_NF_RA, 0x12050 | TB_NF_RA, 0x11800 | TB_NF_RA | TB_NF_EVAL, 0x17050 | TB_NF_RA,
	};
	/* keyfunc (entered from C), sort_loop, <module> (entered from C) */
	static const struct tb_frame frames[] = {
		{ 0xa000, 10, 1, 0, TB_FF_ENTRY }, { 0xb000, 20, 2, 0, 0 }, { 0xc000, 30, 3, 0, TB_FF_ENTRY },
	};
	struct fake_place place;
	struct tb_native_resolver res = { &place, fake_find };
	struct tb_strtab strs;
	struct tb_symbolizer sym;
	struct tb_native_codes c;
	struct tb_merge_item items[32];
	enum tb_merge_verdict v;
	char got[512];

	(void)state;
	for (int all = 0; all < 2; all++) {
		const struct tb_merge_in in = { words, 8, TB_NS_DONE, frames, 3, 0, 15 };
		uint32_t n = tb_merge(&in, items, &v);
		size_t at = 0;

		memset(&place, 0, sizeof(place));
		snprintf(place.syms.module, sizeof(place.syms.module), "python3.15");
		place.syms.syms = syms;
		place.syms.nsyms = 5;
		place.syms.names = names;
		place.syms.fdes = fdes;
		place.syms.nfdes = 7;
		place.interp = 1;
		tb_strtab_init(&strs);
		tb_sym_init(&sym, &strs);
		memset(&c, 0, sizeof(c));
		c.resolver = &res;
		c.show_all = all;
		assert_int_equal(v, TB_MV_MERGED);
		got[0] = '\0';
		for (uint32_t i = 0; i < n && at < sizeof(got); i++) {
			int32_t off;
			int64_t code;

			if (items[i].kind == TB_MI_PYTHON) {
				at += (size_t)snprintf(got + at, sizeof(got) - at, "%sp%u", at ? ";" : "", items[i].index);
				continue;
			}
			assert_int_equal(items[i].kind, TB_MI_NATIVE);
			code = tb_native_code(&c, &sym, 7, words[items[i].index], 15, &off);
			if (code >= 0)
				at += (size_t)snprintf(got + at, sizeof(got) - at, "%s%s", at ? ";" : "",
						       tb_str(&strs, sym.codes[code].qualname));
		}
		if (!all)
			assert_string_equal(got, "p0;python3.15+0x4000;python3.15+0x3000;p1;p2;Py_RunMain");
		else
			assert_string_equal(got, "p0;_PyFunction_Vectorcall;PyObject_CallOneArg;python3.15+0x4000;"
					    "python3.15+0x3000;_Py_VectorCall_StackRefSteal;p1;p2;Py_RunMain");
		assert_int_equal(c.stats.hidden, all ? 0 : 3);
		tb_native_codes_free(&c);
		tb_sym_free(&sym);
		tb_strtab_free(&strs);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_native_codes),
		cmocka_unit_test(test_plumbing_lists),
		cmocka_unit_test(test_sandwich),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
