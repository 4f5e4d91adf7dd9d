/* session.c: one capture session for every command that samples (the
 * capture command, top): the table of sampling options (parsing and usage
 * lines), the signals that end a capture, opening the sampler with the
 * watch, attaching the targets (pids, every Python process or a cgroup's,
 * a launched command), one step of the drain loop, whether the targets are
 * done, and the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/cli.h"
#include "lib/term.h"
#include "proc/cgroup.h"
#include "proc/launch.h"
#include "proc/unwind_ref.h"
#include "capture/clock.h"
#include "capture/targets.h"
#include "capture/unwind.h"
#include "capture/session.h"

/* young processes import modules whose code objects are freed right after
 * they run: drain often for this long after a new one is found */
#define YOUNG_S 2.0
/* --async-aware, once tasks run: drain at least this often (ms) */
#define TASK_DRAIN_MS 5
/* how often thread names are read and the targets checked */
#define CHECK_EVERY_S 0.2

enum {
	O_SUBPROC = 256, O_CGROUP, O_CONTAINER, O_DEPTH, O_OPCODES, O_NOOP, O_MODE, O_NOGC, O_RB,
	O_CPU, O_FLOOR, O_BENCHWALK, O_BENCHTASK, O_KERNEL, O_ASYNC_AWARE, O_NATIVE, O_NATIVE_DEPTH, O_NATIVE_MB, O_NATIVE_ALL,
};

#define NATIVE_DEPTH_DEFAULT 128
#define NATIVE_TABLE_MB_DEFAULT 32

#define BOTH (TB_FOR_RECORD | TB_FOR_TOP)

