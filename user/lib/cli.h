/* cli.h: option-value parsing shared by the commands. */
#ifndef TB_CLI_H
#define TB_CLI_H
#include <sys/types.h>

/* A decimal in [lo, hi]. 0 ok, -1 otherwise. */
int tb_parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out);
/* "PID[,PID...]" appended to pids (at most max in all). 0 ok, -1 otherwise. */
int tb_parse_pids(char *arg, pid_t *pids, int *npids, int max);

#endif
