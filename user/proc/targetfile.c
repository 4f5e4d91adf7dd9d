/* targetfile.c: opens a file as the target process would, so that a
 * process can never make the agent (root) read what its own user cannot.
 *
 * A helper task is cloned sharing the agent's memory (CLONE_VM: no page
 * tables to copy, unlike fork) but with its own credentials and its own
 * copy of the file table, closed down to the two descriptors it needs.  It
 * becomes the target's user for files (fsuid/euid, fsgid, groups from
 * /proc/PID/status) with no capabilities left, while its real and saved
 * uid stay 0 so that the target's user cannot signal or trace it.  It
 * resolves the name inside the target's root with
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) as O_PATH, checks type
 * and size with fstat, and only then reopens a regular file for reading
 * through /proc/self/fd/N: a FIFO or a device node is never opened.  It
 * then either reads the file into its buffer, which the agent copies, or
 * passes the descriptor back over a socketpair (SCM_RIGHTS).  The agent
 * waits on a pidfd for at most TB_TF_TIMEOUT_MS, kills a helper that hangs
 * (a FUSE file system that does not answer) and reaps it.
 *
 * The helper runs in the agent's address space: it makes system calls
 * only, never allocates or takes a lock, writes only into its own arena,
 * and all signals are blocked while it lives. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "proc/creds.h"
#include "proc/targetfile.h"

#define PAGE 4096u
#define HELPER_STACK (64u << 10)

const char tb_tf_timed_out[] = "timed out (the file system did not answer)";

static const char *why_errno(int e)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
		return "no such file";
	case EACCES:
	case EPERM:
		return "permission denied for the process's user";
	case ELOOP:
		return "too many symbolic links, or a /proc magic link";
	case EXDEV:
		return "path leaves the process's root";
	case ENAMETOOLONG:
		return "name too long";
	case ESRCH:
		return "the process is gone";
	case EMFILE:
	case ENFILE:
		return "out of file descriptors";
	default:
		return "cannot be opened";
	}
}

/* "/proc/self/fd/N" without stdio (the helper must not lock anything) */
static void fd_path(char buf[32], int fd)
{
	char digits[12];
	int n = 0;

	memcpy(buf, "/proc/self/fd/", 14);
	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) && n < 11);
	for (int i = 0; i < n; i++)
		buf[14 + i] = digits[n - 1 - i];
	buf[14 + n] = '\0';
}

