/* tbp_timeline.c: the timeline section of a capture file (tag
 * TB_CAP_SEC_TIMELINE, docs/capture-format.md section 7): the bucket width,
 * the wall time of bucket 0, the buckets used, then the cells of the
 * stacks and of the thread states, each sorted by (series, bucket) and
 * written as steps (put_cells).  The
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

/* The cells sorted, one per (series, bucket), without touching p: the
 * series that have cells, each as its step from the previous (the first
 * from -1), its cell count, then per cell the bucket's step from the
 * previous (the first from -1) and the count, all LEB128. */
static void put_cells(struct tb_buf *b, const struct tb_tseries *s)
{
	struct tb_tcell *c = tb_calloc(s->n, sizeof(*c));
	uint32_t n = 0, nseries = 0;

	if (s->n)
		memcpy(c, s->c, (size_t)s->n * sizeof(*c));
	tb_qsort(c, s->n, sizeof(*c), tb_tcell_cmp);
	for (uint32_t i = 0; i < s->n; i++) {
		if (n && c[n - 1].series == c[i].series && c[n - 1].bucket == c[i].bucket)
			c[n - 1].count += c[i].count;
		else
			c[n++] = c[i];
	}
	for (uint32_t i = 0; i < n; i++)
		nseries += !i || c[i].series != c[i - 1].series;
	tb_cap_u32(b, nseries);
	for (uint32_t i = 0, k; i < n; i = k) {
		for (k = i + 1; k < n && c[k].series == c[i].series; k++)
			;
		put_var(b, (uint64_t)c[i].series - (i ? c[i - 1].series : UINT64_MAX) - 1);
		put_var(b, k - i);
		for (uint32_t j = i; j < k; j++) {
			put_var(b, (uint64_t)c[j].bucket - (j > i ? c[j - 1].bucket : UINT64_MAX) - 1);
			put_var(b, c[j].count);
		}
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
