/* test_exports.c: the JSON Lines, pstats-style text and Firefox Profiler
 * (gecko) writers on a synthetic profile: two threads, an off-CPU stack
 * weighted at wake-up (wall mode), a <GC> sample, a truncated stack and an
 * opcode on a leaf; code objects pre-registered (no target reads). */
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

#define PID 4242
#define MAXIDS 4096

struct rec {
	struct tb_sample_hdr h;
	struct tb_frame f[4];
};

/* frames innermost first, as the BPF program sends them */
static void add_flags(struct tb_profile *p, uint32_t tid, int n, const uint64_t *codes,
		      uint64_t count, uint16_t flags, int opcode)
{
	struct rec r;

	memset(&r, 0, sizeof(r));
	r.h.pid = PID;
	r.h.tid = tid;
	r.h.ns_tid = tid;
	r.h.time_ns = 1000;
	r.h.depth = (uint16_t)n;
	r.h.flags = flags;
	for (int i = 0; i < n; i++) {
		r.f[i].code = codes[i];
		r.f[i].code_id = (uint16_t)(codes[i] >> 12);
		r.f[i].offset = -2;
		r.f[i].flags = TB_FF_NO_OPCODE;
	}
	if (opcode >= 0) {
		r.f[0].flags = 0;
		r.f[0].opcode = (uint8_t)opcode;
	}
	for (uint64_t c = 0; c < count; c++)
		assert_int_equal(tb_profile_add_record(p, &r, sizeof(r.h) + (size_t)n * sizeof(r.f[0])), 0);
}

static void add(struct tb_profile *p, uint32_t tid, int n, const uint64_t *codes, uint64_t count)
{
	add_flags(p, tid, n, codes, count, 0, -1);
}

/* Thread 1: 5x main>work, 2x main>other, 1x truncated work, off-CPU in
 * main>work weighted 5 samples; thread 2: 3x main>work (opcode on the
 * leaf), 1x main>work during GC.  Python samples: 13 + 4. */
static void setup_profile(struct tb_profile *p)
{
	const uint64_t mw[] = { 0x2000, 0x1000 }, mo[] = { 0x3000, 0x1000 }, w[] = { 0x2000 };
	struct tb_target t;
	struct rec wake;

	tb_profile_init(p);
	memset(&t, 0, sizeof(t));
	t.pid = PID;
	snprintf(t.comm, sizeof(t.comm), "python3.11");
	snprintf(t.cmdline, sizeof(t.cmdline), "python3.11 app.py");
	assert_int_equal(tb_layout_builtin(0x030b02f0, &t.layout), 0);
	tb_profile_add_process(p, &t);
	p->hz = 100;
	p->duration_s = 0.2;
	p->mode = TB_MODE_WALL;
	tb_sym_insert(&p->sym, PID, 0x1000, 1, 11, "main", "/app.py", 10, NULL, 0);
	tb_sym_insert(&p->sym, PID, 0x2000, 2, 11, "work", "/app.py", 20, NULL, 0);
	tb_sym_insert(&p->sym, PID, 0x3000, 3, 11, "Klass.other", "/lib/x.py", 30, NULL, 0);
	add(p, 1, 2, mw, 5);
	add(p, 1, 2, mo, 2);
	add_flags(p, 1, 1, w, 1, TB_F_TRUNCATED, -1);
	add_flags(p, 1, 2, mw, 1, TB_F_OFF_CPU, -1);
	memset(&wake, 0, sizeof(wake));
	wake.h.type = TB_REC_WAKE;
	wake.h.pid = PID;
	wake.h.tid = 1;
	wake.h.value = 50000000; /* 50 ms at 100 Hz: 5 samples */
	assert_int_equal(tb_profile_add_record(p, &wake, sizeof(wake.h)), 0);
	add_flags(p, 2, 2, mw, 3, 0, 100);
	add_flags(p, 2, 2, mw, 1, TB_F_GC, -1);
	assert_int_equal(p->python_samples, 17);
	assert_int_equal(p->nthreads, 2);
}

static char *render(int (*w)(const struct tb_profile *, FILE *), const struct tb_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(w(p, m), 0);
	fclose(m);
	return buf;
}

/* The integer after "key": in line, or -1. */
static long field(const char *line, const char *key)
{
	char pat[64];
	const char *s;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	s = strstr(line, pat);
	return s ? strtol(s + strlen(pat), NULL, 10) : -1;
}

