/* gecko.c: the Firefox Profiler writer (`-o x.gecko.json`): the processed
 * profile format (meta.preprocessedProfileVersion 57, like CPython's
 * Tachyon; the profiler upgrades it on load), one thread per OS thread with
 * its own func/frame/stack tables and a shared string array.
 *
 * Sample times are real when the profile has a timeline (model/timeline.h):
 * the c samples of a stack in a time bucket are spread evenly over that
 * bucket, each thread's samples in time order.  Without one (captures made
 * before timelines) they are synthesized: the capture keeps unique stacks
 * with counts, not per-sample times.  A thread's N samples are laid out 1/hz apart from
 * the capture start, and each stack's count is spread evenly over them: its
 * j-th of c samples sits at position (j + phase) / c of the thread's run,
 * phase in (0, 1) a fixed low-discrepancy sequence over the thread's stacks
 * (so stacks seen once do not all land in the middle), ties broken by
 * stack order: the order is deterministic.  Interval
 * markers come from that order: runs of samples whose leaf (the innermost
 * frame that is not native or kernel) is a synthetic
 * frame give "Off CPU" (<off-CPU>, <waiting for GIL>), "Waiting for GIL",
 * "GC" (<GC>), the rest "On CPU"; "Has GIL" / "Has Exception" cover the
 * on-CPU runs in gil / exception mode (every kept sample had that status);
 * a "Thread status" marker over the thread's run carries its counters.
 * They show proportions, not when things happened.  The leaf instruction's
 * opcode is the leaf frame's subcategory of the Python category, so the
 * category breakdown lists opcodes.  Native and kernel frames are in the
 * "Native" and "Kernel" categories (listed only when the profile has such
 * frames), their functions' resources are their modules.  A profile of more than
 * MAX_SYNTH_SAMPLES samples in all is refused (EFBIG): every one is listed
 * (and held in memory), and the profiler could not load such a file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "lib/mem.h"
#include "lib/jsonw.h"
#include "lib/hashmap.h"
#include "cpython/opcodes.h"
#include "output/format.h"

#define NONE UINT32_MAX
#define NO_LINE INT32_MIN
#define MAX_MINOR 32
#define MAX_SYNTH_SAMPLES (1ull << 25)

enum { CAT_OTHER, CAT_PYTHON, CAT_GC, CAT_GIL, CAT_OFFCPU, CAT_EXCEPTION, CAT_KERNEL, CAT_NATIVE,
       NCATS };
static const char *const cat_names[] = { "Other", "Python", "GC", "GIL", "Off-CPU", "Exception",
					 "Kernel", "Native" };
static const char *const cat_colors[] = { "grey", "yellow", "orange", "green", "transparent",
					  "lightblue", "red", "blue" };
_Static_assert(sizeof(cat_names) / sizeof(cat_names[0]) == NCATS, "a name per category");
_Static_assert(sizeof(cat_colors) / sizeof(cat_colors[0]) == NCATS, "a colour per category");
/* categories of every profile; the others only of one with native or kernel frames */
#define BASE_CATS CAT_KERNEL

/* What a sample's leaf says about the thread. */
enum { L_RUN, L_OFF, L_GILWAIT, L_GC };

/* func kinds (part of the func key) */
enum { K_PYTHON, K_SYNTHETIC, K_TRUNCATED, K_PARTIAL, K_NATIVE, K_KERNEL };

struct lit {
	const char *s;
	uint32_t idx;
};

struct strs {                  /* the shared string array */
	const struct tb_profile *p;
	uint32_t *of_sid;          /* strtab id -> index + 1 */
	struct { uint32_t sid; const char *lit; } *list;
	uint32_t n, cap;
	struct lit lits[16];
	unsigned nlits;
};

struct opsub {                 /* opcode names as Python subcategories */
	char **names;
	uint32_t n, cap;
	uint16_t idx[MAX_MINOR][256];  /* subcategory, 0: none */
};

/* Table entries are found by their key: the whole entry or its first fields,
 * with no padding inside (lib/hashmap.h compares the bytes). */
struct gfunc_key { uint32_t qualname, filename; int32_t firstlineno; uint32_t kind; };
struct gfunc { struct gfunc_key key; uint32_t name, file; int32_t line; uint8_t js; int32_t res; };
struct gframe { uint32_t func; int32_t line; uint16_t cat, subcat; };
struct gstack { uint32_t frame, prefix; };
struct gres { uint32_t filename, name; };   /* key: filename (strtab id); string index */

struct tables {                /* one thread's tables, reused */
	struct gfunc *fn;
	struct gframe *fr;
	struct gstack *st;
	struct gres *res;
	uint32_t nfn, nfr, nst, nres;
	uint32_t capfn, capfr, capst, capres;
	struct tb_hmap fn_index, fr_index, st_index, res_index;
};

