/* top_view.c: sliding-window function statistics for tachyon-bpf top.  The
 * profile keeps cumulative counts per unique stack; every second the
 * increase of each stack becomes a bucket, and a view sums the buckets of
 * the window for the stacks its filter keeps. */
#include <stdlib.h>
#include <string.h>
#include "lib/mem.h"
#include "cpython/opcodes.h"
#include "cmd/top_view.h"

#define MAX_OPS 64

/* Grow an array of elem-sized items to at least want, zeroing the new ones. */
static void *grow_zeroed(void *a, uint32_t *n, uint32_t want, size_t elem)
{
	uint32_t cap = *n ? *n : 64;

	if (want <= *n)
		return a;
	while (cap < want)
		cap *= 2;
	a = realloc(a, (size_t)cap * elem);
	if (!a)
		abort();
	memset((char *)a + (size_t)*n * elem, 0, (size_t)(cap - *n) * elem);
	*n = cap;
	return a;
}

void tb_top_init(struct tb_topview *v, struct tb_profile *p, unsigned window_s)
{
	memset(v, 0, sizeof(*v));
	v->p = p;
	v->window = window_s ? window_s : 1;
	v->buckets = calloc(v->window, sizeof(*v->buckets));
	if (!v->buckets)
		abort();
	v->sel_func = UINT32_MAX;
}

void tb_top_free(struct tb_topview *v)
{
	for (unsigned i = 0; i < v->window; i++)
		free(v->buckets[i].e);
	free(v->buckets);
	free(v->code_func);
	free(v->seen);
	free(v->thread_window);
	free(v->rows);
	tb_functab_free(&v->funcs);
	memset(v, 0, sizeof(*v));
}

static void bucket_push(struct tb_top_bucket *b, uint32_t stack, uint64_t count)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		b->e = realloc(b->e, b->cap * sizeof(*b->e));
		if (!b->e)
			abort();
	}
	b->e[b->n++] = (struct tb_top_entry){ stack, count > UINT32_MAX ? UINT32_MAX : (uint32_t)count };
}

void tb_top_tick(struct tb_topview *v, double seconds)
{
	const struct tb_profile *p = v->p;
	struct tb_top_bucket *b = &v->buckets[v->head];

	v->seen = grow_zeroed(v->seen, &v->nseen, p->nstacks, sizeof(*v->seen));
	b->n = 0;
	for (uint32_t i = 0; i < p->nstacks; i++) {
		uint64_t c = p->stacks[i].count;

		if (c > v->seen[i])
			bucket_push(b, i, c - v->seen[i]);
		v->seen[i] = c;
	}
	b->samples = p->samples - v->seen_samples;
	v->seen_samples = p->samples;
	v->rate = seconds > 0 ? (double)b->samples / seconds : 0;
	v->head = (v->head + 1) % v->window;
	if (v->filled < v->window)
		v->filled++;
}

static uint32_t func_of(struct tb_topview *v, uint32_t code)
{
	v->code_func = grow_zeroed(v->code_func, &v->ncode_func, v->p->sym.n, sizeof(*v->code_func));
	if (!v->code_func[code])
		v->code_func[code] = tb_functab_index(&v->funcs, &v->p->sym.codes[code]) + 1;
	return v->code_func[code] - 1;
}

/* The stack's innermost task frame's code (its running asyncio task), UINT32_MAX: none. */
static uint32_t running_task(const struct tb_profile *p, const struct tb_stack *s)
{
	const struct tb_sframe *f = tb_stack_frames(p, s);

	for (uint16_t d = 0; d < s->depth; d++)
		if (p->sym.codes[f[d].code].kind == TB_CODE_TASK)
			return f[d].code;
	return UINT32_MAX;
}

static int keeps(const struct tb_topview *v, const struct tb_stack *s)
{
	switch (v->filter) {
	case TB_TOP_PROCESS:
		return v->p->threads[s->thread].pid == v->filter_pid;
	case TB_TOP_THREAD:
		return s->thread == v->filter_thread;
	case TB_TOP_TASK:
		return running_task(v->p, s) == v->filter_task;
	default:
		return 1;
	}
}

/* Own for the innermost frame; total once per function (recursion). */
static void add_stack(struct tb_topview *v, const struct tb_stack *s, uint64_t n)
{
	const struct tb_sframe *f = tb_stack_frames(v->p, s);

	v->stamp++;
	for (uint16_t d = 0; d < s->depth; d++) {
		uint32_t fi = func_of(v, f[d].code); /* may move funcs.f */
		struct tb_func *fn = &v->funcs.f[fi];

		if (d == 0)
			fn->self += n;
		if (fn->stamp != v->stamp) {
			fn->stamp = v->stamp;
			fn->total += n;
		}
	}
}

