/* speedscope.c: the speedscope writer (`-o x.speedscope.json`,
 * https://www.speedscope.app/file-format-schema.json): shared frames keyed
 * by (function, file, line, kind), one "sampled" profile per thread whose
 * samples are root-first stacks of frame indices weighted in seconds of CPU.
 * With a timeline (model/timeline.h) a thread's samples are in time order:
 * one entry per run of the same stack over its time buckets, weighted with
 * its samples (within a bucket, stacks in their order); without one (older
 * captures), one entry per distinct stack.  A native or kernel frame's file
 * is its module, without a line. */
#include <stdlib.h>
#include <string.h>
#include "lib/hashmap.h"
#include "lib/mem.h"
#include "lib/jsonw.h"
#include "output/format.h"

#define MARK_TRUNCATED UINT32_MAX       /* qualname of the marker frames */
#define MARK_PARTIAL (UINT32_MAX - 1)

struct sframe {          /* the whole of it is the key */
	uint32_t qualname, filename;
	int32_t line;
	uint32_t kind;       /* enum tb_code_kind */
};

struct frames {
	struct sframe *f;
	uint32_t n, cap;
	struct tb_hmap index;   /* (qualname, filename, line) -> frame */
};

struct seq {            /* one stack of a thread: frame indices, root first */
	uint32_t *idx;
	uint32_t len;
	uint64_t count;
	int merged;         /* folded into the next one (same frames) */
};

static uint32_t frame_index(struct frames *t, uint32_t q, uint32_t f, int32_t line, uint32_t kind)
{
	const struct sframe key = { q, f, line, kind };
	uint32_t i = tb_hmap_intern_key(&t->index, t->f, sizeof(*t->f), &key, sizeof(key), t->n);

	if (i == t->n) {
		t->f = tb_grow(t->f, &t->cap, t->n + 1, sizeof(*t->f), 256);
		t->f[t->n++] = key;
	}
	return i;
}

/* The stack as root-first frame indices (markers, then callers to callee). */
static void stack_seq(const struct tb_profile *p, struct frames *fr, const struct tb_stack *s,
		      struct seq *out)
{
	const struct tb_sframe *f = tb_stack_frames(p, s);
	uint32_t n = 0;

	out->idx = tb_calloc((size_t)s->depth + 2, sizeof(uint32_t));
	out->count = s->count;
	out->merged = 0;
	if (s->kind & TB_SK_TRUNCATED)
		out->idx[n++] = frame_index(fr, MARK_TRUNCATED, 0, 0, 0);
	if (s->kind & TB_SK_PARTIAL)
		out->idx[n++] = frame_index(fr, MARK_PARTIAL, 0, 0, 0);
	for (int i = s->depth - 1; i >= 0; i--) {
		const struct tb_code *c = &p->sym.codes[f[i].code];
		int32_t line = c->firstlineno;

		if (p->by_line) {
			struct tb_location loc;

			tb_sym_location(&p->sym, f[i].code, f[i].offset, &loc);
			if (loc.line >= 0)
				line = loc.line;
		}
		out->idx[n++] = frame_index(fr, c->qualname, c->filename, line, c->kind);
	}
	out->len = n;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;

	for (uint32_t i = 0; i < x->len && i < y->len; i++)
		if (x->idx[i] != y->idx[i])
			return x->idx[i] < y->idx[i] ? -1 : 1;
	return (x->len > y->len) - (x->len < y->len);
}

static double weight(const struct tb_profile *p, uint64_t count)
{
	return p->hz ? (double)count / (double)p->hz : (double)count;
}

/* One entry of a thread's timed samples: its stack's seq, in a bucket. */
struct timed {
	uint32_t thread, bucket, seq;
	uint64_t count;
};

