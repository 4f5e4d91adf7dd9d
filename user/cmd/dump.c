/* dump.c: `tachyon-bpf dump PID [--json] [--native] [--kernel]`: the current stack of
 * every thread of a process, once, read without stopping it (no ptrace; BPF only with
 * --native: a task iterator of blocked threads' saved registers, and a short capture of
 * the running ones), as py-spy dump shows it: each thread by its Python name (threading.Thread.name, read by
 * cpython/threadnames.c; MainThread), its state (idle / active, holds the GIL, in GC),
 * its Python frames, with --native merged with its native frames (dump_native.c; a
 * running thread's Python and native frames both from one sample of the BPF program,
 * dump_running.c), with --kernel its kernel stack (/proc/PID/task/TID/stack, root only).
 * What the process names is shown through lib/termsafe.h (text) or JSON-escaped (--json). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd/commands.h"
#include "cmd/dump_native.h"
#include "cmd/dump_running.h"
#include "cpython/discover.h"
#include "cpython/threadnames.h"
#include "cpython/walk.h"
#include "lib/cli.h"
#include "lib/jsonw.h"
#include "lib/termsafe.h"
#include "model/symbolize.h"
#include "proc/task.h"

#define DUMP_MAX_DEPTH TB_MAX_FRAMES
#define DUMP_MAX_NAMES 1024     /* Python thread names read */

/* What one thread is shown with besides its frames. */
struct dump_thread {
	char os_name[64];        /* /proc/PID/task/TID/comm */
	const char *name;        /* the Python name, else "MainThread" for the main thread, else os_name */
	int python_name;
	char os_state;           /* stat's state letter, 0 if unknown */
	int active;              /* running or runnable (R) */
	struct dump_sample *sample; /* --native, running when the dump began: its sample, or NULL */
	struct dump_frame *merged; /* --native: frames merged, innermost first */
	int nmerged;
	const char *native_note;
	const char *regs_from;   /* --native: "kernel", "guessed" or NULL (dump_native.h) */
	char (*kstack)[TB_TASK_KNAME]; /* --kernel */
	int nkstack;             /* -1: unreadable */
};

struct dump {
	struct tb_target t;
	struct tb_strtab strs;
	struct tb_symbolizer sym;
	struct tb_uthread *th;
	struct dump_thread *info;
	struct tb_pyname names[DUMP_MAX_NAMES];
	int n, native, kernel;
	char note[512];          /* what cut the walk short, or "" */
	struct dump_sample *samples; /* --native: of the threads running when the dump began */
	char sample_err[512];    /* why they could not be sampled at all, or "" */
};

static void thread_comm(pid_t pid, uint32_t tid, char *out, size_t len)
{
	char path[64];
	FILE *f;

	out[0] = '\0';
	if (!tid)
		return;
	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", (int)pid, tid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

/* Everything shown of thread i but its Python frames. */
static void describe_thread(struct dump *d, int i, int nnames, struct dump_native *nat)
{
	const struct tb_uthread *th = &d->th[i];
	struct dump_thread *x = &d->info[i];

	thread_comm(d->t.pid, th->native_tid, x->os_name, sizeof(x->os_name));
	x->name = x->os_name[0] ? x->os_name : "?";
	for (int k = 0; k < nnames; k++)
		if (d->names[k].ident == th->ident && d->names[k].name[0]) {
			x->name = d->names[k].name;
			x->python_name = 1;
		}
	if (!x->python_name && th->native_tid == (uint32_t)d->t.pid)
		x->name = "MainThread";  /* threading never imported: the main thread is this one */
	x->os_state = th->native_tid ? tb_task_state(d->t.pid, th->native_tid) : 0;
	x->active = x->os_state == 'R';
	if (nat && (x->merged = calloc((size_t)th->depth + TB_MAX_NATIVE + 1, sizeof(*x->merged))))
		x->nmerged = tb_dump_native_thread(nat, &d->sym, d->t.layout.minor, th, x->sample, x->merged,
						   &x->native_note, &x->regs_from);
	if (d->kernel) {
		x->kstack = calloc(TB_TASK_KSTACK_MAX, sizeof(*x->kstack));
		x->nkstack = x->kstack && th->native_tid ?
			     tb_task_kstack(d->t.pid, th->native_tid, x->kstack, TB_TASK_KSTACK_MAX) : -1;
	}
}

/* "idle", "active", "active, holds the GIL", "active, holds the GIL, in GC" */
static const char *state_words(const struct tb_uthread *th, const struct dump_thread *x, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", x->active ? "active" : x->os_state ? "idle" : "state unknown",
		 th->holds_gil ? ", holds the GIL" : "", th->in_gc ? ", in GC" : "");
	return buf;
}

