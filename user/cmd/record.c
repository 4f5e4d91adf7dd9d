/* record.c: the capture command (`tachyon-bpf [record] [OPTIONS] TARGET`,
 * the default): its options and usage, the capture loop (progress lines,
 * duration, signals, the end of the targets, --interval rotation) around a
 * capture session (capture/session.h), and the outputs and summary. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/cli.h"
#include "lib/termsafe.h"
#include "cpython/versions.h"
#include "output/atomic.h"
#include "output/format.h"
#include "capture/clock.h"
#include "capture/session.h"
#include "cmd/commands.h"

#define MAX_OUTPUTS 16
#define MAX_LONGOPTS 48
#define PROGRESS_EVERY_S 5.0

struct record_opts {
	struct tb_session_opts ses;
	double interval;
	int quiet, by_line, sort_key;
	unsigned limit, summary_rows, json_version;
	double min_fraction;
	const char *outputs[MAX_OUTPUTS];
	int noutputs;
};

void tb_record_usage(FILE *f)
{
	fprintf(f,
		"usage: tachyon-bpf [record] [OPTIONS] -- CMD [ARGS...]\n"
		"       tachyon-bpf [record] [OPTIONS] -p PID[,PID...]\n"
		"       tachyon-bpf [record] [OPTIONS] --all-python\n"
		"       tachyon-bpf [record] [OPTIONS] --cgroup PATH | --container ID\n"
		"Samples the Python stacks of CPython 3.%d-3.%d processes from a BPF program\n"
		"until Ctrl-C or SIGTERM/SIGQUIT/SIGHUP/SIGPIPE, -d or the end of the targets,\n"
		"then writes the outputs. A second Ctrl-C aborts at once (exit 130).\n\n"
		"Targets:\n", TB_PY_MIN_MINOR, TB_PY_MAX_MINOR);
	tb_session_usage(f, TB_FOR_RECORD, TB_SECT_TARGETS);
	fprintf(f, "Sampling:\n");
	tb_session_usage(f, TB_FOR_RECORD, TB_SECT_SAMPLING);
	fprintf(f,
		"Outputs:\n"
		"  -o, --output FILE        output, by extension (repeatable; default\n"
		"                           tachyon-bpf-YYYYmmdd-HHMMSS.html):\n");
	tb_formats_help(f, TB_USE_PROFILE, "                           ");
	fprintf(f,
		"      --interval SECONDS   continuous capture: one set of outputs per interval,\n"
		"                           named FILE-YYYYmmdd-HHMMSS.EXT\n"
		"      --by-line            one tree node per (function, line), like py-spy\n"
		"      --min-fraction F     hide nodes below F of all samples (default 0.001)\n"
		"      --sort own|total|name  order of the .txt table (default own)\n"
		"      --limit N            rows of the .txt table (default 0: all)\n"
		"      --summary-rows N     functions listed in the summary (default 10)\n"
		"      --json-version 1|2   the tree JSON's version (.json, inside .html;\n"
		"                           default 2)\n"
		"  -q, --quiet              no progress or summary on stderr\n"
		"Benchmarks:\n");
	tb_session_usage(f, TB_FOR_RECORD, TB_SECT_BENCH);
	fprintf(f, "  -h, --help               this text\n");
}

static int bad_usage(const char *msg)
{
	fprintf(stderr, "tachyon-bpf: %s\n", msg);
	return 2;
}

/* 0 ok, 1 help printed, 2 bad usage (reported). */
static int parse_args(int argc, char **argv, struct record_opts *o)
{
	enum { O_INTERVAL = TB_SESSION_OPT_END, O_BYLINE, O_MINFRAC, O_SORT, O_LIMIT, O_ROWS, O_LIVE,
	       O_JSONV };
	static const struct option own[] = {
		{ "output", required_argument, 0, 'o' },
		{ "interval", required_argument, 0, O_INTERVAL },
		{ "by-line", no_argument, 0, O_BYLINE },
		{ "min-fraction", required_argument, 0, O_MINFRAC },
		{ "sort", required_argument, 0, O_SORT },
		{ "limit", required_argument, 0, O_LIMIT },
		{ "summary-rows", required_argument, 0, O_ROWS },
		{ "top", required_argument, 0, O_ROWS }, /* its old name, kept for scripts */
		{ "json-version", required_argument, 0, O_JSONV },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ "live", no_argument, 0, O_LIVE }, /* the alias of top, not an option */
	};
	struct option longs[MAX_LONGOPTS];
	char err[512], *end;
	int c, r;

	tb_session_longopts(TB_FOR_RECORD, own, sizeof(own) / sizeof(own[0]), longs, MAX_LONGOPTS);
	tb_session_opts_init(&o->ses);
	o->summary_rows = 10;
	o->min_fraction = 0.001;
	optind = 0; /* a fresh scan (glibc) */
	opterr = 0; /* tb_bad_option says it, in one line */
	while ((c = getopt_long(argc, argv, "+" TB_SESSION_SHORTOPTS "o:qh", longs, NULL)) != -1) {
		r = tb_session_option(&o->ses, c, optarg, err, sizeof(err));
		if (r < 0)
			return bad_usage(err);
		if (r > 0)
			continue;
		switch (c) {
		case 'o':
			if (o->noutputs >= MAX_OUTPUTS)
				return bad_usage("too many -o outputs");
			if (!tb_output_format(optarg, TB_USE_PROFILE, err, sizeof(err))) {
				fprintf(stderr, "tachyon-bpf: %s\n", err);
				return 2;
			}
			o->outputs[o->noutputs++] = optarg;
			break;
		case O_INTERVAL:
			o->interval = strtod(optarg, &end);
			if (*end || end == optarg || !(o->interval >= 1))
				return bad_usage("--interval takes a number of seconds (at least 1)");
			break;
		case O_BYLINE:
			o->by_line = 1;
			break;
		case O_MINFRAC:
			o->min_fraction = strtod(optarg, &end);
			if (*end || end == optarg || !(o->min_fraction >= 0 && o->min_fraction < 1))
				return bad_usage("--min-fraction takes a fraction from 0 to 1 (e.g. 0.001)");
			break;
		case O_SORT:
			if ((o->sort_key = tb_pstats_sort_key(optarg)) < 0)
				return bad_usage("--sort takes own, total or name");
			break;
		case O_LIMIT:
			if (tb_parse_uint(optarg, 0, 0x7fffffff, &o->limit))
				return bad_usage("--limit takes a number of rows (0: all)");
			break;
		case O_ROWS:
			if (tb_parse_uint(optarg, 0, 1000, &o->summary_rows))
				return bad_usage("--summary-rows takes a number from 0 to 1000");
			break;
		case O_JSONV:
			if (tb_parse_uint(optarg, 1, 2, &o->json_version))
				return bad_usage("--json-version takes 1 or 2");
			break;
		case O_LIVE:
			return bad_usage("--live comes first: tachyon-bpf --live [top options] (= tachyon-bpf top ...)");
		case 'q':
			o->quiet = o->ses.quiet = 1;
			break;
		case 'h':
			tb_record_usage(stdout);
			return 1;
		default:
			return tb_bad_option(NULL, argv, optind, optopt, TB_SESSION_SHORTOPTS "o:qh", longs);
		}
	}
	if (tb_session_check_targets(&o->ses, optind < argc ? &argv[optind] : NULL, err, sizeof(err)))
		return bad_usage(err);
	return 0;
}