struct marker { uint32_t name; uint64_t from, to; uint8_t cat, status; uint64_t samples; };

struct ctx {
	const struct tb_profile *p;
	unsigned ncats;            /* categories listed */
	struct strs s;
	struct opsub ops;
	struct tables t;
	double step;               /* ms between samples */
	/* real times: each stack's timeline cells, sorted, cells[cell_at[s] .. cell_at[s + 1]) */
	int timed;
	struct tb_tcell *cells;
	uint32_t *cell_at;
	double origin_ms;          /* bucket 0's start after meta.startTime */
	double width_ms;
	double *times;             /* the thread's sample times, ms after meta.startTime */
	uint64_t captimes;
	struct marker *mk;
	uint32_t nmk, capmk;
};

static uint32_t str_push(struct strs *s, uint32_t sid, const char *lit)
{
	s->list = tb_grow(s->list, &s->cap, s->n + 1, sizeof(*s->list), 256);
	s->list[s->n].sid = sid;
	s->list[s->n].lit = lit;
	return s->n++;
}

static uint32_t str_sid(struct strs *s, uint32_t sid)
{
	if (sid >= s->p->strs.n)
		sid = 0;
	if (!s->of_sid[sid])
		s->of_sid[sid] = str_push(s, sid, NULL) + 1;
	return s->of_sid[sid] - 1;
}

/* A string literal of this file (compared by address). */
static uint32_t str_lit(struct strs *s, const char *lit)
{
	for (unsigned i = 0; i < s->nlits; i++)
		if (s->lits[i].s == lit)
			return s->lits[i].idx;
	if (s->nlits == sizeof(s->lits) / sizeof(s->lits[0]))
		abort();
	s->lits[s->nlits].s = lit;
	s->lits[s->nlits].idx = str_push(s, 0, lit);
	return s->lits[s->nlits++].idx;
}

/* <GC>, <off-CPU>, and asyncio task frames (--async-aware: category Other) */
static int is_synthetic(const struct tb_profile *p, const struct tb_code *c)
{
	return c->kind == TB_CODE_TASK ||
	       (c->pid == 0 && strcmp(tb_str(&p->strs, c->filename), "<synthetic>") == 0);
}

static int leaf_class(const struct tb_profile *p, const struct tb_stack *s)
{
	const struct tb_code *c = &p->sym.codes[tb_stack_frames(p, s)[tb_stack_leaf(p, s)].code];
	const char *name;

	if (!is_synthetic(p, c))
		return L_RUN;
	name = tb_str(&p->strs, c->qualname);
	if (!strcmp(name, "<off-CPU>"))
		return L_OFF;
	if (!strcmp(name, "<waiting for GIL>"))
		return L_GILWAIT;
	if (!strcmp(name, "<GC>"))
		return L_GC;
	return L_RUN;
}

static int synthetic_cat(const char *name)
{
	if (!strcmp(name, "<off-CPU>"))
		return CAT_OFFCPU;
	if (!strcmp(name, "<waiting for GIL>"))
		return CAT_GIL;
	if (!strcmp(name, "<GC>"))
		return CAT_GC;
	return CAT_OTHER;
}

/* Subcategories of Python: every leaf opcode name of the capture. */
static void collect_opcodes(const struct tb_profile *p, struct opsub *o)
{
	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct tb_stack *s = &p->stacks[i];
		const struct tb_sframe *f = tb_stack_frames(p, s);
		unsigned minor;
		const char *name;
		char buf[32];
		uint32_t k;

		if (!s->count || !s->depth)
			continue;
		f += tb_stack_leaf(p, s);
		if (!f[0].has_opcode)
			continue;
		minor = p->sym.codes[f[0].code].py_minor;
		if (minor >= MAX_MINOR || o->idx[minor][f[0].opcode] ||
		    is_synthetic(p, &p->sym.codes[f[0].code]))
			continue;
		name = tb_opcode_name(minor, f[0].opcode, buf, sizeof(buf));
		for (k = 0; k < o->n && strcmp(o->names[k], name); k++)
			;
		if (k == o->n) {
			if (o->n >= 65000)
				continue;
			o->names = tb_grow(o->names, &o->cap, o->n + 1, sizeof(char *), 256);
			o->names[o->n] = strdup(name);
			if (!o->names[o->n++])
				abort();
		}
		o->idx[minor][f[0].opcode] = (uint16_t)(k + 1);
	}
}

