/* diff.c: differential profiles.  Nodes of the two call trees are matched
 * by their path of (process name; file and function name), line numbers
 * ignored, so moved code still matches; kernel frames by their symbol,
 * native ones by (module file name, symbol); threads by (process name, thread
 * name, ordinal).  Self time is compared per unit of sampled time (the
 * baseline scaled so both captures cover the same total samples x
 * interval, each side at its own rate), and a change counts only if a
 * test on the sample counts says it is unlikely to be chance (|z| >= 1.96). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/mem.h"
#include "output/diff.h"
#include "output/funcname.h"
#include "lib/jsonw.h"
#include "output/tree_json.h"

struct tvals {
	uint64_t tkey;
	uint64_t value, self;
};

struct bentry {          /* baseline weight of one path */
	uint64_t key;
	uint64_t value, self;
	struct tvals *tv;
	uint32_t ntv, captv;
	int matched;
};

struct diffctx {
	const struct tb_profile *base, *cur;
	struct tb_tree bt, ct;
	uint64_t *bkey, *ckey;           /* path hash per node */
	uint64_t *ckey_sorted;           /* for "does the current tree have it" */
	uint64_t *btkey, *ctkey;         /* thread key per thread index */
	struct bentry *e;
	uint32_t ne, cape;
	struct tb_hmap e_index;          /* key -> e */
	double scale;                    /* baseline -> current time units */
	double e0, e1;                   /* exposures (expected samples) */
	const struct tb_diff_opts *o;
};

static uint64_t node_key(const struct tb_tree *t, uint32_t idx, uint64_t parent)
{
	const struct tb_tnode *x = &t->n[idx];
	const struct tb_profile *p = t->prof;
	struct tb_hasher h;

	tb_hash_init(&h);
	tb_hash_word(&h, parent);
	tb_hash_word(&h, x->kind);
	switch (x->kind) {
	case TB_N_PROCESS:
		tb_hash_str(&h, tb_str(&p->pstrs, p->procs[x->key].comm));
		break;
	case TB_N_FRAME: {
		const struct tb_func *fn = &t->funcs.f[x->key];

		if (fn->kind != TB_CODE_PYTHON) { /* not the module's path: it differs between hosts */
			tb_hash_word(&h, 0x6b696e64u + fn->kind);
			if (fn->kind == TB_CODE_NATIVE)
				tb_hash_str(&h, tb_module_name(fn->kind, tb_str(&p->strs, fn->filename)));
		} else {
			tb_hash_str(&h, tb_str(&p->strs, fn->filename));
		}
		tb_hash_str(&h, tb_str(&p->strs, fn->qualname));
		break;
	}
	default:
		break;
	}
	return tb_hash_end(&h);
}

static void keys(const struct tb_tree *t, uint64_t *out)
{
	out[0] = node_key(t, 0, 0);
	for (uint32_t i = 1; i < t->nn; i++) /* parents precede children */
		out[i] = node_key(t, i, out[t->n[i].parent]);
}

struct tid_order {
	uint64_t pid_tid;            /* pid << 32 | tid */
	uint32_t thread;
};

static int cmp_tid(const void *a, const void *b)
{
	const struct tid_order *x = a, *y = b;

	if (x->pid_tid != y->pid_tid)
		return x->pid_tid < y->pid_tid ? -1 : 1;
	return (x->thread > y->thread) - (x->thread < y->thread);
}

struct tgroup {                  /* threads of one (process name, thread name) */
	const char *comm;
	uint32_t name;               /* strtab id */
	uint64_t seen;               /* threads counted so far */
	uint32_t last_pid, last_tid; /* the last of them, and its ordinal */
	uint64_t last_ordinal;
};

struct tgroup_key {
	const struct tgroup *g;
	const char *comm;
	uint32_t name;
};

static int same_group(const void *ctx, uint32_t i)
{
	const struct tgroup_key *k = ctx;

	return k->g[i].name == k->name && !strcmp(k->g[i].comm, k->comm);
}

/* (process name, thread name, ordinal among equal pairs, by (pid, tid)):
 * threads sorted by (pid, tid) once, a running count per pair. */
