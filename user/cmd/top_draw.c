/* top_draw.c: lays out a frame of tachyon-bpf top.  Every line is placed
 * with a cursor move and cut to the width in columns (one per code point
 * of the text as lib/termsafe.h shows it: control characters, bidi
 * controls and invalid UTF-8 escaped), so nothing wraps and no name
 * steers the terminal; the selected row is shown in reverse video.  With
 * --kernel or --native a Module column says where a kernel or native
 * function is ("[kernel]", "libz.so.1"). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/termsafe.h"
#include "cmd/top_draw.h"

#define MAX_COLS 1000
#define NARROW 60      /* fewer columns: no OwnTime / TotalTime */
#define MODULE_COLS 14 /* the Module column */

struct line {
	char s[MAX_COLS * 4 + 1];
	size_t len;
	int cols, max;
};

static void fb_put(struct tb_frame_buf *fb, const char *s, size_t n)
{
	if (fb->n + n > fb->cap) {
		while (fb->n + n > fb->cap)
			fb->cap = fb->cap ? fb->cap * 2 : 16384;
		fb->b = realloc(fb->b, fb->cap);
		if (!fb->b)
			abort();
	}
	memcpy(fb->b + fb->n, s, n);
	fb->n += n;
}

static void line_start(struct line *l, int cols)
{
	l->len = 0;
	l->cols = 0;
	l->max = cols < MAX_COLS ? cols : MAX_COLS;
}

/* Columns of one character's safe form: ASCII (an escape too) one per
 * byte, a UTF-8 character one. */
static int safe_cols(const char *out, size_t n)
{
	return (unsigned char)out[0] < 0x80 ? (int)n : 1;
}

/* Append text as lib/termsafe.h shows it, one column per code point, up to
 * the line's width (an escape that does not fit whole is left out). */
static void line_text(struct line *l, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;

	while (*s && l->cols < l->max) {
		char out[TB_TERMSAFE_MAX];
		size_t n;
		size_t used = tb_termsafe_char(s, 4, out, &n);
		int cols = safe_cols(out, n);

		if (l->cols + cols > l->max)
			break;
		memcpy(l->s + l->len, out, n);
		l->len += n;
		l->cols += cols;
		s += used;
	}
	l->s[l->len] = '\0';
}

