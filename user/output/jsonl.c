/* jsonl.c: the streaming JSON Lines writer (`-o x.jsonl`,
 * docs/jsonl-format.md): one JSON object per line, every string, frame and
 * thread defined on an earlier line than its first use, so a reader can
 * process the file line by line.  Stacks are merged by (thread, frames,
 * leaf opcode) and written in a deterministic (sorted) order. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "lib/mem.h"
#include "lib/jsonw.h"
#include "lib/hashmap.h"
#include "cpython/opcodes.h"
#include "output/format.h"
#include "output/tree_json.h"

#define NONE UINT32_MAX
#define MAX_MINOR 32

struct jframe {
	uint32_t qualname, filename;  /* strtab ids */
	int32_t first_line, line;     /* line -1: unknown */
	uint32_t kind;                /* enum tb_code_kind */
	uint32_t out;                 /* id in the file, NONE until written */
	uint64_t self, total, stamp;
};
#define JFRAME_KEY offsetof(struct jframe, out)   /* the key: names and lines */

struct seq {                      /* one stack: frame indices root first */
	uint32_t *idx, len, thread, opcode;  /* opcode: index in names, NONE */
	uint16_t kind;
	uint64_t count;
};

struct ctx {
	const struct tb_profile *p;
	FILE *f;
	struct jframe *fr;
	uint32_t nfr, capfr;
	struct tb_hmap fr_index;      /* (qualname, filename, first_line, line, kind) -> fr */
	uint32_t *str_out;            /* strtab id -> file id + 1 */
	char **ops;                   /* opcode names */
	uint32_t *op_out;             /* opcode name -> file id + 1 */
	uint32_t nops, capops;
	uint16_t op_idx[MAX_MINOR][256]; /* (minor, opcode) -> name index + 1 */
	uint32_t nstr, nframes;
};

static uint32_t frame_of(struct ctx *g, const struct tb_sframe *sf)
{
	const struct tb_profile *p = g->p;
	const struct tb_code *c = &p->sym.codes[sf->code];
	struct tb_location loc;
	struct jframe fr;
	uint32_t i;

	tb_sym_location(&p->sym, sf->code, sf->offset, &loc);
	fr = (struct jframe){ c->qualname, c->filename, c->firstlineno, loc.line < 0 ? -1 : loc.line,
			      c->kind, NONE, 0, 0, 0 };
	i = tb_hmap_intern_key(&g->fr_index, g->fr, sizeof(*g->fr), &fr, JFRAME_KEY, g->nfr);
	if (i == g->nfr) {
		g->fr = tb_grow(g->fr, &g->capfr, g->nfr + 1, sizeof(*g->fr), 64);
		g->fr[g->nfr++] = fr;
	}
	return i;
}

static uint32_t opcode_of(struct ctx *g, const struct tb_sframe *leaf)
{
	const struct tb_code *c = &g->p->sym.codes[leaf->code];
	char buf[32];
	const char *name;
	uint32_t k;

	if (!leaf->has_opcode || c->py_minor >= MAX_MINOR)
		return NONE;
	if (g->op_idx[c->py_minor][leaf->opcode])
		return g->op_idx[c->py_minor][leaf->opcode] - 1u;
	name = tb_opcode_name(c->py_minor, leaf->opcode, buf, sizeof(buf));
	for (k = 0; k < g->nops && strcmp(g->ops[k], name); k++)
		;
	if (k == g->nops) {
		uint32_t cap = g->capops;

		g->ops = tb_grow(g->ops, &g->capops, k + 1, sizeof(char *), 64);
		g->op_out = tb_grow(g->op_out, &cap, k + 1, sizeof(uint32_t), 64);
		g->op_out[k] = 0;
		if (!(g->ops[k] = strdup(name)))
			abort();
		g->nops++;
	}
	g->op_idx[c->py_minor][leaf->opcode] = (uint16_t)(k + 1);
	return k;
}

static void make_seq(struct ctx *g, const struct tb_stack *s, struct seq *q)
{
	const struct tb_sframe *f = tb_stack_frames(g->p, s);

	q->idx = malloc(((size_t)s->depth + 1) * sizeof(uint32_t));
	if (!q->idx)
		abort();
	q->len = s->depth;
	for (uint16_t i = 0; i < s->depth; i++)
		q->idx[s->depth - 1 - i] = frame_of(g, &f[i]);
	q->thread = s->thread;
	q->kind = s->kind;
	q->opcode = opcode_of(g, &f[tb_stack_leaf(g->p, s)]);
	q->count = s->count;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->opcode != y->opcode)
		return x->opcode < y->opcode ? -1 : 1;
	for (uint32_t i = 0; i < x->len && i < y->len; i++)
		if (x->idx[i] != y->idx[i])
			return x->idx[i] < y->idx[i] ? -1 : 1;
	return (x->len > y->len) - (x->len < y->len);
}

