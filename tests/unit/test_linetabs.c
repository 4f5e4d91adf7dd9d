/* test_linetabs.c: cmocka tests of user/model/linetabs.c (one copy and one index per distinct
 * line table, budgets in total and per process) and of its use by user/model/symbolize.c:
 * code objects read from this test's own memory (fake 3.11 objects, through process_vm_readv)
 * or inserted as from a capture file share one copy, over the budget they keep their first
 * line only and are counted, and every location equals the direct decoder's; a code object
 * freed since its sample (the allocator's words over ob_refcnt and ob_type, its fields its
 * own) is read when its code id matches, not when it does not. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cpython/linetable.h"
#include "model/linetabs.h"
#include "model/profile.h"
#include "model/symbolize.h"
#include "output/tbp.h"

/* CPython 3.11 co_linetable of a 5-line function whose def is on line 3 (test_capture.c) */
static const unsigned char LT311[] = {
	0x80, 0x00, 0xd8, 0x04, 0x08, 0x80, 0x01, 0xd8, 0x04, 0x08, 0x80, 0x01, 0xd8, 0x04, 0x08,
	0x80, 0x01, 0xd8, 0x04, 0x08, 0x80, 0x01, 0xd8, 0x04, 0x08, 0x88, 0x01,
};

static uint32_t rng = 0x2468ace1;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static void test_dedupe(void **state)
{
	struct tb_linetabs t;
	unsigned char copy[sizeof(LT311)], other[sizeof(LT311)];
	uint64_t kept_a = 0, kept_b = 0;
	uint32_t a, b, c, d;

	(void)state;
	tb_linetabs_init(&t);
	memcpy(copy, LT311, sizeof(copy));
	memcpy(other, LT311, sizeof(other));
	other[sizeof(other) - 1] ^= 1;
	a = tb_linetabs_add(&t, 11, LT311, sizeof(LT311), &kept_a);
	b = tb_linetabs_add(&t, 13, copy, sizeof(copy), &kept_b);   /* same bytes, same format */
	c = tb_linetabs_add(&t, 11, other, sizeof(other), &kept_b); /* one byte differs */
	d = tb_linetabs_add(&t, 10, LT311, sizeof(LT311), &kept_b); /* another format */
	assert_true(a > 0);
	assert_int_equal(a, b);
	assert_true(c != a && d != a && d != c);
	assert_int_equal(t.n, 3);
	assert_true(kept_a >= sizeof(LT311));
	assert_int_equal(kept_a + kept_b, t.kept);   /* the copy found cost process b nothing */
	assert_ptr_not_equal(tb_linetabs_get(&t, a)->bytes, LT311);
	assert_memory_equal(tb_linetabs_get(&t, a)->bytes, LT311, sizeof(LT311));
	assert_null(tb_linetabs_get(&t, 0));
	assert_null(tb_linetabs_get(&t, 4));
	assert_int_equal(tb_linetabs_add(&t, 11, LT311, 0, NULL), 0);
	assert_int_equal(tb_linetabs_add(&t, 11, NULL, 5, NULL), 0);
	tb_linetabs_free(&t);
}

static void test_budgets(void **state)
{
	struct tb_linetabs t;
	unsigned char tab[4000];
	uint64_t p1 = 0, p2 = 0;
	uint32_t first, id;
	int n1 = 0;

	(void)state;
	tb_linetabs_init(&t);
	t.total_budget = 50000;
	t.process_budget = 20000;
	memset(tab, 0x80, sizeof(tab));
	/* process 1 adds distinct tables until its budget is spent */
	for (int i = 0; i < 100; i++) {
		tab[0] = (unsigned char)i;
		id = tb_linetabs_add(&t, 11, tab, sizeof(tab), &p1);
		if (!i)
			first = id;
		if (!id)
			break;
		n1++;
	}
	assert_int_equal(n1, 4);       /* 4 * (4000 + 63 * 40 index bytes at most) <= 20000 */
	assert_true(p1 <= 20000);
	/* past its budget a process still shares what is kept */
	tab[0] = 0;
	assert_int_equal(tb_linetabs_add(&t, 11, tab, sizeof(tab), &p1), first);
	/* another process has a budget of its own, the total caps both */
	for (int i = 100; i < 200; i++) {
		tab[0] = (unsigned char)i;
		if (!tb_linetabs_add(&t, 11, tab, sizeof(tab), &p2))
			break;
	}
	assert_true(p2 <= 20000 && p1 + p2 == t.kept);
	for (int i = 200; i < 256; i++) {
		tab[0] = (unsigned char)i;
		tb_linetabs_add(&t, 11, tab, sizeof(tab), NULL);
	}
	assert_true(t.kept <= 50000);
	assert_true(t.kept > 50000 - 4000 - 63 * 40);
	tb_linetabs_free(&t);
}

