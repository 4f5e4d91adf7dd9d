/* sampler.h: the BPF side as seen from the agent: load, attach, drain. */
#ifndef TB_SAMPLER_H
#define TB_SAMPLER_H
#include <stdint.h>
#include "cpython/discover.h"
#include "model/profile.h"

struct tb_sampler;
/* Where the lifecycle records (TB_REC_EXEC, TB_REC_FORK, TB_REC_EXIT) go:
 * the capture session hands them to capture/watch.c (tb_watch_record). */
typedef void (*tb_lifecycle_fn)(void *ctx, const struct tb_sample_hdr *h);

struct tb_sampler_opts {
	unsigned hz;          /* sampling frequency per CPU */
	unsigned max_depth;
	int max_depth_given;  /* --max-depth was given: kept even where the walk cannot reach it */
	unsigned ringbuf_mb;
	int read_opcodes;     /* 0 none, 1 innermost frame, 2 every frame */
	int bench_walk;       /* benchmarks: 1 skips the code-object read */
	unsigned bench_task_reads; /* benchmarks: extra reads of the running task per sample */
	int cpu;              /* -1: every CPU; else only this one (benchmarks) */
	int floor;            /* attach the empty floor program instead (benchmarks) */
	int follow_mode;      /* TB_FOLLOW_* */
	int wall;             /* also record off-CPU time at scheduler switches */
	int note_no_gil;      /* --mode gil: say of each free-threaded target that it has no GIL */
	int kernel;           /* --kernel: kernel stacks in the records */
	int async_aware;      /* --async-aware: the running asyncio task in the records */
	const char *cgroup;   /* only tasks below this cgroup v2 directory, or NULL */
	unsigned native_depth; /* --native: native frames per sample, 0 off */
	unsigned native_table_mb; /* the unwind rows array (urows), MiB */
	int quiet;            /* no notes on stderr */
};

/* Load and verify the BPF program and attach it on every online CPU.
 * Records drained go to prof (stacks, wake-ups) and to lifecycle(ctx, ...)
 * (process exec, fork and exit; NULL: dropped). NULL with one line in err
 * on failure (not root, no BPF, ...). */
struct tb_sampler *tb_sampler_open(const struct tb_sampler_opts *o, struct tb_profile *prof,
				   tb_lifecycle_fn lifecycle, void *ctx, char *err, size_t errlen);
/* Start sampling a discovered process (with note_no_gil, one line on stderr if it is
 * free-threaded); with --native and wait (a target known at the start), once its
 * unwind tables are built (at most TB_UNWIND_WAIT_NS; one line on stderr). 0 ok. */
int tb_sampler_add(struct tb_sampler *s, const struct tb_target *t, int wait);
/* Follow the children of pid (--subprocesses). */
int tb_sampler_follow(struct tb_sampler *s, pid_t pid);
/* Stop sampling a process (e.g. it exited). */
void tb_sampler_remove(struct tb_sampler *s, pid_t pid);
/* Drain the ring buffer for up to timeout_ms. Returns records consumed or -1. */
int tb_sampler_poll(struct tb_sampler *s, int timeout_ms);
/* Sum a BPF counter (enum tb_counter) over CPUs. */
uint64_t tb_sampler_counter(struct tb_sampler *s, int idx);
/* The program's shape, for people: "bpf_loop" or the bounded one. */
const char *tb_sampler_shape(const struct tb_sampler *s);
/* --native: the unwind-table registry (NULL when off). */
struct tb_unwind *tb_sampler_unwind(struct tb_sampler *s);
/* The loaded program's id, for bpftool / bpf_stats. */
int tb_sampler_prog_id(struct tb_sampler *s);
void tb_sampler_close(struct tb_sampler *s);
/* libbpf says nothing on stderr (its warnings with TB_DEBUG_BPF=1): for every BPF load */
void tb_sampler_quiet_libbpf(void);

#endif
