/* perfmap.c: reads /tmp/perf-PID.map (proc/perfmap.h).  The file is the
 * target's, in a directory every user writes: it is opened by a helper
 * holding the target's credentials (proc/targetfile.c, which follows no
 * /proc magic link and opens only a regular file), taken only if owned by
 * the target's user or root, read TB_PERFMAP_CHUNK at a time up to
 * TB_PERFMAP_MAX_BYTES, line by line (names cut, garbage lines counted and
 * skipped), into the same symbol table as an ELF file's (proc/nativesym.c:
 * its budgets; at one start the alias rule keeps one name; a range that
 * overlaps an earlier one names the pcs from its own start on). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "proc/perfmap.h"
#include "proc/targetfile.h"

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A hex number at *p (0x optional, at most 16 digits) followed by a blank; -1. */
static int hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int n = 0, d;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	*v = 0;
	while (s < end && (d = hex_digit(*s)) >= 0) {
		if (++n > 16)
			return -1;
		*v = *v << 4 | (uint64_t)d;
		s++;
	}
	if (!n || s >= end || (*s != ' ' && *s != '\t'))
		return -1;
	*p = s + 1;
	return 0;
}

int tb_perfmap_line(const char *line, size_t len, uint64_t *start, uint64_t *size, const char **name,
		    size_t *name_len)
{
	const char *p = line, *end = line + len;

	if (len && end[-1] == '\r')
		end--;
	if (hex(&p, end, start) || hex(&p, end, size) || p >= end || !*size || *start + *size < *start)
		return -1;
	*name = p;
	*name_len = (size_t)(end - p);
	if (memchr(p, '\0', *name_len))
		return -1;
	if (*name_len > TB_NSYM_MAX_NAME - 1)
		*name_len = TB_NSYM_MAX_NAME - 1;
	return 0;
}

/* The symbols kept so far, put back into a new table with the new lines. */
static struct tb_nsym_builder *reopen(struct tb_perfmap *m)
{
	struct tb_nsym_file old = m->syms;
	struct tb_nsym_builder *b = tb_nsym_begin(&m->syms, TB_PERFMAP_MODULE, TB_NSYM_PERFMAP);

	for (uint32_t i = 0; i < old.nsyms; i++)
		tb_nsym_add(b, old.syms[i].start, old.syms[i].end - old.syms[i].start, old.names + old.syms[i].name);
	tb_nsym_free(&old);
	return b;
}

size_t tb_perfmap_parse(struct tb_perfmap *m, const char *text, size_t len, int full)
{
	const char *p = text, *end = text + len, *nl;
	struct tb_nsym_builder *b = NULL;
	char name[TB_NSYM_MAX_NAME];

	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
		uint64_t start, size;
		const char *s;
		size_t n;

		if (!m->cut && !tb_perfmap_line(p, (size_t)(nl - p), &start, &size, &s, &n)) {
			memcpy(name, s, n);
			name[n] = '\0';
			if (!b)
				b = reopen(m);
			if (tb_nsym_add(b, start, size, name))
				m->cut = 1;
			else
				m->lines++;
		} else if (!m->cut && nl > p) {
			m->bad++;
		}
		p = nl + 1;
	}
	if (b)
		tb_nsym_end(b);
	if (m->syms.cut)
		m->cut = 1;
	if (p == text && full)            /* one line longer than a chunk: skipped */
		return len;
	return (size_t)(p - text);
}

int tb_perfmap_refresh(struct tb_perfmap *m, pid_t pid, const char **why)
{
	char path[48], owner_path[32];
	struct stat st, proc;
	uint64_t before = m->lines;
	int rounds = 0;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	snprintf(owner_path, sizeof(owner_path), "/proc/%d", (int)pid);
	if (stat(owner_path, &proc)) {
		*why = "the process is gone";
		return -1;
	}
	while (m->used < TB_PERFMAP_MAX_BYTES && !m->cut && rounds++ < 16) {
		char *text;
		size_t len, used;

		if ((*why = tb_target_read_part(pid, path, m->used, TB_PERFMAP_CHUNK, &text, &len, &st)))
			return m->syms.nsyms ? 0 : -1;
		if (st.st_uid != proc.st_uid && st.st_uid != 0) {
			free(text);
			*why = "owned by another user than the process's";
			return -1;
		}
		if ((uint64_t)st.st_dev != m->dev || (uint64_t)st.st_ino != m->ino ||
		    (uint64_t)st.st_size < m->used) {  /* another file, or cut short: from the start */
			int at_start = !m->used;
			uint32_t resets = m->resets + 1;

			tb_perfmap_free(m);
			m->resets = resets;
			m->dev = (uint64_t)st.st_dev;
			m->ino = (uint64_t)st.st_ino;
			before = 0;
			if (!at_start) {
				free(text);
				continue;
			}
		}
		used = tb_perfmap_parse(m, text, len, len == TB_PERFMAP_CHUNK);
		free(text);
		m->used += used;
		if (!used || len < TB_PERFMAP_CHUNK)
			break;
	}
	return m->lines != before;
}

void tb_perfmap_free(struct tb_perfmap *m)
{
	tb_nsym_free(&m->syms);
	memset(m, 0, sizeof(*m));
}
