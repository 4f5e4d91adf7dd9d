/* summary.c: the end-of-capture report on stderr: counts, and the top
 * functions by self and total samples.  Names, files, versions and
 * command lines come from targets or captures: shown through
 * lib/termsafe.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lib/mem.h"
#include "lib/termsafe.h"
#include "model/functab.h"
#include "cpython/opcodes.h"
#include "output/format.h"
#include "output/funcname.h"

static int by_self(const void *a, const void *b)
{
	const struct tb_func *x = a, *y = b;

	return x->self != y->self ? (x->self < y->self ? 1 : -1) : (x->total < y->total) - (x->total > y->total);
}

static int by_total(const void *a, const void *b)
{
	const struct tb_func *x = a, *y = b;

	return x->total != y->total ? (x->total < y->total ? 1 : -1) : (x->self < y->self) - (x->self > y->self);
}

static void print_top(const struct tb_profile *p, FILE *out, struct tb_func *f, uint32_t n,
		      unsigned top, const char *title)
{
	double all = p->python_samples ? (double)p->python_samples : 1.0;

	fprintf(out, "  %s:\n", title);
	for (uint32_t i = 0; i < n && i < top; i++) {
		fprintf(out, "    %6.2f%% self %6.2f%% total  ",
			100.0 * (double)f[i].self / all, 100.0 * (double)f[i].total / all);
		tb_put_funcname(out, p, &f[i], tb_termsafe_put);
		fputc('\n', out);
	}
}

/* Top executing instructions (by name, across versions) and the share of
 * samples in a specialized instruction. */
static void print_opcodes(const struct tb_profile *p, FILE *out, unsigned top)
{
	struct { const char *name; uint64_t n; } ops[64];
	unsigned nops = 0;
	uint64_t with = 0, specialized = 0;
	char buf[32];

	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct tb_stack *s = &p->stacks[i];
		const struct tb_sframe *f = tb_stack_frames(p, s);
		unsigned minor, op;
		const char *name;
		unsigned k;

		if (!s->depth || !s->count)
			continue;
		f += tb_stack_leaf(p, s);   /* the Python leaf: kernel frames may be below it */
		if (!f[0].has_opcode)
			continue;
		minor = p->sym.codes[f[0].code].py_minor;
		op = f[0].opcode;
		name = tb_opcode_name(minor, op, buf, sizeof(buf));
		with += s->count;
		/* 3.11's *_ADAPTIVE forms are the not-yet-specialized ones */
		if (tb_opcode_base(minor, op) != op &&
		    !(strlen(name) > 9 && !strcmp(name + strlen(name) - 9, "_ADAPTIVE")))
			specialized += s->count;
		for (k = 0; k < nops && strcmp(ops[k].name, name); k++)
			;
		if (k == nops && nops < 64 && name != buf)
			ops[nops++].name = name, ops[k].n = 0;
		if (k < nops)
			ops[k].n += s->count;
	}
	if (!with)
		return;
	for (unsigned a = 0; a < nops; a++) /* few entries: selection sort */
		for (unsigned b = a + 1; b < nops; b++)
			if (ops[b].n > ops[a].n) {
				__typeof__(ops[0]) tmp = ops[a];

				ops[a] = ops[b];
				ops[b] = tmp;
			}
	fprintf(out, "  top instructions (%.1f%% of samples in specialized instructions):\n",
		100.0 * (double)specialized / (double)with);
	for (unsigned a = 0; a < nops && a < top; a++)
		fprintf(out, "    %6.2f%%  %s\n", 100.0 * (double)ops[a].n / (double)with, ops[a].name);
}

/* --kernel, --native: what the samples held, and why kernel names are missing. */
static void print_frame_kinds(const struct tb_profile *p, FILE *out, const struct tb_functab *t)
{
	uint32_t kinds[TB_CODE_KINDS] = { 0 };

	for (uint32_t i = 0; i < t->n; i++)
		if (t->f[i].kind < TB_CODE_KINDS)
			kinds[t->f[i].kind]++;
	if (p->kernel || p->kernel_samples)
		fprintf(out, "  kernel: %llu samples and off-CPU stacks with kernel frames, %llu kernel frames, "
			"%u kernel functions\n", (unsigned long long)p->kernel_samples,
			(unsigned long long)p->kernel_frames, kinds[TB_CODE_KERNEL]);
	if ((p->kernel || p->kernel_samples) && p->kstack.hidden) {
		if (p->kstack.kptr_restrict >= 0)
			fprintf(out, "  kernel symbols hidden: kptr_restrict=%d or no CAP_SYSLOG "
				"(each sample's kernel part is one [kernel] frame)\n", (int)p->kstack.kptr_restrict);
		else
			fprintf(out, "  kernel symbols hidden: kptr_restrict or no CAP_SYSLOG "
				"(each sample's kernel part is one [kernel] frame)\n");
	}
	if (p->native || p->native_samples) {
		uint64_t partial = tb_profile_native_partial(p);

		fprintf(out, "  native: %llu samples with native frames, %llu native frames, %u native functions; "
			"%llu merged, %llu unmerged (%.2f%%), %llu truncated; %llu shown partial (a library's "
			"table not ready: its callers by frame pointer)\n",
			(unsigned long long)p->native_samples, (unsigned long long)p->native_frames,
			kinds[TB_CODE_NATIVE], (unsigned long long)p->merged, (unsigned long long)p->unmerged,
			p->native_samples ? 100.0 * (double)p->unmerged / (double)p->native_samples : 0.0,
			(unsigned long long)p->native_truncated, (unsigned long long)partial);
	}
}

