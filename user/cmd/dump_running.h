/* dump_running.h: `dump --native` for threads running on a CPU. Their registers cannot
 * be read without stopping them, so a short capture of the process (capture/session.c,
 * the BPF program with --native, a high rate) takes the first sample of each: its Python
 * and native frames from one instant, as `record --native` gets them. */
#ifndef TB_DUMP_RUNNING_H
#define TB_DUMP_RUNNING_H
#include <stdint.h>
#include <sys/types.h>
#include "cpython/walk.h"
#include "tachyon.h"

#define TB_DUMP_SAMPLE_S 0.5      /* sampling ends by then, sampled or not */

/* One thread's first sample (taken), or why there is none (why_not). */
struct dump_sample {
	uint32_t tid;             /* in: the thread (host tid) */
	int taken;
	const char *why_not;      /* not taken: why, one sentence */
	uint16_t flags;           /* TB_F_* */
	uint8_t native_stop;      /* TB_NS_* */
	uint32_t nnative, depth;
	uint64_t after_ns;        /* from the start of sampling to the sample */
	uint64_t native[TB_MAX_NATIVE];   /* leaf first: pc | TB_NF_* */
	struct tb_frame frames[TB_MAX_FRAMES]; /* innermost first */
};

/* Sample the n threads of out (their tid set) of pid until each has a sample, for at
 * most max_s once the program is attached (or until a signal that ends a capture). 0 with
 * each taken or given why_not; -1 with one line in err (not root, the BPF program not
 * loaded, pid gone): none sampled. */
int tb_dump_running_sample(pid_t pid, struct dump_sample *out, int n, double max_s, char *err, size_t errlen);
/* The sample's Python frames and state in th in place of those read from memory (its
 * frames array reallocated): th's frames and native ones are then of one instant.
 * -1 out of memory (th unchanged). */
int tb_dump_sample_adopt(const struct dump_sample *s, struct tb_uthread *th);

#endif
