/* tbp.h: capture files (`-o capture.tbp`), the agent's own format:
 * everything a profile holds, so that any output can be rendered later
 * (`tachyon-bpf render`).  Layout: docs/capture-format.md. */
#ifndef TB_CAPTURE_H
#define TB_CAPTURE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model/profile.h"

#define TB_CAP_MAGIC "TBPCAP\0\1"
#define TB_CAP_MAGIC_LEN 8
#define TB_CAP_VERSION 3                     /* the newest version read and written */
#define TB_CAP_HEADER_SIZE 32
#define TB_CAP_FLAG_ZLIB 1u                  /* payload is a zlib stream (always) */
#define TB_CAP_MAX_PAYLOAD (1ull << 30)      /* largest decompressed payload read */
#define TB_CAP_META_BY_LINE 1u               /* metadata flags */
#define TB_CAP_META_NO_GC 2u
#define TB_CAP_META_KERNEL 4u                /* version 2: --kernel */
#define TB_CAP_META_NATIVE 8u                /* version 2: --native */
#define TB_CAP_META_KSYMS_HIDDEN 16u         /* version 2: kallsyms showed no address */
#define TB_CAP_CODE_RESOLVED 1u              /* code object flags */
#define TB_CAP_CODE_NATIVE 2u                /* version 2: a native function */
#define TB_CAP_CODE_KERNEL 4u                /* version 2: a kernel function */

/* Write p as a capture file: version 1 when p has nothing version 2 adds
 * (kernel or native frames, their settings and counts), so that a version 1
 * capture renders to the same bytes; else version 2.  0, or -1 on a write or
 * compression error. */
int tb_write_capture(const struct tb_profile *p, FILE *f);

/* Read a capture into *out (initialized here). The input is untrusted.
 * 0 on success; -1 with one sentence in err, and *out left empty (freed). */
int tb_read_capture(const char *path, struct tb_profile *out, char *err, size_t errlen);
int tb_read_capture_mem(const void *buf, size_t len, struct tb_profile *out, char *err,
			size_t errlen);

#endif