/* File id of a strtab string, written on first use. */
static uint32_t put_str(struct ctx *g, uint32_t sid)
{
	if (sid >= g->p->strs.n)
		sid = 0;
	if (!g->str_out[sid]) {
		fprintf(g->f, "{\"type\":\"str\",\"id\":%u,\"s\":", g->nstr);
		tb_json_str(g->f, tb_str(&g->p->strs, sid));
		fputs("}\n", g->f);
		g->str_out[sid] = ++g->nstr;
	}
	return g->str_out[sid] - 1;
}

static uint32_t put_opcode(struct ctx *g, uint32_t k)
{
	if (!g->op_out[k]) {
		fprintf(g->f, "{\"type\":\"str\",\"id\":%u,\"s\":", g->nstr);
		tb_json_str(g->f, g->ops[k]);
		fputs("}\n", g->f);
		g->op_out[k] = ++g->nstr;
	}
	return g->op_out[k] - 1;
}

static uint32_t put_frame(struct ctx *g, uint32_t i)
{
	struct jframe *j = &g->fr[i];

	if (j->out == NONE) {
		uint32_t name = put_str(g, j->qualname), file = put_str(g, j->filename);

		j->out = g->nframes++;
		fprintf(g->f, "{\"type\":\"frame\",\"id\":%u,\"name\":%u,\"file\":%u,\"line\":", j->out,
			name, file);
		if (j->line >= 0)
			fprintf(g->f, "%d", j->line);
		else
			fputs("null", g->f);
		fprintf(g->f, ",\"first_line\":%d", j->first_line);
		if (j->kind != TB_CODE_PYTHON)
			fprintf(g->f, ",\"kind\":\"%s\"", tb_code_kind_name(j->kind));
		fputs("}\n", g->f);
	}
	return j->out;
}

static void put_meta(struct ctx *g)
{
	static const char *const modes[] = { "cpu", "wall", "gil", "exception" };
	const struct tb_profile *p = g->p;
	struct utsname u;

	if (uname(&u))
		u.nodename[0] = u.release[0] = '\0';
	fprintf(g->f, "{\"type\":\"meta\",\"format\":\"tachyon-bpf-jsonl\",\"version\":1,"
		"\"rate_hz\":%u,\"duration_s\":%.3f,\"mode\":\"%s\",\"start_unix\":%lld,\"host\":",
		p->hz, p->duration_s, modes[p->mode & 3], (long long)p->start_unix);
	tb_json_str(g->f, u.nodename);
	fputs(",\"kernel\":", g->f);
	tb_json_str(g->f, u.release);
	fputc(',', g->f);
	tb_json_frame_kinds(g->f, p);
	fprintf(g->f, "\"samples\":%llu,\"python_samples\":%llu,\"no_python_samples\":%llu,"
		"\"lost\":%llu,\"truncated\":%llu,\"partial\":%llu,\"filtered_samples\":%llu,"
		"\"off_cpu_samples\":%llu,\"max_depth\":%u,\"gc_frames\":%s,\"processes\":%u,"
		"\"threads\":%u}\n",
		(unsigned long long)p->samples, (unsigned long long)p->python_samples,
		(unsigned long long)p->no_python, (unsigned long long)p->lost,
		(unsigned long long)p->truncated, (unsigned long long)p->partial,
		(unsigned long long)p->filtered, (unsigned long long)p->off_cpu_samples, p->max_depth,
		p->no_gc ? "false" : "true", p->nprocs, p->nthreads);
}

static void put_processes_threads(struct ctx *g)
{
	const struct tb_profile *p = g->p;

	for (uint32_t i = 0; i < p->nprocs; i++) {
		const struct tb_pinfo *pi = &p->procs[i];

		fprintf(g->f, "{\"type\":\"process\",\"pid\":%d,\"ns_pid\":%u,\"comm\":",
			(int)pi->pid, pi->ns_pid);
		tb_json_str(g->f, tb_str(&p->pstrs, pi->comm));
		fputs(",\"cmdline\":", g->f);
		tb_json_str(g->f, tb_str(&p->pstrs, pi->cmdline));
		fputs(",\"python\":", g->f);
		tb_json_str(g->f, tb_str(&p->pstrs, pi->version));
		fprintf(g->f, ",\"samples\":%llu}\n", (unsigned long long)pi->samples);
	}
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct tb_tinfo *t = &p->threads[i];
		uint32_t name = put_str(g, t->name);

		fprintf(g->f, "{\"type\":\"thread\",\"tid\":%u,\"pid\":%u,\"ns_tid\":%u,\"name\":%u,"
			"\"samples\":%llu,\"python_samples\":%llu,\"status\":{\"on_cpu\":%llu,"
			"\"off_cpu\":%llu,\"gil_held\":%llu,\"gil_wait\":%llu,\"gc\":%llu,"
			"\"exception\":%llu}}\n",
			t->tid, t->pid, t->ns_tid, name, (unsigned long long)t->samples,
			(unsigned long long)t->python_samples, (unsigned long long)t->on_cpu,
			(unsigned long long)t->off_cpu, (unsigned long long)t->gil_held,
			(unsigned long long)t->gil_wait, (unsigned long long)t->gc,
			(unsigned long long)t->exception);
	}
}

