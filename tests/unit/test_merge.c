/* test_merge.c: tb_merge, table-driven: 3.10 (one evaluator call per
 * Python frame), 3.11 (is_entry), 3.12-3.15 (entry shims), the innermost
 * evaluator without its frame, a native walk cut short (depth, unknown
 * mapping), a Python walk cut short, counts that disagree, no native walk,
 * no Python frame; then the native code entries (names, function starts,
 * return addresses, plumbing hidden or shown). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "lib/strtab.h"
#include "model/merge.h"

struct merge_case {
	const char *what;
	unsigned minor;
	const char *native;   /* leaf first: n native, E evaluator */
	const char *python;   /* innermost first: p frame, P entry frame */
	uint32_t stop;
	int python_truncated;
	const char *want;     /* nI native word I, pI Python frame I, T / U markers; * between */
	enum tb_merge_verdict verdict;
};

static const struct merge_case cases[] = {
	{ "3.10: each frame its own call", 10, "nEnnEn", "pp", TB_NS_DONE, 0,
	  "n0 p0 n2* n3* p1 n5", TB_MV_MERGED },
	{ "3.11: is_entry ends a segment", 11, "nEnE", "pPpP", TB_NS_DONE, 0,
	  "n0 p0 p1 n2* p2 p3", TB_MV_MERGED },
	{ "3.12+: inlined calls share a segment", 12, "nEnnEn", "ppPP", TB_NS_DONE, 0,
	  "n0 p0 p1 p2 n2* n3* p3 n5", TB_MV_MERGED },
	{ "3.15: the outermost segment", 15, "EnEnn", "pPP", TB_NS_DONE, 0,
	  "p0 p1 n1* p2 n3 n4", TB_MV_MERGED },
	{ "3.11: innermost evaluator without a frame", 11, "EnEnE", "pPP", TB_NS_DONE, 0,
	  "n1 p0 p1 n3* p2", TB_MV_TOLERATED },
	{ "3.10: innermost evaluator without a frame", 10, "EnEnE", "pp", TB_NS_DONE, 0,
	  "n1 p0 n3* p1", TB_MV_TOLERATED },
	{ "native depth reached: the rest after a marker", 10, "nEnE", "pppp", TB_NS_DEPTH, 0,
	  "n0 p0 n2* p1 T p2 p3", TB_MV_TRUNCATED },
	{ "unknown mapping at the leaf", 12, "", "pP", TB_NS_UNKNOWN_MAP, 0,
	  "T p0 p1", TB_MV_TRUNCATED },
	/* issue 27: a leaf before its table is kept, its callers found by frame pointer;
	 * the record says NO_TABLE (partial) whatever ended the walk */
	{ "partial leaf, frame pointers reached every evaluator", 12, "nnEnE", "pPP",
	  TB_NS_NO_TABLE, 0, "n0 n1 p0 p1 n3* p2", TB_MV_MERGED },
	{ "partial leaf, frame pointers skipped an evaluator", 12, "nE", "pPP", TB_NS_NO_TABLE, 0,
	  "n0 p0 p1 T p2", TB_MV_TRUNCATED },
	{ "a walk cut short that matched every evaluator", 11, "nE", "pP", TB_NS_READ, 0,
	  "n0 p0 p1", TB_MV_MERGED },
	{ "an evaluator frame missing from a whole walk", 11, "nEn", "pPpP", TB_NS_DONE, 0,
	  "n0 n1 n2 U p0 p1 p2 p3", TB_MV_UNMERGED },
	{ "evaluator frames without Python frames", 12, "EEE", "P", TB_NS_DONE, 0,
	  "n0 n1 n2 U p0", TB_MV_UNMERGED },
	{ "Python walk cut short: outer evaluators stay", 11, "EnEnE", "pPp", TB_NS_DONE, 1,
	  "p0 p1 n1* p2 n3 n4", TB_MV_MERGED },
	{ "no native walk (tables loading)", 11, "", "pPp", TB_NS_NONE, 0,
	  "p0 p1 p2", TB_MV_PYTHON_ONLY },
	{ "no Python frame (a C thread)", 11, "nnE", "", TB_NS_DONE, 0,
	  "n0 n1 n2", TB_MV_NATIVE_ONLY },
	{ "3.10 deep: two evaluators for five frames, depth reached", 10, "EnnEnn", "ppppp",
	  TB_NS_DEPTH, 0, "p0 n1* n2* p1 n4* n5* T p2 p3 p4", TB_MV_TRUNCATED },
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
			at += (size_t)snprintf(out + at, len - at, "%sn%u%s", sep, it[i].index,
					       it[i].between ? "*" : "");
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
};

static int fake_find(void *ctx, uint32_t pid, uint64_t pc, struct tb_native_place *out)
{
	struct fake_place *f = ctx;

	if (pid != 7 || pc < 0x10000 || pc >= 0x20000)
		return -1;
	out->module = f->syms.module;
	out->syms = &f->syms;
	out->file_id = 3;
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
	a = tb_native_code(&c, &sym, 7, 0x10140, 0, &off);
	assert_true(a >= 0);
	assert_int_equal(off, 0x40);
	b = tb_native_code(&c, &sym, 7, 0x10180 | TB_NF_RA, 0, &off); /* call at 0x17f */
	assert_int_equal(b, a);
	assert_string_equal(tb_str(&strs, sym.codes[a].qualname), "leaf_fn");
	assert_string_equal(tb_str(&strs, sym.codes[a].filename), "libpython3.11.so.1.0");
	assert_int_equal(sym.codes[a].kind, TB_CODE_NATIVE);
	/* stripped code: the FDE's start names it */
	d = tb_native_code(&c, &sym, 7, 0x10310, 0, &off);
	assert_true(d >= 0 && d != a);
	assert_string_equal(tb_str(&strs, sym.codes[d].qualname), "libpython3.11.so.1.0+0x300");
	assert_int_equal(off, 0x10);
	/* plumbing of the interpreter: hidden; unnamed code only between Python frames */
	assert_int_equal(tb_native_code(&c, &sym, 7, 0x10210, 0, &off), -1);
	assert_int_equal(tb_native_code(&c, &sym, 7, 0x10310, 1, &off), -1);
	assert_int_equal(c.stats.hidden, 2);
	c.show_all = 1;
	e = tb_native_code(&c, &sym, 7, 0x10210, 0, &off);
	assert_true(e >= 0);
	assert_string_equal(tb_str(&strs, sym.codes[e].qualname), "PyObject_Vectorcall");
	/* not the interpreter's file: never hidden */
	c.show_all = 0;
	place.interp = 0;
	assert_int_equal(tb_native_code(&c, &sym, 7, 0x10210, 1, &off), e);
	/* no mapping */
	a = tb_native_code(&c, &sym, 8, 0x10210, 0, &off);
	assert_string_equal(tb_str(&strs, sym.codes[a].qualname), "[unknown]");
	assert_int_equal(c.stats.unknown, 1);

	tb_native_codes_free(&c);
	tb_sym_free(&sym);
	tb_strtab_free(&strs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_native_codes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
