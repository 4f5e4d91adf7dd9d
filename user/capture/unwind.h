/* unwind.h: the registry of unwind tables for --native (docs/native-unwinding.md):
 * per mapped executable file, its table built once (a worker thread) and
 * loaded into the BPF maps, shared by every process that maps it
 * (refcounts), evicted a grace period after the last one is gone; per
 * process, its executable mappings (umaps), written when its files are
 * ready, copied at fork, dropped at exec and exit, reread when the walk
 * meets a pc outside them (dlopen). */
#ifndef TB_UNWIND_H
#define TB_UNWIND_H
#include <stdint.h>
#include <sys/types.h>
#include "model/merge.h"
#include "tachyon.h"

/* How the registry reaches the BPF maps (a fake one in the unit tests). */
struct tb_unwind_maps {
	void *ctx;
	uint32_t max_rows;        /* urows entries */
	uint32_t max_files;       /* ufiles entries (slot 0 is never used) */
	/* Write urows[first .. first + n); 0 ok. */
	int (*set_rows)(void *ctx, uint32_t first, const struct tb_urow *rows, uint32_t n);
	/* Write ufiles[slot]; 0 ok. */
	int (*set_file)(void *ctx, uint32_t slot, const struct tb_ufile *f);
	/* Write umaps[pid] (m NULL: delete it); 0 ok. */
	int (*set_ranges)(void *ctx, uint32_t pid, const struct tb_umaps *m);
};

struct tb_unwind_opts {
	uint64_t grace_ns;        /* a file unused this long is evicted (60 s) */
	uint64_t refresh_ns;      /* a process's maps are reread at most this often (250 ms) */
	uint64_t wait_ns;         /* a new process's mappings wait this long for its tables (2 s) */
	int threaded;             /* build in a worker thread (0: at once: tests) */
	int quiet;                /* no notes on stderr */
};
#define TB_UNWIND_GRACE_NS (60ull * 1000 * 1000 * 1000)
#define TB_UNWIND_REFRESH_NS (250ull * 1000 * 1000)
#define TB_UNWIND_WAIT_NS (2000ull * 1000 * 1000)
#define TB_UNWIND_MAX_FILE (1ull << 30)   /* larger files get no table */
#define TB_UNWIND_MAX_FILES 16384         /* files known at a time */
#define TB_UNWIND_MAX_PROCS 8192          /* processes followed at a time */
#define TB_UNWIND_GRANULE 512             /* rows are allocated in these units */
#define TB_UNWIND_MAX_SYM_BYTES (512ull << 20) /* symbols (names, entries) of all files
					   * kept at once: past it a file keeps none */
#define TB_UNWIND_MAX_QUEUED 4096         /* files waiting for their build (each holds a
					   * descriptor; at most half the descriptor limit,
					   * raised to the hard one): past it, no table */

struct tb_unwind_stats {
	uint64_t files;           /* known now */
	uint64_t tables;          /* of which with rows in urows */
	uint64_t fp_only;         /* of which unwound by frame pointers (FP_ONLY, no table, no room) */
	uint64_t builds, build_failures, build_cpu_ns;
	uint64_t no_room;         /* tables that did not fit in urows (frame pointers instead) */
	uint64_t evictions;
	uint64_t rows_used;       /* urows rows allocated */
	uint64_t processes, refreshes;
	uint64_t refresh_ns;      /* time spent rereading maps (refreshes) */
	uint64_t ranges_dropped;  /* executable mappings beyond TB_MAX_RANGES */
	uint64_t open_failures;   /* mapped files that could not be opened */
	uint64_t not_followed;    /* processes beyond TB_UNWIND_MAX_PROCS */
	uint64_t queue_full;      /* files not built: TB_UNWIND_MAX_QUEUED were waiting */
	uint64_t sym_bytes;       /* symbols kept, bytes (names and entries) */
	uint64_t syms_dropped;    /* files whose symbols went past TB_UNWIND_MAX_SYM_BYTES */
	uint64_t debug_files;     /* files named from a debug file or MiniDebugInfo */
	uint64_t perf_maps;       /* perf maps (/tmp/perf-PID.map) whose names were taken */
	uint64_t perfmap_names;   /* the names they held */
};

struct tb_unwind;

struct tb_unwind *tb_unwind_new(const struct tb_unwind_maps *maps, const struct tb_unwind_opts *o);
/* Follow process pid: read its mappings, take refs on their files, build
 * the new ones; its ranges are written once they are ready (or after
 * wait_ns). 0 ok; -1 (gone, too many processes). */
int tb_unwind_add_process(struct tb_unwind *u, pid_t pid, uint64_t now_ns);
/* Wait until the ranges of pid (added) are written: its files built, or wait_ns after
 * it was added (the files still building then stop its walks, counted as not ready).
 * *files: the files it maps (the vDSO included), *pending: of which not built yet.
 * 0, or -1 (not followed). */
int tb_unwind_wait(struct tb_unwind *u, pid_t pid, uint32_t *files, uint32_t *pending);
/* child was forked by parent: it maps what its parent maps (the BPF
 * program copied the ranges). */
void tb_unwind_fork(struct tb_unwind *u, pid_t parent, pid_t child, uint64_t now_ns);
/* pid exited or exec'd (the BPF program deleted its ranges): its refs go. */
void tb_unwind_forget(struct tb_unwind *u, pid_t pid, uint64_t now_ns);
/* A walk of pid met a pc in no known mapping: reread its maps (at most
 * every refresh_ns). */
void tb_unwind_unknown_pc(struct tb_unwind *u, pid_t pid, uint64_t now_ns);
/* Install finished builds, write the ranges of processes now ready, evict
 * files unused for the grace period.  Call often. */
void tb_unwind_poll(struct tb_unwind *u, uint64_t now_ns);
/* Builds not installed yet (queued, running, or done and not polled). */
uint32_t tb_unwind_building(struct tb_unwind *u);
/* Where native pcs lie, for the merge (model/merge.h); valid while u is. */
const struct tb_native_resolver *tb_unwind_resolver(struct tb_unwind *u);
void tb_unwind_stats(const struct tb_unwind *u, struct tb_unwind_stats *out);
void tb_unwind_free(struct tb_unwind *u);

#endif
