/* strtab.c: a string interning table (open addressing on FNV-1a). */
#include <stdlib.h>
#include <string.h>
#include "lib/strtab.h"

uint64_t tb_hash_bytes(const void *p, size_t len, uint64_t seed)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull ^ seed;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h ^ (h >> 29);
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);

	if (!q)
		abort();
	return q;
}

void tb_strtab_init(struct tb_strtab *t)
{
	memset(t, 0, sizeof(*t));
	tb_strtab_intern(t, "");
}

void tb_strtab_free(struct tb_strtab *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static void rehash(struct tb_strtab *t)
{
	uint32_t n = t->nslots ? t->nslots * 2 : 1024;

	free(t->slots);
	t->slots = calloc(n, sizeof(uint32_t));
	if (!t->slots)
		abort();
	t->nslots = n;
	for (uint32_t id = 0; id < t->n; id++) {
		uint64_t h = tb_hash_bytes(t->strs[id], strlen(t->strs[id]), 0);
		uint32_t i = (uint32_t)h & (n - 1);

		while (t->slots[i])
			i = (i + 1) & (n - 1);
		t->slots[i] = id + 1;
	}
}

uint32_t tb_strtab_intern(struct tb_strtab *t, const char *s)
{
	uint64_t h;
	uint32_t i;

	if ((t->n + 1) * 2 >= t->nslots)
		rehash(t);
	h = tb_hash_bytes(s, strlen(s), 0);
	for (i = (uint32_t)h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1))
		if (strcmp(t->strs[t->slots[i] - 1], s) == 0)
			return t->slots[i] - 1;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->strs = xrealloc(t->strs, t->cap * sizeof(char *));
	}
	t->strs[t->n] = strdup(s);
	if (!t->strs[t->n])
		abort();
	t->slots[i] = ++t->n;
	return t->n - 1;
}
