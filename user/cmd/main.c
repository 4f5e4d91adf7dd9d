/* main.c: tachyon-bpf command line: parse options, choose targets, run
 * the capture loop (progress, duration, signals, exits), write outputs. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "proc/cgroup.h"
#include "lib/cli.h"
#include "cmd/commands.h"
#include "proc/launch.h"
#include "out/format.h"
#include "model/profile.h"
#include "capture/sampler.h"
#include "capture/targets.h"
#include "capture/watch.h"

#define MAX_OUTPUTS 16
#define MAX_PIDS 256

struct options {
	unsigned hz, max_depth, ringbuf_mb, top, cpu_plus1;
	int floor, no_gc, subprocesses;
	char cgroup[4096];
	enum tb_mode mode;
	double duration, interval;
	int all_python, quiet, opcodes, by_line;
	int sort_key;
	unsigned limit;
	unsigned bench_walk;
	double min_fraction;
	const char *outputs[MAX_OUTPUTS];
	int noutputs;
	pid_t pids[MAX_PIDS];
	int npids;
	char **cmd;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tachyon-bpf [OPTIONS] -- CMD [ARGS...]\n"
		"       tachyon-bpf [OPTIONS] -p PID[,PID...]\n"
		"       tachyon-bpf [OPTIONS] --all-python\n"
		"       tachyon-bpf render CAPTURE.tbp -o OUT...\n"
		"       tachyon-bpf diff BASELINE.tbp CURRENT.tbp -o OUT...\n"
		"       tachyon-bpf dump PID [--json]\n"
		"       tachyon-bpf top [-p PID | --all-python | -- CMD] [-r HZ] [--opcodes] [--window S]\n"
		"Samples the Python stacks of CPython 3.10-3.15 processes from a BPF program.\n\n"
		"  -p, --pid PID[,PID...]   profile running processes\n"
		"  -a, --all-python         profile every Python process running at start\n"
		"      --subprocesses       also profile the Python children of the targets\n"
		"      --cgroup PATH        only tasks of this cgroup v2 subtree (filtered in the kernel)\n"
		"      --container ID       only the container whose id or name starts with ID\n"
		"  -d, --duration SECONDS   stop after SECONDS (default: until Ctrl-C or exit)\n"
		"  -r, --rate HZ            samples per second per CPU (default 99, max 20000)\n"
		"      --interval SECONDS   continuous capture: one set of outputs per interval,\n"
		"                           named FILE-YYYYmmdd-HHMMSS.EXT\n"
		"  -o, --output FILE        output by extension: .html .json .folded .speedscope.json\n"
		"                           .pb.gz (pprof) .tbp (capture, see render) (repeatable)\n"
		"                           .gecko.json (Firefox Profiler) .jsonl .txt (table)\n"
		"      --sort own|total|name  order of the .txt table (default own)\n"
		"      --limit N            rows of the .txt table (default 0: all)\n"
		"      --max-depth N        deepest stack recorded (default 128, max 1024)\n"
		"      --opcodes            read the executing opcode of every frame, not only the\n"
		"                           innermost one (kept per node: which CALL form each caller runs)\n"
		"      --no-opcodes         do not read opcode bytes at all\n"
		"      --mode MODE          cpu (on-CPU samples, default), wall (also time off\n"
		"                           CPU, weighted), gil (GIL holders only), exception\n"
		"                           (only while an exception is being handled)\n"
		"      --no-gc              no synthetic <GC> frames for samples during a collection\n"
		"      --by-line            one tree node per (function, line), like py-spy\n"
		"      --min-fraction F     hide nodes below F of all samples (default 0.001)\n"
		"      --cpu N              sample only on CPU N (benchmarks)\n"
		"      --bench-floor        attach an empty program instead (benchmarks)\n"
		"      --ringbuf-mb N       ring buffer size in MiB (default 4)\n"
		"      --top N              functions listed in the summary (default 10)\n"
		"  -q, --quiet              no progress or summary on stderr\n"
		"      --live               live terminal view: same as tachyon-bpf top ARGS\n"
		"  -h, --help               this text\n");
}

static int die(const char *msg)
{
	fprintf(stderr, "tachyon-bpf: %s\n", msg);
	return 1;
}


static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_DEPTH = 256, OPT_NOOP, OPT_RB, OPT_TOP, OPT_BYLINE, OPT_MINFRAC, OPT_CPU, OPT_FLOOR, OPT_MODE, OPT_NOGC, OPT_SUBPROC, OPT_CGROUP, OPT_CONTAINER, OPT_INTERVAL, OPT_OPCODES, OPT_BENCHWALK, OPT_SORT, OPT_LIMIT };
	static const struct option longs[] = {
		{ "pid", required_argument, 0, 'p' },
		{ "all-python", no_argument, 0, 'a' },
		{ "duration", required_argument, 0, 'd' },
		{ "rate", required_argument, 0, 'r' },
		{ "output", required_argument, 0, 'o' },
		{ "max-depth", required_argument, 0, OPT_DEPTH },
		{ "no-opcodes", no_argument, 0, OPT_NOOP },
		{ "opcodes", no_argument, 0, OPT_OPCODES },
		{ "bench-walk", required_argument, 0, OPT_BENCHWALK },
		{ "ringbuf-mb", required_argument, 0, OPT_RB },
		{ "top", required_argument, 0, OPT_TOP },
		{ "by-line", no_argument, 0, OPT_BYLINE },
		{ "cpu", required_argument, 0, OPT_CPU },
		{ "mode", required_argument, 0, OPT_MODE },
		{ "no-gc", no_argument, 0, OPT_NOGC },
		{ "subprocesses", no_argument, 0, OPT_SUBPROC },
		{ "cgroup", required_argument, 0, OPT_CGROUP },
		{ "container", required_argument, 0, OPT_CONTAINER },
		{ "interval", required_argument, 0, OPT_INTERVAL },
		{ "bench-floor", no_argument, 0, OPT_FLOOR },
		{ "min-fraction", required_argument, 0, OPT_MINFRAC },
		{ "sort", required_argument, 0, OPT_SORT },
		{ "limit", required_argument, 0, OPT_LIMIT },
		{ "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;
	char *end;

	o->hz = 99;
	o->max_depth = TB_DEFAULT_DEPTH;
	o->ringbuf_mb = 4;
	o->top = 10;
	o->min_fraction = 0.001;
	while ((c = getopt_long(argc, argv, "+p:ad:r:o:qh", longs, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (tb_parse_pids(optarg, o->pids, &o->npids, MAX_PIDS))
				return die("-p takes a comma-separated list of process ids");
			break;
		case 'a':
			o->all_python = 1;
			break;
		case 'd':
			o->duration = strtod(optarg, &end);
			if (*end || o->duration <= 0)
				return die("-d takes a positive number of seconds");
			break;
		case 'r':
			if (tb_parse_uint(optarg, 1, 20000, &o->hz))
				return die("-r takes a rate from 1 to 20000 Hz");
			break;
		case 'o':
			if (o->noutputs >= MAX_OUTPUTS)
				return die("too many -o outputs");
			if (!tb_output_supported(optarg)) {
				fprintf(stderr, "tachyon-bpf: %s: unknown output format (supported: " TB_OUTPUT_FORMATS ")\n", optarg);
				return 1;
			}
			o->outputs[o->noutputs++] = optarg;
			break;
		case OPT_DEPTH:
			if (tb_parse_uint(optarg, 1, TB_MAX_FRAMES, &o->max_depth))
				return die("--max-depth takes a depth from 1 to 1024");
			break;
		case OPT_NOOP:
			o->opcodes = -1;
			break;
		case OPT_OPCODES:
			o->opcodes = 1;
			break;
		case OPT_BENCHWALK:
			if (tb_parse_uint(optarg, 0, 1, &o->bench_walk))
				return die("--bench-walk takes 0 or 1");
			break;
		case OPT_RB:
			if (tb_parse_uint(optarg, 1, 1024, &o->ringbuf_mb) || (o->ringbuf_mb & (o->ringbuf_mb - 1)))
				return die("--ringbuf-mb takes a power of two from 1 to 1024");
			break;
		case OPT_TOP:
			if (tb_parse_uint(optarg, 0, 1000, &o->top))
				return die("--top takes a number");
			break;
		case OPT_CPU:
			if (tb_parse_uint(optarg, 0, 4095, &o->cpu_plus1))
				return die("--cpu takes a CPU number");
			o->cpu_plus1++;
			break;
		case OPT_MODE:
			if (!strcmp(optarg, "cpu"))
				o->mode = TB_MODE_CPU;
			else if (!strcmp(optarg, "wall"))
				o->mode = TB_MODE_WALL;
			else if (!strcmp(optarg, "gil"))
				o->mode = TB_MODE_GIL;
			else if (!strcmp(optarg, "exception"))
				o->mode = TB_MODE_EXCEPTION;
			else
				return die("--mode takes cpu, wall, gil or exception");
			break;
		case OPT_NOGC:
			o->no_gc = 1;
			break;
		case OPT_CGROUP:
		case OPT_CONTAINER: {
			char err[512];

			if ((c == OPT_CGROUP ? tb_cgroup_resolve : tb_container_resolve)(
				    optarg, o->cgroup, sizeof(o->cgroup), err, sizeof(err)))
				return die(err);
			break;
		}
		case OPT_INTERVAL:
			o->interval = strtod(optarg, &end);
			if (*end || o->interval < 1)
				return die("--interval takes a number of seconds (at least 1)");
			break;
		case OPT_SUBPROC:
			o->subprocesses = 1;
			break;
		case OPT_FLOOR:
			o->floor = 1;
			break;
		case OPT_BYLINE:
			o->by_line = 1;
			break;
		case OPT_MINFRAC:
			o->min_fraction = strtod(optarg, &end);
			if (*end || o->min_fraction < 0 || o->min_fraction >= 1)
				return die("--min-fraction takes a fraction from 0 to 1 (e.g. 0.001)");
			break;
		case OPT_SORT:
			if ((o->sort_key = tb_pstats_sort_key(optarg)) < 0)
				return die("--sort takes own, total or name");
			break;
		case OPT_LIMIT:
			if (tb_parse_uint(optarg, 0, 0x7fffffff, &o->limit))
				return die("--limit takes a number of rows (0: all)");
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if ((o->cmd != NULL) + (o->npids > 0) + o->all_python != 1) {
		usage(stderr);
		return die("give exactly one of: -- CMD, -p PID, --all-python");
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int any_alive(const struct tb_profile *p)
{
	for (uint32_t i = 0; i < p->nprocs; i++)
		if (kill(p->procs[i].target.pid, 0) == 0 || errno == EPERM)
			return 1;
	return 0;
}

static void progress(const struct tb_profile *p, struct tb_sampler *s, double elapsed)
{
	fprintf(stderr, "tachyon-bpf: %.0fs: %llu samples (%.0f/s), %u processes, %u threads, %llu lost\n",
		elapsed, (unsigned long long)p->samples, elapsed > 0 ? (double)p->samples / elapsed : 0.0,
		p->nprocs, p->nthreads, (unsigned long long)tb_sampler_counter(s, TB_C_LOST));
}

static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
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

static int write_outputs(const struct options *o, const struct tb_profile *p, time_t stamp)
{
	char err[1024], path[4200];
	int rc = 0;

	for (int i = 0; i < o->noutputs; i++) {
		if (stamp)
			stamped(o->outputs[i], stamp, path, sizeof(path));
		else
			snprintf(path, sizeof(path), "%s", o->outputs[i]);
		if (tb_write_output(p, path, err, sizeof(err))) {
			fprintf(stderr, "tachyon-bpf: %s\n", err);
			rc = 1;
		} else if (!o->quiet) {
			fprintf(stderr, "tachyon-bpf: wrote %s\n", path);
		}
	}
	return rc;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* the clock of bpf_ktime_get_ns() */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --interval: write this interval's outputs and start a fresh profile with
 * the processes still alive, so memory stays bounded however long it runs. */
