/* watch.h: processes that appear or end during a capture. */
#ifndef TB_WATCH_H
#define TB_WATCH_H
#include <stdint.h>
#include <sys/types.h>
#include "model/profile.h"
#include "capture/sampler.h"

struct tb_pending {
	pid_t pid;
	uint64_t since_ns;   /* CLOCK_MONOTONIC of the exec event */
	uint64_t next_ns;    /* next discovery attempt */
};

struct tb_watch {
	struct tb_sampler *sampler;
	struct tb_profile *prof;
	struct tb_pending *pending;   /* exec'd, runtime not found yet */
	uint32_t npending, cappending;
	pid_t *exited;                /* to forget once their records are drained */
	uint32_t nexited, capexited;
	uint64_t discovered, not_python, gave_up;
	int quiet;
};

/* Start watching for sampler s (which registers new processes) and the
 * profile p (which gets their names and layouts). */
void tb_watch_init(struct tb_watch *w, struct tb_sampler *s, struct tb_profile *p, int quiet);
/* A lifecycle record from the sampler: TB_REC_EXEC (discover the new image),
 * TB_REC_FORK (a child of a profiled process), TB_REC_EXIT. */
void tb_watch_record(struct tb_watch *w, const struct tb_sample_hdr *h);
/* Retry discovery of exec'd processes that are due; forget exited ones. */
void tb_watch_poll(struct tb_watch *w);
void tb_watch_free(struct tb_watch *w);

#endif
