/* walk.h: walk the Python stacks of every thread of a process from user
 * space (for `dump`), with the same layout data the BPF program uses. */
#ifndef TB_PYWALK_H
#define TB_PYWALK_H
#include <stdint.h>
#include "cpython/discover.h"

#define TB_WALK_MAX_THREADS 4096

struct tb_uframe {
	uint64_t code;
	int32_t offset;
	uint16_t code_id;
	uint8_t entry;           /* the frame an evaluator call was made for (TB_FF_ENTRY) */
};

struct tb_uthread {
	uint64_t tstate;
	uint64_t ident;          /* pthread_self() / threading.get_ident() */
	uint32_t native_tid;     /* 0 when the version does not record it (3.10) */
	int holds_gil;
	int in_gc;               /* holds the GIL while its interpreter collects garbage */
	int depth;
	int truncated;
	const char *error;       /* why the stack could not be read, or NULL */
	struct tb_uframe *frames; /* innermost first, `depth` of them */
};

/* Walk every thread of every interpreter of t. Returns the number of threads
 * (<= max) filled into out, or -1 with err when the runtime is unreadable or
 * the layout's offsets do not fit the read buffers. On success err is "" or
 * one sentence on what cut the walk short (a thread list that loops back, more
 * threads than max, the read budget spent); a thread whose own stack could not
 * be read completely (a frame chain that loops back, say) says so in its error.
 * Each thread's frames array is malloc'ed (free with tb_walk_free). */
int tb_walk_process(const struct tb_target *t, struct tb_uthread *out, int max, int max_depth,
		    char *err, size_t errlen);
void tb_walk_free(struct tb_uthread *th, int n);

#endif
