/* test_usagetext.c: cmocka tests of cmd/usagetext.c, the reader of the
 * commands' usage texts that the man page and the shell completions are made
 * from: the kinds of lines (synopsis and its continuations, headings, items
 * with their terms cut where the prose begins, their continuations, rows of
 * a table under an item, prose),
 * the options a text documents (items first, then the synopsis, each once,
 * with their argument names), the bound on how many, and the real texts of
 * render, diff and dump (each documents -h/--help; render documents -o with
 * OUT and --sort with its values). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cmd/usagetext.h"
#include "cmd/commands.h"

static const char SAMPLE[] =
	"usage: tachyon-bpf render CAP -o OUT [--by-line] [--sort own|total|name]\n"
	"       [-q] [-p PID[,PID...]]\n"
	"       tachyon-bpf --live ...\n"
	"Writes outputs, format by extension:\n"
	"Targets:\n"
	"  .html              flame graph page\n"
	"  -o, --output FILE  an output\n"
	"                     (repeatable)\n"
	"                     .x   a row under it\n"
	"                     not its help\n"
	"  --json-version 1|2 the tree JSON's version\n"
	"  --from T, --to T   a slice\n"
	"\n"
	"Keys: q quit.\n";

static void test_line_kinds(void **state)
{
	static const enum tb_uline_kind want[] = {
		TB_UL_SYNOPSIS, TB_UL_SYNOPSIS, TB_UL_SYNOPSIS, TB_UL_TEXT, TB_UL_HEADING, TB_UL_ITEM,
		TB_UL_ITEM, TB_UL_MORE, TB_UL_MORE, TB_UL_MORE, TB_UL_ITEM, TB_UL_ITEM, TB_UL_BLANK,
		TB_UL_TEXT,
	};
	struct tb_usage_iter it;
	struct tb_uline l;
	size_t n = 0;

	(void)state;
	tb_usage_iter_init(&it, SAMPLE, strlen(SAMPLE));
	while (tb_usage_next(&it, &l)) {
		assert_true(n < sizeof(want) / sizeof(want[0]));
		assert_int_equal(l.kind, want[n]);
		if (n == 0)
			assert_memory_equal(l.text, "tachyon-bpf render", 18);
		if (n == 7 || n == 8 || n == 9)
			assert_int_equal(tb_usage_is_row(&l), n == 8);
		if (n == 10) { /* one space between the term and the prose */
			assert_int_equal(l.term_len, strlen("--json-version 1|2"));
			assert_memory_equal(l.term, "--json-version 1|2", l.term_len);
			assert_int_equal(l.text_len, strlen("the tree JSON's version"));
		}
		if (n == 11)
			assert_int_equal(l.term_len, strlen("--from T, --to T"));
		n++;
	}
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
}

static const struct tb_usage_opt *find(const struct tb_usage_opt *o, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(o[i].name, name))
			return &o[i];
	return NULL;
}

static void test_options(void **state)
{
	struct tb_usage_opt o[32];
	size_t n = tb_usage_options(SAMPLE, strlen(SAMPLE), o, 32);
	const struct tb_usage_opt *x;

	(void)state;
	/* items: -o --output --json-version --from --to; synopsis: --by-line --sort -q -p */
	assert_int_equal(n, 9);
	assert_string_equal(o[0].name, "-o");
	assert_string_equal(o[0].arg, "FILE"); /* its part has none: the last part's */
	assert_string_equal(o[0].help, "an output (repeatable)"); /* prose joined, the row ends it */
	assert_non_null(x = find(o, n, "--from"));
	assert_string_equal(x->arg, "T");
	assert_non_null(x = find(o, n, "--sort"));
	assert_string_equal(x->arg, "own|total|name");
	assert_string_equal(x->help, "");
	assert_non_null(x = find(o, n, "-p"));
	assert_string_equal(x->arg, "PID[,PID...]");
	assert_non_null(x = find(o, n, "-q"));
	assert_string_equal(x->arg, "");
	assert_null(find(o, n, "--live")); /* the word after tachyon-bpf is a command */
	assert_null(find(o, n, ".html"));
	/* bounded: the count, and a help joined past its room is cut */
	{
		char text[4096] = "  --long  ", *p = text + strlen(text);

		for (int i = 0; i < 60; i++)
			p += sprintf(p, "\n            word%02d", i);
		*p++ = '\n';
		assert_int_equal(tb_usage_options(text, (size_t)(p - text), o, 32), 1);
		assert_true(strlen(o[0].help) < TB_UOPT_HELP && strlen(o[0].help) > TB_UOPT_HELP - 10);
		assert_memory_equal(o[0].help, "word00 word01", 13);
	}
	assert_int_equal(tb_usage_options(SAMPLE, strlen(SAMPLE), o, 3), 3);
	assert_int_equal(tb_usage_options("", 0, o, 32), 0);
}

static void test_real_texts(void **state)
{
	/* (record's, top's and dump's link the sampler: tests/install/check.py reads them
	 * through the binary's completions) */
	static void (*const usages[])(FILE *) = { tb_render_usage, tb_diff_usage };
	struct tb_usage_opt o[96];
	const struct tb_usage_opt *x;

	(void)state;
	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++) {
		size_t len, n;
		char *text = tb_usage_capture(usages[i], &len);

		assert_non_null(text);
		n = tb_usage_options(text, len, o, 96);
		assert_true(n < 96);
		assert_non_null(x = find(o, n, "--help"));
		assert_string_equal(x->help, "this text");
		assert_non_null(find(o, n, "-h"));
		if (usages[i] == tb_render_usage) {
			assert_non_null(x = find(o, n, "--output"));
			assert_string_equal(x->arg, "OUT");
			assert_non_null(x = find(o, n, "--sort"));
			assert_string_equal(x->arg, "own|total|name");
			assert_non_null(find(o, n, "--list-formats"));
			assert_non_null(find(o, n, "--by-line"));
		}
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_kinds),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_real_texts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
