/* table.c: the pstats-style text table (`-o x.txt`): one row per function
 * with own (self) and total samples, their shares of the Python samples and
 * their time (samples / rate), sorted by p->sort_key (--sort own|total|name)
 * and cut at p->limit rows (--limit N, 0 = all); functions named by
 * output/funcname.c.  With --async-aware, then one row per asyncio task. */
#include <stdlib.h>
#include <string.h>
#include "lib/termsafe.h"
#include "lib/mem.h"
#include "model/functab.h"
#include "model/tasktotals.h"
#include "output/format.h"
#include "output/funcname.h"

static const struct tb_profile *sort_prof; /* qsort has no context argument */

static int cmp_name(const struct tb_func *x, const struct tb_func *y)
{
	const struct tb_strtab *s = &sort_prof->strs;
	int c = strcmp(tb_str(s, x->qualname), tb_str(s, y->qualname));

	if (!c)
		c = strcmp(tb_str(s, x->filename), tb_str(s, y->filename));
	if (!c)
		c = (x->firstlineno > y->firstlineno) - (x->firstlineno < y->firstlineno);
	return c;
}

static int desc(uint64_t a, uint64_t b)
{
	return (a < b) - (a > b);
}

static int by_own(const void *a, const void *b)
{
	const struct tb_func *x = a, *y = b;
	int c = desc(x->self, y->self);

	return c ? c : (c = desc(x->total, y->total)) ? c : cmp_name(x, y);
}

static int by_total(const void *a, const void *b)
{
	const struct tb_func *x = a, *y = b;
	int c = desc(x->total, y->total);

	return c ? c : (c = desc(x->self, y->self)) ? c : cmp_name(x, y);
}

static int by_name(const void *a, const void *b)
{
	return cmp_name(a, b);
}

int tb_pstats_sort_key(const char *name)
{
	static const char *const keys[] = { "own", "total", "name" };

	for (int i = 0; i < 3; i++)
		if (!strcmp(name, keys[i]))
			return i;
	return -1;
}

/* Names come from the target: one row each, in the form a terminal shows
 * and does not obey (lib/termsafe.h: controls, bidi overrides escaped). */
static void put_clean(FILE *f, const char *s)
{
	tb_termsafe_put(f, s);
}

static void header(const struct tb_profile *p, FILE *f, uint32_t shown, uint32_t nfuncs)
{
	static const char *const modes[] = { "cpu", "wall", "gil", "exception" };
	static const char *const keys[] = { "own samples", "total samples", "function name" };

	fprintf(f, "tachyon-bpf profile: %llu Python samples (%llu records, %llu off-CPU), %.3f s "
		"at %u Hz (mode %s), %u process%s, %u thread%s\n",
		(unsigned long long)p->python_samples, (unsigned long long)p->samples,
		(unsigned long long)p->off_cpu_samples, p->duration_s, p->hz, modes[p->mode & 3],
		p->nprocs, p->nprocs == 1 ? "" : "es", p->nthreads, p->nthreads == 1 ? "" : "s");
	for (uint32_t i = 0; i < p->nprocs; i++) {
		const struct tb_pinfo *pi = &p->procs[i];

		fprintf(f, "process %d: Python %s, %llu samples: ", (int)pi->pid, tb_str(&p->pstrs, pi->version),
			(unsigned long long)pi->samples);
		put_clean(f, tb_str(&p->pstrs, pi->cmdline)[0] ? tb_str(&p->pstrs, pi->cmdline) : tb_str(&p->pstrs, pi->comm));
		fputc('\n', f);
	}
	fprintf(f, "sorted by %s; %u of %u functions; time = samples / rate\n\n",
		keys[p->sort_key >= 0 && p->sort_key <= 2 ? p->sort_key : 0], shown, nfuncs);
	fprintf(f, "%10s %10s %7s %7s %12s %12s  %s\n", "own", "total", "own%", "total%", "own_ms",
		"total_ms", "function (file:line)");
}

/* --async-aware: one row per task, the samples it was the running task of. */
static void task_rows(const struct tb_profile *p, FILE *f, double all, double ms)
{
	struct tb_task_total *t;
	uint32_t n = tb_task_totals(p, &t);

	fprintf(f, "\n%llu samples in asyncio tasks; per task (the running one):\n%10s %7s %12s %8s  %s\n",
		(unsigned long long)p->task_samples, "samples", "share%", "ms", "threads", "task");
	for (uint32_t i = 0, j; i < n; i = j) {
		uint64_t sum = 0;

		for (j = i; j < n && t[j].code == t[i].code; j++)
			sum += t[j].samples;
		fprintf(f, "%10llu %6.2f%% %12.1f %8u  ", (unsigned long long)sum, 100.0 * (double)sum / all,
			(double)sum * ms, j - i);
		put_clean(f, tb_str(&p->strs, p->sym.codes[t[i].code].qualname));
		fputc('\n', f);
	}
	free(t);
}

int tb_write_pstats(const struct tb_profile *p, FILE *f)
{
	static int (*const cmps[])(const void *, const void *) = { by_own, by_total, by_name };
	struct tb_functab t = { 0 };
	double all = p->python_samples ? (double)p->python_samples : 1.0;
	double ms = 1000.0 / (p->hz ? p->hz : 1000);
	uint32_t shown;

	tb_functab_count(&t, p);
	sort_prof = p;
	if (t.n)
		tb_qsort(t.f, t.n, sizeof(*t.f), cmps[p->sort_key >= 0 && p->sort_key <= 2 ? p->sort_key : 0]);
	shown = p->limit && p->limit < t.n ? p->limit : t.n;
	header(p, f, shown, t.n);
	for (uint32_t i = 0; i < shown; i++) {
		const struct tb_func *fn = &t.f[i];

		fprintf(f, "%10llu %10llu %6.2f%% %6.2f%% %12.1f %12.1f  ", (unsigned long long)fn->self,
			(unsigned long long)fn->total, 100.0 * (double)fn->self / all,
			100.0 * (double)fn->total / all, (double)fn->self * ms, (double)fn->total * ms);
		tb_put_funcname(f, p, fn, put_clean);
		fputc('\n', f);
	}
	tb_functab_free(&t);
	if (p->async_aware)
		task_rows(p, f, all, ms);
	return ferror(f) ? -1 : 0;
}