/* Loop over every entry e of every filled bucket b of the window. */
#define FOR_WINDOW(v, b, e)                                                   \
	for (unsigned b##i = 0; b##i < (v)->filled; b##i++)                   \
		for (const struct tb_top_bucket *b = &(v)->buckets[b##i]; b; b = NULL) \
			for (const struct tb_top_entry *e = b->e; e < b->e + b->n; e++)

static void sum_window(struct tb_topview *v)
{
	const struct tb_profile *p = v->p;

	v->thread_window = grow_zeroed(v->thread_window, &v->nthread_window, p->nthreads,
				       sizeof(*v->thread_window));
	memset(v->thread_window, 0, v->nthread_window * sizeof(*v->thread_window));
	for (uint32_t i = 0; i < v->funcs.n; i++)
		v->funcs.f[i].self = v->funcs.f[i].total = 0;
	v->view_samples = 0;
	FOR_WINDOW(v, b, e) {
		const struct tb_stack *s = &p->stacks[e->stack];

		v->thread_window[s->thread] += e->count;
		if (!keeps(v, s))
			continue;
		v->view_samples += e->count;
		add_stack(v, s, e->count);
	}
}

static int by_own(const void *a, const void *b)
{
	const struct tb_top_row *x = a, *y = b;

	if (x->own != y->own)
		return x->own < y->own ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return (x->func > y->func) - (x->func < y->func);
}

static int by_total(const void *a, const void *b)
{
	const struct tb_top_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return by_own(a, b);
}

/* The selection after the rows were computed again: the user's stays on its function (or
 * its row, when the function left the view); one the user never moved is the first row, not
 * whatever function happened to be first when the table was first drawn. */
static void keep_selection(struct tb_topview *v)
{
	if (!v->sel_chosen) {
		v->sel_row = 0;
		v->sel_func = v->nrows ? v->rows[0].func : UINT32_MAX;
		return;
	}
	for (uint32_t i = 0; i < v->nrows; i++)
		if (v->rows[i].func == v->sel_func) {
			v->sel_row = i;
			return;
		}
	if (!v->nrows) {
		v->sel_row = 0;
		v->sel_func = UINT32_MAX;
		return;
	}
	if (v->sel_row >= v->nrows)
		v->sel_row = v->nrows - 1;
	v->sel_func = v->rows[v->sel_row].func;
}

void tb_top_compute(struct tb_topview *v)
{
	sum_window(v);
	v->nrows = 0;
	for (uint32_t i = 0; i < v->funcs.n; i++) {
		const struct tb_func *f = &v->funcs.f[i];

		if (!f->total)
			continue;
		if (v->nrows == v->caprows) {
			v->caprows = v->caprows ? v->caprows * 2 : 256;
			v->rows = realloc(v->rows, v->caprows * sizeof(*v->rows));
			if (!v->rows)
				abort();
		}
		v->rows[v->nrows++] = (struct tb_top_row){ i, f->self, f->total };
	}
	tb_qsort(v->rows, v->nrows, sizeof(*v->rows), v->sort == TB_TOP_BY_TOTAL ? by_total : by_own);
	keep_selection(v);
}

void tb_top_move(struct tb_topview *v, int delta)
{
	int64_t r = (int64_t)v->sel_row + delta;

	if (!v->nrows)
		return;
	if (r < 0)
		r = 0;
	if (r >= (int64_t)v->nrows)
		r = v->nrows - 1;
	v->sel_row = (uint32_t)r;
	v->sel_func = v->rows[r].func;
	v->sel_chosen = 1;
}

void tb_top_filter_all(struct tb_topview *v)
{
	v->filter = TB_TOP_ALL;
	v->scope_pid = 0;
}

static uint64_t thread_active(const struct tb_topview *v, uint32_t t)
{
	return t < v->nthread_window ? v->thread_window[t] : 0;
}

/* Smallest pid above `after` among processes with samples in the window
 * (or among all processes when none has any); 0: none. */
static uint32_t next_pid(const struct tb_topview *v, uint32_t after)
{
	const struct tb_profile *p = v->p;
	uint32_t best = 0;
	int any = 0;

	for (uint32_t t = 0; t < p->nthreads; t++)
		any |= thread_active(v, t) > 0;
	if (any) {
		for (uint32_t t = 0; t < p->nthreads; t++)
			if (thread_active(v, t) && p->threads[t].pid > after && (!best || p->threads[t].pid < best))
				best = p->threads[t].pid;
		return best;
	}
	for (uint32_t i = 0; i < p->nprocs; i++) {
		uint32_t pid = (uint32_t)p->procs[i].pid;

		if (pid > after && (!best || pid < best))
			best = pid;
	}
	return best;
}

void tb_top_next_process(struct tb_topview *v)
{
	uint32_t pid;

	if (v->filter == TB_TOP_THREAD) { /* out to the thread's process first */
		v->filter = TB_TOP_PROCESS;
		v->scope_pid = v->filter_pid;
		return;
	}
	pid = next_pid(v, v->filter == TB_TOP_ALL ? 0 : v->filter_pid);
	if (!pid) {
		tb_top_filter_all(v);
		return;
	}
	v->filter = TB_TOP_PROCESS;
	v->filter_pid = v->scope_pid = pid;
}

static int in_scope(const struct tb_topview *v, uint32_t t)
{
	return !v->scope_pid || v->p->threads[t].pid == v->scope_pid;
}

/* The thread with the smallest tid above `after` in scope, among those with
 * samples in the window (or all in scope when none has any); UINT32_MAX: none. */
static uint32_t next_thread(const struct tb_topview *v, uint32_t after)
{
	const struct tb_profile *p = v->p;
	uint32_t best = UINT32_MAX;
	int any = 0;

	for (uint32_t t = 0; t < p->nthreads; t++)
		any |= in_scope(v, t) && thread_active(v, t) > 0;
	for (uint32_t t = 0; t < p->nthreads; t++) {
		if (!in_scope(v, t) || (any && !thread_active(v, t)) || p->threads[t].tid <= after)
			continue;
		if (best == UINT32_MAX || p->threads[t].tid < p->threads[best].tid)
			best = t;
	}
	return best;
}

void tb_top_next_thread(struct tb_topview *v)
{
	uint32_t t = next_thread(v, v->filter == TB_TOP_THREAD ? v->p->threads[v->filter_thread].tid : 0);

	if (t == UINT32_MAX) { /* past the last one: the process, or all */
		v->filter = v->scope_pid ? TB_TOP_PROCESS : TB_TOP_ALL;
		v->filter_pid = v->scope_pid;
		return;
	}
	v->filter = TB_TOP_THREAD;
	v->filter_thread = t;
	v->filter_pid = v->p->threads[t].pid;
}

static void add_op(struct tb_top_op *ops, unsigned *nops, unsigned minor, unsigned op, uint64_t n)
{
	char buf[40], bbuf[40];
	const char *name = tb_opcode_name(minor, op, buf, sizeof(buf));
	unsigned k;

	for (k = 0; k < *nops && strcmp(ops[k].name, name); k++)
		;
	if (k == *nops) {
		if (*nops == MAX_OPS)
			return;
		memset(&ops[k], 0, sizeof(ops[k]));
		strncpy(ops[k].name, name, sizeof(ops[k].name) - 1);
		strncpy(ops[k].base, tb_opcode_name(minor, tb_opcode_base(minor, op), bbuf, sizeof(bbuf)),
			sizeof(ops[k].base) - 1);
		(*nops)++;
	}
	ops[k].n += n;
}

static int by_count(const void *a, const void *b)
{
	const struct tb_top_op *x = a, *y = b;

	return x->n != y->n ? (x->n < y->n ? 1 : -1) : strcmp(x->name, y->name);
}

unsigned tb_top_opcodes(struct tb_topview *v, struct tb_top_op *out, unsigned max, uint64_t *leaf)
{
	struct tb_top_op ops[MAX_OPS];
	unsigned nops = 0;

	*leaf = 0;
	if (v->sel_func == UINT32_MAX)
		return 0;
	FOR_WINDOW(v, b, e) {
		const struct tb_stack *s = &v->p->stacks[e->stack];
		const struct tb_sframe *f = tb_stack_frames(v->p, s);

		if (!s->depth || !keeps(v, s))
			continue;
		/* a Python function's innermost frame is the stack's Python leaf (kernel
		 * frames may be below it); another's, the stack's leaf */
		if (v->funcs.f[v->sel_func].kind == TB_CODE_PYTHON)
			f += tb_stack_leaf(v->p, s);
		if (func_of(v, f[0].code) != v->sel_func)
			continue;
		*leaf += e->count;
		if (f[0].has_opcode)
			add_op(ops, &nops, v->p->sym.codes[f[0].code].py_minor, f[0].opcode, e->count);
	}
	tb_qsort(ops, nops, sizeof(ops[0]), by_count);
	if (nops > max)
		nops = max;
	memcpy(out, ops, nops * sizeof(ops[0]));
	return nops;
}

void tb_top_next_task(struct tb_topview *v)
{
	const struct tb_profile *p = v->p;
	uint32_t from = v->filter == TB_TOP_TASK ? v->filter_task + 1 : 0;

	for (uint32_t c = from; c < p->sym.n; c++)
		if (p->sym.codes[c].kind == TB_CODE_TASK) {
			v->filter = TB_TOP_TASK;
			v->filter_task = c;
			v->scope_pid = 0;
			return;
		}
	tb_top_filter_all(v);
}
