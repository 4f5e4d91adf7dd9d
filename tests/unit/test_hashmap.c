/* test_hashmap.c: the keyed hash (SipHash-1-3 against CPython's, incremental
 * = one call), the hash index (find, intern, insert, clear, retain; a
 * million keys; keys that all share one hash), the interning tables built
 * on it (strings, the symbolizer forgetting processes without rescanning
 * every code object) and lib/mem.c's growth rule. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/mem.h"
#include "lib/strtab.h"
#include "model/symbolize.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ hash */

static void test_siphash_vectors(void **state)
{
	/* PYTHONHASHSEED=0 python3.11 -c 'print(hash(b"a") & (2**64-1))': CPython's
	 * siphash13 with a zero key */
	static const struct { const char *s; uint64_t h; } v[] = {
		{ "a", 4644417185603328019ull },
		{ "abcdefgh", 4574395652268504554ull },
		{ "abcdefghijklmnopq", 7044894726457044172ull },
	};

	(void)state;
	tb_hash_set_key(0, 0);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		assert_true(tb_hash(v[i].s, strlen(v[i].s)) == v[i].h);
	tb_hash_set_key(0x0123456789abcdefull, 0xfedcba9876543210ull);
	assert_true(tb_hash("a", 1) != 4644417185603328019ull);
}

static void test_incremental_equals_one_call(void **state)
{
	unsigned char buf[40];

	(void)state;
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 37 + 1);
	for (size_t len = 0; len <= sizeof(buf); len++) {
		uint64_t want = tb_hash(buf, len);

		for (size_t cut = 0; cut <= len; cut++) {
			struct tb_hasher h;

			tb_hash_init(&h);
			tb_hash_add(&h, buf, cut);
			tb_hash_add(&h, buf + cut, len - cut);
			assert_true(tb_hash_end(&h) == want);
		}
	}
	{ /* a word is its 8 little-endian bytes, aligned or not */
		struct tb_hasher a, b;
		const unsigned char le[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };

		tb_hash_init(&a);
		tb_hash_init(&b);
		tb_hash_add(&a, "xyz", 3);
		tb_hash_add(&b, "xyz", 3);
		tb_hash_word(&a, 0x0102030405060708ull);
		tb_hash_add(&b, le, 8);
		assert_true(tb_hash_end(&a) == tb_hash_end(&b));
		assert_true(tb_hash2(1, 2) != tb_hash2(2, 1));
	}
}

/* ------------------------------------------------------------- the index */

struct u64s {
	uint64_t *v;
	uint32_t n, cap;
};

struct probe {
	const struct u64s *set;
	uint64_t key;
	uint64_t *calls;
};

static int same_u64(const void *ctx, uint32_t i)
{
	const struct probe *p = ctx;

	if (p->calls)
		(*p->calls)++;
	return p->set->v[i] == p->key;
}

/* Intern key with hash h; returns its index. */
static uint32_t add_u64(struct tb_hmap *m, struct u64s *s, uint64_t key, uint64_t h)
{
	const struct probe p = { s, key, NULL };
	uint32_t i = tb_hmap_intern(m, h, s->n, same_u64, &p);

	if (i == s->n) {
		s->v = tb_grow(s->v, &s->cap, s->n + 1, sizeof(*s->v), 16);
		s->v[s->n++] = key;
	}
	return i;
}

static uint32_t find_u64(const struct tb_hmap *m, const struct u64s *s, uint64_t key, uint64_t h,
			 uint64_t *calls)
{
	const struct probe p = { s, key, calls };

	return tb_hmap_find(m, h, same_u64, &p);
}

static uint64_t key_hash(uint64_t k)
{
	return tb_hash(&k, sizeof(k));
}