static void test_jsonl(void **state)
{
	struct tb_profile p;
	static char str_def[MAXIDS], frame_def[MAXIDS];
	long tids[8], ntids = 0, stacks = 0, next_str = 0, next_frame = 0;
	uint64_t sum = 0, agg_self = 0;
	char *out, *line, *save = NULL;
	int nline = 0, saw_end = 0, saw_opcode = 0, saw_trunc = 0;

	(void)state;
	setup_profile(&p);
	out = render(tb_write_jsonl, &p);
	/* the off-CPU weight sits on a synthetic leaf */
	assert_non_null(strstr(out, "\"s\":\"\\u003coff-CPU\\u003e\""));
	memset(str_def, 0, sizeof(str_def));
	memset(frame_def, 0, sizeof(frame_def));
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), nline++) {
		size_t len = strlen(line);

		assert_false(saw_end);                     /* "end" is the last line */
		assert_true(strncmp(line, "{\"type\":\"", 9) == 0);
		assert_int_equal(line[len - 1], '}');
		if (nline == 0) {
			assert_true(strncmp(line, "{\"type\":\"meta\"", 14) == 0);
			assert_int_equal(field(line, "python_samples"), 17);
			assert_int_equal(field(line, "rate_hz"), 100);
			continue;
		}
		if (strncmp(line, "{\"type\":\"str\"", 13) == 0) {
			long id = field(line, "id");

			assert_int_equal(id, next_str++);  /* dense, in file order */
			str_def[id] = 1;
		} else if (strncmp(line, "{\"type\":\"thread\"", 16) == 0) {
			assert_true(str_def[field(line, "name")]);
			tids[ntids++] = field(line, "tid");
		} else if (strncmp(line, "{\"type\":\"frame\"", 15) == 0) {
			long id = field(line, "id");

			assert_int_equal(id, next_frame++);
			assert_true(str_def[field(line, "name")]);
			assert_true(str_def[field(line, "file")]);
			frame_def[id] = 1;
		} else if (strncmp(line, "{\"type\":\"stack\"", 15) == 0) {
			const char *fr = strstr(line, "\"frames\":[") + 10;
			long tid = field(line, "thread"), op = field(line, "opcode");
			int known = 0;
			char *end;

			assert_int_equal(field(line, "id"), stacks++);
			for (long i = 0; i < ntids; i++)
				known |= tids[i] == tid;
			assert_true(known);
			while (*fr != ']') {
				long id = strtol(fr, &end, 10);

				assert_true(end > fr && id >= 0 && id < MAXIDS && frame_def[id]);
				fr = *end == ',' ? end + 1 : end;
			}
			if (op >= 0) {
				assert_true(str_def[op]);
				saw_opcode = 1;
			}
			saw_trunc |= strstr(line, "\"truncated\":true") != NULL;
			sum += (uint64_t)field(line, "count");
		} else if (strncmp(line, "{\"type\":\"agg\"", 13) == 0) {
			long id = field(line, "frame");

			assert_true(id >= 0 && id < MAXIDS && frame_def[id]);
			assert_true(field(line, "self") <= field(line, "total"));
			agg_self += (uint64_t)field(line, "self");
		} else if (strncmp(line, "{\"type\":\"end\"", 13) == 0) {
			saw_end = 1;
			assert_int_equal(field(line, "samples"), 17);
			assert_int_equal(field(line, "stacks"), stacks);
			assert_int_equal(field(line, "frames"), next_frame);
			assert_int_equal(field(line, "strings"), next_str);
		} else if (strncmp(line, "{\"type\":\"process\"", 17) != 0) {
			fail_msg("unknown line: %s", line);
		}
	}
	assert_true(saw_end);
	assert_int_equal(ntids, 2);
	assert_int_equal(sum, 17);
	assert_int_equal(agg_self, 17);   /* every sample has one leaf */
	assert_true(saw_opcode);
	assert_true(saw_trunc);
	free(out);
	tb_profile_free(&p);
}

struct row {
	unsigned long own, total;
	char name[128];
};

/* The table rows of a pstats rendering. */
static int rows(const struct tb_profile *p, struct row *r, int max)
{
	char *out = render(tb_write_pstats, p), *line, *save = NULL;
	int n = 0, body = 0;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		double a, b, c, d;
		int used = 0;

		if (!body) {
			body = strstr(line, "function (file:line)") != NULL;
			continue;
		}
		assert_true(n < max);
		assert_int_equal(sscanf(line, "%lu %lu %lf%% %lf%% %lf %lf %n", &r[n].own, &r[n].total,
					&a, &b, &c, &d, &used), 6);
		assert_true(used > 0);
		snprintf(r[n].name, sizeof(r[n].name), "%s", line + used);
		assert_true(a <= b + 1e-9);
		assert_true(c <= d + 1e-9);
		/* time = samples / rate (100 Hz: 10 ms a sample) */
		assert_true(c > (double)r[n].own * 10 - 0.1 && c < (double)r[n].own * 10 + 0.1);
		n++;
	}
	assert_true(body);
	free(out);
	return n;
}

