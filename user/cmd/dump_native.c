/* dump_native.c: `dump --native` (see dump_native.h). The registry of capture/unwind.c
 * writes its tables into arrays of ours here (the maps the BPF program would get), which
 * become proc/unwind_ref.c's ranges and files; model/merge.c puts each evaluator frame's
 * Python frames in its place and names the native ones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "capture/clock.h"
#include "capture/taskregs.h"
#include "capture/unwind.h"
#include "cmd/dump_native.h"
#include "cmd/dump_running.h"
#include "model/merge.h"
#include "proc/task.h"
#include "proc/unwind_ref.h"

#define MAX_ROWS (1u << 22)       /* as TB_CFI_MAX_ROWS: one big library's table fits */
#define MAX_FILES 1024            /* file slots */
#define GUESS_WORDS 512           /* stack words searched for a frame record (guess_rbp) */
#define GUESS_CHAIN 4             /* records a guessed frame pointer leads through */
#define GUESS_TRIES 8             /* guessed frame pointers walked from */

struct dump_native {
	pid_t pid;
	struct tb_unwind *reg;
	struct tb_urow *rows;
	struct tb_ufile *files;       /* by slot */
	struct tb_umaps maps;
	int have_maps;
	struct tb_uw_file *uw_files;  /* by slot */
	struct tb_code_range (*tags)[TB_MAX_EVAL];
	struct tb_uw_range ranges[TB_MAX_RANGES];
	uint32_t nranges;
	struct tb_native_codes codes;
	struct tb_taskregs kernel_regs; /* the threads' saved registers (capture/taskregs.c), if it loads */
};

static int set_rows(void *ctx, uint32_t first, const struct tb_urow *rows, uint32_t n)
{
	struct dump_native *d = ctx;

	if (first > MAX_ROWS || n > MAX_ROWS - first)
		return -1;
	memcpy(d->rows + first, rows, (size_t)n * sizeof(*rows));
	return 0;
}

static int set_file(void *ctx, uint32_t slot, const struct tb_ufile *f)
{
	struct dump_native *d = ctx;

	if (!slot || slot >= MAX_FILES)
		return -1;
	d->files[slot] = *f;
	return 0;
}

static int set_ranges(void *ctx, uint32_t pid, const struct tb_umaps *m)
{
	struct dump_native *d = ctx;

	if (pid == (uint32_t)d->pid && m) {
		d->maps = *m;
		d->have_maps = 1;
	}
	return 0;
}

/* The registry's maps as the reference unwinder's ranges and files. */
static void make_ranges(struct dump_native *d)
{
	d->nranges = 0;
	for (uint32_t i = 0; i < d->maps.n && i < TB_MAX_RANGES; i++) {
		const struct tb_urange *r = &d->maps.r[i];
		const struct tb_uw_file *file = NULL;

		if (r->slot && r->slot < MAX_FILES && !(r->flags & TB_UR_PENDING)) {
			const struct tb_ufile *f = &d->files[r->slot];
			struct tb_uw_file *u = &d->uw_files[r->slot];
			uint32_t ne = f->neval < TB_MAX_EVAL ? f->neval : TB_MAX_EVAL;

			for (uint32_t k = 0; k < ne; k++)
				d->tags[r->slot][k] = (struct tb_code_range){ f->eval_lo[k], f->eval_hi[k] };
			*u = (struct tb_uw_file){ f->first < MAX_ROWS && f->nrows <= MAX_ROWS - f->first ?
						  d->rows + f->first : NULL,
						  f->first < MAX_ROWS && f->nrows <= MAX_ROWS - f->first ? f->nrows : 0,
						  f->flags & TB_UF_FP_ONLY ? TB_CFI_FP_ONLY : 0, f->base,
						  d->tags[r->slot], ne };
			file = u;
		}
		d->ranges[d->nranges++] = (struct tb_uw_range){ { r->start, r->end }, r->bias, file };
	}
}

struct dump_native *tb_dump_native_open(pid_t pid, char *err, size_t errlen)
{
	struct dump_native *d = calloc(1, sizeof(*d));
	struct tb_unwind_opts o = { TB_UNWIND_GRACE_NS, TB_UNWIND_REFRESH_NS, 0, 0, 1 };
	struct tb_unwind_maps maps;
	uint64_t now = tb_mono_ns();

