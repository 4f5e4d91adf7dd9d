/* unwind_build.h: a worker thread that builds what native unwinding needs
 * of one ELF file (its unwind table, evaluator ranges, function symbols)
 * while the agent goes on draining samples: jobs in, results out, nothing
 * else shared. */
#ifndef TB_UNWIND_BUILD_H
#define TB_UNWIND_BUILD_H
#include <stdint.h>
#include "proc/cfi.h"
#include "proc/nativesym.h"
#include "cpython/evalrange.h"

struct tb_ubuild_result {
	uint32_t file;            /* the job's file and id, as given */
	uint64_t id;
	int table_ok;             /* cfi holds the table; else err says why */
	struct tb_cfi cfi;        /* rows and FDE ranges (the FDEs are handed to syms) */
	struct tb_eval_ranges eval; /* n == 0: not an interpreter */
	struct tb_nsym_file syms;
	uint64_t cpu_ns;          /* CPU time the build took */
	char err[200];
};

struct tb_ubuild;

/* threaded 0: tb_ubuild_submit builds at once (tests). */
struct tb_ubuild *tb_ubuild_start(int threaded);
/* Build file `file` (id) from fd (taken: closed when done); debug_fd: a
 * candidate for its debug file (proc/debugfile.h), or -1 (taken too);
 * module: its base name; size: the file's, which orders the queue (the smallest first:
 * a file that is slow to build, a big one, delays only bigger ones). */
void tb_ubuild_submit(struct tb_ubuild *b, uint32_t file, uint64_t id, int fd, int debug_fd,
		      const char *module, uint64_t size);
/* A finished build (malloc'd: free with tb_ubuild_result_free), or NULL. */
struct tb_ubuild_result *tb_ubuild_take(struct tb_ubuild *b);
void tb_ubuild_result_free(struct tb_ubuild_result *r);
/* Jobs submitted and not taken yet. */
uint32_t tb_ubuild_pending(struct tb_ubuild *b);
/* Stop the thread (the build under way finishes; queued jobs are dropped). */
void tb_ubuild_stop(struct tb_ubuild *b);

#endif
