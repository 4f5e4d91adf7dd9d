/* targets.c: turns pids into profiled targets: runs discovery, registers
 * each one with the profile (names, version) and the BPF `procs` map. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/termsafe.h"
#include "proc/cgroup.h"
#include "cpython/discover.h"
#include "proc/launch.h"
#include "capture/clock.h"
#include "capture/targets.h"

/* wait: a target known at the start (--native: its tables built before its first sample) */
static int register_target(struct tb_sampler *s, struct tb_profile *p, const struct tb_target *t, int wait,
			   char *err, size_t errlen)
{
	int known = tb_profile_find_process(p, (uint32_t)t->pid);

	if (known >= 0 && p->procs[known].live)
		return 0;
	if (tb_sampler_add(s, t, wait)) {
		snprintf(err, errlen, "pid %d: cannot register with the BPF program", (int)t->pid);
		return -1;
	}
	tb_profile_add_process(p, t);
	return 0;
}

int tb_target_attach(struct tb_sampler *s, struct tb_profile *p, pid_t pid, char *err, size_t errlen)
{
	struct tb_target *t = malloc(sizeof(*t));
	int rc;

	if (!t)
		return -1;
	rc = tb_discover(pid, t, err, errlen);
	if (rc == 0)
		rc = register_target(s, p, t, 1, err, errlen);
	free(t);
	return rc ? -1 : 0;
}

int tb_target_attach_all(struct tb_sampler *s, struct tb_profile *p, const char *cgroup, int quiet)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	struct tb_target *t = malloc(sizeof(*t));
	int n = 0;

	if (!d || !t) {
		if (d)
			closedir(d);
		free(t);
		return 0;
	}
	while ((e = readdir(d))) {
		char err[512], *end;
		long pid = strtol(e->d_name, &end, 10);
		int rc;

		if (*end || pid <= 0 || pid == getpid())
			continue;
		if (cgroup && !tb_pid_in_cgroup((pid_t)pid, cgroup))
			continue;
		rc = tb_discover((pid_t)pid, t, err, sizeof(err));
		if (rc == 0 && !register_target(s, p, t, 0, err, sizeof(err)))
			n++;
		else if (rc < 0 && !quiet && errno != ENOENT && !strstr(err, "no such process"))
			tb_termsafe_line(stderr, "tachyon-bpf: skipping ", err);
	}
	closedir(d);
	free(t);
	return n;
}

int tb_target_attach_launched(struct tb_sampler *s, struct tb_profile *p, pid_t pid, int held,
			      int timeout_ms, char *err, size_t errlen)
{
	struct tb_target *t = malloc(sizeof(*t));
	double start = tb_mono_s(), now;
	int rc = -1, status;

	if (!t)
		return -1;
	for (;;) {
		/* the loader maps libpython within milliseconds: poll fast, then slower */
		struct timespec nap = { 0, 500 * 1000 };

		rc = tb_discover(pid, t, err, errlen);
		if (rc == 0) {
			rc = register_target(s, p, t, 1, err, errlen);
			break;
		}
		if (rc < 0 && !strstr(err, "no such process"))
			break; /* Python, but unsupported or unreadable */
		if (held) { /* not Python at its entry (a script, env): let it run, look again */
			tb_launch_release(pid);
			held = 0;
		}
		if (tb_child_exited(pid, &status)) {
			snprintf(err, errlen, "the command exited before a Python runtime was found in it");
			rc = -1;
			break;
		}
		now = tb_mono_s();
		if (now - start >= timeout_ms / 1000.0)
			break; /* err holds "not a Python process" */
		if (now - start > 0.02)
			nap.tv_nsec = 5 * 1000 * 1000;
		nanosleep(&nap, NULL);
	}
	if (held)
		tb_launch_release(pid);
	if (rc > 0)
		rc = -1;
	free(t);
	return rc;
}
