/* test_kallsyms.c: the /proc/kallsyms reader on fixture files (core and
 * module symbols, other symbol kinds, unsorted input, aliases, all-zero
 * addresses as kptr_restrict shows them, huge lines, garbage, no final
 * newline, a FIFO and a symlink refused), the lookup (return addresses,
 * module space, the rate-limited re-read for modules loaded later), and a
 * live check that do_syscall_64 and schedule resolve on this kernel. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "proc/kallsyms.h"

static char path[] = "/tmp/tb-test-kallsyms-XXXXXX";

static void write_fixture(const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

static void load(struct tb_ksyms *k, const char *text)
{
	char err[256];

	write_fixture(text, strlen(text));
	if (tb_ksyms_load(k, path, err, sizeof(err)))
		fail_msg("%s", err);
}

/* the name at addr ("" for none), with *off and *module */
static const char *at(struct tb_ksyms *k, uint64_t addr, int is_ra, uint64_t *off, const char **module)
{
	uint64_t o;
	const char *m, *s = tb_ksyms_lookup(k, addr, is_ra, &o, &m);

	if (off)
		*off = s ? o : 0;
	if (module)
		*module = s ? m : "";
	return s ? s : "";
}

static const char fixture[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T startup_64\n"          /* alias: the first listed wins */
	"ffffffff81200000 t do_nanosleep\n"
	"ffffffff81100000 T do_syscall_64\n"       /* unsorted */
	"ffffffff81800000 D some_data\n"           /* data: ignored */
	"ffffffff81300000 W weak_fn\n"
	"ffffffff81400000 T _etext\n"
	"ffffffffc0a00000 t nft_do_chain\t[nf_tables]\n"
	"ffffffffc0a01000 T nft_other\t[nf_tables]\n"
	"ffffffffc0b00000 t bpf_prog_1234_f\t[bpf]\n";

static void test_lookup(void **state)
{
	struct tb_ksyms k;
	uint64_t off;
	const char *mod;

	(void)state;
	load(&k, fixture);
	assert_int_equal(k.n, 8);
	assert_false(k.hidden);
	assert_int_equal(k.skipped, 0);
	assert_int_equal(k.kernel_end, 0xffffffff81400000ull);
	assert_string_equal(at(&k, 0xffffffff81000000ull, 0, &off, &mod), "_text");
	assert_string_equal(mod, "");
	assert_string_equal(at(&k, 0xffffffff81100010ull, 0, &off, NULL), "do_syscall_64");
	assert_int_equal(off, 0x10);
	/* a return address at a function's start belongs to the caller before it */
	assert_string_equal(at(&k, 0xffffffff81200000ull, 1, &off, NULL), "do_syscall_64");
	assert_int_equal(off, 0x100000);
	assert_string_equal(at(&k, 0xffffffff81200000ull, 0, NULL, NULL), "do_nanosleep");
	assert_string_equal(at(&k, 0xffffffff81300004ull, 0, NULL, NULL), "weak_fn");
	assert_string_equal(at(&k, 0xffffffff80ffffffull, 0, NULL, NULL), "");
	assert_string_equal(at(&k, 0xffffffffc0a00123ull, 0, NULL, &mod), "nft_do_chain");
	assert_string_equal(mod, "nf_tables");
	assert_string_equal(at(&k, 0xffffffffc0b00040ull, 0, NULL, &mod), "bpf_prog_1234_f");
	assert_string_equal(mod, "bpf");
	/* module space far from any module symbol: not covered */
	k.reload_ns = UINT64_MAX;
	assert_string_equal(at(&k, 0xffffffffc0e00000ull, 0, NULL, NULL), "");
	assert_int_equal(k.reloads, 0);
	tb_ksyms_free(&k);
}

static void test_hidden(void **state)
{
	struct tb_ksyms k;

	(void)state;
	load(&k, "0000000000000000 T _text\n0000000000000000 t foo\t[mod]\n"
		 "0000000000000000 D data\n");
	assert_true(k.hidden);
	assert_int_equal(k.n, 0);
	assert_string_equal(at(&k, 0xffffffff81000000ull, 0, NULL, NULL), "");
	tb_ksyms_free(&k);
	/* a few zeros among real addresses are dropped, not "hidden" */
	load(&k, "0000000000000000 T odd\nffffffff81000000 T _text\n");
	assert_false(k.hidden);
	assert_int_equal(k.n, 1);
	tb_ksyms_free(&k);
	load(&k, "");
	assert_false(k.hidden);
	assert_int_equal(k.n, 0);
	tb_ksyms_free(&k);
}

static void test_garbage_and_huge_lines(void **state)
{
	static const char *bad[] = {
		"garbage\n",
		"ffffffff81000000\n",
		"ffffffff81000000 T\n",
		"ffffffff81000000 T \n",
		"ffffffff81000000 TT name\n",
		"fffffffff81000000 T seventeen_digits\n",
		"ffffffff8100000g T bad_hex\n",
		" ffffffff81000000 T leading_space\n",
		"ffffffff81000000 T name [unclosed\n",
		"ffffffff81000000 T name\t[]\n",
		"\x01\x02\xff\xfe\n",
	};
	size_t big = 200000, len = 0;
	char *text = malloc(big + 4096), name[600];
	struct tb_ksyms k;

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		len += (size_t)sprintf(text + len, "%s", bad[i]);
	memset(name, 'n', 512);                                   /* a 512-byte name */
	name[512] = '\0';
	len += (size_t)sprintf(text + len, "ffffffff81100000 T %s\n", name);
	len += (size_t)sprintf(text + len, "ffffffff81000000 T ");
	memset(text + len, 'x', big);                             /* a 200 KB line */
	len += big;
	len += (size_t)sprintf(text + len, "\nffffffff81200000 T good\nffffffff81300000 T last");
	write_fixture(text, len);
	assert_int_equal(tb_ksyms_load(&k, path, name, sizeof(name)), 0);
	assert_int_equal(k.n, 2);                                 /* good, and last (no newline) */
	assert_int_equal(k.skipped, sizeof(bad) / sizeof(bad[0]) + 2);
	assert_string_equal(at(&k, 0xffffffff81200001ull, 0, NULL, NULL), "good");
	assert_string_equal(at(&k, 0xffffffff81300001ull, 0, NULL, NULL), "last");
	tb_ksyms_free(&k);
	free(text);
}

static void test_refused_files(void **state)
{
	char dir[] = "/tmp/tb-test-ksyms-dir-XXXXXX", fifo[256], link[256], err[256];
	struct tb_ksyms k;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(tb_ksyms_load(&k, fifo, err, sizeof(err)), -1);   /* no hang either */
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(tb_ksyms_load(&k, link, err, sizeof(err)), -1);
	assert_int_equal(tb_ksyms_load(&k, "/nonexistent/kallsyms", err, sizeof(err)), -1);
	assert_int_equal(tb_ksyms_load(&k, dir, err, sizeof(err)), -1);
	unlink(fifo);
	unlink(link);
	rmdir(dir);
}

static void test_reload_for_new_module(void **state)
{
	static const char later[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81400000 T _etext\n"
		"ffffffffc0a00000 t nft_do_chain\t[nf_tables]\n"
		"ffffffffc0e00000 t new_fn\t[late_module]\n";
	struct tb_ksyms k;
	const char *mod;

	(void)state;
	load(&k, fixture);
	write_fixture(later, strlen(later));
	/* read less than reload_ns ago: no re-read */
	assert_string_equal(at(&k, 0xffffffffc0e00010ull, 0, NULL, NULL), "");
	assert_int_equal(k.reloads, 0);
	k.reload_ns = 0;
	assert_string_equal(at(&k, 0xffffffffc0e00010ull, 0, NULL, &mod), "new_fn");
	assert_string_equal(mod, "late_module");
	assert_int_equal(k.reloads, 1);
	assert_int_equal(k.n, 4);
	/* misses below _etext never re-read */
	assert_string_equal(at(&k, 0xffffffff80000000ull, 0, NULL, NULL), "");
	assert_int_equal(k.reloads, 1);
	/* a re-read that finds nothing keeps the table */
	write_fixture("0000000000000000 T _text\n", 25);
	assert_string_equal(at(&k, 0xffffffffc0f00000ull, 0, NULL, NULL), "");
	assert_int_equal(k.reloads, 2);
	assert_int_equal(k.n, 4);
	tb_ksyms_free(&k);
}

/* the address of a text symbol, read from /proc/kallsyms here */
static uint64_t live_address(const char *name)
{
	FILE *f = fopen(TB_KSYMS_PATH, "r");
	char line[1100], sym[600], type;
	unsigned long long a, found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %599s", &a, &type, sym) == 3 && strcmp(sym, name) == 0 &&
		    strchr("tT", type))
			found = a;
	fclose(f);
	return found;
}

static void test_live(void **state)
{
	static const char *names[] = { "do_syscall_64", "schedule", "do_nanosleep" };
	struct tb_ksyms k;
	char err[256];

	(void)state;
	if (tb_ksyms_load(&k, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	if (k.hidden) {
		printf("  kallsyms: %s (live lookups skipped)\n", TB_KSYMS_HIDDEN);
		tb_ksyms_free(&k);
		return;
	}
	assert_true(k.n > 10000);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t a = live_address(names[i]), off;

		assert_true(a != 0);
		assert_string_equal(at(&k, a + 1, 1, &off, NULL), names[i]);
		assert_int_equal(off, 1);
	}
	tb_ksyms_free(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_hidden),
		cmocka_unit_test(test_garbage_and_huge_lines),
		cmocka_unit_test(test_refused_files),
		cmocka_unit_test(test_reload_for_new_module),
		cmocka_unit_test(test_live),
	};
	int fd = mkstemp(path), rc;

	if (fd < 0)
		return 1;
	close(fd);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	return rc;
}
