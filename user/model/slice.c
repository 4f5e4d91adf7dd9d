/* slice.c: a profile cut down to a time range from its timeline, and the
 * parsing of the range's ends (model/slice.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "model/slice.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Counters the timeline does not keep by time: scaled by the slice's share. */
static const size_t scaled[] = {
	offsetof(struct tb_profile, samples),
	offsetof(struct tb_profile, frames),
	offsetof(struct tb_profile, unresolved_frames),
	offsetof(struct tb_profile, lost),
	offsetof(struct tb_profile, malformed),
	offsetof(struct tb_profile, filtered),
	offsetof(struct tb_profile, off_cpu_samples),
	offsetof(struct tb_profile, off_cpu_records),
	offsetof(struct tb_profile, kernel_samples),
	offsetof(struct tb_profile, kernel_frames),
	offsetof(struct tb_profile, native_samples),
	offsetof(struct tb_profile, native_frames),
	offsetof(struct tb_profile, merged),
	offsetof(struct tb_profile, unmerged),
	offsetof(struct tb_profile, native_truncated),
	offsetof(struct tb_profile, task_samples),
};

static void scale(uint64_t *v, double share)
{
	*v = (uint64_t)llround((double)*v * share);
}

/* Keep the cells of buckets [lo, hi), renumbered from 0. */
static void keep_cells(struct tb_tseries *s, uint32_t lo, uint32_t hi)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->n; i++)
		if (s->c[i].bucket >= lo && s->c[i].bucket < hi) {
			s->c[n] = s->c[i];
			s->c[n++].bucket -= lo;
		}
	s->n = n;
	if (s->nlast)
		memset(s->last, 0, (size_t)s->nlast * sizeof(*s->last));
	for (uint32_t i = 0; i < n; i++)
		if (s->c[i].series < s->nlast)
			s->last[s->c[i].series] = i + 1;
}

int tb_profile_slice(struct tb_profile *p, double from_s, double to_s, char *err, size_t errlen)
{
	struct tb_timeline *tl = &p->tl;
	double w, lo_d, hi_d, share;
	uint64_t old_python = p->python_samples, python = 0, hidden;
	uint32_t lo, hi;

	if (!tl->on || !tl->width_ns)
		return fail(err, errlen, "the capture keeps no timeline (recorded before time slices, or "
			    "without a sample): --from/--to need one");
	if (isnan(from_s) || isnan(to_s) || to_s <= from_s)
		return fail(err, errlen, "--from must come before --to");
	w = (double)tl->width_ns / 1e9;
	/* the buckets whose middle is in [from, to) */
	lo_d = ceil(from_s / w - 0.5);
	hi_d = ceil(to_s / w - 0.5);
	lo = lo_d <= 0 ? 0 : lo_d >= tl->nbuckets ? tl->nbuckets : (uint32_t)lo_d;
	hi = hi_d <= 0 ? 0 : hi_d >= tl->nbuckets ? tl->nbuckets : (uint32_t)hi_d;
	if (lo >= hi)
		return fail(err, errlen, "the slice %.3f..%.3f s holds no time bucket: the capture's "
			    "timeline has %u buckets of %.3f s (%.3f s)", from_s, to_s, tl->nbuckets, w,
			    tl->nbuckets * w);
	if (tl->origin_unix_ns < 0 ||
	    (uint64_t)lo * tl->width_ns > (uint64_t)INT64_MAX - (uint64_t)tl->origin_unix_ns)
		return fail(err, errlen, "the capture's time origin (%lld ns) is out of range",
			    (long long)tl->origin_unix_ns);
	tb_timeline_normalize(tl);
	keep_cells(&tl->stacks, lo, hi);
	keep_cells(&tl->states, lo, hi);

	/* samples without Python frames: those shown (under <no Python frame>) are counted
	 * in the slice's stacks, only the rest is scaled */
	hidden = tb_profile_no_python_shown(p);
	hidden = p->no_python > hidden ? p->no_python - hidden : 0;
	for (uint32_t i = 0; i < p->nstacks; i++)
		p->stacks[i].count = 0;
	for (uint32_t i = 0; i < tl->stacks.n; i++)
		if (tl->stacks.c[i].series < p->nstacks)
			p->stacks[tl->stacks.c[i].series].count += tl->stacks.c[i].count;
	for (uint32_t i = 0; i < p->nthreads; i++) {
		p->threads[i].python_samples = 0;
		for (unsigned s = 0; s < TB_TS_N; s++)
			*tb_tinfo_state(&p->threads[i], s) = 0;
	}
	for (uint32_t i = 0; i < tl->states.n; i++) {
		const struct tb_tcell *c = &tl->states.c[i];

		if (c->series / TB_TS_N < p->nthreads)
			*tb_tinfo_state(&p->threads[c->series / TB_TS_N], c->series % TB_TS_N) += c->count;
	}
	tb_profile_drop_empty_stacks(p);
	p->truncated = p->partial = 0;
	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct tb_stack *s = &p->stacks[i];

		p->threads[s->thread].python_samples += s->count;
		python += s->count;
		if (s->kind & TB_SK_TRUNCATED)
			p->truncated += s->count;
		if (s->kind & TB_SK_PARTIAL)
			p->partial += s->count;
	}
	for (uint32_t i = 0; i < p->nprocs; i++)
		p->procs[i].samples = 0;
	for (uint32_t i = 0; i < p->nthreads; i++) {
		struct tb_tinfo *t = &p->threads[i];
		uint64_t states = t->on_cpu + t->off_cpu;
		int proc = tb_profile_find_process(p, t->pid);

		t->samples = states > t->python_samples ? states : t->python_samples;
		if (proc >= 0)
			p->procs[proc].samples += t->samples;
	}

	share = old_python ? (double)python / (double)old_python : 0;
	for (size_t i = 0; i < sizeof(scaled) / sizeof(scaled[0]); i++)
		scale((uint64_t *)((char *)p + scaled[i]), share);
	for (int i = 0; i < TB_NATIVE_STOPS; i++)
		scale(&p->native_stop[i], share);
	p->agent_cpu_s *= share;
	scale(&hidden, share);
	p->no_python = tb_profile_no_python_shown(p) + hidden;
	p->python_samples = python;
	if (python >= p->off_cpu_samples && p->samples < python - p->off_cpu_samples)
		p->samples = python - p->off_cpu_samples; /* at least the slice's on-CPU samples */

	tl->origin_ns += (uint64_t)lo * tl->width_ns;
	tl->origin_unix_ns += (int64_t)((uint64_t)lo * tl->width_ns);
	tl->nbuckets = hi - lo;
	p->duration_s = (double)(hi - lo) * w;
	p->start_unix = tl->origin_unix_ns / 1000000000;
	return 0;
}

