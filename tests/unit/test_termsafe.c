/* test_termsafe.c: text made safe for a terminal (lib/termsafe.c): C0
 * controls, DEL, C1 controls, bidi controls and invalid UTF-8 escaped;
 * printable ASCII and other UTF-8 kept; the buffer form cut at a whole
 * character with "..."; the FILE form unbounded; and the forged summary
 * line of tests/hostile/run.py comes out without one control byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib/termsafe.h"

static const char *safe(const char *s)
{
	static char buf[512];

	return tb_termsafe(s, buf, sizeof(buf));
}

static void test_kept(void **state)
{
	(void)state;
	assert_string_equal(safe(""), "");
	assert_string_equal(safe("spin (/srv/app.py:8) ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./"),
			    "spin (/srv/app.py:8) ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./");
	/* é, U+00A0 (the first after C1), euro, U+202F and U+2065 (beside the bidi ranges), snake */
	assert_string_equal(safe("\xc3\xa9 \xc2\xa0 \xe2\x82\xac \xe2\x80\xaf \xe2\x81\xa5 \xf0\x9f\x90\x8d"),
			    "\xc3\xa9 \xc2\xa0 \xe2\x82\xac \xe2\x80\xaf \xe2\x81\xa5 \xf0\x9f\x90\x8d");
	assert_string_equal(safe("\xe2\x80\xa9"), "\xe2\x80\xa9"); /* U+2029 below U+202A */
}

static void test_controls(void **state)
{
	(void)state;
	assert_string_equal(safe("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
	assert_string_equal(safe("a\nb\tc\rd\x7f" "e\x01"), "a\\x0ab\\x09c\\x0dd\\x7fe\\x01");
	/* C1: U+0080, U+009B (CSI), U+009F */
	assert_string_equal(safe("\xc2\x80\xc2\x9b\xc2\x9f"), "\\u0080\\u009b\\u009f");
	/* bidi: U+202A, U+202E, U+2066, U+2069 */
	assert_string_equal(safe("\xe2\x80\xaa" "a\xe2\x80\xae" "b\xe2\x81\xa6" "c\xe2\x81\xa9"),
			    "\\u202aa\\u202eb\\u2066c\\u2069");
}

static void test_invalid_utf8(void **state)
{
	(void)state;
	/* a raw C1 byte, a stray continuation, 0xff, an overlong '/', a surrogate, a cut sequence */
	assert_string_equal(safe("\x9b" "1\x80" "2\xff" "3\xc0\xaf" "4\xed\xa0\x80" "5\xe2\x82"),
			    "\\x9b1\\x802\\xff3\\xc0\\xaf4\\xed\\xa0\\x805\\xe2\\x82");
}

static void test_one_char(void **state)
{
	char out[TB_TERMSAFE_MAX];
	size_t n;

	(void)state;
	assert_int_equal(tb_termsafe_char((const unsigned char *)"\xf0\x9f\x90\x8dz", 5, out, &n), 4);
	assert_int_equal(n, 4);
	assert_memory_equal(out, "\xf0\x9f\x90\x8d", 4);
	/* the sequence is cut by avail: its first byte alone */
	assert_int_equal(tb_termsafe_char((const unsigned char *)"\xf0\x9f\x90\x8d", 3, out, &n), 1);
	assert_int_equal(n, 4);
	assert_memory_equal(out, "\\xf0", 4);
	assert_int_equal(tb_termsafe_char((const unsigned char *)"\xe2\x80\xae", 3, out, &n), 3);
	assert_int_equal(n, TB_TERMSAFE_MAX);
	assert_memory_equal(out, "\\u202e", 6);
}

static void test_cut(void **state)
{
	char buf[10];

	(void)state;
	assert_string_equal(tb_termsafe("123456789", buf, sizeof(buf)), "123456789");
	assert_string_equal(tb_termsafe("1234567890", buf, sizeof(buf)), "123456...");
	/* an escape is never cut in two */
	assert_string_equal(tb_termsafe("12345\x1b", buf, sizeof(buf)), "12345\\x1b");
	assert_string_equal(tb_termsafe("123456\x1b", buf, sizeof(buf)), "123456...");
	assert_string_equal(tb_termsafe("1\x1b\x1b", buf, sizeof(buf)), "1\\x1b\\x1b");
	assert_string_equal(tb_termsafe("1\x1b\x1b\x1b", buf, sizeof(buf)), "1\\x1b...");
	/* nor a character */
	assert_string_equal(tb_termsafe("12345\xf0\x9f\x90\x8d", buf, sizeof(buf)), "12345\xf0\x9f\x90\x8d");
	assert_string_equal(tb_termsafe("123456\xf0\x9f\x90\x8d", buf, sizeof(buf)), "123456...");
	assert_string_equal(tb_termsafe("\xf0\x9f\x90\x8d\xf0\x9f\x90\x8d\xf0\x9f\x90\x8d", buf, sizeof(buf)),
			    "\xf0\x9f\x90\x8d...");
	assert_string_equal(tb_termsafe("12345", buf, 4), "...");
	assert_string_equal(tb_termsafe("123", buf, 4), "123");
}

static void test_put(void **state)
{
	char *out = NULL, *in = malloc(100001);
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	memset(in, 0x07, 100000);
	in[100000] = '\0';
	tb_termsafe_put(f, in);
	fclose(f);
	assert_int_equal(len, 400000);
	assert_memory_equal(out, "\\x07\\x07", 8);
	free(in);
	free(out);
}

/* The name tests/hostile/run.py gives a thread and a function. */
static void test_hostile_name(void **state)
{
	const char *name = "\x1b]0;pwned-title\x07\x1b[2J\x1b[31mred\r0 lost";
	const char *s = safe(name);

	(void)state;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		assert_true(*p >= 0x20 && *p < 0x7f);
	assert_string_equal(s, "\\x1b]0;pwned-title\\x07\\x1b[2J\\x1b[31mred\\x0d0 lost");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept),
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_one_char),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_put),
		cmocka_unit_test(test_hostile_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
