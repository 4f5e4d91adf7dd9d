/* tbp_io.c: the capture format's primitives (output/tbp_io.h): the writes;
 * bounded little-endian reads that fail once with one sentence, from the
 * payload inflated as the parser advances: a window that holds what the
 * next read needs (grown only as the stream fills it, so a claimed length
 * allocates no more than twice the bytes that really came), refilled from
 * the compressed bytes in memory or read from the file a block at a time. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "output/tbp_io.h"

#define WINDOW (256u << 10)       /* the window's first size */
#define MEM_BLOCK (1u << 30)      /* compressed bytes in memory given to zlib at once (uInt) */

struct tb_rd_src {
	z_stream z;
	FILE *f;                      /* the compressed bytes come from here, or from `in` */
	const unsigned char *in;
	uint64_t inleft;              /* compressed bytes not yet given to zlib */
	uint64_t outleft;             /* payload bytes (as announced) not yet inflated */
	int ended;                    /* zlib saw the end of the stream */
	int broken;                   /* zlib (or the file) failed: said once */
	unsigned char *win;           /* the window: unread payload bytes at [pos, end) */
	size_t cap, pos, end;
	unsigned char block[1u << 16]; /* read from f */
};

void tb_cap_put(struct tb_buf *b, uint64_t v, int bytes)
{
	unsigned char *d = tb_buf_room(b, (size_t)bytes);

	for (int i = 0; i < bytes; i++)
		d[i] = (unsigned char)(v >> (8 * i));
}

void tb_cap_f64(struct tb_buf *b, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	tb_cap_u64(b, bits);
}

void tb_cap_str(struct tb_buf *b, const char *s, size_t max)
{
	size_t len = strnlen(s, max);

	tb_cap_u32(b, (uint32_t)len);
	memcpy(tb_buf_room(b, len), s, len);
	tb_cap_u8(b, 0);
}

int tb_rd_fail(struct tb_rd *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->failed) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errlen, fmt, ap);
		va_end(ap);
		r->failed = 1;
	}
	return -1;
}

uint64_t tb_rd_le(const unsigned char *d, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = (v << 8) | d[i];
	return v;
}

struct tb_rd_src *tb_rd_src_new(const unsigned char *in, FILE *f, uint64_t zlen, uint64_t plen)
{
	struct tb_rd_src *src = calloc(1, sizeof(*src));

	if (!src)
		return NULL;
	src->cap = plen < WINDOW ? (size_t)plen + 1 : WINDOW;
	src->win = malloc(src->cap);
	if (!src->win || inflateInit(&src->z) != Z_OK) {
		free(src->win);
		free(src);
		return NULL;
	}
	src->f = f;
	src->in = in;
	src->inleft = zlen;
	src->outleft = plen;
	return src;
}

void tb_rd_src_free(struct tb_rd_src *src)
{
	if (!src)
		return;
	inflateEnd(&src->z);
	free(src->win);
	free(src);
}

static int zfail(struct tb_rd *r, const char *why)
{
	r->src->broken = 1;
	return tb_rd_fail(r, "corrupt capture: the compressed payload does not decompress (%s)", why);
}

/* Inflate at most room bytes into dst (room > 0): how many (0 only at the
 * stream's end), or -1 after tb_rd_fail. */
static long inflate_into(struct tb_rd *r, unsigned char *dst, size_t room)
{
	struct tb_rd_src *src = r->src;

	src->z.next_out = dst;
	src->z.avail_out = (uInt)room;
	while (!src->ended && src->z.avail_out == room) {
		int rc;

		if (!src->z.avail_in && src->inleft) {
			size_t most = src->f ? sizeof(src->block) : MEM_BLOCK;
			size_t n = src->inleft < most ? (size_t)src->inleft : most;

			if (src->f) {
				n = fread(src->block, 1, n, src->f);
				if (!n) /* the file is shorter now than it was */
					return zfail(r, "longer than announced or cut short");
				src->z.next_in = src->block;
			} else {
				src->z.next_in = (unsigned char *)src->in;
				src->in += n;
			}
			src->z.avail_in = (uInt)n;
			src->inleft -= n;
		}
		rc = inflate(&src->z, Z_NO_FLUSH);
		if (rc == Z_STREAM_END)
			src->ended = 1;
		else if (rc == Z_BUF_ERROR) /* no input left */
			return zfail(r, "longer than announced or cut short");
		else if (rc != Z_OK)
			return zfail(r, rc == Z_MEM_ERROR ? "out of memory" : "bad data");
	}
	return (long)(room - src->z.avail_out);
}

/* Make the window hold n unread bytes (n <= the payload's bytes left): 0,
 * or -1 after tb_rd_fail. */