static void rotate(const struct options *o, struct tb_sampler *s, struct tb_profile *p,
		   double elapsed, uint64_t *lost_before, double *cpu_before)
{
	struct tb_profile fresh;
	uint64_t lost = tb_sampler_counter(s, TB_C_LOST);
	double cpu = cpu_seconds();

	tb_profile_finish(p, mono_ns());
	tb_profile_read_thread_names(p, 0);
	p->duration_s = elapsed;
	p->lost = lost - *lost_before;
	p->agent_cpu_s = cpu - *cpu_before;
	write_outputs(o, p, time(NULL));
	*lost_before = lost;
	*cpu_before = cpu;

	tb_profile_init(&fresh);
	fresh.hz = p->hz;
	fresh.max_depth = p->max_depth;
	fresh.by_line = p->by_line;
	fresh.min_fraction = p->min_fraction;
	fresh.sort_key = p->sort_key;
	fresh.limit = p->limit;
	fresh.mode = p->mode;
	fresh.no_gc = p->no_gc;
	fresh.start_unix = (int64_t)time(NULL);
	for (uint32_t i = 0; i < p->nprocs; i++) {
		const struct tb_target *t = &p->procs[i].target;

		if ((kill(t->pid, 0) == 0 || errno == EPERM) && tb_profile_find_process(&fresh, (uint32_t)t->pid) < 0)
			tb_profile_add_process(&fresh, t);
	}
	tb_profile_free(p);
	*p = fresh;
	p->sym.strs = &p->strs; /* it pointed into `fresh` */
}