static uint32_t add_resource(struct ctx *g, uint32_t filename)
{
	struct tables *t = &g->t;
	uint32_t r = tb_hmap_intern_key(&t->res_index, t->res, sizeof(*t->res), &filename,
					sizeof(filename), t->nres);

	if (r == t->nres) {
		t->res = tb_grow(t->res, &t->capres, t->nres + 1, sizeof(*t->res), 256);
		t->res[t->nres++] = (struct gres){ filename, str_sid(&g->s, filename) };
	}
	return r;
}

static uint32_t add_func(struct ctx *g, const struct tb_code *c, int kind)
{
	struct tables *t = &g->t;
	const struct gfunc_key key = { c ? c->qualname : 0, c ? c->filename : 0, c ? c->firstlineno : 0,
				       (uint32_t)kind };
	uint32_t i = tb_hmap_intern_key(&t->fn_index, t->fn, sizeof(*t->fn), &key, sizeof(key), t->nfn);
	struct gfunc *fn;

	if (i != t->nfn)
		return i;
	t->fn = tb_grow(t->fn, &t->capfn, t->nfn + 1, sizeof(*t->fn), 256);
	fn = &t->fn[t->nfn++];
	fn->key = key;
	fn->js = kind == K_PYTHON;
	fn->file = NONE;
	fn->line = NO_LINE;
	fn->res = -1;
	if (kind == K_TRUNCATED || kind == K_PARTIAL) {
		fn->name = str_lit(&g->s, kind == K_TRUNCATED ? "<truncated>" : "<partial stack>");
		return i;
	}
	fn->name = str_sid(&g->s, c->qualname);
	if (kind == K_PYTHON) {
		fn->file = str_sid(&g->s, c->filename);
		fn->line = c->firstlineno;
		fn->res = (int32_t)add_resource(g, c->filename);
	} else if (kind == K_NATIVE || kind == K_KERNEL) {
		fn->res = (int32_t)add_resource(g, c->filename); /* its module */
	}
	return i;
}

static uint32_t add_frame(struct ctx *g, uint32_t func, int32_t line, int cat, unsigned subcat)
{
	struct tables *t = &g->t;
	const struct gframe key = { func, line, (uint16_t)cat, (uint16_t)subcat };
	uint32_t i = tb_hmap_intern_key(&t->fr_index, t->fr, sizeof(*t->fr), &key, sizeof(key), t->nfr);

	if (i == t->nfr) {
		t->fr = tb_grow(t->fr, &t->capfr, t->nfr + 1, sizeof(*t->fr), 256);
		t->fr[t->nfr++] = key;
	}
	return i;
}

static uint32_t add_stack(struct ctx *g, uint32_t prefix, uint32_t frame)
{
	struct tables *t = &g->t;
	const struct gstack key = { frame, prefix };
	uint32_t i = tb_hmap_intern_key(&t->st_index, t->st, sizeof(*t->st), &key, sizeof(key), t->nst);

	if (i == t->nst) {
		t->st = tb_grow(t->st, &t->capst, t->nst + 1, sizeof(*t->st), 256);
		t->st[t->nst++] = key;
	}
	return i;
}

/* The stack table index of a profile stack's leaf (root first: markers,
 * then callers to callee). */
static uint32_t intern_stack(struct ctx *g, const struct tb_stack *s)
{
	const struct tb_profile *p = g->p;
	const struct tb_sframe *f = tb_stack_frames(p, s);
	uint32_t prefix = NONE;
	int leaf = tb_stack_leaf(p, s);

	if (s->kind & TB_SK_TRUNCATED)
		prefix = add_stack(g, prefix, add_frame(g, add_func(g, NULL, K_TRUNCATED), NO_LINE,
							CAT_OTHER, 0));
	if (s->kind & TB_SK_PARTIAL)
		prefix = add_stack(g, prefix, add_frame(g, add_func(g, NULL, K_PARTIAL), NO_LINE,
							CAT_OTHER, 0));
	for (int i = s->depth - 1; i >= 0; i--) {
		const struct tb_code *c = &p->sym.codes[f[i].code];
		unsigned subcat = 0;
		struct tb_location loc;

		if (is_synthetic(p, c)) {
			prefix = add_stack(g, prefix, add_frame(g, add_func(g, c, K_SYNTHETIC), NO_LINE,
								synthetic_cat(tb_str(&p->strs, c->qualname)), 0));
			continue;
		}
		if (c->kind != TB_CODE_PYTHON) {
			int kernel = c->kind == TB_CODE_KERNEL;

			prefix = add_stack(g, prefix, add_frame(g, add_func(g, c, kernel ? K_KERNEL : K_NATIVE),
								NO_LINE, kernel ? CAT_KERNEL : CAT_NATIVE, 0));
			continue;
		}
		tb_sym_location(&p->sym, f[i].code, f[i].offset, &loc);
		if (i == leaf && f[i].has_opcode && c->py_minor < MAX_MINOR)
			subcat = g->ops.idx[c->py_minor][f[i].opcode];
		prefix = add_stack(g, prefix, add_frame(g, add_func(g, c, K_PYTHON),
							loc.line >= 0 ? loc.line : NO_LINE, CAT_PYTHON,
							subcat));
	}
	return prefix;
}

