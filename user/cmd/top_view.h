/* top_view.h: the model behind tachyon-bpf top: per-second buckets of new
 * samples per stack, summed over a sliding window into per-function own
 * and total counts, with a process / thread filter and a selection. */
#ifndef TB_TOPVIEW_H
#define TB_TOPVIEW_H
#include <stdint.h>
#include "model/functab.h"
#include "model/profile.h"

enum tb_top_sort { TB_TOP_BY_OWN, TB_TOP_BY_TOTAL };
enum tb_top_filter { TB_TOP_ALL, TB_TOP_PROCESS, TB_TOP_THREAD, TB_TOP_TASK };

struct tb_top_entry {
	uint32_t stack;   /* index into the profile's stacks */
	uint32_t count;   /* samples it got during the bucket's second */
};

struct tb_top_bucket {
	struct tb_top_entry *e;
	uint32_t n, cap;
	uint64_t samples;   /* every record of that second (with or without Python) */
};

struct tb_top_row {
	uint32_t func;      /* index into funcs */
	uint64_t own, total;
};

struct tb_top_op {
	char name[40], base[40];
	uint64_t n;
};

struct tb_topview {
	struct tb_profile *p;
	struct tb_functab funcs;     /* (file, qualname, firstlineno, kind) */
	uint32_t *code_func;         /* symbolizer code -> func + 1, 0: not yet */
	uint32_t ncode_func;
	uint64_t *seen;              /* stack counts at the last tick */
	uint32_t nseen;
	uint64_t seen_samples;
	struct tb_top_bucket *buckets;
	unsigned window, head, filled;
	double rate;                 /* records per second over the last tick */
	/* view */
	enum tb_top_sort sort;
	enum tb_top_filter filter;
	uint32_t filter_pid, filter_thread, scope_pid;
	uint32_t filter_task;        /* TB_TOP_TASK: the task's code entry (--async-aware) */
	uint64_t *thread_window;     /* window samples per thread (any filter) */
	uint32_t nthread_window;
	struct tb_top_row *rows;
	uint32_t nrows, caprows;
	uint64_t view_samples;       /* Python samples in the window passing the filter */
	uint32_t sel_row, sel_func;  /* sel_func UINT32_MAX: none */
	int sel_chosen;              /* moved by the user (j/k): the selection follows its function
	                              * through re-sorts and updates; else it is the first row */
	uint64_t stamp;
};

void tb_top_init(struct tb_topview *v, struct tb_profile *p, unsigned window_s);
void tb_top_free(struct tb_topview *v);
/* Close the current second: what the stacks got since the last tick
 * becomes the newest bucket (the oldest one leaves the window). */
void tb_top_tick(struct tb_topview *v, double seconds);
/* Recompute rows for the current window, filter and sort order. */
void tb_top_compute(struct tb_topview *v);
/* Move the selection by delta rows (clamped). */
void tb_top_move(struct tb_topview *v, int delta);
/* Filters: all; the next process (from a thread view: its process); the
 * next thread (of the process in view, or of all); each wraps around to
 * the wider view after the last one. */
void tb_top_filter_all(struct tb_topview *v);
void tb_top_next_process(struct tb_topview *v);
void tb_top_next_thread(struct tb_topview *v);
/* --async-aware: the next asyncio task (samples whose running task, the innermost task
 * frame, it is), in the order tasks were seen; after the last one, all. */
void tb_top_next_task(struct tb_topview *v);
/* Instructions of the selected function's innermost frames in the window,
 * most frequent first: how many filled (at most max); *leaf gets the total. */
unsigned tb_top_opcodes(struct tb_topview *v, struct tb_top_op *ops, unsigned max, uint64_t *leaf);

#endif
