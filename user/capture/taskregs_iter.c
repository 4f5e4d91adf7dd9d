/* taskregs_iter.c: the BPF side of capture/taskregs.c: loads bpf/taskregs.bpf.c (its
 * skeleton) for one process, runs the task iterator once and keeps its records. What
 * the kernel writes is taken in whole records, at most TB_TASKREGS_MAX of them. Linked
 * into the binary only, as capture/sampler.c (libtachyon.a builds without clang,
 * bpftool or vmlinux.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "capture/sampler.h"
#include "capture/taskregs.h"
#include "taskregs.skel.h"

/* The iterator's output into t: whole records, bounded; 0 or -1. */
static int read_records(int fd, struct tb_taskregs *t)
{
	const size_t cap = TB_TASKREGS_MAX * sizeof(*t->r);
	char *buf = malloc(cap);
	size_t got = 0;
	ssize_t n = 1;

	if (!buf)
		return -1;
	while (got < cap && (n = read(fd, buf + got, cap - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return -1;
		}
		got += (size_t)n;
	}
	t->r = (struct tb_task_regs *)buf;
	t->n = (uint32_t)(got / sizeof(*t->r));
	return 0;
}

/* The iterator attached: over tgid's threads only where the kernel takes a process
 * (6.1+), else over every task (the program skips the others). */
static struct bpf_link *attach(struct taskregs_bpf *skel, pid_t tgid)
{
	union bpf_iter_link_info one = { .task.pid = (uint32_t)tgid };
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &one, .link_info_len = sizeof(one));
	struct bpf_link *link = bpf_program__attach_iter(skel->progs.tb_task_regs, &opts);

	return link ? link : bpf_program__attach_iter(skel->progs.tb_task_regs, NULL);
}

int tb_taskregs_iter(pid_t tgid, struct tb_taskregs *out)
{
	struct taskregs_bpf *skel;
	struct bpf_link *link = NULL;
	int fd = -1, rc = -1;

	if (tgid <= 0 || access("/sys/kernel/btf/vmlinux", R_OK))
		return -1;
	tb_sampler_quiet_libbpf();
	skel = taskregs_bpf__open();
	if (!skel)
		return -1;
	skel->rodata->target_tgid = (uint32_t)tgid;
	if (!taskregs_bpf__load(skel) && (link = attach(skel, tgid)) &&
	    (fd = bpf_iter_create(bpf_link__fd(link))) >= 0)
		rc = read_records(fd, out);
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	taskregs_bpf__destroy(skel);
	return rc;
}
