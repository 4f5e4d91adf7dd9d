/* sources.c: reads the source files of profiled code through the target's
 * own filesystem view (/proc/PID/root, /proc/PID/cwd for relative names)
 * with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), so that a path or
 * symlink from inside a container never resolves outside it.  Bounded per
 * file, in count and in total. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/mem.h"
#include "proc/rootfs.h"
#include "proc/sources.h"

static uint64_t mount_ns(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

static const char *read_source(pid_t pid, const char *name, char **text, size_t *len)
{
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd;

	*text = NULL;
	*len = 0;
	if (name[0] == '<')
		return "not a file (frozen or generated code)";
	fd = tb_open_in_root(pid, name);
	if (fd < 0)
		return errno == ENOENT ? "no such file" : errno == EXDEV ? "path leaves the process's root" :
		       "cannot be opened";
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return "not a regular file";
	}
	if (st.st_size > TB_SOURCE_MAX_BYTES) {
		close(fd);
		return "too large";
	}
	*text = malloc((size_t)st.st_size + 1);
	if (!*text) {
		close(fd);
		return "out of memory";
	}
	while (got < (size_t)st.st_size && (n = read(fd, *text + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	(*text)[got] = '\0';
	*len = got;
	return NULL;
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
	s->missing = read_source(pid, name, &s->text, &s->len);
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
