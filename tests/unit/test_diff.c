/* test_diff.c: differential profiles on synthetic captures: normalization
 * across rates and durations, the band and the significance test, empty
 * sides, and the difffolded lines. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "output/diff.h"
#include "model/profile.h"
#include "helpers.h"

#define PID 2000000000 /* no such process: names come from the records */

static void make(struct tb_profile *p, unsigned hz, double duration, uint64_t slow, uint64_t fast)
{
	const uint64_t stacks[2][2] = { { 0x1000, 0x3000 }, { 0x2000, 0x3000 } };
	const uint64_t counts[2] = { slow, fast };

	tb_profile_init(p);
	th_add_process(p, PID, "python3", NULL, 0x030c01f0);
	p->hz = hz;
	p->duration_s = duration;
	tb_sym_insert(&p->sym, PID, 0x1000, 1, 12, "slow", "/a.py", 1, NULL, 0);
	tb_sym_insert(&p->sym, PID, 0x2000, 2, 12, "fast", "/a.py", 9, NULL, 0);
	tb_sym_insert(&p->sym, PID, 0x3000, 3, 12, "main", "/a.py", 20, NULL, 0);
	for (int k = 0; k < 2; k++)
		th_add_stack(p, PID, PID, 2, stacks[k], NULL, counts[k], 0, -1);
}