/* Frame f of thread th: name, file (module for a native one), line (0: none). */
static void frame_info(struct dump *d, const struct tb_uthread *th, const struct dump_frame *f,
		       const char **name, const char **file, int *line)
{
	const struct tb_uframe *pf;
	const struct tb_code *c;
	struct tb_location loc;
	uint32_t idx;

	*line = 0;
	if (f->marker) {
		*name = f->marker;
		*file = "";
		return;
	}
	if (f->python < 0) {
		c = &d->sym.codes[f->code];
		*name = tb_str(&d->strs, c->qualname);
		*file = tb_str(&d->strs, c->filename);
		return;
	}
	pf = &th->frames[f->python];
	idx = tb_sym_code(&d->sym, d->t.pid, &d->t.layout, d->t.pycode_type, pf->code, pf->code_id);
	c = &d->sym.codes[idx];
	tb_sym_location(&d->sym, idx, pf->offset, &loc);
	*name = tb_str(&d->strs, c->qualname);
	*file = tb_str(&d->strs, c->filename);
	*line = loc.line >= 0 ? loc.line : c->firstlineno;
}

/* The frames shown of thread i, innermost first: the merged ones with --native. */
static int frame_count(const struct dump *d, int i)
{
	return d->info[i].merged ? d->info[i].nmerged : d->th[i].depth;
}

static struct dump_frame frame_at(const struct dump *d, int i, int k)
{
	return d->info[i].merged ? d->info[i].merged[k] : (struct dump_frame){ k, 0, NULL };
}

/* Threads whose Python frames are to be read again: the ones running when the dump began
 * that blocked before they were sampled (their frames then of the instant they are
 * unwound in). */
static void reread_blocked(struct dump *d)
{
	struct tb_uthread *again = calloc(TB_WALK_MAX_THREADS, sizeof(*again));
	char note[512];
	int n;

	if (!again)
		return;
	n = tb_walk_process(&d->t, again, TB_WALK_MAX_THREADS, DUMP_MAX_DEPTH, note, sizeof(note));
	for (int i = 0; i < d->n; i++) {
		struct dump_sample *s = d->info[i].sample;
		int64_t nr;
		uint64_t sp, pc;

		if (!s || s->taken || tb_task_syscall(d->t.pid, s->tid, &nr, &sp, &pc) != TB_TASK_REGS_BLOCKED)
			continue;
		for (int k = 0; k < n; k++) {
			if (again[k].tstate == d->th[i].tstate && again[k].ident == d->th[i].ident) {
				struct tb_uthread swap = d->th[i];

				d->th[i] = again[k];
				again[k] = swap;
				break;
			}
		}
	}
	if (n > 0)
		tb_walk_free(again, n);
	free(again);
}

/* --native: the threads running now (no registers to unwind from) sampled once by the
 * BPF program; each sampled one's Python frames become the sample's. */
