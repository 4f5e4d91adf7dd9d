/* sources.h: source files of profiled processes, read at capture time. */
#ifndef TB_SOURCES_H
#define TB_SOURCES_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/hashmap.h"

#define TB_SOURCE_MAX_BYTES (4u << 20)   /* one file */
#define TB_SOURCES_MAX_FILES 4096
#define TB_SOURCES_MAX_TOTAL (256u << 20) /* all files */
#define TB_SOURCES_MAX_TIMEOUTS 3         /* then no more reads: each one cost a second */

struct tb_source {
	uint32_t path;        /* strtab id of the file name as the process saw it */
	uint64_t mntns;       /* mount namespace it was read in */
	pid_t pid;
	char *text;           /* NULL when missing */
	size_t len;
	const char *missing;  /* why it is missing (static string) */
	uint32_t next;        /* the next one read for the same path + 1 (0: none) */
};

struct tb_sources {
	struct tb_source *s;
	uint32_t n, cap;
	size_t total;
	uint32_t timeouts;       /* reads that timed out */
	struct tb_hmap by_path;  /* path -> the first one read for it */
};

/* Read path (strtab id `path`, text `name`) as process pid sees it, once per
 * mount namespace, with pid's credentials (tb_target_read): only a regular
 * file pid's user can read, resolved inside pid's root (a symlink cannot
 * lead out of a container). */
void tb_sources_note(struct tb_sources *ss, pid_t pid, uint32_t path, const char *name);
/* The source read for path, preferring the one read for pid's namespace. */
const struct tb_source *tb_sources_find(const struct tb_sources *ss, uint32_t path);
void tb_sources_free(struct tb_sources *ss);

#endif