/* path with "-YYYYmmdd-HHMMSS" before its extension */
static void stamped(const char *path, time_t when, char *out, size_t len)
{
	const char *base = strrchr(path, '/'), *dot;
	char stamp[32];
	struct tm tm;

	base = base ? base + 1 : path;
	dot = strchr(base, '.');
	localtime_r(&when, &tm);
	strftime(stamp, sizeof(stamp), "-%Y%m%d-%H%M%S", &tm);
	if (!dot)
		dot = base + strlen(base);
	snprintf(out, len, "%.*s%s%s", (int)(dot - path), path, stamp, dot);
	/* two intervals ending in the same second: number the second one */
	for (int n = 2; access(out, F_OK) == 0 && n < 100; n++)
		snprintf(out, len, "%.*s%s-%d%s", (int)(dot - path), path, stamp, n, dot);
}

/* An output could not be written at the end: the capture is not lost, it
 * goes to a .tbp beside the first failed output, else in the working
 * directory, else in /tmp, and the line says where and how to write the
 * outputs from it. */
static void rescue(const struct tb_profile *p, const char *failed)
{
	const char *slash = strrchr(failed, '/');
	char name[64], path[4200], err[1024];
	const char *dirs[3];
	struct tm tm;
	time_t now = time(NULL);
	int ndirs = 0;

	localtime_r(&now, &tm);
	strftime(name, sizeof(name), "tachyon-bpf-rescued-%Y%m%d-%H%M%S.tbp", &tm);
	if (slash)
		snprintf(path, sizeof(path), "%.*s", (int)(slash - failed + 1), failed);
	dirs[ndirs++] = slash ? path : "";
	dirs[ndirs++] = "";
	dirs[ndirs++] = "/tmp/";
	for (int i = 0; i < ndirs; i++) {
		char where[4300];

		if (i == 1 && !slash)
			continue; /* the working directory was the first try */
		snprintf(where, sizeof(where), "%s%s", dirs[i], name);
		if (tb_write_output(p, where, err, sizeof(err)) == 0) {
			tb_termsafe_line(stderr, "tachyon-bpf: the capture is saved in ", where);
			fprintf(stderr, "tachyon-bpf: write the outputs from it: tachyon-bpf render FILE.tbp -o OUTPUT\n");
			return;
		}
	}
	fprintf(stderr, "tachyon-bpf: the capture could not be saved anywhere (%s)\n", err);
}

