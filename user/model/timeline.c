/* timeline.c: counts per (series, time bucket), the buckets doubling in
 * width to stay within bounds (model/timeline.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/clock.h"
#include "lib/mem.h"
#include "model/timeline.h"

const char *const tb_tl_state_names[TB_TS_N] = { "on_cpu", "off_cpu", "gil_held", "gil_wait", "gc",
						 "exception" };

static void series_free(struct tb_tseries *s)
{
	free(s->c);
	free(s->last);
	memset(s, 0, sizeof(*s));
}

void tb_timeline_free(struct tb_timeline *t)
{
	series_free(&t->stacks);
	series_free(&t->states);
	memset(t, 0, sizeof(*t));
}

void tb_timeline_start(struct tb_timeline *t, uint64_t mono_ns)
{
	uint64_t now;

	if (t->on)
		return;
	now = tb_clock_ns(CLOCK_MONOTONIC); /* once: a clock read per sample would cost more than the rest */
	t->on = 1;
	t->origin_ns = mono_ns;
	t->width_ns = TB_TL_FIRST_NS;
	/* the wall time of that instant: now, less the time since */
	t->origin_unix_ns = (int64_t)tb_clock_ns(CLOCK_REALTIME) - (int64_t)(now > mono_ns ? now - mono_ns : 0);
}

int tb_tcell_cmp(const void *a, const void *b)
{
	const struct tb_tcell *x = a, *y = b;

	if (x->series != y->series)
		return x->series < y->series ? -1 : 1;
	return (x->bucket > y->bucket) - (x->bucket < y->bucket);
}

static void series_normalize(struct tb_tseries *s)
{
	uint32_t n = 0;

	tb_qsort(s->c, s->n, sizeof(*s->c), tb_tcell_cmp);
	for (uint32_t i = 0; i < s->n; i++) {
		if (n && s->c[n - 1].series == s->c[i].series && s->c[n - 1].bucket == s->c[i].bucket)
			s->c[n - 1].count += s->c[i].count;
		else
			s->c[n++] = s->c[i];
	}
	s->n = n;
	if (s->nlast)
		memset(s->last, 0, (size_t)s->nlast * sizeof(*s->last));
	for (uint32_t i = 0; i < n; i++)
		if (s->c[i].series < s->nlast)
			s->last[s->c[i].series] = i + 1; /* sorted: the newest bucket last */
}

void tb_timeline_normalize(struct tb_timeline *t)
{
	series_normalize(&t->stacks);
	series_normalize(&t->states);
}

/* Every bucket of s twice as wide, in one pass without sorting: a cell
 * joins its series' newest cell when they now share a bucket (a series'
 * cells arrive in time order; one that came late stays a cell of its own,
 * which tb_timeline_normalize merges). */
static void halve(struct tb_tseries *s)
{
	uint32_t n = 0;

	if (s->nlast)
		memset(s->last, 0, (size_t)s->nlast * sizeof(*s->last));
	for (uint32_t i = 0; i < s->n; i++) {
		struct tb_tcell c = s->c[i];
		uint32_t l = c.series < s->nlast ? s->last[c.series] : 0;

		c.bucket >>= 1;
		if (l && s->c[l - 1].bucket == c.bucket) {
			s->c[l - 1].count += c.count;
			continue;
		}
		s->c[n] = c;
		if (c.series < s->nlast)
			s->last[c.series] = n + 1;
		n++;
	}
	s->n = n;
}

/* Every bucket twice as wide: pairs of buckets merged. */
static void coarsen(struct tb_timeline *t)
{
	halve(&t->stacks);
	halve(&t->states);
	t->width_ns *= 2;
	t->nbuckets = (t->nbuckets + 1) / 2;
}

static uint64_t bucket_of(struct tb_timeline *t, uint64_t ns)
{
	uint64_t b;

	if (ns >= t->hint_lo && ns < t->hint_hi && t->hint_width == t->width_ns)
		return t->hint_bucket;
	if (ns <= t->origin_ns)
		return 0;
	b = (ns - t->origin_ns) / t->width_ns;
	if (b < TB_TL_MAX_BUCKETS) {
		t->hint_lo = t->origin_ns + b * t->width_ns;
		t->hint_hi = t->hint_lo + t->width_ns;
		t->hint_width = t->width_ns;
		t->hint_bucket = (uint32_t)b;
	}
	return b;
}

void tb_timeline_put(struct tb_timeline *t, struct tb_tseries *s, uint32_t series, uint32_t bucket,
		     uint64_t count)
{
	uint32_t last;

	if (!count)
		return;
	if (series >= s->nlast) {
		uint32_t old = s->nlast;

		s->last = tb_grow(s->last, &s->nlast, series + 1, sizeof(*s->last), 256);
		memset(&s->last[old], 0, (size_t)(s->nlast - old) * sizeof(*s->last));
	}
	last = s->last[series];
	if (last && s->c[last - 1].bucket == bucket) {
		s->c[last - 1].count += count;
		return;
	}
	if (s->n >= TB_TL_MAX_CELLS && last) { /* no room left even at the widest buckets */
		s->c[last - 1].count += count;
		return;
	}
	s->c = tb_grow(s->c, &s->cap, s->n + 1, sizeof(*s->c), 1024);
	s->c[s->n] = (struct tb_tcell){ series, bucket, count };
	s->last[series] = ++s->n;
	if (bucket >= t->nbuckets)
		t->nbuckets = bucket + 1;
}

void tb_timeline_add(struct tb_timeline *t, struct tb_tseries *s, uint32_t series, uint64_t from_ns,
		     uint64_t to_ns, uint64_t count)
{
	uint64_t b0, b1, span, done = 0;

	if (!count)
		return;
	/* a sample in the last instant's bucket, with room for a cell: what the rest would do */
	if (from_ns == to_ns && t->on && from_ns >= t->hint_lo && from_ns < t->hint_hi &&
	    t->hint_width == t->width_ns && s->n < TB_TL_MAX_CELLS) {
		tb_timeline_put(t, s, series, t->hint_bucket, count);
		return;
	}
	tb_timeline_start(t, from_ns);
	if (to_ns < from_ns)
		to_ns = from_ns;
	/* room: every bucket within the cap, and cells for the span */
	while (t->width_ns < TB_TL_MAX_WIDTH_NS &&
	       (bucket_of(t, to_ns) >= TB_TL_MAX_BUCKETS ||
		(uint64_t)s->n + bucket_of(t, to_ns) - bucket_of(t, from_ns) + 1 > TB_TL_MAX_CELLS))
		coarsen(t);
	b0 = bucket_of(t, from_ns);
	b1 = bucket_of(t, to_ns);
	if (b1 >= TB_TL_MAX_BUCKETS)
		b1 = TB_TL_MAX_BUCKETS - 1;
	if (b0 > b1)
		b0 = b1;
	if (b0 == b1 || from_ns < t->origin_ns) {
		tb_timeline_put(t, s, series, (uint32_t)b1, count);
		return;
	}
	/* in proportion to each bucket's share of [from, to]: cumulative, so
	 * that the parts add up to count */
	span = to_ns - from_ns;
	for (uint64_t b = b0; b <= b1; b++) {
		uint64_t end = t->origin_ns + (b + 1) * t->width_ns, upto, part;

		upto = b == b1 || end > to_ns ? span : end - from_ns;
		part = (uint64_t)((unsigned __int128)count * upto / span) - done;
		done += part;
		tb_timeline_put(t, s, series, (uint32_t)b, part);
	}
}
