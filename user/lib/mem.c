/* mem.c: growable arrays and byte buffers. */
#include <stdlib.h>
#include <string.h>
#include "lib/mem.h"

void *tb_grow(void *a, uint32_t *cap, uint32_t need, size_t elem, uint32_t first)
{
	if (need <= *cap)
		return a;
	while (*cap < need)
		*cap = *cap ? *cap * 2 : first;
	a = realloc(a, (size_t)*cap * elem);
	if (!a)
		abort();
	return a;
}

unsigned char *tb_buf_room(struct tb_buf *b, size_t len)
{
	if (b->n + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (b->n + len > cap)
			cap *= 2;
		b->d = realloc(b->d, cap);
		if (!b->d)
			abort();
		b->cap = cap;
	}
	b->n += len;
	return b->d + b->n - len;
}

void tb_buf_put(struct tb_buf *b, const void *src, size_t len)
{
	unsigned char *dst = tb_buf_room(b, len);

	if (len)
		memcpy(dst, src, len);
}

void tb_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}