static void test_find_intern_clear(void **state)
{
	struct tb_hmap m = { 0 };
	struct u64s s = { 0 };

	(void)state;
	assert_int_equal(find_u64(&m, &s, 5, key_hash(5), NULL), TB_HMAP_NONE); /* empty map */
	for (uint64_t k = 0; k < 100; k++)
		assert_int_equal(add_u64(&m, &s, k * 7, key_hash(k * 7)), k);
	for (uint64_t k = 0; k < 100; k++) {
		assert_int_equal(add_u64(&m, &s, k * 7, key_hash(k * 7)), k); /* found, not added */
		assert_int_equal(find_u64(&m, &s, k * 7, key_hash(k * 7), NULL), k);
		assert_int_equal(find_u64(&m, &s, k * 7 + 1, key_hash(k * 7 + 1), NULL), TB_HMAP_NONE);
	}
	assert_int_equal(s.n, 100);
	assert_int_equal(m.used, 100);
	/* insert: no lookup; then found like the others */
	s.v = tb_grow(s.v, &s.cap, s.n + 1, sizeof(*s.v), 16);
	s.v[s.n] = 1000;
	tb_hmap_insert(&m, key_hash(1000), s.n++);
	assert_int_equal(find_u64(&m, &s, 1000, key_hash(1000), NULL), 100);
	/* clear keeps the memory, forgets the indices */
	{
		uint64_t *slots = m.slots;

		tb_hmap_clear(&m);
		assert_ptr_equal(m.slots, slots);
		assert_int_equal(m.used, 0);
		s.n = 0;
		assert_int_equal(find_u64(&m, &s, 7, key_hash(7), NULL), TB_HMAP_NONE);
		assert_int_equal(add_u64(&m, &s, 7, key_hash(7)), 0);
	}
	tb_hmap_free(&m);
	free(s.v);
}

static int keep_even(const void *ctx, uint32_t i)
{
	(void)ctx;
	return i % 2 == 0;
}

static void test_retain(void **state)
{
	struct tb_hmap m = { 0 };
	struct u64s s = { 0 };
	const uint32_t n = 100000;

	(void)state;
	for (uint32_t k = 0; k < n; k++)
		add_u64(&m, &s, k, key_hash(k));
	tb_hmap_retain(&m, keep_even, NULL);
	assert_int_equal(m.used, n / 2);
	assert_true(m.mask + 1 <= 2 * 65536); /* shrunk to fit what it holds */
	for (uint32_t k = 0; k < n; k++)
		assert_int_equal(find_u64(&m, &s, k, key_hash(k), NULL), k % 2 ? TB_HMAP_NONE : k);
	/* still usable: the dropped indices can come back */
	for (uint32_t k = 1; k < n; k += 2)
		tb_hmap_insert(&m, key_hash(k), k);
	for (uint32_t k = 0; k < n; k++)
		assert_int_equal(find_u64(&m, &s, k, key_hash(k), NULL), k);
	tb_hmap_retain(&m, keep_even, NULL);
	tb_hmap_retain(&m, keep_even, NULL); /* nothing to drop: same content */
	assert_int_equal(m.used, n / 2);
	tb_hmap_free(&m);
	{ /* an empty map */
		struct tb_hmap e = { 0 };

		tb_hmap_retain(&e, keep_even, NULL);
		assert_null(e.slots);
	}
	free(s.v);
}

static void test_million_keys(void **state)
{
	struct tb_hmap m = { 0 };
	struct u64s s = { 0 };
	const uint32_t n = 1000000;
	uint64_t calls = 0;
	double t0 = now_s();

	(void)state;
	for (uint32_t k = 0; k < n; k++)
		assert_int_equal(add_u64(&m, &s, (uint64_t)k << 20, key_hash((uint64_t)k << 20)), k);
	for (uint32_t k = 0; k < n; k++)
		assert_int_equal(find_u64(&m, &s, (uint64_t)k << 20, key_hash((uint64_t)k << 20), &calls), k);
	/* absent keys: the 32 hash bits kept per slot reject almost all candidates */
	for (uint32_t k = 0; k < n; k++)
		assert_int_equal(find_u64(&m, &s, ((uint64_t)k << 20) | 1, key_hash(((uint64_t)k << 20) | 1),
					  &calls), TB_HMAP_NONE);
	assert_true(m.used == n && (uint64_t)m.used * 2 <= (uint64_t)m.mask + 1);
	assert_true(calls < n + n / 100);
	printf("1M keys: interned, found and missed in %.2f s, %llu comparisons\n", now_s() - t0,
	       (unsigned long long)calls);
	assert_true(now_s() - t0 < 30); /* ~1 s; generous for sanitizers and loaded machines */
	tb_hmap_free(&m);
	free(s.v);
}

