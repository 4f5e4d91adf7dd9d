/* tree_json.c: the tree JSON writer (`-o profile.json`, docs/profile-json.md):
 * the document, its version-1 tree (nested nodes; also the diff's), and what a
 * node shows, shared with version 2's columns (tree_columns.c). */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "lib/jsonw.h"
#include "cpython/opcodes.h"
#include "output/format.h"
#include "model/tasktotals.h"
#include "model/tree.h"
#include "output/tree_json.h"

static void write_thread_values(FILE *f, const struct tb_tree *t, const struct tb_tnode *x)
{
	fputs(",\"thread_values\":{", f);
	for (uint32_t i = 0, n = tb_tnode_nthreads(x); i < n; i++) {
		struct tb_tval v = tb_tnode_tval(t, x, i);

		fprintf(f, "%s\"%u\":[%llu,%llu]", i ? "," : "", t->prof->threads[v.thread].tid,
			(unsigned long long)v.samples, (unsigned long long)v.self);
	}
	fputc('}', f);
}

const struct tb_lval *tb_json_hottest_line(const struct tb_tree *t, const struct tb_tnode *x)
{
	const struct tb_lval *lv = tb_tnode_lines(t, x), *best = NULL;

	for (uint32_t i = 0; i < x->lv.n; i++)
		if (!best || lv[i].samples > best->samples)
			best = &lv[i];
	return best;
}

const char *tb_json_kind(const struct tb_tree *t, const struct tb_tnode *x)
{
	static const char *const node_kinds[] = {
		[TB_N_ROOT] = "root", [TB_N_PROCESS] = "process",
		[TB_N_TRUNCATED] = "truncated", [TB_N_PARTIAL] = "partial",
	};
	unsigned fk;

	if (x->kind != TB_N_FRAME && x->kind < sizeof(node_kinds) / sizeof(node_kinds[0]))
		return node_kinds[x->kind];
	/* Python (and synthetic) frames are "frame", the others their kind */
	fk = t->funcs.f[x->key].kind;
	return fk == TB_CODE_PYTHON ? "frame" : tb_code_kind_name(fk);
}

const char *tb_json_name(const struct tb_tree *t, const struct tb_tnode *x, char *buf, size_t len)
{
	const struct tb_profile *p = t->prof;
	const struct tb_pinfo *pi;

	switch (x->kind) {
	case TB_N_ROOT:
		return "all";
	case TB_N_PROCESS:
		pi = &p->procs[x->key];
		snprintf(buf, len, "%s (pid %d)", tb_str(&p->pstrs, pi->comm), (int)pi->pid);
		return buf;
	case TB_N_TRUNCATED:
		return "<truncated>";
	case TB_N_PARTIAL:
		return "<partial stack>";
	default:
		return tb_str(&p->strs, t->funcs.f[x->key].qualname);
	}
}

int32_t tb_json_lineno(const struct tb_tree *t, const struct tb_tnode *x)
{
	return t->by_line && x->line >= 0 ? x->line : t->funcs.f[x->key].firstlineno;
}

unsigned tb_json_opcode_sums(const struct tb_tree *t, const struct tb_tnode *x, uint8_t op[256],
			     uint64_t samples[256])
{
	const struct tb_oval *ov = tb_tnode_opcodes(t, x);
	uint64_t sum[256];
	unsigned n = 0;

	if (x->ov.n <= 16) { /* the usual few: kept in opcode order as they come */
		for (uint32_t i = 0; i < x->ov.n; i++) {
			unsigned j = 0;

			while (j < n && op[j] < ov[i].opcode)
				j++;
			if (j < n && op[j] == ov[i].opcode) {
				samples[j] += ov[i].samples;
				continue;
			}
			memmove(op + j + 1, op + j, n - j);
			memmove(samples + j + 1, samples + j, (n - j) * sizeof(*samples));
			op[j] = ov[i].opcode;
			samples[j] = ov[i].samples;
			n++;
		}
		return n;
	}
	memset(sum, 0, sizeof(sum));
	for (uint32_t i = 0; i < x->ov.n; i++)
		sum[ov[i].opcode] += ov[i].samples;
	for (unsigned o = 0; o < 256; o++)
		if (sum[o]) {
			op[n] = (uint8_t)o;
			samples[n++] = sum[o];
		}
	return n;
}

