/* targetfile.h: open a file as a target process would: with its own
 * credentials, inside its own root, and only if it is a regular file. */
#ifndef TB_TARGETFILE_H
#define TB_TARGETFILE_H
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* A helper that has not answered by then is killed. */
#define TB_TF_TIMEOUT_MS 1000
/* The most tb_target_read reads. */
#define TB_TF_READ_MAX (4u << 20)

/* The reason given when the helper timed out (compare the pointer). */
extern const char tb_tf_timed_out[];

/* Open `path`, as process pid names it, for reading as pid would: in a
 * short-lived helper holding pid's fsuid, fsgid and supplementary groups
 * and no capabilities (a target whose fsuid is 0 reads as root), resolved
 * inside pid's root (absolute path) or cwd (relative) with
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) as O_PATH first; only a
 * regular file of at most max_bytes is opened for reading.  The descriptor
 * (close-on-exec), *st filled; -1 with *why (a static string).  Calls
 * must not overlap (one helper at a time: the agent is single-threaded). */
int tb_target_open(pid_t pid, const char *path, uint64_t max_bytes, struct stat *st, const char **why);
/* The first of paths[0..n) (absolute, n at most TB_TF_MAX_ALT + 1) that
 * opens so, tried in turn by one helper; the descriptor, *st; -1 with the
 * last one's *why. */
#define TB_TF_MAX_ALT 3
int tb_target_open_any(pid_t pid, const char *const *paths, uint32_t n, uint64_t max_bytes, struct stat *st,
		       const char **why);
/* The same, read whole by the helper (at most max_bytes, itself at most
 * TB_TF_READ_MAX): *text (NUL-terminated, free() it) of *len bytes.  NULL,
 * or why not (*text NULL). */
const char *tb_target_read(pid_t pid, const char *path, size_t max_bytes, char **text, size_t *len);
/* The same for a file of any size: at most max_bytes (itself at most
 * TB_TF_READ_MAX) from offset (none past its end), *st its fstat (size,
 * owner) as the helper saw it. */
const char *tb_target_read_part(pid_t pid, const char *path, uint64_t offset, size_t max_bytes, char **text,
				size_t *len, struct stat *st);

/* Open the file process pid maps at [start, end) (path: its name in
 * /proc/PID/maps) for reading if it is a regular file of at most
 * max_bytes: the very file mapped through /proc/PID/map_files (the agent's
 * credentials: the process has it open), or, when that entry cannot be
 * opened, path through tb_target_open.  The descriptor, *st filled; -1. */
int tb_open_mapped(pid_t pid, uint64_t start, uint64_t end, const char *path, uint64_t max_bytes,
		   struct stat *st, const char **why);

/* With the agent's own credentials (a /proc/PID/map_files/ entry): an
 * O_PATH descriptor of path and its fstat; -1 with *why. */
int tb_open_path(const char *path, struct stat *st, const char **why);
/* Reopen an O_PATH descriptor (st: its fstat) for reading if it is a
 * regular file of at most max_bytes; -1 with *why.  Never opens anything
 * else for reading: a FIFO or a device node is refused from its stat. */
int tb_reopen_regular(int pathfd, const struct stat *st, uint64_t max_bytes, const char **why);

#endif
