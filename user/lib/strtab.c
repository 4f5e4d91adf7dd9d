/* strtab.c: a string interning table (lib/hashmap.h on the keyed hash). */
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/mem.h"
#include "lib/strtab.h"

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
	tb_hmap_free(&t->index);
	memset(t, 0, sizeof(*t));
}

struct key {
	const struct tb_strtab *t;
	const char *s;
};

static int same(const void *ctx, uint32_t id)
{
	const struct key *k = ctx;

	return strcmp(k->t->strs[id], k->s) == 0;
}

uint32_t tb_strtab_intern(struct tb_strtab *t, const char *s)
{
	const struct key k = { t, s };
	uint32_t id = tb_hmap_intern(&t->index, tb_hash(s, strlen(s)), t->n, same, &k);

	if (id != t->n)
		return id;
	t->strs = tb_grow(t->strs, &t->cap, t->n + 1, sizeof(char *), 256);
	t->strs[t->n] = strdup(s);
	if (!t->strs[t->n])
		abort();
	return t->n++;
}
