/* tasktotals.c: a profile's samples per (asyncio task, thread), from its
 * stacks' innermost <task> frames. */
#include <stdint.h>
#include "lib/hashmap.h"
#include "lib/mem.h"
#include "model/tasktotals.h"

static int by_code(const void *a, const void *b)
{
	const struct tb_task_total *x = a, *y = b;

	if (x->code != y->code)
		return x->code < y->code ? -1 : 1;
	return (x->thread > y->thread) - (x->thread < y->thread);
}

uint32_t tb_task_totals(const struct tb_profile *p, struct tb_task_total **out)
{
	struct tb_task_total *t = NULL;
	struct tb_hmap index = { 0 };
	uint32_t n = 0, cap = 0;

	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct tb_stack *s = &p->stacks[i];
		const struct tb_sframe *f = tb_stack_frames(p, s);
		struct tb_task_total key = { 0, s->thread, 0 };
		uint32_t k;
		uint16_t d = 0;

		while (d < s->depth && p->sym.codes[f[d].code].kind != TB_CODE_TASK)
			d++;
		if (d == s->depth || !s->count)
			continue;
		key.code = f[d].code;
		t = tb_grow(t, &cap, n + 1, sizeof(*t), 16);
		k = tb_hmap_intern_key(&index, t, sizeof(*t), &key, 2 * sizeof(uint32_t), n);
		if (k == n)
			t[n++] = key;
		t[k].samples += s->count;
	}
	tb_hmap_free(&index);
	if (n)
		tb_qsort(t, n, sizeof(*t), by_code);
	*out = t;
	return n;
}
