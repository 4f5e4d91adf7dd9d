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

#endif
