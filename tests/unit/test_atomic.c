/* test_atomic.c: output files (tb_write_atomic), with O_TMPFILE and with its
 * O_EXCL fallback: symlinks planted at the old predictable temporary name
 * (PATH.tmp.PID) and at the final name, pointing to a victim file, leave the
 * victim untouched (the one at the final name is replaced); a failing writer
 * or a missing directory leave no file behind; a directory at the final name
 * keeps the output under the random name err gives; the mode is 0600, the
 * owner SUDO_UID/SUDO_GID when set; tb_check_writable answers before a
 * capture and leaves nothing behind. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "output/atomic.h"

#define VICTIM_TEXT "precious\n"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/tb-atomic-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	umask(022);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static int write_text(const void *ctx, FILE *f)
{
	return fputs(ctx, f) < 0 ? -1 : 0;
}

static int write_then_fail(const void *ctx, FILE *f)
{
	fputs(ctx, f);
	return -1;
}

static void assert_file(const char *path, const char *text)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, text);
}

/* The names in the directory, sorted, as "a b c". */
static void listing(char *buf, size_t len)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	size_t pos = 0;

	assert_true(n >= 0);
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", pos ? " " : "",
						names[i]->d_name);
		free(names[i]);
	}
	free(names);
}

static void planted_symlinks(int no_tmpfile)
{
	char victim[128], out[128], planted[160], err[256] = "", list[512], want[512];
	struct stat st;
	FILE *f;

	tb_atomic_no_tmpfile = no_tmpfile;
	path_of(victim, sizeof(victim), "victim");
	path_of(out, sizeof(out), "out.folded");
	snprintf(planted, sizeof(planted), "%s.tmp.%d", out, (int)getpid());
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs(VICTIM_TEXT, f);
	fclose(f);
	assert_int_equal(symlink(victim, planted), 0);
	assert_int_equal(symlink(victim, out), 0);

	assert_int_equal(tb_write_atomic(out, write_text, "a;b 1\n", err, sizeof(err)), 0);
	assert_file(victim, VICTIM_TEXT);
	assert_int_equal(lstat(out, &st), 0);
	assert_true(S_ISREG(st.st_mode));          /* the symlink was replaced */
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_file(out, "a;b 1\n");
	assert_int_equal(lstat(planted, &st), 0);
	assert_true(S_ISLNK(st.st_mode));          /* not ours: left alone */
	listing(list, sizeof(list));
	snprintf(want, sizeof(want), "out.folded out.folded.tmp.%d victim", (int)getpid());
	assert_string_equal(list, want);           /* and no temporary file left */

	/* the same again over our own file, and a second time */
	assert_int_equal(tb_write_atomic(out, write_text, "c 2\n", err, sizeof(err)), 0);
	assert_file(out, "c 2\n");
	assert_file(victim, VICTIM_TEXT);
	unlink(out);
	unlink(planted);
	unlink(victim);
	tb_atomic_no_tmpfile = 0;
}

static void test_planted_symlinks(void **state)
{
	(void)state;
	planted_symlinks(0);
}

static void test_planted_symlinks_fallback(void **state)
{
	(void)state;
	planted_symlinks(1);
}