/* Random tables, shared by code objects of random co_firstlineno: every location looked
 * up through the store equals the direct decoder's. */
static void test_lookups(void **state)
{
	static unsigned char tab[3000];
	struct tb_linetabs t;

	(void)state;
	tb_linetabs_init(&t);
	for (int round = 0; round < 60; round++) {
		size_t len = 1 + rnd() % sizeof(tab);
		int minor = 10 + round % 6;

		for (size_t i = 0; i < len; i++)
			tab[i] = (unsigned char)(rnd() % 2 ? 0x80 | (rnd() & 0x7f) : rnd() & 0x3f);
		uint32_t id = tb_linetabs_add(&t, minor, tab, (uint32_t)len, NULL);
		assert_true(id > 0);
		for (int k = 0; k < 4; k++) {
			int first = (int)(rnd() % 100000) - 50;

			for (int addr = -2; addr < (int)len * 8; addr += 2) {
				struct tb_location want, got;
				int rc = tb_linetable_lookup(minor, tab, len, first, addr, &want);

				assert_int_equal(tb_linetabs_lookup(&t, id, first, addr, &got), rc);
				assert_memory_equal(&got, &want, sizeof(got));
			}
		}
	}
	tb_linetabs_free(&t);
}

/* ------------------------------------------------ through the symbolizer */

/* Fake 3.11 objects in this process: a str, a bytes object, code objects (layout: versions.c). */
struct fake_str {
	_Alignas(8) unsigned char hdr[48];
	char text[64];
};

struct fake_bytes {
	_Alignas(8) unsigned char hdr[32];
	unsigned char sval[];
};

static void put(unsigned char *b, unsigned off, uint64_t v, unsigned width)
{
	memcpy(b + off, &v, width);
}

static void fake_str(struct fake_str *s, const char *text)
{
	memset(s, 0, sizeof(*s));
	put(s->hdr, 16, strlen(text), 8);                    /* length */
	put(s->hdr, 32, 1u << 2 | 1u << 5 | 1u << 6, 4);     /* kind 1, compact, ascii */
	strcpy(s->text, text);
}

