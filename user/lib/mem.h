/* mem.h: growable arrays and byte buffers (allocation failure aborts: a
 * profiler that cannot allocate has nothing sensible left to do). */
#ifndef TB_MEM_H
#define TB_MEM_H
#include <stddef.h>
#include <stdint.h>

/* Make room for `need` elements of `elem` bytes in a (capacity *cap,
 * doubling from `first`); returns the possibly moved array. */
void *tb_grow(void *a, uint32_t *cap, uint32_t need, size_t elem, uint32_t first);
/* The same with a 64-bit capacity (the profile's frame arena). */
void *tb_grow64(void *a, uint64_t *cap, uint64_t need, size_t elem, uint64_t first);
/* n bytes, NULL when there is not that much memory (a size read from a file). */
void *tb_alloc(size_t n);
/* n zeroed elements of size bytes (never NULL, even for n == 0).  Blocks of
 * 8 MiB and more (from here and tb_grow) go on transparent huge pages. */
void *tb_calloc(size_t n, size_t size);

struct tb_buf {
	unsigned char *d;
	size_t n, cap;
};

/* Append len bytes (uninitialized) and return where they start. */
unsigned char *tb_buf_room(struct tb_buf *b, size_t len);
/* Append len bytes from src. */
void tb_buf_put(struct tb_buf *b, const void *src, size_t len);

/* qsort that accepts an empty (even NULL) array: qsort(NULL, 0, ...) is undefined. */
void tb_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
