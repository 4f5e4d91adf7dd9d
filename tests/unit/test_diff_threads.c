/* test_diff_threads.c: how `diff` pairs the threads of two captures: by
 * (process name, thread name, ordinal among the threads of that pair in
 * (pid, tid) order), whatever order the captures list them in; threads of
 * an unknown process all have ordinal 0; two threads with one (pid, tid)
 * share an ordinal.  Also the same pairing for 2,000 threads, quickly. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "output/diff.h"
#include "model/profile.h"

struct th {
	uint32_t pid, tid;
	const char *name;
	uint64_t samples;
};

static void add_process(struct tb_profile *p, uint32_t pid, const char *comm)
{
	struct tb_target t;

	memset(&t, 0, sizeof(t));
	t.pid = (pid_t)pid;
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	assert_int_equal(tb_layout_builtin(0x030c01f0, &t.layout), 0);
	tb_profile_add_process(p, &t);
}

/* Processes 100 and 200 are "py", 300 is "other"; pids 888 and 999 are unknown. */
static void make(struct tb_profile *p, const struct th *ts, size_t n)
{
	uint32_t code;

	tb_profile_init(p);
	add_process(p, 100, "py");
	add_process(p, 200, "py");
	add_process(p, 300, "other");
	p->hz = 100;
	code = tb_sym_insert(&p->sym, 100, 0x1000, 1, 12, "main", "/a.py", 1, NULL, 0);
	for (size_t i = 0; i < n; i++) {
		const struct tb_sframe f = { code, -2, 0, 0 };
		uint32_t t = tb_profile_add_thread(p, ts[i].pid, ts[i].tid, ts[i].tid, ts[i].name);

		tb_profile_add_stack(p, t, 0, &f, 1, ts[i].samples);
		p->python_samples += ts[i].samples;
	}
}

/* The root node's "thread_base" object. */
static char *root_thread_base(struct tb_profile *b, struct tb_profile *c)
{
	struct tb_diff_opts o = { 0.15, 0 };
	char *buf = NULL, *at, *end, *out;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_int_equal(tb_write_diff_json(b, c, &o, m), 0);
	fclose(m);
	at = strstr(strstr(buf, "\"tree\":"), "\"thread_base\":{");
	assert_non_null(at);
	end = strchr(at, '}');
	out = strndup(at, (size_t)(end - at + 1));
	free(buf);
	return out;
}

static void test_pairing(void **state)
{
	/* listed out of (pid, tid) order on purpose */
	static const struct th base[] = {
		{ 200, 201, "worker", 10 },  /* py/worker ordinal 2 */
		{ 100, 105, "worker", 20 },  /* ordinal 1 */
		{ 100, 101, "worker", 30 },  /* ordinal 0 */
		{ 300, 301, "worker", 40 },  /* other/worker 0 */
		{ 999, 999, "worker", 50 },  /* unknown process: 0 */
	};
	static const struct th cur[] = {
		{ 100, 110, "worker", 1 },   /* after two threads (100, 102): ordinal 2 */
		{ 100, 102, "worker", 2 },   /* ordinal 0 */
		{ 200, 250, "worker", 3 },   /* ordinal 3: no twin */
		{ 300, 301, "worker", 4 },
		{ 888, 888, "worker", 5 },   /* unknown, like 999: ordinal 0 */
		{ 100, 102, "worker", 6 },   /* (pid, tid) again: ordinal 0 too */
	};
	struct tb_profile b, c;
	char *tb;

	(void)state;
	make(&b, base, sizeof(base) / sizeof(base[0]));
	make(&c, cur, sizeof(cur) / sizeof(cur[0]));
	tb = root_thread_base(&b, &c);
	assert_string_equal(tb, "\"thread_base\":{\"110\":[10,0],\"102\":[30,0],\"301\":[40,0],"
			    "\"888\":[50,0],\"102\":[30,0]}");
	free(tb);
	tb_profile_free(&b);
	tb_profile_free(&c);
}

/* 2,000 threads per side, each side listing them in another order: every
 * one finds its twin, and fast (the pairing was cubic). */
static void test_many_threads(void **state)
{
	enum { N = 2000 };
	struct th *base = calloc(N, sizeof(*base)), *cur = calloc(N, sizeof(*cur));
	struct tb_profile b, c;
	struct timespec t0, t1;
	char *tb;
	int matched = 0;

	(void)state;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t j = N - 1 - i;

		base[i] = (struct th){ i % 2 ? 100 : 200, 1000 + i, i % 3 ? "worker" : "io", 1 };
		cur[j] = (struct th){ i % 2 ? 100 : 200, 5000 + i, i % 3 ? "worker" : "io", 1 };
	}
	make(&b, base, N);
	make(&c, cur, N);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	tb = root_thread_base(&b, &c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (const char *s = tb; (s = strstr(s, ":[1,0]")); s++)
		matched++;
	assert_int_equal(matched, N);
	assert_true((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 < 5);
	free(tb);
	free(base);
	free(cur);
	tb_profile_free(&b);
	tb_profile_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairing),
		cmocka_unit_test(test_many_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