/* Keys that all share one hash: each still found (one comparison per probe). */
static void test_one_hash_for_all(void **state)
{
	struct tb_hmap m = { 0 };
	struct u64s s = { 0 };
	const uint32_t n = 4000;
	const uint64_t h = 0x1234567890abcdefull;
	double t0 = now_s();

	(void)state;
	for (uint32_t k = 0; k < n; k++)
		assert_int_equal(add_u64(&m, &s, k * 3 + 1, h), k);
	for (uint32_t k = 0; k < n; k++) {
		assert_int_equal(find_u64(&m, &s, k * 3 + 1, h, NULL), k);
		assert_int_equal(find_u64(&m, &s, k * 3 + 2, h, NULL), TB_HMAP_NONE);
	}
	tb_hmap_retain(&m, keep_even, NULL);
	for (uint32_t k = 0; k < n; k++)
		assert_int_equal(find_u64(&m, &s, k * 3 + 1, h, NULL), k % 2 ? TB_HMAP_NONE : k);
	printf("%u keys of one hash: %.3f s\n", n, now_s() - t0);
	assert_true(now_s() - t0 < 10); /* n^2 / 2 probes: ~0.2 s */
	tb_hmap_free(&m);
	free(s.v);
}

/* Keys compared as the leading bytes of their entries. */
struct entry {
	uint32_t a;
	int32_t b;
	uint64_t payload;
};

static void test_byte_keys(void **state)
{
	struct tb_hmap m = { 0 };
	struct entry *e = NULL;
	uint32_t n = 0, cap = 0;

	(void)state;
	for (uint32_t i = 0; i < 1000; i++) {
		const struct entry key = { i / 10, (int32_t)(i % 10) - 5, i };

		assert_int_equal(tb_hmap_intern_key(&m, e, sizeof(*e), &key, offsetof(struct entry, payload), n), n);
		e = tb_grow(e, &cap, n + 1, sizeof(*e), 16);
		e[n++] = key;
	}
	for (uint32_t i = 0; i < 1000; i++) {
		const struct entry key = { i / 10, (int32_t)(i % 10) - 5, 999999 }; /* payload not compared */

		assert_int_equal(tb_hmap_find_key(&m, e, sizeof(*e), &key, offsetof(struct entry, payload)), i);
		assert_int_equal(tb_hmap_intern_key(&m, e, sizeof(*e), &key, offsetof(struct entry, payload), n),
				 i);
	}
	{
		const struct entry absent = { 5000, 0, 0 };

		assert_int_equal(tb_hmap_find_key(&m, e, sizeof(*e), &absent, offsetof(struct entry, payload)),
				 TB_HMAP_NONE);
	}
	tb_hmap_free(&m);
	free(e);
}

/* ------------------------------------------------- tables built on the index */

static void test_strtab(void **state)
{
	struct tb_strtab t;
	char name[64];
	const uint32_t n = 300000;
	double t0 = now_s();

	(void)state;
	tb_strtab_init(&t);
	assert_int_equal(tb_strtab_intern(&t, ""), 0);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "package.module%u.Class.method_%u", i % 97, i);
		assert_int_equal(tb_strtab_intern(&t, name), i + 1);
	}
	for (uint32_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "package.module%u.Class.method_%u", i % 97, i);
		assert_int_equal(tb_strtab_intern(&t, name), i + 1);
		assert_string_equal(tb_str(&t, i + 1), name);
	}
	assert_int_equal(t.n, n + 1);
	printf("%u names interned twice: %.2f s\n", n, now_s() - t0);
	assert_true(now_s() - t0 < 20);
	tb_strtab_free(&t);
}

