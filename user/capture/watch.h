/* watch.h: processes that appear or end during a capture. */
#ifndef TB_WATCH_H
#define TB_WATCH_H
#include <stdint.h>
#include <sys/types.h>
#include "lib/hashmap.h"
#include "model/profile.h"
#include "capture/sampler.h"

/* Exec'd processes awaiting discovery at most at a time: more are not
 * looked at (counted in skipped). */
#define TB_WATCH_MAX_PENDING 1024

struct tb_pending {
	uint32_t pid;        /* the key of index: first field, no padding */
	uint32_t pad;
	uint64_t since_ns;   /* CLOCK_MONOTONIC of the exec event */
	uint64_t next_ns;    /* next discovery attempt */
};

struct tb_watch {
	struct tb_sampler *sampler;
	struct tb_profile *prof;
	struct tb_pending *pending;   /* exec'd, runtime not found yet */
	uint32_t npending, cappending;
	struct tb_hmap pending_index; /* pid -> pending */
	uint64_t discovered, not_python, skipped;
	int quiet;
};

/* Start watching for sampler s (which registers new processes) and the
 * profile p (which gets their names and layouts). */
void tb_watch_init(struct tb_watch *w, struct tb_sampler *s, struct tb_profile *p, int quiet);
/* A lifecycle record from the sampler: TB_REC_EXEC (the old image ends;
 * discover the new one), TB_REC_FORK (a child of a profiled process),
 * TB_REC_EXIT (the last thread of a profiled process ended).  O(1). */
void tb_watch_record(struct tb_watch *w, const struct tb_sample_hdr *h);
/* Retry discovery of exec'd processes that are due. */
void tb_watch_poll(struct tb_watch *w);
void tb_watch_free(struct tb_watch *w);

#endif