static int refill(struct tb_rd *r, size_t n)
{
	struct tb_rd_src *src = r->src;

	if (src->pos) {
		memmove(src->win, src->win + src->pos, src->end - src->pos);
		src->end -= src->pos;
		src->pos = 0;
	}
	while (src->end < n) {
		size_t room;
		long got;

		if (src->end == src->cap) { /* full of bytes that really came: twice as big */
			unsigned char *w = src->cap > SIZE_MAX / 2 ? NULL : realloc(src->win, src->cap * 2);

			if (!w)
				return tb_rd_fail(r, "out of memory for the payload's window");
			src->win = w;
			src->cap *= 2;
		}
		room = src->cap - src->end;
		if (room > src->outleft)
			room = (size_t)src->outleft;
		if (!room || src->ended) /* the stream ended before the size announced */
			return zfail(r, "size mismatch");
		got = inflate_into(r, src->win + src->end, room);
		if (got < 0)
			return -1;
		src->end += (size_t)got;
		src->outleft -= (uint64_t)got;
	}
	return 0;
}

int tb_rd_src_drain(struct tb_rd *r)
{
	struct tb_rd_src *src = r->src;
	unsigned char more;
	long got;

	if (src->broken)
		return -1;
	src->pos = src->end = 0;
	while (src->outleft) {
		got = inflate_into(r, src->win, src->cap < src->outleft ? src->cap : (size_t)src->outleft);
		if (got < 0)
			return -1;
		if (!got) /* the stream ended before the size announced */
			return zfail(r, "size mismatch");
		src->outleft -= (uint64_t)got;
	}
	got = inflate_into(r, &more, 1);
	if (got < 0)
		return -1;
	if (got || !src->ended)
		return zfail(r, "longer than announced or cut short");
	if (src->z.avail_in || src->inleft || (src->f && fgetc(src->f) != EOF))
		return zfail(r, "size mismatch"); /* compressed bytes after the stream's end */
	return 0;
}

const unsigned char *tb_rd_take(struct tb_rd *r, size_t n, const char *what)
{
	struct tb_rd_src *src = r->src;
	const unsigned char *d;

	if (r->failed)
		return NULL;
	if (n > r->left) {
		tb_rd_fail(r, "payload is truncated in the %s", what);
		return NULL;
	}
	if (n > src->end - src->pos && refill(r, n))
		return NULL;
	d = src->win + src->pos;
	src->pos += n;
	r->left -= n;
	return d;
}

void tb_rd_skip(struct tb_rd *r, size_t n, const char *what)
{
	struct tb_rd_src *src = r->src;

	if (!r->failed && n > r->left)
		tb_rd_fail(r, "payload is truncated in the %s", what);
	while (n && !r->failed) {
		size_t have = src->end - src->pos;

		if (!have && refill(r, 1))
			break;
		have = src->end - src->pos;
		if (have > n)
			have = n;
		src->pos += have;
		r->left -= have;
		n -= have;
	}
}

uint64_t tb_rd_get(struct tb_rd *r, int bytes, const char *what)
{
	const unsigned char *d = tb_rd_take(r, (size_t)bytes, what);

	return d ? tb_rd_le(d, bytes) : 0;
}

double tb_rd_f64(struct tb_rd *r, const char *what)
{
	uint64_t bits = tb_rd_get(r, 8, what);
	double v;

	memcpy(&v, &bits, sizeof(v));
	return v;
}

uint32_t tb_rd_count(struct tb_rd *r, size_t min, const char *what)
{
	uint32_t n = (uint32_t)tb_rd_get(r, 4, what);

	if (!r->failed && n > r->left / min)
		tb_rd_fail(r, "the %s section claims %u entries, more than the %zu bytes left can hold",
			   what, n, r->left);
	return r->failed ? 0 : n;
}

const char *tb_rd_str(struct tb_rd *r, const char *what)
{
	uint32_t len = (uint32_t)tb_rd_get(r, 4, what);
	const unsigned char *d;

	if (r->failed)
		return NULL;
	d = tb_rd_take(r, (size_t)len + 1, what);
	if (!d)
		return NULL;
	if (d[len] != 0 || memchr(d, 0, len)) {
		tb_rd_fail(r, "a string in the %s is not NUL-terminated", what);
		return NULL;
	}
	return (const char *)d;
}

void tb_rd_copy_str(struct tb_rd *r, char *dst, size_t cap, const char *what)
{
	const char *s = tb_rd_str(r, what);

	if (s && strlen(s) >= cap)
		tb_rd_fail(r, "a %s is longer than %zu bytes", what, cap - 1);
	else if (s)
		memcpy(dst, s, strlen(s) + 1);
}

uint32_t tb_rd_strid(struct tb_rd *r, const char *what)
{
	uint32_t id = (uint32_t)tb_rd_get(r, 4, what);

	if (!r->failed && id >= r->nstrs)
		tb_rd_fail(r, "string index %u in the %s is out of range (%u strings)", id, what, r->nstrs);
	return r->failed ? 0 : id;
}