/* Sample until the duration, a signal, or the end of every target. */
static void capture(struct options *o, struct tb_sampler *s, struct tb_profile *p, struct tb_watch *w,
		    pid_t child)
{
	double start = now_s(), last_progress = start, last_check = start, interval_start = start;
	double cpu_before = cpu_seconds(), fast_until = start + 2.0;
	uint64_t lost_before = 0, seen = w->discovered;
	int child_status;

	while (!stop_requested) {
		double t;

		/* a new process imports modules whose code objects are freed right
		 * after they run: drain often while processes are young */
		tb_sampler_poll(s, w->npending ? 2 : now_s() < fast_until ? 4 : 20);
		tb_watch_poll(w);
		t = now_s();
		if (w->discovered != seen) {
			seen = w->discovered;
			fast_until = t + 2.0;
		}
		if (o->duration > 0 && t - start >= o->duration)
			break;
		if (child > 0 && tb_child_exited(child, &child_status))
			break;
		if (t - last_check >= 0.2) {
			last_check = t;
			tb_profile_read_thread_names(p, 1);
			if (child <= 0 && !o->all_python && !o->subprocesses && !any_alive(p))
				break;
		}
		if (o->interval > 0 && t - interval_start >= o->interval) {
			rotate(o, s, p, t - interval_start, &lost_before, &cpu_before);
			interval_start = t;
		}
		if (!o->quiet && t - last_progress >= 5.0) {
			last_progress = t;
			progress(p, s, t - start);
		}
	}
	tb_sampler_poll(s, 0); /* what is already in the ring */
	tb_watch_poll(w);
	p->duration_s = now_s() - (o->interval > 0 ? interval_start : start);
	p->lost_base = lost_before;
}


