/* atomic.h: output files written whole or not at all, without following
 * anything planted in the output directory (atomic.c). */
#ifndef TB_ATOMIC_H
#define TB_ATOMIC_H
#include <stddef.h>
#include <stdio.h>

/* Write path through fn: into a new file in path's directory (unnamed with
 * O_TMPFILE, else created O_EXCL|O_NOFOLLOW under a random name), flushed
 * and fsync'ed, then renamed over path.  Mode 0600, owned by the sudo user
 * (SUDO_UID/SUDO_GID) if root runs through sudo.  A symlink at path is
 * replaced, never followed; a failure leaves no file, but for one: what the
 * rename cannot replace (a directory at path) keeps the output under its
 * random name, which err gives (TB_ATOMIC_KEPT).  0 ok; -1 (nothing written)
 * or TB_ATOMIC_KEPT with one sentence in err. */
#define TB_ATOMIC_KEPT (-2)
int tb_write_atomic(const char *path, int (*fn)(const void *ctx, FILE *f), const void *ctx,
		    char *err, size_t errlen);

/* Before a capture: can path be written at the end? Its directory exists
 * and takes a new file (one is made and removed: read-only filesystems,
 * permissions and quotas answer now, not after the capture), and nothing but
 * a regular file or a symlink is at path (a directory, FIFO, device or socket
 * is refused).  0 ok; -1 with one sentence in err. */
int tb_check_writable(const char *path, char *err, size_t errlen);

/* Tests: nonzero makes tb_write_atomic skip O_TMPFILE (its fallback). */
extern int tb_atomic_no_tmpfile;

#endif
