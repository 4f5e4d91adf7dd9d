/* launch.c: starts `-- CMD ARGS...` as a child, with a close-on-exec pipe
 * so that an exec failure is reported by the parent in one clear line. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "proc/launch.h"

pid_t tb_launch(char *const argv[], char *err, size_t errlen)
{
	int pfd[2], child_errno = 0;
	pid_t pid;
	ssize_t n;

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
		execvp(argv[0], argv);
		child_errno = errno;
		if (write(pfd[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == sizeof(child_errno)) {
		waitpid(pid, NULL, 0);
		snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(child_errno));
		return -1;
	}
	return pid;
}

int tb_child_exited(pid_t pid, int *status)
{
	pid_t r = waitpid(pid, status, WNOHANG);

	return r == pid || (r < 0 && errno == ECHILD);
}
