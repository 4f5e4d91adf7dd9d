/* summary.c: the end-of-capture report on stderr: counts, and the top
 * functions by self and total samples (a function is file + qualname +
 * first line; recursion counts once per sample in total). */
#include <stdlib.h>
#include <string.h>
#include "output.h"

struct func {
	uint32_t qualname, filename;
	int32_t firstlineno;
	uint64_t self, total;
	uint64_t stamp;   /* last stack that counted it in total */
};

struct functab {
	struct func *f;
	uint32_t n, cap;
	uint32_t *slots, nslots;
};

static uint32_t func_index(struct functab *t, const struct tb_code *c)
{
	uint64_t k[2] = { ((uint64_t)c->qualname << 32) | c->filename, (uint64_t)(uint32_t)c->firstlineno };
	uint32_t j;

	if ((t->n + 1) * 2 >= t->nslots) {
		uint32_t n = t->nslots ? t->nslots * 2 : 1024;

		free(t->slots);
		t->slots = calloc(n, sizeof(uint32_t));
		if (!t->slots)
			abort();
		t->nslots = n;
		for (uint32_t i = 0; i < t->n; i++) {
			uint64_t kk[2] = { ((uint64_t)t->f[i].qualname << 32) | t->f[i].filename,
					   (uint64_t)(uint32_t)t->f[i].firstlineno };

			j = (uint32_t)tb_hash_bytes(kk, sizeof(kk), 3) & (n - 1);
			while (t->slots[j])
				j = (j + 1) & (n - 1);
			t->slots[j] = i + 1;
		}
	}
	for (j = (uint32_t)tb_hash_bytes(k, sizeof(k), 3) & (t->nslots - 1); t->slots[j];
	     j = (j + 1) & (t->nslots - 1)) {
		struct func *g = &t->f[t->slots[j] - 1];

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

static int by_self(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->self != y->self ? (x->self < y->self ? 1 : -1) : (x->total < y->total) - (x->total > y->total);
}

static int by_total(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->total != y->total ? (x->total < y->total ? 1 : -1) : (x->self < y->self) - (x->self > y->self);
}

static void print_top(const struct tb_profile *p, FILE *out, struct func *f, uint32_t n,
		      unsigned top, const char *title)
{
	double all = p->python_samples ? (double)p->python_samples : 1.0;

	fprintf(out, "  %s:\n", title);
	for (uint32_t i = 0; i < n && i < top; i++)
		fprintf(out, "    %6.2f%% self %6.2f%% total  %s (%s:%d)\n",
			100.0 * (double)f[i].self / all, 100.0 * (double)f[i].total / all,
			tb_str(&p->strs, f[i].qualname), tb_str(&p->strs, f[i].filename), f[i].firstlineno);
}

void tb_write_summary(const struct tb_profile *p, FILE *out, unsigned top)
{
	struct functab t = { 0 };

	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct tb_stack *s = &p->stacks[i];
		const struct tb_sframe *f = tb_stack_frames(p, s);

		for (uint16_t d = 0; d < s->depth; d++) {
			uint32_t fi = func_index(&t, &p->sym.codes[f[d].code]);

			if (d == 0)
				t.f[fi].self += s->count;
			if (t.f[fi].stamp != i + 1) {
				t.f[fi].stamp = i + 1;
				t.f[fi].total += s->count;
			}
		}
	}
	fprintf(out, "tachyon-bpf: %llu samples (%llu with Python frames, %llu without), %llu lost, "
		"%llu truncated, %llu partial\n",
		(unsigned long long)p->samples, (unsigned long long)p->python_samples,
		(unsigned long long)p->no_python, (unsigned long long)p->lost,
		(unsigned long long)p->truncated, (unsigned long long)p->partial);
	fprintf(out, "  %u processes, %u threads, %u functions, %llu of %llu frames unresolved (%.2f%%)\n",
		p->nprocs, p->nthreads, t.n, (unsigned long long)p->unresolved_frames,
		(unsigned long long)p->frames,
		p->frames ? 100.0 * (double)p->unresolved_frames / (double)p->frames : 0.0);
	for (uint32_t i = 0; i < p->nprocs; i++)
		fprintf(out, "  pid %d: Python %s, %llu samples: %s\n", (int)p->procs[i].target.pid,
			p->procs[i].version, (unsigned long long)p->procs[i].samples,
			p->procs[i].target.cmdline);
	if (t.n && top) {
		qsort(t.f, t.n, sizeof(*t.f), by_self);
		print_top(p, out, t.f, t.n, top, "top functions by self samples");
		qsort(t.f, t.n, sizeof(*t.f), by_total);
		print_top(p, out, t.f, t.n, top, "top functions by total samples");
	}
	free(t.f);
	free(t.slots);
}