static void thread_keys(const struct tb_profile *p, uint64_t *out)
{
	struct tid_order *order = tb_calloc(p->nthreads, sizeof(*order));
	struct tgroup *groups = tb_calloc(p->nthreads, sizeof(*groups));
	struct tb_hmap index = { 0 };
	uint32_t ngroups = 0;

	for (uint32_t i = 0; i < p->nthreads; i++)
		order[i] = (struct tid_order){ (uint64_t)p->threads[i].pid << 32 | p->threads[i].tid, i };
	tb_qsort(order, p->nthreads, sizeof(*order), cmp_tid);
	for (uint32_t k = 0; k < p->nthreads; k++) {
		const struct tb_tinfo *t = &p->threads[order[k].thread];
		int pi = tb_profile_find_process(p, t->pid);
		const char *comm = pi >= 0 ? tb_str(&p->pstrs, p->procs[pi].comm) : "";
		uint64_t ordinal = 0;
		struct tb_hasher h;

		if (pi >= 0) { /* threads of unknown processes are never counted */
			struct tb_hasher gh;
			uint32_t g;
			struct tgroup *e;

			tb_hash_init(&gh);
			tb_hash_str(&gh, comm);
			tb_hash_word(&gh, t->name);
			g = tb_hmap_intern(&index, tb_hash_end(&gh), ngroups, same_group,
					   &(const struct tgroup_key){ groups, comm, t->name });
			if (g == ngroups)
				groups[ngroups++] = (struct tgroup){ .comm = comm, .name = t->name };
			e = &groups[g];
			/* equal (pid, tid) twice: neither counts the other */
			if (e->seen && e->last_pid == t->pid && e->last_tid == t->tid)
				ordinal = e->last_ordinal;
			else
				ordinal = e->seen;
			e->seen++;
			e->last_pid = t->pid;
			e->last_tid = t->tid;
			e->last_ordinal = ordinal;
		}
		tb_hash_init(&h);
		tb_hash_str(&h, comm);
		tb_hash_str(&h, tb_str(&p->strs, t->name));
		tb_hash_word(&h, ordinal);
		out[order[k].thread] = tb_hash_end(&h);
	}
	tb_hmap_free(&index);
	free(groups);
	free(order);
}

/* The baseline entry of a path key (an entry's key is its first field). */
static struct bentry *entry(struct diffctx *d, uint64_t key, int create)
{
	uint32_t i;

	if (!create) {
		i = tb_hmap_find_key(&d->e_index, d->e, sizeof(*d->e), &key, sizeof(key));
		return i == TB_HMAP_NONE ? NULL : &d->e[i];
	}
	i = tb_hmap_intern_key(&d->e_index, d->e, sizeof(*d->e), &key, sizeof(key), d->ne);
	if (i == d->ne) {
		d->e = tb_grow(d->e, &d->cape, d->ne + 1, sizeof(*d->e), 256);
		d->e[d->ne++] = (struct bentry){ .key = key };
	}
	return &d->e[i];
}

static void add_tvals(struct bentry *b, uint64_t tkey, uint64_t value, uint64_t self)
{
	for (uint32_t i = 0; i < b->ntv; i++)
		if (b->tv[i].tkey == tkey) {
			b->tv[i].value += value;
			b->tv[i].self += self;
			return;
		}
	b->tv = tb_grow(b->tv, &b->captv, b->ntv + 1, sizeof(*b->tv), 4);
	b->tv[b->ntv++] = (struct tvals){ tkey, value, self };
}

static void index_baseline(struct diffctx *d)
{
	for (uint32_t i = 0; i < d->bt.nn; i++) {
		const struct tb_tnode *x = &d->bt.n[i];
		struct bentry *b = entry(d, d->bkey[i], 1);

		b->value += x->total;
		b->self += x->self;
		for (uint32_t k = 0, n = tb_tnode_nthreads(x); k < n; k++) {
			struct tb_tval v = tb_tnode_tval(&d->bt, x, k);

			add_tvals(b, d->btkey[v.thread], v.samples, v.self);
		}
	}
}

/* the test on counts that may be fractional (tb_diff_min_change's expected counts) */
static double z_of(double c0, double e0, double c1, double e1)
{
	double n = c0 + c1, p;

	if (n <= 0 || e0 <= 0 || e1 <= 0)
		return 0;
	p = e1 / (e0 + e1);
	return (c1 - n * p) / sqrt(n * p * (1 - p));
}

