/* commands.h: subcommands of tachyon-bpf that do not sample. */
#ifndef TB_COMMANDS_H
#define TB_COMMANDS_H

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
