/* heatmap.c: the source heatmap data (docs/heatmap-json.md) and page:
 * per file and line, self and total samples and the leaf instructions,
 * with the source text read at capture time. */
#include <stdlib.h>
#include <string.h>
#include "lib/mem.h"
#include "model/functab.h"
#include "lib/jsonw.h"
#include "cpython/opcodes.h"
#include "out/format.h"

struct hline {          /* (file, line) */
	uint32_t file;
	int32_t line;
	uint64_t self, total, stamp;
};

struct hinstr {         /* (code, offset) at the leaf */
	uint32_t code;
	int32_t offset;
	struct tb_location loc;
	uint8_t opcode, has_opcode;
	uint64_t samples;
};

struct hfile {
	uint32_t file;
	uint64_t self, total, stamp;
};

struct heat {
	const struct tb_profile *p;
	struct hline *lines;
	uint32_t nlines, caplines;
	struct hinstr *ins;
	uint32_t nins, capins;
	struct hfile *files;
	uint32_t nfiles, capfiles;
	uint32_t *slots, nslots;   /* (file, line) -> lines index + 1 */
};

static uint64_t line_hash(uint32_t file, int32_t line)
{
	uint64_t k = ((uint64_t)file << 32) | (uint32_t)line;

	return tb_hash_bytes(&k, sizeof(k), 5);
}

static struct hline *line_entry(struct heat *h, uint32_t file, int32_t line)
{
	uint32_t j;

	if ((h->nlines + 1) * 2 >= h->nslots) {
		uint32_t n = h->nslots ? h->nslots * 2 : 4096;

		free(h->slots);
		h->slots = calloc(n, sizeof(uint32_t));
		if (!h->slots)
			abort();
		h->nslots = n;
		for (uint32_t i = 0; i < h->nlines; i++) {
			j = (uint32_t)line_hash(h->lines[i].file, h->lines[i].line) & (n - 1);
			while (h->slots[j])
				j = (j + 1) & (n - 1);
			h->slots[j] = i + 1;
		}
	}
	for (j = (uint32_t)line_hash(file, line) & (h->nslots - 1); h->slots[j]; j = (j + 1) & (h->nslots - 1)) {
		struct hline *l = &h->lines[h->slots[j] - 1];

		if (l->file == file && l->line == line)
			return l;
	}
	if (h->nlines == h->caplines)
		h->lines = tb_grow(h->lines, &h->caplines, h->nlines + 1, sizeof(*h->lines), 256);
	memset(&h->lines[h->nlines], 0, sizeof(h->lines[0]));
	h->lines[h->nlines].file = file;
	h->lines[h->nlines].line = line;
	h->slots[j] = ++h->nlines;
	return &h->lines[h->nlines - 1];
}

static struct hfile *file_entry(struct heat *h, uint32_t file)
{
	for (uint32_t i = 0; i < h->nfiles; i++)
		if (h->files[i].file == file)
			return &h->files[i];
	if (h->nfiles == h->capfiles)
		h->files = tb_grow(h->files, &h->capfiles, h->nfiles + 1, sizeof(*h->files), 256);
	memset(&h->files[h->nfiles], 0, sizeof(h->files[0]));
	h->files[h->nfiles].file = file;
	return &h->files[h->nfiles++];
}

static void add_instruction(struct heat *h, const struct tb_sframe *f, const struct tb_location *loc,
			    uint64_t count)
{
	for (uint32_t i = 0; i < h->nins; i++)
		if (h->ins[i].code == f->code && h->ins[i].offset == f->offset) {
			h->ins[i].samples += count;
			if (f->has_opcode) {
				h->ins[i].opcode = f->opcode;
				h->ins[i].has_opcode = 1;
			}
			return;
		}
	if (h->nins == h->capins)
		h->ins = tb_grow(h->ins, &h->capins, h->nins + 1, sizeof(*h->ins), 256);
	h->ins[h->nins++] = (struct hinstr){ f->code, f->offset, *loc, f->opcode, f->has_opcode, count };
}

