/* functab.c: a hash table of functions keyed by (qualname, filename,
 * first line), and the self/total sample counts the summary and the
 * tree writers need. */
#include <stdlib.h>
#include <string.h>
#include "model/functab.h"
#include "model/profile.h"

static uint64_t func_hash(uint32_t qualname, uint32_t filename, int32_t firstlineno)
{
	uint64_t k[2] = { ((uint64_t)qualname << 32) | filename, (uint64_t)(uint32_t)firstlineno };

	return tb_hash_bytes(k, sizeof(k), 3);
}

void tb_functab_free(struct tb_functab *t)
{
	free(t->f);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static void rehash(struct tb_functab *t)
{
	uint32_t n = t->nslots ? t->nslots * 2 : 1024;

	free(t->slots);
	t->slots = calloc(n, sizeof(uint32_t));
	if (!t->slots)
		abort();
	t->nslots = n;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t j = (uint32_t)func_hash(t->f[i].qualname, t->f[i].filename,
						 t->f[i].firstlineno) & (n - 1);

		while (t->slots[j])
			j = (j + 1) & (n - 1);
		t->slots[j] = i + 1;
	}
}

uint32_t tb_functab_index(struct tb_functab *t, const struct tb_code *c)
{
	uint32_t j;

	if ((t->n + 1) * 2 >= t->nslots)
		rehash(t);
	for (j = (uint32_t)func_hash(c->qualname, c->filename, c->firstlineno) & (t->nslots - 1);
	     t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
		struct tb_func *g = &t->f[t->slots[j] - 1];

		if (g->qualname == c->qualname && g->filename == c->filename &&
		    g->firstlineno == c->firstlineno)
			return t->slots[j] - 1;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->f = realloc(t->f, t->cap * sizeof(*t->f));
		if (!t->f)
			abort();
	}
	memset(&t->f[t->n], 0, sizeof(t->f[0]));
	t->f[t->n].qualname = c->qualname;
	t->f[t->n].filename = c->filename;
	t->f[t->n].firstlineno = c->firstlineno;
	t->slots[j] = ++t->n;
	return t->n - 1;
}

void tb_functab_count(struct tb_functab *t, const struct tb_profile *p)
{
	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct tb_stack *s = &p->stacks[i];
		const struct tb_sframe *f = tb_stack_frames(p, s);

		for (uint16_t d = 0; d < s->depth; d++) {
			uint32_t fi = tb_functab_index(t, &p->sym.codes[f[d].code]);

			if (d == 0)
				t->f[fi].self += s->count;
			if (t->f[fi].stamp != i + 1) {
				t->f[fi].stamp = i + 1;
				t->f[fi].total += s->count;
			}
		}
	}
}