static int write_outputs(const struct record_opts *o, const struct tb_profile *p, time_t stamp)
{
	char err[1024], path[4200], failed[4200] = "";
	int rc = 0, saved_tbp = 0;

	tb_outputs_begin(p);
	for (int i = 0; i < o->noutputs; i++) {
		if (stamp)
			stamped(o->outputs[i], stamp, path, sizeof(path));
		else
			snprintf(path, sizeof(path), "%s", o->outputs[i]);
		int w = tb_write_output(p, path, err, sizeof(err));

		if (w) {
			tb_termsafe_line(stderr, "tachyon-bpf: ", err);
			if (w != TB_ATOMIC_KEPT && !failed[0]) /* kept under another name: not lost */
				snprintf(failed, sizeof(failed), "%s", path);
			rc = 1;
		} else {
			const char *dot = strrchr(path, '.');

			saved_tbp |= dot && !strcmp(dot, ".tbp");
			if (!o->quiet)
				tb_termsafe_line(stderr, "tachyon-bpf: wrote ", path);
		}
	}
	if (failed[0] && !saved_tbp && p->samples)
		rescue(p, failed);
	tb_outputs_end();
	return rc;
}

static void progress(struct tb_session *s, double elapsed)
{
	const struct tb_profile *p = &s->prof;

	fprintf(stderr, "tachyon-bpf: %.0fs: %llu samples (%.0f/s), %u processes, %u threads, %u stacks, %llu lost\n",
		elapsed, (unsigned long long)p->samples, elapsed > 0 ? (double)p->samples / elapsed : 0.0,
		p->nprocs, p->nthreads, p->nstacks, (unsigned long long)tb_session_counter(s, TB_C_LOST));
}

/* --interval: write this interval's outputs and start a fresh profile with
 * the processes still alive, so memory stays bounded however long it runs. */
static void rotate(const struct record_opts *o, struct tb_session *s, double elapsed, double *cpu_before)
{
	struct tb_profile *p = &s->prof, fresh;
	double cpu = tb_cpu_s();

	tb_session_settle(s);
	p->duration_s = elapsed;
	p->agent_cpu_s = cpu - *cpu_before;
	write_outputs(o, p, time(NULL));
	*cpu_before = cpu;

	tb_profile_init(&fresh);
	fresh.hz = p->hz;
	fresh.max_depth = p->max_depth;
	fresh.by_line = p->by_line;
	fresh.min_fraction = p->min_fraction;
	fresh.sort_key = p->sort_key;
	fresh.limit = p->limit;
	fresh.json_version = p->json_version;
	fresh.mode = p->mode;
	fresh.no_gc = p->no_gc;
	fresh.kernel = p->kernel;
	fresh.native = p->native;
	if (p->kernel)
		tb_profile_set_ksyms(&fresh, p->kstack.ksyms, p->kstack.kptr_restrict);
	fresh.sources = p->sources;
	fresh.ncodes.resolver = p->ncodes.resolver;
	fresh.ncodes.show_all = p->ncodes.show_all;
	fresh.lost_base = p->lost_base + p->lost;
	fresh.start_unix = (int64_t)time(NULL);
	for (uint32_t i = 0; i < p->nprocs; i++) {
		const struct tb_plive *l = p->procs[i].live;

		if (l && tb_pid_alive(l->target.pid))
			tb_profile_add_process(&fresh, &l->target);
	}
	fresh.async_aware = p->async_aware; /* after: the processes were told once already */
	tb_profile_free(p);
	*p = fresh;
	p->sym.strs = &p->strs; /* it pointed into `fresh` */
}

/* The start-up's steps: the BPF program loaded (in the shape the kernel
 * takes), the targets found, the first sample. */
static void print_startup(const struct tb_session *s)
{
	fprintf(stderr, "  start-up: BPF program (%s) loaded in %.3f s, %u process%s found in %.3f s",
		s->bpf_shape, (double)(s->loaded_ns - s->start_ns) / 1e9, s->prof.nprocs,
		s->prof.nprocs == 1 ? "" : "es", (double)(s->attached_ns - s->loaded_ns) / 1e9);
	if (s->prof.first_ns > s->start_ns)
		fprintf(stderr, ", first sample %.3f s after the start\n",
			(double)(s->prof.first_ns - s->start_ns) / 1e9);
	else
		fprintf(stderr, ", no sample\n");
}

