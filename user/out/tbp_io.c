/* tbp_io.c: the capture format's primitives (out/tbp_io.h): bounded
 * little-endian reads that fail once with one sentence, and the writes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "out/tbp_io.h"

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

const unsigned char *tb_rd_take(struct tb_rd *r, size_t n, const char *what)
{
	const unsigned char *d = r->p;

	if (r->failed)
		return NULL;
	if (n > r->left) {
		tb_rd_fail(r, "payload is truncated in the %s", what);
		return NULL;
	}
	r->p += n;
	r->left -= n;
	return d;
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