static void sample_running(struct dump *d)
{
	char *running = calloc((size_t)d->n + 1, 1), err[400];
	int nrunning = 0, k = 0;
	int64_t nr;
	uint64_t sp, pc;

	for (int i = 0; running && i < d->n; i++) {
		running[i] = d->th[i].native_tid &&
			     tb_task_syscall(d->t.pid, d->th[i].native_tid, &nr, &sp, &pc) == TB_TASK_REGS_RUNNING;
		nrunning += running[i];
	}
	if (!nrunning || !(d->samples = calloc((size_t)nrunning, sizeof(*d->samples)))) {
		free(running);
		return;
	}
	for (int i = 0; i < d->n; i++) {
		if (running[i]) {
			d->samples[k].tid = d->th[i].native_tid;
			d->info[i].sample = &d->samples[k++];
		}
	}
	free(running);
	if (tb_dump_running_sample(d->t.pid, d->samples, k, TB_DUMP_SAMPLE_S, err, sizeof(err))) {
		snprintf(d->sample_err, sizeof(d->sample_err), "running, but not sampled: %s", err);
		for (int j = 0; j < k; j++)
			d->samples[j].why_not = d->sample_err;
	}
	for (int i = 0; i < d->n; i++)
		if (d->info[i].sample && d->info[i].sample->taken && tb_dump_sample_adopt(d->info[i].sample, &d->th[i]))
			d->info[i].sample->taken = 0;  /* out of memory: the frames read from memory stay */
	for (int j = 0; j < k; j++)
		if (!d->samples[j].taken) {
			reread_blocked(d);
			break;
		}
}

static void print_text(struct dump *d)
{
	char version[32], state[64];

	printf("Process %d: ", (int)d->t.pid);
	tb_termsafe_put(stdout, d->t.cmdline);
	printf("\nPython %s (", tb_layout_version_str(&d->t.layout, version, sizeof(version)));
	tb_termsafe_put(stdout, d->t.elf_path);
	printf(")\n");
	for (int i = 0; i < d->n; i++) {
		struct tb_uthread *th = &d->th[i];
		struct dump_thread *x = &d->info[i];

		printf("\nThread %u \"", th->native_tid);
		tb_termsafe_put(stdout, x->name);
		printf("\" (%s)", state_words(th, x, state, sizeof(state)));
		if (x->python_name && strcmp(x->name, x->os_name)) {
			printf(" [os name \"");
			tb_termsafe_put(stdout, x->os_name);
			printf("\"]");
		}
		printf(" ident 0x%llx\n", (unsigned long long)th->ident);
		if (th->truncated)
			printf("    ... (deeper than %d frames)\n", DUMP_MAX_DEPTH);
		for (int k = frame_count(d, i) - 1; k >= 0; k--) { /* newest last, like a traceback */
			struct dump_frame f = frame_at(d, i, k);
			const char *name, *file;
			int line;

			frame_info(d, th, &f, &name, &file, &line);
			printf("    ");
			tb_termsafe_put(stdout, name);
			if (file[0]) {
				printf(" (");
				tb_termsafe_put(stdout, file);
				printf(line > 0 ? ":%d)" : ")", line);
			}
			printf("%s\n", f.python < 0 && !f.marker ? " [native]" : "");
		}
		if (!th->depth && !th->error && !x->nmerged)
			printf("    (no Python frame: idle or running native code)\n");
		if (th->error) {
			printf("    [stack could not be read completely: ");
			tb_termsafe_put(stdout, th->error);
			printf("]\n");
		}
		if (d->native && x->native_note)
			printf("    [native frames: %s]\n", x->native_note);
		if (d->kernel && x->nkstack < 0)
			printf("    [kernel stack unreadable: it needs root (CAP_SYS_ADMIN)]\n");
		for (int k = 0; k < x->nkstack; k++)   /* innermost last here too */
			printf("    %s [kernel]\n", x->kstack[x->nkstack - 1 - k]);
	}
}

static void json_nullable(const char *s)
{
	if (s)
		tb_json_str(stdout, s);
	else
		printf("null");
}

