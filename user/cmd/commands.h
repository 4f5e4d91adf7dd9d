/* commands.h: the commands of tachyon-bpf, each in its own file, and the
 * row of main.c's table that names one; main.c dispatches to them with
 * argv[0] the command's name. */
#ifndef TB_COMMANDS_H
#define TB_COMMANDS_H
#include <stdio.h>

/* A row of the commands table (main.c): what --help, the man page and the
 * shell completions list.  usage prints the command's --help text (NULL:
 * the command takes no options). */
struct tb_command {
	const char *name;
	const char *alias;   /* another name, or NULL */
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *f);
	const char *help;    /* one line */
};

/* tachyon-bpf [record] [OPTIONS] TARGET: sample, then write outputs (the
 * default command) */
int tb_cmd_record(int argc, char **argv);
/* its usage text (also part of tachyon-bpf --help) */
void tb_record_usage(FILE *f);

/* tachyon-bpf render CAPTURE -o OUT... (argv[0] is "render") */
int tb_cmd_render(int argc, char **argv);
void tb_render_usage(FILE *f);

/* tachyon-bpf diff BASELINE CURRENT -o OUT... */
int tb_cmd_diff(int argc, char **argv);
void tb_diff_usage(FILE *f);

/* tachyon-bpf dump PID [--json] */
int tb_cmd_dump(int argc, char **argv);
void tb_dump_usage(FILE *f);

/* tachyon-bpf top [-p PID | --all-python | -- CMD] ...: live terminal view
 * (samples; also reached as tachyon-bpf --live ...) */
int tb_cmd_top(int argc, char **argv);
void tb_top_usage(FILE *f);

/* The man page tachyon-bpf(1) (manpage.c) and the shell completions
 * (completion.c), made from the commands' table and usage texts and the
 * output formats' table; summary is the one-line description, version
 * what --version prints after the name. tb_write_completion: shell "bash"
 * or "zsh"; -1 for another. */
void tb_write_manpage(FILE *f, const struct tb_command *cmds, size_t ncmds, const char *summary,
		      const char *version);
int tb_write_completion(FILE *f, const char *shell, const struct tb_command *cmds, size_t ncmds);

#endif