int tb_reopen_regular(int pathfd, const struct stat *st, uint64_t max_bytes, const char **why)
{
	char self[32];
	int fd;

	if (!S_ISREG(st->st_mode)) {
		*why = "not a regular file";
		return -1;
	}
	if (st->st_size < 0 || (uint64_t)st->st_size > max_bytes) {
		*why = "too large";
		return -1;
	}
	/* the very inode just checked, whatever the name points to by now */
	fd_path(self, pathfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		*why = why_errno(errno);
	return fd;
}

int tb_open_path(const char *path, struct stat *st, const char **why)
{
	int fd = open(path, O_PATH | O_CLOEXEC);

	if (fd < 0) {
		*why = why_errno(errno);
		return -1;
	}
	if (fstat(fd, st)) {
		*why = why_errno(errno);
		close(fd);
		return -1;
	}
	return fd;
}

/* What the agent asks of one helper and what the helper answers.  It lives
 * in the helper's arena with its stack and read buffer: every byte the
 * helper's system calls write lands there, so that a helper stuck in a
 * file system and abandoned (see below) can never write into memory the
 * agent has moved on to use. */
struct job {
	int dirfd;                    /* the target's root or cwd (opened by the agent) */
	int sock;                     /* the helper's end of the socketpair */
	int read;                     /* read into the buffer instead of passing the fd */
	int part;                     /* read max bytes from offset, whatever the file's size */
	uint64_t offset;
	int as_root;                  /* the target's fsuid is 0: keep the agent's credentials */
	uint64_t max;
	struct tb_creds creds;
	char rel[PATH_MAX];           /* the name relative to dirfd */
	uint32_t nalt;                /* names tried in turn when rel cannot be opened */
	char alt[TB_TF_MAX_ALT][PATH_MAX];
	/* answers */
	int done;
	const char *why;
	struct stat st;
	size_t len;
	char buf[];                   /* TB_TF_READ_MAX bytes */
};

/* guard page, stack, job and buffer */
#define JOB_OFFSET (PAGE + HELPER_STACK)
#define ARENA_SIZE (JOB_OFFSET + sizeof(struct job) + TB_TF_READ_MAX)
#define MAX_STUCK 4

/* The arena is mapped once and reused (calls do not overlap: the agent is
 * single-threaded; mapping it each time would cost more than the rest of
 * the call).  A helper that SIGKILL does not end at once is stuck in a file
 * system that no longer answers (a FUSE request already read by its daemon
 * waits uninterruptibly): it is abandoned with its arena and reaped, and
 * the arena unmapped, by a later call once it has died.  While MAX_STUCK
 * are, no new helper is started. */
static char *arena;
static struct {
	pid_t pid;
	int pidfd;
	char *arena;
} stuck[MAX_STUCK];
static unsigned nstuck;

static void reap_stuck(void)
{
	for (unsigned i = 0; i < nstuck; ) {
		pid_t r = waitpid(stuck[i].pid, NULL, WNOHANG | __WALL);

		if (r == 0 || (r < 0 && errno != ECHILD)) {
			i++;
			continue;
		}
		munmap(stuck[i].arena, ARENA_SIZE);
		close(stuck[i].pidfd);
		stuck[i] = stuck[--nstuck];
	}
}

/* A job in the arena, zeroed up to its buffer; NULL with *why. */
static struct job *new_job(const char **why)
{
	reap_stuck();
	if (nstuck == MAX_STUCK) {
		*why = "not read (helpers are stuck on files that do not answer)";
		return NULL;
	}
	if (!arena) {
		char *a = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);

		if (a == MAP_FAILED) {
			*why = "out of memory";
			return NULL;
		}
		mprotect(a, PAGE, PROT_NONE); /* a guard below the helper's stack */
		arena = a;
	}
	memset(arena + JOB_OFFSET, 0, sizeof(struct job));
	return (struct job *)(arena + JOB_OFFSET);
}

/* Become the target's user for files: groups, then gids, then the
 * effective uid (and with it the fsuid; real and saved stay 0), then drop
 * every capability, whatever securebits say. */
static const char *take_creds(const struct tb_creds *c)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3];

	memset(none, 0, sizeof(none));
	if (syscall(SYS_setgroups, (size_t)c->ngroups, c->groups) ||
	    syscall(SYS_setresgid, c->fsgid, c->fsgid, c->fsgid) ||
	    syscall(SYS_setresuid, 0, c->fsuid, 0) ||
	    syscall(SYS_capset, &hdr, none))
		return "cannot take the process's credentials";
	return NULL;
}

/* Close every descriptor but a and b (the helper's own copy of the
 * agent's table: a stuck helper must not keep the agent's BPF links,
 * perf events or anything else alive). */
static void keep_only(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	if (lo > 0)
		syscall(SYS_close_range, 0, lo - 1, 0);
	if (hi > lo + 1)
		syscall(SYS_close_range, lo + 1, hi - 1, 0);
	syscall(SYS_close_range, hi + 1, ~0u, 0);
}

static const char *read_into(int fd, struct job *j)
{
	uint64_t size = (uint64_t)j->st.st_size, from = j->part ? j->offset : 0;
	size_t want = size <= from ? 0 : size - from < j->max ? (size_t)(size - from) : (size_t)j->max;
	ssize_t n = 0;

	while (j->len < want && (n = pread(fd, j->buf + j->len, want - j->len, (off_t)(from + j->len))) > 0)
		j->len += (size_t)n;
	return j->len < want && n < 0 ? "read error" : NULL;
}

static const char *send_fd(int sock, int fd)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} u;
	char byte = 'F';
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.space,
			      .msg_controllen = sizeof(u.space) };
	struct cmsghdr *c;

	memset(&u, 0, sizeof(u));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) == 1 ? NULL : "cannot pass the file back";
}

