/* atomic.c: output files written whole or not at all, safely in directories
 * that others can write to (we run as root).  Nothing is opened by a name
 * that someone else could have made: the data goes to an unnamed file
 * (O_TMPFILE) in the output directory, which then gets a random name with
 * linkat (that never follows nor replaces anything), or, on a filesystem
 * without O_TMPFILE, to a file created O_EXCL|O_NOFOLLOW under a random
 * name.  Flushed and fsync'ed, it is renamed over the final name: a symlink
 * there is replaced, not followed.  A directory (or anything the rename
 * cannot replace) at the final name keeps the output under its random name,
 * said in err.  On any other failure the temporary name is removed (an
 * unnamed file just disappears).  Outputs are 0600 (they hold what other
 * users' processes hold: names from their memory, their source files), and
 * belong to the user who ran sudo (SUDO_UID, SUDO_GID), if any. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "output/atomic.h"

#define MODE 0600   /* as perf.data: only the owner reads a profile */
#define TRIES 16    /* random names tried before giving up */

int tb_atomic_no_tmpfile;

struct tmpout {
	int dirfd;          /* the output directory (O_PATH) */
	const char *base;   /* the final name in it */
	char tmp[256];      /* the temporary name in it; "" while unnamed */
	int fd;
};

static void random_name(struct tmpout *o)
{
	static uint64_t counter;
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = ((uint64_t)ts.tv_nsec << 24) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 44) ^
		    (++counter * 0x9e3779b97f4a7c15ull);
	}
	snprintf(o->tmp, sizeof(o->tmp), "%.200s.tmp.%016llx", o->base, (unsigned long long)r);
}

/* The directory of path (opened) and the final name in it; -1 with errno. */
static int open_dir(const char *path, struct tmpout *o)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];

	if (!slash) {
		snprintf(dir, sizeof(dir), ".");
		o->base = path;
	} else {
		size_t len = slash == path ? 1 : (size_t)(slash - path);

		if (len >= sizeof(dir)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(dir, path, len);
		dir[len] = '\0';
		o->base = slash + 1;
	}
	if (!*o->base) {
		errno = EISDIR;
		return -1;
	}
	o->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return o->dirfd < 0 ? -1 : 0;
}

/* A new file in the directory: unnamed, or under a fresh random name. */
static int create(struct tmpout *o)
{
	if (!tb_atomic_no_tmpfile) {
		o->fd = openat(o->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, MODE);
		if (o->fd >= 0)
			return 0;
		/* no O_TMPFILE here (filesystem, or a kernel before 3.11) */
		if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
			return -1;
	}
	for (int i = 0; i < TRIES; i++) {
		random_name(o);
		o->fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			       MODE);
		if (o->fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	o->tmp[0] = '\0';
	return -1;
}

/* Give the unnamed file a fresh random name (linkat fails on any existing name). */
static int name_unnamed(struct tmpout *o)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	for (int i = 0; i < TRIES; i++) {
		random_name(o);
		if (linkat(o->fd, "", o->dirfd, o->tmp, AT_EMPTY_PATH) == 0)
			return 0;
		/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc does not */
		if ((errno == ENOENT || errno == EPERM) &&
		    linkat(AT_FDCWD, proc, o->dirfd, o->tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	o->tmp[0] = '\0';
	return -1;
}

/* A number of SUDO_UID / SUDO_GID, or -1. */
static long sudo_id(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long id;

	if (!v || !*v)
		return -1;
	errno = 0;
	id = strtol(v, &end, 10);
	return errno || *end || id <= 0 || id > 0x7fffffff ? -1 : id;
}

/* Root run through sudo: the output belongs to the user who ran it. */
static void give_to_sudo_user(int fd)
{
	long uid = sudo_id("SUDO_UID"), gid = sudo_id("SUDO_GID");

	if (geteuid() == 0 && uid > 0 && gid > 0 && fchown(fd, (uid_t)uid, (gid_t)gid))
		return; /* then it stays root's, 0600 */
}

int tb_check_writable(const char *path, char *err, size_t errlen)
{
	struct tmpout o = { .dirfd = -1, .fd = -1 };
	const char *what = NULL;
	struct stat st;

	if (open_dir(path, &o)) {
		snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
			 errno == ENOENT || errno == ENOTDIR ? " (its directory does not exist)" : "");
		return -1;
	}
	if (fstatat(o.dirfd, o.base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st.st_mode))
			what = "a directory";
		else if (S_ISFIFO(st.st_mode))
			what = "a FIFO";
		else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
			what = "a device";
		else if (S_ISSOCK(st.st_mode))
			what = "a socket";
	}
	if (what) {
		snprintf(err, errlen, "%s is %s: give the name of a file to write", path, what);
		close(o.dirfd);
		return -1;
	}
	if (create(&o)) {
		snprintf(err, errlen, "%s: cannot create a file in its directory: %s", path, strerror(errno));
		close(o.dirfd);
		return -1;
	}
	close(o.fd);
	if (o.tmp[0])
		unlinkat(o.dirfd, o.tmp, 0);
	close(o.dirfd);
	return 0;
}

int tb_write_atomic(const char *path, int (*fn)(const void *ctx, FILE *f), const void *ctx,
		    char *err, size_t errlen)
{
	struct tmpout o = { .dirfd = -1, .fd = -1 };
	FILE *f = NULL;
	int rc, unnamed, e;

	if (open_dir(path, &o) || create(&o))
		goto fail_errno;
	unnamed = !o.tmp[0];
	f = fdopen(o.fd, "w");
	if (!f)
		goto fail_errno;
	errno = 0;
	rc = fn(ctx, f);
	if (fflush(f) || ferror(f) || rc) {
		e = errno;
		snprintf(err, errlen, "%s: write failed%s%s", path, e ? ": " : "", e ? strerror(e) : "");
		goto fail;
	}
	give_to_sudo_user(o.fd);
	if (fsync(o.fd) || (unnamed && name_unnamed(&o)))
		goto fail_errno;
	rc = fclose(f);
	f = NULL;
	o.fd = -1;
	if (rc)
		goto fail_errno;
	if (renameat(o.dirfd, o.tmp, o.dirfd, o.base)) {
		/* something not ours there (a directory planted at the name): the
		 * output stays under its random name, and nothing is lost */
		e = errno;
		snprintf(err, errlen, "%s: %s: the output is kept as %.*s%s", path, strerror(e),
			 (int)(o.base - path), path, o.tmp);
		close(o.dirfd);
		return TB_ATOMIC_KEPT;
	}
	close(o.dirfd);
	return 0;
fail_errno:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
fail:
	if (f)
		fclose(f);
	else if (o.fd >= 0)
		close(o.fd);
	if (o.tmp[0])
		unlinkat(o.dirfd, o.tmp, 0);
	if (o.dirfd >= 0)
		close(o.dirfd);
	return -1;
}
