/* tree_columns.c: the tree of the tree JSON's version 2 (docs/profile-json.md):
 * its strings, kinds, functions, locations and frames interned in one pass
 * over the written nodes (the unpruned ones, root first, depth first, in the
 * order version 1 writes them), kept for every output of the run; then, per
 * output, each column of the nodes written in a pass of its own, straight to
 * the file: 20 bytes a node and the tables are all it holds. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "lib/jsonw.h"
#include "lib/mem.h"
#include "lib/strtab.h"
#include "cpython/opcodes.h"
#include "output/tree_json.h"

#define NO_THREAD (-1)

/* A table of fixed-width rows of int32 (functions, locations, frames), each
 * row once: rows[width * i ...]. */
struct rows {
	int32_t *v;
	uint32_t n, cap, width;
	struct tb_hmap index;
};

/* A written node: what its columns need besides the tree node itself. */
struct written {
	uint32_t node;          /* the tree node */
	uint32_t parent;        /* its parent's written index */
	uint32_t frame;         /* its row of frames */
	int32_t thread;         /* its only thread, or NO_THREAD */
	uint8_t listed;         /* the sparse columns it is in (bit col - C_SPARSE) */
};

struct tb_columns {
	const struct tb_tree *t;
	FILE *f;
	uint32_t nw;            /* nodes written */
	struct written *w;      /* by written index */
	uint32_t *func_of;      /* tree function -> row of functions + 1 (0: not yet) */
	uint32_t *opname;       /* (minor, opcode, base?) -> string + 1 (0: not yet) */
	struct tb_strtab strs;
	const char *kinds[8 + TB_CODE_KINDS];
	uint32_t nkinds;
	struct rows funcs, locs, frames;
	uint32_t prev;          /* the sparse column's last node */
	int first;              /* nothing written yet in the current list */
	uint32_t on;            /* bytes in out: the numbers of a list, written a buffer at a time */
	char out[1 << 15];
};

static uint32_t row(struct rows *r, const int32_t *key)
{
	size_t len = r->width * sizeof(int32_t);
	uint32_t i = tb_hmap_intern_key(&r->index, r->v, len, key, len, r->n);

	if (i == r->n) {
		r->v = tb_grow(r->v, &r->cap, (r->n + 1) * r->width, sizeof(int32_t), 256);
		memcpy(r->v + (size_t)r->n * r->width, key, len);
		r->n++;
	}
	return i;
}

static void rows_free(struct rows *r)
{
	free(r->v);
	tb_hmap_free(&r->index);
}

static uint32_t kind(struct tb_columns *c, const char *name)
{
	uint32_t i = 0;

	while (i < c->nkinds && strcmp(c->kinds[i], name))
		i++;
	if (i == c->nkinds) /* a kind outside the table below: never, unless TB_CODE_KINDS grows */
		c->kinds[c->nkinds++] = name;
	return i;
}

/* An opcode's name (base: its base instruction's) as a string. */
static uint32_t opcode_string(struct tb_columns *c, unsigned minor, unsigned op, int base)
{
	uint32_t *slot = &c->opname[(minor & 255) << 9 | (op & 255) << 1 | !!base];
	char buf[32];

	if (!*slot) /* minor and op are bytes (py_minor, opcode) */
		*slot = tb_strtab_intern(&c->strs, tb_opcode_name(minor, base ? tb_opcode_base(minor, op) : op,
								   buf, sizeof(buf))) + 1;
	return *slot - 1;
}

/* The frame a node points at: its function, shown line and hottest location;
 * interns what it names (the opcodes too: every string before the nodes). */
