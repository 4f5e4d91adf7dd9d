/* procmem.c: reads another process's memory without stopping it
 * (process_vm_readv, falling back to /proc/PID/mem). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>
#include "proc/procmem.h"

static int read_proc_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

int tb_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (len == 0)
		return 0;
	if (addr == 0 || addr + len < addr)
		return -1;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && errno == ENOSYS)
		return read_proc_mem(pid, addr, buf, len);
	if (n >= 0 && n < (ssize_t)len) /* crossed into an unmapped page */
		return -1;
	return n < 0 && errno == EPERM ? read_proc_mem(pid, addr, buf, len) : -1;
}

int tb_mem_read_u64(pid_t pid, uint64_t addr, uint64_t *out)
{
	return tb_mem_read(pid, addr, out, sizeof(*out));
}
