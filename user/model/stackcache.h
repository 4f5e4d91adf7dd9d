/* stackcache.h: the raw-stack cache of a profile: a sample's raw stack, as
 * key words (what decides its symbolized stack: thread, flags, kernel PCs,
 * code addresses, instruction offsets, code ids), -> the profile's stack
 * index, so a repeated stack costs one keyed hash of its words and one
 * comparison instead of a symbolizer lookup per frame.  The profile builds
 * the key (model/profile.c) and invalidates the cache whenever what it maps
 * could change (a generation: O(1), a stale entry is refilled in place).
 * Bounded: at most TB_SC_MAX_ENTRIES entries and TB_SC_MAX_WORDS key words;
 * past either, it starts over (each start-over paid for by the inserts
 * since the last). */
#ifndef TB_STACKCACHE_H
#define TB_STACKCACHE_H
#include <stdint.h>
#include "lib/hashmap.h"

#define TB_SC_MAX_ENTRIES (1u << 15)
#define TB_SC_MAX_WORDS (1u << 19)     /* 4 MiB of keys */

/* What a hit stands for: the stack, and the per-sample counts its frames
 * add (counted again for every sample of it). */
struct tb_sc_value {
	uint32_t stack;        /* the profile's stack index */
	uint16_t unresolved;   /* frames of unresolved code objects */
	uint16_t kernel;       /* kernel frames, after trimming */
};

struct tb_sc_entry {
	uint32_t key;          /* first key word in words[] */
	uint32_t nkey;         /* key words */
	uint32_t gen;          /* the cache's generation when it was filled */
	struct tb_sc_value v;
};

struct tb_stackcache {
	struct tb_sc_entry *e;
	uint32_t n, cap;
	uint64_t *words;
	uint32_t nwords, capwords;
	struct tb_hmap index;       /* key -> entry */
	uint32_t gen;               /* entries of another generation are stale */
	uint64_t hits, misses, restarts;
};

void tb_stackcache_free(struct tb_stackcache *c);
/* Every entry stale from now on (O(1)). */
static inline void tb_stackcache_invalidate(struct tb_stackcache *c)
{
	c->gen++;
}
/* The value of the nkey key words (hash: tb_hash of them), if a live entry
 * holds it, else NULL (a miss, counted). */
const struct tb_sc_value *tb_stackcache_get(struct tb_stackcache *c, const uint64_t *key, uint32_t nkey,
					    uint64_t hash);
/* Remember v for the key (a stale entry of the same key is refilled);
 * nkey <= TB_SC_MAX_WORDS. */
void tb_stackcache_put(struct tb_stackcache *c, const uint64_t *key, uint32_t nkey, uint64_t hash,
		       struct tb_sc_value v);

#endif
