/* tbp_io.h: the primitives of the capture format (docs/capture-format.md)
 * for its writer, its reader and the readers and writers of its extension
 * sections (output/tbp_sections.c): little-endian fixed-width integers,
 * doubles, strings, an output that hands its bytes on a chunk at a time,
 * and a bounded reading cursor that fails once with one sentence. */
#ifndef TB_TBP_IO_H
#define TB_TBP_IO_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "lib/mem.h"

/* Writing (into a growable buffer). */
void tb_cap_put(struct tb_buf *b, uint64_t v, int bytes);
static inline void tb_cap_u8(struct tb_buf *b, unsigned v) { tb_cap_put(b, v, 1); }
static inline void tb_cap_u16(struct tb_buf *b, unsigned v) { tb_cap_put(b, v, 2); }
static inline void tb_cap_u32(struct tb_buf *b, uint32_t v) { tb_cap_put(b, v, 4); }
static inline void tb_cap_u64(struct tb_buf *b, uint64_t v) { tb_cap_put(b, v, 8); }
void tb_cap_f64(struct tb_buf *b, double v);
/* u32 length, at most max bytes of s, a NUL */
void tb_cap_str(struct tb_buf *b, const char *s, size_t max);

/* An output written a chunk at a time: the writers put bytes into b and call
 * tb_cap_out_chunk between entries; once b holds a chunk, pass hands its bytes
 * on (the capture writer deflates them; a counting pass only counts them) and
 * empties it, so that no part of a payload is ever built whole. */
struct tb_cap_out {
	struct tb_buf b;                        /* bytes put, not yet handed on */
	void (*pass)(struct tb_cap_out *o);     /* hand b's bytes on, add them to n, empty b */
	uint64_t n;                             /* bytes handed on */
	int failed;                             /* set by pass (or a writer) on an error */
};

#define TB_CAP_OUT_CHUNK (256u << 10)
static inline void tb_cap_out_chunk(struct tb_cap_out *o)
{
	if (o->b.n >= TB_CAP_OUT_CHUNK)
		o->pass(o);
}
/* Bytes put so far, handed on or not. */
static inline uint64_t tb_cap_out_size(const struct tb_cap_out *o)
{
	return o->n + o->b.n;
}

/* Reading: a cursor over untrusted bytes, the payload inflated as it is
 * read, a window at a time (struct tb_rd_src).  Every getter fails (once,
 * with one sentence naming `what`) instead of reading past the end of the
 * payload as announced (or of a section), or when the stream cannot give
 * the bytes; after a failure they return 0 / NULL.  A pointer returned
 * (tb_rd_take, tb_rd_str) is good until the next read. */
struct tb_rd_src;
struct tb_rd {
	struct tb_rd_src *src;  /* shared by a section's cursor and the file's */
	size_t left;            /* bytes this cursor may still read: of the payload as announced, or of a section */
	unsigned version;       /* of the file: what the sections hold */
	char *err;
	size_t errlen;
	int failed;
	uint32_t *sids;         /* the string table: the file's string ids -> the profile's */
	uint32_t nstrs;
	uint32_t *pids;         /* process ids, sorted */
	uint32_t npids;
};

/* The payload of a capture, inflated from zlen compressed bytes: in memory
 * (in), or read from f (NULL: out of memory).  plen: the payload's size as
 * the header announces it (at most TB_CAP_MAX_PAYLOAD); nothing is inflated
 * past it. */
struct tb_rd_src *tb_rd_src_new(const unsigned char *in, FILE *f, uint64_t zlen, uint64_t plen);
void tb_rd_src_free(struct tb_rd_src *src);
/* Inflate what is left of the payload, unread: the stream must give exactly
 * the size announced, end there and use every compressed byte.  0, or -1
 * after tb_rd_fail (without a second sentence when the stream had failed). */
int tb_rd_src_drain(struct tb_rd *r);

int tb_rd_fail(struct tb_rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t tb_rd_le(const unsigned char *d, int bytes);
const unsigned char *tb_rd_take(struct tb_rd *r, size_t n, const char *what);
void tb_rd_skip(struct tb_rd *r, size_t n, const char *what);
uint64_t tb_rd_get(struct tb_rd *r, int bytes, const char *what);
double tb_rd_f64(struct tb_rd *r, const char *what);
/* A count of items of at least `min` bytes each: bounded by what is left. */
uint32_t tb_rd_count(struct tb_rd *r, size_t min, const char *what);
/* u32 length, bytes, NUL: a pointer into the window, or NULL. */
const char *tb_rd_str(struct tb_rd *r, const char *what);
void tb_rd_copy_str(struct tb_rd *r, char *dst, size_t cap, const char *what);
/* An index into the string table read earlier. */
uint32_t tb_rd_strid(struct tb_rd *r, const char *what);

#endif
