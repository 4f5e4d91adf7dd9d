/* tree.c: builds the weighted call tree from aggregated stacks.  Frame
 * nodes are keyed by function (or by function and line with --by-line);
 * each node keeps per-thread [samples, self] (the node's own total and self
 * while it has one thread) and a per-line breakdown, so that totals for one
 * thread can be computed from the node alone.  The variable-length parts
 * live in four arenas (tree.h: struct tb_span), not one allocation each. */
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/mem.h"
#include "model/tree.h"

static uint64_t node_hash(uint32_t parent, uint8_t kind, uint32_t key, int32_t line)
{
	return tb_hash2(((uint64_t)parent << 32) | key, ((uint64_t)kind << 32) | (uint32_t)line);
}

static uint32_t new_node(struct tb_tree *t, uint32_t parent, uint8_t kind, uint32_t key, int32_t line)
{
	struct tb_tnode *x;

	if (t->nn == t->cap)
		t->n = tb_grow(t->n, &t->cap, t->nn + 1, sizeof(*t->n), 1024);
	x = &t->n[t->nn];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->key = key;
	x->line = line;
	x->parent = parent;
	x->first_child = x->next_sibling = x->last_child = TB_NO_NODE;
	x->thread = TB_NO_THREAD;
	if (parent != TB_NO_NODE) {
		struct tb_tnode *p = &t->n[parent];

		if (p->last_child == TB_NO_NODE)
			p->first_child = t->nn;
		else
			t->n[p->last_child].next_sibling = t->nn;
		p->last_child = t->nn;
	}
	return t->nn++;
}

struct node_key {
	const struct tb_tree *t;
	uint32_t parent, key;
	int32_t line;
	uint8_t kind;
};

static int same_node(const void *ctx, uint32_t i)
{
	const struct node_key *k = ctx;
	const struct tb_tnode *x = &k->t->n[i];

	return x->parent == k->parent && x->kind == k->kind && x->key == k->key && x->line == k->line;
}

static uint32_t child(struct tb_tree *t, uint32_t parent, uint8_t kind, uint32_t key, int32_t line)
{
	const struct node_key k = { t, parent, key, line, kind };
	struct tb_tnode *p = &t->n[parent];
	uint32_t i;

	if (p->nkids == TB_TREE_INDEXED) {
		i = tb_hmap_intern(&t->index, node_hash(parent, kind, key, line), t->nn, same_node, &k);
		return i == t->nn ? new_node(t, parent, kind, key, line) : i;
	}
	for (i = p->first_child; i != TB_NO_NODE; i = t->n[i].next_sibling)
		if (same_node(&k, i))
			return i;
	i = new_node(t, parent, kind, key, line);
	p = &t->n[parent];
	if (++p->nkids > TB_TREE_SCAN) { /* from now on through the index */
		for (uint32_t c = p->first_child; c != TB_NO_NODE; c = t->n[c].next_sibling)
			tb_hmap_insert(&t->index, node_hash(parent, t->n[c].kind, t->n[c].key, t->n[c].line), c);
		p->nkids = TB_TREE_INDEXED;
	}
	return i;
}

/* Room for one more entry in a node's span of an arena of elem-byte entries
 * (see struct tb_span); returns the arena, the new entry's index in *at. */
static void *span_push(void *a, uint32_t *n, uint32_t *cap, size_t elem, struct tb_span *s, uint32_t *at)
{
	int at_end = s->n && s->at + s->n == *n;
	uint32_t more = at_end ? s->n : s->n ? 2 * s->n : 1; /* arena entries taken */

	if (s->n & (s->n - 1)) { /* not a power of two: room left */
		*at = s->at + s->n++;
		return a;
	}
	if (s->n > UINT32_MAX / 2 || more > UINT32_MAX - *n)
		abort(); /* as an allocation failure */
	a = tb_grow(a, cap, *n + more, elem, 1024);
	if (!at_end) { /* move to the end (at the end it grows in place) */
		memcpy((char *)a + (size_t)*n * elem, (char *)a + (size_t)s->at * elem, (size_t)s->n * elem);
		s->at = *n;
	}
	*n += more;
	*at = s->at + s->n++;
	return a;
}

struct tb_tval tb_tnode_tval(const struct tb_tree *t, const struct tb_tnode *x, uint32_t i)
{
	if (x->tv.n)
		return t->tvals[x->tv.at + i];
	return (struct tb_tval){ x->thread, x->total, x->self };
}