/* "HH:MM[:SS[.frac]]" at the start of s: seconds into the day, or -1. */
static double time_of_day(const char *s, const char **end)
{
	int h, m, n = 0;
	double sec = 0;

	if (sscanf(s, "%2d:%2d%n", &h, &m, &n) != 2 || h < 0 || h > 23 || m < 0 || m > 59)
		return -1;
	s += n;
	if (*s == ':') {
		char *e;

		errno = 0;
		sec = strtod(s + 1, &e);
		if (errno || e == s + 1 || sec < 0 || sec >= 61 || s[1] == '-' || s[1] == '+')
			return -1;
		s = e;
	}
	*end = s;
	return h * 3600.0 + m * 60.0 + sec;
}

int tb_slice_parse_time(const char *arg, int64_t start_unix_ns, double *out_s, char *err,
			size_t errlen)
{
	time_t start = (time_t)(start_unix_ns / 1000000000), day;
	double start_s = (double)start_unix_ns / 1e9, tod, at;
	const char *rest = arg, *end = NULL;
	struct tm tm;
	char *e;

	if (!strchr(arg, ':')) {
		errno = 0;
		*out_s = strtod(arg, &e);
		if (errno || e == arg || *e || !isfinite(*out_s) || *out_s < 0 || *arg == '-')
			return fail(err, errlen, "'%s' is neither seconds since the capture's start "
				    "(e.g. 12.5) nor a local time (10:03, 10:03:30, 2026-12-01 10:03)", arg);
		return 0;
	}
	if (!localtime_r(&start, &tm))
		return fail(err, errlen, "the capture's start time is not a date");
	if (strlen(arg) > 11 && (arg[10] == ' ' || arg[10] == 'T') && arg[4] == '-') {
		int y, mo, d, n = 0;

		if (sscanf(arg, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10 || y < 1970 ||
		    mo < 1 || mo > 12 || d < 1 || d > 31)
			return fail(err, errlen, "'%s': a date is YYYY-MM-DD", arg);
		tm.tm_year = y - 1900;
		tm.tm_mon = mo - 1;
		tm.tm_mday = d;
		rest = arg + 11;
	}
	tod = time_of_day(rest, &end);
	if (tod < 0 || *end)
		return fail(err, errlen, "'%s' is not a local time (HH:MM, HH:MM:SS[.frac], "
			    "YYYY-MM-DD HH:MM[:SS])", arg);
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_isdst = -1;
	day = mktime(&tm);
	if (day == (time_t)-1)
		return fail(err, errlen, "'%s' is not a local time", arg);
	at = (double)day + tod;
	if (rest == arg && at < start_s - 12 * 3600.0)
		at += 24 * 3600.0; /* a time of day past midnight of the start */
	*out_s = at - start_s;
	if (*out_s < 0)
		*out_s = 0; /* before the start: from the start */
	return 0;
}

int tb_slice_args(struct tb_profile *p, const char *from, const char *to, char *err, size_t errlen)
{
	double a = 0, b = INFINITY;
	char why[256];

	if (!from && !to)
		return 0;
	if (!p->tl.on)
		return fail(err, errlen, "the capture keeps no timeline (recorded before time slices, "
			    "or without a sample): --from/--to need one");
	if ((from && tb_slice_parse_time(from, p->tl.origin_unix_ns, &a, why, sizeof(why))) ||
	    (to && tb_slice_parse_time(to, p->tl.origin_unix_ns, &b, why, sizeof(why))))
		return fail(err, errlen, "%s", why);
	return tb_profile_slice(p, a, b, err, errlen);
}
