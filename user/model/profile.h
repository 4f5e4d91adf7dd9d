/* profile.h: samples aggregated as they arrive: processes, threads, and
 * unique stacks of (code object, instruction offset) with counts. */
#ifndef TB_PROFILE_H
#define TB_PROFILE_H
#include <stdint.h>
#include "cpython/discover.h"
#include "lib/hashmap.h"
#include "lib/strtab.h"
#include "proc/sources.h"
#include "model/symbolize.h"
#include "tachyon.h"

struct tb_pinfo {
	struct tb_target target;
	uint32_t ns_pid;
	uint64_t samples;
	char version[32];
	uint64_t names_at;        /* when its Python thread names were last read */
	int names_pending;        /* a thread appeared since */
};

struct tb_tinfo {
	uint32_t pid, tid, ns_tid;
	uint32_t name;            /* strtab id of the thread name */
	uint64_t ident;           /* pthread_self() == threading.get_ident(), 0 if unknown */
	uint32_t comm;            /* strtab id of /proc/PID/task/TID/comm */
	int python_name;          /* name is the threading.Thread name */
	uint64_t samples;         /* all samples of this thread */
	uint64_t python_samples;  /* samples with a Python stack (incl. off-CPU weight) */
	/* thread status, in samples (off-CPU time in sample units) */
	uint64_t on_cpu, off_cpu, gil_held, gil_wait, gc, exception;
	/* wall mode: the stack recorded at the last switch-out, weighted at wake-up */
	uint32_t pending;         /* stack index + 1, 0: none */
	uint16_t pending_flags;
	uint64_t pending_since;
	double carry;             /* fraction of a sample not yet added */
};

enum tb_mode { TB_MODE_CPU, TB_MODE_WALL, TB_MODE_GIL, TB_MODE_EXCEPTION };

struct tb_sframe {
	uint32_t code;   /* symbolizer index */
	int32_t offset;  /* byte offset of the instruction */
	uint8_t opcode;
	uint8_t has_opcode;
};

#define TB_SK_TRUNCATED 1u
#define TB_SK_PARTIAL   2u

struct tb_stack {
	uint64_t count;
	uint32_t thread;   /* index into threads */
	uint32_t frames;   /* index of the first (innermost) frame in the arena */
	uint16_t depth;
	uint16_t kind;     /* TB_SK_* */
};

struct tb_profile {
	struct tb_strtab strs;
	struct tb_symbolizer sym;
	struct tb_pinfo *procs;
	uint32_t nprocs, capprocs;
	struct tb_tinfo *threads;
	uint32_t nthreads, capthreads;
	struct tb_stack *stacks;
	uint32_t nstacks, capstacks;
	struct tb_hmap stack_index; /* (thread, kind, frames) -> stack */
	struct tb_sframe *arena;
	uint64_t narena, caparena;
	/* counts */
	uint64_t samples;          /* records received */
	uint64_t python_samples;   /* with at least one frame */
	uint64_t no_python;        /* thread had no Python state or no frame */
	uint64_t truncated, partial;
	uint64_t frames, unresolved_frames;
	uint64_t lost;             /* from the BPF counters, set at the end */
	uint64_t lost_base;        /* --interval: the counter at this profile's start */
	uint64_t malformed;        /* records with an impossible size or depth */
	uint64_t filtered;         /* samples the mode dropped (gil, exception) */
	uint64_t off_cpu_samples;  /* wall mode: off-CPU weight, in samples */
	uint64_t off_cpu_records;  /* wall mode: stacks recorded at switch-outs */
	enum tb_mode mode;
	int no_gc;                 /* no synthetic <GC> frames */
	struct tb_sources *sources; /* read each new file's source (heatmap), or NULL */
	uint64_t first_ns, last_ns;
	/* capture settings, for writers */
	unsigned hz;
	unsigned max_depth;
	double duration_s;
	int64_t start_unix;
	double agent_cpu_s;    /* user+system CPU of the agent during the capture */
	int by_line;           /* tree nodes per (function, line) */
	double min_fraction;   /* display pruning threshold */
	int sort_key;          /* text table order: 0 own, 1 total, 2 name (--sort) */
	unsigned limit;        /* text table rows, 0 = all (--limit) */
};

void tb_profile_init(struct tb_profile *p);
void tb_profile_free(struct tb_profile *p);
/* Register a process before its samples arrive. Returns its index. */
uint32_t tb_profile_add_process(struct tb_profile *p, const struct tb_target *t);
int tb_profile_find_process(const struct tb_profile *p, uint32_t pid);
/* Account one raw ring-buffer record after checking its size and depth.
 * Returns 0, or -1 for a malformed record (counted, otherwise ignored). */
int tb_profile_add_record(struct tb_profile *p, const void *data, size_t size);
/* Account one ring-buffer record. */
void tb_profile_add_sample(struct tb_profile *p, const struct tb_sample_hdr *h,
			   const struct tb_frame *frames);
/* Read the threading.Thread names of the threads seen (processes alive);
 * only_pending: just for processes with threads seen since the last read. */
void tb_profile_read_thread_names(struct tb_profile *p, int only_pending);
/* Give pending off-CPU stacks their weight up to end_ns (end of capture). */
void tb_profile_finish(struct tb_profile *p, uint64_t end_ns);
/* Append a thread (capture files, tests); counts start at 0. Returns its index. */
uint32_t tb_profile_add_thread(struct tb_profile *p, uint32_t pid, uint32_t tid, uint32_t ns_tid,
			       const char *name);
/* Add count samples of a stack, frames innermost first, merged with an
 * identical stack (capture files, tests). thread < nthreads, 1 <= depth <=
 * TB_MAX_FRAMES + 1 (a synthetic leaf such as <GC> below a full stack),
 * every frame's code < sym.n, frames not inside p's arena.
 * No counter is changed. */
void tb_profile_add_stack(struct tb_profile *p, uint32_t thread, uint16_t kind,
			  const struct tb_sframe *frames, uint16_t depth, uint64_t count);
static inline const struct tb_sframe *tb_stack_frames(const struct tb_profile *p,
						      const struct tb_stack *s)
{
	return &p->arena[s->frames];
}

#endif
