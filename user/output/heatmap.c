/* heatmap.c: the source heatmap data (docs/heatmap-json.md) and page:
 * per file and line, self and total samples and the leaf instructions,
 * with the source text read at capture time.  Python frames only: the
 * innermost Python frame is the leaf, native and kernel frames are left out. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hashmap.h"
#include "lib/mem.h"
#include "model/functab.h"
#include "lib/jsonw.h"
#include "cpython/opcodes.h"
#include "output/format.h"

struct hline {          /* (file, line) */
	uint32_t file;
	int32_t line;
	uint64_t self, total, stamp;
};
#define HLINE_KEY offsetof(struct hline, self)   /* the key: file, line */

struct hinstr {         /* (code, offset) at the leaf */
	uint32_t code;
	int32_t offset;
	struct tb_location loc;
	uint8_t opcode, has_opcode;
	uint64_t samples;
};
#define HINSTR_KEY offsetof(struct hinstr, loc)  /* the key: code, offset */

struct hfile {
	uint32_t file;
	uint64_t self, total, stamp;
};

struct heat {
	const struct tb_profile *p;
	struct hline *lines;
	uint32_t nlines, caplines;
	struct tb_hmap line_index;  /* (file, line) -> lines */
	struct hinstr *ins;
	uint32_t nins, capins;
	struct tb_hmap ins_index;   /* (code, offset) -> ins */
	struct hfile *files;
	uint32_t nfiles, capfiles;
	uint32_t *file_of;          /* strtab id -> files index + 1, 0: none */
};

static struct hline *line_entry(struct heat *h, uint32_t file, int32_t line)
{
	const struct hline key = { .file = file, .line = line };
	uint32_t i = tb_hmap_intern_key(&h->line_index, h->lines, sizeof(*h->lines), &key,
					HLINE_KEY, h->nlines);

	if (i == h->nlines) {
		h->lines = tb_grow(h->lines, &h->caplines, h->nlines + 1, sizeof(*h->lines), 256);
		h->lines[h->nlines++] = key;
	}
	return &h->lines[i];
}

/* file: a strtab id (< p->strs.n: every code's filename is) */
static struct hfile *file_entry(struct heat *h, uint32_t file)
{
	if (!h->file_of[file]) {
		h->files = tb_grow(h->files, &h->capfiles, h->nfiles + 1, sizeof(*h->files), 256);
		h->files[h->nfiles] = (struct hfile){ .file = file };
		h->file_of[file] = ++h->nfiles;
	}
	return &h->files[h->file_of[file] - 1];
}

static void add_instruction(struct heat *h, const struct tb_sframe *f, const struct tb_location *loc,
			    uint64_t count)
{
	const struct hinstr key = { f->code, f->offset, *loc, f->opcode, f->has_opcode, count };
	uint32_t i = tb_hmap_intern_key(&h->ins_index, h->ins, sizeof(*h->ins), &key, HINSTR_KEY,
					h->nins);

	if (i == h->nins) {
		h->ins = tb_grow(h->ins, &h->capins, h->nins + 1, sizeof(*h->ins), 256);
		h->ins[h->nins++] = key;
		return;
	}
	h->ins[i].samples += count;
	if (f->has_opcode) {
		h->ins[i].opcode = f->opcode;
		h->ins[i].has_opcode = 1;
	}
}

static void collect(struct heat *h)
{
	const struct tb_profile *p = h->p;

	h->file_of = tb_calloc(p->strs.n, sizeof(uint32_t));
	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct tb_stack *s = &p->stacks[i];
		const struct tb_sframe *f = tb_stack_frames(p, s);
		uint16_t leaf = tb_stack_leaf(p, s);   /* native and kernel frames are not source */

		for (uint16_t d = 0; d < s->depth; d++) {
			const struct tb_code *c = &p->sym.codes[f[d].code];
			struct tb_location loc;
			struct hline *l;
			struct hfile *hf;

			if (!c->resolved || !c->pid || c->kind != TB_CODE_PYTHON || c->filename >= p->strs.n)
				continue; /* unresolved, synthetic, native or kernel frames */
			tb_sym_location(&p->sym, f[d].code, f[d].offset, &loc);
			l = line_entry(h, c->filename, loc.line);
			hf = file_entry(h, c->filename);
			if (d == leaf) {
				l->self += s->count;
				hf->self += s->count;
				add_instruction(h, &f[d], &loc, s->count);
			}
			if (l->stamp != i + 1) {
				l->stamp = i + 1;
				l->total += s->count;
			}
			if (hf->stamp != i + 1) {
				hf->stamp = i + 1;
				hf->total += s->count;
			}
		}
	}
}

