/* test_profile.c: record parsing, stack aggregation, the folded writer,
 * the call tree (per-thread values, pruning) and its JSON export, on
 * synthetic records with pre-registered code objects (no target reads). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "out/format.h"
#include "model/profile.h"
#include "model/tree.h"
#include "helpers.h"

#define PID 4242

static void setup_profile(struct tb_profile *p)
{
	tb_profile_init(p);
	th_add_process(p, PID, "python3.11", NULL, 0x030b02f0);
	p->hz = 100;
	p->min_fraction = 0.001;
	/* code objects: 0x1000 main, 0x2000 work, 0x3000 other (no line table: firstlineno) */
	tb_sym_insert(&p->sym, PID, 0x1000, 1, 11, "main", "/app.py", 10, NULL, 0);
	tb_sym_insert(&p->sym, PID, 0x2000, 2, 11, "work", "/app.py", 20, NULL, 0);
	tb_sym_insert(&p->sym, PID, 0x3000, 3, 11, "Klass.other", "/lib/x.py", 30, NULL, 0);
}

/* a record whose fields a test sets itself */
struct rec {
	struct tb_sample_hdr h;
	struct tb_frame f[4];
};

/* frames given innermost first, as the BPF program sends them */
static void add(struct tb_profile *p, uint32_t tid, int n, const uint64_t *codes, uint64_t count)
{
	th_add_stack(p, PID, tid, n, codes, NULL, count, 0, -1);
}

static char *render(int (*w)(const struct tb_profile *, FILE *), const struct tb_profile *p)
{
	return th_render(w, p, NULL);
}

static void test_malformed_records(void **state)
{
	struct tb_profile p;
	struct rec r;

	(void)state;
	setup_profile(&p);
	memset(&r, 0, sizeof(r));
	r.h.pid = PID;
	r.h.tid = 1;
	assert_int_equal(tb_profile_add_record(&p, &r, 3), -1);            /* shorter than a header */
	r.h.depth = 4;
	assert_int_equal(tb_profile_add_record(&p, &r, sizeof(r.h) + 16), -1); /* depth past the end */
	r.h.depth = TB_MAX_FRAMES + 1;
	assert_int_equal(tb_profile_add_record(&p, &r, sizeof(r)), -1);
	assert_int_equal(p.malformed, 3);
	assert_int_equal(p.samples, 0);
	r.h.depth = 0;
	r.h.flags = TB_F_NO_TSTATE;
	assert_int_equal(tb_profile_add_record(&p, &r, sizeof(r.h)), 0);
	assert_int_equal(p.no_python, 1);
	assert_int_equal(p.python_samples, 0);
	r.h.pid = 999; /* not a registered process: counted, not attributed */
	assert_int_equal(tb_profile_add_record(&p, &r, sizeof(r.h)), 0);
	assert_int_equal(p.samples, 2);
	tb_profile_free(&p);
}

static void test_aggregation_and_folded(void **state)
{
	struct tb_profile p;
	const uint64_t s1[] = { 0x2000, 0x1000 }, s2[] = { 0x3000, 0x1000 };
	char *out;

	(void)state;
	setup_profile(&p);
	add(&p, 1, 2, s1, 5);
	add(&p, 1, 2, s2, 2);
	add(&p, 2, 2, s1, 3);
	assert_int_equal(p.nstacks, 3);
	assert_int_equal(p.python_samples, 10);
	assert_int_equal(p.nthreads, 2);
	out = render(tb_write_folded, &p);
	assert_string_equal(out,
		"python3.11 (pid 4242);thread (tid 1);main (/app.py:10);Klass.other (/lib/x.py:30) 2\n"
		"python3.11 (pid 4242);thread (tid 1);main (/app.py:10);work (/app.py:20) 5\n"
		"python3.11 (pid 4242);thread (tid 2);main (/app.py:10);work (/app.py:20) 3\n");
	free(out);
	tb_profile_free(&p);
}