	if (!d || !(d->rows = calloc(MAX_ROWS, sizeof(*d->rows))) ||
	    !(d->files = calloc(MAX_FILES, sizeof(*d->files))) ||
	    !(d->uw_files = calloc(MAX_FILES, sizeof(*d->uw_files))) ||
	    !(d->tags = calloc(MAX_FILES, sizeof(*d->tags)))) {
		snprintf(err, errlen, "out of memory");
		tb_dump_native_close(d);
		return NULL;
	}
	d->pid = pid;
	maps = (struct tb_unwind_maps){ d, MAX_ROWS, MAX_FILES, set_rows, set_file, set_ranges };
	d->reg = tb_unwind_new(&maps, &o);
	if (!d->reg || tb_unwind_add_process(d->reg, pid, now)) {
		snprintf(err, errlen, "the mappings of pid %d could not be read", (int)pid);
		tb_dump_native_close(d);
		return NULL;
	}
	/* threaded 0: every build is done; installing them writes the ranges */
	for (int i = 0; i < 4 && (!d->have_maps || tb_unwind_building(d->reg)); i++)
		tb_unwind_poll(d->reg, now + (uint64_t)i * TB_UNWIND_WAIT_NS);
	if (!d->have_maps) {
		snprintf(err, errlen, "the unwind tables of pid %d could not be built", (int)pid);
		tb_dump_native_close(d);
		return NULL;
	}
	make_ranges(d);
	tb_taskregs_read(pid, &d->kernel_regs);  /* none: the registers are guessed */
	d->codes.resolver = tb_unwind_resolver(d->reg);
	return d;
}

/* Does addr hold a return address into code? */
static int in_code(const struct dump_native *d, uint64_t addr)
{
	return tb_code_range_find(d->ranges, d->nranges, sizeof(d->ranges[0]), addr) < d->nranges;
}

/* Is at the start of a chain of GUESS_CHAIN frame records (saved rbp above it on the
 * stack, then a return address into code), or of fewer ending in a saved rbp of 0? */
static int frame_chain_at(struct dump_native *d, uint64_t at)
{
	for (int i = 0; i < GUESS_CHAIN; i++) {
		uint64_t rec[2];

		if (tb_uw_read_pid(&d->pid, at, rec, sizeof(rec)) || !in_code(d, rec[1]))
			return 0;
		if (!rec[0])
			return i > 0;
		if (rec[0] <= at || rec[0] - at > (1u << 20) || (rec[0] & 7))
			return 0;
		at = rec[0];
	}
	return 1;
}

/* The kernel shows no rbp of a blocked thread: candidates for it, for the frames unwound
 * by frame pointer above the leaf (which keeps its caller's rbp): the addresses above sp,
 * lowest first, where a chain of frame records starts (stale records of the leaf's frames
 * among them). Returns how many (<= max). */
static int rbp_candidates(struct dump_native *d, uint64_t sp, uint64_t *out, int max)
{
	uint64_t stack[GUESS_WORDS + 1];
	int n = 0;

	if (tb_uw_read_pid(&d->pid, sp & ~7ull, stack, sizeof(stack)))
		return 0;
	for (uint32_t i = 0; i < GUESS_WORDS && n < max; i++) {
		uint64_t at = (sp & ~7ull) + 8ull * i;

		if (stack[i] > at && stack[i] - at < (1u << 20) && !(stack[i] & 7) && in_code(d, stack[i + 1]) &&
		    frame_chain_at(d, at))
			out[n++] = at;
	}
	return n;
}

/* Without the kernel's registers (capture/taskregs.c: before 5.15, not root): the
 * walk from sp and pc: with rbp 0, then with each candidate rbp; the first that
 * reaches the outermost frame, else the longest. */
static uint32_t walk_blocked(struct dump_native *d, const struct tb_uw_walk *w, uint64_t sp, uint64_t pc,
			     struct tb_uw_frame *out, enum tb_uw_stop *stop)
{
	static struct tb_uw_frame tmp[TB_MAX_NATIVE];
	uint64_t cand[GUESS_TRIES + 1] = { 0 };
	int ncand = 1 + rbp_candidates(d, sp, cand + 1, GUESS_TRIES);
	uint32_t best = 0;

	*stop = TB_UW_NO_REGS;
	for (int i = 0; i < ncand; i++) {
		struct tb_uw_regs regs = { pc, sp, cand[i], 1, 0, 0 }; /* it resumes after the syscall */
		enum tb_uw_stop st;
		uint32_t n = tb_unwind(w, &regs, tmp, &st);

		if ((st == TB_UW_DONE && (*stop != TB_UW_DONE || n > best)) || (*stop != TB_UW_DONE && n > best)) {
			memcpy(out, tmp, n * sizeof(*tmp));
			best = n;
			*stop = st;
		}
	}
	return best;
}

