/* test_timeline.c: time inside a profile: buckets doubling past their cap
 * with every count kept, off-CPU weight spread over its interval, a time
 * slice (model/slice.c) of a profile of two phases keeping exactly each
 * phase's stacks and thread states, its refusals and the parsing of
 * --from/--to; the capture's timeline section round trip (same outputs,
 * same file) and its refusals (cells that do not add up to a stack's
 * count, a bucket past those used). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "output/format.h"
#include "output/tbp.h"
#include "model/profile.h"
#include "model/slice.h"
#include "helpers.h"

#define PID 4242
#define SEC 1000000000ull

/* n samples of a one-frame stack of code addr, from time at, 1 ms apart */
static void samples(struct tb_profile *p, uint32_t tid, uint64_t addr, uint64_t at, unsigned n,
		    uint16_t flags)
{
	struct tb_sample_hdr h;
	struct tb_frame f;

	for (unsigned i = 0; i < n; i++) {
		memset(&h, 0, sizeof(h));
		memset(&f, 0, sizeof(f));
		h.pid = PID;
		h.tid = tid;
		h.ns_tid = tid;
		h.time_ns = at + i * 1000000ull;
		h.depth = 1;
		h.flags = flags;
		f.code = addr;
		f.code_id = (uint16_t)(addr >> 12);
		f.offset = -2;
		f.flags = TB_FF_NO_OPCODE;
		th_send(p, &h, &f, 1);
	}
}

/* Phase one: 1000 samples of "one" from 10 s; phase two: 1000 of "two" from 11 s. */
static void two_phases(struct tb_profile *p)
{
	tb_profile_init(p);
	th_add_process(p, PID, "python3.11", NULL, 0x030b02f0);
	p->hz = 1000;
	p->duration_s = 2;
	p->start_unix = 1764410000;
	tb_sym_insert(&p->sym, PID, 0x1000, 1, 11, "one", "/app.py", 10, NULL, 0);
	tb_sym_insert(&p->sym, PID, 0x2000, 2, 11, "two", "/app.py", 20, NULL, 0);
	samples(p, PID, 0x1000, 10 * SEC, 1000, TB_F_GIL_HELD);
	samples(p, PID, 0x2000, 11 * SEC, 1000, TB_F_GC);
}

static uint64_t cells_sum(const struct tb_tseries *s)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < s->n; i++)
		n += s->c[i].count;
	return n;
}

static void test_buckets_double(void **state)
{
	struct tb_timeline t = { 0 };
	uint64_t width;

	(void)state;
	for (uint64_t i = 0; i < 100000; i++) /* 100 s at 1 kHz, 3 series */
		tb_timeline_add(&t, &t.stacks, (uint32_t)(i % 3), SEC + i * 1000000ull, SEC + i * 1000000ull, 1);
	assert_true(t.nbuckets <= TB_TL_MAX_BUCKETS);
	width = t.width_ns;
	assert_true(width > TB_TL_FIRST_NS && width % TB_TL_FIRST_NS == 0);
	assert_true((uint64_t)t.nbuckets * width >= 100 * SEC);  /* the whole span covered */
	assert_int_equal(cells_sum(&t.stacks), 100000);
	tb_timeline_normalize(&t);
	for (uint32_t i = 1; i < t.stacks.n; i++)  /* one cell per (series, bucket) */
		assert_true(tb_tcell_cmp(&t.stacks.c[i - 1], &t.stacks.c[i]) < 0);
	assert_true(t.stacks.n <= 3u * t.nbuckets);
	/* a span: 1000 over 10 buckets, in proportion, adding up */
	tb_timeline_add(&t, &t.states, 0, SEC, SEC + 10 * width - 1, 1000);
	assert_int_equal(cells_sum(&t.states), 1000);
	tb_timeline_normalize(&t);
	assert_int_equal(t.states.n, 10);
	for (uint32_t i = 0; i < t.states.n; i++)
		assert_int_equal(t.states.c[i].count, 100);
	tb_timeline_free(&t);
}