static void test_folded_hostile_names(void **state)
{
	struct tb_profile p;
	const uint64_t s[] = { 0x9000 };
	char *out;

	(void)state;
	setup_profile(&p);
	tb_sym_insert(&p.sym, PID, 0x9000, 9, 11, "a;b\nc 12", "/x;y.py", 1, NULL, 0);
	add(&p, 1, 1, s, 1);
	out = render(tb_write_folded, &p);
	/* one line, no extra frame separators, count still last */
	assert_string_equal(out, "python3.11 (pid 4242);thread (tid 1);a:b?c 12 (/x:y.py:1) 1\n");
	free(out);
	tb_profile_free(&p);
}

static void test_tree_thread_values(void **state)
{
	struct tb_profile p;
	const uint64_t s[] = { 0x2000, 0x1000 };
	char *json;

	(void)state;
	setup_profile(&p);
	add(&p, 1, 2, s, 2);
	add(&p, 2, 2, s, 3);
	json = render(tb_write_tree_json, &p);
	assert_non_null(strstr(json, "\"name\":\"all\",\"kind\":\"root\",\"value\":5,\"self\":0,"
				     "\"thread_values\":{\"1\":[2,0],\"2\":[3,0]}"));
	assert_non_null(strstr(json, "\"name\":\"work\",\"kind\":\"frame\",\"filename\":\"/app.py\","
				     "\"lineno\":20,\"location\":[20,20,-1,-1],\"lines\":[[20,5,5]],"
				     "\"value\":5,\"self\":5,\"thread_values\":{\"1\":[2,2],\"2\":[3,3]}"));
	assert_non_null(strstr(json, "\"threads\":{\"1\":{\"pid\":4242"));
	free(json);
	tb_profile_free(&p);
}

static void test_prune_keeps_small_thread(void **state)
{
	struct tb_profile p;
	struct tb_tree t;
	const uint64_t big[] = { 0x2000, 0x1000 }, small[] = { 0x3000, 0x1000 };
	int found_small = 0, found_rare = 0;

	(void)state;
	setup_profile(&p);
	add(&p, 1, 2, big, 1998);
	add(&p, 1, 1, (const uint64_t[]){ 0x3000 }, 1); /* rare stack of the big thread */
	add(&p, 2, 2, small, 1);                         /* the whole of thread 2 */
	tb_tree_build(&t, &p, 0);
	tb_tree_prune(&t, 0.001);
	for (uint32_t i = 1; i < t.nn; i++) {
		const struct tb_tnode *x = &t.n[i];

		if (x->kind != TB_N_FRAME || t.funcs.f[x->key].firstlineno != 30)
			continue;
		if (x->parent && t.n[x->parent].kind == TB_N_FRAME) {
			found_small = 1; /* main -> other of thread 2: 1 of its 1 sample */
			assert_false(x->pruned);
			assert_false(t.n[x->parent].pruned);
		} else {
			found_rare = 1; /* 1 of 1999 samples of thread 1: dropped */
			assert_true(x->pruned);
		}
	}
	assert_true(found_small && found_rare);
	/* dropped weight is not lost from parents */
	assert_int_equal(t.n[0].total, 2000);
	tb_tree_free(&t);
	tb_profile_free(&p);
}

static void test_tree_by_line_and_markers(void **state)
{
	struct tb_profile p;
	struct rec r;
	char *json;

	(void)state;
	setup_profile(&p);
	memset(&r, 0, sizeof(r));
	r.h.pid = PID;
	r.h.tid = 7;
	r.h.depth = 1;
	r.h.flags = TB_F_TRUNCATED;
	r.f[0].code = 0x2000;
	r.f[0].code_id = 2;
	r.f[0].offset = -2;
	assert_int_equal(tb_profile_add_record(&p, &r, sizeof(r.h) + sizeof(r.f[0])), 0);
	p.by_line = 1;
	json = render(tb_write_tree_json, &p);
	assert_non_null(strstr(json, "\"name\":\"<truncated>\",\"kind\":\"truncated\",\"value\":1"));
	assert_non_null(strstr(json, "\"by_line\":true"));
	free(json);
	assert_int_equal(p.truncated, 1);
	tb_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed_records),
		cmocka_unit_test(test_aggregation_and_folded),
		cmocka_unit_test(test_folded_hostile_names),
		cmocka_unit_test(test_tree_thread_values),
		cmocka_unit_test(test_prune_keeps_small_thread),
		cmocka_unit_test(test_tree_by_line_and_markers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
