/* render.c: `tachyon-bpf render CAPTURE -o OUT [-o OUT...] [--by-line]
 * [--min-fraction F] [--sort own|total|name] [--limit N] [--from T] [--to T]
 * [--json-version 1|2] [--summary] [-q]`: writes any output from a capture file (.tbp) without sampling (and
 * without root), of the whole capture or of a time slice (model/slice.c);
 * `render --list-formats`: the extensions it writes, one a line. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include "lib/cli.h"
#include "output/tbp.h"
#include "cmd/commands.h"
#include "output/format.h"
#include "model/slice.h"

#define MAX_OUTPUTS 16

void tb_render_usage(FILE *f)
{
	fprintf(f, "usage: tachyon-bpf render CAPTURE.tbp -o OUT [-o OUT...] [--by-line] "
		   "[--min-fraction F] [--sort own|total|name] [--limit N] [--from T] [--to T]\n"
		   "       [--json-version 1|2] [--summary] [-q]\n"
		   "       tachyon-bpf render --list-formats\n"
		   "Writes outputs from a capture, format by extension:\n");
	tb_formats_help(f, TB_USE_PROFILE, "  ");
	fprintf(f, "  -o, --output OUT   an output (repeatable), format by extension (above)\n"
		   "  --by-line          one tree node per (function, line)\n"
		   "  --min-fraction F   hide nodes below F of all samples (default: the capture's)\n"
		   "  --sort own|total|name  order of the .txt table (default own)\n"
		   "  --limit N          rows of the .txt table (default 0: all)\n");
	fprintf(f, "  --from T, --to T   only that time slice: seconds since the capture's start (12.5)\n"
		   "                     or a local time (10:03, 10:03:30, 2026-12-01 10:03)\n");
	fprintf(f, "  --json-version 1|2 the tree JSON's version (.json, inside .html; default 2)\n");
	fprintf(f, "  --summary          the capture's summary on stderr (as the capture printed it)\n");
	fprintf(f, "  --list-formats     print the extensions, one a line\n"
		   "  -q, --quiet        no messages on stderr\n"
		   "  -h, --help         this text\n");
}

static int bad_usage(const char *msg)
{
	fprintf(stderr, "tachyon-bpf: render: %s (tachyon-bpf render --help)\n", msg);
	return 2;
}

int tb_cmd_render(int argc, char **argv)
{
	enum { OPT_BYLINE = 256, OPT_MINFRAC, OPT_SORT, OPT_LIMIT, OPT_LIST, OPT_FROM, OPT_TO,
	       OPT_JSONV, OPT_SUMMARY };
	static const struct option longs[] = {
		{ "output", required_argument, 0, 'o' },
		{ "by-line", no_argument, 0, OPT_BYLINE },
		{ "min-fraction", required_argument, 0, OPT_MINFRAC },
		{ "sort", required_argument, 0, OPT_SORT },
		{ "limit", required_argument, 0, OPT_LIMIT },
		{ "list-formats", no_argument, 0, OPT_LIST },
		{ "from", required_argument, 0, OPT_FROM },
		{ "to", required_argument, 0, OPT_TO },
		{ "json-version", required_argument, 0, OPT_JSONV },
		{ "summary", no_argument, 0, OPT_SUMMARY },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *outputs[MAX_OUTPUTS], *path, *from = NULL, *to = NULL;
	int noutputs = 0, by_line = 0, quiet = 0, summary = 0, have_frac = 0, rc = 0, c, sort_key = 0;
	unsigned long limit = 0;
	unsigned json_version = 0;
	double min_fraction = 0;
	struct tb_profile prof;
	char err[1024], *end;

	optind = 0; /* a fresh scan (glibc) */
	opterr = 0; /* tb_bad_option says it, in one line */
	while ((c = getopt_long(argc, argv, "o:qh", longs, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (noutputs >= MAX_OUTPUTS)
				return bad_usage("too many -o outputs");
			if (!tb_output_format(optarg, TB_USE_PROFILE, err, sizeof(err))) {
				fprintf(stderr, "tachyon-bpf: render: %s\n", err);
				return 2;
			}
			outputs[noutputs++] = optarg;
			break;
		case OPT_BYLINE:
			by_line = 1;
			break;
		case OPT_MINFRAC:
			errno = 0;
			min_fraction = strtod(optarg, &end);
			if (errno || end == optarg || *end || min_fraction < 0 || min_fraction >= 1)
				return bad_usage("--min-fraction takes a fraction from 0 to 1 (e.g. 0.001)");
			have_frac = 1;
			break;
		case OPT_SORT:
			if ((sort_key = tb_pstats_sort_key(optarg)) < 0)
				return bad_usage("--sort takes own, total or name");
			break;
		case OPT_LIMIT:
			errno = 0;
			limit = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' || limit > 0x7fffffff)
				return bad_usage("--limit takes a number of rows (0: all)");
			break;
		case OPT_LIST:
			tb_formats_print(stdout, TB_USE_PROFILE);
			return 0;
		case OPT_FROM:
			from = optarg;
			break;
		case OPT_TO:
			to = optarg;
			break;
		case OPT_JSONV:
			if (tb_parse_uint(optarg, 1, 2, &json_version))
				return bad_usage("--json-version takes 1 or 2");
			break;
		case OPT_SUMMARY:
			summary = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			tb_render_usage(stdout);
			return 0;
		default:
			return tb_bad_option("render", argv, optind, optopt, "o:qh", longs);
		}
	}
	if (optind != argc - 1)
		return bad_usage("give exactly one capture file");
	if (!noutputs)
		return bad_usage("give at least one -o OUTPUT");
	path = argv[optind];
	if (tb_read_capture(path, &prof, err, sizeof(err))) {
		fprintf(stderr, "tachyon-bpf: render: %s: %s\n", path, err);
		return 1;
	}
	if (tb_slice_args(&prof, from, to, err, sizeof(err))) {
		fprintf(stderr, "tachyon-bpf: render: %s: %s\n", path, err);
		tb_profile_free(&prof);
		return 1;
	}
	if (by_line)
		prof.by_line = 1;
	if (have_frac)
		prof.min_fraction = min_fraction;
	prof.sort_key = sort_key;
	prof.limit = (unsigned)limit;
	prof.json_version = json_version;
	tb_outputs_begin(&prof);
	for (int i = 0; i < noutputs; i++) {
		if (tb_write_output(&prof, outputs[i], err, sizeof(err))) {
			fprintf(stderr, "tachyon-bpf: render: %s\n", err);
			rc = 1;
		} else if (!quiet) {
			fprintf(stderr, "tachyon-bpf: wrote %s\n", outputs[i]);
		}
	}
	tb_outputs_end();
	if (!quiet && summary)
		tb_write_summary(&prof, stderr, 10);
	if (!quiet)
		tb_few_samples_warning(&prof, stderr);
	tb_profile_free(&prof);
	return rc;
}