struct slot {                  /* one synthesized sample */
	double key;
	uint32_t local;            /* index in the thread's stack list */
};

static int cmp_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->local > y->local) - (x->local < y->local);
}

static void put_index(FILE *f, uint32_t v)
{
	if (v == NONE)
		fputs("null", f);
	else
		fprintf(f, "%u", v);
}

/* A column of n identical values: "v,v,...,v". */
static void put_repeat(FILE *f, const char *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		fputs(v, f);
	}
}

static void put_line(FILE *f, int32_t v)
{
	if (v == NO_LINE)
		fputs("null", f);
	else
		fprintf(f, "%d", v);
}

static void add_marker(struct ctx *g, const char *name, uint64_t from, uint64_t to, int cat,
		       int status)
{
	g->mk = tb_grow(g->mk, &g->capmk, g->nmk + 1, sizeof(*g->mk), 256);
	g->mk[g->nmk++] = (struct marker){ str_lit(&g->s, name), from, to, (uint8_t)cat,
					   (uint8_t)status, to - from };
}

/* Interval markers for the runs of samples whose class is in mask. */
static void runs(struct ctx *g, const uint8_t *cls, uint64_t n, unsigned mask, const char *name,
		 int cat)
{
	uint64_t from = 0;
	int in = 0;

	for (uint64_t k = 0; k <= n; k++) {
		int now = k < n && (mask >> cls[k] & 1);

		if (now && !in)
			from = k;
		else if (!now && in)
			add_marker(g, name, from, k, cat, 0);
		in = now;
	}
}

static void write_markers(FILE *f, struct ctx *g, const struct tb_tinfo *t)
{
	fputs(",\"markers\":{\"data\":[", f);
	for (uint32_t i = 0; i < g->nmk; i++) {
		const struct marker *m = &g->mk[i];

		if (i)
			fputc(',', f);
		if (m->status)
			fprintf(f, "{\"type\":\"TachyonStatus\",\"samples\":%llu,\"python_samples\":%llu,"
				"\"on_cpu\":%llu,\"off_cpu\":%llu,\"gil_held\":%llu,\"gil_wait\":%llu,"
				"\"gc\":%llu,\"exception\":%llu}",
				(unsigned long long)m->samples, (unsigned long long)t->python_samples,
				(unsigned long long)t->on_cpu, (unsigned long long)t->off_cpu,
				(unsigned long long)t->gil_held, (unsigned long long)t->gil_wait,
				(unsigned long long)t->gc, (unsigned long long)t->exception);
		else
			fprintf(f, "{\"type\":\"TachyonState\",\"samples\":%llu}",
				(unsigned long long)m->samples);
	}
	fputs("],\"name\":[", f);
	for (uint32_t i = 0; i < g->nmk; i++)
		fprintf(f, "%s%u", i ? "," : "", g->mk[i].name);
	fputs("],\"startTime\":[", f);
	for (uint32_t i = 0; i < g->nmk; i++)
		fprintf(f, "%s%.3f", i ? "," : "", g->times[g->mk[i].from]);
	fputs("],\"endTime\":[", f);
	for (uint32_t i = 0; i < g->nmk; i++) /* a run to the end: one interval past its last sample */
		fprintf(f, "%s%.3f", i ? "," : "", g->times[g->mk[i].to - 1] + g->step);
	fputs("],\"phase\":[", f);
	for (uint32_t i = 0; i < g->nmk; i++)
		fprintf(f, "%s1", i ? "," : "");
	fputs("],\"category\":[", f);
	for (uint32_t i = 0; i < g->nmk; i++)
		fprintf(f, "%s%u", i ? "," : "", g->mk[i].cat);
	fprintf(f, "],\"length\":%u}", g->nmk);
}

