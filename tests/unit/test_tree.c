/* test_tree.c: the call tree's compact storage (model/tree.c): per-thread
 * values kept in the node while it has one thread and in the tree's arena
 * from the second on, and the lines, opcodes and instructions of many nodes
 * growing interleaved in shared arenas (spans that move and grow in place),
 * checked against a plain recount over the stacks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "model/profile.h"
#include "model/tree.h"
#include "helpers.h"

#define PID 4242
#define THREADS 5
#define FUNCS 12
#define STACKS 600

static void build_profile(struct tb_profile *p)
{
	uint64_t rng = 0x243f6a8885a308d3ull;

	tb_profile_init(p);
	th_add_process(p, PID, "python3.11", NULL, 0x030b02f0);
	for (unsigned k = 0; k < FUNCS; k++) {
		char name[16];

		snprintf(name, sizeof(name), "f%u", k);
		tb_sym_insert(&p->sym, PID, 0x1000 * (k + 1), (uint16_t)(k + 1), 11, name, "/app.py",
			      (int32_t)(10 * k + 1), NULL, 0);
	}
	for (unsigned th = 0; th < THREADS; th++)
		tb_profile_add_thread(p, PID, PID + th, PID + th, "t");
	for (unsigned s = 0; s < STACKS; s++) {
		struct tb_sframe f[4];
		uint16_t depth = (uint16_t)(2 + s % 3);

		for (uint16_t d = 0; d < depth; d++) { /* f[depth - 1] the root: few distinct paths */
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			f[depth - 1 - d] = (struct tb_sframe){ (uint32_t)(d == 0 ? 0 : 1 + rng % 4),
							       (int32_t)(2 * (rng >> 20) % 16), 0, 0 };
		}
		f[0].opcode = (uint8_t)(1 + (rng >> 40) % 5);
		f[0].has_opcode = 1;
		/* a thread that only shows up late on nodes that already have others */
		tb_profile_add_stack(p, s < STACKS / 2 ? s % (THREADS - 1) : s % THREADS, 0, f, depth,
				     1 + s % 7);
	}
}

static void test_thread_values_match_recount(void **state)
{
	struct tb_profile p;
	struct tb_tree t;
	uint64_t (*want)[THREADS][2];
	uint32_t (*order)[THREADS], *norder;
	int multi = 0;

	(void)state;
	build_profile(&p);
	tb_tree_build(&t, &p, 0);
	want = calloc(t.nn, sizeof(*want));
	order = calloc(t.nn, sizeof(*order));
	norder = calloc(t.nn, sizeof(*norder));
	assert_non_null(want);
	assert_non_null(order);
	assert_non_null(norder);
	for (uint32_t s = 0; s < p.nstacks; s++) { /* leaf node up to the root */
		const struct tb_stack *st = &p.stacks[s];

		for (uint32_t i = t.leaf_of[s], leaf = 1; i != TB_NO_NODE; i = t.n[i].parent, leaf = 0) {
			uint32_t k = 0;

			if (!want[i][st->thread][0] && !want[i][st->thread][1]) {
				for (k = 0; k < norder[i] && order[i][k] != st->thread; k++)
					;
				if (k == norder[i])
					order[i][norder[i]++] = st->thread;
			}
			want[i][st->thread][0] += st->count;
			want[i][st->thread][1] += leaf && t.n[i].kind == TB_N_FRAME ? st->count : 0;
		}
	}
	for (uint32_t i = 0; i < t.nn; i++) {
		const struct tb_tnode *x = &t.n[i];
		uint64_t iv = 0, ov = 0;

		assert_int_equal(tb_tnode_nthreads(x), norder[i]);
		multi += norder[i] > 1;
		for (uint32_t k = 0; k < norder[i]; k++) {
			struct tb_tval v = tb_tnode_tval(&t, x, k);

			assert_int_equal(v.thread, order[i][k]);
			assert_int_equal(v.samples, want[i][v.thread][0]);
			assert_int_equal(v.self, want[i][v.thread][1]);
		}
		if (x->kind != TB_N_FRAME)
			continue;
		assert_int_equal(x->lv.n, 1); /* no line table: every sample on the first line */
		assert_int_equal(tb_tnode_lines(&t, x)[0].samples, x->total);
		for (uint32_t k = 0; k < x->iv.n; k++)
			iv += tb_tnode_instructions(&t, x)[k].samples;
		for (uint32_t k = 0; k < x->ov.n; k++)
			ov += tb_tnode_opcodes(&t, x)[k].samples;
		assert_int_equal(iv, x->self); /* every leaf sample has its instruction and opcode */
		assert_int_equal(ov, x->self);
	}
	assert_true(multi > 3);
	free(want);
	free(order);
	free(norder);
	tb_tree_free(&t);
	tb_profile_free(&p);
}

/* A node with more children than are looked up by walking its list
 * (TB_TREE_SCAN): the ones added before and after it switches to the index
 * are all found again, none twice, in the order first seen. */
static void test_wide_node(void **state)
{
	struct tb_profile p;
	struct tb_tree t;
	uint32_t f0 = TB_NO_NODE, kids = 0, prev_key = 0;

	(void)state;
	tb_profile_init(&p);
	th_add_process(&p, PID, "python3.11", NULL, 0x030b02f0);
	for (unsigned k = 0; k < 40; k++) {
		char name[16];

		snprintf(name, sizeof(name), "g%u", k);
		tb_sym_insert(&p.sym, PID, 0x1000 * (k + 1), (uint16_t)(k + 1), 11, name, "/w.py",
			      (int32_t)(k + 1), NULL, 0);
	}
	tb_profile_add_thread(&p, PID, PID, PID, "t");
	for (unsigned leaf = 30; leaf < 33; leaf++) /* every middle frame seen in three passes */
		for (unsigned mid = 1; mid <= 3 * TB_TREE_SCAN; mid++) {
			struct tb_sframe f[3] = { { leaf, 0, 0, 0 }, { mid, 0, 0, 0 }, { 0, 0, 0, 0 } };

			tb_profile_add_stack(&p, 0, 0, f, 3, mid);
		}
	tb_tree_build(&t, &p, 0);
	for (uint32_t i = 0; i < t.nn; i++)
		if (t.n[i].kind == TB_N_FRAME && t.n[t.n[i].parent].kind == TB_N_PROCESS)
			f0 = i;
	assert_int_not_equal(f0, TB_NO_NODE);
	assert_int_equal(t.n[f0].total, 3 * (3 * TB_TREE_SCAN) * (3 * TB_TREE_SCAN + 1) / 2);
	for (uint32_t c = t.n[f0].first_child; c != TB_NO_NODE; c = t.n[c].next_sibling, kids++) {
		const struct tb_func *fn = &t.funcs.f[t.n[c].key];

		assert_true(kids == 0 || t.n[c].key > prev_key); /* first seen first, none twice */
		prev_key = t.n[c].key;
		assert_int_equal(t.n[c].total, 3 * (uint64_t)fn->firstlineno - 3);
	}
	assert_int_equal(kids, 3 * TB_TREE_SCAN);
	assert_int_equal(t.nn, 1 + 1 + 1 + 3 * TB_TREE_SCAN * 4);
	tb_tree_free(&t);
	tb_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_values_match_recount),
		cmocka_unit_test(test_wide_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