static const struct optdef {
	const char *name;
	int has_arg, key;
	unsigned commands;                /* TB_FOR_* */
	enum tb_session_section section;
	const char *usage;                /* left column of the usage text */
	const char *help;                 /* right column, '\n' continues it */
} optdefs[] = {
	{ "pid", required_argument, 'p', BOTH, TB_SECT_TARGETS, "-p, --pid PID[,PID...]",
	  "profile running processes" },
	{ "all-python", no_argument, 'a', BOTH, TB_SECT_TARGETS, "-a, --all-python",
	  "every Python process, also the ones started later" },
	{ "subprocesses", no_argument, O_SUBPROC, BOTH, TB_SECT_TARGETS, "    --subprocesses",
	  "also profile the Python children of the targets" },
	{ "cgroup", required_argument, O_CGROUP, BOTH, TB_SECT_TARGETS, "    --cgroup PATH",
	  "only tasks of this cgroup v2 subtree (filtered in\n"
	  "the kernel); alone: every Python process in it,\n"
	  "also the ones started later" },
	{ "container", required_argument, O_CONTAINER, BOTH, TB_SECT_TARGETS, "    --container ID",
	  "only the container whose id or name starts with\n"
	  "ID (its cgroup; alone: every Python process in it)" },
	{ "duration", required_argument, 'd', BOTH, TB_SECT_SAMPLING, "-d, --duration SECONDS",
	  "stop after SECONDS" },
	{ "rate", required_argument, 'r', BOTH, TB_SECT_SAMPLING, "-r, --rate HZ",
	  "samples per second per CPU (default 99, max 20000)" },
	{ "max-depth", required_argument, O_DEPTH, TB_FOR_RECORD, TB_SECT_SAMPLING, "    --max-depth N",
	  "deepest stack recorded (default and max 1024)" },
	{ "opcodes", no_argument, O_OPCODES, TB_FOR_RECORD, TB_SECT_SAMPLING, "    --opcodes",
	  "read the executing opcode of every frame, not only the\n"
	  "innermost one (kept per node: which CALL form each caller runs)" },
	{ "no-opcodes", no_argument, O_NOOP, TB_FOR_RECORD, TB_SECT_SAMPLING, "    --no-opcodes",
	  "do not read opcode bytes at all" },
	{ "mode", required_argument, O_MODE, TB_FOR_RECORD, TB_SECT_SAMPLING, "    --mode MODE",
	  "cpu (on-CPU samples, default), wall (also time off\n"
	  "CPU, weighted), gil (GIL holders only), exception\n"
	  "(only while an exception is being handled)" },
	{ "no-gc", no_argument, O_NOGC, TB_FOR_RECORD, TB_SECT_SAMPLING, "    --no-gc",
	  "no synthetic <GC> frames for samples during a collection" },
	{ "kernel", no_argument, O_KERNEL, BOTH, TB_SECT_SAMPLING, "    --kernel",
	  "also the kernel frames of each sample (system calls,\n"
	  "page faults; off-CPU: where it blocked), named from\n"
	  "/proc/kallsyms, below the Python frame that made the call" },
	{ "async-aware", no_argument, O_ASYNC_AWARE, BOTH, TB_SECT_SAMPLING, "    --async-aware",
	  "asyncio tasks (CPython 3.14+): a <task NAME> frame where\n"
	  "a task's coroutine frames begin, the tasks awaiting it\n"
	  "as <task NAME> frames below it" },
	{ "native", no_argument, O_NATIVE, BOTH, TB_SECT_SAMPLING, "    --native",
	  "also native (C) frames, unwound in the kernel and\n"
	  "merged with the Python frames they ran" },
	{ "native-depth", required_argument, O_NATIVE_DEPTH, BOTH, TB_SECT_SAMPLING, "    --native-depth N",
	  "native frames recorded per sample (default 128,\n"
	  "max 256; implies --native)" },
	{ "native-table-mb", required_argument, O_NATIVE_MB, BOTH, TB_SECT_SAMPLING, "    --native-table-mb N",
	  "memory for the unwind tables in MiB (default 32)" },
	{ "native-all", no_argument, O_NATIVE_ALL, BOTH, TB_SECT_SAMPLING, "    --native-all",
	  "keep the interpreter's call plumbing between Python\n"
	  "frames (PyObject_Vectorcall ...; implies --native)" },
	{ "ringbuf-mb", required_argument, O_RB, TB_FOR_RECORD, TB_SECT_SAMPLING, "    --ringbuf-mb N",
	  "ring buffer size in MiB (default 4)" },
	{ "cpu", required_argument, O_CPU, TB_FOR_RECORD, TB_SECT_BENCH, "    --cpu N",
	  "sample only on CPU N" },
	{ "bench-floor", no_argument, O_FLOOR, TB_FOR_RECORD, TB_SECT_BENCH, "    --bench-floor",
	  "attach an empty program instead (the pid filter only)" },
	{ "bench-task-reads", required_argument, O_BENCHTASK, TB_FOR_RECORD, TB_SECT_BENCH, "    --bench-task-reads N",
	  "with --async-aware, read the running task N more times\n"
	  "per sample (0-64: its cost, amplified)" },
	{ "bench-walk", required_argument, O_BENCHWALK, TB_FOR_RECORD, TB_SECT_BENCH, "    --bench-walk 0|1",
	  "1: walk the frames without reading their code objects" },
};

#define NOPTDEFS (sizeof(optdefs) / sizeof(optdefs[0]))

_Static_assert(O_NATIVE_ALL < TB_SESSION_OPT_END, "session option keys overlap the commands'");

void tb_session_opts_init(struct tb_session_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->hz = 99;
	o->max_depth = TB_DEFAULT_DEPTH;
	o->ringbuf_mb = 4;
	o->mode = TB_MODE_CPU;
	o->cpu = -1;
	o->native_table_mb = NATIVE_TABLE_MB_DEFAULT;
}

void tb_session_longopts(unsigned command, const struct option *own, size_t nown,
			 struct option *longs, size_t room)
{
	size_t n = 0;