static void write_tables(FILE *f, const struct tables *t)
{
	fputs(",\"stackTable\":{\"frame\":[", f);
	for (uint32_t i = 0; i < t->nst; i++)
		fprintf(f, "%s%u", i ? "," : "", t->st[i].frame);
	fputs("],\"prefix\":[", f);
	for (uint32_t i = 0; i < t->nst; i++) {
		if (i)
			fputc(',', f);
		put_index(f, t->st[i].prefix);
	}
	fprintf(f, "],\"length\":%u}", t->nst);

	fputs(",\"frameTable\":{\"address\":[", f);
	for (uint32_t i = 0; i < t->nfr; i++)
		fputs(i ? ",-1" : "-1", f);
	fputs("],\"inlineDepth\":[", f);
	put_repeat(f, "0", t->nfr);
	fputs("],\"category\":[", f);
	for (uint32_t i = 0; i < t->nfr; i++)
		fprintf(f, "%s%u", i ? "," : "", t->fr[i].cat);
	fputs("],\"subcategory\":[", f);
	for (uint32_t i = 0; i < t->nfr; i++)
		fprintf(f, "%s%u", i ? "," : "", t->fr[i].subcat);
	fputs("],\"func\":[", f);
	for (uint32_t i = 0; i < t->nfr; i++)
		fprintf(f, "%s%u", i ? "," : "", t->fr[i].func);
	fputs("],\"nativeSymbol\":[", f);
	put_repeat(f, "null", t->nfr);
	fputs("],\"innerWindowID\":[", f);
	put_repeat(f, "0", t->nfr);
	fputs("],\"line\":[", f);
	for (uint32_t i = 0; i < t->nfr; i++) {
		if (i)
			fputc(',', f);
		put_line(f, t->fr[i].line);
	}
	fputs("],\"column\":[", f);
	put_repeat(f, "null", t->nfr);
	fprintf(f, "],\"length\":%u}", t->nfr);

	fputs(",\"funcTable\":{\"name\":[", f);
	for (uint32_t i = 0; i < t->nfn; i++)
		fprintf(f, "%s%u", i ? "," : "", t->fn[i].name);
	fputs("],\"isJS\":[", f);
	for (uint32_t i = 0; i < t->nfn; i++)
		fprintf(f, "%s%s", i ? "," : "", t->fn[i].js ? "true" : "false");
	fputs("],\"relevantForJS\":[", f);
	put_repeat(f, "false", t->nfn);
	fputs("],\"resource\":[", f);
	for (uint32_t i = 0; i < t->nfn; i++)
		fprintf(f, "%s%d", i ? "," : "", t->fn[i].res);
	fputs("],\"fileName\":[", f);
	for (uint32_t i = 0; i < t->nfn; i++) {
		if (i)
			fputc(',', f);
		put_index(f, t->fn[i].file);
	}
	fputs("],\"lineNumber\":[", f);
	for (uint32_t i = 0; i < t->nfn; i++) {
		if (i)
			fputc(',', f);
		put_line(f, t->fn[i].line);
	}
	fputs("],\"columnNumber\":[", f);
	put_repeat(f, "null", t->nfn);
	fprintf(f, "],\"length\":%u}", t->nfn);

	/* resources: one per source file (type 1, "library", as CPython's exporter) */
	fputs(",\"resourceTable\":{\"lib\":[", f);
	put_repeat(f, "null", t->nres);
	fputs("],\"name\":[", f);
	for (uint32_t i = 0; i < t->nres; i++)
		fprintf(f, "%s%u", i ? "," : "", t->res[i].name);
	fputs("],\"host\":[", f);
	put_repeat(f, "null", t->nres);
	fputs("],\"type\":[", f);
	put_repeat(f, "1", t->nres);
	fprintf(f, "],\"length\":%u}", t->nres);
	fputs(",\"nativeSymbols\":{\"libIndex\":[],\"address\":[],\"name\":[],\"functionSize\":[],"
	      "\"length\":0}", f);
}

static void reset_tables(struct tables *t)
{
	t->nfn = t->nfr = t->nst = t->nres = 0;
	tb_hmap_clear(&t->fn_index);
	tb_hmap_clear(&t->fr_index);
	tb_hmap_clear(&t->st_index);
	tb_hmap_clear(&t->res_index);
}

