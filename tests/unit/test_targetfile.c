/* test_targetfile.c: files read as a target process would (proc/targetfile.c)
 * and the credentials they are read with (proc/creds.c).  For a target of
 * user nobody, a root-only file is refused and a world-readable one read;
 * a root target reads it; a FIFO and /dev/null are refused without being
 * opened for reading (a writer blocked on the FIFO stays blocked); a
 * symlink inside a chrooted target's root that points outside resolves
 * inside, and ".." stops at that root; a 0-length file reads as "", one
 * over the cap is refused; no helper is left behind and no descriptor
 * leaks; a file on a FUSE file system that never answers its open times
 * out after TB_TF_TIMEOUT_MS, the helper abandoned and reaped later.
 * /proc/PID/status parsing: the fs ids, the groups, and the lines that
 * must fail (cut off, malformed, too many groups).  ELF facts of a
 * mapping: our own executable (no runtime) twice, and a copy cut short
 * while a child maps it (no signal).  Needs root (else skipped). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fuse.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "cpython/elffacts.h"
#include "proc/creds.h"
#include "proc/targetfile.h"

#define NOBODY 65534

static char dir[64];
/* children still running, killed by teardown when a test fails midway */
static pid_t kids[8];
static int nkids;

/* ------------------------------------------------------------ fixtures */

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void put_file(const char *name, const char *text, mode_t mode)
{
	char p[256];
	FILE *f;

	path_of(p, sizeof(p), name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
}

static int setup(void **state)
{
	(void)state;
	if (geteuid() != 0)
		return 0;
	snprintf(dir, sizeof(dir), "/tmp/tb-targetfile-XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 0755))
		return -1;
	return 0;
}

static void stop(pid_t pid);

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	if (geteuid() != 0)
		return 0;
	snprintf(cmd, sizeof(cmd), "%s/fuse", dir);
	umount2(cmd, MNT_DETACH);
	while (nkids)
		stop(kids[0]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* fork(), the child remembered until stop() */
static pid_t spawn(void)
{
	pid_t pid;

	assert_true(nkids < 8);
	pid = fork();
	assert_true(pid >= 0);
	if (pid > 0)
		kids[nkids++] = pid;
	return pid;
}

/* A child that sleeps as uid/gid `id` (0: root), chrooted to `root` if not
 * NULL; it is ready when this returns. */
static pid_t start_target(uid_t id, const char *root)
{
	int p[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = spawn();
	if (pid == 0) {
		if ((root && (chroot(root) || chdir("/"))) ||
		    (id && (setgroups(0, NULL) || setresgid(id, id, id) || setresuid(id, id, id))))
			_exit(1);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void stop(pid_t pid)
{
	for (int i = 0; i < nkids; i++)
		if (kids[i] == pid) {
			kids[i] = kids[--nkids];
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return;
		}
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Processes whose parent we are (zombies included). */
static int count_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], buf[512], *p;
		int ppid = 0;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		buf[0] = '\0';
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
		/* pid (comm) state ppid: comm may hold spaces and parentheses */
		if ((p = strrchr(buf, ')')) && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == getpid())
			n++;
	}
	closedir(d);
	return n;
}

static const char *read_as(pid_t pid, const char *name, size_t max, char **text)
{
	char p[256];
	size_t len;
	const char *why;

	path_of(p, sizeof(p), name);
	why = tb_target_read(pid, p, max, text, &len);
	if (!why)
		assert_int_equal(strlen(*text), len);
	return why;
}

/* A reason was given, and it is this one. */
static void assert_why(const char *why, const char *want)
{
	assert_non_null(why);
	assert_string_equal(why, want);
}

#define NEED_ROOT() \
	do { if (geteuid() != 0) skip(); } while (0)

/* ------------------------------------------------------------ credentials */

static void test_root_only_refused_for_nobody(void **state)
{
	pid_t nobody, root;
	char *text = NULL, p[256];
	const char *why;
	struct stat st;
	int fd;

	(void)state;
	NEED_ROOT();
	put_file("secret.py", "SECRET\n", 0600);
	put_file("public.py", "PUBLIC\n", 0644);
	nobody = start_target(NOBODY, NULL);
	root = start_target(0, NULL);

	why = read_as(nobody, "secret.py", 1 << 20, &text);
	assert_why(why, "permission denied for the process's user");
	assert_null(text);
	/* the helper's credentials did not stick to us (shared memory) */
	assert_int_equal(geteuid(), 0);
	assert_int_equal(prctl(PR_GET_DUMPABLE), 1);
	assert_int_equal(access("/etc/shadow", R_OK), 0);
	assert_null(read_as(nobody, "public.py", 1 << 20, &text));
	assert_string_equal(text, "PUBLIC\n");
	free(text);
	/* a root target reads as root */
	assert_null(read_as(root, "secret.py", 1 << 20, &text));
	assert_string_equal(text, "SECRET\n");
	free(text);
	/* the descriptor form says the same */
	path_of(p, sizeof(p), "secret.py");
	assert_int_equal(tb_target_open(nobody, p, 1 << 20, &st, &why), -1);
	assert_why(why, "permission denied for the process's user");
	fd = tb_target_open(root, p, 1 << 20, &st, &why);
	assert_true(fd >= 0);
	assert_true(S_ISREG(st.st_mode) && st.st_size == 7);
	close(fd);
	/* what needs a capability, not a mode bit, is refused too: another
	 * user's /proc/PID/maps (0444, but CAP_SYS_PTRACE, which setfsuid
	 * alone would keep) */
	snprintf(p, sizeof(p), "/proc/%d/maps", (int)root);
	assert_why(tb_target_read(nobody, p, 1 << 20, &text, &(size_t){ 0 }),
		   "permission denied for the process's user");
	assert_null(text);
	assert_null(tb_target_read(root, p, 1 << 20, &text, &(size_t){ 0 }));
	free(text);
	/* a directory it cannot search hides what is below */
	assert_int_equal(chmod(dir, 0700), 0);
	assert_why(read_as(nobody, "public.py", 1 << 20, &text),
		   "permission denied for the process's user");
	assert_int_equal(chmod(dir, 0755), 0);
	stop(nobody);
	stop(root);
}

static void test_fifo_and_device_not_opened(void **state)
{
	char fifo[256], marker[256];
	pid_t target, writer;
	char *text = NULL;
	const char *why;
	struct stat st;
	int fd;

	(void)state;
	NEED_ROOT();
	path_of(fifo, sizeof(fifo), "trap.py");
	path_of(marker, sizeof(marker), "opened");
	assert_int_equal(mkfifo(fifo, 0666), 0);
	assert_int_equal(chmod(fifo, 0666), 0);
	/* a writer that gets past open() only if someone opens the FIFO for reading */
	writer = spawn();
	if (writer == 0) {
		int w = open(fifo, O_WRONLY);

		close(open(marker, O_WRONLY | O_CREAT, 0644));
		_exit(w < 0);
	}
	target = start_target(NOBODY, NULL);
	assert_why(read_as(target, "trap.py", 1 << 20, &text), "not a regular file");
	assert_int_equal(tb_target_open(target, fifo, 1 << 20, &st, &why), -1);
	assert_why(why, "not a regular file");
	assert_why(tb_target_read(target, "/dev/null", 1 << 20, &text, &(size_t){ 0 }),
		   "not a regular file");
	/* the same for the agent's own opens (map_files): stat first */
	fd = tb_open_path(fifo, &st, &why);
	assert_true(fd >= 0);
	assert_int_equal(tb_reopen_regular(fd, &st, 1 << 20, &why), -1);
	assert_why(why, "not a regular file");
	close(fd);
	fd = tb_open_path("/dev/null", &st, &why);
	assert_true(fd >= 0);
	assert_int_equal(tb_reopen_regular(fd, &st, 1 << 20, &why), -1);
	close(fd);
	usleep(100 * 1000);
	assert_int_equal(access(marker, F_OK), -1);
	stop(writer);
	stop(target);
}

static void test_symlink_resolves_inside_root(void **state)
{
	char root[256], cmd[1024], link[512], to[512];
	pid_t target;
	char *text = NULL;

	(void)state;
	NEED_ROOT();
	/* DIR/outside.txt outside the target's root (DIR/root), the same path
	 * inside it, and links in the root that point at it by absolute path
	 * and through ".." */
	path_of(root, sizeof(root), "root");
	put_file("outside.txt", "OUTSIDE\n", 0644);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s%s' && echo INSIDE > '%s%s/outside.txt'", root, dir, root, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(link, sizeof(link), "%s/abs.py", root);
	snprintf(to, sizeof(to), "%s/outside.txt", dir);
	assert_int_equal(symlink(to, link), 0);
	snprintf(link, sizeof(link), "%s/dots.py", root);
	snprintf(to, sizeof(to), "../../../../../..%s/outside.txt", dir);
	assert_int_equal(symlink(to, link), 0);
	target = start_target(NOBODY, root);
	assert_null(tb_target_read(target, "/abs.py", 1 << 20, &text, &(size_t){ 0 }));
	assert_string_equal(text, "INSIDE\n");
	free(text);
	assert_null(tb_target_read(target, "/dots.py", 1 << 20, &text, &(size_t){ 0 }));
	assert_string_equal(text, "INSIDE\n");
	free(text);
	/* relative names start at its cwd (its root here) */
	assert_null(tb_target_read(target, "abs.py", 1 << 20, &text, &(size_t){ 0 }));
	assert_string_equal(text, "INSIDE\n");
	free(text);
	assert_why(tb_target_read(target, "/missing.py", 1 << 20, &text, &(size_t){ 0 }),
		   "no such file");
	stop(target);
}

static void test_sizes(void **state)
{
	pid_t target;
	char *text = NULL, p[256];
	const char *why;
	struct stat st;
	int fd;

	(void)state;
	NEED_ROOT();
	put_file("empty.py", "", 0644);
	put_file("big.py", "0123456789", 0644);
	target = start_target(NOBODY, NULL);
	assert_null(read_as(target, "empty.py", 1 << 20, &text));
	assert_string_equal(text, "");
	free(text);
	assert_why(read_as(target, "big.py", 9, &text), "too large");
	assert_null(text);
	assert_null(read_as(target, "big.py", 10, &text));
	assert_string_equal(text, "0123456789");
	free(text);
	path_of(p, sizeof(p), "big.py");
	assert_int_equal(tb_target_open(target, p, 9, &st, &why), -1);
	assert_why(why, "too large");
	fd = tb_target_open(target, p, 10, &st, &why);
	assert_true(fd >= 0);
	close(fd);
	assert_why(tb_target_read(target, "", 1 << 20, &text, &(size_t){ 0 }), "no such file");
	stop(target);
	/* a process that is gone */
	assert_why(read_as(target, "big.py", 10, &text), "the process is gone");
}

static void test_no_leaks(void **state)
{
	int fds, children;
	pid_t target;
	char *text;

	(void)state;
	NEED_ROOT();
	put_file("a.py", "a\n", 0644);
	put_file("secret.py", "s\n", 0600);
	target = start_target(NOBODY, NULL);
	fds = count_fds();
	children = count_children();
	assert_int_equal(children, 1);
	for (int i = 0; i < 50; i++) {
		struct stat st;
		const char *why;
		char p[256];
		int fd;

		if (!read_as(target, i % 2 ? "a.py" : "secret.py", 1 << 20, &text))
			free(text);
		path_of(p, sizeof(p), i % 3 ? "a.py" : "secret.py");
		if ((fd = tb_target_open(target, p, 1 << 20, &st, &why)) >= 0)
			close(fd);
	}
	assert_int_equal(count_fds(), fds);
	assert_int_equal(count_children(), children);
	stop(target);
}

/* ------------------------------------------------------------ a file system that hangs */

/* A FUSE daemon with one file, hang.py, that answers everything but
 * FUSE_OPEN: whoever opens the file waits until killed. */
static void fuse_reply(int fd, uint64_t unique, int error, const void *data, size_t len)
{
	struct fuse_out_header h = { (uint32_t)(sizeof(h) + len), error, unique };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)data, len } };

	if (writev(fd, iov, data ? 2 : 1) < 0)
		return; /* the request was interrupted meanwhile */
}

static void fuse_attr_of(uint64_t node, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->mode = node == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0644;
	a->nlink = node == FUSE_ROOT_ID ? 2 : 1;
	a->size = node == FUSE_ROOT_ID ? 0 : 10;
}

static void fuse_serve(int fd)
{
	static char buf[1 << 17];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		const struct fuse_in_header *in = (const void *)buf;

		if (n < 0 && (errno == EINTR || errno == ENOENT || errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(*in))
			_exit(0);
		if (in->opcode == FUSE_INIT) {
			struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION, .minor = 31,
						   .max_readahead = 65536, .max_write = 65536 };

			fuse_reply(fd, in->unique, 0, &o, sizeof(o));
		} else if (in->opcode == FUSE_LOOKUP) {
			struct fuse_entry_out o = { .nodeid = 2 };

			fuse_attr_of(2, &o.attr);
			if (strcmp(buf + sizeof(*in), "hang.py"))
				fuse_reply(fd, in->unique, -ENOENT, NULL, 0);
			else
				fuse_reply(fd, in->unique, 0, &o, sizeof(o));
		} else if (in->opcode == FUSE_GETATTR) {
			struct fuse_attr_out o = { 0 };

			fuse_attr_of(in->nodeid, &o.attr);
			fuse_reply(fd, in->unique, 0, &o, sizeof(o));
		} else if (in->opcode != FUSE_OPEN && in->opcode != FUSE_FORGET &&
			   in->opcode != FUSE_BATCH_FORGET && in->opcode != FUSE_INTERRUPT) {
			fuse_reply(fd, in->unique, -ENOSYS, NULL, 0);
		}
	}
}