static void test_slice(void **state)
{
	struct tb_profile p;
	char err[256];
	uint64_t one = 0, two = 0;

	(void)state;
	two_phases(&p);
	assert_int_equal(p.python_samples, 2000);
	assert_int_equal(p.tl.nbuckets, 200);      /* 10 ms buckets from the first sample */
	assert_int_equal(tb_slice_args(&p, "0", "1", err, sizeof(err)), 0);
	for (uint32_t i = 0; i < p.nstacks; i++)
		*(p.sym.codes[tb_stack_frames(&p, &p.stacks[i])[0].code].qualname == p.sym.codes[0].qualname ?
		  &one : &two) += p.stacks[i].count;
	assert_int_equal(one, 1000);
	assert_int_equal(two, 0);
	assert_int_equal(p.nstacks, 1);            /* the other phase's stack is gone */
	assert_int_equal(p.python_samples, 1000);
	assert_int_equal(p.threads[0].on_cpu, 1000);
	assert_int_equal(p.threads[0].gil_held, 1000);
	assert_int_equal(p.threads[0].gc, 0);
	assert_int_equal(p.procs[0].samples, 1000);
	assert_true(p.duration_s > 0.99 && p.duration_s < 1.01);
	tb_profile_free(&p);

	two_phases(&p);
	assert_int_equal(tb_slice_args(&p, "1.2", NULL, err, sizeof(err)), 0);
	assert_int_equal(p.python_samples, 800);
	assert_int_equal(p.threads[0].gc, 800);
	assert_int_equal(p.threads[0].gil_held, 0);
	/* a slice of a slice: seconds from the new start */
	assert_int_equal(tb_slice_args(&p, "0.5", "0.6", err, sizeof(err)), 0);
	assert_int_equal(p.python_samples, 100);
	assert_int_equal(tb_slice_args(&p, "5", "6", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no time bucket"));
	tb_profile_free(&p);

	tb_profile_init(&p); /* no timeline */
	assert_int_equal(tb_slice_args(&p, "1", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no timeline"));
	assert_int_equal(tb_slice_args(&p, NULL, NULL, err, sizeof(err)), 0);
	tb_profile_free(&p);
}

static void test_parse_time(void **state)
{
	/* 2025-11-29 10:00:00 local time */
	struct tm tm = { .tm_year = 125, .tm_mon = 10, .tm_mday = 29, .tm_hour = 10, .tm_isdst = -1 };
	int64_t start = (int64_t)mktime(&tm) * 1000000000ll;
	static const char *const bad[] = { "-1", "ten", "1e999", "nan", "25:00", "10:60", "10:03:xx",
					   "10:03:-1", "2025-13-01 10:00", "" };
	char err[256];
	double s;

	(void)state;
	assert_int_equal(tb_slice_parse_time("12.5", start, &s, err, sizeof(err)), 0);
	assert_true(s == 12.5);
	assert_int_equal(tb_slice_parse_time("10:03", start, &s, err, sizeof(err)), 0);
	assert_true(s > 179.99 && s < 180.01);
	assert_int_equal(tb_slice_parse_time("10:03:30.5", start, &s, err, sizeof(err)), 0);
	assert_true(s > 210.49 && s < 210.51);
	assert_int_equal(tb_slice_parse_time("2025-11-29 10:01", start, &s, err, sizeof(err)), 0);
	assert_true(s > 59.99 && s < 60.01);
	assert_int_equal(tb_slice_parse_time("2025-11-29T09:00", start, &s, err, sizeof(err)), 0);
	assert_true(s == 0);                         /* before the start: from the start */
	assert_int_equal(tb_slice_parse_time("21:00", start, &s, err, sizeof(err)), 0);
	assert_true(s > 11 * 3600 - 1 && s < 11 * 3600 + 1);
	/* past midnight of a start at 23:00: the next day */
	assert_int_equal(tb_slice_parse_time("01:00", start + 13 * 3600 * 1000000000ll, &s, err, sizeof(err)), 0);
	assert_true(s > 2 * 3600 - 1 && s < 2 * 3600 + 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(tb_slice_parse_time(bad[i], start, &s, err, sizeof(err)), -1);
		assert_true(err[0] && !strchr(err, '\n'));
	}
}

static char *capture(const struct tb_profile *p, size_t *len)
{
	return th_render(tb_write_capture, p, len);
}

static void same_output(int (*w)(const struct tb_profile *, FILE *), const struct tb_profile *a,
			const struct tb_profile *b)
{
	size_t la, lb;
	char *x = th_render(w, a, &la), *y = th_render(w, b, &lb);

	assert_int_equal(la, lb);
	assert_memory_equal(x, y, la);
	free(x);
	free(y);
}

static void test_capture_round_trip(void **state)
{
	struct tb_profile p, q;
	size_t n, m;
	char *a, *b, err[256];

	(void)state;
	two_phases(&p);
	a = capture(&p, &n);
	assert_int_equal(a[8], 3);                  /* a timeline: version 3 */
	assert_int_equal(tb_read_capture_mem(a, n, &q, err, sizeof(err)), 0);
	assert_true(q.tl.on && q.tl.width_ns == p.tl.width_ns && q.tl.nbuckets == p.tl.nbuckets &&
		    q.tl.origin_unix_ns == p.tl.origin_unix_ns);
	assert_int_equal(cells_sum(&q.tl.stacks), 2000);
	same_output(tb_write_tree_json, &p, &q);
	same_output(tb_write_speedscope, &p, &q);
	same_output(tb_write_gecko, &p, &q);
	same_output(tb_write_folded, &p, &q);
	b = capture(&q, &m);
	assert_int_equal(n, m);
	assert_memory_equal(a, b, n);
	free(b);
	/* the slice of the read profile is the slice of the live one */
	assert_int_equal(tb_slice_args(&p, "0.5", "1.5", err, sizeof(err)), 0);
	assert_int_equal(tb_slice_args(&q, "0.5", "1.5", err, sizeof(err)), 0);
	same_output(tb_write_tree_json, &p, &q);
	same_output(tb_write_gecko, &p, &q);
	tb_profile_free(&q);
	tb_profile_free(&p);
	free(a);

	/* cells that do not add up to their stack's count */
	two_phases(&p);
	p.tl.stacks.c[0].count++;
	a = capture(&p, &n);
	assert_int_equal(tb_read_capture_mem(a, n, &q, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "add up"));
	free(a);
	tb_profile_free(&p);
	/* a bucket past those used */
	two_phases(&p);
	p.tl.nbuckets = 50;
	a = capture(&p, &n);
	assert_int_equal(tb_read_capture_mem(a, n, &q, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "past bucket"));
	free(a);
	tb_profile_free(&p);
	/* a thread state without its cells */
	two_phases(&p);
	p.threads[0].gc += 5;
	a = capture(&p, &n);
	assert_int_equal(tb_read_capture_mem(a, n, &q, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "thread state cells of 4 add up to 1000, not 1005"));
	free(a);
	tb_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_double),
		cmocka_unit_test(test_slice),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_capture_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
