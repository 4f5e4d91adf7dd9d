/* profile.h: samples aggregated as they arrive: processes, threads, and
 * unique stacks of (code object, instruction offset) with counts; a stack's
 * frames, innermost first, are the kernel frames (--kernel), a synthetic
 * frame (<off-CPU>, <GC>), then the Python frames (with native frames, when
 * --native merges them, among them).  A process
 * is a compact record (interned strings) plus, while it runs, what sampling
 * it needs; pid -> newest record and (pid, tid) -> thread are hash indices,
 * so churn (forks, exits, exec, pid reuse) costs O(1) per event. */
#ifndef TB_PROFILE_H
#define TB_PROFILE_H
#include <stdint.h>
#include "cpython/discover.h"
#include "lib/hashmap.h"
#include "lib/strtab.h"
#include "proc/sources.h"
#include "model/kstack.h"
#include "model/merge.h"
#include "model/stackcache.h"
#include "model/symbolize.h"
#include "model/timeline.h"
#include "model/tasks.h"
#include "tachyon.h"

/* Deepest stack a profile holds: every Python frame read, every native and
 * kernel frame, a few synthetic ones (<off-CPU>, and markers a merge of
 * native and Python frames may add) and the task frames (--async-aware). */
#define TB_MAX_STACK (TB_MAX_FRAMES + TB_MAX_NATIVE + TB_MAX_KERNEL + 4 + TB_TASK_CHAIN)
/* Native walk stop reasons counted: native_stop[i] counts TB_NS_* i + 1
 * (include/tachyon.h: TB_NS_DONE .. TB_NS_NO_REGS, walks that were made). */
#define TB_NATIVE_STOPS 8
_Static_assert(TB_NATIVE_STOPS == TB_NS_MAX - 1, "a count per native stop reason");

/* A running process: what sampling it needs beyond its record. */
struct tb_plive {
	struct tb_target target;
	uint64_t names_at;        /* when its Python thread names were last read */
	int names_pending;        /* a thread appeared since, or one was still unnamed */
	int name_retries;         /* reads since the last new thread that left one unnamed */
	uint32_t parent_pid;      /* fork()ed from this process (0: not a fork child) */
	uint32_t parent_serial;   /* ... whose record had this serial (not a reused pid) */
};

/* A process as the outputs know it: a compact record, its strings ids in
 * tb_profile.pstrs.  It lives as long as the profile, except that a process
 * that ends without one sample (and so without threads) is dropped. */
struct tb_pinfo {
	uint32_t pid, ns_pid;
	uint64_t samples;
	uint32_t comm, cmdline, elf_path, version;  /* /proc comm and cmdline, runtime file, "3.12.1" */
	uint32_t version_hex;
	uint8_t free_threaded, shared_lib;
	uint8_t dropped;          /* ended unsampled: gone at the next compaction */
	uint32_t serial;          /* records added before this one (tells a reused pid apart) */
	uint64_t runtime_addr, pycode_type;
	uint32_t last_thread;     /* its newest thread + 1 (0: none); chained by tb_tinfo.prev_in_proc */
	uint32_t older;           /* the record of the same pid before this one + 1 (0: none) */
	struct tb_plive *live;    /* while it runs; NULL once ended (and in capture files) */
};

/* pid -> its newest record (pid reuse, exec: older records stay for output). */
struct tb_pid_newest {
	uint32_t pid;             /* the key: first field, no padding */
	uint32_t proc;            /* record index + 1, 0: none */
};

