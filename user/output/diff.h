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
/* How big a change the test can call: for a frame holding `share` of the baseline's e0 samples,
 * the smallest relative drop (*drop, 0..1) and rise (*rise) of its self share in the current
 * capture's e1 samples with |z| >= 1.96; -1 when none can (a side with no sample, or a frame
 * that could vanish unnoticed). Returns 1 when the captures are too small for the test: a frame
 * of TB_DIFF_FEW_SHARE must change by more than TB_DIFF_FEW_CHANGE either way to be called (the
 * diff JSON's "min_change" and "too_few_samples"; the page's banner). */
#define TB_DIFF_FEW_SHARE 0.25
#define TB_DIFF_FEW_CHANGE 0.5
int tb_diff_min_change(double e0, double e1, double share, double *drop, double *rise);

#endif
