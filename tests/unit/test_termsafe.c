/* test_termsafe.c: text made safe for a terminal (lib/termsafe.c): C0
 * controls, DEL, C1 controls, bidi controls and invalid UTF-8 escaped;
 * printable ASCII and other UTF-8 kept; long text written whole across
 * the writer's chunks; message lines; and the forged summary line of
 * tests/hostile/run.py comes out without one control byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib/termsafe.h"

/* what tb_termsafe_put writes for s (freed at the next call) */
static const char *safe(const char *s)
{
	static char *out;
	size_t len = 0;
	FILE *f;

	free(out);
	out = NULL;
	f = open_memstream(&out, &len);
	tb_termsafe_put(f, s);
	fclose(f);
	return out;
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

static void test_long(void **state)
{
	char *in = malloc(100001), *want = malloc(400001), *got;
	size_t n = 0;

	(void)state;
	/* every chunk boundary of the writer falls somewhere in an escape */
	for (int i = 0; i < 100000; i++)
		in[i] = i % 7 == 0 ? 'a' : i % 7 == 1 ? 0x1b : "bcdef"[i % 5];
	in[100000] = '\0';
	for (int i = 0; i < 100000; i++) {
		if (in[i] == 0x1b) {
			memcpy(want + n, "\\x1b", 4);
			n += 4;
		} else {
			want[n++] = in[i];
		}
	}
	want[n] = '\0';
	got = (char *)safe(in);
	assert_int_equal(strlen(got), n);
	assert_string_equal(got, want);
	free(in);
	free(want);
}

static void test_line(void **state)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	tb_termsafe_line(f, "tachyon-bpf: skipping ", "pid 7 (\x1b[2J): not a Python process\n0 lost");
	fclose(f);
	assert_string_equal(out, "tachyon-bpf: skipping pid 7 (\\x1b[2J): not a Python process\\x0a0 lost\n");
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
		cmocka_unit_test(test_long),
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_hostile_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
