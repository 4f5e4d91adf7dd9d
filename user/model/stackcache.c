/* stackcache.c: raw stack key words -> a profile's stack index, with
 * generations for invalidation and a start-over at the caps (stackcache.h). */
#include <stdlib.h>
#include <string.h>
#include "lib/mem.h"
#include "model/stackcache.h"

void tb_stackcache_free(struct tb_stackcache *c)
{
	free(c->e);
	free(c->words);
	tb_hmap_free(&c->index);
	memset(c, 0, sizeof(*c));
}

struct sc_key {
	const struct tb_stackcache *c;
	const uint64_t *key;
	uint32_t nkey;
};

static int same_key(const void *ctx, uint32_t i)
{
	const struct sc_key *k = ctx;
	const struct tb_sc_entry *e = &k->c->e[i];

	return e->nkey == k->nkey && !memcmp(&k->c->words[e->key], k->key, (size_t)k->nkey * sizeof(*k->key));
}

const struct tb_sc_value *tb_stackcache_get(struct tb_stackcache *c, const uint64_t *key, uint32_t nkey,
					    uint64_t hash)
{
	const struct sc_key k = { c, key, nkey };
	uint32_t i = tb_hmap_find(&c->index, hash, same_key, &k);

	if (i == TB_HMAP_NONE || c->e[i].gen != c->gen) {
		c->misses++;
		return NULL;
	}
	c->hits++;
	return &c->e[i].v;
}

/* Forget every entry, keeping the memory. */
static void restart(struct tb_stackcache *c)
{
	tb_hmap_clear(&c->index);
	c->n = 0;
	c->nwords = 0;
	c->restarts++;
}

void tb_stackcache_put(struct tb_stackcache *c, const uint64_t *key, uint32_t nkey, uint64_t hash,
		       struct tb_sc_value v)
{
	const struct sc_key k = { c, key, nkey };
	struct tb_sc_entry *e;
	uint32_t i;

	if (nkey > TB_SC_MAX_WORDS)
		return;
	i = tb_hmap_find(&c->index, hash, same_key, &k);
	if (i != TB_HMAP_NONE) { /* stale: refilled in place */
		c->e[i].gen = c->gen;
		c->e[i].v = v;
		return;
	}
	if (c->n >= TB_SC_MAX_ENTRIES || c->nwords + nkey > TB_SC_MAX_WORDS)
		restart(c);
	c->e = tb_grow(c->e, &c->cap, c->n + 1, sizeof(*c->e), 256);
	c->words = tb_grow(c->words, &c->capwords, c->nwords + nkey, sizeof(*c->words), 4096);
	memcpy(&c->words[c->nwords], key, (size_t)nkey * sizeof(*key));
	e = &c->e[c->n];
	e->key = c->nwords;
	e->nkey = nkey;
	e->gen = c->gen;
	e->v = v;
	tb_hmap_insert(&c->index, hash, c->n++);
	c->nwords += nkey;
}