static void default_output(struct options *o, char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(buf, len, "tachyon-bpf-%Y%m%d-%H%M%S.html", &tm);
	o->outputs[o->noutputs++] = buf;
}

/* Subcommands that do not sample: each lives in its own cmd_*.c. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} subcommands[] = {
	{ "render", tb_cmd_render },
	{ "diff", tb_cmd_diff },
	{ "dump", tb_cmd_dump },
	{ "top", tb_cmd_top },
};

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct tb_sampler_opts so;
	struct tb_sampler *s;
	struct tb_profile prof;
	struct tb_watch watch;
	struct tb_sources sources = { 0 };
	char err[1024], defout[64];
	pid_t child = 0;
	int rc = 0, child_status = 0;

	for (size_t i = 0; argc > 1 && i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(argv[1], subcommands[i].name) == 0)
			return subcommands[i].run(argc - 1, argv + 1);
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (strcmp(argv[i], "--live") == 0) { /* same as `top` with the other arguments */
			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof(*argv));
			return tb_cmd_top(argc - 1, argv);
		}
	if (parse_args(argc, argv, &o))
		return 2;
	if (geteuid() != 0)
		return die("must run as root: loading the BPF program needs CAP_BPF and CAP_PERFMON");
	if (!o.noutputs)
		default_output(&o, defout, sizeof(defout));
	tb_profile_init(&prof);
	prof.hz = o.hz;
	prof.max_depth = o.max_depth;
	prof.by_line = o.by_line;
	prof.mode = o.mode;
	prof.no_gc = o.no_gc;
	for (int i = 0; i < o.noutputs; i++)
		if (tb_output_needs_sources(o.outputs[i]))
			prof.sources = &sources;
	prof.min_fraction = o.min_fraction;
	prof.sort_key = o.sort_key;
	prof.limit = o.limit;
	so = (struct tb_sampler_opts){ .hz = o.hz, .max_depth = o.max_depth,
				       .ringbuf_mb = o.ringbuf_mb, .read_opcodes = o.opcodes < 0 ? 0 : o.opcodes > 0 ? 2 : 1,
				       .bench_walk = (int)o.bench_walk,
				       .cpu = (int)o.cpu_plus1 - 1, .floor = o.floor,
				       .follow_mode = o.all_python ? TB_FOLLOW_ALL :
						      o.subprocesses ? TB_FOLLOW_CHILDREN : TB_FOLLOW_NONE,
				       .wall = o.mode == TB_MODE_WALL,
				       .cgroup = o.cgroup[0] ? o.cgroup : NULL };
	s = tb_sampler_open(&so, &prof, &watch, err, sizeof(err));
	if (!s)
		return die(err);
	tb_watch_init(&watch, s, &prof, o.quiet);
	signal(SIGCHLD, SIG_DFL); /* an inherited SIG_IGN would reap the command behind our back */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	for (int i = 0; i < o.npids; i++) {
		if (tb_target_attach(s, &prof, o.pids[i], err, sizeof(err))) {
			tb_sampler_close(s);
			return die(err);
		}
	}
	if (o.all_python && tb_target_attach_all(s, &prof, o.cgroup[0] ? o.cgroup : NULL, o.quiet) == 0 && !o.quiet)
		fprintf(stderr, "tachyon-bpf: no Python process is running yet: waiting for new ones\n");
	if (o.cmd && o.subprocesses)
		tb_sampler_follow(s, getpid()); /* so the command and its children are followed from fork */
	if (o.cmd) {
		child = tb_launch(o.cmd, err, sizeof(err));
		if (child < 0) {
			tb_sampler_close(s);
			return die(err);
		}
		/* with --subprocesses the exec of the command is reported like any other */
		if (!o.subprocesses &&
		    tb_target_attach_launched(s, &prof, child, 10000, err, sizeof(err))) {
			kill(child, SIGTERM);
			waitpid(child, NULL, 0);
			tb_sampler_close(s);
			return die(err);
		}
	}
	if (o.subprocesses)
		for (uint32_t i = 0; i < prof.nprocs; i++)
			tb_sampler_follow(s, prof.procs[i].target.pid);
	if (!o.quiet)
		fprintf(stderr, "tachyon-bpf: sampling %u process%s at %u Hz%s (BPF program id %d)\n",
			prof.nprocs, prof.nprocs == 1 ? "" : "es", o.hz,
			o.duration > 0 ? "" : ", Ctrl-C to stop", tb_sampler_prog_id(s));
	prof.start_unix = (int64_t)time(NULL);
	prof.agent_cpu_s = cpu_seconds();
	capture(&o, s, &prof, &watch, child);
	tb_profile_finish(&prof, mono_ns());
	tb_profile_read_thread_names(&prof, 0); /* threads that got their name late */
	prof.agent_cpu_s = cpu_seconds() - prof.agent_cpu_s;
	prof.lost = tb_sampler_counter(s, TB_C_LOST) - prof.lost_base;
	tb_watch_free(&watch);
	tb_sampler_close(s);

	rc = write_outputs(&o, &prof, o.interval > 0 ? time(NULL) : 0);
	if (!o.quiet)
		tb_write_summary(&prof, stderr, o.top);
	if (child > 0 && !tb_child_exited(child, &child_status)) {
		kill(child, SIGTERM);
		waitpid(child, &child_status, 0);
	}
	tb_profile_free(&prof);
	tb_sources_free(&sources);
	return rc;
}
