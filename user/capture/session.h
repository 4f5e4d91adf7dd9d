/* session.h: one capture session, shared by every command that samples
 * (the capture command and top): the sampling options and their parsing,
 * the sampler and the watch, the targets (pids, every Python process, a
 * cgroup, a launched command), one step of the drain loop, "are the
 * targets done", and the end. */
#ifndef TB_SESSION_H
#define TB_SESSION_H
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "model/profile.h"
#include "proc/kallsyms.h"
#include "capture/sampler.h"
#include "capture/watch.h"

#define TB_SESSION_MAX_PIDS 256

struct tb_session_opts {
	unsigned hz, max_depth, ringbuf_mb;
	int max_depth_given;  /* --max-depth given (else TB_DEFAULT_DEPTH, or what the kernel's walk reaches) */
	int opcodes;          /* -1 none, 0 the innermost frame's, 1 every frame's */
	enum tb_mode mode;
	int no_gc;
	int kernel;           /* --kernel: kernel frames (kallsyms opened at the start) */
	int async_aware;      /* --async-aware: asyncio task frames (3.14+) */
	double duration;      /* seconds, 0: until stopped (the command's loop checks it) */
	/* targets */
	pid_t pids[TB_SESSION_MAX_PIDS];
	int npids;
	int all_python;       /* every Python process, running and started later */
	int subprocesses;     /* also the Python descendants of the targets */
	char cgroup[4096];    /* only tasks below this cgroup v2 directory, "" all */
	char **cmd;           /* command to launch, NULL: none */
	int detach_stdio;     /* the command's stdin/out/err on /dev/null (top) */
	int quiet;            /* no notes on stderr */
	/* native frames */
	unsigned native_depth;  /* --native / --native-depth: frames per sample, 0 off */
	unsigned native_table_mb; /* --native-table-mb: the unwind rows array */
	int native_all;       /* --native-all: keep the interpreter's call plumbing */
	/* benchmarks */
	int cpu;              /* -1 every CPU, else only this one */
	int floor;            /* the empty program instead of the walk */
	unsigned bench_walk;  /* 1: skip the code-object read */
	unsigned bench_task_reads; /* --async-aware: the running task read this many more times */
};

/* Which commands take a sampling option (a bit set). */
#define TB_FOR_RECORD 1u
#define TB_FOR_TOP    2u

/* Sections of a command's usage text. */
enum tb_session_section { TB_SECT_TARGETS, TB_SECT_SAMPLING, TB_SECT_BENCH };

/* getopt short options of the session (-p -a -d -r), and the first value a
 * command may use for its own long-only options. */
#define TB_SESSION_SHORTOPTS "p:ad:r:"
#define TB_SESSION_OPT_END 400

void tb_session_opts_init(struct tb_session_opts *o);
/* The getopt_long table of a command: its own options, then the session's
 * that `command` (TB_FOR_*) takes, then the terminator; room entries at
 * most (the rest is left out). */
void tb_session_longopts(unsigned command, const struct option *own, size_t nown,
			 struct option *longs, size_t room);
/* The usage lines of one section for a command. */
void tb_session_usage(FILE *f, unsigned command, enum tb_session_section section);
/* One option from getopt_long: 1 taken, 0 not a session option, -1 bad
 * value (one line in err). */
int tb_session_option(struct tb_session_opts *o, int key, char *arg, char *err, size_t errlen);
/* After the options: the remaining arguments are the command to launch.
 * Exactly one kind of target, or a cgroup alone (= every Python process in
 * it). 0 ok; -1 with one line in err. */
int tb_session_check_targets(struct tb_session_opts *o, char **rest, char *err, size_t errlen);

struct tb_session {
	const struct tb_session_opts *o;
	struct tb_profile prof;
	struct tb_sampler *sampler;
	struct tb_watch watch;
	pid_t child;          /* the launched command until it is reaped, else 0 */
	int child_status;     /* its wait status once reaped */
	int child_ended;      /* reaped: ended by itself (1), or stopped by us with SIGTERM (2) */
	int done;             /* the targets are done (see tb_session_step) */
	double names_at;      /* last read of thread names (tb_mono_s) */
	double fast_until;    /* drain often until then: young processes */
	uint64_t discovered;  /* the watch's count at the last step */
	struct tb_ksyms ksyms; /* --kernel: /proc/kallsyms, read at the start */
	int have_ksyms;
	/* start-up (CLOCK_MONOTONIC ns): tb_session_start called, the BPF program
	 * loaded and attached, the targets found (the first sample: prof.first_ns) */
	uint64_t start_ns, loaded_ns, attached_ns;
	const char *bpf_shape; /* tb_sampler_shape (a static string) */
};

/* How the launched command ended, one line on out: a signal it did not get
 * from us, or stopped by us because a signal other than SIGINT stopped the
 * capture: always; a non-zero status, or stopped at the end: unless quiet;
 * nothing for status 0. */
void tb_session_child_note(const struct tb_session *s, FILE *out, int quiet);

/* Not root: one sentence in err, -1 (the first thing a capture checks). */
int tb_session_check_root(char *err, size_t errlen);

/* The profile with the sampling settings of o (which must outlive s); the
 * command may set its output settings in s->prof before tb_session_start. */
void tb_session_init(struct tb_session *s, const struct tb_session_opts *o);
/* Catch the signals that end a capture (SIGINT, SIGTERM, SIGQUIT, SIGHUP,
 * SIGPIPE: see tb_session_stop_signal), load the sampler, attach the
 * targets (launch the command), follow the children. 0 ok; -1 with one
 * line in err, nothing left running. */
int tb_session_start(struct tb_session *s, char *err, size_t errlen);
/* One step of the loop: drain the ring buffer (waiting up to wait_ms, less
 * while processes are young), let the watch discover and forget processes,
 * and every 200 ms read new thread names and check the targets: s->done
 * once the command has exited, or every pid given is gone (never with
 * every Python process or --subprocesses without a command). */
void tb_session_step(struct tb_session *s, int wait_ms);
/* Settle the profile as it is now: off-CPU stacks weighted up to now,
 * late thread names read, lost records counted since prof.lost_base. */
void tb_session_settle(struct tb_session *s);
/* The end of sampling: what is left in the ring, then tb_session_settle
 * (and, with --native and not quiet, one line on stderr: how the native
 * walks ended and merged, and the tables' size). */
void tb_session_finish(struct tb_session *s);
/* Close the sampler and the watch; stop (SIGTERM) and reap the command.
 * The profile stays until tb_session_free. */
void tb_session_close(struct tb_session *s);
void tb_session_free(struct tb_session *s);
/* A BPF counter (enum tb_counter), summed over CPUs; 0 before start. */
uint64_t tb_session_counter(const struct tb_session *s, int idx);
/* The first signal that asked the capture to stop (0: none yet): the
 * command's loop ends and writes its outputs.  A second SIGINT, SIGTERM
 * or SIGQUIT does not return: the terminal is restored (top), the
 * launched command gets SIGTERM and the exit code is 128 + the signal.
 * SIGHUP and SIGPIPE never abort: writes to a closed stderr fail with
 * EPIPE instead of killing the agent. */
int tb_session_stop_signal(void);
/* Is the process there (ours to signal or not)? */
int tb_pid_alive(pid_t pid);

#endif