/* One thread: its stacks are list[0..n) (indices into p->stacks). */
static void write_thread(FILE *f, struct ctx *g, uint32_t ti, const uint32_t *list, uint32_t n)
{
	const struct tb_profile *p = g->p;
	const struct tb_tinfo *t = &p->threads[ti];
	int pi = tb_profile_find_process(p, t->pid);
	uint32_t *leaf = malloc(((size_t)n + 1) * sizeof(uint32_t));
	uint8_t *cls_of = malloc((size_t)n + 1), *cls;
	uint64_t total = 0, k = 0;
	unsigned seen = 0;
	struct slot *order;
	const char *tname = tb_str(&p->strs, t->name);
	char *label;
	size_t len = strlen(tname) + 32;

	if (!leaf || !cls_of || !(label = malloc(len)))
		abort();
	reset_tables(&g->t);
	g->nmk = 0;
	for (uint32_t i = 0; i < n; i++) {
		leaf[i] = intern_stack(g, &p->stacks[list[i]]);
		cls_of[i] = (uint8_t)leaf_class(p, &p->stacks[list[i]]);
		seen |= 1u << cls_of[i];
		total += p->stacks[list[i]].count;
	}
	order = malloc(((size_t)total + 1) * sizeof(*order));
	cls = malloc((size_t)total + 1);
	if (!order || !cls)
		abort();
	for (uint32_t i = 0; i < n && g->timed; i++) /* real: spread over each cell's bucket */
		for (uint32_t x = g->cell_at[list[i]]; x < g->cell_at[list[i] + 1]; x++) {
			const struct tb_tcell *c = &g->cells[x];

			for (uint64_t j = 0; j < c->count; j++)
				order[k++] = (struct slot){ g->origin_ms + g->width_ms * ((double)c->bucket +
					((double)j + 0.5) / (double)c->count), i };
		}
	for (uint32_t i = 0; i < n && !g->timed; i++) {
		uint64_t c = p->stacks[list[i]].count;
		double phase = 0.5 + (double)i * 0.6180339887498949; /* golden-ratio sequence */

		phase -= (double)(uint64_t)phase;
		for (uint64_t j = 0; j < c; j++)
			order[k++] = (struct slot){ ((double)j + phase) / (double)c, i };
	}
	tb_qsort(order, total, sizeof(*order), cmp_slot);
	g->times = tb_grow64(g->times, &g->captimes, total + 1, sizeof(*g->times), 1024);
	for (k = 0; k < total; k++) {
		cls[k] = cls_of[order[k].local];
		g->times[k] = g->timed ? order[k].key : (double)k * g->step;
	}

	if (p->mode == TB_MODE_WALL || (seen & (1u << L_OFF | 1u << L_GILWAIT))) {
		runs(g, cls, total, 1u << L_RUN | 1u << L_GC, "On CPU", CAT_PYTHON);
		runs(g, cls, total, 1u << L_OFF | 1u << L_GILWAIT, "Off CPU", CAT_OFFCPU);
	}
	if (seen & (1u << L_GILWAIT))
		runs(g, cls, total, 1u << L_GILWAIT, "Waiting for GIL", CAT_GIL);
	if (p->mode == TB_MODE_GIL)
		runs(g, cls, total, 1u << L_RUN | 1u << L_GC, "Has GIL", CAT_GIL);
	if (seen & (1u << L_GC))
		runs(g, cls, total, 1u << L_GC, "GC", CAT_GC);
	if (p->mode == TB_MODE_EXCEPTION)
		runs(g, cls, total, 1u << L_RUN | 1u << L_GC, "Has Exception", CAT_EXCEPTION);
	if (total)
		add_marker(g, "Thread status", 0, total, CAT_OTHER, 1);

	snprintf(label, len, "%s (tid %u)", tname, t->tid);
	fputs("{\"name\":", f);
	tb_json_str(f, label);
	fprintf(f, ",\"tid\":%u,\"pid\":\"%u\",\"isMainThread\":%s,\"processType\":\"default\","
		"\"processName\":", t->tid, t->pid, t->tid == t->pid ? "true" : "false");
	tb_json_str(f, pi >= 0 ? tb_str(&p->pstrs, p->procs[pi].comm) : "python");
	fputs(",\"processStartupTime\":0,\"processShutdownTime\":null,\"registerTime\":0,"
	      "\"unregisterTime\":null,\"pausedRanges\":[],\"showMarkersInTimeline\":true,"
	      "\"samples\":{\"stack\":[", f);
	for (k = 0; k < total; k++)
		fprintf(f, "%s%u", k ? "," : "", leaf[order[k].local]);
	fputs("],\"time\":[", f);
	for (k = 0; k < total; k++)
		fprintf(f, "%s%.3f", k ? "," : "", g->times[k]);
	fprintf(f, "],\"weight\":null,\"weightType\":\"samples\",\"length\":%llu}",
		(unsigned long long)total);
	write_markers(f, g, t);
	write_tables(f, &g->t);
	fputc('}', f);
	free(label);
	free(order);
	free(cls);
	free(cls_of);
	free(leaf);
}

