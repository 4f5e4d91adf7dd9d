/* diff.h: differential profiles (baseline vs current). */
#ifndef TB_DIFF_H
#define TB_DIFF_H
#include <stdio.h>
#include "model/profile.h"

struct tb_diff_opts {
	double band;        /* neutral band, e.g. 0.15 for +-15% */
	double min_fraction;
};

/* The diff JSON (docs/diff-json.md): the current tree with baseline values,
 * normalized per unit of time, classified with a significance test; the
 * baseline tree with the paths that have no counterpart ("elided"). */
int tb_write_diff_json(const struct tb_profile *base, const struct tb_profile *cur,
		       const struct tb_diff_opts *o, FILE *f);
/* `stack baseline current` lines (difffolded.pl), stacks keyed without
 * pids and line numbers so that the two captures match. */
int tb_write_diff_folded(const struct tb_profile *base, const struct tb_profile *cur, FILE *f);
/* The flame graph page in diff mode. */
int tb_write_diff_html(const struct tb_profile *base, const struct tb_profile *cur,
		       const struct tb_diff_opts *o, FILE *f);

/* Poisson rate test: z of c1 events over exposure e1 against c0 over e0. */
double tb_diff_z(uint64_t c0, double e0, uint64_t c1, double e1);
/* The smallest change (a fraction: 0.25 for 25%) of a function holding
 * `share` of both captures' samples that tb_diff_z calls significant with
 * n0 and n1 samples; above 10 (1000%) when none within that is. */
double tb_diff_min_change(uint64_t n0, uint64_t n1, double share);
/* Below this in either capture the diff says it can tell little (the
 * smallest change it calls, for a function of 20% of the samples, is above
 * 25%). */
#define TB_DIFF_FEW_SHARE 0.20
#define TB_DIFF_FEW_CHANGE 0.25

#endif