	for (size_t i = 0; i < nown && n + 1 < room; i++)
		longs[n++] = own[i];
	for (size_t i = 0; i < NOPTDEFS && n + 1 < room; i++)
		if (optdefs[i].commands & command)
			longs[n++] = (struct option){ optdefs[i].name, optdefs[i].has_arg, NULL, optdefs[i].key };
	longs[n] = (struct option){ 0, 0, 0, 0 };
}

void tb_session_usage(FILE *f, unsigned command, enum tb_session_section section)
{
	for (size_t i = 0; i < NOPTDEFS; i++) {
		const char *h = optdefs[i].help, *nl;

		if (!(optdefs[i].commands & command) || optdefs[i].section != section)
			continue;
		fprintf(f, "  %-24s ", optdefs[i].usage);
		while ((nl = strchr(h, '\n'))) {
			fprintf(f, "%.*s\n%27s", (int)(nl - h), h, "");
			h = nl + 1;
		}
		fprintf(f, "%s\n", h);
	}
}

static int bad(char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "%s", msg);
	return -1;
}

/* a positive number of seconds */
static int parse_seconds(const char *arg, double *out)
{
	char *end;

	*out = strtod(arg, &end);
	return *end || end == arg || !(*out > 0) ? -1 : 0;
}

int tb_session_option(struct tb_session_opts *o, int key, char *arg, char *err, size_t errlen)
{
	unsigned v;

	switch (key) {
	case 'p':
		if (tb_parse_pids(arg, o->pids, &o->npids, TB_SESSION_MAX_PIDS))
			return bad(err, errlen, "-p takes a comma-separated list of process ids");
		break;
	case 'a':
		o->all_python = 1;
		break;
	case O_SUBPROC:
		o->subprocesses = 1;
		break;
	case O_CGROUP:
	case O_CONTAINER:
		if ((key == O_CGROUP ? tb_cgroup_resolve : tb_container_resolve)(
			    arg, o->cgroup, sizeof(o->cgroup), err, errlen))
			return -1;
		break;
	case 'd':
		if (parse_seconds(arg, &o->duration))
			return bad(err, errlen, "-d takes a positive number of seconds");
		break;
	case 'r':
		if (tb_parse_uint(arg, 1, 20000, &o->hz))
			return bad(err, errlen, "-r takes a rate from 1 to 20000 Hz");
		break;
	case O_DEPTH:
		o->max_depth_given = 1;
		if (tb_parse_uint(arg, 1, TB_MAX_FRAMES, &o->max_depth))
			return bad(err, errlen, "--max-depth takes a depth from 1 to 1024");
		break;
	case O_OPCODES:
		o->opcodes = 1;
		break;
	case O_NOOP:
		o->opcodes = -1;
		break;
	case O_MODE:
		if (!strcmp(arg, "cpu"))
			o->mode = TB_MODE_CPU;
		else if (!strcmp(arg, "wall"))
			o->mode = TB_MODE_WALL;
		else if (!strcmp(arg, "gil"))
			o->mode = TB_MODE_GIL;
		else if (!strcmp(arg, "exception"))
			o->mode = TB_MODE_EXCEPTION;
		else
			return bad(err, errlen, "--mode takes cpu, wall, gil or exception");
		break;
	case O_NOGC:
		o->no_gc = 1;
		break;
	case O_KERNEL:
		o->kernel = 1;
		break;
	case O_ASYNC_AWARE:
		o->async_aware = 1;
		break;
	case O_RB:
		if (tb_parse_uint(arg, 1, 1024, &o->ringbuf_mb) || (o->ringbuf_mb & (o->ringbuf_mb - 1)))
			return bad(err, errlen, "--ringbuf-mb takes a power of two from 1 to 1024");
		break;
	case O_CPU:
		if (tb_parse_uint(arg, 0, 4095, &v))
			return bad(err, errlen, "--cpu takes a CPU number");
		o->cpu = (int)v;
		break;
	case O_FLOOR:
		o->floor = 1;
		break;
	case O_NATIVE:
		if (!o->native_depth)
			o->native_depth = NATIVE_DEPTH_DEFAULT;
		break;
	case O_NATIVE_DEPTH:
		if (tb_parse_uint(arg, 1, TB_MAX_NATIVE, &o->native_depth))
			return bad(err, errlen, "--native-depth takes a depth from 1 to 256");
		break;
	case O_NATIVE_MB:
		if (tb_parse_uint(arg, 1, 1024, &o->native_table_mb))
			return bad(err, errlen, "--native-table-mb takes a size from 1 to 1024 MiB");
		break;
	case O_NATIVE_ALL:
		o->native_all = 1;
		if (!o->native_depth)
			o->native_depth = NATIVE_DEPTH_DEFAULT;
		break;
	case O_BENCHTASK:
		if (tb_parse_uint(arg, 0, 64, &o->bench_task_reads))
			return bad(err, errlen, "--bench-task-reads takes 0 to 64");
		break;
	case O_BENCHWALK:
		if (tb_parse_uint(arg, 0, 1, &o->bench_walk))
			return bad(err, errlen, "--bench-walk takes 0 or 1");
		break;
	default:
		return 0;
	}
	return 1;
}