static void put_stack(struct ctx *g, uint32_t id, const struct seq *q)
{
	const struct tb_tinfo *t = &g->p->threads[q->thread];
	uint32_t op = q->opcode != NONE ? put_opcode(g, q->opcode) : NONE;

	for (uint32_t k = 0; k < q->len; k++)
		put_frame(g, q->idx[k]);
	fprintf(g->f, "{\"type\":\"stack\",\"id\":%u,\"thread\":%u,\"pid\":%u,\"frames\":[", id,
		t->tid, t->pid);
	for (uint32_t k = 0; k < q->len; k++)
		fprintf(g->f, "%s%u", k ? "," : "", g->fr[q->idx[k]].out);
	fprintf(g->f, "],\"count\":%llu", (unsigned long long)q->count);
	if (op != NONE)
		fprintf(g->f, ",\"opcode\":%u", op);
	if (q->kind & TB_SK_TRUNCATED)
		fputs(",\"truncated\":true", g->f);
	if (q->kind & TB_SK_PARTIAL)
		fputs(",\"partial\":true", g->f);
	if (q->kind & TB_SK_NATIVE_PARTIAL)
		fputs(",\"native_partial\":true", g->f);
	fputs("}\n", g->f);
	/* self / total of each frame, recursion counted once per stack */
	for (uint32_t k = 0; k < q->len; k++) {
		struct jframe *j = &g->fr[q->idx[k]];

		if (j->stamp != (uint64_t)id + 1) {
			j->stamp = (uint64_t)id + 1;
			j->total += q->count;
		}
	}
	if (q->len)
		g->fr[q->idx[q->len - 1]].self += q->count;
}

int tb_write_jsonl(const struct tb_profile *p, FILE *f)
{
	struct ctx *g = calloc(1, sizeof(*g));
	struct seq *q = calloc((size_t)p->nstacks + 1, sizeof(*q));
	uint32_t n = 0, nout = 0, *by_out;
	uint64_t samples = 0;

	if (!g || !q)
		abort();
	g->p = p;
	g->f = f;
	g->str_out = calloc((size_t)p->strs.n + 1, sizeof(uint32_t));
	if (!g->str_out)
		abort();
	for (uint32_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].count && p->stacks[i].depth) /* wall: a stack may have no weight yet */
			make_seq(g, &p->stacks[i], &q[n++]);
	tb_qsort(q, n, sizeof(*q), cmp_seq);
	for (uint32_t i = 0; i + 1 < n; i++)
		if (cmp_seq(&q[i], &q[i + 1]) == 0) {
			q[i + 1].count += q[i].count;
			q[i].count = 0;
		}

	put_meta(g);
	put_processes_threads(g);
	for (uint32_t i = 0; i < n; i++) {
		if (!q[i].count)
			continue;
		put_stack(g, nout++, &q[i]);
		samples += q[i].count;
	}
	by_out = malloc(((size_t)g->nframes + 1) * sizeof(uint32_t));
	if (!by_out)
		abort();
	for (uint32_t i = 0; i < g->nfr; i++)
		if (g->fr[i].out != NONE)
			by_out[g->fr[i].out] = i;
	for (uint32_t k = 0; k < g->nframes; k++)
		fprintf(f, "{\"type\":\"agg\",\"frame\":%u,\"self\":%llu,\"total\":%llu}\n", k,
			(unsigned long long)g->fr[by_out[k]].self,
			(unsigned long long)g->fr[by_out[k]].total);
	fprintf(f, "{\"type\":\"end\",\"stacks\":%u,\"samples\":%llu,\"frames\":%u,\"strings\":%u}\n",
		nout, (unsigned long long)samples, g->nframes, g->nstr);

	for (uint32_t i = 0; i < n; i++)
		free(q[i].idx);
	for (uint32_t k = 0; k < g->nops; k++)
		free(g->ops[k]);
	free(by_out);
	free(q);
	free(g->ops);
	free(g->op_out);
	free(g->fr);
	free(g->str_out);
	tb_hmap_free(&g->fr_index);
	free(g);
	return ferror(f) ? -1 : 0;
}
