/* folded.c: the collapsed-stack writer (flamegraph.pl, speedscope, inferno).
 * One line per unique stack, root first: process and thread frames, then
 * Python frames `qualname (file:line)`, native frames `symbol (library)`
 * (a stripped one's `library+0xSTART` alone), kernel frames `symbol_[k]`
 * (flamegraph.pl's convention, which colours them), asyncio task frames
 * `<task NAME>`, then a space and the count. */
#include <stdlib.h>
#include <string.h>
#include "lib/mem.h"
#include "output/format.h"
#include "output/funcname.h"

struct line {
	const char *text;
	uint64_t count;
};

/* Names come from the target: keep them on one line and one frame. */
static void put_clean(char *out, size_t len, size_t *pos, const char *s)
{
	for (; *s && *pos + 1 < len; s++) {
		unsigned char c = (unsigned char)*s;

		out[(*pos)++] = c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	out[*pos] = '\0';
}

static void put_raw(char *out, size_t len, size_t *pos, const char *s)
{
	for (; *s && *pos + 1 < len; s++)
		out[(*pos)++] = *s;
	out[*pos] = '\0';
}

static void put_fmt(char *out, size_t len, size_t *pos, const char *fmt, long long v)
{
	int n = snprintf(out + *pos, len - *pos, fmt, v);

	if (n > 0)
		*pos = *pos + (size_t)n < len ? *pos + (size_t)n : len - 1;
}

/* One frame of any kind (see the top of the file). */
static void put_frame(char *out, size_t len, size_t *pos, const struct tb_profile *p,
		      const struct tb_sframe *f)
{
	const struct tb_code *c = &p->sym.codes[f->code];
	const char *name = tb_str(&p->strs, c->qualname), *module;
	struct tb_location loc;

	put_clean(out, len, pos, name);
	switch (c->kind) {
	case TB_CODE_KERNEL:
		put_raw(out, len, pos, "_[k]");
		return;
	case TB_CODE_TASK:
		return; /* "<task NAME>" */
	case TB_CODE_NATIVE:
		module = tb_module_name(c->kind, tb_str(&p->strs, c->filename));
		if (tb_name_has_module(name, module))
			return; /* library+0xSTART already names it */
		put_raw(out, len, pos, " (");
		put_clean(out, len, pos, module);
		put_raw(out, len, pos, ")");
		return;
	default:
		tb_sym_location(&p->sym, f->code, f->offset, &loc);
		put_raw(out, len, pos, " (");
		put_clean(out, len, pos, tb_str(&p->strs, c->filename));
		put_fmt(out, len, pos, ":%lld)", loc.line >= 0 ? loc.line : c->firstlineno);
	}
}

/* The stack's line (without its count) into out (len: 256 + 300 per frame). */
static void stack_line(const struct tb_profile *p, const struct tb_stack *s, char *out, size_t len)
{
	const struct tb_tinfo *t = &p->threads[s->thread];
	int pi = tb_profile_find_process(p, t->pid);
	const struct tb_sframe *f = tb_stack_frames(p, s);
	size_t pos = 0;

	out[0] = '\0';
	put_clean(out, len, &pos, pi >= 0 ? tb_str(&p->pstrs, p->procs[pi].comm) : "?");
	put_fmt(out, len, &pos, " (pid %lld);", t->pid);
	put_clean(out, len, &pos, tb_str(&p->strs, t->name));
	put_fmt(out, len, &pos, " (tid %lld)", t->tid);
	if (s->kind & TB_SK_TRUNCATED)
		put_raw(out, len, &pos, ";<truncated>");
	if (s->kind & TB_SK_PARTIAL)
		put_raw(out, len, &pos, ";<partial stack>");
	for (int i = s->depth - 1; i >= 0; i--) {
		put_raw(out, len, &pos, ";");
		put_frame(out, len, &pos, p, &f[i]);
	}
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

/* Every line in one arena of exactly its bytes (a line per unique stack: an
 * hour of a busy host has hundreds of thousands), sorted, equal lines summed. */
int tb_write_folded(const struct tb_profile *p, FILE *f)
{
	struct line *lines = calloc(p->nstacks ? p->nstacks : 1, sizeof(*lines));
	struct tb_buf text = { 0 };
	char *scratch = NULL;
	size_t scratch_len = 0;
	uint32_t n = 0;
	int rc = 0;

	if (!lines)
		return -1;
	for (uint32_t i = 0; i < p->nstacks; i++) {
		size_t len = 256 + (size_t)p->stacks[i].depth * 300;

		if (len > scratch_len) {
			free(scratch);
			scratch = malloc(len);
			if (!scratch)
				abort();
			scratch_len = len;
		}
		stack_line(p, &p->stacks[i], scratch, len);
		/* the offset for now: the arena moves while it grows */
		lines[n].text = (const char *)(uintptr_t)text.n;
		tb_buf_put(&text, scratch, strlen(scratch) + 1);
		lines[n++].count = p->stacks[i].count;
	}
	free(scratch);
	for (uint32_t i = 0; i < n; i++)
		lines[i].text = (const char *)text.d + (uintptr_t)lines[i].text;
	tb_qsort(lines, n, sizeof(*lines), cmp_line);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t count = lines[i].count;

		while (i + 1 < n && strcmp(lines[i].text, lines[i + 1].text) == 0)
			count += lines[++i].count;
		if (fprintf(f, "%s %llu\n", lines[i].text, (unsigned long long)count) < 0)
			rc = -1;
	}
	free(text.d);
	free(lines);
	return rc;
}
