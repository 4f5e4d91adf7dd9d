/* test_debugsym.c: where native names come from besides a file's own symbols: perf map
 * lines and maps (proc/perfmap.c: hex forms, garbage, overflow, long names, overlapping
 * and repeated starts, partial last lines, lines longer than a read) and the places of a
 * file's debug file (proc/debugfile.c: build-id path, debuglink dirs, names refused). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "proc/debugfile.h"
#include "proc/perfmap.h"

#define LINE(s, a, b, n, nl) tb_perfmap_line(s, strlen(s), a, b, n, nl)

static void test_line_forms(void **state)
{
	uint64_t start, size;
	const char *name;
	size_t len;

	(void)state;
	assert_int_equal(LINE("7f0012345000 2b py::f:/x.py", &start, &size, &name, &len), 0);
	assert_true(start == 0x7f0012345000 && size == 0x2b);
	assert_int_equal(len, strlen("py::f:/x.py"));
	assert_memory_equal(name, "py::f:/x.py", len);
	assert_int_equal(LINE("0x1000 0X10 with spaces in it\r", &start, &size, &name, &len), 0);
	assert_true(start == 0x1000 && size == 0x10);
	assert_int_equal(len, strlen("with spaces in it"));         /* the CR of CRLF dropped */
	assert_int_equal(LINE("1000\t10\tt", &start, &size, &name, &len), 0);
	/* garbage, no name, no size, a zero size, a range past the end of the address space,
	 * more than 16 digits, a NUL in the name */
	static const char *const bad[] = { "", "zz yy name", "1000 10", "1000 10 ", "1000", "1000 0 zero",
					   "ffffffffffffff00 1000 wraps", "10000000000000000 1 big",
					   "-1000 10 neg", " 1000 10 lead" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(LINE(bad[i], &start, &size, &name, &len), -1);
	assert_int_equal(tb_perfmap_line("1000 10 a\0b", 11, &start, &size, &name, &len), -1);
}

static void test_long_name_cut(void **state)
{
	char line[3 * TB_NSYM_MAX_NAME];
	uint64_t start, size;
	const char *name;
	size_t len;

	(void)state;
	memset(line, 'n', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	memcpy(line, "1000 10 ", 8);
	assert_int_equal(LINE(line, &start, &size, &name, &len), 0);
	assert_int_equal(len, TB_NSYM_MAX_NAME - 1);
}

static const char *at(const struct tb_perfmap *m, uint64_t addr, uint64_t *start)
{
	return tb_nsym_lookup(&m->syms, addr, start);
}

static void test_parse_map(void **state)
{
	static const char text[] = "1000 100 outer\n"
				   "garbage line\n"
				   "1040 20 inner\n"
				   "2000 10 b_name\n"
				   "2000 10 a_name\n"      /* one start, two names: one kept */
				   "2900 10 jit_name_longer\n" /* a map's names at one start: */
				   "2900 10 jit_name\n"    /* the shortest, */
				   "2a00 10 _memcpy_x\n"
				   "2a00 10 __memmove_x\n" /* after the fewest underscores */
				   "3000 10 partial";      /* no newline yet: not read */
	struct tb_perfmap m = { 0 };
	uint64_t start;
	size_t used;

	(void)state;
	used = tb_perfmap_parse(&m, text, sizeof(text) - 1, 0);
	assert_int_equal(used, strlen(text) - strlen("3000 10 partial"));
	assert_int_equal(m.lines, 8);
	assert_int_equal(m.bad, 1);
	assert_string_equal(at(&m, 0x1000, &start), "outer");
	assert_string_equal(at(&m, 0x1050, &start), "inner");
	assert_int_equal(start, 0x1040);
	assert_null(at(&m, 0x1060, &start));      /* past inner's end: the nearest start is inner's */
	assert_string_equal(at(&m, 0x2008, &start), "a_name");
	assert_null(at(&m, 0x2010, &start));
	assert_string_equal(at(&m, 0x2904, &start), "jit_name");
	assert_string_equal(at(&m, 0x2a04, &start), "_memcpy_x");
	assert_null(at(&m, 0x3000, &start));
	/* the rest of the file, appended: the names so far stay */
	used = tb_perfmap_parse(&m, "3000 10 partial\n", 16, 0);
	assert_int_equal(used, 16);
	assert_string_equal(at(&m, 0x3004, &start), "partial");
	assert_string_equal(at(&m, 0x1000, &start), "outer");
	assert_int_equal(m.syms.source, TB_NSYM_PERFMAP);
	assert_string_equal(m.syms.module, TB_PERFMAP_MODULE);
	tb_perfmap_free(&m);
}

static void test_parse_no_newline(void **state)
{
	size_t n = 1 << 16;
	char *text = malloc(n);
	struct tb_perfmap m = { 0 };

	(void)state;
	memset(text, 'x', n);
	/* a read full of one line: skipped whole (a line that long is not a map's) */
	assert_int_equal(tb_perfmap_parse(&m, text, n, 1), n);
	/* a read not full: waits for the rest */
	assert_int_equal(tb_perfmap_parse(&m, text, n, 0), 0);
	assert_int_equal(m.lines, 0);
	free(text);
	tb_perfmap_free(&m);
}

static void test_parse_repeats_cut(void **state)
{
	struct tb_perfmap m = { 0 };
	size_t cap = (size_t)(TB_NSYM_MAX_REPEATS + 10) * 16, len = 0;
	char *text = malloc(cap);
	uint64_t start;

	(void)state;
	len += (size_t)sprintf(text, "100 10 first\n");
	for (int i = 0; i < TB_NSYM_MAX_REPEATS + 5; i++)
		len += (size_t)sprintf(text + len, "%x 1 same\n", 0x1000 + i);
	tb_perfmap_parse(&m, text, len, 0);
	assert_true(m.cut);                       /* one name a million times: a budget */
	assert_true(m.lines <= (uint64_t)TB_NSYM_MAX_REPEATS + 2);
	assert_string_equal(at(&m, 0x100, &start), "first");
	free(text);
	tb_perfmap_free(&m);
}

static void test_candidates(void **state)
{
	char out[TB_DEBUG_MAX_CANDIDATES][PATH_MAX];
	struct tb_debug_ids ids = { .build_id = { 0xc5, 0x61, 0xf3 }, .build_id_len = 3 };

	(void)state;
	assert_int_equal(tb_debug_candidates("/usr/bin/python3.11", &ids, out), 1);
	assert_string_equal(out[0], "/usr/lib/debug/.build-id/c5/61f3.debug");
	strcpy(ids.link, "python3.11.debug");
	assert_int_equal(tb_debug_candidates("/usr/bin/python3.11", &ids, out), 4);
	assert_string_equal(out[1], "/usr/bin/python3.11.debug");
	assert_string_equal(out[2], "/usr/bin/.debug/python3.11.debug");
	assert_string_equal(out[3], "/usr/lib/debug/usr/bin/python3.11.debug");
	ids.build_id_len = 0;
	assert_int_equal(tb_debug_candidates("/lib.so", &ids, out), 3);
	assert_string_equal(out[0], "/python3.11.debug");       /* a file in / */
	assert_string_equal(out[2], "/usr/lib/debug/python3.11.debug");
	/* a relative name (no dir the process could mean): build-id only */
	assert_int_equal(tb_debug_candidates("lib.so", &ids, out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_forms),
		cmocka_unit_test(test_long_name_cut),
		cmocka_unit_test(test_parse_map),
		cmocka_unit_test(test_parse_no_newline),
		cmocka_unit_test(test_parse_repeats_cut),
		cmocka_unit_test(test_candidates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