int tb_session_check_targets(struct tb_session_opts *o, char **rest, char *err, size_t errlen)
{
	if (rest && *rest)
		o->cmd = rest;
	/* a cgroup alone: every Python process in it, running and started later */
	if (o->cgroup[0] && !o->cmd && !o->npids)
		o->all_python = 1;
	if (!o->cmd && !o->npids && !o->all_python)
		return bad(err, errlen, "no target: give -- CMD [ARGS], -p PID, --all-python, or --cgroup PATH / --container ID alone (tachyon-bpf --help)");
	if (o->npids && o->all_python)
		return bad(err, errlen, "-p and --all-python both given: --all-python already takes every Python process; give one of them");
	if (o->cmd && (o->npids || o->all_python))
		return bad(err, errlen, "a command after -- and -p/--all-python both given: profile a command you launch, or running processes, not both in one capture");
	return 0;
}

/* The signals that end a capture.  The first of any asks the command's
 * loop to stop: the outputs are written and the exit code is 0.  A later
 * one that a person sends aborts at once: the terminal is restored, the
 * launched command stopped, and the exit code is 128 + its number (130
 * for Ctrl-C); no output is half-written (output/atomic.c). */
static const struct {
	int sig;
	int aborts_later;        /* a second request: a person insists */
} stop_signals[] = {
	{ SIGINT, 1 },
	{ SIGTERM, 1 },
	{ SIGQUIT, 1 },
	{ SIGHUP, 0 },           /* the terminal went away (an ssh disconnect) */
	{ SIGPIPE, 0 },          /* the reader of stderr went away; every later write to it
				  * raises SIGPIPE again (and fails with EPIPE) */
};

#define NSTOP_SIGNALS (sizeof(stop_signals) / sizeof(stop_signals[0]))

static volatile sig_atomic_t stop_signal;   /* the first one, 0 none yet */
static volatile sig_atomic_t stop_child;    /* the launched command while it runs, else 0 */

static void on_stop_signal(int sig)
{
	if (!stop_signal) {
		stop_signal = sig;
		return;
	}
	for (size_t i = 0; i < NSTOP_SIGNALS; i++) {
		if (stop_signals[i].sig == sig && stop_signals[i].aborts_later) {
			static const char said[] = "\ntachyon-bpf: stopped again: aborted at once, no output written\n";

			tb_term_leave();
			if (write(STDERR_FILENO, said, sizeof(said) - 1) < 0) {
				/* nothing more to do in a signal handler */
			}
			if (stop_child > 0)
				kill((pid_t)stop_child, SIGTERM);
			_exit(128 + sig);
		}
	}
}