static void print_json(struct dump *d)
{
	char version[32], os_state[2] = { 0 };

	printf("{\"pid\":%d,\"name\":", (int)d->t.pid);
	tb_json_str(stdout, d->t.name);
	printf(",\"cmdline\":");
	tb_json_str(stdout, d->t.cmdline);
	printf(",\"python\":");
	tb_json_str(stdout, tb_layout_version_str(&d->t.layout, version, sizeof(version)));
	printf(",\"threads\":[");
	for (int i = 0; i < d->n; i++) {
		struct tb_uthread *th = &d->th[i];
		struct dump_thread *x = &d->info[i];

		os_state[0] = x->os_state;
		printf("%s{\"tid\":%u,\"ident\":%llu,\"name\":", i ? "," : "", th->native_tid,
		       (unsigned long long)th->ident);
		tb_json_str(stdout, x->name);
		printf(",\"python_name\":%s,\"os_name\":", x->python_name ? "true" : "false");
		tb_json_str(stdout, x->os_name);
		printf(",\"state\":\"%s\",\"os_state\":", x->active ? "active" : x->os_state ? "idle" : "unknown");
		tb_json_str(stdout, os_state);
		printf(",\"active\":%s,\"holds_gil\":%s,\"in_gc\":%s,\"truncated\":%s,\"error\":",
		       x->active ? "true" : "false", th->holds_gil ? "true" : "false", th->in_gc ? "true" : "false",
		       th->truncated ? "true" : "false");
		json_nullable(th->error);
		printf(",\"frames\":[");
		for (int k = th->depth - 1; k >= 0; k--) {
			struct dump_frame f = { k, 0, NULL };
			const char *name, *file;
			int line;

			frame_info(d, th, &f, &name, &file, &line);
			printf("%s{\"name\":", k == th->depth - 1 ? "" : ",");
			tb_json_str(stdout, name);
			printf(",\"file\":");
			tb_json_str(stdout, file);
			printf(",\"line\":%d}", line);
		}
		printf("]");
		if (d->native) {  /* merged, outermost first like frames; kind python, native or marker */
			if (x->sample && x->sample->taken)  /* when: ms after the program was attached */
				printf(",\"frames_from\":\"sampled\",\"sampled_after_ms\":%.1f", x->sample->after_ns / 1e6);
			else
				printf(",\"frames_from\":\"memory\",\"sampled_after_ms\":null");
			printf(",\"native_note\":");
			json_nullable(x->native_note);
			printf(",\"registers\":");
			json_nullable(x->regs_from);
			printf(",\"merged\":[");
			for (int k = x->nmerged - 1; k >= 0; k--) {
				struct dump_frame f = x->merged[k];
				const char *name, *file;
				int line;

				frame_info(d, th, &f, &name, &file, &line);
				printf("%s{\"kind\":\"%s\",\"name\":", k == x->nmerged - 1 ? "" : ",",
				       f.marker ? "marker" : f.python >= 0 ? "python" : "native");
				tb_json_str(stdout, name);
				printf(",\"file\":");
				tb_json_str(stdout, file);
				printf(",\"line\":%d}", line);
			}
			printf("]");
		}
		if (d->kernel) {  /* innermost last */
			printf(",\"kernel\":");
			if (x->nkstack < 0)
				printf("null");
			else
				printf("[");
			for (int k = 0; k < x->nkstack; k++) {
				printf(k ? "," : "");
				tb_json_str(stdout, x->kstack[x->nkstack - 1 - k]);
			}
			if (x->nkstack >= 0)
				printf("]");
		}
		printf("}");
	}
	printf("],\"warning\":");
	json_nullable(d->note[0] ? d->note : NULL);
	printf("}\n");
}

/* dump reads the process's memory (process_vm_readv) and /proc/PID/maps, which the
 * kernel allows the process's own user and CAP_SYS_PTRACE; nothing else (no BPF).
 * 1 (and the line said) when pid exists and that is refused. */
static int refused(long pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char c;
		ssize_t n = read(fd, &c, 1);  /* the check is made on read */
		int e = errno;

		close(fd);
		if (n >= 0)
			return 0;
		errno = e;
	}
	if (errno != EACCES && errno != EPERM)
		return 0;
	fprintf(stderr, "tachyon-bpf: dump: pid %ld: permission denied: reading another user's process needs "
		"root or CAP_SYS_PTRACE (run: sudo tachyon-bpf dump %ld)\n", pid, pid);
	return 1;
}