static int cmp_timed(const void *a, const void *b)
{
	const struct timed *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The thread's samples in time order (tm: its entries, sorted); runs of
 * the same frames merged. */
static void write_timed(FILE *f, const struct tb_profile *p, const char *name, const struct seq *q,
			const struct timed *tm, uint32_t n)
{
	uint64_t total = 0, run;
	int first = 1;

	for (uint32_t i = 0; i < n; i++)
		total += tm[i].count;
	fputs("{\"type\":\"sampled\",\"name\":", f);
	tb_json_str(f, name);
	fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%.9g,\"samples\":[",
		p->hz ? "seconds" : "none", weight(p, total));
	for (uint32_t i = 0; i < n; i++) {
		const struct seq *x = &q[tm[i].seq];

		if (i && !cmp_seq(x, &q[tm[i - 1].seq]))
			continue;
		fputs(first ? "[" : ",[", f);
		first = 0;
		for (uint32_t k = 0; k < x->len; k++)
			fprintf(f, "%s%u", k ? "," : "", x->idx[k]);
		fputc(']', f);
	}
	fputs("],\"weights\":[", f);
	first = 1;
	for (uint32_t i = 0; i < n;) {
		run = tm[i].count;
		for (i++; i < n && !cmp_seq(&q[tm[i].seq], &q[tm[i - 1].seq]); i++)
			run += tm[i].count;
		fprintf(f, "%s%.9g", first ? "" : ",", weight(p, run));
		first = 0;
	}
	fputs("]}", f);
}

/* The timeline's cells as entries sorted by (thread, bucket, seq), or NULL
 * if they do not add up to the stacks' counts (then: no time order). */
static struct timed *timed_entries(const struct tb_profile *p, const uint32_t *seq_of, uint32_t *n)
{
	const struct tb_tseries *s = &p->tl.stacks;
	struct timed *tm;
	uint64_t *sum;
	int ok = 1;

	if (!p->tl.on)
		return NULL;
	tm = tb_calloc(s->n, sizeof(*tm));
	sum = tb_calloc((size_t)p->nstacks + 1, sizeof(*sum));
	*n = 0;
	for (uint32_t i = 0; i < s->n && ok; i++) {
		const struct tb_tcell *c = &s->c[i];

		ok = c->series < p->nstacks;
		if (!ok)
			break;
		sum[c->series] += c->count;
		tm[(*n)++] = (struct timed){ p->stacks[c->series].thread, c->bucket, seq_of[c->series], c->count };
	}
	for (uint32_t i = 0; i < p->nstacks && ok; i++)
		ok = sum[i] == p->stacks[i].count;
	free(sum);
	if (!ok) {
		free(tm);
		return NULL;
	}
	tb_qsort(tm, *n, sizeof(*tm), cmp_timed);
	return tm;
}

static void write_profile(FILE *f, const struct tb_profile *p, uint32_t thread, struct seq *q,
			  uint32_t n, const struct timed *tm, uint32_t ntm)
{
	const struct tb_tinfo *t = &p->threads[thread];
	const char *tname = tb_str(&p->strs, t->name);
	size_t len = strlen(tname) + 64;
	char *name = tb_calloc(len, 1);
	uint64_t total = 0;
	int first = 1;

	snprintf(name, len, "%s (tid %u, pid %u)", tname, t->tid, t->pid);
	if (tm) {
		write_timed(f, p, name, q, tm, ntm);
		free(name);
		return;
	}
	tb_qsort(q, n, sizeof(*q), cmp_seq);
	for (uint32_t i = 0; i < n; i++)
		total += q[i].count;
	for (uint32_t i = 0; i < n; i++) {
		if (i + 1 < n && cmp_seq(&q[i], &q[i + 1]) == 0) {
			q[i + 1].count += q[i].count;
			q[i].merged = 1;
		}
	}
	fputs("{\"type\":\"sampled\",\"name\":", f);
	tb_json_str(f, name);
	fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%.9g,\"samples\":[",
		p->hz ? "seconds" : "none", weight(p, total));
	for (uint32_t i = 0; i < n; i++) {
		if (q[i].merged)
			continue;
		fputs(first ? "[" : ",[", f);
		first = 0;
		for (uint32_t k = 0; k < q[i].len; k++)
			fprintf(f, "%s%u", k ? "," : "", q[i].idx[k]);
		fputc(']', f);
	}
	fputs("],\"weights\":[", f);
	first = 1;
	for (uint32_t i = 0; i < n; i++) {
		if (q[i].merged)
			continue;
		fprintf(f, "%s%.9g", first ? "" : ",", weight(p, q[i].count));
		first = 0;
	}
	fputs("]}", f);
	free(name);
}

