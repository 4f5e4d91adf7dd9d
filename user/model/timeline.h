/* timeline.h: time inside a profile.  Counts per (series, time bucket):
 * the series are the profile's unique stacks (how often each ran in each
 * bucket) and, per thread, its states (on/off CPU, GIL held or waited, GC,
 * exception: struct tb_tinfo's counters).  Buckets start TB_TL_FIRST_NS
 * wide from the first sample; when a sample falls past TB_TL_MAX_BUCKETS
 * buckets, or the cells pass TB_TL_MAX_CELLS, every bucket doubles in width
 * (pairs merged), so memory is O(unique stacks x buckets used), bounded,
 * and a long capture has coarser buckets. */
#ifndef TB_TIMELINE_H
#define TB_TIMELINE_H
#include <stdint.h>

#define TB_TL_FIRST_NS (10ull * 1000 * 1000)   /* 10 ms */
#define TB_TL_MAX_BUCKETS 2048u
#define TB_TL_MAX_CELLS (1u << 24)              /* 256 MiB of cells at most */
#define TB_TL_MAX_WIDTH_NS (1ull << 52)         /* a bucket wider than 52 days: stop doubling */

/* Thread states, in the order of struct tb_tinfo's counters. */
enum tb_tl_state { TB_TS_ON_CPU, TB_TS_OFF_CPU, TB_TS_GIL_HELD, TB_TS_GIL_WAIT, TB_TS_GC,
		   TB_TS_EXCEPTION, TB_TS_N };
extern const char *const tb_tl_state_names[TB_TS_N];

struct tb_tcell {
	uint32_t series;   /* stack index, or thread * TB_TS_N + state */
	uint32_t bucket;
	uint64_t count;
};

/* One kind of series: cells in arrival order (a (series, bucket) may repeat
 * until the next tb_timeline_normalize), the newest cell of each series. */
struct tb_tseries {
	struct tb_tcell *c;
	uint32_t n, cap;
	uint32_t *last;    /* series -> cell index + 1 (0: none) */
	uint32_t nlast;
};

struct tb_timeline {
	int on;                  /* any cell yet: origin and width are set */
	uint64_t origin_ns;      /* CLOCK_MONOTONIC of bucket 0's start (live captures) */
	int64_t origin_unix_ns;  /* wall time of bucket 0's start */
	uint64_t width_ns;       /* bucket width */
	uint32_t nbuckets;       /* buckets used: highest bucket + 1 */
	/* the bucket of the last instant looked up, [hint_lo, hint_hi) at this width: the
	 * next sample most likely falls in it too (no division) */
	uint64_t hint_lo, hint_hi, hint_width;
	uint32_t hint_bucket;
	struct tb_tseries stacks, states;
};

void tb_timeline_free(struct tb_timeline *t);
/* Start at a sample taken at mono_ns (CLOCK_MONOTONIC), if not started. */
void tb_timeline_start(struct tb_timeline *t, uint64_t mono_ns);
/* Add count to a series over [from_ns, to_ns] (CLOCK_MONOTONIC; one
 * instant if equal), spread over the buckets in proportion. */
void tb_timeline_add(struct tb_timeline *t, struct tb_tseries *s, uint32_t series, uint64_t from_ns,
		     uint64_t to_ns, uint64_t count);
/* Add count to a series in a bucket (capture files, slices, tests);
 * bucket < TB_TL_MAX_BUCKETS. */
void tb_timeline_put(struct tb_timeline *t, struct tb_tseries *s, uint32_t series, uint32_t bucket,
		     uint64_t count);
/* qsort order of cells: by series, then bucket. */
int tb_tcell_cmp(const void *a, const void *b);
/* Sort each kind's cells by (series, bucket), one cell per pair. */
void tb_timeline_normalize(struct tb_timeline *t);

#endif
