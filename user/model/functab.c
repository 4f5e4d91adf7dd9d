/* functab.c: a hash table of functions keyed by (qualname, filename,
 * first line, kind), and the self/total sample counts the summary and the
 * tree writers need. */
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include "lib/mem.h"
#include "model/functab.h"
#include "model/profile.h"

void tb_functab_free(struct tb_functab *t)
{
	free(t->f);
	free(t->of_code);
	tb_hmap_free(&t->index);
	memset(t, 0, sizeof(*t));
}

/* the key: qualname, filename, firstlineno, kind (no padding among them) */
#define FUNC_KEY (offsetof(struct tb_func, kind) + sizeof(uint32_t))

uint32_t tb_functab_index(struct tb_functab *t, const struct tb_code *c)
{
	const struct tb_func key = { c->qualname, c->filename, c->firstlineno, c->kind, 0, 0, 0 };
	uint32_t i = tb_hmap_intern_key(&t->index, t->f, sizeof(*t->f), &key, FUNC_KEY, t->n);

	if (i == t->n) {
		t->f = tb_grow(t->f, &t->cap, t->n + 1, sizeof(*t->f), 256);
		t->f[t->n++] = key;
	}
	return i;
}

uint32_t tb_functab_of_code(struct tb_functab *t, const struct tb_symbolizer *sym, uint32_t code)
{
	if (code >= t->nof_code) {
		uint32_t had = t->nof_code;

		t->of_code = tb_grow(t->of_code, &t->nof_code, sym->n > code ? sym->n : code + 1,
				     sizeof(*t->of_code), 256);
		memset(t->of_code + had, 0, (size_t)(t->nof_code - had) * sizeof(*t->of_code));
	}
	if (!t->of_code[code])
		t->of_code[code] = tb_functab_index(t, &sym->codes[code]) + 1;
	return t->of_code[code] - 1;
}

void tb_functab_count(struct tb_functab *t, const struct tb_profile *p)
{
	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct tb_stack *s = &p->stacks[i];
		const struct tb_sframe *f = tb_stack_frames(p, s);

		for (uint16_t d = 0; d < s->depth; d++) {
			uint32_t fi = tb_functab_of_code(t, &p->sym, f[d].code);

			if (d == 0)
				t->f[fi].self += s->count;
			if (t->f[fi].stamp != i + 1) {
				t->f[fi].stamp = i + 1;
				t->f[fi].total += s->count;
			}
		}
	}
}
