/* cmd_top.c: `tachyon-bpf top` (also `tachyon-bpf --live ...`): samples
 * with the BPF program and shows the hottest functions of the last
 * seconds in the terminal, refreshed every second, like `py-spy top`.
 * The loop drains the ring buffer with a short timeout between key reads. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/cli.h"
#include "cmd/commands.h"
#include "proc/launch.h"
#include "model/profile.h"
#include "capture/sampler.h"
#include "capture/targets.h"
#include "lib/term.h"
#include "cmd/top_draw.h"
#include "cmd/top_view.h"
#include "capture/watch.h"

#define TOP_MAX_PIDS 256

struct top_opts {
	unsigned hz, window;
	double duration;
	int all_python, opcodes;
	pid_t pids[TOP_MAX_PIDS];
	int npids;
	char **cmd;
};

struct top {
	struct top_opts o;
	struct tb_profile prof;
	struct tb_sampler *s;
	struct tb_watch watch;
	struct tb_topview view;
	struct tb_top_status st;
	struct tb_frame_buf fb;
	pid_t child;
	int child_status, finished, quit;
	char message[160];
};

static void usage(FILE *f)
{
	fprintf(f, "usage: tachyon-bpf top [-p PID[,PID...] | --all-python | -- CMD [ARGS...]] [-r HZ]\n"
		   "                       [--opcodes] [--window SECONDS] [-d SECONDS]\n"
		   "Live view of the functions the targets run, refreshed every second.\n\n"
		   "  -p, --pid PID[,PID...]   profile running processes\n"
		   "  -a, --all-python         profile every Python process (and new ones)\n"
		   "  -r, --rate HZ            samples per second per CPU (default 99, max 20000)\n"
		   "      --window SECONDS     the table covers the last SECONDS (default 10)\n"
		   "      --opcodes            panel of the selected function's instructions\n"
		   "  -d, --duration SECONDS   quit after SECONDS\n"
		   "  -h, --help               this text\n"
		   "A command's stdin, stdout and stderr go to /dev/null. OwnTime and TotalTime are\n"
		   "CPU seconds in the window. Keys: q quit, o / t sort by own / total, p next\n"
		   "process, h or Tab next thread, a all, j / k (arrows) select, ? help.\n");
}

static int bad_usage(const char *msg)
{
	fprintf(stderr, "tachyon-bpf: top: %s\n", msg);
	return 2;
}


/* 0 ok, 1 help printed, 2 bad usage (reported). */
static int parse_args(int argc, char **argv, struct top_opts *o)
{
	enum { OPT_WINDOW = 256, OPT_OPCODES };
	static const struct option longs[] = {
		{ "pid", required_argument, 0, 'p' },
		{ "all-python", no_argument, 0, 'a' },
		{ "rate", required_argument, 0, 'r' },
		{ "duration", required_argument, 0, 'd' },
		{ "window", required_argument, 0, OPT_WINDOW },
		{ "opcodes", no_argument, 0, OPT_OPCODES },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	char *end;
	int c;

	o->hz = 99;
	o->window = 10;
	optind = 0; /* a fresh scan (glibc) */
	while ((c = getopt_long(argc, argv, "+p:ar:d:h", longs, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (tb_parse_pids(optarg, o->pids, &o->npids, TOP_MAX_PIDS))
				return bad_usage("-p takes a comma-separated list of process ids");
			break;
		case 'a':
			o->all_python = 1;
			break;
		case 'r':
			if (tb_parse_uint(optarg, 1, 20000, &o->hz))
				return bad_usage("-r takes a rate from 1 to 20000 Hz");
			break;
		case 'd':
			o->duration = strtod(optarg, &end);
			if (*end || end == optarg || !(o->duration > 0))
				return bad_usage("-d takes a positive number of seconds");
			break;
		case OPT_WINDOW:
			if (tb_parse_uint(optarg, 1, 3600, &o->window))
				return bad_usage("--window takes a number of seconds from 1 to 3600");
			break;
		case OPT_OPCODES:
			o->opcodes = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if ((o->cmd != NULL) + (o->npids > 0) + o->all_python != 1)
		return bad_usage("give exactly one of: -- CMD, -p PID, --all-python");
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The command runs without the terminal: its output would tear the view. */
static pid_t launch_detached(char **cmd, char *err, size_t errlen)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), saved[3];
	pid_t pid;

	if (null < 0)
		return tb_launch(cmd, err, errlen);
	for (int fd = 0; fd < 3; fd++) {
		saved[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		dup2(null, fd);
	}
	pid = tb_launch(cmd, err, errlen);
	for (int fd = 0; fd < 3; fd++) {
		if (saved[fd] >= 0) {
			dup2(saved[fd], fd);
			close(saved[fd]);
		}
	}
	close(null);
	return pid;
}

static int attach_targets(struct top *t, char *err, size_t errlen)
{
	for (int i = 0; i < t->o.npids; i++)
		if (tb_target_attach(t->s, &t->prof, t->o.pids[i], err, errlen))
			return -1;
	if (t->o.all_python)
		tb_target_attach_all(t->s, &t->prof, NULL, 1);
	if (!t->o.cmd)
		return 0;
	t->child = launch_detached(t->o.cmd, err, errlen);
	if (t->child < 0) {
		t->child = 0;
		return -1;
	}
	return tb_target_attach_launched(t->s, &t->prof, t->child, 10000, err, errlen);
}

static int open_sampler(struct top *t, char *err, size_t errlen)
{
	struct tb_sampler_opts so = {
		.hz = t->o.hz, .max_depth = TB_DEFAULT_DEPTH, .ringbuf_mb = 4, .read_opcodes = 1,
		.cpu = -1, .follow_mode = t->o.all_python ? TB_FOLLOW_ALL : TB_FOLLOW_NONE,
	};

	tb_profile_init(&t->prof);
	t->prof.hz = t->o.hz;
	t->prof.max_depth = TB_DEFAULT_DEPTH;
	t->prof.mode = TB_MODE_CPU;
	t->s = tb_sampler_open(&so, &t->prof, &t->watch, err, errlen);
	if (!t->s)
		return -1;
	tb_watch_init(&t->watch, t->s, &t->prof, 1);
	return 0;
}

static int any_alive(const struct tb_profile *p)
{
	for (uint32_t i = 0; i < p->nprocs; i++)
		if (kill(p->procs[i].target.pid, 0) == 0 || errno == EPERM)
			return 1;
	return 0;
}

/* Have the targets ended? Then the view stops moving (q still quits). */
static void check_targets(struct top *t)
{
	if (t->finished)
		return;
	if (t->child > 0 && tb_child_exited(t->child, &t->child_status)) {
		t->finished = 1;
		t->child = 0;
		snprintf(t->message, sizeof(t->message), "The command exited (%s %d): press q to quit",
			 WIFSIGNALED(t->child_status) ? "signal" : "status",
			 WIFSIGNALED(t->child_status) ? WTERMSIG(t->child_status) : WEXITSTATUS(t->child_status));
	} else if (!t->o.cmd && !t->o.all_python && !any_alive(&t->prof)) {
		t->finished = 1;
		snprintf(t->message, sizeof(t->message), "Every target process exited: press q to quit");
	}
	if (t->finished)
		t->st.message = t->message;
}

static void handle_key(struct top *t, int key)
{
	struct tb_topview *v = &t->view;

	switch (key) {
	case 'q': case 'Q':
		t->quit = 1;
		break;
	case 'o':
		v->sort = TB_TOP_BY_OWN;
		break;
	case 't':
		v->sort = TB_TOP_BY_TOTAL;
		break;
	case 'p':
		tb_top_next_process(v);
		break;
	case 'h': case '\t':
		tb_top_next_thread(v);
		break;
	case 'a':
		tb_top_filter_all(v);
		break;
	case 'j': case TB_KEY_DOWN:
		tb_top_move(v, 1);
		break;
	case 'k': case TB_KEY_UP:
		tb_top_move(v, -1);
		break;
	case '?':
		t->st.help = !t->st.help;
		break;
	}
}

static void redraw(struct top *t, int full)
{
	int rows, cols;

	tb_term_size(&rows, &cols);
	t->st.samples = t->prof.samples;
	t->st.lost = tb_sampler_counter(t->s, TB_C_LOST);
	tb_top_compute(&t->view);
	tb_top_draw(&t->view, &t->st, rows, cols, &t->fb);
	if (full)
		tb_term_write("\033[2J", 4);
	tb_term_write(t->fb.b, t->fb.n);
}

/* Keys waiting (the first one for up to wait_ms): 1 if any was handled. */
static int read_keys(struct top *t, int wait_ms)
{
	int key, any = 0;

	while (!t->quit && (key = tb_term_key(any ? 0 : wait_ms)) >= 0) {
		handle_key(t, key);
		any = 1;
	}
	return any;
}

static void run(struct top *t)
{
	double start = now_s(), last_tick = start, last_check = start;
	int dirty = 1, full = 0;

	while (!t->quit && !tb_term_stop_requested()) {
		double now;

		tb_sampler_poll(t->s, 10);
		tb_watch_poll(&t->watch);
		dirty |= read_keys(t, 10);
		tb_term_handle_suspend();
		if (tb_term_resized())
			dirty = full = 1;
		now = now_s();
		if (t->o.duration > 0 && now - start >= t->o.duration)
			break;
		if (now - last_check >= 0.2) {
			last_check = now;
			check_targets(t);
		}
		if (now - last_tick >= 1.0) {
			if (!t->finished)
				tb_top_tick(&t->view, now - last_tick);
			last_tick = now;
			dirty = 1;
		}
		if (dirty && !t->quit) {
			redraw(t, full);
			dirty = full = 0;
		}
	}
}

static void shut_down(struct top *t)
{
	if (t->child > 0 && !tb_child_exited(t->child, &t->child_status)) {
		kill(t->child, SIGTERM);
		waitpid(t->child, &t->child_status, 0);
	}
	if (t->s) {
		tb_watch_free(&t->watch);
		tb_sampler_close(t->s);
	}
	tb_top_free(&t->view);
	tb_profile_free(&t->prof);
	free(t->fb.b);
}

static int setup(struct top *t)
{
	char err[1024];

	if (open_sampler(t, err, sizeof(err)) == 0 && attach_targets(t, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "tachyon-bpf: %s\n", err);
	return -1;
}

int tb_cmd_top(int argc, char **argv)
{
	struct top *t = calloc(1, sizeof(*t));
	char err[256];
	int rc;

	if (!t)
		return 1;
	rc = parse_args(argc, argv, &t->o);
	if (rc == 0 && !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "tachyon-bpf: top needs a terminal on stdout (use -o FILE to write a profile instead)\n");
		rc = 2;
	} else if (rc == 0 && geteuid() != 0) {
		fprintf(stderr, "tachyon-bpf: must run as root: loading the BPF program needs CAP_BPF and CAP_PERFMON\n");
		rc = 3;
	}
	if (rc) {
		free(t);
		return rc == 1 ? 0 : rc == 3 ? 1 : 2; /* help, not root, usage */
	}
	signal(SIGCHLD, SIG_DFL); /* an inherited SIG_IGN would reap the command behind our back */
	signal(SIGPIPE, SIG_IGN);
	tb_top_init(&t->view, &t->prof, t->o.window);
	t->st = (struct tb_top_status){ .hz = t->o.hz, .opcodes = t->o.opcodes };
	rc = setup(t);
	if (rc == 0 && tb_term_enter(err, sizeof(err))) {
		fprintf(stderr, "tachyon-bpf: %s\n", err);
		rc = 2;
	}
	if (rc == 0) {
		run(t);
		tb_term_leave();
		fprintf(stderr, "tachyon-bpf: top: %llu samples, %llu lost\n", (unsigned long long)t->prof.samples,
			(unsigned long long)tb_sampler_counter(t->s, TB_C_LOST));
	}
	shut_down(t);
	free(t);
	return rc ? 1 : 0;
}
