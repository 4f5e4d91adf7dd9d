/* creds.c: reads which user a process acts as on files (its fsuid, fsgid
 * and supplementary groups) from /proc/PID/status, strictly: a line that is
 * missing, malformed or cut off fails rather than guessing. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "proc/creds.h"

/* status holds about 1.5 KiB before Groups:, and every group takes at most
 * 11 bytes: room for the line with TB_CREDS_MAX_GROUPS groups */
#define STATUS_MAX (2048 + 11 * TB_CREDS_MAX_GROUPS)

/* The text after "key" at the start of a line, up to (not including) its
 * newline; NULL when there is no such complete line. */
static const char *line_of(const char *s, size_t len, const char *key, size_t *linelen)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i + klen <= len; ) {
		const char *nl = memchr(s + i, '\n', len - i);

		if (!nl)
			return NULL;
		if ((size_t)(nl - (s + i)) >= klen && memcmp(s + i, key, klen) == 0) {
			*linelen = (size_t)(nl - (s + i)) - klen;
			return s + i + klen;
		}
		i = (size_t)(nl - s) + 1;
	}
	return NULL;
}

/* Up to max decimal ids separated by tabs or spaces; their count, -1 when
 * malformed or more than max. */
static int parse_ids(const char *p, size_t len, uint32_t *ids, int max)
{
	int n = 0;
	size_t i = 0;

	for (;;) {
		uint64_t v = 0;
		size_t start;

		while (i < len && (p[i] == '\t' || p[i] == ' '))
			i++;
		if (i == len)
			return n;
		start = i;
		while (i < len && p[i] >= '0' && p[i] <= '9' && i - start < 10)
			v = v * 10 + (uint64_t)(p[i++] - '0');
		if (i == start || v > UINT32_MAX || (i < len && p[i] != '\t' && p[i] != ' ') || n == max)
			return -1;
		ids[n++] = (uint32_t)v;
	}
}

int tb_creds_parse(const char *status, size_t len, struct tb_creds *c)
{
	uint32_t ids[4];
	const char *p;
	size_t l;
	int n;

	memset(c, 0, sizeof(*c));
	if (!(p = line_of(status, len, "Uid:", &l)) || parse_ids(p, l, ids, 4) != 4)
		return -1;
	c->fsuid = ids[3];
	if (!(p = line_of(status, len, "Gid:", &l)) || parse_ids(p, l, ids, 4) != 4)
		return -1;
	c->fsgid = ids[3];
	_Static_assert(sizeof(gid_t) == sizeof(uint32_t), "gid_t is 32 bits");
	if (!(p = line_of(status, len, "Groups:", &l)) ||
	    (n = parse_ids(p, l, (uint32_t *)c->groups, TB_CREDS_MAX_GROUPS)) < 0)
		return -1;
	c->ngroups = (uint32_t)n;
	return 0;
}

int tb_creds_read(int piddir, struct tb_creds *c)
{
	char buf[STATUS_MAX];
	size_t got = 0;
	ssize_t n;
	int fd = openat(piddir, "status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (got < sizeof(buf) && (n = read(fd, buf + got, sizeof(buf) - got)) > 0)
		got += (size_t)n;
	close(fd);
	return tb_creds_parse(buf, got, c);
}
