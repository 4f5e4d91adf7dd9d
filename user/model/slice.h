/* slice.h: a time slice of a profile (`render --from S --to S`, `diff`):
 * the profile as if only the samples of that range had been taken, built
 * from its timeline (model/timeline.h), so that every writer works on it
 * unchanged. */
#ifndef TB_SLICE_H
#define TB_SLICE_H
#include <stddef.h>
#include "model/profile.h"

/* Keep only [from_s, to_s) of p, in seconds since its timeline's start:
 * the time buckets whose middle falls in the range.  Stack counts, thread
 * states and sample counts come from the timeline; counters it does not
 * keep by time (lost, no Python stack, frames read...) are scaled by the
 * slice's share of the samples.  0, or -1 with one sentence in err (no
 * timeline, or no bucket in the range). */
int tb_profile_slice(struct tb_profile *p, double from_s, double to_s, char *err, size_t errlen);

/* A --from/--to value: seconds since the start ("12.5"), or a local time
 * of day ("10:03", "10:03:30.5") on the day the capture started (the next
 * day if that is more than 12 hours before the start), or a local date and
 * time ("2026-12-01 10:03:00", "2026-12-01T10:03").  start_unix_ns: the
 * wall time of the timeline's start.  0 with *out_s set, or -1 with one
 * sentence in err. */
int tb_slice_parse_time(const char *arg, int64_t start_unix_ns, double *out_s, char *err,
			size_t errlen);

/* Slice p to the range of two --from/--to values (NULL: the start, the
 * end; both NULL: p unchanged).  0, or -1 with one sentence in err. */
int tb_slice_args(struct tb_profile *p, const char *from, const char *to, char *err, size_t errlen);

#endif
