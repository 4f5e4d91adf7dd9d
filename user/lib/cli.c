/* cli.c: option-value parsing shared by the commands. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
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

int tb_bad_option(const char *cmd, char **argv, int optind, int optopt, const char *shorts,
		  const struct option *longs)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "", *where = cmd ? cmd : "";
	const char *sep = cmd ? " " : "";

	if (strncmp(arg, "--", 2) == 0 && arg[2]) {
		size_t len = strcspn(arg + 2, "=");

		for (const struct option *o = longs; o && o->name; o++)
			if (strlen(o->name) == len && !strncmp(o->name, arg + 2, len) &&
			    o->has_arg == required_argument) {
				fprintf(stderr, "tachyon-bpf: option --%s needs a value (tachyon-bpf %s%s--help)\n",
					o->name, where, sep);
				return 2;
			}
		fprintf(stderr, "tachyon-bpf: unknown option --%.*s (tachyon-bpf %s%s--help lists the options)\n",
			(int)(len > 64 ? 64 : len), arg + 2, where, sep);
		return 2;
	}
	if (optopt > ' ' && optopt < 127 && optopt != ':' && optopt != '+' && strchr(shorts, optopt)) {
		fprintf(stderr, "tachyon-bpf: option -%c needs a value (tachyon-bpf %s%s--help)\n", optopt, where, sep);
		return 2;
	}
	if (optopt > ' ' && optopt < 127)
		fprintf(stderr, "tachyon-bpf: unknown option -%c (tachyon-bpf %s%s--help lists the options)\n", optopt,
			where, sep);
	else
		fprintf(stderr, "tachyon-bpf: bad option (tachyon-bpf %s%s--help lists the options)\n", where, sep);
	return 2;
}