static void write_frame_fields(FILE *f, const struct tb_tree *t, const struct tb_tnode *x)
{
	const struct tb_profile *p = t->prof;
	const struct tb_func *fn = &t->funcs.f[x->key];
	const struct tb_lval *hot = tb_json_hottest_line(t, x), *lv = tb_tnode_lines(t, x);

	fprintf(f, ",\"filename\":");
	tb_json_str(f, tb_str(&p->strs, fn->filename));
	fprintf(f, ",\"lineno\":%d", tb_json_lineno(t, x));
	if (hot)
		fprintf(f, ",\"location\":[%d,%d,%d,%d]", hot->loc.line, hot->loc.end_line,
			hot->loc.col, hot->loc.end_col);
	else
		fputs(",\"location\":[-1,-1,-1,-1]", f);
	fputs(",\"lines\":[", f);
	for (uint32_t i = 0; i < x->lv.n; i++)
		fprintf(f, "%s[%d,%llu,%llu]", i ? "," : "", lv[i].loc.line,
			(unsigned long long)lv[i].samples, (unsigned long long)lv[i].self);
	fputc(']', f);
}

/* "opcodes": [[name, base name, self samples]] summed over threads, and
 * "thread_opcodes": {tid: [[name, base name, samples]]}. */
static void write_opcode_entry(FILE *f, unsigned minor, uint8_t op, uint64_t n)
{
	char b1[32], b2[32];

	fputc('[', f);
	tb_json_str(f, tb_opcode_name(minor, op, b1, sizeof(b1)));
	fputc(',', f);
	tb_json_str(f, tb_opcode_name(minor, tb_opcode_base(minor, op), b2, sizeof(b2)));
	fprintf(f, ",%llu]", (unsigned long long)n);
}

static void write_opcodes(FILE *f, const struct tb_tree *t, const struct tb_tnode *x)
{
	const struct tb_oval *ov = tb_tnode_opcodes(t, x);
	uint8_t op[256];
	uint64_t sum[256];
	unsigned nops;
	int first;

	if (x->iv.n) {
		fputs(",\"instructions\":[", f);
		for (uint32_t i = 0; i < x->iv.n; i++) {
			const struct tb_ival *v = &tb_tnode_instructions(t, x)[i];
			char b1[32], b2[32];

			fprintf(f, "%s[%d,", i ? "," : "", v->offset);
			if (v->has_opcode) {
				tb_json_str(f, tb_opcode_name(x->py_minor, v->opcode, b1, sizeof(b1)));
				fputc(',', f);
				tb_json_str(f, tb_opcode_name(x->py_minor, tb_opcode_base(x->py_minor, v->opcode),
							      b2, sizeof(b2)));
			} else {
				fputs("null,null", f);
			}
			fprintf(f, ",%d,%d,%d,%d,%llu]", v->loc.line, v->loc.end_line, v->loc.col,
				v->loc.end_col, (unsigned long long)v->samples);
		}
		fputc(']', f);
	}
	if (!x->ov.n)
		return;
	nops = tb_json_opcode_sums(t, x, op, sum);
	fputs(",\"opcodes\":[", f);
	for (unsigned i = 0; i < nops; i++) {
		if (i)
			fputc(',', f);
		write_opcode_entry(f, x->py_minor, op[i], sum[i]);
	}
	fputs("],\"thread_opcodes\":{", f);
	for (uint32_t i = 0; i < x->ov.n; i++) {
		uint32_t th = ov[i].thread;
		int seen = 0;

		for (uint32_t j = 0; j < i; j++)
			seen |= ov[j].thread == th;
		if (seen)
			continue;
		fprintf(f, "%s\"%u\":[", i ? "," : "", t->prof->threads[th].tid);
		first = 1;
		for (uint32_t j = i; j < x->ov.n; j++) {
			if (ov[j].thread != th)
				continue;
			if (!first)
				fputc(',', f);
			first = 0;
			write_opcode_entry(f, x->py_minor, ov[j].opcode, ov[j].samples);
		}
		fputc(']', f);
	}
	fputc('}', f);
}

