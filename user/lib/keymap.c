/* keymap.c: open-addressing hash map of four-word keys to dense indices. */
#include <stdlib.h>
#include <string.h>
#include "lib/keymap.h"
#include "lib/strtab.h"

static uint32_t slot_of(const uint32_t k[4], uint32_t nslots)
{
	return (uint32_t)tb_hash_bytes(k, 4 * sizeof(uint32_t), 11) & (nslots - 1);
}

static void rehash(struct tb_keymap *m)
{
	uint32_t n = m->nslots ? m->nslots * 2 : 256;

	free(m->slots);
	m->slots = calloc(n, sizeof(uint32_t));
	if (!m->slots)
		abort();
	m->nslots = n;
	for (uint32_t i = 0; i < m->n; i++) {
		uint32_t j = slot_of(m->keys[i], n);

		while (m->slots[j])
			j = (j + 1) & (n - 1);
		m->slots[j] = i + 1;
	}
}

uint32_t tb_keymap_get(struct tb_keymap *m, uint32_t a, uint32_t b, uint32_t c, uint32_t d,
		       int *added)
{
	const uint32_t k[4] = { a, b, c, d };
	uint32_t j;

	if (added)
		*added = 0;
	if ((m->n + 1) * 2 >= m->nslots)
		rehash(m);
	for (j = slot_of(k, m->nslots); m->slots[j]; j = (j + 1) & (m->nslots - 1))
		if (memcmp(m->keys[m->slots[j] - 1], k, sizeof(k)) == 0)
			return m->slots[j] - 1;
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 256;
		m->keys = realloc(m->keys, (size_t)m->cap * sizeof(*m->keys));
		if (!m->keys)
			abort();
	}
	memcpy(m->keys[m->n], k, sizeof(k));
	m->slots[j] = ++m->n;
	if (added)
		*added = 1;
	return m->n - 1;
}

void tb_keymap_clear(struct tb_keymap *m)
{
	m->n = 0;
	if (m->slots)
		memset(m->slots, 0, (size_t)m->nslots * sizeof(uint32_t));
}

void tb_keymap_free(struct tb_keymap *m)
{
	free(m->keys);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
