/* commands.h: the commands of tachyon-bpf, each in its own file; main.c
 * dispatches to them with argv[0] the command's name. */
#ifndef TB_COMMANDS_H
#define TB_COMMANDS_H
#include <stdio.h>

/* tachyon-bpf [record] [OPTIONS] TARGET: sample, then write outputs (the
 * default command) */
int tb_cmd_record(int argc, char **argv);
/* its usage text (also part of tachyon-bpf --help) */
void tb_record_usage(FILE *f);

/* tachyon-bpf render CAPTURE -o OUT... (argv[0] is "render") */
int tb_cmd_render(int argc, char **argv);

/* tachyon-bpf diff BASELINE CURRENT -o OUT... */
int tb_cmd_diff(int argc, char **argv);

/* tachyon-bpf dump PID [--json] */
int tb_cmd_dump(int argc, char **argv);

/* tachyon-bpf top [-p PID | --all-python | -- CMD] ...: live terminal view
 * (samples; also reached as tachyon-bpf --live ...) */
int tb_cmd_top(int argc, char **argv);

#endif