/* The one place that installs them (SA_RESTART: reads of /proc are not cut
 * short; the drain loop's poll returns early all the same). */
static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSTOP_SIGNALS; i++)
		sigaddset(&sa.sa_mask, stop_signals[i].sig); /* one handler at a time */
	for (size_t i = 0; i < NSTOP_SIGNALS; i++)
		sigaction(stop_signals[i].sig, &sa, NULL);
}

int tb_session_stop_signal(void)
{
	return stop_signal;
}

void tb_session_init(struct tb_session *s, const struct tb_session_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	tb_profile_init(&s->prof);
	s->prof.hz = o->hz;
	s->prof.max_depth = o->max_depth;
	s->prof.mode = o->mode;
	s->prof.no_gc = o->no_gc;
	s->prof.kernel = o->kernel;
	s->prof.async_aware = o->async_aware;
	s->prof.native = o->native_depth > 0;
	s->prof.ncodes.show_all = o->native_all;
}

/* kernel.kptr_restrict, or -1 if it cannot be read. */
static int32_t kptr_restrict(void)
{
	FILE *f = fopen("/proc/sys/kernel/kptr_restrict", "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* --kernel: read kallsyms now, while the agent holds every capability (what
 * it shows depends on the opener's); hidden or unreadable, each sample's
 * kernel part becomes one [kernel] frame (the summary says why). */
static void open_kallsyms(struct tb_session *s)
{
	char err[512];

	if (!s->o->kernel)
		return;
	if (tb_ksyms_load(&s->ksyms, NULL, err, sizeof(err)) == 0)
		s->have_ksyms = 1;
	else if (!s->o->quiet)
		fprintf(stderr, "tachyon-bpf: kernel frames stay unnamed: %s\n", err);
	tb_profile_set_ksyms(&s->prof, s->have_ksyms ? &s->ksyms : NULL, kptr_restrict());
}

/* The command's stdin, stdout and stderr on /dev/null: top's view would be
 * torn by its output. */
static pid_t launch_detached(char **cmd, int *held, char *err, size_t errlen)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), saved[3];
	pid_t pid;

	if (null < 0)
		return tb_launch(cmd, held, err, errlen);
	for (int fd = 0; fd < 3; fd++) {
		saved[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		dup2(null, fd);
	}
	pid = tb_launch(cmd, held, err, errlen);
	for (int fd = 0; fd < 3; fd++) {
		if (saved[fd] >= 0) {
			dup2(saved[fd], fd);
			close(saved[fd]);
		}
	}
	close(null);
	return pid;
}

static int attach_targets(struct tb_session *s, char *err, size_t errlen)
{
	const struct tb_session_opts *o = s->o;
	const char *cgroup = o->cgroup[0] ? o->cgroup : NULL;
	pid_t child;
	int held;

	for (int i = 0; i < o->npids; i++)
		if (tb_target_attach(s->sampler, &s->prof, o->pids[i], err, errlen))
			return -1;
	if (o->all_python && tb_target_attach_all(s->sampler, &s->prof, cgroup, o->quiet) == 0 && !o->quiet)
		fprintf(stderr, "tachyon-bpf: no Python process is running yet%s: waiting for new ones\n",
			cgroup ? " in the cgroup" : "");
	if (!o->cmd)
		return 0;
	if (o->subprocesses)
		tb_sampler_follow(s->sampler, getpid()); /* so the command and its children are followed from fork */
	/* --native: the command held at its entry point (exec'd, its libraries mapped,
	 * none of its code run) while the tables of what it maps are built */
	held = o->native_depth && !o->subprocesses;
	child = o->detach_stdio ? launch_detached(o->cmd, &held, err, errlen) : tb_launch(o->cmd, &held, err, errlen);
	if (child < 0)
		return -1;
	s->child = child;
	stop_child = child;
	/* with --subprocesses the exec of the command is reported like any other */
	if (!o->subprocesses && tb_target_attach_launched(s->sampler, &s->prof, child, held, 10000, err, errlen))
		return -1;
	return 0;
}

int tb_session_check_root(char *err, size_t errlen)
{
	if (geteuid() != 0)
		return bad(err, errlen, "must run as root: loading the BPF program needs CAP_BPF and CAP_PERFMON "
			   "(sudo tachyon-bpf ...)");
	return 0;
}

/* The sampler's lifecycle records (exec, fork, exit) go to the watch. */
static void on_lifecycle(void *ctx, const struct tb_sample_hdr *h)
{
	tb_watch_record(ctx, h);
}

int tb_session_start(struct tb_session *s, char *err, size_t errlen)
{
	const struct tb_session_opts *o = s->o;
	struct tb_sampler_opts so = {
		.hz = o->hz, .max_depth = o->max_depth, .max_depth_given = o->max_depth_given,
		.ringbuf_mb = o->ringbuf_mb,
		.read_opcodes = o->opcodes < 0 ? 0 : o->opcodes > 0 ? 2 : 1,
		.bench_walk = (int)o->bench_walk, .bench_task_reads = o->bench_task_reads, .cpu = o->cpu, .floor = o->floor,
		.follow_mode = o->all_python ? TB_FOLLOW_ALL : o->subprocesses ? TB_FOLLOW_CHILDREN : TB_FOLLOW_NONE,
		.wall = o->mode == TB_MODE_WALL,
		.note_no_gil = o->mode == TB_MODE_GIL && !o->quiet,
		.kernel = o->kernel, .async_aware = o->async_aware,
		.cgroup = o->cgroup[0] ? o->cgroup : NULL,
		.native_depth = o->native_depth, .native_table_mb = o->native_table_mb, .quiet = o->quiet,
	};

	s->start_ns = tb_mono_ns();
	if (tb_session_check_root(err, errlen))
		return -1;
	signal(SIGCHLD, SIG_DFL); /* an inherited SIG_IGN would reap the command behind our back */
	catch_stop_signals();
	open_kallsyms(s);
	s->sampler = tb_sampler_open(&so, &s->prof, on_lifecycle, &s->watch, err, errlen);
	if (!s->sampler)
		return -1;
	s->loaded_ns = tb_mono_ns();
	s->bpf_shape = tb_sampler_shape(s->sampler);
	tb_watch_init(&s->watch, s->sampler, &s->prof, o->quiet);
	if (attach_targets(s, err, errlen)) {
		tb_session_close(s);
		return -1;
	}
	s->attached_ns = tb_mono_ns();
	if (o->subprocesses)
		for (uint32_t i = 0; i < s->prof.nprocs; i++)
			tb_sampler_follow(s->sampler, (pid_t)s->prof.procs[i].pid);
	s->names_at = tb_mono_s();
	s->fast_until = s->names_at + YOUNG_S;
	s->discovered = s->watch.discovered;
	return 0;
}

int tb_pid_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

static int any_alive(const struct tb_profile *p)
{
	for (uint32_t i = 0; i < p->nprocs; i++)
		if (p->procs[i].live && tb_pid_alive((pid_t)p->procs[i].pid))
			return 1;
	return 0;
}

void tb_session_step(struct tb_session *s, int wait_ms)
{
	const struct tb_session_opts *o = s->o;
	double now = tb_mono_s();

	if (s->watch.npending && wait_ms > 2)
		wait_ms = 2;
	else if (now < s->fast_until && wait_ms > 4)
		wait_ms = 4;
	else if (s->prof.tasks.sampled && wait_ms > TASK_DRAIN_MS)
		wait_ms = TASK_DRAIN_MS; /* a short-lived task is read before it is freed */
	tb_sampler_poll(s->sampler, wait_ms);
	tb_watch_poll(&s->watch);
	now = tb_mono_s();
	if (s->watch.discovered != s->discovered) {
		s->discovered = s->watch.discovered;
		s->fast_until = now + YOUNG_S;
	}
	if (s->child > 0 && tb_child_exited(s->child, &s->child_status)) {
		s->child = 0;
		stop_child = 0;
		s->child_ended = 1;
		s->done = 1;
	}
	if (now - s->names_at >= CHECK_EVERY_S) {
		s->names_at = now;
		tb_profile_read_thread_names(&s->prof, 1);
		/* pids given: done when every one is gone (new ones come only
		 * with every Python process or --subprocesses) */
		if (!o->cmd && !o->all_python && !o->subprocesses && !any_alive(&s->prof))
			s->done = 1;
	}
}

void tb_session_settle(struct tb_session *s)
{
	tb_profile_finish(&s->prof, tb_mono_ns());
	tb_profile_read_thread_names(&s->prof, 0); /* threads that got their name late */
	tb_profile_compact(&s->prof); /* outputs list no dropped process */
	s->prof.lost = tb_session_counter(s, TB_C_LOST) - s->prof.lost_base;
}

static double pct(uint64_t n, uint64_t of)
{
	return of ? 100.0 * (double)n / (double)of : 0.0;
}

/* How the native walks of the capture ended and merged, and the tables. */
static void native_note(struct tb_session *s)
{
	const struct tb_native_stats *n = &s->prof.ncodes.stats;
	struct tb_unwind *u = s->sampler ? tb_sampler_unwind(s->sampler) : NULL;
	uint64_t walked = n->samples - n->verdicts[TB_MV_PYTHON_ONLY];
	struct tb_unwind_stats us;

	if (!u)
		return;
	tb_unwind_stats(u, &us);
	fprintf(stderr, "tachyon-bpf: native: %" PRIu64 " samples walked (%" PRIu64 " before their tables"
		" were loaded), %.1f native frames each: merged %.1f%%, tolerated %.1f%%, truncated %.1f%%, unmerged %.2f%% (goal < 1%%),"
		" native only %.1f%%; walks ended:", walked, n->verdicts[TB_MV_PYTHON_ONLY],
		walked ? (double)n->words / (double)walked : 0.0, pct(n->verdicts[TB_MV_MERGED], walked), pct(n->verdicts[TB_MV_TOLERATED], walked),
		pct(n->verdicts[TB_MV_TRUNCATED], walked), pct(n->verdicts[TB_MV_UNMERGED], walked),
		pct(n->verdicts[TB_MV_NATIVE_ONLY], walked));
	for (uint32_t r = TB_NS_DONE; r < TB_NS_MAX; r++)
		if (n->stops[r])
			fprintf(stderr, " %s %.1f%%", tb_uw_stop_names[r - 1], pct(n->stops[r], walked));
	fprintf(stderr, "; tables: %" PRIu64 " files, %" PRIu64 " with rows (%.1f MiB), %" PRIu64
		" by frame pointer, %" PRIu64 " built (CPU %.2f s), %" PRIu64 " evicted; mappings left out: %"
		PRIu64 "; maps reread %" PRIu64 " times (%.3f s)", us.files, us.tables,
		(double)us.rows_used * sizeof(struct tb_urow) / (1 << 20), us.fp_only, us.builds,
		(double)us.build_cpu_ns / 1e9, us.evictions, us.ranges_dropped, us.refreshes,
		(double)us.refresh_ns / 1e9);
	if (us.queue_full)
		fprintf(stderr, "; %" PRIu64 " files not built (too many waiting)", us.queue_full);
	fputc('\n', stderr);
	fprintf(stderr, "tachyon-bpf: native: %" PRIu64 " of %" PRIu64 " samples (%.2f%%) partial: %" PRIu64
		" before their process's tables were loaded (marked <native tables not ready>), %" PRIu64
		" with a frame in a library mapped since or still being built (kept, its callers by frame pointer)\n", n->not_ready_process + n->not_ready_library, n->samples,
		pct(n->not_ready_process + n->not_ready_library, n->samples), n->not_ready_process, n->not_ready_library);
	fprintf(stderr, "tachyon-bpf: native names: %" PRIu64 " files named from their debug files (build-id,"
		" debuglink or MiniDebugInfo), %" PRIu64 " perf maps read (%" PRIu64 " names)\n", us.debug_files,
		us.perf_maps, us.perfmap_names);
}

/* --async-aware: how many samples of a running task got its task frame, and why
 * the others did not. */
static void task_note(struct tb_session *s)
{
	const struct tb_tasks *t = &s->prof.tasks;

	if (!s->prof.async_aware || !t->sampled)
		return;
	fprintf(stderr, "tachyon-bpf: --async-aware: %" PRIu64 " samples ran a task: %" PRIu64 " (%.1f%%) with its"
		" task frame, %" PRIu64 " (%.1f%%) with <task (finished)> (the task was gone before it was read)",
		t->sampled, s->prof.task_samples - t->gone, pct(s->prof.task_samples - t->gone, t->sampled),
		t->gone, pct(t->gone, t->sampled));
	if (t->over_budget)
		fprintf(stderr, ", %" PRIu64 " without (over the budget of %d task reads a second)", t->over_budget,
			TB_TASK_READS_PER_S);
	if (t->refused_samples)
		fprintf(stderr, ", %" PRIu64 " without (offsets refused)", t->refused_samples);
	fputc('\n', stderr);
}

void tb_session_finish(struct tb_session *s)
{
	tb_sampler_poll(s->sampler, 0); /* what is already in the ring */
	tb_watch_poll(&s->watch);
	tb_session_settle(s);
	if (!s->o->quiet) {
		native_note(s);
		task_note(s);
	}
}

void tb_session_close(struct tb_session *s)
{
	if (s->sampler) {
		tb_watch_free(&s->watch);
		tb_sampler_close(s->sampler);
		s->sampler = NULL;
	}
	if (s->child > 0) {
		s->child_ended = 1;
		if (!tb_child_exited(s->child, &s->child_status)) {
			kill(s->child, SIGTERM);
			waitpid(s->child, &s->child_status, 0);
			s->child_ended = 2;
		}
		s->child = 0;
		stop_child = 0;
	}
}

void tb_session_child_note(const struct tb_session *s, FILE *out, int quiet)
{
	int st = s->child_status;

	if (!s->child_ended)
		return;
	if (s->child_ended == 2) {
		int sig = tb_session_stop_signal();

		if (sig && sig != SIGINT)  /* a supervisor's or the system's, not a person's Ctrl-C */
			fprintf(out, "tachyon-bpf: the command was still running when the capture was stopped by"
				" signal %d (%s): stopped with SIGTERM\n", sig, strsignal(sig));
		else if (!quiet)
			fprintf(out, "tachyon-bpf: the command was still running at the end of the capture: stopped"
				" with SIGTERM\n");
	} else if (WIFSIGNALED(st)) {
		fprintf(out, "tachyon-bpf: the command was killed by signal %d (%s)%s\n", WTERMSIG(st),
			strsignal(WTERMSIG(st)), WCOREDUMP(st) ? ", core dumped" : "");
	} else if (WIFEXITED(st) && WEXITSTATUS(st) && !quiet) {
		fprintf(out, "tachyon-bpf: the command exited with status %d\n", WEXITSTATUS(st));
	}
}

void tb_session_free(struct tb_session *s)
{
	tb_session_close(s);
	tb_profile_free(&s->prof);
	if (s->have_ksyms)
		tb_ksyms_free(&s->ksyms);
	s->have_ksyms = 0;
}

uint64_t tb_session_counter(const struct tb_session *s, int idx)
{
	return s->sampler ? tb_sampler_counter(s->sampler, idx) : 0;
}