struct tb_tinfo {
	uint32_t pid, tid, ns_tid;
	uint32_t name;            /* strtab id of the thread name */
	uint64_t ident;           /* pthread_self() == threading.get_ident(), 0 if unknown */
	uint32_t comm;            /* strtab id of /proc/PID/task/TID/comm */
	int python_name;          /* name is the threading.Thread name */
	uint64_t samples;         /* all samples of this thread */
	uint64_t python_samples;  /* samples with a stack (incl. off-CPU weight and <no Python frame>) */
	/* thread status, in samples (off-CPU time in sample units) */
	uint64_t on_cpu, off_cpu, gil_held, gil_wait, gc, exception;
	/* wall mode: the stack recorded at the last switch-out, weighted at wake-up */
	uint32_t pending;         /* stack index + 1, 0: none */
	uint16_t pending_flags;
	uint64_t pending_since;
	double carry;             /* fraction of a sample not yet added */
	uint32_t prev_in_proc;    /* the process's previous thread + 1 (0: none) */
	uint8_t ended;            /* its process ended: never found by (pid, tid) again */
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
/* --native: a frame in a library mapped since or whose table was being built (its callers
 * by frame pointer); counted, with no marker node: its stack is in the tower of its whole
 * ones */
#define TB_SK_NATIVE_PARTIAL 4u

struct tb_stack {
	uint64_t count;
	uint32_t thread;   /* index into threads */
	uint32_t frames;   /* index of the first (innermost) frame in the arena */
	uint16_t depth;    /* at most TB_MAX_STACK */
	uint16_t kind;     /* TB_SK_* */
};

/* h->nkernel kernel PCs and h->nnative native words at words, h->depth Python
 * frames at frames: one sample, valid during the call. */
typedef void (*tb_sample_tap_fn)(void *ctx, const struct tb_sample_hdr *h, const __u64 *words,
				 const struct tb_frame *frames);

struct tb_profile {
	struct tb_strtab strs;
	struct tb_symbolizer sym;
	struct tb_strtab pstrs;     /* process strings (comm, cmdline, paths, versions) */
	struct tb_pinfo *procs;     /* in the order they were found; dropped ones until compacted */
	uint32_t nprocs, capprocs;
	uint32_t ndropped;          /* dropped records not compacted yet */
	uint32_t serials;           /* records ever added */
	struct tb_pid_newest *pids;
	uint32_t npids, cappids;
	struct tb_hmap pid_index;   /* pid -> pids[] */
	struct tb_tinfo *threads;
	uint32_t nthreads, capthreads;
	struct tb_hmap thread_index; /* (pid, tid) -> thread, ended ones until pruned */
	uint32_t ended_indexed;     /* ended threads thread_index still holds */
	struct tb_stack *stacks;
	uint32_t nstacks, capstacks;
	struct tb_hmap stack_index; /* (thread, kind, frames) -> stack */
	struct tb_sframe *arena;
	uint64_t narena, caparena;
	/* the last sample's (pid, tid) -> its process record and thread, while no
	 * record was added, ended or moved (records_changed) since */
	uint32_t last_pid, last_tid, last_proc, last_thread;
	uint64_t last_changed;      /* records_changed + 1 when they were found (0: never) */
	uint64_t records_changed;   /* records added, ended and compactions so far */
	struct tb_stackcache scache; /* raw stack of a sample -> stack (model/stackcache.h) */
	uint64_t scache_forgotten;  /* sym.forgotten when scache was last checked */
	/* counts */
	uint64_t samples;          /* records received */
	uint64_t python_samples;   /* with a stack: Python frames, or native/kernel ones under
				    * <no Python frame> (tb_profile_no_python_shown) */
	uint64_t no_python;        /* on CPU, the thread had no Python state or no frame
				    * (those shown under <no Python frame> included) */
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
	/* native and kernel frames: what the capture asked for, and counts */
	int kernel, native;        /* --kernel, --native */
	struct tb_kstack kstack;   /* kernel symbols: hidden, kptr_restrict, named addresses */
	uint64_t kernel_samples;   /* samples (and off-CPU stacks) with kernel frames */
	uint64_t kernel_frames;    /* kernel frames in them, after trimming */
	uint64_t native_samples, native_frames;   /* the same for native frames */
	uint64_t merged, unmerged, native_truncated; /* native and Python frames put together */
	uint64_t native_stop[TB_NATIVE_STOPS];    /* native walks by why they ended (TB_NS_*) */
	struct tb_sources *sources; /* read each new file's source (heatmap), or NULL */
	/* each sample record (its size and depths checked) before it is counted, or
	 * NULL: what a command keeps of single samples (dump --native's running threads) */
	tb_sample_tap_fn sample_tap;
	void *sample_tap_ctx;
	struct tb_native_codes ncodes; /* --native: native functions, merge counts */
	/* --async-aware: asyncio task frames (model/tasks.h) */
	int async_aware;
	struct tb_tasks tasks;
	uint64_t task_samples;     /* samples (and off-CPU stacks) given task frames */
	uint64_t first_ns, last_ns;
	struct tb_timeline tl;     /* counts of stacks and thread states over time */
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
	unsigned json_version; /* tree JSON written (--json-version): 1, or 2 (also 0: the default) */
};

void tb_profile_init(struct tb_profile *p);
void tb_profile_free(struct tb_profile *p);
/* Register a running process before its samples arrive (its target is
 * copied). A live record of the same pid ends first. Returns its index. */
uint32_t tb_profile_add_process(struct tb_profile *p, const struct tb_target *t);
/* Register the fork()ed child of a running process: the parent's image,
 * names and (by thread ident) Python thread names. Its index, or -1 if the
 * parent is not running. */
int tb_profile_add_fork(struct tb_profile *p, uint32_t parent_pid, uint32_t child_pid);
/* Register a process that is not running (capture files): a record only. */
uint32_t tb_profile_add_ended(struct tb_profile *p, const struct tb_target *t);
/* The newest record of pid (running or not), or -1. */
int tb_profile_find_process(const struct tb_profile *p, uint32_t pid);
/* The process pid ended (exit, exec of a new image): its record keeps what
 * outputs need and leaves sampling; its threads leave the (pid, tid) index;
 * a record without a sample is dropped. No-op if pid has no running record. */
void tb_profile_process_ended(struct tb_profile *p, uint32_t pid);
/* Remove dropped records now (before outputs read procs; otherwise done
 * once they are half the list: until then a dropped record is in procs,
 * with its pid, but never found by it). Record indices change. */
void tb_profile_compact(struct tb_profile *p);
/* Account one raw ring-buffer record after checking its size and depth.
 * Returns 0, or -1 for a malformed record (counted, otherwise ignored). */
int tb_profile_add_record(struct tb_profile *p, const void *data, size_t size);
/* Account one ring-buffer record: h->nkernel kernel PCs and h->nnative
 * native words at words, h->depth Python frames. */
void tb_profile_add_sample(struct tb_profile *p, const struct tb_sample_hdr *h, const __u64 *words,
			   const struct tb_frame *frames);
/* Name kernel frames from k from now on (NULL: none could be read; the
 * profile does not own it), kptr_restrict as read with it (-1: unknown). */
void tb_profile_set_ksyms(struct tb_profile *p, struct tb_ksyms *k, int32_t kptr_restrict);
/* Read the threading.Thread names of the threads seen (processes alive);
 * only_pending: just for processes with threads seen since the last read. */
void tb_profile_read_thread_names(struct tb_profile *p, int only_pending);
/* A thread's counter of a state (enum tb_tl_state). */
uint64_t *tb_tinfo_state(struct tb_tinfo *t, unsigned state);
/* Give pending off-CPU stacks their weight up to end_ns (end of capture). */
void tb_profile_finish(struct tb_profile *p, uint64_t end_ns);
/* Append a thread (capture files, tests); counts start at 0. Returns its index. */
uint32_t tb_profile_add_thread(struct tb_profile *p, uint32_t pid, uint32_t tid, uint32_t ns_tid,
			       const char *name);
/* Add count samples of a stack, frames innermost first, merged with an
 * identical stack (capture files, tests). thread < nthreads, 1 <= depth <=
 * TB_MAX_STACK, every frame's code < sym.n, frames not inside p's arena.
 * No counter is changed; a profile with a timeline has the count in its
 * last time bucket. */
void tb_profile_add_stack(struct tb_profile *p, uint32_t thread, uint16_t kind,
			  const struct tb_sframe *frames, uint16_t depth, uint64_t count);
/* Samples whose stacks are TB_SK_NATIVE_PARTIAL (of a capture, a slice, a .tbp read). */
uint64_t tb_profile_native_partial(const struct tb_profile *p);
/* Remove the stacks without a sample (a time slice's others); stack indices
 * change, the timeline's with them. */
void tb_profile_drop_empty_stacks(struct tb_profile *p);
static inline const struct tb_sframe *tb_stack_frames(const struct tb_profile *p,
						      const struct tb_stack *s)
{
	return &p->arena[s->frames];
}
/* The root frame of the stack of a sample without Python frames (a C thread, a
 * thread not started or gone): its native and kernel frames sit on it. */
#define TB_NO_PYTHON_FRAME "<no Python frame>"
/* Samples shown under <no Python frame>: the count of the stacks rooted there
 * (so the same after a slice or a capture file's read). */
uint64_t tb_profile_no_python_shown(const struct tb_profile *p);
/* The leaf of a stack's Python part: its innermost frame that is neither
 * native nor kernel (a Python frame, or a synthetic one such as <GC>), 0 if
 * every frame is.  Its instruction is the leaf instruction. */
uint16_t tb_stack_leaf(const struct tb_profile *p, const struct tb_stack *s);

#endif
