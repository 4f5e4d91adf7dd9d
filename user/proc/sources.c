/* sources.c: reads the source files of profiled code as the process itself
 * would (proc/targetfile.c: its user's credentials, its root, regular files
 * only), so that a process can neither make the agent show a file its user
 * cannot read nor lead it out of its container.  Bounded per file, in
 * count, in total and in time (reads stop after a few timeouts). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "lib/mem.h"
#include "proc/sources.h"
#include "proc/targetfile.h"

_Static_assert(TB_SOURCE_MAX_BYTES <= TB_TF_READ_MAX, "a source fits the helper's buffer");

static uint64_t mount_ns(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

static const char *read_source(struct tb_sources *ss, pid_t pid, const char *name, char **text, size_t *len)
{
	const char *why;

	*text = NULL;
	*len = 0;
	if (name[0] == '<')
		return "not a file (frozen or generated code)";
	if (ss->timeouts >= TB_SOURCES_MAX_TIMEOUTS)
		return "not read (earlier reads timed out)";
	why = tb_target_read(pid, name, TB_SOURCE_MAX_BYTES, text, len);
	if (why == tb_tf_timed_out)
		ss->timeouts++;
	return why;
}

/* The first source read for path (a source's path is its first field). */
static uint32_t first_of(const struct tb_sources *ss, uint32_t path)
{
	return tb_hmap_find_key(&ss->by_path, ss->s, sizeof(*ss->s), &path, sizeof(path));
}

void tb_sources_note(struct tb_sources *ss, pid_t pid, uint32_t path, const char *name)
{
	uint64_t ns = mount_ns(pid);
	uint32_t i = first_of(ss, path), last = TB_HMAP_NONE;
	struct tb_source *s;

	/* one per mount namespace the path was seen in: a short chain */
	for (; i != TB_HMAP_NONE; i = ss->s[i].next - 1) {
		if (ss->s[i].mntns == ns)
			return;
		last = i;
	}
	if (ss->n >= TB_SOURCES_MAX_FILES)
		return;
	ss->s = tb_grow(ss->s, &ss->cap, ss->n + 1, sizeof(*ss->s), 64);
	if (last == TB_HMAP_NONE)
		tb_hmap_intern_key(&ss->by_path, ss->s, sizeof(*ss->s), &path, sizeof(path), ss->n);
	else
		ss->s[last].next = ss->n + 1;
	s = &ss->s[ss->n++];
	memset(s, 0, sizeof(*s));
	s->path = path;
	s->mntns = ns;
	s->pid = pid;
	if (ss->total >= TB_SOURCES_MAX_TOTAL) {
		s->missing = "not read (source budget used up)";
		return;
	}
	s->missing = read_source(ss, pid, name, &s->text, &s->len);
	ss->total += s->len;
}

const struct tb_source *tb_sources_find(const struct tb_sources *ss, uint32_t path)
{
	const struct tb_source *any = NULL;

	for (uint32_t i = first_of(ss, path); i != TB_HMAP_NONE; i = ss->s[i].next - 1) {
		if (ss->s[i].text)
			return &ss->s[i];
		any = &ss->s[i];
	}
	return any;
}

void tb_sources_free(struct tb_sources *ss)
{
	for (uint32_t i = 0; i < ss->n; i++)
		free(ss->s[i].text);
	free(ss->s);
	tb_hmap_free(&ss->by_path);
	memset(ss, 0, sizeof(*ss));
}