static uint32_t frame_of(struct tb_columns *c, const struct tb_tnode *x)
{
	const struct tb_tree *t = c->t;
	const struct tb_lval *hot = NULL;
	int32_t fn[4] = { 0 }, fr[3] = { 0 }, loc[4] = { -1, -1, -1, -1 };
	char buf[96];
	uint32_t *cached = NULL;

	if (x->kind == TB_N_FRAME) {
		cached = &c->func_of[x->key];
		fr[1] = tb_json_lineno(t, x);
		hot = tb_json_hottest_line(t, x);
	}
	if (cached && *cached) {
		fr[0] = (int32_t)(*cached - 1);
	} else {
		fn[0] = (int32_t)kind(c, tb_json_kind(t, x));
		fn[1] = (int32_t)tb_strtab_intern(&c->strs, tb_json_name(t, x, buf, sizeof(buf)));
		if (x->kind == TB_N_FRAME) {
			const struct tb_func *f = &t->funcs.f[x->key];

			fn[2] = (int32_t)tb_strtab_intern(&c->strs, tb_str(&t->prof->strs, f->filename));
			fn[3] = f->firstlineno;
		} else if (x->kind == TB_N_PROCESS) {
			fn[3] = (int32_t)t->prof->procs[x->key].pid;
		}
		fr[0] = (int32_t)row(&c->funcs, fn);
		if (cached)
			*cached = (uint32_t)fr[0] + 1;
	}
	if (hot) {
		loc[0] = hot->loc.line;
		loc[1] = hot->loc.end_line;
		loc[2] = hot->loc.col;
		loc[3] = hot->loc.end_col;
	}
	fr[2] = (int32_t)row(&c->locs, loc);
	for (uint32_t i = 0; i < x->ov.n; i++) {
		opcode_string(c, x->py_minor, tb_tnode_opcodes(t, x)[i].opcode, 0);
		opcode_string(c, x->py_minor, tb_tnode_opcodes(t, x)[i].opcode, 1);
	}
	for (uint32_t i = 0; i < x->iv.n; i++)
		if (tb_tnode_instructions(t, x)[i].has_opcode) {
			opcode_string(c, x->py_minor, tb_tnode_instructions(t, x)[i].opcode, 0);
			opcode_string(c, x->py_minor, tb_tnode_instructions(t, x)[i].opcode, 1);
		}
	return row(&c->frames, fr);
}

/* The columns of "nodes", in order; from C_SPARSE on, only the nodes listed in them. */
enum column { C_PARENT, C_FRAME, C_VALUE, C_SELF, C_THREAD, C_THREAD_VALUES, C_LINES, C_OPCODES,
	      C_THREAD_OPCODES, C_INSTRUCTIONS, C_SPARSE = C_THREAD_VALUES };

static const char *const column_names[] = {
	"parent", "frame", "value", "self", "thread", "thread_values", "lines", "opcodes",
	"thread_opcodes", "instructions",
};

/* The node's only thread, when its values are that thread's: its index. */
static int64_t only_thread(const struct tb_tree *t, const struct tb_tnode *x)
{
	struct tb_tval v;

	if (tb_tnode_nthreads(x) != 1)
		return NO_THREAD;
	v = tb_tnode_tval(t, x, 0);
	return v.samples == x->total && v.self == x->self ? (int64_t)v.thread : NO_THREAD;
}

/* Lines other than the one a reader assumes: [[location's line, value, self]]. */
static int lines_listed(const struct tb_tree *t, const struct tb_tnode *x)
{
	const struct tb_lval *lv = tb_tnode_lines(t, x);

	return x->kind == TB_N_FRAME && (x->lv.n != 1 || lv[0].samples != x->total ||
					 lv[0].self != x->self);
}

/* Per-thread opcodes other than {its only thread: the summed ones}. */
static int thread_opcodes_listed(const struct tb_tree *t, const struct tb_tnode *x)
{
	const struct tb_oval *ov = tb_tnode_opcodes(t, x);
	int64_t k = only_thread(t, x);
	uint8_t op[256];
	uint64_t sum[256];
	unsigned n;

	if (!x->ov.n)
		return 0;
	if (k == NO_THREAD || (n = tb_json_opcode_sums(t, x, op, sum)) != x->ov.n)
		return 1;
	for (uint32_t i = 0; i < n; i++)
		if (ov[i].thread != (uint64_t)k || ov[i].opcode != op[i] || ov[i].samples != sum[i])
			return 1;
	return 0;
}

static uint32_t add(struct tb_columns *c, uint32_t node, uint32_t parent)
{
	const struct tb_tnode *x = &c->t->n[node];
	uint32_t w = c->nw++;

	c->w[w].node = node;
	c->w[w].parent = parent;
	c->w[w].frame = frame_of(c, x);
	c->w[w].thread = (int32_t)only_thread(c->t, x);
	c->w[w].listed = (uint8_t)((c->w[w].thread == NO_THREAD) << (C_THREAD_VALUES - C_SPARSE) |
				 lines_listed(c->t, x) << (C_LINES - C_SPARSE) |
				 !!x->ov.n << (C_OPCODES - C_SPARSE) |
				 thread_opcodes_listed(c->t, x) << (C_THREAD_OPCODES - C_SPARSE) |
				 !!x->iv.n << (C_INSTRUCTIONS - C_SPARSE));
	return w;
}

static uint32_t first_kept(const struct tb_tree *t, uint32_t n)
{
	while (n != TB_NO_NODE && t->n[n].pruned)
		n = t->n[n].next_sibling;
	return n;
}