static void write_meta(FILE *f, const struct ctx *g, double end_ms)
{
	const struct tb_profile *p = g->p;
	struct utsname u;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char oscpu[200];

	if (uname(&u))
		memset(&u, 0, sizeof(u));
	snprintf(oscpu, sizeof(oscpu), "%s %s %s", u.sysname, u.release, u.machine);
	fprintf(f, "\"meta\":{\"interval\":%.6f,\"startTime\":%lld,\"profilingStartTime\":0,"
		"\"profilingEndTime\":%.3f,\"processType\":0,\"product\":\"tachyon-bpf\","
		"\"importedFrom\":\"tachyon-bpf\",\"stackwalk\":0,\"debug\":false,\"version\":32,"
		"\"preprocessedProfileVersion\":57,\"symbolicated\":true,\"usesOnlyOneStackType\":true,"
		"\"sourceCodeIsNotOnSearchfox\":true,\"platform\":\"Linux\",\"toolkit\":\"\","
		"\"misc\":\"\",\"appBuildID\":\"\",\"CPUName\":\"\",\"physicalCPUs\":%ld,"
		"\"logicalCPUs\":%ld,\"abi\":",
		g->step, (long long)p->start_unix * 1000, end_ms, cpus > 0 ? cpus : 0,
		cpus > 0 ? cpus : 0);
	tb_json_str(f, u.machine);
	fputs(",\"oscpu\":", f);
	tb_json_str(f, oscpu);
	if (p->nprocs == 1) {
		fputs(",\"arguments\":", f);
		tb_json_str(f, tb_str(&p->pstrs, p->procs[0].cmdline));
	}
	fputs(",\"extensions\":{\"id\":[],\"name\":[],\"baseURL\":[],\"length\":0},\"categories\":[", f);
	for (unsigned c = 0; c < g->ncats; c++) {
		fprintf(f, "%s{\"name\":\"%s\",\"color\":\"%s\",\"subcategories\":[\"Other\"", c ? "," : "",
			cat_names[c], cat_colors[c]);
		if (c == CAT_PYTHON)
			for (uint32_t k = 0; k < g->ops.n; k++) {
				fputc(',', f);
				tb_json_str(f, g->ops.names[k]);
			}
		fputs("]}", f);
	}
	fprintf(f, "],\"markerSchema\":["
	      "{\"name\":\"TachyonState\",\"display\":[\"marker-chart\",\"marker-table\","
	      "\"timeline-overview\"],\"chartLabel\":\"{marker.name}\",\"tooltipLabel\":\"{marker.name}\","
	      "\"tableLabel\":\"{marker.name}: {marker.data.samples} samples\","
	      "\"description\":\"%s\","
	      "\"fields\":[{\"key\":\"samples\",\"label\":\"Samples\",\"format\":\"integer\"}]},"
	      "{\"name\":\"TachyonStatus\",\"display\":[\"marker-chart\",\"marker-table\"],"
	      "\"chartLabel\":\"{marker.name}\",\"tooltipLabel\":\"{marker.name}\","
	      "\"tableLabel\":\"on CPU {marker.data.on_cpu}, off CPU {marker.data.off_cpu}, GIL held "
	      "{marker.data.gil_held}, GIL wait {marker.data.gil_wait}, GC {marker.data.gc}, exception "
	      "{marker.data.exception}\",\"description\":\"The thread's status counters, in samples.\","
	      "\"fields\":[{\"key\":\"samples\",\"label\":\"Samples\",\"format\":\"integer\"},"
	      "{\"key\":\"python_samples\",\"label\":\"Python samples\",\"format\":\"integer\"},"
	      "{\"key\":\"on_cpu\",\"label\":\"On CPU\",\"format\":\"integer\"},"
	      "{\"key\":\"off_cpu\",\"label\":\"Off CPU\",\"format\":\"integer\"},"
	      "{\"key\":\"gil_held\",\"label\":\"GIL held\",\"format\":\"integer\"},"
	      "{\"key\":\"gil_wait\",\"label\":\"GIL wait\",\"format\":\"integer\"},"
	      "{\"key\":\"gc\",\"label\":\"GC\",\"format\":\"integer\"},"
	      "{\"key\":\"exception\",\"label\":\"Exception\",\"format\":\"integer\"}]}]}",
		g->timed ? "Thread state over a run of samples, at the times they were taken (within "
		"their time bucket)." : "Thread state over a run of samples. Sample order is synthesized "
		"from aggregated stacks: proportions are right, times are not.");
}

static void write_strings(FILE *f, const struct strs *s)
{
	fputs("\"shared\":{\"stringArray\":[", f);
	for (uint32_t i = 0; i < s->n; i++) {
		if (i)
			fputc(',', f);
		tb_json_str(f, s->list[i].lit ? s->list[i].lit : tb_str(&s->p->strs, s->list[i].sid));
	}
	fputs("]}", f);
}

/* Are there more samples to synthesize than we list? (counts come from files) */
/* Real sample times from the timeline, if its cells add up to every stack's
 * count (else the times are synthesized). */
