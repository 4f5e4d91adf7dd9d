/* pyread.h: bounded reads of CPython objects (str, bytes) from a target. */
#ifndef TB_PYREAD_H
#define TB_PYREAD_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cpython/layout.h"
#include "lib/mem.h"

#define TB_MAX_NAME_CHARS 1024      /* longest str read (code points) */
#define TB_MAX_LINETABLE (1u << 20) /* longest line table read (bytes) */

/* Read a str object as UTF-8 into out (NUL-terminated, truncated to outlen
 * at a whole character; invalid code points become U+FFFD). 0 on success. */
int tb_read_pystr(pid_t pid, const struct tb_layout *l, uint64_t addr, char *out, size_t outlen);
/* Read a bytes object of at most max bytes into out (emptied first). 0 on success. */
int tb_read_pybytes(pid_t pid, const struct tb_layout *l, uint64_t addr, size_t max, struct tb_buf *out);

#endif
