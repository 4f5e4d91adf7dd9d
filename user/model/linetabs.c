/* linetabs.c: one copy and one index per distinct line table, budgeted (linetabs.h). The
 * bytes come from targets and capture files: they are hashed with the keyed hash and
 * compared in full, so equal hashes cost a comparison, never a wrong table. */
#include <stdlib.h>
#include <string.h>
#include "cpython/versions.h"
#include "lib/hash.h"
#include "lib/mem.h"
#include "model/linetabs.h"

void tb_linetabs_init(struct tb_linetabs *t)
{
	memset(t, 0, sizeof(*t));
	t->total_budget = TB_LINETABS_TOTAL;
	t->process_budget = TB_LINETABS_PER_PROCESS;
}

void tb_linetabs_free(struct tb_linetabs *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		free(t->tabs[i].bytes);
		tb_linetable_index_free(&t->tabs[i].ix);
	}
	free(t->tabs);
	tb_hmap_free(&t->index);
	memset(t, 0, sizeof(*t));
}

/* The table format of py_minor, -1 when it is not supported. */
static int format_of(int py_minor)
{
	const struct tb_pyversion *v = py_minor >= 0 ? tb_pyversion((unsigned)py_minor) : NULL;

	return v ? (int)v->lines : -1;
}

struct tab_key {
	const struct tb_linetabs *t;
	int format;
	const unsigned char *bytes;
	uint32_t len;
};

static int same_tab(const void *ctx, uint32_t i)
{
	const struct tab_key *k = ctx;
	const struct tb_linetab *tab = &k->t->tabs[i];

	return tab->format == k->format && tab->len == k->len && !memcmp(tab->bytes, k->bytes, k->len);
}

static uint64_t tab_hash(int format, const unsigned char *bytes, uint32_t len)
{
	struct tb_hasher h;

	tb_hash_init(&h);
	tb_hash_word(&h, (uint64_t)(int64_t)format);
	tb_hash_add(&h, bytes, len);
	return tb_hash_end(&h);
}

/* Most bytes an index of a len-byte table holds (linetable.h). */
static uint64_t index_bound(uint32_t len)
{
	return ((uint64_t)len / 64 + 1) * 40;
}

uint32_t tb_linetabs_add(struct tb_linetabs *t, int py_minor, const unsigned char *bytes, uint32_t len,
			 uint64_t *process_kept)
{
	struct tab_key k = { t, format_of(py_minor), bytes, len };
	uint64_t hash, cost = len + index_bound(len);
	struct tb_linetab *tab;
	uint32_t found;

	if (!len || !bytes)
		return 0;
	hash = tab_hash(k.format, bytes, len);
	found = tb_hmap_find(&t->index, hash, same_tab, &k);
	if (found != TB_HMAP_NONE)
		return found + 1;
	if (t->kept + cost > t->total_budget ||
	    (process_kept && *process_kept + cost > t->process_budget))
		return 0;
	t->tabs = tb_grow(t->tabs, &t->cap, t->n + 1, sizeof(*t->tabs), 64);
	tab = &t->tabs[t->n];
	tab->bytes = malloc(len);
	if (!tab->bytes)
		abort();
	memcpy(tab->bytes, bytes, len);
	tab->len = len;
	tab->format = k.format;
	tb_linetable_index(py_minor, tab->bytes, len, &tab->ix);
	cost = len + tb_linetable_index_bytes(&tab->ix);
	t->kept += cost;
	if (process_kept)
		*process_kept += cost;
	tb_hmap_insert(&t->index, hash, t->n);
	return ++t->n;
}

const struct tb_linetab *tb_linetabs_get(const struct tb_linetabs *t, uint32_t id)
{
	return id && id <= t->n ? &t->tabs[id - 1] : NULL;
}

int tb_linetabs_lookup(const struct tb_linetabs *t, uint32_t id, int firstlineno, int addr,
		       struct tb_location *out)
{
	const struct tb_linetab *tab = tb_linetabs_get(t, id);

	if (!tab) {
		*out = (struct tb_location){ -1, -1, -1, -1 };
		return -1;
	}
	return tb_linetable_index_lookup(&tab->ix, tab->bytes, tab->len, firstlineno, addr, out);
}