/* The written nodes in version 1's order, without recursion: down to the
 * first kept child, else on to the next kept sibling of the nearest node
 * on the way back up that has one. */
static void walk(struct tb_columns *c)
{
	const struct tb_tree *t = c->t;
	uint32_t w = add(c, 0, 0), n;

	for (;;) {
		n = first_kept(t, t->n[c->w[w].node].first_child);
		if (n != TB_NO_NODE) {
			w = add(c, n, w);
			continue;
		}
		for (;;) {
			if (!w)
				return;
			n = first_kept(t, t->n[c->w[w].node].next_sibling);
			if (n != TB_NO_NODE) {
				w = add(c, n, c->w[w].parent);
				break;
			}
			w = c->w[w].parent;
		}
	}
}

/* Numbers and lists, without printf or a stdio call each (millions of them). */
static void out_flush(struct tb_columns *c)
{
	if (c->on)
		fwrite_unlocked(c->out, 1, c->on, c->f);
	c->on = 0;
}

static void item_u(struct tb_columns *c, uint64_t v)
{
	char b[24];
	int i = sizeof(b);

	if (c->on > sizeof(c->out) - 32)
		out_flush(c);
	if (!c->first)
		c->out[c->on++] = ',';
	c->first = 0;
	do
		b[--i] = (char)('0' + v % 10);
	while (v /= 10);
	memcpy(c->out + c->on, b + i, sizeof(b) - (size_t)i);
	c->on += (uint32_t)(sizeof(b) - (size_t)i);
}

static void item(struct tb_columns *c, int64_t v)
{
	if (v >= 0) {
		item_u(c, (uint64_t)v);
		return;
	}
	if (c->on > sizeof(c->out) - 32)
		out_flush(c);
	if (!c->first)
		c->out[c->on++] = ',';
	c->out[c->on++] = '-';
	c->first = 1; /* the digits follow the sign */
	item_u(c, (uint64_t)0 - (uint64_t)v);
}

static void list_end(struct tb_columns *c)
{
	out_flush(c);
	putc_unlocked(']', c->f);
}

static void list_start(struct tb_columns *c, const char *key)
{
	out_flush(c);
	fprintf(c->f, ",\"%s\":[", key);
	c->first = 1;
	c->prev = 0;
}

/* A sparse column's entry for written node w: its step, then its count. */
static void entry(struct tb_columns *c, uint32_t w, uint64_t count)
{
	item_u(c, w - c->prev);
	item_u(c, count);
	c->prev = w;
}

static void write_rows(struct tb_columns *c, const char *key, const struct rows *r)
{
	list_start(c, key);
	for (size_t i = 0; i < (size_t)r->n * r->width; i++)
		item(c, r->v[i]);
	list_end(c);
}

static void opcode_triple(struct tb_columns *c, unsigned minor, unsigned op, uint64_t samples)
{
	item_u(c, opcode_string(c, minor, op, 0));
	item_u(c, opcode_string(c, minor, op, 1));
	item_u(c, samples);
}

