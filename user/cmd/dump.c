/* dump.c: `tachyon-bpf dump PID [--json]`: the current Python stack of
 * every thread of a process, once, read without stopping it (no BPF).
 * What the process names is shown through lib/termsafe.h (text) or
 * JSON-escaped (--json). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/commands.h"
#include "cpython/discover.h"
#include "lib/jsonw.h"
#include "lib/termsafe.h"
#include "cpython/walk.h"
#include "model/symbolize.h"

#define DUMP_MAX_DEPTH 1024

struct dump {
	struct tb_target t;
	struct tb_strtab strs;
	struct tb_symbolizer sym;
	struct tb_uthread *th;
	int n;
	char note[512];          /* what cut the walk short, or "" */
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

/* frame i of thread th: name, file, line */
static void frame_info(struct dump *d, const struct tb_uframe *f, const char **name, const char **file,
		       int *line)
{
	uint32_t idx = tb_sym_code(&d->sym, d->t.pid, &d->t.layout, d->t.pycode_type, f->code, f->code_id);
	const struct tb_code *c = &d->sym.codes[idx];
	struct tb_location loc;

	tb_sym_location(&d->sym, idx, f->offset, &loc);
	*name = tb_str(&d->strs, c->qualname);
	*file = tb_str(&d->strs, c->filename);
	*line = loc.line >= 0 ? loc.line : c->firstlineno;
}

static void print_text(struct dump *d)
{
	char version[32];

	printf("Process %d: ", (int)d->t.pid);
	tb_termsafe_put(stdout, d->t.cmdline);
	printf("\nPython %s (", tb_layout_version_str(&d->t.layout, version, sizeof(version)));
	tb_termsafe_put(stdout, d->t.elf_path);
	printf(")\n");
	for (int i = 0; i < d->n; i++) {
		struct tb_uthread *th = &d->th[i];
		char comm[64];

		thread_comm(d->t.pid, th->native_tid, comm, sizeof(comm));
		printf("\nThread %u \"", th->native_tid);
		tb_termsafe_put(stdout, comm[0] ? comm : "?");
		printf("\" (ident 0x%llx)%s\n", (unsigned long long)th->ident, th->holds_gil ? " [holds the GIL]" : "");
		if (th->truncated)
			printf("    ... (deeper than %d frames)\n", DUMP_MAX_DEPTH);
		for (int k = th->depth - 1; k >= 0; k--) { /* newest last, like a traceback */
			const char *name, *file;
			int line;

			frame_info(d, &th->frames[k], &name, &file, &line);
			printf("    ");
			tb_termsafe_put(stdout, name);
			printf(" (");
			tb_termsafe_put(stdout, file);
			printf(":%d)\n", line);
		}
		if (!th->depth && !th->error)
			printf("    (no Python frame: idle or running native code)\n");
		if (th->error) {
			printf("    [stack could not be read completely: ");
			tb_termsafe_put(stdout, th->error);
			printf("]\n");
		}
	}
}

static void print_json(struct dump *d)
{
	char version[32];

	printf("{\"pid\":%d,\"cmdline\":", (int)d->t.pid);
	tb_json_str(stdout, d->t.cmdline);
	printf(",\"python\":");
	tb_json_str(stdout, tb_layout_version_str(&d->t.layout, version, sizeof(version)));
	printf(",\"threads\":[");
	for (int i = 0; i < d->n; i++) {
		struct tb_uthread *th = &d->th[i];
		char comm[64];

		thread_comm(d->t.pid, th->native_tid, comm, sizeof(comm));
		printf("%s{\"tid\":%u,\"ident\":%llu,\"name\":", i ? "," : "", th->native_tid,
		       (unsigned long long)th->ident);
		tb_json_str(stdout, comm);
		printf(",\"holds_gil\":%s,\"truncated\":%s,\"error\":", th->holds_gil ? "true" : "false",
		       th->truncated ? "true" : "false");
		if (th->error)
			tb_json_str(stdout, th->error);
		else
			printf("null");
		printf(",\"frames\":[");
		for (int k = th->depth - 1; k >= 0; k--) {
			const char *name, *file;
			int line;

			frame_info(d, &th->frames[k], &name, &file, &line);
			printf("%s{\"name\":", k == th->depth - 1 ? "" : ",");
			tb_json_str(stdout, name);
			printf(",\"file\":");
			tb_json_str(stdout, file);
			printf(",\"line\":%d}", line);
		}
		printf("]}");
	}
	printf("],\"warning\":");
	if (d->note[0])
		tb_json_str(stdout, d->note);
	else
		printf("null");
	printf("}\n");
}

void tb_dump_usage(FILE *f)
{
	fprintf(f, "usage: tachyon-bpf dump PID [--json]\n"
		   "Prints the current Python stack of every thread of PID (newest frame last),\n"
		   "read without stopping the process.\n"
		   "  -j, --json               one JSON document instead of text\n"
		   "  -h, --help               this text\n");
}

int tb_cmd_dump(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "json", no_argument, 0, 'j' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct dump *d;
	int json = 0, c, rc = 0;
	char err[512], *end;
	long pid;

	optind = 0;
	while ((c = getopt_long(argc, argv, "jh", longs, NULL)) != -1) {
		if (c == 'j') {
			json = 1;
		} else {
			tb_dump_usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind != argc - 1 || (pid = strtol(argv[optind], &end, 10)) <= 0 || *end) {
		fprintf(stderr, "tachyon-bpf: dump: give one process id\n");
		return 2;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return 1;
	rc = tb_discover((pid_t)pid, &d->t, err, sizeof(err));
	if (rc) {
		tb_termsafe_line(stderr, "tachyon-bpf: dump: ", err);
		free(d);
		return 1;
	}
	d->th = calloc(TB_WALK_MAX_THREADS, sizeof(*d->th));
	tb_strtab_init(&d->strs);
	tb_sym_init(&d->sym, &d->strs);
	d->n = d->th ? tb_walk_process(&d->t, d->th, TB_WALK_MAX_THREADS, DUMP_MAX_DEPTH, d->note,
				       sizeof(d->note)) : -1;
	if (d->n < 0) {
		fprintf(stderr, "tachyon-bpf: dump: pid %ld: %s\n", pid, d->th ? d->note : "out of memory");
		rc = 1;
	} else {
		if (json)
			print_json(d);
		else
			print_text(d);
		if (d->note[0])
			fprintf(stderr, "tachyon-bpf: dump: warning: %s\n", d->note);
	}
	if (d->n > 0)
		tb_walk_free(d->th, d->n);
	free(d->th);
	tb_sym_free(&d->sym);
	tb_strtab_free(&d->strs);
	free(d);
	return rc;
}
