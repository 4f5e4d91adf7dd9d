/* tree_timeline.c: the "timeline" part of the tree JSON
 * (docs/profile-json.md): the buckets, each thread's states over time, and
 * per (thread, node) the node's self samples over time, a node being named
 * by its place in the order the tree is written (root 0, depth first), so
 * that a page can recompute every node's values for a range of buckets.
 * The page's buckets are the profile's, merged in pairs until there are at
 * most PAGE_BUCKETS of them and PAGE_CELLS cells (an hour of a busy host
 * stays a page a browser opens); each list of (bucket, count) pairs gives
 * a bucket as the step from the previous one (the first from 0). */
#include <stdlib.h>
#include "lib/mem.h"
#include "output/tree_json.h"

#define PAGE_BUCKETS 512
#define PAGE_CELLS 1000000

struct self_cell {
	uint32_t thread, node, bucket;
	uint64_t count;
};

static int cmp_self(const void *a, const void *b)
{
	const struct self_cell *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->bucket > y->bucket) - (x->bucket < y->bucket);
}

/* order[node]: its place in the written tree (as tb_json_node walks it). */
static void number(const struct tb_tree *t, uint32_t idx, uint32_t *order, uint32_t *next)
{
	order[idx] = (*next)++;
	for (uint32_t c = t->n[idx].first_child; c != TB_NO_NODE; c = t->n[c].next_sibling)
		if (!t->n[c].pruned)
			number(t, c, order, next);
}

/* The count of cell i and of those after it in the same series and bucket. */
static uint64_t state_sum(const struct tb_tcell *c, uint32_t n, uint32_t i)
{
	uint64_t s = c[i].count;

	for (uint32_t k = i + 1; k < n && c[k].series == c[i].series && c[k].bucket == c[i].bucket; k++)
		s += c[k].count;
	return s;
}

/* Cells of sorted sc once buckets are merged 2^shift at a time. */
static uint64_t merged_cells(const struct self_cell *sc, uint32_t n, unsigned shift)
{
	uint64_t m = 0;

	for (uint32_t i = 0; i < n; i++)
		m += !i || sc[i].thread != sc[i - 1].thread || sc[i].node != sc[i - 1].node ||
		     sc[i].bucket >> shift != sc[i - 1].bucket >> shift;
	return m;
}

static void write_states(FILE *f, const struct tb_profile *p, const struct tb_tcell *c, uint32_t n)
{
	uint32_t thread = UINT32_MAX, state = UINT32_MAX, prev = 0;

	fputs("\"states\":{", f);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t th = c[i].series / TB_TS_N, st = c[i].series % TB_TS_N;

		if (th >= p->nthreads)
			continue;
		if (th != thread) {
			fprintf(f, "%s\"%u\":{", thread == UINT32_MAX ? "" : "]},", p->threads[th].tid);
			thread = th;
			state = UINT32_MAX;
		}
		if (st != state) {
			fprintf(f, "%s\"%s\":[", state == UINT32_MAX ? "" : "],", tb_tl_state_names[st]);
			state = st;
			prev = 0;
		} else if (c[i].bucket == prev) { /* merged into the last one written */
			continue;
		} else {
			fputc(',', f);
		}
		fprintf(f, "%u,%llu", c[i].bucket - prev, (unsigned long long)state_sum(c, n, i));
		prev = c[i].bucket;
	}
	fputs(thread == UINT32_MAX ? "}" : "]}}", f);
}

void tb_json_timeline(FILE *f, const struct tb_tree *t)
{
	const struct tb_profile *p = t->prof;
	const struct tb_timeline *tl = &p->tl;
	struct tb_tcell *states;
	struct self_cell *sc;
	uint32_t *order, next = 0, n = 0, prev = 0;
	unsigned shift = 0;

	if (!tl->on || !tl->nbuckets)
		return;
	order = tb_calloc(t->nn, sizeof(*order));
	number(t, 0, order, &next);
	sc = tb_calloc(tl->stacks.n, sizeof(*sc));
	for (uint32_t i = 0; i < tl->stacks.n; i++) {
		const struct tb_tcell *c = &tl->stacks.c[i];
		uint32_t node;

		if (c->series >= p->nstacks)
			continue;
		node = t->leaf_of[c->series];
		while (node && t->n[node].pruned) /* counted where the page shows it */
			node = t->n[node].parent;
		sc[n++] = (struct self_cell){ p->stacks[c->series].thread, order[node], c->bucket, c->count };
	}
	tb_qsort(sc, n, sizeof(*sc), cmp_self);
	while (shift < 16 && ((tl->nbuckets - 1) >> shift >= PAGE_BUCKETS ||
			      merged_cells(sc, n, shift) > PAGE_CELLS))
		shift++;
	for (uint32_t i = 0; i < n; i++)
		sc[i].bucket >>= shift;
	fprintf(f, ",\"timeline\":{\"bucket_s\":%.9g,\"start_unix_ms\":%.3f,\"buckets\":%u,",
		(double)(tl->width_ns << shift) / 1e9, (double)tl->origin_unix_ns / 1e6,
		((tl->nbuckets - 1) >> shift) + 1);
	states = tb_calloc(tl->states.n, sizeof(*states));
	for (uint32_t i = 0; i < tl->states.n; i++) {
		states[i] = tl->states.c[i];
		states[i].bucket >>= shift;
	}
	tb_qsort(states, tl->states.n, sizeof(*states), tb_tcell_cmp);
	write_states(f, p, states, tl->states.n);
	fputs(",\"self\":[", f);
	for (uint32_t i = 0; i < n; i++) {
		int head = !i || sc[i].thread != sc[i - 1].thread || sc[i].node != sc[i - 1].node;
		uint64_t count = sc[i].count;

		if (head)
			fprintf(f, "%s[%u,%u,[", i ? "]]," : "", p->threads[sc[i].thread].tid, sc[i].node);
		while (i + 1 < n && !cmp_self(&sc[i], &sc[i + 1])) /* the same bucket twice */
			count += sc[++i].count;
		if (!head)
			fputc(',', f);
		fprintf(f, "%u,%llu", sc[i].bucket - (head ? 0 : prev), (unsigned long long)count);
		prev = sc[i].bucket;
	}
	fputs(n ? "]]]}" : "]}", f);
	free(states);
	free(sc);
	free(order);
}