void tb_json_node(FILE *f, const struct tb_tree *t, uint32_t idx, const struct tb_json_hooks *h)
{
	const struct tb_tnode *x = &t->n[idx];
	char name[96];
	int first = 1;

	fputs("{\"name\":", f);
	if (x->kind == TB_N_PROCESS || x->kind == TB_N_FRAME)
		tb_json_str(f, tb_json_name(t, x, name, sizeof(name)));
	else /* ours: "<truncated>" as it always was, unescaped */
		fprintf(f, "\"%s\"", tb_json_name(t, x, name, sizeof(name)));
	fprintf(f, ",\"kind\":\"%s\"", tb_json_kind(t, x));
	if (x->kind == TB_N_PROCESS)
		fprintf(f, ",\"pid\":%d", (int)t->prof->procs[x->key].pid);
	else if (x->kind == TB_N_FRAME)
		write_frame_fields(f, t, x);
	fprintf(f, ",\"value\":%llu,\"self\":%llu", (unsigned long long)x->total,
		(unsigned long long)x->self);
	write_thread_values(f, t, x);
	write_opcodes(f, t, x);
	if (h && h->node_extra)
		h->node_extra(f, t, idx, h->ctx);
	fputs(",\"children\":[", f);
	for (uint32_t c = x->first_child; c != TB_NO_NODE; c = t->n[c].next_sibling) {
		if (t->n[c].pruned)
			continue;
		if (!first)
			fputc(',', f);
		first = 0;
		tb_json_node(f, t, c, h);
	}
	fputs("]}", f);
}

void tb_json_frame_kinds(FILE *f, const struct tb_profile *p)
{
	if (p->kernel || p->kernel_samples)
		fprintf(f, "\"kernel_stacks\":{\"enabled\":%s,\"samples\":%llu,\"frames\":%llu,"
			"\"symbols_hidden\":%s,\"kptr_restrict\":%d},", p->kernel ? "true" : "false",
			(unsigned long long)p->kernel_samples, (unsigned long long)p->kernel_frames,
			p->kstack.hidden ? "true" : "false", (int)p->kstack.kptr_restrict);
	if (p->native || p->native_samples) {
		fprintf(f, "\"native_stacks\":{\"enabled\":%s,\"samples\":%llu,\"frames\":%llu,"
			"\"merged\":%llu,\"unmerged\":%llu,\"truncated\":%llu,\"stops\":[",
			p->native ? "true" : "false", (unsigned long long)p->native_samples,
			(unsigned long long)p->native_frames, (unsigned long long)p->merged,
			(unsigned long long)p->unmerged, (unsigned long long)p->native_truncated);
		for (int i = 0; i < TB_NATIVE_STOPS; i++)
			fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)p->native_stop[i]);
		fputs("]},", f);
	}
}