/* A process exits after another: forgetting its code objects costs its own
 * code objects, not every one seen (20,000 processes of 50 codes each). */
static void test_forget_many_processes(void **state)
{
	struct tb_strtab strs;
	struct tb_symbolizer s;
	const uint32_t procs = 20000, codes = 50;
	double t0 = now_s();

	(void)state;
	tb_strtab_init(&strs);
	tb_sym_init(&s, &strs);
	for (uint32_t p = 0; p < procs; p++) {
		for (uint32_t c = 0; c < codes; c++)
			assert_int_equal(tb_sym_insert(&s, (pid_t)(1000 + p % 5000), 0x1000 + c * 16, 1, 12, "f",
						       "/f.py", 1, NULL, 0),
					 p * codes + c);
		/* pids are reused: 1000..5999 four times over */
		tb_sym_forget_pid(&s, (pid_t)(1000 + p % 5000));
		assert_true(s.codes[p * codes].dead && s.codes[p * codes + codes - 1].dead);
	}
	/* the index holds no more dead entries than live ones (none are live) */
	assert_true(s.index.used <= 2 * codes);
	/* same (pid, address, id) after the forget: a new code object */
	assert_int_equal(tb_sym_insert(&s, 1000, 0x1000, 1, 12, "g", "/g.py", 1, NULL, 0), procs * codes);
	assert_int_equal(tb_sym_insert(&s, 1000, 0x1000, 1, 12, "g", "/g.py", 1, NULL, 0), procs * codes);
	/* forgetting one pid leaves the others */
	assert_int_equal(tb_sym_insert(&s, 1001, 0x1000, 1, 12, "h", "/h.py", 1, NULL, 0), procs * codes + 1);
	tb_sym_forget_pid(&s, 1000);
	tb_sym_forget_pid(&s, 77); /* never seen */
	assert_int_equal(tb_sym_insert(&s, 1001, 0x1000, 1, 12, "h", "/h.py", 1, NULL, 0), procs * codes + 1);
	assert_true(s.codes[procs * codes].dead && !s.codes[procs * codes + 1].dead);
	printf("%u processes forgotten: %.2f s\n", procs, now_s() - t0);
	/* a scan of every code object and a rebuild of the whole index per exit
	 * would be some 10^10 steps here: minutes, even without sanitizers */
	assert_true(now_s() - t0 < 20);
	tb_sym_free(&s);
	tb_strtab_free(&strs);
}

/* ------------------------------------------------------------------ mem */

static void test_grow(void **state)
{
	uint32_t cap = 0, *a = NULL;
	uint64_t cap64 = 0;
	unsigned char *b = NULL;

	(void)state;
	a = tb_grow(a, &cap, 1, sizeof(*a), 256);
	assert_int_equal(cap, 256);
	a = tb_grow(a, &cap, 256, sizeof(*a), 256);
	assert_int_equal(cap, 256);
	a = tb_grow(a, &cap, 1000, sizeof(*a), 256);
	assert_int_equal(cap, 1024);
	a[1023] = 7;
	free(a);
	b = tb_grow64(b, &cap64, 65537, 1, 65536);
	assert_true(cap64 == 131072);
	b[131071] = 1;
	free(b);
	{
		uint32_t *z = tb_calloc(0, sizeof(uint32_t)); /* never NULL */

		assert_non_null(z);
		free(z);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash_vectors),
		cmocka_unit_test(test_incremental_equals_one_call),
		cmocka_unit_test(test_find_intern_clear),
		cmocka_unit_test(test_retain),
		cmocka_unit_test(test_million_keys),
		cmocka_unit_test(test_one_hash_for_all),
		cmocka_unit_test(test_byte_keys),
		cmocka_unit_test(test_strtab),
		cmocka_unit_test(test_forget_many_processes),
		cmocka_unit_test(test_grow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