/* Why a sampled walk ended short, or NULL (stop: TB_NS_*). */
static const char *sampled_stop_note(uint8_t stop)
{
	if (stop == TB_NS_NONE)
		return "the process's unwind tables were not loaded when it was sampled";
	return stop == TB_NS_DONE || stop >= TB_NS_MAX ? NULL : tb_uw_stop_names[stop - 1];
}

int tb_dump_native_thread(struct dump_native *d, struct tb_symbolizer *sym, unsigned py_minor,
			  const struct tb_uthread *th, const struct dump_sample *sample, struct dump_frame *out,
			  const char **note, const char **regs_from)
{
	static struct tb_frame py[TB_MAX_FRAMES];
	static struct tb_merge_item items[TB_MERGED_MAX];
	static struct tb_uw_frame nat[TB_MAX_NATIVE];
	uint64_t words[TB_MAX_NATIVE];
	struct tb_uw_walk w = { d->ranges, d->nranges, tb_uw_read_pid, &d->pid, TB_MAX_NATIVE, 1, NULL };
	struct tb_uw_regs regs = { 0 };
	enum tb_uw_stop stop = TB_UW_NO_REGS;
	enum tb_merge_verdict verdict;
	const uint64_t *native = words;
	uint8_t native_stop = TB_NS_NONE;
	uint32_t nnat = 0, npy = (uint32_t)th->depth < TB_MAX_FRAMES ? (uint32_t)th->depth : TB_MAX_FRAMES;
	int64_t nr;
	int n = 0;

	*note = NULL;
	*regs_from = NULL;
	if (sample && sample->taken) {   /* th holds the sample's Python frames (tb_dump_sample_adopt) */
		native = sample->native;
		nnat = sample->nnative;
		native_stop = sample->native_stop;
		*note = sampled_stop_note(native_stop);
	} else {
		switch (th->native_tid ? tb_task_syscall(d->pid, th->native_tid, &nr, &regs.sp, &regs.ip)
				       : TB_TASK_REGS_NONE) {
		case TB_TASK_REGS_BLOCKED:
			if (tb_taskregs_uw(&d->kernel_regs, th->native_tid, regs.sp, regs.ip, &regs)) {
				nnat = tb_unwind(&w, &regs, nat, &stop);
				*regs_from = "kernel";
			} else {
				nnat = walk_blocked(d, &w, regs.sp, regs.ip, nat, &stop);
				*regs_from = "guessed";
			}
			native_stop = nnat ? (uint8_t)(stop + 1) : TB_NS_NONE;
			if (stop != TB_UW_DONE)
				*note = tb_uw_stop_names[stop];
			break;
		case TB_TASK_REGS_RUNNING:
			*note = sample ? sample->why_not : "running (it was blocked when the dump began: not sampled)";
			break;
		default:
			*note = "its registers could not be read";
		}
		for (uint32_t i = 0; i < nnat; i++)
			words[i] = (nat[i].pc & TB_NF_PC_MASK) | (nat[i].flags & TB_UW_TAG ? TB_NF_EVAL : 0) |
				   (nat[i].flags & TB_UW_RA ? TB_NF_RA : 0) | (nat[i].flags & TB_UW_FP ? TB_NF_FP : 0);
	}
	for (uint32_t i = 0; i < npy; i++)
		py[i] = (struct tb_frame){ th->frames[i].code, th->frames[i].offset, th->frames[i].code_id, 0,
					   th->frames[i].entry ? TB_FF_ENTRY : 0 };
	{
		const struct tb_merge_in in = { native, nnat, native_stop, py, npy,
						th->truncated || npy < (uint32_t)th->depth, py_minor };
		uint32_t m = tb_merge(&in, items, &verdict);

		for (uint32_t i = 0; i < m; i++) {
			const struct tb_merge_item *it = &items[i];
			int32_t off;
			int64_t code;

			out[n] = (struct dump_frame){ -1, 0, NULL };
			if (it->kind == TB_MI_PYTHON) {
				out[n].python = it->index;
			} else if (it->kind == TB_MI_NATIVE) {
				code = tb_native_code(&d->codes, sym, (uint32_t)d->pid, native[it->index], py_minor, &off);
				if (code < 0)
					continue;   /* the interpreter's plumbing */
				out[n].code = (uint32_t)code;
			} else {
				out[n].marker = it->kind == TB_MI_TRUNCATED ? "<native truncated>" : "<native unmerged>";
			}
			n++;
		}
	}
	return n;
}

void tb_dump_native_close(struct dump_native *d)
{
	if (!d)
		return;
	tb_native_codes_free(&d->codes);
	tb_taskregs_free(&d->kernel_regs);
	if (d->reg)
		tb_unwind_free(d->reg);
	free(d->rows);
	free(d->files);
	free(d->uw_files);
	free(d->tags);
	free(d);
}