static char *diff_json(struct tb_profile *b, struct tb_profile *c, double band)
{
	struct tb_diff_opts o = { band, 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_int_equal(tb_write_diff_json(b, c, &o, m), 0);
	fclose(m);
	return buf;
}

/* "class" of the frame node named name */
static void expect_class(const char *json, const char *name, const char *cls)
{
	char key[64];
	const char *at, *c;

	snprintf(key, sizeof(key), "\"name\":\"%s\"", name);
	at = strstr(json, key);
	assert_non_null(at);
	c = strstr(at, "\"class\":\"");
	assert_non_null(c);
	assert_int_equal(strncmp(c + 9, cls, strlen(cls)), 0);
}

static void test_same_share_other_rate_and_duration(void **state)
{
	struct tb_profile b, c;
	char *j;

	(void)state;
	make(&b, 100, 10.0, 600, 400);   /* 60/40 at 100 Hz over 10 s */
	make(&c, 1000, 2.0, 1200, 800);  /* 60/40 at 1 kHz over 2 s */
	j = diff_json(&b, &c, 0.15);
	expect_class(j, "slow", "neutral");
	expect_class(j, "fast", "neutral");
	assert_non_null(strstr(j, "\"diff_pct\":0.00"));
	free(j);
	tb_profile_free(&b);
	tb_profile_free(&c);
}

static void test_regression_improvement_band(void **state)
{
	struct tb_profile b, c;
	char *j;

	(void)state;
	make(&b, 100, 10.0, 600, 400);
	make(&c, 100, 10.0, 300, 700);   /* slow -50%, fast +75% */
	j = diff_json(&b, &c, 0.15);
	expect_class(j, "slow", "improvement");
	expect_class(j, "fast", "regression");
	free(j);
	j = diff_json(&b, &c, 1.0);      /* a 100% band hides both */
	expect_class(j, "slow", "neutral");
	expect_class(j, "fast", "neutral");
	free(j);
	tb_profile_free(&b);
	tb_profile_free(&c);
}

static void test_small_counts_are_noise(void **state)
{
	struct tb_profile b, c;
	char *j;

	(void)state;
	make(&b, 100, 1.0, 6, 4);
	make(&c, 100, 1.0, 4, 6);        /* +-50% on a handful of samples: chance */
	j = diff_json(&b, &c, 0.15);
	expect_class(j, "slow", "noise");
	expect_class(j, "fast", "noise");
	free(j);
	tb_profile_free(&b);
	tb_profile_free(&c);
}

static void test_empty_sides(void **state)
{
	struct tb_profile b, c, e;
	char *j;

	(void)state;
	make(&b, 100, 1.0, 60, 40);
	make(&c, 100, 1.0, 60, 40);
	make(&e, 100, 1.0, 0, 0);
	j = diff_json(&e, &c, 0.15);     /* empty baseline: all new */
	expect_class(j, "slow", "new");
	expect_class(j, "fast", "new");
	free(j);
	j = diff_json(&b, &e, 0.15);     /* empty current: all elided */
	{
		char *tree = strstr(j, "\"tree\":"), *elided = strstr(j, ",\"elided\":{");
		char *slow = strstr(j, "\"name\":\"slow\"");

		assert_non_null(tree);
		assert_non_null(elided);
		assert_true(slow > elided); /* only in the baseline tree */
		assert_non_null(strstr(elided, "\"elided\":true"));
	}
	free(j);
	tb_profile_free(&b);
	tb_profile_free(&c);
	tb_profile_free(&e);
}

static void test_z(void **state)
{
	(void)state;
	assert_true(fabs(tb_diff_z(100, 1000, 100, 1000)) < 1e-9);
	assert_true(tb_diff_z(100, 1000, 200, 1000) > 1.96);
	assert_true(tb_diff_z(200, 1000, 100, 1000) < -1.96);
	assert_true(fabs(tb_diff_z(5, 100, 7, 100)) < 1.96);
	assert_true(tb_diff_z(0, 0, 5, 100) == 0);
}

/* tb_diff_min_change: the change the test can call at a given size (the page's banner) */
static void test_min_change(void **state)
{
	double drop, rise;

	(void)state;
	/* issue 26's pair: 83 against 66 samples; a 32% drop of a big frame stayed grey */
	assert_int_equal(tb_diff_min_change(83, 66, 0.25, &drop, &rise), 1);
	assert_true(drop > 0.5 && drop < 0.6);
	assert_true(rise > 0.5);
	/* the answer is where |z| crosses 1.96 */
	assert_int_equal(tb_diff_min_change(1e6, 1e6, 0.25, &drop, &rise), 0);
	assert_true(drop > 0 && drop < 0.01 && rise > 0 && rise < 0.01);
	assert_true(fabs(tb_diff_z(250000, 1e6, (uint64_t)llround(250000 * (1 - drop)), 1e6) + 1.96) < 0.01);
	assert_true(fabs(tb_diff_z(250000, 1e6, (uint64_t)llround(250000 * (1 + rise)), 1e6) - 1.96) < 0.01);
	assert_int_equal(tb_diff_min_change(2000, 2000, 0.25, &drop, &rise), 0);
	assert_true(drop < 0.2);
	/* a side with no sample: nothing can be called */
	assert_int_equal(tb_diff_min_change(0, 100, 0.25, &drop, &rise), 1);
	assert_true(drop < 0 && rise < 0);
	/* 8 samples now: a quarter-share frame could vanish unnoticed (|z| = sqrt(0.25 * 8) < 1.96) */
	assert_int_equal(tb_diff_min_change(1000, 8, 0.25, &drop, &rise), 1);
	assert_true(drop < 0);
}

static void test_folded(void **state)
{
	struct tb_profile b, c;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	(void)state;
	make(&b, 100, 1.0, 6, 4);
	make(&c, 100, 1.0, 0, 9);
	assert_int_equal(tb_write_diff_folded(&b, &c, m), 0);
	fclose(m);
	assert_string_equal(buf, "python3;thread;main (/a.py);fast (/a.py) 4 9\n"
				 "python3;thread;main (/a.py);slow (/a.py) 6 0\n");
	free(buf);
	tb_profile_free(&b);
	tb_profile_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_share_other_rate_and_duration),
		cmocka_unit_test(test_regression_improvement_band),
		cmocka_unit_test(test_small_counts_are_noise),
		cmocka_unit_test(test_empty_sides),
		cmocka_unit_test(test_z),
		cmocka_unit_test(test_min_change),
		cmocka_unit_test(test_folded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