double tb_diff_z(uint64_t c0, double e0, uint64_t c1, double e1)
{
	return z_of((double)c0, e0, (double)c1, e1);
}

/* The smallest r in (0, hi] with |z| >= 1.96 for a frame of `share` of e0 whose self becomes
 * (1 + sign * r) times as large a share of e1 (|z| grows with r: bisection), or -1 if none. */
static double min_change(double e0, double e1, double share, int sign, double hi)
{
	double lo = 0;

	if (fabs(z_of(share * e0, e0, share * (1 + sign * hi) * e1, e1)) < 1.96)
		return -1;
	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2;

		if (fabs(z_of(share * e0, e0, share * (1 + sign * mid) * e1, e1)) >= 1.96)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

int tb_diff_min_change(double e0, double e1, double share, double *drop, double *rise)
{
	*drop = e0 > 0 && e1 > 0 ? min_change(e0, e1, share, -1, 1) : -1;
	*rise = e0 > 0 && e1 > 0 ? min_change(e0, e1, share, 1, 1e6) : -1;
	return *drop < 0 || *drop > TB_DIFF_FEW_CHANGE || *rise < 0 || *rise > TB_DIFF_FEW_CHANGE;
}

static double ms(uint64_t samples, unsigned hz)
{
	return (double)samples * 1000.0 / (double)(hz ? hz : 1);
}

static void node_extra(FILE *f, const struct tb_tree *t, uint32_t idx, void *ctx)
{
	struct diffctx *d = ctx;
	const struct tb_tnode *x = &t->n[idx];
	const struct bentry *b = entry(d, d->ckey[idx], 0);
	uint64_t bself = b ? b->self : 0, bvalue = b ? b->value : 0;
	double cur_ms = ms(x->self, d->cur->hz), base_ms = ms(bself, d->base->hz) * d->scale;
	double z = tb_diff_z(bself, d->e0, x->self, d->e1), pct = 0;
	int significant = fabs(z) >= 1.96, level = 0;
	const char *cls;
	static const double steps[] = { 0.15, 0.30, 0.50, 1.00 };

	if (!b) {
		cls = "new";
	} else if (base_ms <= 0 && cur_ms <= 0) {
		cls = "neutral";
	} else {
		pct = base_ms > 0 ? (cur_ms - base_ms) / base_ms : 1e9;
		if (fabs(pct) < d->o->band)
			cls = "neutral";
		else if (!significant)
			cls = "noise";
		else
			cls = pct > 0 ? "regression" : "improvement";
		for (int s = 0; s < 4; s++)
			if (fabs(pct) >= (s ? steps[s] : d->o->band))
				level = s + 1;
	}
	fprintf(f, ",\"base\":{\"value\":%llu,\"self\":%llu},\"cur_ms\":%.3f,\"base_ms\":%.3f,"
		"\"diff_ms\":%.3f,\"diff_pct\":", (unsigned long long)bvalue, (unsigned long long)bself,
		cur_ms, base_ms, cur_ms - base_ms);
	if (b && base_ms > 0)
		fprintf(f, "%.2f", 100.0 * pct);
	else
		fputs("null", f);
	fprintf(f, ",\"z\":%.3f,\"significant\":%s,\"class\":\"%s\",\"level\":%d,\"thread_base\":{",
		z, significant ? "true" : "false", cls, strcmp(cls, "neutral") && strcmp(cls, "noise") ? level : 0);
	for (uint32_t k = 0, first = 1, n = tb_tnode_nthreads(x); b && k < n; k++) {
		uint32_t th = tb_tnode_tval(t, x, k).thread;
		uint64_t tk = d->ctkey[th];

		for (uint32_t m = 0; m < b->ntv; m++)
			if (b->tv[m].tkey == tk) {
				fprintf(f, "%s\"%u\":[%llu,%llu]", first ? "" : ",",
					d->cur->threads[th].tid, (unsigned long long)b->tv[m].value,
					(unsigned long long)b->tv[m].self);
				first = 0;
			}
	}
	fputc('}', f);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The baseline tree, each node saying whether the current one has it. */
static void elided_extra(FILE *f, const struct tb_tree *t, uint32_t idx, void *ctx)
{
	struct diffctx *d = ctx;
	int matched = bsearch(&d->bkey[idx], d->ckey_sorted, d->ct.nn, sizeof(uint64_t), cmp_u64) != NULL;

	(void)t;
	fprintf(f, ",\"elided\":%s,\"base_ms\":%.3f", matched ? "false" : "true",
		ms(d->bt.n[idx].self, d->base->hz) * d->scale);
}

static int setup(struct diffctx *d, const struct tb_profile *base, const struct tb_profile *cur,
		 const struct tb_diff_opts *o)
{
	memset(d, 0, sizeof(*d));
	d->base = base;
	d->cur = cur;
	d->o = o;
	tb_tree_build(&d->bt, base, 0);
	tb_tree_build(&d->ct, cur, 0);
	tb_tree_prune(&d->ct, o->min_fraction);
	tb_tree_prune(&d->bt, o->min_fraction);
	d->bkey = calloc(d->bt.nn, sizeof(uint64_t));
	d->ckey = calloc(d->ct.nn, sizeof(uint64_t));
	d->btkey = calloc(base->nthreads + 1, sizeof(uint64_t));
	d->ctkey = calloc(cur->nthreads + 1, sizeof(uint64_t));
	if (!d->bkey || !d->ckey || !d->btkey || !d->ctkey)
		return -1;
	keys(&d->bt, d->bkey);
	keys(&d->ct, d->ckey);
	d->ckey_sorted = malloc(d->ct.nn * sizeof(uint64_t));
	if (!d->ckey_sorted)
		return -1;
	memcpy(d->ckey_sorted, d->ckey, d->ct.nn * sizeof(uint64_t));
	tb_qsort(d->ckey_sorted, d->ct.nn, sizeof(uint64_t), cmp_u64);
	thread_keys(base, d->btkey);
	thread_keys(cur, d->ctkey);
	index_baseline(d);
	/* equal total sampled time (samples x interval), as Tachyon does: robust to
	 * different rates, durations and load; an empty side cannot be scaled */
	{
		double t0 = (double)base->python_samples / (base->hz ? base->hz : 1);
		double t1 = (double)cur->python_samples / (cur->hz ? cur->hz : 1);

		d->scale = t0 > 0 && t1 > 0 ? t1 / t0 : 1.0;
	}
	d->e0 = (double)(base->python_samples ? base->python_samples : 1);
	d->e1 = (double)(cur->python_samples ? cur->python_samples : 1);
	return 0;
}

static void teardown(struct diffctx *d)
{
	for (uint32_t i = 0; i < d->ne; i++)
		free(d->e[i].tv);
	free(d->e);
	tb_hmap_free(&d->e_index);
	free(d->bkey);
	free(d->ckey);
	free(d->ckey_sorted);
	free(d->btkey);
	free(d->ctkey);
	tb_tree_free(&d->bt);
	tb_tree_free(&d->ct);
}

int tb_write_diff_json(const struct tb_profile *base, const struct tb_profile *cur,
		       const struct tb_diff_opts *o, FILE *f)
{
	struct diffctx d;
	struct tb_json_hooks cur_hooks = { node_extra, &d }, base_hooks = { elided_extra, &d };
	double drop, rise;
	int few;

	if (setup(&d, base, cur, o)) {
		teardown(&d);
		return -1;
	}
	fputs("{\"format\":\"tachyon-bpf-diff\",\"version\":1,", f);
	tb_json_meta(f, &d.ct);
	fputs(",\"baseline\":{", f);
	tb_json_meta(f, &d.bt);
	fputc(',', f);
	tb_json_threads(f, base);
	fprintf(f, "},\"diff\":{\"scale\":%.6f,\"band\":%.4f,\"steps\":[%.2f,0.30,0.50,1.00],"
		"\"test\":\"two-proportion test on self samples (share of each capture's samples), |z| >= 1.96\",",
		d.scale, o->band, o->band);
	few = tb_diff_min_change((double)base->python_samples, (double)cur->python_samples, TB_DIFF_FEW_SHARE, &drop, &rise);
	fprintf(f, "\"min_change\":{\"share\":%.2f,\"drop\":", TB_DIFF_FEW_SHARE);
	fprintf(f, drop < 0 ? "null" : "%.4f", drop);
	fputs(",\"rise\":", f);
	fprintf(f, rise < 0 ? "null" : "%.4f", rise);
	fprintf(f, "},\"too_few_samples\":%s},", few ? "true" : "false");
	tb_json_threads(f, cur);
	fputs(",\"tree\":", f);
	tb_json_node(f, &d.ct, 0, &cur_hooks);
	fputs(",\"elided\":", f);
	tb_json_node(f, &d.bt, 0, &base_hooks);
	fputs("}\n", f);
	teardown(&d);
	return ferror(f) ? -1 : 0;
}

struct dline {
	char *text;
	uint64_t base, cur;
};

struct dlines {
	struct dline *l;
	uint32_t n, cap;
};

/* Root first, without pids, tids and line numbers: what both captures share. */
static void stack_key(const struct tb_profile *p, const struct tb_stack *s, char **out)
{
	const struct tb_tinfo *t = &p->threads[s->thread];
	int pi = tb_profile_find_process(p, t->pid);
	const struct tb_sframe *f = tb_stack_frames(p, s);
	size_t len = 0;
	FILE *m = open_memstream(out, &len);

	if (!m)
		abort();
	fprintf(m, "%s;%s", pi >= 0 ? tb_str(&p->pstrs, p->procs[pi].comm) : "?", tb_str(&p->strs, t->name));
	if (s->kind & TB_SK_TRUNCATED)
		fputs(";<truncated>", m);
	if (s->kind & TB_SK_PARTIAL)
		fputs(";<partial stack>", m);
	for (int i = s->depth - 1; i >= 0; i--) {
		const struct tb_code *c = &p->sym.codes[f[i].code];
		const char *name = tb_str(&p->strs, c->qualname);

		if (c->kind == TB_CODE_KERNEL) /* as .folded; kernel frames match by symbol */
			fprintf(m, ";%s_[k]", name);
		else if (c->kind == TB_CODE_TASK) /* as .folded: "<task NAME>" */
			fprintf(m, ";%s", name);
		else if (c->kind == TB_CODE_NATIVE) { /* by (module file name, symbol), as .folded */
			const char *module = tb_module_name(c->kind, tb_str(&p->strs, c->filename));

			if (tb_name_has_module(name, module))
				fprintf(m, ";%s", name);
			else
				fprintf(m, ";%s (%s)", name, module);
		}
		else
			fprintf(m, ";%s (%s)", name, tb_str(&p->strs, c->filename));
	}
	fclose(m);
	/* one line, one frame per ';': names come from the targets */
	for (char *q = *out; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			*q = '?';
}

static void add_lines(struct dlines *d, const struct tb_profile *p, int is_cur)
{
	for (uint32_t i = 0; i < p->nstacks; i++) {
		if (!p->stacks[i].count)
			continue;
		d->l = tb_grow(d->l, &d->cap, d->n + 1, sizeof(*d->l), 256);
		stack_key(p, &p->stacks[i], &d->l[d->n].text);
		d->l[d->n].base = is_cur ? 0 : p->stacks[i].count;
		d->l[d->n].cur = is_cur ? p->stacks[i].count : 0;
		d->n++;
	}
}

static int cmp_dline(const void *a, const void *b)
{
	return strcmp(((const struct dline *)a)->text, ((const struct dline *)b)->text);
}

int tb_write_diff_folded(const struct tb_profile *base, const struct tb_profile *cur, FILE *f)
{
	struct dlines d = { 0 };

	add_lines(&d, base, 0);
	add_lines(&d, cur, 1);
	tb_qsort(d.l, d.n, sizeof(*d.l), cmp_dline);
	for (uint32_t i = 0; i < d.n; i++) {
		uint64_t b = d.l[i].base, c = d.l[i].cur;

		while (i + 1 < d.n && !strcmp(d.l[i].text, d.l[i + 1].text)) {
			free(d.l[i].text);
			i++;
			b += d.l[i].base;
			c += d.l[i].cur;
		}
		fprintf(f, "%s %llu %llu\n", d.l[i].text, (unsigned long long)b, (unsigned long long)c);
		free(d.l[i].text);
	}
	free(d.l);
	return ferror(f) ? -1 : 0;
}