/* Items grouped by file, each file's in their own order:
 * order[start[k] .. start[k + 1]] are the items of files[k]. */
struct groups {
	uint32_t *start, *order;
};

/* sids[i]: item i's file as a strtab id; items of no listed file are left out */
static void group_by_file(struct groups *g, const struct heat *h, const uint32_t *sids, uint32_t n)
{
	uint32_t *fill = tb_calloc((size_t)h->nfiles + 1, sizeof(uint32_t));

	g->start = tb_calloc((size_t)h->nfiles + 1, sizeof(uint32_t));
	g->order = tb_calloc(n, sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++)
		if (sids[i] < h->p->strs.n && h->file_of[sids[i]])
			g->start[h->file_of[sids[i]]]++;
	for (uint32_t k = 0; k < h->nfiles; k++)
		g->start[k + 1] += g->start[k];
	memcpy(fill, g->start, ((size_t)h->nfiles + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++)
		if (sids[i] < h->p->strs.n && h->file_of[sids[i]])
			g->order[fill[h->file_of[sids[i]] - 1]++] = i;
	free(fill);
}

static void free_groups(struct groups *g)
{
	free(g->start);
	free(g->order);
}

static int by_total(const void *a, const void *b)
{
	const struct hfile *x = a, *y = b;

	return (x->total < y->total) - (x->total > y->total);
}

static int by_line(const void *a, const void *b)
{
	const struct hline *x = a, *y = b;

	return (x->line > y->line) - (x->line < y->line);
}

struct by_file {               /* what write_file lists, grouped by file */
	struct groups lines, ins, funcs;
};

static void write_file(FILE *f, struct heat *h, uint32_t k, const struct by_file *g,
		       const struct tb_functab *funcs)
{
	const struct tb_profile *p = h->p;
	const struct hfile *hf = &h->files[k];
	const struct tb_source *src = p->sources ? tb_sources_find(p->sources, hf->file) : NULL;
	uint32_t from = g->lines.start[k], n = g->lines.start[k + 1] - from;
	struct hline *lines = tb_calloc(n, sizeof(*lines));

	fputs("{\"path\":", f);
	tb_json_str(f, tb_str(&p->strs, hf->file));
	fprintf(f, ",\"pid\":%d,\"source\":", src ? (int)src->pid : 0);
	if (src && src->text)
		tb_json_str(f, src->text);
	else
		fputs("null", f);
	fputs(",\"missing\":", f);
	if (src && src->text)
		fputs("null", f);
	else
		tb_json_str(f, src ? src->missing : "source not captured");
	fprintf(f, ",\"self\":%llu,\"total\":%llu,\"lines\":[", (unsigned long long)hf->self,
		(unsigned long long)hf->total);
	for (uint32_t i = 0; i < n; i++)
		lines[i] = h->lines[g->lines.order[from + i]];
	tb_qsort(lines, n, sizeof(*lines), by_line);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s[%d,%llu,%llu]", i ? "," : "", lines[i].line, (unsigned long long)lines[i].self,
			(unsigned long long)lines[i].total);
	free(lines);
	fputs("],\"instructions\":[", f);
	for (uint32_t i = g->ins.start[k]; i < g->ins.start[k + 1]; i++) {
		const struct hinstr *v = &h->ins[g->ins.order[i]];
		const struct tb_code *c = &p->sym.codes[v->code];
		char b1[32], b2[32];

		fprintf(f, "%s[%d,%d,", i > g->ins.start[k] ? "," : "", v->loc.line, v->offset);
		if (v->has_opcode) {
			tb_json_str(f, tb_opcode_name(c->py_minor, v->opcode, b1, sizeof(b1)));
			fputc(',', f);
			tb_json_str(f, tb_opcode_name(c->py_minor, tb_opcode_base(c->py_minor, v->opcode), b2,
						      sizeof(b2)));
		} else {
			fputs("null,null", f);
		}
		fprintf(f, ",%d,%d,%d,%llu]", v->loc.end_line, v->loc.col, v->loc.end_col,
			(unsigned long long)v->samples);
	}
	fputs("],\"functions\":[", f);
	for (uint32_t i = g->funcs.start[k]; i < g->funcs.start[k + 1]; i++) {
		const struct tb_func *fn = &funcs->f[g->funcs.order[i]];

		fputs(i > g->funcs.start[k] ? ",[" : "[", f);
		tb_json_str(f, tb_str(&p->strs, fn->qualname));
		fprintf(f, ",%d,%llu,%llu]", fn->firstlineno, (unsigned long long)fn->self,
			(unsigned long long)fn->total);
	}
	fputs("]}", f);
}