static uint64_t addr_of(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* 1800 code objects sharing one 1 MiB line table (the hostile scenario, in miniature for
 * the process budget): one copy; a lowered budget drops the tables of the rest. */
static void test_symbolizer_shared(void **state)
{
	enum { N = 1800, BIG = 1 << 20 };
	struct tb_layout l;
	struct tb_strtab strs;
	struct tb_symbolizer s;
	struct fake_str name, file;
	struct fake_bytes *big = calloc(1, sizeof(*big) + BIG), *small = calloc(1, sizeof(*small) + sizeof(LT311));
	unsigned char (*code)[256] = calloc(N, 256);
	struct tb_location loc;

	(void)state;
	assert_int_equal(tb_layout_builtin(0x030b02f0, &l), 0);
	fake_str(&name, "f");
	fake_str(&file, "file.py");
	put(big->hdr, 16, BIG, 8);
	for (int i = 0; i < BIG; i++)
		big->sval[i] = (unsigned char)(i % 251);
	put(small->hdr, 16, sizeof(LT311), 8);
	memcpy(small->sval, LT311, sizeof(LT311));
	for (int i = 0; i < N; i++) {
		put(code[i], l.code_firstlineno, 3 + (unsigned)i, 4);
		put(code[i], l.code_qualname, addr_of(&name), 8);
		put(code[i], l.code_filename, addr_of(&file), 8);
		put(code[i], l.code_linetable, addr_of(i % 2 ? big : small), 8);
	}
	tb_strtab_init(&strs);
	tb_sym_init(&s, &strs);
	for (int i = 0; i < N; i++) {
		uint32_t idx = tb_sym_code(&s, getpid(), &l, 0, addr_of(code[i]), tb_code_id(3 + (unsigned)i, 0, 0));

		assert_true(s.codes[idx].resolved);
		assert_int_equal(s.codes[idx].linetable_len, i % 2 ? BIG : sizeof(LT311));
	}
	assert_int_equal(s.tables.n, 2);
	assert_true(s.tables.kept < BIG + 64 * 1024);
	assert_int_equal(s.lines_dropped, 0);
	/* the small table in code 2 (firstlineno 5), code 4 (7): lines follow co_firstlineno */
	tb_sym_location(&s, 2, 2, &loc);
	assert_int_equal(loc.line, 5 + 1);
	tb_sym_location(&s, 4, 2, &loc);
	assert_int_equal(loc.line, 7 + 1);
	assert_ptr_equal(s.codes[2].linetable, s.codes[4].linetable);
	tb_sym_free(&s);

	/* a process budget below the big table: it is never kept, its codes show their first line */
	tb_sym_init(&s, &strs);
	s.tables.process_budget = BIG / 2;
	for (int i = 0; i < 10; i++)
		tb_sym_code(&s, getpid(), &l, 0, addr_of(code[i]), tb_code_id(3 + (unsigned)i, 0, 0));
	assert_int_equal(s.lines_dropped, 5);
	assert_null(s.codes[1].linetable);
	tb_sym_location(&s, 1, 2, &loc);
	assert_int_equal(loc.line, 4);
	tb_sym_location(&s, 2, 2, &loc);
	assert_int_equal(loc.line, 6);
	/* a forgotten pid's budget goes with it */
	assert_true(s.pids[0].lines_kept > 0);
	tb_sym_forget_pid(&s, getpid());
	assert_int_equal(s.pids[0].lines_kept, 0);
	tb_sym_free(&s);

	/* capture files: copies inserted are deduplicated too, the total budget applies */
	tb_sym_init(&s, &strs);
	s.tables.total_budget = 3 * BIG;
	for (int i = 0; i < 10; i++) {
		big->sval[0] = (unsigned char)(i / 2); /* five distinct tables, each twice */
		tb_sym_insert(&s, 1, (uint64_t)i, 0, 11, "f", "file.py", 1, big->sval, BIG);
	}
	assert_int_equal(s.tables.n, 2);
	assert_int_equal(s.lines_dropped, 6);
	assert_ptr_equal(s.codes[0].linetable, s.codes[1].linetable);
	tb_sym_free(&s);
	tb_strtab_free(&strs);
	free(code);
	free(big);
	free(small);
}

/* A module's code object, run once by an import, is freed before the agent reads it: glibc's
 * free() puts its tcache or bin links over the first two words (ob_refcnt, ob_type); the
 * fields after them are still the object's. Its code id, computed by the BPF program from
 * those fields at the sample, tells them apart from memory reused for something else. */
static void test_freed_code(void **state)
{
	const uint64_t code_type = 0x7f0000c0de00ull;
	struct tb_layout l;
	struct tb_strtab strs;
	struct tb_symbolizer s;
	struct fake_str name, file;
	_Alignas(8) unsigned char live[256] = { 0 }, freed[256], reused[256], other[256];
	uint32_t i;

	(void)state;
	assert_int_equal(tb_layout_builtin(0x030b02f0, &l), 0);
	fake_str(&name, "<module>");
	fake_str(&file, "/usr/lib/python3.11/json/decoder.py");
	put(live, l.bpf.object_type, code_type, 8);
	put(live, l.code_firstlineno, 1, 4);
	put(live, l.code_qualname, addr_of(&name), 8);
	put(live, l.code_filename, addr_of(&file), 8);
	memcpy(freed, live, sizeof(freed));
	put(freed, 0, 0x55d5c2a3b8f0ull, 8);                 /* tcache next */
	put(freed, l.bpf.object_type, 0x9e3779b97f4a7c15ull, 8);  /* tcache key */
	memcpy(reused, freed, sizeof(reused));
	put(reused, l.code_firstlineno, 0x41414141, 4);      /* someone else's bytes */
	memcpy(other, live, sizeof(other));
	put(other, l.code_firstlineno, 7, 4);                /* another code object at the address */
	tb_strtab_init(&strs);
	tb_sym_init(&s, &strs);
	i = tb_sym_code(&s, getpid(), &l, code_type, addr_of(live), tb_code_id(1, 0, 0));
	assert_true(s.codes[i].resolved);
	assert_int_equal(s.freed, 0);
	i = tb_sym_code(&s, getpid(), &l, code_type, addr_of(freed), tb_code_id(1, 0, 0));
	assert_true(s.codes[i].resolved);
	assert_string_equal(tb_str(&strs, s.codes[i].qualname), "<module>");
	assert_string_equal(tb_str(&strs, s.codes[i].filename), "/usr/lib/python3.11/json/decoder.py");
	assert_int_equal(s.codes[i].firstlineno, 1);
	assert_int_equal(s.freed, 1);
	i = tb_sym_code(&s, getpid(), &l, code_type, addr_of(reused), tb_code_id(1, 0, 0));
	assert_false(s.codes[i].resolved);
	assert_non_null(strstr(tb_str(&strs, s.codes[i].qualname), "<unreadable code 0x"));
	i = tb_sym_code(&s, getpid(), &l, code_type, addr_of(other), tb_code_id(1, 0, 0));
	assert_false(s.codes[i].resolved);
	assert_non_null(strstr(tb_str(&strs, s.codes[i].qualname), "<stale code 0x"));
	assert_int_equal(s.freed, 1);
	assert_int_equal(s.stale, 1);
	tb_sym_free(&s);
	tb_strtab_free(&strs);
}

/* A capture holds each code object's table (the format is unchanged); reading it back keeps
 * one copy per distinct table, and the same locations. */
static void test_capture_dedupe(void **state)
{
	enum { N = 300, LEN = 64 * 1024 };
	struct tb_profile p, q;
	struct tb_target t;
	unsigned char *tab = malloc(LEN);
	char *buf = NULL, err[256];
	size_t n = 0;
	FILE *m;

	(void)state;
	for (int i = 0; i < LEN; i++)
		tab[i] = LT311[i % sizeof(LT311)];
	tb_profile_init(&p);
	memset(&t, 0, sizeof(t));
	t.pid = 42;
	assert_int_equal(tb_layout_builtin(0x030b02f0, &t.layout), 0);
	tb_profile_add_process(&p, &t);
	for (int i = 0; i < N; i++)
		tb_sym_insert(&p.sym, 42, 0x1000u * (unsigned)(i + 1), 1, 11, "f", "/f.py", i, tab, LEN);
	assert_int_equal(p.sym.tables.n, 1);
	m = open_memstream(&buf, &n);
	assert_int_equal(tb_write_capture(&p, m), 0);
	fclose(m);
	assert_int_equal(tb_read_capture_mem(buf, n, &q, err, sizeof(err)), 0);
	assert_int_equal(q.sym.n, N);
	assert_int_equal(q.sym.tables.n, 1);
	assert_true(q.sym.tables.kept < 2 * LEN);
	for (uint32_t i = 0; i < N; i += 37) {
		struct tb_location a, b, want;

		assert_int_equal(q.sym.codes[i].linetable_len, LEN);
		assert_int_equal(tb_linetable_lookup(11, tab, LEN, (int)i, 20, &want), 0);
		tb_sym_location(&p.sym, i, 20, &a);
		tb_sym_location(&q.sym, i, 20, &b);
		assert_memory_equal(&a, &want, sizeof(a));
		assert_memory_equal(&b, &want, sizeof(b));
	}
	tb_profile_free(&p);
	tb_profile_free(&q);
	free(buf);
	free(tab);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedupe),
		cmocka_unit_test(test_budgets),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_symbolizer_shared),
		cmocka_unit_test(test_freed_code),
		cmocka_unit_test(test_capture_dedupe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
