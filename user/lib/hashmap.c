/* hashmap.c: open-addressing index of 64-bit hashes to dense indices
 * (linear probing, load <= 1/2, 32 hash bits kept per slot). */
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/hashmap.h"

#define MIN_SLOTS 16u
#define MAX_SLOTS (1u << 31)   /* 2^30 indices: more than any bounded input */

/* The 32 hash bits a slot keeps: they place it and filter comparisons. */
static inline uint32_t bits_of(uint64_t hash)
{
	return (uint32_t)(hash ^ (hash >> 32));
}

static inline uint64_t slot_value(uint32_t bits, uint32_t index)
{
	return (uint64_t)bits << 32 | (index + 1u);
}

static void place(uint64_t *slots, uint32_t mask, uint64_t v)
{
	uint32_t j = (uint32_t)(v >> 32) & mask;

	while (slots[j])
		j = (j + 1) & mask;
	slots[j] = v;
}

/* A table of nslots slots holding the n values vals (which may be the old table). */
static void rebuild(struct tb_hmap *m, uint32_t nslots, const uint64_t *vals, uint32_t n)
{
	uint64_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		abort();
	for (uint32_t i = 0; i < n; i++)
		if (vals[i])
			place(slots, nslots - 1, vals[i]);
	free(m->slots);
	m->slots = slots;
	m->mask = nslots - 1;
}

/* Room for one more index. */
static void reserve(struct tb_hmap *m)
{
	uint32_t nslots = m->slots ? m->mask + 1 : 0;

	if (!nslots) {
		rebuild(m, MIN_SLOTS, NULL, 0);
	} else if ((uint64_t)(m->used + 1) * 2 > nslots) {
		if (nslots >= MAX_SLOTS)
			abort();
		rebuild(m, nslots * 2, m->slots, nslots);
	}
}

uint32_t tb_hmap_find(const struct tb_hmap *m, uint64_t hash, tb_hmap_eq eq, const void *ctx)
{
	uint32_t bits = bits_of(hash), j;

	if (!m->slots)
		return TB_HMAP_NONE;
	for (j = bits & m->mask; m->slots[j]; j = (j + 1) & m->mask) {
		uint64_t v = m->slots[j];

		if ((uint32_t)(v >> 32) == bits && eq(ctx, (uint32_t)v - 1))
			return (uint32_t)v - 1;
	}
	return TB_HMAP_NONE;
}

uint32_t tb_hmap_intern(struct tb_hmap *m, uint64_t hash, uint32_t index, tb_hmap_eq eq,
			const void *ctx)
{
	uint32_t bits = bits_of(hash), j;

	if (index == TB_HMAP_NONE)
		abort();
	reserve(m);
	for (j = bits & m->mask; m->slots[j]; j = (j + 1) & m->mask) {
		uint64_t v = m->slots[j];

		if ((uint32_t)(v >> 32) == bits && eq(ctx, (uint32_t)v - 1))
			return (uint32_t)v - 1;
	}
	m->slots[j] = slot_value(bits, index);
	m->used++;
	return index;
}

void tb_hmap_insert(struct tb_hmap *m, uint64_t hash, uint32_t index)
{
	if (index == TB_HMAP_NONE)
		abort();
	reserve(m);
	place(m->slots, m->mask, slot_value(bits_of(hash), index));
	m->used++;
}

struct bytes_key {
	const unsigned char *entries;
	size_t stride;
	const void *key;
	size_t len;
};

static int same_bytes(const void *ctx, uint32_t i)
{
	const struct bytes_key *k = ctx;

	return memcmp(k->entries + (size_t)i * k->stride, k->key, k->len) == 0;
}

uint32_t tb_hmap_find_key(const struct tb_hmap *m, const void *entries, size_t stride,
			  const void *key, size_t len)
{
	const struct bytes_key k = { entries, stride, key, len };

	return tb_hmap_find(m, tb_hash(key, len), same_bytes, &k);
}

uint32_t tb_hmap_intern_key(struct tb_hmap *m, const void *entries, size_t stride,
			    const void *key, size_t len, uint32_t index)
{
	const struct bytes_key k = { entries, stride, key, len };

	return tb_hmap_intern(m, tb_hash(key, len), index, same_bytes, &k);
}

void tb_hmap_retain(struct tb_hmap *m, tb_hmap_keep keep, const void *ctx)
{
	uint32_t nslots = m->slots ? m->mask + 1 : 0, n = 0, want = MIN_SLOTS;

	/* kept values move to the front of the old table, then into a new one
	 * sized for them */
	for (uint32_t i = 0; i < nslots; i++) {
		uint64_t v = m->slots[i];

		if (v && keep(ctx, (uint32_t)v - 1))
			m->slots[n++] = v;
	}
	if (!nslots)
		return;
	while ((uint64_t)n * 2 > want)
		want *= 2;
	rebuild(m, want, m->slots, n);
	m->used = n;
}

void tb_hmap_clear(struct tb_hmap *m)
{
	if (m->slots)
		memset(m->slots, 0, ((size_t)m->mask + 1) * sizeof(*m->slots));
	m->used = 0;
}

void tb_hmap_free(struct tb_hmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