static void test_pstats_sort_and_limit(void **state)
{
	struct tb_profile p;
	struct row r[16];
	int n;

	(void)state;
	setup_profile(&p);
	/* own: work 5+1(trunc)+3 = 9, Klass.other 2, <off-CPU> 5, <GC> 1, main 0 */
	p.sort_key = 0;
	n = rows(&p, r, 16);
	assert_int_equal(n, 5);
	for (int i = 1; i < n; i++)
		assert_true(r[i - 1].own > r[i].own ||
			    (r[i - 1].own == r[i].own && r[i - 1].total >= r[i].total));
	assert_string_equal(r[0].name, "work (/app.py:20)");
	assert_int_equal(r[0].own, 9);
	assert_int_equal(r[0].total, 15);  /* + off-CPU 5 + GC 1 below it */

	p.sort_key = 1;
	n = rows(&p, r, 16);
	assert_int_equal(n, 5);
	for (int i = 1; i < n; i++)
		assert_true(r[i - 1].total >= r[i].total);
	assert_string_equal(r[0].name, "main (/app.py:10)");
	assert_int_equal(r[0].total, 16);  /* all but the truncated stack */

	p.sort_key = 2;
	n = rows(&p, r, 16);
	assert_int_equal(n, 5);
	for (int i = 1; i < n; i++)
		assert_true(strcmp(r[i - 1].name, r[i].name) <= 0);

	p.limit = 2;
	assert_int_equal(rows(&p, r, 16), 2);
	assert_true(strcmp(r[0].name, r[1].name) <= 0);
	p.sort_key = 1;
	assert_int_equal(rows(&p, r, 16), 2);
	assert_string_equal(r[0].name, "main (/app.py:10)");
	p.limit = 100;
	assert_int_equal(rows(&p, r, 16), 5);

	assert_int_equal(tb_pstats_sort_key("own"), 0);
	assert_int_equal(tb_pstats_sort_key("total"), 1);
	assert_int_equal(tb_pstats_sort_key("name"), 2);
	assert_int_equal(tb_pstats_sort_key("self"), -1);
	tb_profile_free(&p);
}

/* Elements of the JSON array of integers starting at s (just after '['). */
static long count_array(const char *s)
{
	long n = 0;

	if (*s == ']')
		return 0;
	for (n = 1; *s && *s != ']'; s++)
		n += *s == ',';
	return n;
}

static void check_thread(const char *json, const char *label, long samples)
{
	const char *t = strstr(json, label), *s;

	assert_non_null(t);
	assert_null(strstr(t + 1, label));           /* one thread per OS thread */
	s = strstr(t, "\"samples\":{\"stack\":[");
	assert_non_null(s);
	assert_int_equal(count_array(s + 20), samples);
	s = strstr(s, "\"time\":[");
	assert_non_null(s);
	assert_int_equal(count_array(s + 8), samples);
	assert_int_equal(field(strstr(s, "\"weightType\""), "length"), samples);
}

static void test_gecko(void **state)
{
	struct tb_profile p;
	char *json;
	const char *s;
	int nthreads = 0;

	(void)state;
	setup_profile(&p);
	json = render(tb_write_gecko, &p);
	assert_true(strncmp(json, "{\"meta\":{\"interval\":10.0", 24) == 0);
	assert_non_null(strstr(json, "\"preprocessedProfileVersion\":57"));
	for (s = json; (s = strstr(s, "\"processType\":\"default\"")); s++)
		nthreads++;
	assert_int_equal(nthreads, 2);
	check_thread(json, "\"name\":\"thread (tid 1)\"", 13);
	check_thread(json, "\"name\":\"thread (tid 2)\"", 4);
	/* categories, markers from the synthetic leaves, opcode subcategory */
	assert_non_null(strstr(json, "{\"name\":\"Off-CPU\",\"color\":\"transparent\""));
	assert_non_null(strstr(json, "{\"name\":\"GC\",\"color\":\"orange\""));
	assert_non_null(strstr(json, "\"Off CPU\""));
	assert_non_null(strstr(json, "\"On CPU\""));
	assert_non_null(strstr(json, "\"GC\""));
	assert_non_null(strstr(json, "\"Thread status\""));
	assert_non_null(strstr(json, "\"\\u003ctruncated\\u003e\""));
	assert_non_null(strstr(json, "\"subcategories\":[\"Other\",\""));
	assert_non_null(strstr(json, "\"stringArray\":[\"(root)\""));
	assert_int_equal(json[strlen(json) - 2], '}');
	free(json);
	tb_profile_free(&p);
}

static void test_output_table(void **state)
{
	char list[512];

	(void)state;
	assert_true(tb_output_supported("x.gecko.json"));
	assert_true(tb_output_supported("x.jsonl"));
	assert_true(tb_output_supported("x.txt"));
	tb_formats_list(list, sizeof(list), TB_USE_PROFILE);
	assert_non_null(strstr(list, ".gecko.json"));
	assert_non_null(strstr(list, ".jsonl"));
	assert_non_null(strstr(list, ".txt"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonl),
		cmocka_unit_test(test_pstats_sort_and_limit),
		cmocka_unit_test(test_gecko),
		cmocka_unit_test(test_output_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