void tb_json_meta(FILE *f, const struct tb_tree *t)
{
	const struct tb_profile *p = t->prof;
	struct utsname u;

	if (uname(&u))
		u.nodename[0] = u.release[0] = '\0';
	static const char *const modes[] = { "cpu", "wall", "gil", "exception" };

	fprintf(f, "\"meta\":{\"rate_hz\":%u,\"duration_s\":%.3f,\"mode\":\"%s\",\"host\":", p->hz,
		p->duration_s, modes[p->mode & 3]);
	tb_json_str(f, u.nodename);
	fputs(",\"kernel\":", f);
	tb_json_str(f, u.release);
	fprintf(f, ",\"start_unix\":%lld,\"samples\":%llu,\"python_samples\":%llu,"
		"\"no_python_samples\":%llu,\"lost\":%llu,\"truncated\":%llu,\"partial\":%llu,"
		"\"frames\":%llu,\"unresolved_frames\":%llu,\"max_depth\":%u,\"by_line\":%s,"
		"\"min_fraction\":%g,\"pruned_nodes\":%u,\"functions\":%u,\"agent_cpu_s\":%.4f,"
		"\"off_cpu_samples\":%llu,\"off_cpu_records\":%llu,\"filtered_samples\":%llu,\"gc_frames\":%s,",
		(long long)p->start_unix, (unsigned long long)p->samples,
		(unsigned long long)p->python_samples, (unsigned long long)p->no_python,
		(unsigned long long)p->lost, (unsigned long long)p->truncated,
		(unsigned long long)p->partial, (unsigned long long)p->frames,
		(unsigned long long)p->unresolved_frames, p->max_depth, t->by_line ? "true" : "false",
		t->min_fraction, t->pruned, t->funcs.n, p->agent_cpu_s,
		(unsigned long long)p->off_cpu_samples, (unsigned long long)p->off_cpu_records,
		(unsigned long long)p->filtered,
		p->no_gc ? "false" : "true");
	if (p->sym.lines_dropped) /* code objects whose line table was over the budget */
		fprintf(f, "\"line_tables_dropped\":%llu,", (unsigned long long)p->sym.lines_dropped);
	tb_json_frame_kinds(f, p);
	fputs("\"processes\":[", f);
	for (uint32_t i = 0; i < p->nprocs; i++) {
		const struct tb_pinfo *pi = &p->procs[i];

		fprintf(f, "%s{\"pid\":%d,\"ns_pid\":%u,\"comm\":", i ? "," : "", (int)pi->pid,
			pi->ns_pid);
		tb_json_str(f, tb_str(&p->pstrs, pi->comm));
		fputs(",\"cmdline\":", f);
		tb_json_str(f, tb_str(&p->pstrs, pi->cmdline));
		fputs(",\"python\":", f);
		tb_json_str(f, tb_str(&p->pstrs, pi->version));
		fputs(",\"elf\":", f);
		tb_json_str(f, tb_str(&p->pstrs, pi->elf_path));
		fprintf(f, ",\"free_threaded\":%s,\"gil\":%s,\"samples\":%llu}",
			pi->free_threaded ? "true" : "false",
			pi->free_threaded ? "false" : "true", (unsigned long long)pi->samples);
	}
	fputs("]}", f);
}

void tb_json_threads(FILE *f, const struct tb_profile *p)
{
	fputs("\"threads\":{", f);
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct tb_tinfo *t = &p->threads[i];

		fprintf(f, "%s\"%u\":{\"pid\":%u,\"ns_tid\":%u,\"name\":", i ? "," : "", t->tid, t->pid,
			t->ns_tid);
		tb_json_str(f, tb_str(&p->strs, t->name));
		fputs(",\"comm\":", f);
		tb_json_str(f, tb_str(&p->strs, t->comm));
		fprintf(f, ",\"ident\":%llu", (unsigned long long)t->ident);
		fprintf(f, ",\"samples\":%llu,\"python_samples\":%llu,\"status\":{\"on_cpu\":%llu,"
			"\"off_cpu\":%llu,\"gil_held\":%llu,\"gil_wait\":%llu,\"gc\":%llu,\"exception\":%llu}}",
			(unsigned long long)t->samples, (unsigned long long)t->python_samples,
			(unsigned long long)t->on_cpu, (unsigned long long)t->off_cpu,
			(unsigned long long)t->gil_held, (unsigned long long)t->gil_wait,
			(unsigned long long)t->gc, (unsigned long long)t->exception);
	}
	fputc('}', f);
}

void tb_json_tasks(FILE *f, const struct tb_profile *p)
{
	struct tb_task_total *t;
	uint32_t n = tb_task_totals(p, &t);

	fprintf(f, "\"tasks\":{\"enabled\":%s,\"samples\":%llu,\"list\":[", p->async_aware ? "true" : "false",
		(unsigned long long)p->task_samples);
	for (uint32_t i = 0, j; i < n; i = j) {
		uint64_t sum = 0;

		for (j = i; j < n && t[j].code == t[i].code; j++)
			sum += t[j].samples;
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		tb_json_str(f, tb_str(&p->strs, p->sym.codes[t[i].code].qualname));
		fprintf(f, ",\"samples\":%llu,\"thread_values\":{", (unsigned long long)sum);
		for (uint32_t k = i; k < j; k++)
			fprintf(f, "%s\"%u\":%llu", k > i ? "," : "", p->threads[t[k].thread].tid,
				(unsigned long long)t[k].samples);
		fputs("}}", f);
	}
	fputs("]}", f);
	free(t);
}

/* cols: version 2's tables of t, made here when NULL (kept for the next output);
 * timeline: with the timeline (the page's preview goes without). */
static void write_tree_json(const struct tb_profile *p, const struct tb_tree *t,
			    struct tb_columns **cols, int timeline, FILE *f)
{
	unsigned version = p->json_version == 1 ? 1 : 2;