/* The helper: system calls only (see the top comment). */
static int helper(void *arg)
{
	struct job *j = arg;
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int pathfd, fd = -1;

	keep_only(j->dirfd, j->sock);
	j->why = j->as_root ? NULL : take_creds(&j->creds);
	/* after the credentials change, which clears it: die with the agent */
	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (j->why)
		goto out;
	/* the first name that opens as a regular file small enough */
	for (uint32_t i = 0; fd < 0 && i <= j->nalt && i <= TB_TF_MAX_ALT; i++) {
		pathfd = (int)syscall(SYS_openat2, j->dirfd, i ? j->alt[i - 1] : j->rel, &how, sizeof(how));
		if (pathfd < 0) {
			j->why = why_errno(errno);
			continue;
		}
		j->why = NULL;
		if (fstat(pathfd, &j->st))
			j->why = why_errno(errno);
		else
			fd = tb_reopen_regular(pathfd, &j->st, j->part ? UINT64_MAX : j->max, &j->why);
		close(pathfd);
	}
	if (fd >= 0) {
		j->why = j->read ? read_into(fd, j) : send_fd(j->sock, fd);
		close(fd);
	}
out:
	j->done = 1;
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Has the helper ended within ms milliseconds? */
static int ended_within(int pidfd, int64_t ms)
{
	int64_t deadline = now_ms() + ms, left;
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	/* signals are blocked: poll fails only on a stop and continue */
	while ((left = deadline - now_ms()) > 0)
		if (poll(&p, 1, (int)left) > 0)
			return 1;
	return poll(&p, 1, 0) > 0;
}

/* Wait for the helper, at most TB_TF_TIMEOUT_MS, then kill it; reap it,
 * or abandon it with the arena when it is stuck.  1 when it was killed. */
static int wait_helper(pid_t pid, int pidfd)
{
	if (ended_within(pidfd, TB_TF_TIMEOUT_MS)) {
		waitpid(pid, NULL, __WALL);
		close(pidfd);
		return 0;
	}
	syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	if (ended_within(pidfd, 100)) {
		waitpid(pid, NULL, __WALL);
		close(pidfd);
	} else {
		stuck[nstuck].pid = pid;
		stuck[nstuck].pidfd = pidfd;
		stuck[nstuck++].arena = arena;
		arena = NULL;
	}
	return 1;
}

static int recv_fd(int sock)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} u;
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.space,
			      .msg_controllen = sizeof(u.space) };
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Run job j (in the arena) in a helper.  The descriptor passed back (fd
 * mode) or 0 (read mode: j->len bytes in j->buf), with *st; -1 with *why. */
static int run_helper(struct job *j, struct stat *st, const char **why)
{
	sigset_t all, old;
	int sv[2], pidfd = -1, fd = -1, killed, dumpable = prctl(PR_GET_DUMPABLE);
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) {
		*why = why_errno(errno);
		return -1;
	}
	j->sock = sv[1];
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(helper, (char *)j /* the stack ends below the job */, CLONE_VM | CLONE_PIDFD | SIGCHLD, j, &pidfd);
	if (pid < 0) {
		*why = "cannot start a helper";
	} else if ((killed = wait_helper(pid, pidfd))) {
		*why = tb_tf_timed_out; /* and j may be abandoned: not looked at again */
	} else if (!j->done) {
		*why = "the helper was killed";
	} else if (!(*why = j->why)) {
		*st = j->st;
		if (!j->read && (fd = recv_fd(sv[0])) < 0)
			*why = "the file was not passed back";
	}
	/* the helper's change of credentials made the memory it shares with
	 * the agent non-dumpable (suid_dumpable): undo that for the agent
	 * (a stuck helper stays protected by its real and saved uid 0) */
	if (dumpable == 1 && prctl(PR_GET_DUMPABLE) != 1)
		prctl(PR_SET_DUMPABLE, 1);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(sv[0]);
	close(sv[1]);
	if (*why) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return j->read ? 0 : fd;
}

/* A job for path as pid sees it: pid's credentials and the directory the
 * name starts from, opened by the agent (the helper could not); NULL with
 * *why.  *dirfd: for the caller to close. */
static struct job *prepare(pid_t pid, const char *path, uint64_t max, int *dirfd, const char **why)
{
	char proc[32];
	struct job *j;
	int piddir;