static void test_hanging_file_system(void **state)
{
	char mnt[256], opts[128], name[300];
	int fuse, fds, children;
	pid_t server, target;
	struct timespec t0, t1;
	const char *why;
	char *text = NULL;
	struct stat st;
	double took;

	(void)state;
	NEED_ROOT();
	path_of(mnt, sizeof(mnt), "fuse");
	assert_int_equal(mkdir(mnt, 0755), 0);
	target = start_target(NOBODY, NULL); /* before it could inherit /dev/fuse */
	fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fuse);
	if (fuse < 0 || mount("tb-hang", mnt, "fuse", MS_NOSUID | MS_NODEV, opts)) {
		if (fuse >= 0)
			close(fuse);
		stop(target);
		skip(); /* no FUSE here */
	}
	server = spawn();
	if (server == 0)
		fuse_serve(fuse);
	fds = count_fds();
	children = count_children();
	snprintf(name, sizeof(name), "%s/hang.py", mnt);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	why = tb_target_read(target, name, 1 << 20, &text, &(size_t){ 0 });
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_ptr_equal(why, tb_tf_timed_out);
	assert_null(text);
	assert_true(took >= TB_TF_TIMEOUT_MS / 1000.0 * 0.9 && took < TB_TF_TIMEOUT_MS / 1000.0 + 4);
	assert_int_equal(tb_target_open(target, name, 1 << 20, &st, &why), -1);
	assert_ptr_equal(why, tb_tf_timed_out);
	/* the helpers wait uninterruptibly for the daemon, which has read the
	 * requests: abandoned, they end with the connection and are reaped by
	 * the next call; no descriptor is left either */
	umount2(mnt, MNT_DETACH);
	close(fuse);
	stop(server);
	usleep(200 * 1000);
	assert_why(tb_target_read(target, "/no/such/file", 1 << 20, &text, &(size_t){ 0 }),
		   "no such file");
	assert_int_equal(count_children(), children - 1);
	assert_int_equal(count_fds(), fds - 1);
	stop(target);
}

