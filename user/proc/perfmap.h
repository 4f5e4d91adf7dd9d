/* perfmap.h: the names of a process's JIT code from /tmp/perf-PID.map
 * (lines "START SIZE name", hex), as CPython's perf trampoline (-X perf)
 * and JITs write it for perf: read as the process would, in parts, and
 * again where it grew. */
#ifndef TB_PERFMAP_H
#define TB_PERFMAP_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "proc/nativesym.h"

#define TB_PERFMAP_MAX_BYTES (64u << 20)  /* bytes of a map read, at most (the rest ignored) */
#define TB_PERFMAP_CHUNK (4u << 20)       /* read at a time */
#define TB_PERFMAP_MODULE "[perf-map]"    /* the module its names show */

struct tb_perfmap {
	struct tb_nsym_file syms;   /* module TB_PERFMAP_MODULE, source TB_NSYM_PERFMAP */
	uint64_t dev, ino;          /* the file read (another file: read again from the start) */
	uint64_t used;              /* bytes parsed: up to the last whole line */
	uint64_t lines, bad;        /* entries read, lines refused */
	int cut;                    /* a budget ran out: later lines ignored */
	uint32_t resets;            /* times read again from the start (another file, or cut short) */
};

/* One line (len bytes, no newline): 0 with *start, *size and the name
 * (*name, *name_len: not NUL-terminated, cut at TB_NSYM_MAX_NAME - 1); -1
 * if it is not "HEX HEX name" (0x optional, one space or tab between). */
int tb_perfmap_line(const char *line, size_t len, uint64_t *start, uint64_t *size, const char **name,
		    size_t *name_len);
/* Add the whole lines of text[0..len) to m (its names so far kept); the
 * bytes used (up to the last newline, all of it when full and without
 * one: a line that long is not read). */
size_t tb_perfmap_parse(struct tb_perfmap *m, const char *text, size_t len, int full);
/* Read what is new in /tmp/perf-PID.map, as pid would (proc/targetfile.h)
 * and only if the file belongs to pid's user or root (a file planted by
 * another user is not read, as perf does).  1: names added, 0: nothing
 * new, -1: no map (*why, a static string). */
int tb_perfmap_refresh(struct tb_perfmap *m, pid_t pid, const char **why);
void tb_perfmap_free(struct tb_perfmap *m);

#endif
