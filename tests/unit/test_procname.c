/* test_procname.c: a process's display name from its command line (proc/procname.c):
 * scripts, -m modules, -c, interpreter options before them, the ld.so launcher with
 * --argv0, other programs, and hostile argv (control characters, invalid UTF-8, bidi
 * overrides, very long arguments, no NUL at the end, an empty argv). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib/utf8.h"
#include "proc/procname.h"

/* argv given as one string literal with embedded NULs: sizeof - 1 bytes. */
#define NAME_OF(lit, out) tb_procname_from_argv(lit, sizeof(lit) - 1, "comm", out, sizeof(out))

static void test_python_forms(void **state)
{
	char out[TB_PROCNAME_MAX];

	(void)state;
	NAME_OF("/usr/bin/python3\0app.py\0--port\0" "80\0", out);
	assert_string_equal(out, "python3 app.py");
	NAME_OF("python3\0-m\0http.server\0" "8000\0", out);
	assert_string_equal(out, "python3 -m http.server");
	NAME_OF("python3.12\0-u\0-X\0importtime\0-W\0ignore\0-mpkg.mod\0", out);
	assert_string_equal(out, "python3.12 -m pkg.mod");
	NAME_OF("python3\0-OOu\0-c\0import time; time.sleep(9)\0", out);
	assert_string_equal(out, "python3 -c");
	NAME_OF("python3\0-Wignore\0--check-hash-based-pycs\0never\0srv/run.py\0", out);
	assert_string_equal(out, "python3 srv/run.py");
	NAME_OF("python3\0--\0-weird.py\0", out);
	assert_string_equal(out, "python3 -weird.py");
	NAME_OF("python3\0", out);
	assert_string_equal(out, "python3");
	NAME_OF("/opt/venv/bin/gunicorn\0app:app\0", out);   /* a console script's own name */
	assert_string_equal(out, "gunicorn");
	NAME_OF("gunicorn: worker [app]\0\0\0\0", out);        /* setproctitle */
	assert_string_equal(out, "gunicorn: worker [app]");
}

static void test_launcher(void **state)
{
	char out[TB_PROCNAME_MAX];

	(void)state;
	NAME_OF("/x/ld-linux-x86-64.so.2\0--library-path\0/x/lib\0--argv0\0/x/bin/python3.14\0/x/usr/bin/python3.14\0"
		"tests/app.py\0", out);
	assert_string_equal(out, "python3.14 tests/app.py");
	NAME_OF("/lib64/ld-linux-x86-64.so.2\0/usr/bin/python3\0-m\0svc\0", out);
	assert_string_equal(out, "python3 -m svc");
	NAME_OF("/lib64/ld-linux-x86-64.so.2\0--library-path\0", out); /* no program */
	assert_string_equal(out, "ld-linux-x86-64.so.2");
}

static void test_hostile(void **state)
{
	char out[TB_PROCNAME_MAX], big[3000], small[12];

	(void)state;
	NAME_OF("python3\0a\x1b]0;pwned\x07\n.py\0", out);
	assert_string_equal(out, "python3 a?]0;pwned??.py");
	NAME_OF("python3\0\xff\xfe\xc3(\xe2\x80\xae" "evil.py\0", out);  /* invalid bytes, U+202E */
	assert_string_equal(out, "python3 ??\?(?evil.py");
	NAME_OF("python3\0caf\xc3\xa9.py\0", out);
	assert_string_equal(out, "python3 caf\xc3\xa9.py");
	tb_procname_from_argv("", 0, "kworker", out, sizeof(out));
	assert_string_equal(out, "kworker");
	tb_procname_from_argv("", 0, NULL, out, sizeof(out));
	assert_string_equal(out, "");
	tb_procname_from_argv("python3\0sc", 10, NULL, out, sizeof(out)); /* cut, no NUL */
	assert_string_equal(out, "python3 sc");

	/* a very long script path: its end is kept, after "..." */
	memcpy(big, "python3\0", 8);
	memset(big + 8, 'd', sizeof(big) - 8);
	memcpy(big + sizeof(big) - 8, "/app.py", 8);
	tb_procname_from_argv(big, sizeof(big), NULL, out, sizeof(out));
	assert_int_equal(strlen(out), strlen("python3 ") + TB_PROCNAME_ARG_MAX);
	assert_true(!strncmp(out, "python3 ...ddd", 14));
	assert_string_equal(out + strlen(out) - 7, "/app.py");

	/* a long multi-byte name is never cut inside a character, and is elided too */
	memcpy(big, "python3\0", 8);
	for (size_t i = 8; i + 2 < sizeof(big); i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	big[sizeof(big) - 2] = '\0';
	big[sizeof(big) - 1] = '\0';
	tb_procname_from_argv(big, sizeof(big), NULL, out, sizeof(out));
	for (const unsigned char *p = (const unsigned char *)out; *p; p += tb_utf8_len_z(p))
		assert_true(tb_utf8_len_z(p) > 0);
	assert_true(strlen(out) <= strlen("python3 ") + TB_PROCNAME_ARG_MAX);

	/* a small output buffer: cut at a character, NUL-terminated */
	tb_procname_from_argv("python3\0\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9.py\0", 21, NULL, small, sizeof(small));
	assert_string_equal(small, "python3 \xc3\xa9");

	/* more arguments than are looked at: the name is still found */
	memset(big, 0, sizeof(big));
	memcpy(big, "python3", 7);
	for (int i = 0; i < 200; i++)
		memcpy(big + 8 + 3 * i, "-u", 2);
	memcpy(big + 8 + 3 * 200, "late.py", 8);
	tb_procname_from_argv(big, 8 + 3 * 200 + 8, NULL, out, sizeof(out));
	assert_string_equal(out, "python3");
	NAME_OF("python3\0\0\0app.py\0", out);
	assert_string_equal(out, "python3 app.py");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_forms),
		cmocka_unit_test(test_launcher),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