	fprintf(f, "{\"format\":\"tachyon-bpf-tree\",\"version\":%u,", version);
	tb_json_meta(f, t);
	fputc(',', f);
	tb_json_threads(f, p);
	if (timeline)
		tb_json_timeline(f, t);
	if (p->async_aware) {
		fputc(',', f);
		tb_json_tasks(f, p);
	}
	if (version == 1) {
		fputs(",\"tree\":", f);
		tb_json_node(f, t, 0, NULL);
	} else {
		if (!*cols)
			*cols = tb_columns_make(t);
		tb_columns_write(f, *cols);
	}
	fputs("}\n", f);
}

/* The tree of the run's profile between tb_outputs_begin and _end, and
 * its version-2 tables once an output needed them (the page and the file). */
static struct {
	const struct tb_profile *p;
	int built;
	struct tb_tree t;
	struct tb_columns *cols;
} run_tree;

void tb_outputs_begin(const struct tb_profile *p)
{
	tb_outputs_end();
	run_tree.p = p;
}

void tb_outputs_end(void)
{
	tb_columns_free(run_tree.cols);
	run_tree.cols = NULL;
	if (run_tree.built)
		tb_tree_free(&run_tree.t);
	run_tree.p = NULL;
	run_tree.built = 0;
}

/* The run's tree (built and pruned once: tb_outputs_begin), or *own. */
static struct tb_tree *tree_of(const struct tb_profile *p, struct tb_tree *own,
			       struct tb_columns ***cols)
{
	struct tb_tree *tp = own;

	if (p == run_tree.p) {
		tp = &run_tree.t;
		*cols = &run_tree.cols;
		if (run_tree.built)
			return tp;
		run_tree.built = 1;
	}
	tb_tree_build(tp, p, p->by_line);
	tb_tree_prune(tp, p->min_fraction);
	return tp;
}

int tb_write_tree_json(const struct tb_profile *p, FILE *f)
{
	struct tb_tree own, *tp;
	struct tb_columns *own_cols = NULL, **cols = &own_cols;

	tp = tree_of(p, &own, &cols);
	write_tree_json(p, tp, cols, 1, f);
	tb_columns_free(own_cols);
	if (tp == &own)
		tb_tree_free(tp);
	return ferror(f) ? -1 : 0;
}

/* The page's preview: what its first view can draw, for trees of more nodes
 * than a page takes in well under a second: the nodes of at least the first
 * of these fractions of all samples (and of each of their threads') that
 * keeps at most PREVIEW_NODES of them (a frame of a pixel of a graph 16,000
 * or 4,000 pixels wide), without the timeline (most of its size: the strip
 * comes with the data).  The page holds it as it is, before its script, so
 * it is written only without a '<' (the JSON writer escapes every '<' in a
 * string: there is none). */
#define PREVIEW_FROM 100000
#define PREVIEW_NODES 10000
static const double preview_fractions[] = { 1.0 / 16000, 1.0 / 4000 };

int tb_write_tree_preview_json(const struct tb_profile *p, FILE *f)
{
	struct tb_tree own, *tp;
	struct tb_columns *own_cols = NULL, **cols = &own_cols, *preview = NULL;
	char *text = NULL;
	size_t len = 0;

	tp = tree_of(p, &own, &cols);
	if (tp->nn - tp->pruned > PREVIEW_FROM) {
		for (size_t i = 0; i < sizeof(preview_fractions) / sizeof(*preview_fractions); i++) {
			FILE *m;

			tb_tree_prune_more(tp, preview_fractions[i]); /* coarser each time */
			if (tp->nn - tp->pruned > PREVIEW_NODES)
				continue;
			m = open_memstream(&text, &len);
			if (m) {
				write_tree_json(p, tp, &preview, 0, m);
				if (fclose(m) || memchr(text, '<', len))
					len = 0;
			}
			break;
		}
		tb_columns_free(preview);
		tb_tree_prune(tp, p->min_fraction); /* the marks every other output reads */
	}
	if (len)
		fwrite(text, 1, len, f);
	free(text);
	tb_columns_free(own_cols);
	if (tp == &own)
		tb_tree_free(tp);
	return ferror(f) ? -1 : 0;
}