/* ------------------------------------------------------------ /proc/PID/status */

static void test_creds_parse(void **state)
{
	static const char ok[] = "Name:\tx\nUmask:\t0022\nUid:\t1000\t1001\t1002\t1003\n"
				 "Gid:\t2000\t2001\t2002\t2003\nFDSize:\t64\nGroups:\t4 24 27 \nNStgid:\t1\n";
	static const char none[] = "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t\n";
	struct tb_creds c;
	char buf[16384];
	size_t n;

	(void)state;
	assert_int_equal(tb_creds_parse(ok, strlen(ok), &c), 0);
	assert_int_equal(c.fsuid, 1003);
	assert_int_equal(c.fsgid, 2003);
	assert_int_equal(c.ngroups, 3);
	assert_int_equal(c.groups[0], 4);
	assert_int_equal(c.groups[2], 27);
	assert_int_equal(tb_creds_parse(none, strlen(none), &c), 0);
	assert_int_equal(c.fsuid, 0);
	assert_int_equal(c.ngroups, 0);
	/* cut off anywhere before the end of Groups: fails */
	for (size_t cut = 0; cut < strlen(ok) - strlen("NStgid:\t1\n"); cut++)
		assert_int_equal(tb_creds_parse(ok, cut, &c), -1);
	/* malformed */
	assert_int_equal(tb_creds_parse("Uid:\t1\t2\t3\nGid:\t1\t2\t3\t4\nGroups:\n", 36, &c), -1);
	n = (size_t)snprintf(buf, sizeof(buf), "Uid:\t1\t2\t3\t-4\nGid:\t1\t2\t3\t4\nGroups:\n");
	assert_int_equal(tb_creds_parse(buf, n, &c), -1);
	n = (size_t)snprintf(buf, sizeof(buf), "Uid:\t1\t2\t3\t99999999999\nGid:\t1\t2\t3\t4\nGroups:\n");
	assert_int_equal(tb_creds_parse(buf, n, &c), -1);
	n = (size_t)snprintf(buf, sizeof(buf), "Uid:\t1\t2\t3\t4\t5\nGid:\t1\t2\t3\t4\nGroups:\n");
	assert_int_equal(tb_creds_parse(buf, n, &c), -1);
	/* as many groups as allowed, then one more */
	n = (size_t)snprintf(buf, sizeof(buf), "Uid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:\t");
	for (int i = 0; i < TB_CREDS_MAX_GROUPS; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%d ", i);
	assert_int_equal(tb_creds_parse(buf, n + (size_t)snprintf(buf + n, sizeof(buf) - n, "\n"), &c), 0);
	assert_int_equal(c.ngroups, TB_CREDS_MAX_GROUPS);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "77\n");
	assert_int_equal(tb_creds_parse(buf, n, &c), -1);
}