static void line_printf(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line_printf(struct line *l, const char *fmt, ...)
{
	char tmp[MAX_COLS * 4 + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	line_text(l, tmp);
}

static void line_pad(struct line *l)
{
	while (l->cols < l->max) {
		l->s[l->len++] = ' ';
		l->cols++;
	}
	l->s[l->len] = '\0';
}

/* Put line l on screen row `row` (1-based) with an optional SGR style. */
static void emit(struct tb_frame_buf *fb, int row, const struct line *l, const char *style)
{
	char pos[32];
	int n = snprintf(pos, sizeof(pos), "\033[%d;1H", row);

	fb_put(fb, pos, (size_t)n);
	if (style)
		fb_put(fb, style, strlen(style));
	fb_put(fb, l->s, l->len);
	if (style)
		fb_put(fb, "\033[0m", 4);
	if (l->cols < l->max)
		fb_put(fb, "\033[K", 3);
}

/* Columns of text as line_text shows it. */
static size_t count_cols(const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t cols = 0;

	while (*s) {
		char out[TB_TERMSAFE_MAX];
		size_t n;

		s += tb_termsafe_char(s, 4, out, &n);
		cols += (size_t)safe_cols(out, n);
	}
	return cols;
}

/* The end of text that takes at most n columns. */
static const char *tail_cols(const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t total = count_cols(text);

	while (total > n && *s) {
		char out[TB_TERMSAFE_MAX];
		size_t k;

		s += tb_termsafe_char(s, 4, out, &k);
		total -= (size_t)safe_cols(out, k);
	}
	return (const char *)s;
}

/* The Module column: a kernel or native function's module (its end when it
 * is too long), blank for a Python one; padded to MODULE_COLS. */
static void line_module(struct line *l, const struct tb_profile *p, const struct tb_func *f)
{
	const char *module = f->kind == TB_CODE_PYTHON ? "" :
			     tb_module_name(f->kind, tb_str(&p->strs, f->filename));
	int end = l->cols + MODULE_COLS + 2;

	line_text(l, "  ");
	line_text(l, tail_cols(module, MODULE_COLS));
	while (l->cols < end && l->cols < l->max) {
		l->s[l->len++] = ' ';
		l->cols++;
	}
	l->s[l->len] = '\0';
}

/* Does the table have a Module column? */
static int has_modules(const struct tb_profile *p)
{
	return p->kernel || p->native;
}

/* "qualname (file:line)", the file cut from the left when it does not fit;
 * a kernel or native function's name alone (its module has a column). */
static void line_function(struct line *l, const struct tb_profile *p, const struct tb_func *f)
{
	const char *name = tb_str(&p->strs, f->qualname), *file = tb_str(&p->strs, f->filename);
	char num[16];
	size_t room = (size_t)(l->max - l->cols), need;

	if (f->kind != TB_CODE_PYTHON) {
		line_text(l, name);
		return;
	}

	snprintf(num, sizeof(num), ":%d)", (int)f->firstlineno);
	need = count_cols(name) + 2 + count_cols(file) + strlen(num);
	line_text(l, name);
	line_text(l, " (");
	if (need > room && room > count_cols(name) + 2 + strlen(num) + 6) {
		line_text(l, "...");
		file = tail_cols(file, room - count_cols(name) - 2 - strlen(num) - 3);
	}
	line_text(l, file);
	line_text(l, num);
}

static void fmt_time(char *buf, size_t len, double s)
{
	snprintf(buf, len, s < 100 ? "%.2fs" : s < 10000 ? "%.1fs" : "%.0fs", s);
}

static double pct(uint64_t n, uint64_t all)
{
	return all ? 100.0 * (double)n / (double)all : 0.0;
}

static void filter_label(const struct tb_topview *v, char *buf, size_t len)
{
	const struct tb_profile *p = v->p;
	int pi = tb_profile_find_process(p, v->filter_pid);
	const char *comm = pi >= 0 ? tb_str(&p->pstrs, p->procs[pi].comm) : "?";

	if (v->filter == TB_TOP_PROCESS) {
		snprintf(buf, len, "process %u %s", v->filter_pid, comm);
	} else if (v->filter == TB_TOP_THREAD) {
		const struct tb_tinfo *t = &p->threads[v->filter_thread];

		snprintf(buf, len, "thread %u %s (pid %u)", t->tid, tb_str(&p->strs, t->name), t->pid);
	} else if (v->filter == TB_TOP_TASK && v->filter_task < p->sym.n) {
		snprintf(buf, len, "task %s", tb_str(&p->strs, p->sym.codes[v->filter_task].qualname));
	} else {
		snprintf(buf, len, "all");
	}
}

static void draw_status(struct tb_frame_buf *fb, const struct tb_topview *v,
			const struct tb_top_status *st, int cols)
{
	struct line l;
	char filter[160];

	line_start(&l, cols);
	line_printf(&l, "Sampling %u Hz: %.0f samples/s  total %llu  lost %llu  procs %u  threads %u",
		    st->hz, v->rate, (unsigned long long)st->samples, (unsigned long long)st->lost,
		    v->p->nprocs, v->p->nthreads);
	emit(fb, 1, &l, "\033[1m");
	filter_label(v, filter, sizeof(filter));
	line_start(&l, cols);
	if (v->filled < v->window)
		line_printf(&l, "Window %us of %us", v->filled, v->window);
	else
		line_printf(&l, "Window %us", v->window);
	line_printf(&l, "  Sort: %s  Filter: %s", v->sort == TB_TOP_BY_TOTAL ? "total" : "own", filter);
	emit(fb, 2, &l, NULL);
	line_start(&l, cols);
	if (st->help)
		line_text(&l, "q quit  o/t sort by own/total  p process  h/Tab thread  y task  a all  j/k select");
	else if (st->message)
		line_text(&l, st->message);
	else
		line_text(&l, "Press ? for help, q to quit");
	emit(fb, 3, &l, st->help || st->message ? NULL : "\033[2m");
}

static void draw_header(struct tb_frame_buf *fb, const struct tb_topview *v, int row, int cols)
{
	struct line l;
	int own = v->sort == TB_TOP_BY_OWN;

	line_start(&l, cols);
	line_printf(&l, " %7s%8s", own ? "*%Own" : "%Own", own ? "%Total" : "*%Total");
	if (cols >= NARROW)
		line_printf(&l, "%9s%10s", "OwnTime", "TotalTime");
	if (has_modules(v->p))
		line_printf(&l, "  %-*s", MODULE_COLS, "Module");
	line_text(&l, "  Function (file:line)");
	line_pad(&l);
	emit(fb, row, &l, "\033[7m");
}

static void draw_row(struct tb_frame_buf *fb, const struct tb_topview *v, const struct tb_top_row *r,
		     unsigned hz, int selected, int row, int cols)
{
	char own[24], total[24];
	struct line l;

	fmt_time(own, sizeof(own), (double)r->own / hz);
	fmt_time(total, sizeof(total), (double)r->total / hz);
	line_start(&l, cols);
	line_printf(&l, "%c%6.1f%%%7.1f%%", selected ? '>' : ' ', pct(r->own, v->view_samples),
		    pct(r->total, v->view_samples));
	if (cols >= NARROW)
		line_printf(&l, "%9s%10s", own, total);
	if (has_modules(v->p))
		line_module(&l, v->p, &v->funcs.f[r->func]);
	line_text(&l, "  ");
	line_function(&l, v->p, &v->funcs.f[r->func]);
	if (selected)
		line_pad(&l);
	emit(fb, row, &l, selected ? "\033[1;7m" : NULL);
}

static void draw_table(struct tb_frame_buf *fb, const struct tb_topview *v, unsigned hz, int first_row,
		       int height, int cols)
{
	uint32_t top = v->sel_row >= (uint32_t)height ? v->sel_row - (uint32_t)height + 1 : 0;
	struct line l;

	for (int i = 0; i < height; i++) {
		uint32_t r = top + (uint32_t)i;

		if (r < v->nrows) {
			draw_row(fb, v, &v->rows[r], hz, r == v->sel_row, first_row + i, cols);
			continue;
		}
		line_start(&l, cols);
		if (i == 0)
			line_text(&l, "  (no Python samples in the window)");
		emit(fb, first_row + i, &l, NULL);
	}
}

static void draw_opcodes(struct tb_frame_buf *fb, struct tb_topview *v, int first_row, int height, int cols)
{
	struct tb_top_op ops[32];
	unsigned max = height - 2 < 32 ? (unsigned)(height - 2) : 32;
	uint64_t leaf;
	unsigned n = tb_top_opcodes(v, ops, max, &leaf);
	struct line l;

	line_start(&l, cols);
	if (v->sel_func == UINT32_MAX)
		line_text(&l, "Instructions: no function selected");
	else
		line_printf(&l, "Instructions of %s (innermost frame, %llu samples in the window)",
			    tb_str(&v->p->strs, v->funcs.f[v->sel_func].qualname), (unsigned long long)leaf);
	line_pad(&l);
	emit(fb, first_row, &l, "\033[7m");
	line_start(&l, cols);
	line_printf(&l, " %7s  %-32s %s", "Share", "Instruction", "Base instruction");
	emit(fb, first_row + 1, &l, "\033[1m");
	for (int i = 0; i < height - 2; i++) {
		line_start(&l, cols);
		if ((unsigned)i < n)
			line_printf(&l, " %6.1f%%  %-32s %s", pct(ops[i].n, leaf), ops[i].name, ops[i].base);
		else if (i == 0)
			line_text(&l, leaf ? "  (no opcode was read)" : "  (not an innermost frame in the window)");
		emit(fb, first_row + 2 + i, &l, NULL);
	}
}

void tb_top_draw(struct tb_topview *v, const struct tb_top_status *st, int rows, int cols,
		 struct tb_frame_buf *fb)
{
	int panel = !st->opcodes ? 0 : rows >= 20 ? 8 : rows >= 14 ? 5 : 0;
	int table = rows - 4 - panel;
	unsigned hz = st->hz ? st->hz : 1;
	struct line l;

	fb->n = 0;
	fb_put(fb, "\033[H", 3);
	if (table < 1 || cols < 20) {
		line_start(&l, cols);
		line_text(&l, "terminal too small");
		emit(fb, 1, &l, NULL);
		fb_put(fb, "\033[J", 3);
		return;
	}
	draw_status(fb, v, st, cols);
	draw_header(fb, v, 4, cols);
	draw_table(fb, v, hz, 5, table, cols);
	if (panel)
		draw_opcodes(fb, v, 5 + table, panel, cols);
}
