/* cli.c: option-value parsing shared by the commands. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/cli.h"

int tb_parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int tb_parse_pids(char *arg, pid_t *pids, int *npids, int max)
{
	for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
		unsigned v;

		if (tb_parse_uint(tok, 1, 0x7fffffff, &v) || *npids >= max)
			return -1;
		pids[(*npids)++] = (pid_t)v;
	}
	return 0;
}