static void write_frames(FILE *f, const struct tb_profile *p, const struct frames *fr)
{
	fputs("\"shared\":{\"frames\":[", f);
	for (uint32_t i = 0; i < fr->n; i++) {
		const struct sframe *s = &fr->f[i];

		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		if (s->qualname == MARK_TRUNCATED || s->qualname == MARK_PARTIAL) {
			fputs(s->qualname == MARK_TRUNCATED ? "\"<truncated>\"}" : "\"<partial stack>\"}", f);
			continue;
		}
		tb_json_str(f, tb_str(&p->strs, s->qualname));
		fputs(",\"file\":", f);
		tb_json_str(f, tb_str(&p->strs, s->filename));
		if (s->kind == TB_CODE_PYTHON)
			fprintf(f, ",\"line\":%d}", s->line);
		else
			fputc('}', f);
	}
	fputs("]}", f);
}

static void write_name(FILE *f, const struct tb_profile *p)
{
	char buf[400];

	if (p->nprocs == 1)
		snprintf(buf, sizeof(buf), "tachyon-bpf: %s (pid %d)", tb_str(&p->pstrs, p->procs[0].cmdline),
			 (int)p->procs[0].pid);
	else
		snprintf(buf, sizeof(buf), "tachyon-bpf: %u Python processes", p->nprocs);
	tb_json_str(f, buf);
}

int tb_write_speedscope(const struct tb_profile *p, FILE *f)
{
	struct frames fr = { 0 };
	uint32_t *start = tb_calloc((size_t)p->nthreads + 1, sizeof(uint32_t));
	struct seq *q = tb_calloc(p->nstacks, sizeof(*q));
	uint32_t *seq_of = tb_calloc((size_t)p->nstacks + 1, sizeof(uint32_t)), nprof = 0, ntm = 0, at = 0;
	struct timed *tm;

	/* stacks bucketed by thread: start[t] .. start[t + 1] */
	for (uint32_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].count) /* wall mode: an off-CPU stack may have no weight yet */
			start[p->stacks[i].thread + 1]++;
	for (uint32_t t = 0; t < p->nthreads; t++)
		start[t + 1] += start[t];
	{
		uint32_t *fill = tb_calloc((size_t)p->nthreads + 1, sizeof(uint32_t));

		memcpy(fill, start, ((size_t)p->nthreads + 1) * sizeof(uint32_t));
		for (uint32_t i = 0; i < p->nstacks; i++)
			if (p->stacks[i].count) {
				seq_of[i] = fill[p->stacks[i].thread]++;
				stack_seq(p, &fr, &p->stacks[i], &q[seq_of[i]]);
				seq_of[i] -= start[p->stacks[i].thread]; /* within its thread's */
			}
		free(fill);
	}
	tm = timed_entries(p, seq_of, &ntm);
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"version\":\"0.0.1\",\"exporter\":\"tachyon-bpf\",\"name\":", f);
	write_name(f, p);
	fputs(",\"activeProfileIndex\":0,", f);
	write_frames(f, p, &fr);
	fputs(",\"profiles\":[", f);
	for (uint32_t t = 0; t < p->nthreads; t++) {
		uint32_t from = at;

		while (tm && at < ntm && tm[at].thread == t)
			at++;
		if (start[t + 1] == start[t])
			continue; /* no Python stack: nothing to show */
		if (nprof++)
			fputc(',', f);
		write_profile(f, p, t, &q[start[t]], start[t + 1] - start[t], tm ? &tm[from] : NULL, at - from);
	}
	fputs("]}\n", f);
	for (uint32_t i = 0; i < start[p->nthreads]; i++)
		free(q[i].idx);
	free(q);
	free(tm);
	free(seq_of);
	free(start);
	free(fr.f);
	tb_hmap_free(&fr.index);
	return ferror(f) ? -1 : 0;
}
