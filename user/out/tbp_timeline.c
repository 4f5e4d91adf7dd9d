/* tbp_timeline.c: the timeline section of a capture file (tag
 * TB_CAP_SEC_TIMELINE, docs/capture-format.md section 7): the bucket width,
 * the wall time of bucket 0, the buckets used, then the cells of the
 * stacks and of the thread states, each sorted by (series, bucket).  The
 * reader checks every cell against the profile read before it: a series
 * names a stack (or a thread's state), a bucket is one of those used, and
 * the cells of a series add up to exactly its count. */
#include <stdlib.h>
#include <string.h>
#include "lib/mem.h"
#include "out/tbp_sections.h"

int tb_cap_timeline_present(const struct tb_profile *p)
{
	return p->tl.on && (p->tl.stacks.n || p->tl.states.n);
}

/* The cells sorted, one per (series, bucket), without touching p. */
static void put_cells(struct tb_buf *b, const struct tb_tseries *s)
{
	struct tb_tcell *c = tb_calloc(s->n, sizeof(*c));
	uint32_t n = 0;

	if (s->n)
		memcpy(c, s->c, (size_t)s->n * sizeof(*c));
	tb_qsort(c, s->n, sizeof(*c), tb_tcell_cmp);
	for (uint32_t i = 0; i < s->n; i++) {
		if (n && c[n - 1].series == c[i].series && c[n - 1].bucket == c[i].bucket)
			c[n - 1].count += c[i].count;
		else
			c[n++] = c[i];
	}
	tb_cap_u32(b, n);
	for (uint32_t i = 0; i < n; i++) {
		tb_cap_u32(b, c[i].series);
		tb_cap_u32(b, c[i].bucket);
		tb_cap_u64(b, c[i].count);
	}
	free(c);
}

void tb_cap_timeline_write(struct tb_buf *b, const struct tb_profile *p)
{
	tb_cap_u64(b, p->tl.width_ns);
	tb_cap_u64(b, (uint64_t)p->tl.origin_unix_ns);
	tb_cap_u32(b, p->tl.nbuckets);
	put_cells(b, &p->tl.stacks);
	put_cells(b, &p->tl.states);
}

/* Cells of one kind: nseries series, each adding up to want[series]. */
static int get_cells(struct tb_rd *r, struct tb_profile *p, struct tb_tseries *s, uint32_t nseries,
		     uint64_t (*want)(struct tb_profile *, uint32_t), const char *what)
{
	uint32_t n = tb_rd_count(r, 16, "timeline"), prev_series = 0, prev_bucket = 0;
	uint64_t sum = 0;

	if (r->failed)
		return -1;
	if (n > TB_TL_MAX_CELLS)
		return tb_rd_fail(r, "the timeline holds %u %s cells, more than %u", n, what,
				  TB_TL_MAX_CELLS);
	for (uint32_t i = 0; i <= n; i++) {
		uint32_t series = i < n ? (uint32_t)tb_rd_get(r, 4, "timeline") : UINT32_MAX;
		uint32_t bucket = i < n ? (uint32_t)tb_rd_get(r, 4, "timeline") : 0;
		uint64_t count = i < n ? tb_rd_get(r, 8, "timeline") : 0;

		if (r->failed)
			return -1;
		if (i && series != prev_series) { /* the previous series is complete */
			if (sum != want(p, prev_series))
				return tb_rd_fail(r, "the timeline's %s cells of %u add up to %llu, not %llu",
						  what, prev_series, (unsigned long long)sum,
						  (unsigned long long)want(p, prev_series));
			sum = 0;
		}
		if (i == n)
			break;
		if (series >= nseries || bucket >= p->tl.nbuckets || !count)
			return tb_rd_fail(r, "a timeline %s cell names series %u of %u, bucket %u of %u, "
					  "count %llu", what, series, nseries, bucket, p->tl.nbuckets,
					  (unsigned long long)count);
		if (i && (series < prev_series || (series == prev_series && bucket <= prev_bucket)))
			return tb_rd_fail(r, "the timeline's %s cells are not sorted", what);
		if (count > want(p, series) - sum)
			return tb_rd_fail(r, "the timeline's %s cells of %u add up to more than %llu", what,
					  series, (unsigned long long)want(p, series));
		sum += count;
		tb_timeline_put(&p->tl, s, series, bucket, count);
		prev_series = series;
		prev_bucket = bucket;
	}
	return 0;
}

static uint64_t stack_count(struct tb_profile *p, uint32_t i)
{
	return p->stacks[i].count;
}

static uint64_t state_count(struct tb_profile *p, uint32_t i)
{
	return *tb_tinfo_state(&p->threads[i / TB_TS_N], i % TB_TS_N);
}

int tb_cap_timeline_read(struct tb_rd *r, struct tb_profile *p)
{
	struct tb_timeline *tl = &p->tl;
	uint64_t width = tb_rd_get(r, 8, "timeline"), origin = tb_rd_get(r, 8, "timeline");
	uint32_t nbuckets = (uint32_t)tb_rd_get(r, 4, "timeline");

	if (r->failed)
		return -1;
	if (!width || width > TB_TL_MAX_WIDTH_NS || origin > (uint64_t)INT64_MAX || !nbuckets ||
	    nbuckets > TB_TL_MAX_BUCKETS)
		return tb_rd_fail(r, "the timeline's buckets (%llu ns wide, %u of them, from %lld) are "
				  "impossible", (unsigned long long)width, nbuckets, (long long)origin);
	if ((uint64_t)p->nthreads > UINT32_MAX / TB_TS_N)
		return tb_rd_fail(r, "too many threads for a timeline");
	tl->on = 1;
	tl->width_ns = width;
	tl->origin_unix_ns = (int64_t)origin;
	tl->nbuckets = nbuckets;
	/* the cells must cover every count, and a series without cells counts 0 */
	if (get_cells(r, p, &tl->stacks, p->nstacks, stack_count, "stack") ||
	    get_cells(r, p, &tl->states, p->nthreads * TB_TS_N, state_count, "thread state"))
		return -1;
	for (uint32_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].count && (i >= tl->stacks.nlast || !tl->stacks.last[i]))
			return tb_rd_fail(r, "stack %u has %llu samples and no timeline cell", i,
					  (unsigned long long)p->stacks[i].count);
	for (uint32_t i = 0; i < p->nthreads * TB_TS_N; i++)
		if (state_count(p, i) && (i >= tl->states.nlast || !tl->states.last[i]))
			return tb_rd_fail(r, "thread %u's %s count has no timeline cell", i / TB_TS_N,
					  tb_tl_state_names[i % TB_TS_N]);
	tl->nbuckets = nbuckets; /* tb_timeline_put raised it to the highest bucket + 1 at most */
	return 0;
}