void tb_few_samples_warning(const struct tb_profile *p, FILE *f)
{
	uint64_t n = p->python_samples;

	if (n >= TB_FEW_SAMPLES)
		return;
	if (!n)
		fprintf(f, "tachyon-bpf: warning: no samples with Python frames: the targets ran no Python code on a "
			"CPU while sampled (idle, waiting, or ended at once); --mode wall also samples off-CPU time, "
			"a longer -d gives them time\n");
	else
		fprintf(f, "tachyon-bpf: warning: only %llu samples with Python frames: too few for the shares to "
			"mean much (each is within +-%.0f%%); capture longer (-d) or at a higher rate (-r)\n",
			(unsigned long long)n, 100 * 1.96 * sqrt(0.25 / (double)n));
}

void tb_write_summary(const struct tb_profile *p, FILE *out, unsigned top)
{
	struct tb_functab t = { 0 };
	uint64_t shown = tb_profile_no_python_shown(p);

	tb_functab_count(&t, p);
	fprintf(out, "tachyon-bpf: %llu samples (%llu with Python frames, %llu without", (unsigned long long)p->samples,
		(unsigned long long)(p->python_samples - p->off_cpu_samples - shown), (unsigned long long)p->no_python);
	/* where the samples without Python frames are: the outputs agree with these counts */
	if (p->kernel || p->native || shown)
		fprintf(out, ": %llu shown under " TB_NO_PYTHON_FRAME " with their %s frames", (unsigned long long)shown,
			p->native && p->kernel ? "native and kernel" : p->native ? "native" : "kernel");
	else if (p->no_python)
		fprintf(out, ", not shown: no frames to show without --native or --kernel");
	fprintf(out, "), %llu lost, %llu truncated, %llu partial\n", (unsigned long long)p->lost,
		(unsigned long long)p->truncated, (unsigned long long)p->partial);
	if (p->off_cpu_records)
		fprintf(out, "  wall mode: %llu off-CPU stacks recorded at switch-outs, weighing %llu samples\n",
			(unsigned long long)p->off_cpu_records, (unsigned long long)p->off_cpu_samples);
	fprintf(out, "  %u processes, %u threads, %u functions, %llu of %llu frames unresolved (%.2f%%)\n",
		p->nprocs, p->nthreads, t.n, (unsigned long long)p->unresolved_frames,
		(unsigned long long)p->frames,
		p->frames ? 100.0 * (double)p->unresolved_frames / (double)p->frames : 0.0);
	if (p->sym.unresolved_codes || p->sym.freed)
		fprintf(out, "  code objects: %llu unreadable (<unreadable code 0x...>, <stale code 0x...>: mostly freed and "
			"their memory reused before they were read), %llu read after they were freed\n",
			(unsigned long long)p->sym.unresolved_codes, (unsigned long long)p->sym.freed);
	print_frame_kinds(p, out, &t);
	if (p->sym.lines_dropped)
		fprintf(out, "  %llu code objects show their first line only: their line tables were over the "
			"memory budget (%llu MiB, %llu MiB per process)\n", (unsigned long long)p->sym.lines_dropped,
			(unsigned long long)(p->sym.tables.total_budget >> 20),
			(unsigned long long)(p->sym.tables.process_budget >> 20));
	fprintf(out, "  capture %.2f s, agent CPU %.3f s (%.1f us per sample)\n", p->duration_s,
		p->agent_cpu_s, p->samples ? 1e6 * p->agent_cpu_s / (double)p->samples : 0.0);
	for (uint32_t i = 0; i < p->nprocs; i++) {
		fprintf(out, "  pid %d: Python ", (int)p->procs[i].pid);
		tb_termsafe_put(out, tb_str(&p->pstrs, p->procs[i].version));
		fprintf(out, ", %llu samples: ", (unsigned long long)p->procs[i].samples);
		tb_termsafe_put(out, tb_str(&p->pstrs, p->procs[i].cmdline));
		fputc('\n', out);
	}
	if (t.n && top) {
		tb_qsort(t.f, t.n, sizeof(*t.f), by_self);
		print_top(p, out, t.f, t.n, top, "top functions by self samples");
		tb_qsort(t.f, t.n, sizeof(*t.f), by_total);
		print_top(p, out, t.f, t.n, top, "top functions by total samples");
		print_opcodes(p, out, top < 5 ? top : 5);
	}
	tb_functab_free(&t);
}
