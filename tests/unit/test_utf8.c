/* test_utf8.c: the UTF-8 validator (valid sequences of every length; stray,
 * overlong, surrogate and out-of-range forms; sequences cut by the end of
 * the buffer), the encoder (round trips, replacement), and the writers
 * that use them (JSON strings: U+FFFD for each bad byte). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib/jsonw.h"
#include "lib/utf8.h"

static int len_of(const char *s, size_t avail)
{
	return tb_utf8_len((const unsigned char *)s, avail);
}

static void test_valid(void **state)
{
	(void)state;
	assert_int_equal(len_of("a", 1), 1);
	assert_int_equal(len_of("\x7f", 1), 1);
	assert_int_equal(len_of("\xc2\x80", 2), 2);          /* U+0080 */
	assert_int_equal(len_of("\xdf\xbf", 2), 2);          /* U+07FF */
	assert_int_equal(len_of("\xe0\xa0\x80", 3), 3);      /* U+0800 */
	assert_int_equal(len_of("\xe2\x82\xac", 3), 3);      /* euro sign */
	assert_int_equal(len_of("\xed\x9f\xbf", 3), 3);      /* U+D7FF, below the surrogates */
	assert_int_equal(len_of("\xee\x80\x80", 3), 3);      /* U+E000, above them */
	assert_int_equal(len_of("\xef\xbf\xbd", 3), 3);      /* U+FFFD */
	assert_int_equal(len_of("\xf0\x90\x80\x80", 4), 4);  /* U+10000 */
	assert_int_equal(len_of("\xf0\x9f\x90\x8d", 4), 4);  /* snake */
	assert_int_equal(len_of("\xf4\x8f\xbf\xbf", 4), 4);  /* U+10FFFF */
	/* more room than needed changes nothing */
	assert_int_equal(len_of("\xc3\xa9xyz", 5), 2);
}

static void test_invalid(void **state)
{
	(void)state;
	assert_int_equal(len_of("\x80", 1), 0);              /* stray continuation */
	assert_int_equal(len_of("\xbf\x80", 2), 0);
	assert_int_equal(len_of("\xc3\x28", 2), 0);          /* lead without continuation */
	assert_int_equal(len_of("\xe2\x28\xa1", 3), 0);
	assert_int_equal(len_of("\xe2\x82\x28", 3), 0);
	assert_int_equal(len_of("\xf0\x90\x28\xbc", 4), 0);
	assert_int_equal(len_of("\xf0\x90\x80\x28", 4), 0);
	assert_int_equal(len_of("\xf5\x80\x80\x80", 4), 0);  /* leads that cannot start anything */
	assert_int_equal(len_of("\xf8\x88\x80\x80\x80", 5), 0);
	assert_int_equal(len_of("\xfe", 1), 0);
	assert_int_equal(len_of("\xff", 1), 0);
	assert_int_equal(len_of("", 0), 0);                  /* nothing to read */
}

static void test_overlong_surrogate_range(void **state)
{
	(void)state;
	assert_int_equal(len_of("\xc0\xaf", 2), 0);          /* '/' in two bytes */
	assert_int_equal(len_of("\xc1\xbf", 2), 0);
	assert_int_equal(len_of("\xe0\x80\xaf", 3), 0);      /* in three */
	assert_int_equal(len_of("\xe0\x9f\xbf", 3), 0);      /* U+07FF in three */
	assert_int_equal(len_of("\xf0\x80\x80\xaf", 4), 0);  /* in four */
	assert_int_equal(len_of("\xf0\x8f\xbf\xbf", 4), 0);  /* U+FFFF in four */
	assert_int_equal(len_of("\xed\xa0\x80", 3), 0);      /* U+D800 */
	assert_int_equal(len_of("\xed\xbf\xbf", 3), 0);      /* U+DFFF */
	assert_int_equal(len_of("\xf4\x90\x80\x80", 4), 0);  /* U+110000 */
	assert_int_equal(len_of("\xf7\xbf\xbf\xbf", 4), 0);
}

/* A sequence cut by the end of the buffer is invalid, and nothing past
 * the end is read (the buffers are exactly avail bytes long). */
static void test_truncated(void **state)
{
	static const char *const seqs[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x90\x8d" };

	(void)state;
	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		size_t n = strlen(seqs[i]);

		for (size_t cut = 1; cut < n; cut++) {
			unsigned char *buf = malloc(cut);

			memcpy(buf, seqs[i], cut);
			assert_int_equal(tb_utf8_len(buf, cut), 0);
			free(buf);
		}
	}
	/* a NUL-terminated string: the NUL ends the sequence */
	assert_int_equal(tb_utf8_len_z((const unsigned char *)"\xe2\x82"), 0);
	assert_int_equal(tb_utf8_len_z((const unsigned char *)"\xf0"), 0);
	assert_int_equal(tb_utf8_len_z((const unsigned char *)"\xf0\x9f\x90\x8d"), 4);
}

static void test_encode(void **state)
{
	static const uint32_t cps[] = { 0, 0x41, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfffd, 0xffff,
					0x10000, 0x1f40d, 0x10ffff };
	unsigned char b[4];

	(void)state;
	for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]); i++) {
		int n = tb_utf8_encode(cps[i], b);

		assert_int_equal(n, cps[i] < 0x80 ? 1 : cps[i] < 0x800 ? 2 : cps[i] < 0x10000 ? 3 : 4);
		if (cps[i]) /* the validator takes what the encoder makes */
			assert_int_equal(tb_utf8_len(b, (size_t)n), n);
	}
	assert_int_equal(tb_utf8_encode(0x20ac, b), 3);
	assert_memory_equal(b, "\xe2\x82\xac", 3);
	/* surrogates and values above U+10FFFF become U+FFFD */
	static const uint32_t bad[] = { 0xd800, 0xdbff, 0xdc00, 0xdfff, 0x110000, 0xffffffff };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(tb_utf8_encode(bad[i], b), 3);
		assert_memory_equal(b, TB_UTF8_REPLACEMENT, 3);
	}
}

static void test_json_string(void **state)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	tb_json_str(f, "a\xc3\xa9\xed\xa0\x80<\xe2\x82");
	fclose(f);
	/* é kept, each byte of the surrogate and of the cut sequence replaced */
	assert_string_equal(out, "\"a\xc3\xa9\\ufffd\\ufffd\\ufffd\\u003c\\ufffd\\ufffd\"");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_overlong_surrogate_range),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_json_string),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