static void collect(struct heat *h)
{
	const struct tb_profile *p = h->p;

	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct tb_stack *s = &p->stacks[i];
		const struct tb_sframe *f = tb_stack_frames(p, s);

		for (uint16_t d = 0; d < s->depth; d++) {
			const struct tb_code *c = &p->sym.codes[f[d].code];
			struct tb_location loc;
			struct hline *l;
			struct hfile *hf;

			if (!c->resolved || !c->pid)
				continue; /* unresolved or synthetic frames */
			tb_sym_location(&p->sym, f[d].code, f[d].offset, &loc);
			l = line_entry(h, c->filename, loc.line);
			hf = file_entry(h, c->filename);
			if (d == 0) {
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

static void write_file(FILE *f, struct heat *h, const struct hfile *hf, const struct tb_functab *funcs)
{
	const struct tb_profile *p = h->p;
	const struct tb_source *src = p->sources ? tb_sources_find(p->sources, hf->file) : NULL;
	struct hline *lines = calloc(h->nlines ? h->nlines : 1, sizeof(*lines));
	uint32_t n = 0;
	int first = 1;

	if (!lines)
		abort();
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
	for (uint32_t i = 0; i < h->nlines; i++)
		if (h->lines[i].file == hf->file)
			lines[n++] = h->lines[i];
	tb_qsort(lines, n, sizeof(*lines), by_line);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s[%d,%llu,%llu]", i ? "," : "", lines[i].line, (unsigned long long)lines[i].self,
			(unsigned long long)lines[i].total);
	free(lines);
	fputs("],\"instructions\":[", f);
	for (uint32_t i = 0; i < h->nins; i++) {
		const struct hinstr *v = &h->ins[i];
		const struct tb_code *c = &p->sym.codes[v->code];
		char b1[32], b2[32];

		if (c->filename != hf->file)
			continue;
		fprintf(f, "%s[%d,%d,", first ? "" : ",", v->loc.line, v->offset);
		first = 0;
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
	first = 1;
	for (uint32_t i = 0; i < funcs->n; i++) {
		const struct tb_func *fn = &funcs->f[i];

		if (fn->filename != hf->file)
			continue;
		fputs(first ? "[" : ",[", f);
		first = 0;
		tb_json_str(f, tb_str(&p->strs, fn->qualname));
		fprintf(f, ",%d,%llu,%llu]", fn->firstlineno, (unsigned long long)fn->self,
			(unsigned long long)fn->total);
	}
	fputs("]}", f);
}

int tb_write_heatmap_json(const struct tb_profile *p, FILE *f)
{
	struct heat h = { .p = p };
	struct tb_functab funcs = { 0 };

	collect(&h);
	tb_functab_count(&funcs, p);
	tb_qsort(h.files, h.nfiles, sizeof(*h.files), by_total);
	fprintf(f, "{\"format\":\"tachyon-bpf-heatmap\",\"version\":1,\"meta\":{\"rate_hz\":%u,"
		"\"duration_s\":%.3f,\"samples\":%llu,\"python_samples\":%llu,\"processes\":[",
		p->hz, p->duration_s, (unsigned long long)p->samples, (unsigned long long)p->python_samples);
	for (uint32_t i = 0; i < p->nprocs; i++) {
		fprintf(f, "%s{\"pid\":%d,\"comm\":", i ? "," : "", (int)p->procs[i].target.pid);
		tb_json_str(f, p->procs[i].target.comm);
		fputs(",\"python\":", f);
		tb_json_str(f, p->procs[i].version);
		fputs(",\"cmdline\":", f);
		tb_json_str(f, p->procs[i].target.cmdline);
		fputc('}', f);
	}
	fputs("]},\"files\":[", f);
	for (uint32_t i = 0; i < h.nfiles; i++) {
		if (i)
			fputc(',', f);
		write_file(f, &h, &h.files[i], &funcs);
	}
	fputs("]}\n", f);
	free(h.lines);
	free(h.ins);
	free(h.files);
	free(h.slots);
	tb_functab_free(&funcs);
	return ferror(f) ? -1 : 0;
}
