/* diff.c: `tachyon-bpf diff BASELINE.tbp CURRENT.tbp -o OUT...`: a
 * differential profile in each format of the table that has a diff writer
 * (page .html, data .json, difffolded.pl lines .folded); either side may be
 * a time slice (--base-from/--base-to, --from/--to: model/slice.c), and
 * with one capture both sides are slices of it; `diff --list-formats`:
 * their extensions, one a line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "lib/cli.h"
#include "output/tbp.h"
#include "cmd/commands.h"
#include "output/diff.h"
#include "output/format.h"
#include "model/slice.h"

#define MAX_OUTPUTS 16

void tb_diff_usage(FILE *f)
{
	fprintf(f, "usage: tachyon-bpf diff BASELINE.tbp [CURRENT.tbp] -o OUT [-o OUT...] [--band F]\n"
		   "       [--min-fraction F] [--base-from T] [--base-to T] [--from T] [--to T] [-q]\n"
		   "       tachyon-bpf diff --list-formats\n"
		   "Compares two captures: widths show CURRENT, colours the change of self time per\n"
		   "unit of time against BASELINE. Outputs, by extension:\n");
	tb_formats_help(f, TB_USE_DIFF, "  ");
	fprintf(f, "  -o, --output OUT   an output (repeatable), format by extension (above)\n"
		   "  --min-fraction F   hide nodes below F of all samples (default 0.001)\n");
	fprintf(f, "  --band F           neutral band, default 0.15 (changes within +-15%% stay neutral)\n"
		   "  --base-from T, --base-to T   BASELINE is that time slice: seconds since the capture's\n"
		   "                     start (12.5) or a local time (10:03, 10:03:30, 2026-12-01 10:03)\n"
		   "  --from T, --to T   CURRENT is that time slice; with one capture file, both sides\n"
		   "                     are slices of it\n"
		   "  --list-formats     print the extensions, one a line\n"
		   "  -q, --quiet        no messages on stderr\n"
		   "  -h, --help         this text\n");
}

static int usage(FILE *f, int rc)
{
	tb_diff_usage(f);
	return rc;
}

/* Too few samples on either side for the significance test to call
 * anything but large changes (tb_diff_min_change, the page's banner): said,
 * with the smallest drop and rise it calls. */
static void few_samples_warning(const struct tb_profile *base, const struct tb_profile *cur, int quiet)
{
	uint64_t n0 = base->python_samples, n1 = cur->python_samples;
	double drop, rise;

	if (quiet || !tb_diff_min_change((double)n0, (double)n1, TB_DIFF_FEW_SHARE, &drop, &rise))
		return;
	if (!n0 || !n1)
		fprintf(stderr, "tachyon-bpf: diff: warning: the %s capture has no samples with Python frames: "
			"every function shows as %s\n", !n0 ? "baseline" : "current", !n0 ? "new" : "gone");
	else if (drop < 0 || rise < 0)
		fprintf(stderr, "tachyon-bpf: diff: warning: only %llu and %llu samples: too few for a change to be "
			"called significant (grey); capture longer (-d) or at a higher rate (-r)\n",
			(unsigned long long)n0, (unsigned long long)n1);
	else
		fprintf(stderr, "tachyon-bpf: diff: warning: only %llu and %llu samples: a function of %.0f%% of the "
			"samples is called changed only if it drops by %.0f%% or rises by %.0f%% (smaller changes "
			"stay grey); capture longer (-d) or at a higher rate (-r)\n", (unsigned long long)n0,
			(unsigned long long)n1, 100 * TB_DIFF_FEW_SHARE, 100 * drop, 100 * rise);
}