/* ------------------------------------------------------------ ELF facts */

/* The first mapping of pid whose path ends in `suffix`. */
static int find_mapping(pid_t pid, const char *suffix, uint64_t *start, uint64_t *end, char *path)
{
	char maps[64], line[1024];
	FILE *f;
	int found = 0;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		int pos = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &s, &e, &off, &pos) >= 3 && pos &&
		    off == 0 && strlen(line + pos) >= strlen(suffix) &&
		    !strcmp(line + pos + strlen(line + pos) - strlen(suffix), suffix)) {
			*start = s;
			*end = e;
			strcpy(path, line + pos);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static void test_elffacts(void **state)
{
	char self[512], path[1024], copy[256];
	uint64_t start, end;
	struct tb_elffacts f, g;
	ssize_t n;
	pid_t child;
	int p[2];
	char c;

	(void)state;
	NEED_ROOT();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	assert_true(find_mapping(getpid(), self, &start, &end, path));
	assert_int_equal(tb_elffacts_of_mapping(getpid(), start, end, path, &f), 0);
	assert_int_equal(f.have, 0);
	assert_int_equal(tb_elffacts_of_mapping(getpid(), start, end, path, &g), 0); /* remembered */
	assert_memory_equal(&f, &g, sizeof(f));

	/* a truncated copy of ourselves, mapped by a child: an error, no SIGBUS */
	path_of(copy, sizeof(copy), "python3.99");
	snprintf(path, sizeof(path), "head -c 3000 '%s' > '%s'", self, copy);
	assert_int_equal(system(path), 0);
	assert_int_equal(pipe(p), 0);
	child = spawn();
	if (child == 0) {
		int fd = open(copy, O_RDWR);

		if (fd < 0 || ftruncate(fd, 1 << 20) ||
		    mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED || ftruncate(fd, 3000) ||
		    write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	assert_true(find_mapping(child, "python3.99", &start, &end, path));
	/* read with pread: a short file is an error or an ELF without the runtime */
	assert_true(tb_elffacts_of_mapping(child, start, end, path, &f) == -1 || f.have == 0);
	stop(child);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_root_only_refused_for_nobody, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_and_device_not_opened, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_resolves_inside_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_leaks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hanging_file_system, setup, teardown),
		cmocka_unit_test(test_creds_parse),
		cmocka_unit_test_setup_teardown(test_elffacts, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