	*dirfd = -1;
	if (!path[0]) {
		*why = "no such file";
		return NULL;
	}
	if (strlen(path) >= sizeof(j->rel)) {
		*why = "name too long";
		return NULL;
	}
	if (!(j = new_job(why)))
		return NULL;
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	piddir = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (piddir < 0) {
		*why = "the process is gone";
		return NULL;
	}
	/* both through the same /proc/PID: a recycled pid cannot mix them */
	if (tb_creds_read(piddir, &j->creds)) {
		close(piddir);
		*why = "cannot read the process's credentials";
		return NULL;
	}
	j->as_root = j->creds.fsuid == 0;
	*dirfd = openat(piddir, path[0] == '/' ? "root" : "cwd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	close(piddir);
	if (*dirfd < 0) {
		*why = "the process is gone";
		return NULL;
	}
	j->dirfd = *dirfd;
	j->max = max;
	strcpy(j->rel, path[0] == '/' ? path + 1 : path);
	return j;
}

int tb_target_open_any(pid_t pid, const char *const *paths, uint32_t n, uint64_t max_bytes, struct stat *st,
		       const char **why)
{
	int dirfd = -1, fd = -1;
	struct job *j = NULL;
	struct stat checked;

	if (!n || n > TB_TF_MAX_ALT + 1) {
		*why = "no such file";
		return -1;
	}
	for (uint32_t i = 1; i < n; i++)
		if (paths[i][0] != '/' || paths[0][0] != '/' || strlen(paths[i]) >= sizeof(j->alt[0])) {
			*why = paths[i][0] != '/' || paths[0][0] != '/' ? "not an absolute name" : "name too long";
			return -1;
		}
	j = prepare(pid, paths[0], max_bytes, &dirfd, why);
	if (j) {
		for (uint32_t i = 1; i < n; i++)
			strcpy(j->alt[i - 1], paths[i] + 1);
		j->nalt = n - 1;
		fd = run_helper(j, &checked, why);
	}
	if (dirfd >= 0)
		close(dirfd);
	/* what came back is the file the helper checked */
	if (fd >= 0 && (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_ino != checked.st_ino ||
			st->st_dev != checked.st_dev)) {
		close(fd);
		fd = -1;
		*why = "not the file checked";
	}
	return fd;
}

int tb_target_open(pid_t pid, const char *path, uint64_t max_bytes, struct stat *st, const char **why)
{
	return tb_target_open_any(pid, &path, 1, max_bytes, st, why);
}

/* Read mode: the helper reads (a part of) the file into its buffer, copied here. */
static const char *read_job(pid_t pid, const char *path, size_t max_bytes, int part, uint64_t offset,
			    char **text, size_t *len, struct stat *st)
{
	int dirfd;
	const char *why = NULL;
	struct job *j = prepare(pid, path, max_bytes < TB_TF_READ_MAX ? max_bytes : TB_TF_READ_MAX,
				&dirfd, &why);

	*text = NULL;
	*len = 0;
	if (j) {
		j->read = 1;
		j->part = part;
		j->offset = offset;
		if (!run_helper(j, st, &why)) {
			*text = malloc(j->len + 1);
			if (!*text) {
				why = "out of memory";
			} else {
				memcpy(*text, j->buf, j->len);
				(*text)[j->len] = '\0';
				*len = j->len;
			}
		}
	}
	if (dirfd >= 0)
		close(dirfd);
	return why;
}

const char *tb_target_read(pid_t pid, const char *path, size_t max_bytes, char **text, size_t *len)
{
	struct stat st;

	return read_job(pid, path, max_bytes, 0, 0, text, len, &st);
}

const char *tb_target_read_part(pid_t pid, const char *path, uint64_t offset, size_t max_bytes, char **text,
				size_t *len, struct stat *st)
{
	return read_job(pid, path, max_bytes, 1, offset, text, len, st);
}

int tb_open_mapped(pid_t pid, uint64_t start, uint64_t end, const char *path, uint64_t max_bytes,
		   struct stat *st, const char **why)
{
	char entry[96];
	int pathfd, fd;

	/* map_files names the very file mapped, whatever the mount namespace;
	 * O_PATH and fstat first: a mapped device node is never opened */
	snprintf(entry, sizeof(entry), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start, end);
	pathfd = tb_open_path(entry, st, why);
	if (pathfd < 0)
		return tb_target_open(pid, path, max_bytes, st, why);
	fd = tb_reopen_regular(pathfd, st, max_bytes, why);
	close(pathfd);
	return fd;
}
