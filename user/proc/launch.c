/* launch.c: starts `-- CMD ARGS...` as a child, with a close-on-exec pipe
 * so that an exec failure is reported by the parent in one clear line; on
 * request held at its entry point, after the exec and the dynamic loader
 * (ptrace: a breakpoint at AT_ENTRY), until tb_launch_release. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
#include <elf.h>
#include "proc/arch.h"
#include "proc/launch.h"

#define HOLD_STOPS_MAX 64   /* signal stops passed on before the entry point, at most */

/* AT_ENTRY of pid (its auxiliary vector), 0 if unknown. */
static uint64_t entry_of(pid_t pid)
{
	char path[64];
	uint64_t av[2], entry = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	for (int i = 0; i < 512 && read(fd, av, sizeof(av)) == sizeof(av) && av[0] != AT_NULL; i++)
		if (av[0] == AT_ENTRY)
			entry = av[1];
	close(fd);
	return entry;
}

/* The child stopped after its exec (PTRACE_TRACEME): run it to its entry point,
 * the dynamic loader done, and leave it stopped there.  1 held; 0 it runs (no
 * entry point found, or it stopped elsewhere: let go); -1 it has exited. */
static int run_to_entry(pid_t pid)
{
	uint64_t entry = entry_of(pid);
	long word;
	int status;

	errno = 0;
	word = entry ? ptrace(PTRACE_PEEKTEXT, pid, (void *)entry, NULL) : -1;
	if (!entry || errno ||
	    ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)tb_arch_breakpoint_word((uint64_t)word)) ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL)) {
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		return 0;
	}
	for (int stops = 0;; stops++) {
		if (waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status))
			return -1;                    /* exited or killed before its entry */
		if (WSTOPSIG(status) == SIGTRAP)
			break;
		if (stops == HOLD_STOPS_MAX || ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(status))) {
			ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)word);
			ptrace(PTRACE_DETACH, pid, NULL, NULL);
			return 0;
		}
	}
	/* at the breakpoint: the pc back on it, the instruction back */
	if (tb_arch_breakpoint_rewind(pid, entry)) {
		ptrace(PTRACE_DETACH, pid, NULL, NULL); /* a trap of its own: let it have it */
		return 0;
	}
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)word)) {
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		return 0;
	}
	return 1;
}

pid_t tb_launch(char *const argv[], int *held, char *err, size_t errlen)
{
	int pfd[2], child_errno = 0, hold = held && *held, status;
	const int not_traced = -1;        /* what the child says when it cannot be held */
	pid_t pid;
	ssize_t n;

	if (held)
		*held = 0;
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		if (hold && ptrace(PTRACE_TRACEME, 0, NULL, NULL) &&
		    write(pfd[1], &not_traced, sizeof(not_traced)) < 0)
			_exit(127);               /* (not held: it runs as usual) */
		execvp(argv[0], argv);
		child_errno = errno;
		if (write(pfd[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	do {
		n = read(pfd[0], &child_errno, sizeof(child_errno));
		if (n == sizeof(child_errno) && child_errno == not_traced) {
			hold = 0;
			n = -1;
			errno = EINTR;            /* read on: the exec's outcome */
		}
	} while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == sizeof(child_errno)) {
		waitpid(pid, NULL, 0);
		snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(child_errno));
		return -1;
	}
	/* traced, it stops with SIGTRAP right after the exec */
	if (hold && waitpid(pid, &status, __WALL) == pid && WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP) {
		if (run_to_entry(pid) > 0)
			*held = 1;
	}
	return pid;
}

void tb_launch_release(pid_t pid)
{
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
}

int tb_child_exited(pid_t pid, int *status)
{
	pid_t r = waitpid(pid, status, WNOHANG);

	return r == pid || (r < 0 && errno == ECHILD);
}
