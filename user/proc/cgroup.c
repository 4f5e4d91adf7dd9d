/* cgroup.c: resolves --cgroup and --container to a cgroup v2 directory and
 * tells whether a process lives below it (/proc/PID/cgroup "0::" line). */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "proc/cgroup.h"

/* Mount point of the cgroup2 hierarchy, from /proc/self/mountinfo. */
static int cgroup2_mount(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int found = -1;

	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *sep = strstr(line, " - ");

		if (!sep || strncmp(sep, " - cgroup2 ", 11) != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 && strlen(mnt) < len) {
			snprintf(out, len, "%s", mnt);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int tb_cgroup_resolve(const char *arg, char *dir, size_t len, char *err, size_t errlen)
{
	char mnt[PATH_MAX];

	if (cgroup2_mount(mnt, sizeof(mnt))) {
		snprintf(err, errlen, "no cgroup v2 hierarchy is mounted");
		return -1;
	}
	if (strncmp(arg, mnt, strlen(mnt)) == 0)
		snprintf(dir, len, "%s", arg);
	else
		snprintf(dir, len, "%s/%s", mnt, arg[0] == '/' ? arg + 1 : arg);
	if (strstr(dir, "/../") || !is_dir(dir)) {
		snprintf(err, errlen, "%s: not a cgroup v2 directory", arg);
		return -1;
	}
	return 0;
}

/* The "0::/path" line of a process. */
static int proc_cgroup(pid_t pid, char *out, size_t len)
{
	char path[64], line[4096];
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%s", line + 3);
			rc = 0;
		}
	fclose(f);
	return rc;
}

int tb_pid_in_cgroup(pid_t pid, const char *dir)
{
	char mnt[PATH_MAX], cg[4096], full[PATH_MAX + 4096];
	size_t n;

	if (cgroup2_mount(mnt, sizeof(mnt)) || proc_cgroup(pid, cg, sizeof(cg)))
		return 0;
	snprintf(full, sizeof(full), "%s%s", mnt, strcmp(cg, "/") ? cg : "");
	n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(full, dir, n) == 0 && (full[n] == '\0' || full[n] == '/');
}

/* Does this path component name the container `id`? */
static int component_matches(const char *comp, size_t clen, const char *id)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-", "libpod-", "" };
	size_t idlen = strlen(id);

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i]);

		if (clen >= pl + idlen && strncmp(comp, prefixes[i], pl) == 0 &&
		    strncmp(comp + pl, id, idlen) == 0)
			return 1;
	}
	return 0;
}

int tb_container_resolve(const char *id, char *dir, size_t len, char *err, size_t errlen)
{
	char mnt[PATH_MAX], cg[4096], match[4096] = "";
	DIR *d;
	struct dirent *e;
	int ambiguous = 0;

	if (!id[0] || strchr(id, '/')) {
		snprintf(err, errlen, "--container takes a container id or name prefix");
		return -1;
	}
	if (cgroup2_mount(mnt, sizeof(mnt))) {
		snprintf(err, errlen, "no cgroup v2 hierarchy is mounted");
		return -1;
	}
	d = opendir("/proc");
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char *end, *p;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || proc_cgroup((pid_t)pid, cg, sizeof(cg)))
			continue;
		/* the deepest component naming the container */
		for (p = cg; *p;) {
			char *comp = p + (*p == '/');
			size_t clen = strcspn(comp, "/");

			if (clen && component_matches(comp, clen, id)) {
				char cand[4096];

				snprintf(cand, sizeof(cand), "%.*s", (int)(comp + clen - cg), cg);
				if (!match[0])
					snprintf(match, sizeof(match), "%s", cand);
				else if (strcmp(match, cand) && strncmp(cand, match, strlen(match)))
					ambiguous = 1;
			}
			p = comp + clen;
		}
	}
	closedir(d);
	if (ambiguous) {
		snprintf(err, errlen, "container %s: more than one container matches", id);
		return -1;
	}
	if (!match[0]) {
		snprintf(err, errlen, "container %s: no process runs in a cgroup of that name", id);
		return -1;
	}
	snprintf(dir, len, "%s%s", mnt, match);
	return 0;
}