int tb_cmd_diff(int argc, char **argv)
{
	enum { OPT_BAND = 256, OPT_MINFRAC, OPT_LIST, OPT_BASE_FROM, OPT_BASE_TO, OPT_FROM, OPT_TO };
	static const struct option longs[] = {
		{ "output", required_argument, 0, 'o' },
		{ "band", required_argument, 0, OPT_BAND },
		{ "min-fraction", required_argument, 0, OPT_MINFRAC },
		{ "list-formats", no_argument, 0, OPT_LIST },
		{ "base-from", required_argument, 0, OPT_BASE_FROM },
		{ "base-to", required_argument, 0, OPT_BASE_TO },
		{ "from", required_argument, 0, OPT_FROM },
		{ "to", required_argument, 0, OPT_TO },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct tb_diff_opts opts = { 0.15, 0.001 };
	const char *outputs[MAX_OUTPUTS], *slice[4] = { NULL }; /* base from, to; current from, to */
	const char *base_path, *cur_path;
	int noutputs = 0, quiet = 0, rc = 0, c;
	struct tb_profile base, cur;
	char err[1024], *end;

	optind = 0;
	opterr = 0; /* tb_bad_option says it, in one line */
	while ((c = getopt_long(argc, argv, "o:qh", longs, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (noutputs >= MAX_OUTPUTS) {
				fprintf(stderr, "tachyon-bpf: diff: too many -o outputs\n");
				return 2;
			}
			if (!tb_output_format(optarg, TB_USE_DIFF, err, sizeof(err))) {
				fprintf(stderr, "tachyon-bpf: diff: %s\n", err);
				return 2;
			}
			outputs[noutputs++] = optarg;
			break;
		case OPT_BAND:
		case OPT_MINFRAC:
			errno = 0;
			*(c == OPT_BAND ? &opts.band : &opts.min_fraction) = strtod(optarg, &end);
			if (errno || end == optarg || *end || opts.band < 0 || opts.band >= 10 ||
			    opts.min_fraction < 0 || opts.min_fraction >= 1) {
				fprintf(stderr, "tachyon-bpf: diff: %s takes a fraction (e.g. 0.15)\n",
					c == OPT_BAND ? "--band" : "--min-fraction");
				return 2;
			}
			break;
		case OPT_LIST:
			tb_formats_print(stdout, TB_USE_DIFF);
			return 0;
		case OPT_BASE_FROM:
		case OPT_BASE_TO:
		case OPT_FROM:
		case OPT_TO:
			slice[c - OPT_BASE_FROM] = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			return usage(stdout, 0);
		default:
			return tb_bad_option("diff", argv, optind, optopt, "o:qh", longs);
		}
	}
	if (argc - optind < 1 || argc - optind > 2 || !noutputs ||
	    (argc - optind == 1 && !slice[0] && !slice[1] && !slice[2] && !slice[3])) {
		fprintf(stderr, "tachyon-bpf: diff: give BASELINE and CURRENT capture files (or one capture "
				"and --base-from/--base-to, --from/--to) and at least one -o (tachyon-bpf diff --help)\n");
		return 2;
	}
	base_path = argv[optind];
	cur_path = argv[argc - 1];
	if (tb_read_capture(base_path, &base, err, sizeof(err)) ||
	    tb_slice_args(&base, slice[0], slice[1], err, sizeof(err))) {
		fprintf(stderr, "tachyon-bpf: diff: %s: %s\n", base_path, err);
		tb_profile_free(&base);
		return 1;
	}
	if (tb_read_capture(cur_path, &cur, err, sizeof(err)) ||
	    tb_slice_args(&cur, slice[2], slice[3], err, sizeof(err))) {
		fprintf(stderr, "tachyon-bpf: diff: %s: %s\n", cur_path, err);
		tb_profile_free(&cur);
		tb_profile_free(&base);
		return 1;
	}
	few_samples_warning(&base, &cur, quiet);
	for (int i = 0; i < noutputs; i++) {
		if (tb_write_diff_output(&base, &cur, &opts, outputs[i], err, sizeof(err))) {
			fprintf(stderr, "tachyon-bpf: diff: %s\n", err);
			rc = 1;
		} else if (!quiet) {
			fprintf(stderr, "tachyon-bpf: wrote %s\n", outputs[i]);
		}
	}
	tb_profile_free(&base);
	tb_profile_free(&cur);
	return rc;
}
