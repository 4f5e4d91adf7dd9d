/* diff.c: `tachyon-bpf diff BASELINE.tbp CURRENT.tbp -o OUT...`: a
 * differential profile in each format of the table that has a diff writer
 * (page .html, data .json, difffolded.pl lines .folded); `diff
 * --list-formats`: their extensions, one a line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "out/tbp.h"
#include "cmd/commands.h"
#include "out/diff.h"
#include "out/format.h"

#define MAX_OUTPUTS 16

static int usage(FILE *f, int rc)
{
	fprintf(f, "usage: tachyon-bpf diff BASELINE.tbp CURRENT.tbp -o OUT [-o OUT...] [--band F]\n"
		   "       [--min-fraction F] [-q]\n"
		   "       tachyon-bpf diff --list-formats\n"
		   "Compares two captures: widths show CURRENT, colours the change of self time per\n"
		   "unit of time against BASELINE. Outputs, by extension:\n");
	tb_formats_help(f, TB_USE_DIFF, "  ");
	fprintf(f, "  --band F           neutral band, default 0.15 (changes within +-15%% stay neutral)\n"
		   "  --list-formats     print the extensions, one a line\n");
	return rc;
}

int tb_cmd_diff(int argc, char **argv)
{
	enum { OPT_BAND = 256, OPT_MINFRAC, OPT_LIST };
	static const struct option longs[] = {
		{ "output", required_argument, 0, 'o' },
		{ "band", required_argument, 0, OPT_BAND },
		{ "min-fraction", required_argument, 0, OPT_MINFRAC },
		{ "list-formats", no_argument, 0, OPT_LIST },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct tb_diff_opts opts = { 0.15, 0.001 };
	const char *outputs[MAX_OUTPUTS];
	int noutputs = 0, quiet = 0, rc = 0, c;
	struct tb_profile base, cur;
	char err[1024], *end;

	optind = 0;
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
		case 'q':
			quiet = 1;
			break;
		case 'h':
			return usage(stdout, 0);
		default:
			return usage(stderr, 2);
		}
	}
	if (optind != argc - 2 || !noutputs) {
		fprintf(stderr, "tachyon-bpf: diff: give BASELINE and CURRENT capture files and at least one -o\n");
		return usage(stderr, 2);
	}
	if (tb_read_capture(argv[optind], &base, err, sizeof(err))) {
		fprintf(stderr, "tachyon-bpf: diff: %s: %s\n", argv[optind], err);
		return 1;
	}
	if (tb_read_capture(argv[optind + 1], &cur, err, sizeof(err))) {
		fprintf(stderr, "tachyon-bpf: diff: %s: %s\n", argv[optind + 1], err);
		tb_profile_free(&base);
		return 1;
	}
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
