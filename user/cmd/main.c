/* main.c: tachyon-bpf's entry point: the table of commands (with the help
 * and version words), --help and --version, and the hidden --help-man and
 * --completion that make the man page and the shell completions from the
 * same table (make install); anything else is the capture command's
 * arguments (record). */
#include <stdio.h>
#include <string.h>
#include "cpython/versions.h"
#include "cmd/commands.h"
#include "version.h" /* TB_VERSION, TB_GIT: written by the Makefile */

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct tb_command commands[] = {
	{ "record", NULL, tb_cmd_record, tb_record_usage, "sample, then write profiles (the default command)" },
	{ "top", "--live", tb_cmd_top, tb_top_usage, "live view of the hottest functions (also: --live)" },
	{ "render", NULL, tb_cmd_render, tb_render_usage, "write outputs from a capture file (.tbp)" },
	{ "diff", NULL, tb_cmd_diff, tb_diff_usage, "differential flame graph of two capture files" },
	{ "dump", NULL, tb_cmd_dump, tb_dump_usage, "every thread's Python stack of a process, once" },
	{ "help", "--help", cmd_help, NULL, "this text; help COMMAND: the command's options (also: --help)" },
	{ "version", "--version", cmd_version, NULL, "the version, and the CPython versions it reads (also: --version)" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void summary(char *buf, size_t len)
{
	snprintf(buf, len, "a sampling profiler for CPython 3.%d-3.%d: a BPF program walks Python stacks",
		 TB_PY_MIN_MINOR, TB_PY_MAX_MINOR);
}

/* full: with the capture command's options (--help); else the short form
 * that a bare `tachyon-bpf` prints: the commands and a first profile */
static void help(FILE *f, int full)
{
	char line[128];

	summary(line, sizeof(line));
	fprintf(f, "usage: tachyon-bpf [record] [OPTIONS] TARGET\n"
		   "       tachyon-bpf COMMAND [ARGS...]\n"
		   "tachyon-bpf, %s.\n\n"
		   "Commands:\n", line);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	if (!full) {
		fprintf(f, "\nA first profile (as root): sudo tachyon-bpf -o profile.html -- python3 app.py\n"
			   "tachyon-bpf --help lists every option; tachyon-bpf help COMMAND describes a command.\n");
		return;
	}
	fprintf(f, "\ntachyon-bpf help COMMAND (or COMMAND --help) describes a command. "
		   "The capture command's options:\n\n");
	tb_record_usage(f);
}

static const struct tb_command *find(const char *word)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(word, commands[i].name) || (commands[i].alias && !strcmp(word, commands[i].alias)))
			return &commands[i];
	return NULL;
}

/* tachyon-bpf help [COMMAND]: this text, or what COMMAND --help prints */
static int cmd_help(int argc, char **argv)
{
	const struct tb_command *c;

	if (argc < 2) {
		help(stdout, 1);
		return 0;
	}
	if (argc > 2 || !(c = find(argv[1]))) {
		fprintf(stderr, "tachyon-bpf: help takes one command (");
		for (size_t i = 0; i < NCOMMANDS; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", commands[i].name);
		fprintf(stderr, ")\n");
		return 2;
	}
	if (c->usage)
		c->usage(stdout);
	else
		printf("tachyon-bpf %s: %s\n", c->name, c->help);
	return 0;
}

static int cmd_version(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "tachyon-bpf: version takes no arguments\n");
		return 2;
	}
	printf("tachyon-bpf %s (git %s, CPython 3.%d-3.%d)\n", TB_VERSION, TB_GIT, TB_PY_MIN_MINOR,
	       TB_PY_MAX_MINOR);
	return 0;
}

int main(int argc, char **argv)
{
	const struct tb_command *c;

	if (argc < 2) {
		help(stderr, 0);
		return 2;
	}
	/* hidden: what make install writes (the man page, the completions) */
	if (!strcmp(argv[1], "--help-man") && argc == 2) {
		char line[128], version[64];

		summary(line, sizeof(line));
		snprintf(version, sizeof(version), "%s", TB_VERSION);
		tb_write_manpage(stdout, commands, NCOMMANDS, line, version);
		return fflush(stdout) ? 1 : 0;
	}
	if (!strcmp(argv[1], "--completion")) {
		if (argc != 3 || tb_write_completion(stdout, argv[2], commands, NCOMMANDS)) {
			fprintf(stderr, "tachyon-bpf: --completion takes bash or zsh\n");
			return 2;
		}
		return fflush(stdout) ? 1 : 0;
	}
	if (!strcmp(argv[1], "-h"))
		return cmd_help(1, argv);
	if ((c = find(argv[1])))
		return c->run(argc - 1, argv + 1);
	return tb_cmd_record(argc, argv); /* options, or the command to profile */
}
