/* test_stackcache.c: the raw-stack cache (model/stackcache.c) on its own
 * (hit, miss, stale entries refilled, the caps) and inside a profile: a
 * repeated raw stack is a hit that counts as the first did; what does not
 * decide a stack (the leaf's opcode) still hits; and the cache lets go of
 * what it mapped when stacks are compacted, a code object is forgotten and
 * read again (address reuse), or a process ends and its pid comes back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib/hash.h"
#include "model/profile.h"
#include "helpers.h"

/* pids above any pid_max: nothing on the machine is read for them */
#define PID 5000011u

static const struct tb_sc_value *get(struct tb_stackcache *c, const uint64_t *key, uint32_t n)
{
	return tb_stackcache_get(c, key, n, tb_hash(key, n * sizeof(*key)));
}

static void put(struct tb_stackcache *c, const uint64_t *key, uint32_t n, uint32_t stack)
{
	tb_stackcache_put(c, key, n, tb_hash(key, n * sizeof(*key)), (struct tb_sc_value){ stack, 1, 2 });
}

static void test_cache_alone(void **state)
{
	struct tb_stackcache c;
	const uint64_t a[] = { 1, 2, 3 }, b[] = { 1, 2, 4 }, prefix[] = { 1, 2 };
	const struct tb_sc_value *v;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_null(get(&c, a, 3)); /* empty */
	put(&c, a, 3, 7);
	v = get(&c, a, 3);
	assert_non_null(v);
	assert_int_equal(v->stack, 7);
	assert_int_equal(v->unresolved, 1);
	assert_int_equal(v->kernel, 2);
	assert_null(get(&c, b, 3));      /* one word differs */
	assert_null(get(&c, prefix, 2)); /* a prefix is another key */
	assert_int_equal(c.hits, 1);
	assert_int_equal(c.misses, 3);
	/* invalidated: stale, then refilled in place (no second entry) */
	tb_stackcache_invalidate(&c);
	assert_null(get(&c, a, 3));
	put(&c, a, 3, 9);
	assert_int_equal(c.n, 1);
	assert_int_equal(get(&c, a, 3)->stack, 9);
	tb_stackcache_free(&c);
}

static void test_cache_caps(void **state)
{
	static uint64_t key[2200];
	struct tb_stackcache c;
	uint32_t per = sizeof(key) / sizeof(key[0]);

	(void)state;
	memset(&c, 0, sizeof(c));
	/* past the entry cap: it starts over, and what is put last is there */
	for (uint64_t i = 0; i <= TB_SC_MAX_ENTRIES; i++) {
		key[0] = i;
		put(&c, key, 1, (uint32_t)i);
		assert_true(c.n <= TB_SC_MAX_ENTRIES);
	}
	assert_int_equal(c.restarts, 1);
	assert_int_equal(c.n, 1);
	assert_int_equal(get(&c, key, 1)->stack, TB_SC_MAX_ENTRIES);
	key[0] = 0;
	assert_null(get(&c, key, 1)); /* evicted */
	/* past the word cap: the same */
	for (uint64_t i = 0; i < 2 * TB_SC_MAX_WORDS / per; i++) {
		key[0] = i;
		put(&c, key, per, (uint32_t)i);
		assert_true(c.nwords <= TB_SC_MAX_WORDS);
	}
	assert_true(c.restarts >= 2);
	assert_non_null(get(&c, key, per));
	/* a key longer than the cap is not kept */
	tb_stackcache_put(&c, key, TB_SC_MAX_WORDS + 1, 0, (struct tb_sc_value){ 0, 0, 0 });
	assert_true(c.nwords <= TB_SC_MAX_WORDS);
	tb_stackcache_free(&c);
}

static uint32_t setup(struct tb_profile *p)
{
	tb_profile_init(p);
	th_add_process(p, PID, "python3.12", NULL, 0x030c00f0);
	tb_sym_insert(&p->sym, PID, 0x1000, 1, 12, "main", "/app.py", 10, NULL, 0);
	return tb_sym_insert(&p->sym, PID, 0x2000, 2, 12, "work", "/app.py", 20, NULL, 0);
}

/* n samples of main -> work (leaf at offset `leaf`, opcode) on thread tid */
static void send(struct tb_profile *p, uint32_t tid, int32_t leaf, int opcode, uint64_t n)
{
	const uint64_t codes[] = { 0x2000, 0x1000 };
	const int32_t offsets[] = { leaf, 6 };

	th_add_stack(p, PID, tid, 2, codes, offsets, n, 0, opcode);
}