/* Group lines, instructions and functions by file (files in their final order). */
static void group_all(struct by_file *g, struct heat *h, const struct tb_functab *funcs)
{
	uint32_t most = h->nlines > h->nins ? h->nlines : h->nins;
	uint32_t *sids = tb_calloc(most > funcs->n ? most : funcs->n, sizeof(uint32_t));

	memset(h->file_of, 0, (size_t)h->p->strs.n * sizeof(uint32_t));
	for (uint32_t k = 0; k < h->nfiles; k++)
		h->file_of[h->files[k].file] = k + 1;
	for (uint32_t i = 0; i < h->nlines; i++)
		sids[i] = h->lines[i].file;
	group_by_file(&g->lines, h, sids, h->nlines);
	for (uint32_t i = 0; i < h->nins; i++)
		sids[i] = h->p->sym.codes[h->ins[i].code].filename;
	group_by_file(&g->ins, h, sids, h->nins);
	for (uint32_t i = 0; i < funcs->n; i++)
		sids[i] = funcs->f[i].filename;
	group_by_file(&g->funcs, h, sids, funcs->n);
	free(sids);
}

int tb_write_heatmap_json(const struct tb_profile *p, FILE *f)
{
	struct heat h = { .p = p };
	struct tb_functab funcs = { 0 };
	struct by_file g;

	collect(&h);
	tb_functab_count(&funcs, p);
	tb_qsort(h.files, h.nfiles, sizeof(*h.files), by_total);
	group_all(&g, &h, &funcs);
	fprintf(f, "{\"format\":\"tachyon-bpf-heatmap\",\"version\":1,\"meta\":{\"rate_hz\":%u,"
		"\"duration_s\":%.3f,\"samples\":%llu,\"python_samples\":%llu,\"processes\":[",
		p->hz, p->duration_s, (unsigned long long)p->samples, (unsigned long long)p->python_samples);
	for (uint32_t i = 0; i < p->nprocs; i++) {
		fprintf(f, "%s{\"pid\":%d,\"comm\":", i ? "," : "", (int)p->procs[i].pid);
		tb_json_str(f, tb_str(&p->pstrs, p->procs[i].comm));
		fputs(",\"python\":", f);
		tb_json_str(f, tb_str(&p->pstrs, p->procs[i].version));
		fputs(",\"cmdline\":", f);
		tb_json_str(f, tb_str(&p->pstrs, p->procs[i].cmdline));
		fputc('}', f);
	}
	fputs("]},\"files\":[", f);
	for (uint32_t i = 0; i < h.nfiles; i++) {
		if (i)
			fputc(',', f);
		write_file(f, &h, i, &g, &funcs);
	}
	fputs("]}\n", f);
	free_groups(&g.lines);
	free_groups(&g.ins);
	free_groups(&g.funcs);
	free(h.lines);
	free(h.ins);
	free(h.files);
	free(h.file_of);
	tb_hmap_free(&h.line_index);
	tb_hmap_free(&h.ins_index);
	tb_functab_free(&funcs);
	return ferror(f) ? -1 : 0;
}