static void add_weight(struct tb_tree *t, uint32_t node, uint32_t thread, uint64_t count, int is_self)
{
	struct tb_tnode *x = &t->n[node];
	struct tb_tval *v = NULL;
	uint32_t at;

	if (x->thread == TB_NO_THREAD)
		x->thread = thread;
	if (x->thread != thread && !x->tv.n) { /* a second thread: the first one's values move to tv */
		t->tvals = span_push(t->tvals, &t->ntvals, &t->captvals, sizeof(*t->tvals), &x->tv, &at);
		t->tvals[at] = (struct tb_tval){ x->thread, x->total, x->self };
	}
	x->total += count;
	if (is_self)
		x->self += count;
	if (!x->tv.n)
		return;
	for (uint32_t i = 0; i < x->tv.n; i++)
		if (t->tvals[x->tv.at + i].thread == thread) {
			v = &t->tvals[x->tv.at + i];
			break;
		}
	if (!v) {
		t->tvals = span_push(t->tvals, &t->ntvals, &t->captvals, sizeof(*t->tvals), &x->tv, &at);
		v = &t->tvals[at];
		*v = (struct tb_tval){ thread, 0, 0 };
	}
	v->samples += count;
	if (is_self)
		v->self += count;
}

static void add_line(struct tb_tree *t, struct tb_tnode *x, const struct tb_location *loc, uint64_t count,
		     int is_self)
{
	struct tb_lval *v = NULL;
	uint32_t at;

	for (uint32_t i = 0; i < x->lv.n; i++)
		if (t->lvals[x->lv.at + i].loc.line == loc->line) {
			v = &t->lvals[x->lv.at + i];
			break;
		}
	if (!v) {
		t->lvals = span_push(t->lvals, &t->nlvals, &t->caplvals, sizeof(*t->lvals), &x->lv, &at);
		v = &t->lvals[at];
		*v = (struct tb_lval){ *loc, 0, 0 };
	}
	v->samples += count;
	if (is_self)
		v->self += count;
	if (v->samples == count) {
		v->loc = *loc;
	} else if (loc->col >= 0) { /* widen to every sampled span (of the same line) */
		if (v->loc.col < 0 || loc->col < v->loc.col)
			v->loc.col = loc->col;
		if (loc->end_line > v->loc.end_line ||
		    (loc->end_line == v->loc.end_line && loc->end_col > v->loc.end_col)) {
			v->loc.end_line = loc->end_line;
			v->loc.end_col = loc->end_col;
		}
	}
}

static void add_opcode(struct tb_tree *t, struct tb_tnode *x, uint32_t thread, uint8_t opcode, uint64_t count)
{
	uint32_t at;

	for (uint32_t i = 0; i < x->ov.n; i++) {
		struct tb_oval *v = &t->ovals[x->ov.at + i];

		if (v->thread == thread && v->opcode == opcode) {
			v->samples += count;
			return;
		}
	}
	t->ovals = span_push(t->ovals, &t->novals, &t->capovals, sizeof(*t->ovals), &x->ov, &at);
	t->ovals[at] = (struct tb_oval){ thread, opcode, count };
}

static void add_instruction(struct tb_tree *t, struct tb_tnode *x, const struct tb_sframe *f,
			    const struct tb_location *loc, uint64_t count)
{
	uint32_t at;

	for (uint32_t i = 0; i < x->iv.n; i++) {
		struct tb_ival *v = &t->ivals[x->iv.at + i];

		if (v->offset == f->offset) {
			v->samples += count;
			if (f->has_opcode) { /* the latest (possibly re-specialized) form */
				v->opcode = f->opcode;
				v->has_opcode = 1;
			}
			return;
		}
	}
	t->ivals = span_push(t->ivals, &t->nivals, &t->capivals, sizeof(*t->ivals), &x->iv, &at);
	t->ivals[at] = (struct tb_ival){ f->offset, f->opcode, f->has_opcode, *loc, count };
}

static void add_stack(struct tb_tree *t, const struct tb_stack *s)
{
	const struct tb_profile *p = t->prof;
	const struct tb_sframe *f = tb_stack_frames(p, s);
	uint32_t thread = s->thread, node;
	int pi = tb_profile_find_process(p, p->threads[thread].pid);
	int leaf = tb_stack_leaf(p, s);   /* where the leaf instruction is (below: kernel frames) */

	add_weight(t, 0, thread, s->count, 0);
	node = child(t, 0, TB_N_PROCESS, pi < 0 ? 0 : (uint32_t)pi, -1);
	add_weight(t, node, thread, s->count, 0);
	if (s->kind & TB_SK_TRUNCATED) {
		node = child(t, node, TB_N_TRUNCATED, 0, -1);
		add_weight(t, node, thread, s->count, 0);
	}
	if (s->kind & TB_SK_PARTIAL) {
		node = child(t, node, TB_N_PARTIAL, 0, -1);
		add_weight(t, node, thread, s->count, 0);
	}
	for (int i = s->depth - 1; i >= 0; i--) {
		const struct tb_code *c = &p->sym.codes[f[i].code];
		struct tb_location loc;
		uint32_t fi = tb_functab_of_code(&t->funcs, &p->sym, f[i].code);

		tb_sym_location(&p->sym, f[i].code, f[i].offset, &loc);
		node = child(t, node, TB_N_FRAME, fi, t->by_line ? loc.line : -1);
		add_weight(t, node, thread, s->count, i == 0);
		add_line(t, &t->n[node], &loc, s->count, i == 0);
		t->n[node].py_minor = c->py_minor;
		if (i == leaf && f[i].has_opcode)
			add_opcode(t, &t->n[node], thread, f[i].opcode, s->count);
		if (i == leaf)
			add_instruction(t, &t->n[node], &f[i], &loc, s->count);
	}
	t->leaf_of[s - p->stacks] = node;
}

