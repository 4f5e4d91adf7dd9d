/* tbp_timeline.c: the timeline section of a capture file (tag
 * TB_CAP_SEC_TIMELINE, docs/capture-format.md section 7): the bucket width,
 * the wall time of bucket 0, the buckets used, then the cells of the
 * stacks and of the thread states, each in (series, bucket) order and
 * written as steps (put_cells), a chunk at a time.  The
 * reader checks every cell against the profile read before it: a series
 * names a stack (or a thread's state), a bucket is one of those used, and
 * the cells of a series add up to exactly its count. */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>
#include <string.h>
#include "lib/mem.h"
#include "output/tbp_sections.h"

int tb_cap_timeline_present(const struct tb_profile *p)
{
	return p->tl.on && (p->tl.stacks.n || p->tl.states.n);
}

/* Unsigned LEB128: 7 bits a byte, low first. */
static void put_var(struct tb_buf *b, uint64_t v)
{
	do {
		tb_cap_u8(b, (unsigned)(v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static uint64_t get_var(struct tb_rd *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint64_t byte = tb_rd_get(r, 1, "timeline");

		if (r->failed)
			return 0;
		if (shift == 63 && byte > 1) {
			tb_rd_fail(r, "a number of the timeline does not fit in 64 bits");
			return 0;
		}
		v |= (byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return v;
	}
	tb_rd_fail(r, "a number of the timeline does not fit in 64 bits");
	return 0;
}

/* The order of s's cells by (series, bucket), as cell indices: NULL when
 * they are in that order already (a profile read from a capture); else a
 * counting sort by series (4 bytes a cell, where a sorted copy of the cells
 * took 16 and qsort as many again), each series' cells then put in bucket
 * order (they arrive in time order, so that is nearly always done). */
static int bucket_cmp(const void *a, const void *b, void *cells)
{
	const struct tb_tcell *c = cells;
	uint32_t x = c[*(const uint32_t *)a].bucket, y = c[*(const uint32_t *)b].bucket;

	return (x > y) - (x < y);
}

static uint32_t *cell_order(const struct tb_tseries *s)
{
	uint32_t *order, *end, nseries = 0, i;

	for (i = 1; i < s->n && tb_tcell_cmp(&s->c[i - 1], &s->c[i]) < 0; i++)
		;
	if (i >= s->n)
		return NULL;
	for (i = 0; i < s->n; i++)
		if (s->c[i].series >= nseries)
			nseries = s->c[i].series + 1;
	order = tb_calloc(s->n, sizeof(*order));
	end = tb_calloc((size_t)nseries + 1, sizeof(*end)); /* series k: cells end[k - 1] .. end[k] */
	for (i = 0; i < s->n; i++)
		end[s->c[i].series + 1]++;
	for (i = 1; i <= nseries; i++)
		end[i] += end[i - 1];
	for (i = 0; i < s->n; i++)
		order[end[s->c[i].series]++] = i; /* end[k] moves from series k's start to its end */
	for (uint32_t k = 0, from = 0; k < nseries; from = end[k++]) {
		for (i = from + 1; i < end[k] && s->c[order[i - 1]].bucket <= s->c[order[i]].bucket; i++)
			;
		if (i < end[k])
			qsort_r(order + from, end[k] - from, sizeof(*order), bucket_cmp, s->c);
	}
	free(end);
	return order;
}

/* The cells in order, one per (series, bucket), without touching p: the
 * series that have cells, each as its step from the previous (the first
 * from -1), its cell count, then per cell the bucket's step from the
 * previous (the first from -1) and the count, all LEB128. */
static void put_cells(struct tb_cap_out *o, const struct tb_tseries *s)
{
	uint32_t *order = cell_order(s), nseries = 0;
	const struct tb_tcell *c = s->c;
#define CELL(j) (&c[order ? order[j] : (j)])

	for (uint32_t i = 0; i < s->n; i++)
		nseries += !i || CELL(i)->series != CELL(i - 1)->series;
	tb_cap_u32(&o->b, nseries);
	for (uint32_t i = 0, k, ncells; i < s->n; i = k) {
		uint32_t series = CELL(i)->series;
		uint64_t prev = UINT64_MAX;

		ncells = 1;
		for (k = i + 1; k < s->n && CELL(k)->series == series; k++)
			ncells += CELL(k)->bucket != CELL(k - 1)->bucket;
		put_var(&o->b, (uint64_t)series - (i ? CELL(i - 1)->series : UINT64_MAX) - 1);
		put_var(&o->b, ncells);
		for (uint32_t j = i, m; j < k; j = m) { /* one cell per bucket: the same bucket's summed */
			uint64_t count = 0;

			for (m = j; m < k && CELL(m)->bucket == CELL(j)->bucket; m++)
				count += CELL(m)->count;
			put_var(&o->b, (uint64_t)CELL(j)->bucket - prev - 1);
			put_var(&o->b, count);
			prev = CELL(j)->bucket;
		}
		tb_cap_out_chunk(o);
	}
#undef CELL
	free(order);
}

void tb_cap_timeline_write(struct tb_cap_out *o, const struct tb_profile *p)
{
	tb_cap_u64(&o->b, p->tl.width_ns);
	tb_cap_u64(&o->b, (uint64_t)p->tl.origin_unix_ns);
	tb_cap_u32(&o->b, p->tl.nbuckets);
	put_cells(o, &p->tl.stacks);
	put_cells(o, &p->tl.states);
}

/* Cells of one kind: nseries series, each adding up to want[series]. */
static int get_cells(struct tb_rd *r, struct tb_profile *p, struct tb_tseries *s, uint32_t nseries,
		     uint64_t (*want)(struct tb_profile *, uint32_t), const char *what)
{
	uint32_t n = tb_rd_count(r, 4, "timeline");
	uint64_t series = UINT64_MAX, cells = 0;

	if (r->failed)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t step = get_var(r), ncells = get_var(r), bucket = UINT64_MAX, sum = 0;

		if (r->failed)
			return -1;
		if (step >= (uint64_t)nseries || (series = series + 1 + step) >= nseries)
			return tb_rd_fail(r, "a timeline %s series is past the %u there are", what, nseries);
		if (!ncells || ncells > r->left / 2 || (cells += ncells) > TB_TL_MAX_CELLS)
			return tb_rd_fail(r, "the timeline's %s series %llu claims %llu cells", what,
					  (unsigned long long)series, (unsigned long long)ncells);
		for (uint64_t j = 0; j < ncells; j++) {
			uint64_t bstep = get_var(r), count = get_var(r);

			if (r->failed)
				return -1;
			if (bstep >= p->tl.nbuckets || (bucket = bucket + 1 + bstep) >= p->tl.nbuckets || !count)
				return tb_rd_fail(r, "a timeline %s cell of series %llu is past bucket %u or "
						  "counts nothing", what, (unsigned long long)series, p->tl.nbuckets);
			if (count > want(p, (uint32_t)series) - sum)
				return tb_rd_fail(r, "the timeline's %s cells of %llu add up to more than %llu",
						  what, (unsigned long long)series,
						  (unsigned long long)want(p, (uint32_t)series));
			sum += count;
			tb_timeline_put(&p->tl, s, (uint32_t)series, (uint32_t)bucket, count);
		}
		if (sum != want(p, (uint32_t)series))
			return tb_rd_fail(r, "the timeline's %s cells of %llu add up to %llu, not %llu", what,
					  (unsigned long long)series, (unsigned long long)sum,
					  (unsigned long long)want(p, (uint32_t)series));
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
	/* the whole timeline, origin to its last bucket's end, within int64 ns (width and count
	 * bounded first: their product is below 2^63) */
	if (!width || width > TB_TL_MAX_WIDTH_NS || origin > (uint64_t)INT64_MAX || !nbuckets ||
	    nbuckets > TB_TL_MAX_BUCKETS || width * nbuckets > (uint64_t)INT64_MAX - origin)
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
