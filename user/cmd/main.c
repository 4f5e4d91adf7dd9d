/* main.c: tachyon-bpf's entry point: the table of commands, --help and
 * --version; anything else is the capture command's arguments (record). */
#include <stdio.h>
#include <string.h>
#include "cpython/versions.h"
#include "cmd/commands.h"
#include "version.h" /* TB_VERSION, written by the Makefile */

static const struct command {
	const char *name;
	const char *alias;   /* another name, or NULL */
	int (*run)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "record", NULL, tb_cmd_record, "sample, then write profiles (the default command)" },
	{ "top", "--live", tb_cmd_top, "live view of the hottest functions (also: --live)" },
	{ "render", NULL, tb_cmd_render, "write outputs from a capture file (.tbp)" },
	{ "diff", NULL, tb_cmd_diff, "differential flame graph of two capture files" },
	{ "dump", NULL, tb_cmd_dump, "every thread's Python stack of a process, once" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void help(FILE *f)
{
	fprintf(f, "usage: tachyon-bpf [record] [OPTIONS] TARGET\n"
		   "       tachyon-bpf COMMAND [ARGS...]\n"
		   "A sampling profiler for CPython 3.%d-3.%d: a BPF program walks Python stacks.\n\n"
		   "Commands:\n", TB_PY_MIN_MINOR, TB_PY_MAX_MINOR);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "  %-10s %s\n", "--version", "the version of tachyon-bpf and the CPython versions it reads");
	fprintf(f, "  %-10s %s\n\n", "--help", "this text");
	fprintf(f, "tachyon-bpf COMMAND --help describes a command. The capture command's options:\n\n");
	tb_record_usage(f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		help(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("tachyon-bpf %s (CPython 3.%d-3.%d)\n", TB_VERSION, TB_PY_MIN_MINOR, TB_PY_MAX_MINOR);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		help(stdout);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name) || (commands[i].alias && !strcmp(argv[1], commands[i].alias)))
			return commands[i].run(argc - 1, argv + 1);
	return tb_cmd_record(argc, argv); /* options, or the command to profile */
}