static void failures(int no_tmpfile)
{
	char out[128], sub[128], missing[128], err[256] = "", list[512];

	tb_atomic_no_tmpfile = no_tmpfile;
	path_of(out, sizeof(out), "keep.txt");
	/* a failing writer: nothing written, the old file kept */
	assert_int_equal(tb_write_atomic(out, write_text, "old\n", err, sizeof(err)), 0);
	assert_int_equal(tb_write_atomic(out, write_then_fail, "half", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "keep.txt: write failed"));
	assert_null(strchr(err, '\n'));
	assert_file(out, "old\n");
	/* a directory at the final name: the output kept under the name err gives */
	path_of(sub, sizeof(sub), "sub.json");
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(tb_write_atomic(sub, write_text, "{}", err, sizeof(err)), TB_ATOMIC_KEPT);
	assert_non_null(strstr(err, "sub.json: "));
	assert_null(strchr(err, '\n'));
	{
		const char *kept = strstr(err, "the output is kept as ");

		assert_non_null(kept);
		kept += strlen("the output is kept as ");
		assert_int_equal(strncmp(kept, dir, strlen(dir)), 0);
		assert_non_null(strstr(kept, "/sub.json.tmp."));
		assert_file(kept, "{}");
		assert_int_equal(unlink(kept), 0);
	}
	/* a missing directory, a path that names a directory */
	path_of(missing, sizeof(missing), "nodir/x.json");
	assert_int_equal(tb_write_atomic(missing, write_text, "{}", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file or directory"));
	path_of(missing, sizeof(missing), "sub.json/");
	assert_int_equal(tb_write_atomic(missing, write_text, "{}", err, sizeof(err)), -1);
	listing(list, sizeof(list));
	assert_string_equal(list, "keep.txt sub.json");
	rmdir(sub);
	unlink(out);
	tb_atomic_no_tmpfile = 0;
}

static void test_failures(void **state)
{
	(void)state;
	failures(0);
}

static void test_failures_fallback(void **state)
{
	(void)state;
	failures(1);
}

/* A name without a directory goes to the current one. */
static void test_relative_name(void **state)
{
	char cwd[4096], err[256] = "", list[512];

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(tb_write_atomic("rel.txt", write_text, "r\n", err, sizeof(err)), 0);
	assert_int_equal(chdir(cwd), 0);
	listing(list, sizeof(list));
	assert_string_equal(list, "rel.txt");
	path_of(cwd, sizeof(cwd), "rel.txt");
	assert_file(cwd, "r\n");
	unlink(cwd);
}

/* Before a capture: a new or existing file (or a symlink, which the write
 * replaces) is fine; a missing directory, a directory, a FIFO are refused;
 * nothing is left in the directory either way. */
static void check_writable(int no_tmpfile)
{
	char path[128], err[512] = "", list[512];

	tb_atomic_no_tmpfile = no_tmpfile;
	path_of(path, sizeof(path), "new.html");
	assert_int_equal(tb_check_writable(path, err, sizeof(err)), 0);
	listing(list, sizeof(list));
	assert_string_equal(list, "");
	path_of(path, sizeof(path), "old.html");
	assert_int_equal(tb_write_atomic(path, write_text, "x", err, sizeof(err)), 0);
	assert_int_equal(tb_check_writable(path, err, sizeof(err)), 0);
	assert_file(path, "x");
	unlink(path);
	path_of(path, sizeof(path), "link.html");
	assert_int_equal(symlink("/etc/passwd", path), 0);
	assert_int_equal(tb_check_writable(path, err, sizeof(err)), 0);
	unlink(path);
	path_of(path, sizeof(path), "nodir/x.html");
	assert_int_equal(tb_check_writable(path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "its directory does not exist"));
	path_of(path, sizeof(path), "d.html");
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(tb_check_writable(path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is a directory"));
	rmdir(path);
	path_of(path, sizeof(path), "f.html");
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(tb_check_writable(path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is a FIFO"));
	assert_null(strchr(err, '\n'));
	unlink(path);
	listing(list, sizeof(list));
	assert_string_equal(list, "");
	tb_atomic_no_tmpfile = 0;
}

static void test_check_writable(void **state)
{
	(void)state;
	check_writable(0);
	check_writable(1);
}

/* Root run through sudo: the output is the sudo user's (0600); a bad SUDO_UID is ignored. */
static void test_sudo_owner(void **state)
{
	char out[128], err[256] = "";
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		skip();
	path_of(out, sizeof(out), "mine.json");
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	assert_int_equal(tb_write_atomic(out, write_text, "{}", err, sizeof(err)), 0);
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(st.st_gid, 65534);
	assert_int_equal(st.st_mode & 07777, 0600);
	setenv("SUDO_UID", "12x", 1);
	assert_int_equal(tb_write_atomic(out, write_text, "{}", err, sizeof(err)), 0);
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(st.st_uid, 0);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	unlink(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_planted_symlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_planted_symlinks_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failures_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relative_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sudo_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_writable, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