/* Written node w's part of a column. */
static void cell(struct tb_columns *c, enum column col, uint32_t w)
{
	const struct tb_tree *t = c->t;
	const struct tb_tnode *x = &t->n[c->w[w].node];
	const struct tb_lval *lv;
	const struct tb_oval *ov;
	const struct tb_ival *iv;
	uint8_t op[256];
	uint64_t sum[256];
	unsigned n;

	if (col >= C_SPARSE && !(c->w[w].listed >> (col - C_SPARSE) & 1))
		return; /* (without reading the node: most are in none) */
	switch (col) {
	case C_PARENT:
		item_u(c, w - c->w[w].parent);
		break;
	case C_FRAME:
		item_u(c, c->w[w].frame);
		break;
	case C_VALUE:
		item_u(c, x->total);
		break;
	case C_SELF:
		item_u(c, x->self);
		break;
	case C_THREAD:
		item(c, c->w[w].thread);
		break;
	case C_THREAD_VALUES:
		entry(c, w, tb_tnode_nthreads(x));
		for (uint32_t i = 0; i < tb_tnode_nthreads(x); i++) {
			struct tb_tval v = tb_tnode_tval(t, x, i);

			item_u(c, v.thread);
			item_u(c, v.samples);
			item_u(c, v.self);
		}
		break;
	case C_LINES:
		entry(c, w, x->lv.n);
		lv = tb_tnode_lines(t, x);
		for (uint32_t i = 0; i < x->lv.n; i++) {
			item(c, lv[i].loc.line);
			item_u(c, lv[i].samples);
			item_u(c, lv[i].self);
		}
		break;
	case C_OPCODES:
		n = tb_json_opcode_sums(t, x, op, sum);
		entry(c, w, n);
		for (unsigned i = 0; i < n; i++)
			opcode_triple(c, x->py_minor, op[i], sum[i]);
		break;
	case C_THREAD_OPCODES:
		ov = tb_tnode_opcodes(t, x);
		n = 0;
		for (uint32_t i = 0; i < x->ov.n; i++) { /* threads, in the order first seen */
			uint32_t j = 0;

			while (j < i && ov[j].thread != ov[i].thread)
				j++;
			n += j == i;
		}
		entry(c, w, n);
		for (uint32_t i = 0; i < x->ov.n; i++) {
			uint32_t j = 0, m = 0;

			while (j < i && ov[j].thread != ov[i].thread)
				j++;
			if (j < i)
				continue;
			for (j = i; j < x->ov.n; j++)
				m += ov[j].thread == ov[i].thread;
			item_u(c, ov[i].thread);
			item_u(c, m);
			for (j = i; j < x->ov.n; j++)
				if (ov[j].thread == ov[i].thread)
					opcode_triple(c, x->py_minor, ov[j].opcode, ov[j].samples);
		}
		break;
	case C_INSTRUCTIONS:
		entry(c, w, x->iv.n);
		iv = tb_tnode_instructions(t, x);
		for (uint32_t i = 0; i < x->iv.n; i++) {
			item(c, iv[i].offset);
			item(c, iv[i].has_opcode ? (int64_t)opcode_string(c, x->py_minor, iv[i].opcode, 0) : -1);
			item(c, iv[i].has_opcode ? (int64_t)opcode_string(c, x->py_minor, iv[i].opcode, 1) : -1);
			item(c, iv[i].loc.line);
			item(c, iv[i].loc.end_line);
			item(c, iv[i].loc.col);
			item(c, iv[i].loc.end_col);
			item_u(c, iv[i].samples);
		}
		break;
	}
}

static void write_tables(struct tb_columns *c)
{
	const struct tb_profile *p = c->t->prof;

	fputs(",\"strings\":[", c->f);
	for (uint32_t i = 0; i < c->strs.n; i++) {
		if (i)
			putc_unlocked(',', c->f);
		tb_json_str(c->f, c->strs.strs[i]);
	}
	fputs("],\"kinds\":[", c->f);
	for (uint32_t i = 0; i < c->nkinds; i++)
		fprintf(c->f, "%s\"%s\"", i ? "," : "", c->kinds[i]);
	putc_unlocked(']', c->f);
	write_rows(c, "functions", &c->funcs);
	write_rows(c, "locations", &c->locs);
	write_rows(c, "frames", &c->frames);
	fputs(",\"threads_order\":[", c->f);
	for (uint32_t i = 0; i < p->nthreads; i++)
		fprintf(c->f, "%s\"%u\"", i ? "," : "", p->threads[i].tid);
	putc_unlocked(']', c->f);
}

struct tb_columns *tb_columns_make(const struct tb_tree *t)
{
	static const char *const kinds[] = {
		"root", "process", "frame", "kernel", "native", "task", "truncated", "partial",
	};
	static const int32_t no_location[4] = { -1, -1, -1, -1 };
	struct tb_columns *c = tb_calloc(1, sizeof(*c));

	*c = (struct tb_columns){
		.t = t,
		.w = tb_calloc(t->nn, sizeof(struct written)),
		.func_of = tb_calloc(t->funcs.n, sizeof(uint32_t)),
		.opname = tb_calloc(256 * 256 * 2, sizeof(uint32_t)),
		.funcs.width = 4, .locs.width = 4, .frames.width = 3,
	};
	tb_strtab_init(&c->strs);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		c->kinds[c->nkinds++] = kinds[i];
	row(&c->locs, no_location);
	if (t->nn)
		walk(c);
	return c;
}

void tb_columns_write(FILE *f, struct tb_columns *c)
{
	c->f = f;
	write_tables(c);
	fprintf(f, ",\"nodes\":{\"count\":%u", c->nw);
	for (enum column col = C_PARENT; col <= C_INSTRUCTIONS; col++) {
		list_start(c, column_names[col]);
		for (uint32_t w = 0; w < c->nw; w++)
			cell(c, col, w);
		list_end(c);
	}
	putc_unlocked('}', f);
}

void tb_columns_free(struct tb_columns *c)
{
	if (!c)
		return;
	tb_strtab_free(&c->strs);
	rows_free(&c->funcs);
	rows_free(&c->locs);
	rows_free(&c->frames);
	free(c->w);
	free(c->func_of);
	free(c->opname);
	free(c);
}
