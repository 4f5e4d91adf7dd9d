/* tasks.h: --async-aware: the <task NAME> frames of a sample.  The running task the
 * BPF program recorded and the tasks awaiting it (cpython/asyncio.c) are read once per
 * (pid, task, coroutine) and re-read when that is older than TB_TASK_REFRESH_NS (an await
 * chain can change; a reused task address has another coroutine, so another key), within
 * a budget of reads per second.  Each
 * task is a code entry of kind TB_CODE_TASK named "<task NAME>", one per name. */
#ifndef TB_TASKS_H
#define TB_TASKS_H
#include <stdint.h>
#include "cpython/asyncio.h"
#include "lib/hashmap.h"
#include "model/symbolize.h"
#include "tachyon.h"

#define TB_TASK_REFRESH_NS (250ull * 1000 * 1000)
#define TB_TASK_CACHE_MAX 65536   /* entries before the cache starts over */
/* Task reads (each up to TB_TASK_CHAIN tasks) per second of sample time, at most: a target
 * that shows a new task address in every sample cannot make the agent read without end;
 * past it, a new task's samples have no task frames and a stale entry is kept. */
#define TB_TASK_READS_PER_S 2000

struct tb_task_entry {
	uint32_t pid, coro32;     /* the key: pid, coroutine's low bits, task (no padding) */
	uint64_t task;
	uint64_t read_ns;         /* sample time it was read at */
	uint64_t coro_code;       /* the code object where the task's frames begin, 0: unknown */
	uint32_t n;               /* task frames, 0: not read, or gone (finished, freed, reused) */
	uint32_t codes[TB_TASK_CHAIN]; /* innermost (the task) first */
};

/* A process's asyncio offsets checked against its own AsyncioDebug section
 * (cpython/asyncio.c: tb_asyncio_verify) before its tasks are read. */
struct tb_task_module {
	uint32_t pid;
	int8_t verdict;           /* 1 equal, -1 different (no task frames), 0 not found yet */
	uint8_t tries;            /* looks made while not found (at most TB_TASK_VERIFY_TRIES) */
	uint64_t tried_ns;        /* sample time of the last look */
};
#define TB_TASK_VERIFY_TRIES 8

/* A code object seen as a task's coroutine in process pid: where the frame of a task
 * that was gone before it was read goes. */
struct tb_task_coro {
	uint32_t pid, zero;       /* the key: pid, 0, code (no padding) */
	uint64_t code;
};

struct tb_tasks {
	struct tb_task_entry *e;
	uint32_t n, cap;
	struct tb_hmap index;
	struct tb_task_module *m;   /* one per process with task samples */
	uint32_t nm, capm;
	struct tb_hmap mindex;
	struct tb_task_coro *c;     /* coroutine codes of tasks read */
	uint32_t nc, capc;
	struct tb_hmap cindex;
	uint32_t finished_code;   /* "<task (finished)>" (0: not made yet) */
	struct tb_task_entry finished; /* what a gone task's samples get */
	uint64_t refused;         /* processes whose section differs: no task frames */
	uint64_t reads, failed;   /* tasks read, reads that failed */
	uint64_t skipped;         /* reads not made: the budget was spent */
	uint64_t sampled;         /* samples (and off-CPU stacks) whose thread ran a task */
	uint64_t gone;            /* of which the task was gone (finished, freed) when read:
				   * given a <task (finished)> frame */
	uint64_t over_budget;     /* of which not read: TB_TASK_READS_PER_S spent */
	uint64_t refused_samples; /* of which in a process whose offsets were refused */
	uint64_t window_ns;       /* start of the current second (sample time) */
	uint32_t window_reads;    /* reads in it */
};

void tb_tasks_free(struct tb_tasks *t);
/* The entry of the sample's running task (h->task != 0) of the process l describes,
 * read if new or stale (a stale one that cannot be read again keeps what it had); a
 * task gone before it could be read (finished and freed, its address reused) gets the
 * one "<task (finished)>" frame; NULL when over the read budget or the process's own
 * AsyncioDebug section says other offsets than its version's row (one line on stderr,
 * once).  Every sample is counted in t (sampled, gone, over_budget, refused_samples). */
const struct tb_task_entry *tb_tasks_lookup(struct tb_tasks *t, struct tb_symbolizer *sym,
					    pid_t pid, const struct tb_layout *l,
					    const struct tb_sample_hdr *h);
/* Has code object addr been the coroutine of a task read in process pid? */
int tb_tasks_known_coro(const struct tb_tasks *t, uint32_t pid, uint64_t addr);
/* The code entry of a task named name ("<task name>"), added on first sight. */
uint32_t tb_task_code(struct tb_symbolizer *sym, const char *name);

#endif