static void real_times(struct ctx *g, double *end_ms)
{
	const struct tb_profile *p = g->p;
	const struct tb_tseries *s = &p->tl.stacks;
	uint64_t *sum;

	if (!p->tl.on || !p->tl.width_ns)
		return;
	g->cells = tb_calloc(s->n, sizeof(*g->cells));
	g->cell_at = tb_calloc((size_t)p->nstacks + 1, sizeof(*g->cell_at));
	sum = tb_calloc((size_t)p->nstacks + 1, sizeof(*sum));
	if (s->n)
		memcpy(g->cells, s->c, (size_t)s->n * sizeof(*g->cells));
	tb_qsort(g->cells, s->n, sizeof(*g->cells), tb_tcell_cmp);
	g->timed = 1;
	for (uint32_t i = 0; i < s->n && g->timed; i++) {
		if (g->cells[i].series >= p->nstacks) {
			g->timed = 0;
			break;
		}
		g->cell_at[g->cells[i].series + 1]++;
		sum[g->cells[i].series] += g->cells[i].count;
	}
	for (uint32_t i = 0; i < p->nstacks && g->timed; i++) {
		g->timed = sum[i] == p->stacks[i].count;
		g->cell_at[i + 1] += g->cell_at[i];
	}
	free(sum);
	g->width_ms = (double)p->tl.width_ns / 1e6;
	g->origin_ms = (double)p->tl.origin_unix_ns / 1e6 - (double)p->start_unix * 1000.0;
	if (g->timed && g->origin_ms + g->width_ms * p->tl.nbuckets > *end_ms)
		*end_ms = g->origin_ms + g->width_ms * p->tl.nbuckets;
}

static int too_many_samples(const struct tb_profile *p)
{
	uint64_t all = 0;

	for (uint32_t i = 0; i < p->nstacks; i++) {
		if (p->stacks[i].count > MAX_SYNTH_SAMPLES - all)
			return 1;
		all += p->stacks[i].count;
	}
	return 0;
}

int tb_write_gecko(const struct tb_profile *p, FILE *f)
{
	struct ctx *g;
	uint32_t *start, *list, *fill;
	uint64_t *per, most = 0;
	double end_ms;

	if (too_many_samples(p)) {
		errno = EFBIG;
		return -1;
	}
	g = calloc(1, sizeof(*g));
	start = calloc((size_t)p->nthreads + 1, sizeof(uint32_t));
	list = malloc(((size_t)p->nstacks + 1) * sizeof(uint32_t));
	fill = calloc((size_t)p->nthreads + 1, sizeof(uint32_t));
	per = calloc((size_t)p->nthreads + 1, sizeof(uint64_t));
	if (!g || !start || !list || !fill || !per)
		abort();
	g->p = p;
	g->s.p = p;
	g->s.of_sid = calloc((size_t)p->strs.n + 1, sizeof(uint32_t));
	if (!g->s.of_sid)
		abort();
	g->step = 1000.0 / (p->hz ? p->hz : 1000);
	g->ncats = BASE_CATS;
	for (uint32_t i = 0; i < p->sym.n; i++)
		if (p->sym.codes[i].kind != TB_CODE_PYTHON)
			g->ncats = NCATS;
	collect_opcodes(p, &g->ops);
	/* stacks with weight, bucketed by thread in stack order */
	for (uint32_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].count) {
			start[p->stacks[i].thread + 1]++;
			per[p->stacks[i].thread] += p->stacks[i].count;
		}
	for (uint32_t t = 0; t < p->nthreads; t++) {
		start[t + 1] += start[t];
		most = per[t] > most ? per[t] : most;
	}
	memcpy(fill, start, ((size_t)p->nthreads + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].count)
			list[fill[p->stacks[i].thread]++] = i;
	end_ms = p->duration_s * 1000.0;
	if ((double)most * g->step > end_ms)
		end_ms = (double)most * g->step;
	real_times(g, &end_ms);

	str_lit(&g->s, "(root)");  /* index 0, like other exporters */
	fputc('{', f);
	write_meta(f, g, end_ms);
	fputs(",\"libs\":[],\"pages\":[],\"threads\":[", f);
	for (uint32_t t = 0; t < p->nthreads; t++) {
		if (t)
			fputc(',', f);
		write_thread(f, g, t, &list[start[t]], start[t + 1] - start[t]);
	}
	fputs("],", f);
	write_strings(f, &g->s);
	fputs("}\n", f);

	for (uint32_t k = 0; k < g->ops.n; k++)
		free(g->ops.names[k]);
	free(g->ops.names);
	tb_hmap_free(&g->t.fn_index);
	tb_hmap_free(&g->t.fr_index);
	tb_hmap_free(&g->t.st_index);
	tb_hmap_free(&g->t.res_index);
	free(g->t.fn);
	free(g->t.fr);
	free(g->t.st);
	free(g->t.res);
	free(g->mk);
	free(g->times);
	free(g->cells);
	free(g->cell_at);
	free(g->s.of_sid);
	free(g->s.list);
	free(g);
	free(start);
	free(list);
	free(fill);
	free(per);
	return ferror(f) ? -1 : 0;
}
