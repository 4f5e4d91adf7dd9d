/* top.c: `tachyon-bpf top` (also `tachyon-bpf --live ...`): samples
 * with a capture session (capture/session.h) and shows the hottest
 * functions of the last seconds in the terminal, refreshed every second,
 * like `py-spy top`. The loop drains the ring buffer with a short timeout
 * between key reads. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/cli.h"
#include "lib/term.h"
#include "lib/termsafe.h"
#include "capture/clock.h"
#include "capture/session.h"
#include "cmd/commands.h"
#include "cmd/top_draw.h"
#include "cmd/top_view.h"

#define TOP_MAX_LONGOPTS 24

struct top {
	struct tb_session_opts so;
	unsigned window;
	int opcodes_panel;
	struct tb_session s;
	struct tb_topview view;
	struct tb_top_status st;
	struct tb_frame_buf fb;
	int finished, quit;
	char message[160];
};

void tb_top_usage(FILE *f)
{
	fprintf(f, "usage: tachyon-bpf top [-p PID[,PID...] | --all-python | --cgroup PATH |\n"
		   "                       -- CMD [ARGS...]] [-r HZ] [--opcodes] [--window SECONDS]\n"
		   "                       [-d SECONDS]\n"
		   "       tachyon-bpf --live ... (the same)\n"
		   "Live view of the functions the targets run, refreshed every second.\n\n");
	tb_session_usage(f, TB_FOR_TOP, TB_SECT_TARGETS);
	tb_session_usage(f, TB_FOR_TOP, TB_SECT_SAMPLING);
	fprintf(f, "      --window SECONDS     the table covers the last SECONDS (default 10)\n"
		   "      --opcodes            panel of the selected function's instructions\n"
		   "  -h, --help               this text\n"
		   "A command's stdin, stdout and stderr go to /dev/null. OwnTime and TotalTime are\n"
		   "CPU seconds in the window. Keys: q quit, o / t sort by own / total, p next\n"
		   "process, h or Tab next thread, y next asyncio task (--async-aware), a all,\n"
		   "j / k (arrows) select, ? help.\n");
}

static int bad_usage(const char *msg)
{
	fprintf(stderr, "tachyon-bpf: top: %s\n", msg);
	return 2;
}

/* 0 ok, 1 help printed, 2 bad usage (reported). */
static int parse_args(int argc, char **argv, struct top *t)
{
	enum { OPT_WINDOW = TB_SESSION_OPT_END, OPT_OPCODES };
	static const struct option own[] = {
		{ "window", required_argument, 0, OPT_WINDOW },
		{ "opcodes", no_argument, 0, OPT_OPCODES },
		{ "help", no_argument, 0, 'h' },
	};
	struct option longs[TOP_MAX_LONGOPTS];
	char err[512];
	int c, r;

	tb_session_longopts(TB_FOR_TOP, own, sizeof(own) / sizeof(own[0]), longs, TOP_MAX_LONGOPTS);
	tb_session_opts_init(&t->so);
	t->so.quiet = 1;        /* notes on stderr would tear the view */
	t->so.detach_stdio = 1;
	t->window = 10;
	optind = 0; /* a fresh scan (glibc) */
	opterr = 0; /* tb_bad_option says it, in one line */
	while ((c = getopt_long(argc, argv, "+" TB_SESSION_SHORTOPTS "h", longs, NULL)) != -1) {
		r = tb_session_option(&t->so, c, optarg, err, sizeof(err));
		if (r < 0)
			return bad_usage(err);
		if (r > 0)
			continue;
		switch (c) {
		case OPT_WINDOW:
			if (tb_parse_uint(optarg, 1, 3600, &t->window))
				return bad_usage("--window takes a number of seconds from 1 to 3600");
			break;
		case OPT_OPCODES:
			t->opcodes_panel = 1;
			break;
		case 'h':
			tb_top_usage(stdout);
			return 1;
		default:
			return tb_bad_option("top", argv, optind, optopt, TB_SESSION_SHORTOPTS "h", longs);
		}
	}
	if (tb_session_check_targets(&t->so, optind < argc ? &argv[optind] : NULL, err, sizeof(err)))
		return bad_usage(err);
	return 0;
}

/* Have the targets ended? Then the view stops moving (q still quits). */
static void check_targets(struct top *t)
{
	int status = t->s.child_status;

	if (t->finished || !t->s.done)
		return;
	t->finished = 1;
	if (t->so.cmd)
		snprintf(t->message, sizeof(t->message), "The command exited (%s %d): press q to quit",
			 WIFSIGNALED(status) ? "signal" : "status",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	else
		snprintf(t->message, sizeof(t->message), "Every target process exited: press q to quit");
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
	case 'y':
		tb_top_next_task(v);
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
	t->st.samples = t->s.prof.samples;
	t->st.lost = tb_session_counter(&t->s, TB_C_LOST);
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
	double start = tb_mono_s(), last_tick = start;
	int dirty = 1, full = 0;

	while (!t->quit && !tb_session_stop_signal()) {
		double now;

		tb_session_step(&t->s, 10);
		dirty |= read_keys(t, 10);
		tb_term_handle_suspend();
		if (tb_term_resized())
			dirty = full = 1;
		now = tb_mono_s();
		if (t->so.duration > 0 && now - start >= t->so.duration)
			break;
		check_targets(t);
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

int tb_cmd_top(int argc, char **argv)
{
	struct top *t = calloc(1, sizeof(*t));
	char err[1024];
	int rc;

	if (!t)
		return 1;
	rc = parse_args(argc, argv, t);
	if (rc == 0 && !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "tachyon-bpf: top needs a terminal on stdout (use -o FILE to write a profile instead)\n");
		rc = 2;
	}
	if (rc) {
		free(t);
		return rc == 1 ? 0 : 2; /* help, usage */
	}
	tb_session_init(&t->s, &t->so);
	tb_top_init(&t->view, &t->s.prof, t->window);
	t->st = (struct tb_top_status){ .hz = t->so.hz, .opcodes = t->opcodes_panel };
	if (tb_session_start(&t->s, err, sizeof(err)) || tb_term_enter(err, sizeof(err))) {
		tb_termsafe_line(stderr, "tachyon-bpf: ", err); /* may name a target's files */
		rc = 1;
	} else {
		run(t);
		tb_term_leave();
		fprintf(stderr, "tachyon-bpf: top: %llu samples, %llu lost\n", (unsigned long long)t->s.prof.samples,
			(unsigned long long)tb_session_counter(&t->s, TB_C_LOST));
	}
	tb_session_free(&t->s);
	tb_top_free(&t->view);
	free(t->fb.b);
	free(t);
	return rc;
}