/* a (capacity *cap) shrunk to its n elements; unchanged if realloc fails or n is 0 */
static void *fit(void *a, uint32_t *cap, uint32_t n, size_t elem)
{
	void *b = n && n < *cap ? realloc(a, (size_t)n * elem) : NULL;

	if (!b)
		return a;
	*cap = n;
	return b;
}

void tb_tree_build(struct tb_tree *t, const struct tb_profile *p, int by_line)
{
	memset(t, 0, sizeof(*t));
	t->prof = p;
	t->by_line = by_line;
	/* room for the most nodes the stacks can make (the pages never used are
	 * never touched): no copies while growing; fit() below gives back the rest */
	uint64_t most = 1;
	for (uint32_t i = 0; i < p->nstacks; i++)
		most += (uint64_t)p->stacks[i].depth + 3;
	if (most < UINT32_MAX)
		t->n = tb_grow(t->n, &t->cap, (uint32_t)most, sizeof(*t->n), 1024);
	new_node(t, TB_NO_NODE, TB_N_ROOT, 0, -1);
	t->leaf_of = tb_calloc(p->nstacks, sizeof(*t->leaf_of));
	for (uint32_t i = 0; i < p->nstacks; i++)
		add_stack(t, &p->stacks[i]);
	tb_functab_count(&t->funcs, p);
	/* built: the index goes, the arrays give back their doubling's slack */
	tb_hmap_free(&t->index);
	t->n = fit(t->n, &t->cap, t->nn, sizeof(*t->n));
	t->tvals = fit(t->tvals, &t->captvals, t->ntvals, sizeof(*t->tvals));
	t->lvals = fit(t->lvals, &t->caplvals, t->nlvals, sizeof(*t->lvals));
	t->ovals = fit(t->ovals, &t->capovals, t->novals, sizeof(*t->ovals));
	t->ivals = fit(t->ivals, &t->capivals, t->nivals, sizeof(*t->ivals));
}

static int significant(const struct tb_tree *t, const struct tb_tnode *x, double min_fraction,
		       double thread_fraction)
{
	const struct tb_profile *p = t->prof;

	if ((double)x->total >= min_fraction * (double)t->n[0].total)
		return 1;
	for (uint32_t i = 0, n = tb_tnode_nthreads(x); i < n; i++) {
		struct tb_tval v = tb_tnode_tval(t, x, i);
		double need = thread_fraction * (double)p->threads[v.thread].python_samples;

		if ((double)v.samples >= (need > 1.0 ? need : 1.0))
			return 1;
	}
	return 0;
}

/* Mark the nodes that are not significant (or, more: that were marked
 * already), and those below a marked parent; parents come before children. */
static void mark(struct tb_tree *t, double min_fraction, double thread_fraction, int more)
{
	t->pruned = 0;
	for (uint32_t i = 1; i < t->nn; i++) {
		struct tb_tnode *x = &t->n[i];

		x->pruned = (more && x->pruned) || t->n[x->parent].pruned ||
			    !significant(t, x, min_fraction, thread_fraction);
		t->pruned += x->pruned;
	}
}

void tb_tree_prune(struct tb_tree *t, double min_fraction)
{
	t->min_fraction = min_fraction;
	mark(t, min_fraction, 0.001, 0);
}

void tb_tree_prune_more(struct tb_tree *t, double fraction)
{
	if (fraction > t->min_fraction)
		t->min_fraction = fraction;
	mark(t, fraction, fraction, 1);
}

void tb_tree_free(struct tb_tree *t)
{
	free(t->n);
	free(t->tvals);
	free(t->lvals);
	free(t->ovals);
	free(t->ivals);
	free(t->leaf_of);
	tb_hmap_free(&t->index);
	tb_functab_free(&t->funcs);
	memset(t, 0, sizeof(*t));
}