/* Sample until the duration, a signal (tb_session_stop_signal), or the end
 * of every target; the profile is then finished and its duration and
 * agent CPU set. */
static void capture(const struct record_opts *o, struct tb_session *s)
{
	double start = tb_mono_s(), last_progress = start, interval_start = start;
	double cpu_before = tb_cpu_s();

	s->prof.start_unix = (int64_t)time(NULL);
	while (!tb_session_stop_signal()) {
		double t;

		tb_session_step(s, 20);
		t = tb_mono_s();
		if (s->done || (o->ses.duration > 0 && t - start >= o->ses.duration))
			break;
		if (o->interval > 0 && t - interval_start >= o->interval) {
			rotate(o, s, t - interval_start, &cpu_before);
			interval_start = t;
		}
		if (!o->quiet && t - last_progress >= PROGRESS_EVERY_S) {
			last_progress = t;
			progress(s, t - start);
		}
	}
	tb_session_finish(s);
	s->prof.duration_s = tb_mono_s() - interval_start;
	s->prof.agent_cpu_s = tb_cpu_s() - cpu_before;
}

static void default_output(struct record_opts *o, char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(buf, len, "tachyon-bpf-%Y%m%d-%H%M%S.html", &tm);
	o->outputs[o->noutputs++] = buf;
}

int tb_cmd_record(int argc, char **argv)
{
	struct record_opts *o = calloc(1, sizeof(*o));
	struct tb_session *s = calloc(1, sizeof(*s));
	struct tb_sources sources = { 0 };
	uint64_t bpf_samples = 0, bpf_walks = 0, bpf_skipped = 0, bpf_body_wakeups = 0;
	char err[1024], defout[64];
	int rc;

	if (!o || !s) {
		free(o);
		free(s);
		fprintf(stderr, "tachyon-bpf: out of memory\n");
		return 1;
	}
	rc = parse_args(argc, argv, o);
	if (rc) {
		free(o);
		free(s);
		return rc == 1 ? 0 : 2;
	}
	if (!o->noutputs)
		default_output(o, defout, sizeof(defout));
	for (int i = 0; i < o->noutputs; i++) {
		if (tb_session_check_root(err, sizeof(err)) || tb_check_writable(o->outputs[i], err, sizeof(err))) {
			tb_termsafe_line(stderr, "tachyon-bpf: ", err);
			free(o);
			free(s);
			return 2;
		}
	}
	tb_session_init(s, &o->ses);
	s->prof.by_line = o->by_line;
	s->prof.min_fraction = o->min_fraction;
	s->prof.sort_key = o->sort_key;
	s->prof.limit = o->limit;
	s->prof.json_version = o->json_version;
	for (int i = 0; i < o->noutputs; i++)
		if (tb_output_needs_sources(o->outputs[i]))
			s->prof.sources = &sources;
	if (tb_session_start(s, err, sizeof(err))) {
		tb_termsafe_line(stderr, "tachyon-bpf: ", err); /* may name a target's files */
		rc = 1;
		goto out;
	}
	if (!o->quiet)
		fprintf(stderr, "tachyon-bpf: sampling %u process%s at %u Hz%s (BPF program id %d)\n",
			s->prof.nprocs, s->prof.nprocs == 1 ? "" : "es", o->ses.hz,
			o->ses.duration > 0 ? "" : ", Ctrl-C to stop", tb_sampler_prog_id(s->sampler));
	capture(o, s);
	bpf_samples = tb_session_counter(s, TB_C_SAMPLES);
	bpf_walks = tb_session_counter(s, TB_C_TSTATE_WALKS);
	bpf_skipped = tb_session_counter(s, TB_C_WALKS_SKIPPED);
	bpf_body_wakeups = tb_session_counter(s, TB_C_BODY_WAKEUPS);
	tb_session_close(s);
	tb_session_child_note(s, stderr, o->quiet);

	rc = write_outputs(o, &s->prof, o->interval > 0 ? time(NULL) : 0);
	if (!o->quiet) {
		tb_write_summary(&s->prof, stderr, o->summary_rows);
		fprintf(stderr, "tachyon-bpf: BPF program: %llu runs on profiled threads, "
			"%llu thread-list walks (thread-state cache misses), %llu skipped (walk budget spent), "
			"%llu early wake-ups (a module or class body's new code object, read before it is freed)\n",
			(unsigned long long)bpf_samples, (unsigned long long)bpf_walks,
			(unsigned long long)bpf_skipped, (unsigned long long)bpf_body_wakeups);
		print_startup(s);
		tb_few_samples_warning(&s->prof, stderr);
	}
out:
	tb_session_free(s);
	tb_sources_free(&sources);
	free(s);
	free(o);
	return rc;
}
