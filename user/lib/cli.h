/* cli.h: option-value parsing shared by the commands. */
#ifndef TB_CLI_H
#define TB_CLI_H
#include <sys/types.h>

struct option;

/* A decimal in [lo, hi]. 0 ok, -1 otherwise. */
int tb_parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out);
/* "PID[,PID...]" appended to pids (at most max in all). 0 ok, -1 otherwise. */
int tb_parse_pids(char *arg, pid_t *pids, int *npids, int max);

/* After getopt_long returned '?' (with opterr = 0): one line on stderr that
 * names the option and what is wrong (unknown, or its value missing) and
 * where the options are listed ("tachyon-bpf CMD --help"; cmd NULL: the
 * capture command). Returns 2, the exit code of bad usage. */
int tb_bad_option(const char *cmd, char **argv, int optind, int optopt, const char *shorts,
		  const struct option *longs);

#endif
