/* hashmap.h: the one hash index of the agent: open addressing (linear
 * probing, at most half full) from a 64-bit hash to dense indices 0..n-1 of
 * an array the caller keeps.  The caller owns the entries and says whether
 * an entry equals the key looked up; the map keeps, per slot, the index and
 * 32 bits of the hash, so growing needs no callback and most mismatches are
 * rejected without calling it.  Hashes should come from lib/hash.h (keyed):
 * equal hashes cost a probe each.  Allocation failure aborts (lib/mem.h). */
#ifndef TB_HASHMAP_H
#define TB_HASHMAP_H
#include <stddef.h>
#include <stdint.h>

#define TB_HMAP_NONE UINT32_MAX

struct tb_hmap {
	uint64_t *slots;   /* hash bits << 32 | (index + 1); 0: empty */
	uint32_t mask;     /* slots - 1 (a power of two), when slots != NULL */
	uint32_t used;     /* indices stored */
};

/* Does entry `index` equal the key in ctx? */
typedef int (*tb_hmap_eq)(const void *ctx, uint32_t index);
/* Keep entry `index` (tb_hmap_retain)? */
typedef int (*tb_hmap_keep)(const void *ctx, uint32_t index);

/* The index of the entry equal to the key with this hash, or TB_HMAP_NONE. */
uint32_t tb_hmap_find(const struct tb_hmap *m, uint64_t hash, tb_hmap_eq eq, const void *ctx);
/* Find, or else store `index` (< TB_HMAP_NONE: the caller's next entry, which
 * it must then add): returns the found index, or `index` if it was stored. */
uint32_t tb_hmap_intern(struct tb_hmap *m, uint64_t hash, uint32_t index, tb_hmap_eq eq,
			const void *ctx);
/* Store index under hash without looking (the caller knows it is new). */
void tb_hmap_insert(struct tb_hmap *m, uint64_t hash, uint32_t index);
/* Rebuild with only the indices keep() accepts: one pass over the slots. */
void tb_hmap_retain(struct tb_hmap *m, tb_hmap_keep keep, const void *ctx);
/* Entries whose key is their first len bytes (no padding among them), in
 * an array of stride-byte elements: find / find or store as above, the key
 * hashed with lib/hash.h and compared with memcmp. */
uint32_t tb_hmap_find_key(const struct tb_hmap *m, const void *entries, size_t stride,
			  const void *key, size_t len);
uint32_t tb_hmap_intern_key(struct tb_hmap *m, const void *entries, size_t stride,
			    const void *key, size_t len, uint32_t index);
/* Forget every index, keeping the memory. */
void tb_hmap_clear(struct tb_hmap *m);
void tb_hmap_free(struct tb_hmap *m);

#endif