static void test_profile_hits(void **state)
{
	struct tb_profile p;

	(void)state;
	setup(&p);
	send(&p, PID, 10, 1, 3);
	assert_int_equal(p.nstacks, 1);
	assert_int_equal(p.stacks[0].count, 3);
	assert_int_equal(p.scache.misses, 1);
	assert_int_equal(p.scache.hits, 2);
	/* the leaf's opcode does not decide the stack: a hit, the first one's kept */
	send(&p, PID, 10, 2, 1);
	assert_int_equal(p.scache.hits, 3);
	assert_int_equal(p.stacks[0].count, 4);
	assert_int_equal(tb_stack_frames(&p, &p.stacks[0])[0].opcode, 1);
	/* another offset, thread or flag that makes a stack: misses */
	send(&p, PID, 12, 1, 1);
	send(&p, PID + 1, 10, 1, 1);
	{
		const uint64_t codes[] = { 0x2000, 0x1000 };

		th_add_stack(&p, PID, PID, 2, codes, (const int32_t[]){ 10, 6 }, 2, TB_F_GC, 1);
	}
	assert_int_equal(p.nstacks, 4);
	assert_int_equal(p.scache.misses, 4);
	assert_int_equal(p.stacks[3].count, 2);
	assert_string_equal(tb_str(&p.strs, p.sym.codes[tb_stack_frames(&p, &p.stacks[3])[0].code].qualname),
			    "<GC>");
	assert_int_equal(p.stacks[3].depth, 3); /* <GC> at the leaf */
	assert_int_equal(p.python_samples, 8);
	assert_int_equal(p.frames, 16);
	tb_profile_free(&p);
}

static void test_profile_compaction(void **state)
{
	const struct tb_sframe empty[] = { { 0, 4, 0, 0 } };
	struct tb_profile p;

	(void)state;
	setup(&p);
	tb_profile_add_thread(&p, PID, 99, 99, "other");
	tb_profile_add_stack(&p, 0, 0, empty, 1, 0); /* stack 0, empty */
	send(&p, PID, 10, 1, 1);                     /* stack 1, cached */
	assert_int_equal(p.nstacks, 2);
	tb_profile_drop_empty_stacks(&p);            /* stack 1 is stack 0 now */
	assert_int_equal(p.nstacks, 1);
	send(&p, PID, 10, 1, 2);
	assert_int_equal(p.nstacks, 1);
	assert_int_equal(p.stacks[0].count, 3);
	tb_profile_free(&p);
}

static void test_profile_code_reread(void **state)
{
	struct tb_profile p;
	uint32_t work = setup(&p), reused;

	(void)state;
	send(&p, PID, 10, 1, 2);
	assert_int_equal(tb_stack_frames(&p, &p.stacks[0])[0].code, work);
	/* the process's code objects forgotten, the address read again as another function */
	tb_sym_forget_pid(&p.sym, PID);
	tb_sym_insert(&p.sym, PID, 0x1000, 1, 12, "main", "/app.py", 10, NULL, 0);
	reused = tb_sym_insert(&p.sym, PID, 0x2000, 2, 12, "reused", "/other.py", 5, NULL, 0);
	assert_int_not_equal(reused, work);
	send(&p, PID, 10, 1, 1);
	assert_int_equal(p.nstacks, 2);
	assert_int_equal(tb_stack_frames(&p, &p.stacks[1])[0].code, reused);
	assert_int_equal(p.stacks[0].count, 2);
	assert_int_equal(p.stacks[1].count, 1);
	tb_profile_free(&p);
}

static void test_profile_process_ends(void **state)
{
	struct tb_profile p;

	(void)state;
	setup(&p);
	send(&p, PID, 10, 1, 1);
	/* the pid ends and comes back (exec): a new thread, its own stack */
	tb_profile_process_ended(&p, PID);
	th_add_process(&p, PID, "python3.12", NULL, 0x030c00f0);
	tb_sym_insert(&p.sym, PID, 0x1000, 1, 12, "main", "/app.py", 10, NULL, 0);
	tb_sym_insert(&p.sym, PID, 0x2000, 2, 12, "work", "/app.py", 20, NULL, 0);
	send(&p, PID, 10, 1, 1);
	assert_int_equal(p.nthreads, 2);
	assert_int_equal(p.nstacks, 2);
	assert_int_equal(p.stacks[1].thread, 1);
	assert_int_equal(p.stacks[0].count, 1);
	assert_int_equal(p.stacks[1].count, 1);
	tb_profile_free(&p);
}

/* Many raw stacks, more than the cache holds, each sent twice in two
 * rounds: every count where it belongs, after the cache started over. */
static void test_profile_eviction(void **state)
{
	const uint32_t n = TB_SC_MAX_ENTRIES + 1000;
	struct tb_profile p;

	(void)state;
	setup(&p);
	for (int round = 0; round < 2; round++)
		for (uint32_t i = 0; i < n; i++)
			send(&p, PID, (int32_t)(2 * i), 1, 1);
	assert_int_equal(p.nstacks, n);
	assert_true(p.scache.restarts >= 1);
	assert_true(p.scache.n <= TB_SC_MAX_ENTRIES);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(p.stacks[i].count, 2);
	tb_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_alone),
		cmocka_unit_test(test_cache_caps),
		cmocka_unit_test(test_profile_hits),
		cmocka_unit_test(test_profile_compaction),
		cmocka_unit_test(test_profile_code_reread),
		cmocka_unit_test(test_profile_process_ends),
		cmocka_unit_test(test_profile_eviction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