void tb_dump_usage(FILE *f)
{
	fprintf(f, "usage: tachyon-bpf dump PID [--json] [--native] [--kernel]\n"
		   "Prints the current stack of every thread of PID (newest frame last): its Python\n"
		   "name, its state (idle, active, holds the GIL, in GC), its Python frames; read\n"
		   "without stopping the process (the process's own user, or root / CAP_SYS_PTRACE).\n"
		   "  -n, --native             also the native frames, merged with the Python ones\n"
		   "                           (root): a blocked thread unwound where it blocked, a\n"
		   "                           running one sampled once by the BPF program (its\n"
		   "                           Python and native frames of one instant)\n"
		   "  -k, --kernel             also the kernel stack of each thread (root)\n"
		   "  -j, --json               one JSON document instead of text\n"
		   "  -h, --help               this text\n");
}

int tb_cmd_dump(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "json", no_argument, 0, 'j' },
		{ "native", no_argument, 0, 'n' },
		{ "kernel", no_argument, 0, 'k' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct dump_native *nat = NULL;
	struct dump *d;
	int json = 0, native = 0, kernel = 0, c, rc = 0, nnames;
	char err[512], *end;
	long pid;

	optind = 0;
	opterr = 0; /* tb_bad_option says it, in one line */
	while ((c = getopt_long(argc, argv, "jnkh", longs, NULL)) != -1) {
		if (c == 'j') {
			json = 1;
		} else if (c == 'n') {
			native = 1;
		} else if (c == 'k') {
			kernel = 1;
		} else {
			if (c == 'h') {
				tb_dump_usage(stdout);
				return 0;
			}
			return tb_bad_option("dump", argv, optind, optopt, "jnkh", longs);
		}
	}
	if (optind != argc - 1 || (pid = strtol(argv[optind], &end, 10)) <= 0 || *end || pid > 0x7fffffff) {
		fprintf(stderr, "tachyon-bpf: dump: give one process id\n");
		return 2;
	}
	if (refused(pid))
		return 1;
	d = calloc(1, sizeof(*d));
	if (!d)
		return 1;
	d->native = native;
	d->kernel = kernel;
	rc = tb_discover((pid_t)pid, &d->t, err, sizeof(err));
	if (rc) {
		tb_termsafe_line(stderr, "tachyon-bpf: dump: ", err);
		free(d);
		return 1;
	}
	if (native && !(nat = tb_dump_native_open((pid_t)pid, err, sizeof(err)))) {
		tb_termsafe_line(stderr, "tachyon-bpf: dump: --native: ", err);
		free(d);
		return 1;
	}
	d->th = calloc(TB_WALK_MAX_THREADS, sizeof(*d->th));
	d->info = calloc(TB_WALK_MAX_THREADS, sizeof(*d->info));
	tb_strtab_init(&d->strs);
	tb_sym_init(&d->sym, &d->strs);
	d->n = d->th && d->info ? tb_walk_process(&d->t, d->th, TB_WALK_MAX_THREADS, DUMP_MAX_DEPTH, d->note,
						  sizeof(d->note)) : -1;
	if (d->n < 0) {
		fprintf(stderr, "tachyon-bpf: dump: pid %ld: %s\n", pid, d->th && d->info ? d->note : "out of memory");
		rc = 1;
	} else {
		nnames = tb_python_thread_names((pid_t)pid, &d->t.layout, d->t.runtime_addr, d->names, DUMP_MAX_NAMES);
		if (nat)
			sample_running(d);
		for (int i = 0; i < d->n; i++)
			describe_thread(d, i, nnames, nat);
		if (json)
			print_json(d);
		else
			print_text(d);
		if (d->note[0])
			fprintf(stderr, "tachyon-bpf: dump: warning: %s\n", d->note);
	}
	for (int i = 0; d->info && i < d->n; i++) {
		free(d->info[i].merged);
		free(d->info[i].kstack);
	}
	if (d->n > 0)
		tb_walk_free(d->th, d->n);
	free(d->th);
	free(d->info);
	free(d->samples);
	tb_dump_native_close(nat);
	tb_sym_free(&d->sym);
	tb_strtab_free(&d->strs);
	free(d);
	return rc;
}
