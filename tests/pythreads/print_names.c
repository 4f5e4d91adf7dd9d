/* print_names.c: test driver of user/cpython/threadnames.c (tests/pythreads/check.sh). Discovers a
 * running CPython with tb_discover() and reads its thread names with tb_python_thread_names().
 *
 *   print_names PID                 print "ident<TAB>name" lines
 *   print_names --expect FILE PID   every "ident<TAB>name" line of FILE must be returned (a name
 *                                   longer than 63 bytes as its first 63 bytes, cut at a UTF-8
 *                                   character boundary); exit 1 otherwise
 *   print_names --churn N PID       N calls on a process whose threads come and go: every name
 *                                   must be "MainThread" or start with "churn-"; prints call
 *                                   times; exit 1 on a bad name, a slow call or no success
 *   print_names --garbage PID       calls with every built-in layout at the real runtime address
 *                                   and at wrong ones (PID may be any process): each call must
 *                                   return quickly with sane output; exit 1 if not
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpython/discover.h"
#include "cpython/threadnames.h"
#include "cpython/versions.h"

#define MAX_NAMES 1024
#define SLOW_MS   250.0   /* a call must take less than this */

static struct tb_pyname names[MAX_NAMES];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int discover(pid_t pid, struct tb_target *t)
{
	char err[512];
	int rc = tb_discover(pid, t, err, sizeof(err));

	if (rc)
		fprintf(stderr, "print_names: %s\n", err);
	return rc;
}

/* Cut s to at most max bytes without splitting a UTF-8 sequence. */
static void utf8_cut(char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return;
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	s[n] = '\0';
}

static int valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int extra = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 :
			    (*p & 0xf8) == 0xf0 ? 3 : -1;

		if (extra < 0)
			return 0;
		p++;
		for (int i = 0; i < extra; i++, p++)
			if ((*p & 0xc0) != 0x80)
				return 0;
	}
	return 1;
}

static int cmd_print(pid_t pid)
{
	struct tb_target t;
	int n;

	if (discover(pid, &t))
		return 2;
	n = tb_python_thread_names(pid, &t.layout, t.runtime_addr, names, MAX_NAMES);
	if (n < 0) {
		fprintf(stderr, "print_names: pid %d: thread names could not be read\n", (int)pid);
		return 1;
	}
	for (int i = 0; i < n; i++)
		printf("%" PRIu64 "\t%s\n", names[i].ident, names[i].name);
	return 0;
}

static const char *lookup(int n, uint64_t ident)
{
	for (int i = 0; i < n; i++)
		if (names[i].ident == ident)
			return names[i].name;
	return NULL;
}

static int cmd_expect(const char *file, pid_t pid)
{
	struct tb_target t;
	char line[1024], ver[32];
	int n, want = 0, ok = 0;
	double t0;
	FILE *f;

	if (discover(pid, &t))
		return 1;
	t0 = now_ms();
	n = tb_python_thread_names(pid, &t.layout, t.runtime_addr, names, MAX_NAMES);
	t0 = now_ms() - t0;
	tb_layout_version_str(&t.layout, ver, sizeof(ver));
	if (n < 0) {
		printf("%s: tb_python_thread_names failed\n", ver);
		return 1;
	}
	f = fopen(file, "r");
	if (!f) {
		perror(file);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *name;
		const char *got;
		uint64_t ident;

		if (!tab)
			continue;
		*tab = '\0';
		name = tab + 1;
		name[strcspn(name, "\n")] = '\0';
		ident = strtoull(line, NULL, 10);
		utf8_cut(name, sizeof(names[0].name) - 1);
		want++;
		got = lookup(n, ident);
		if (got && !strcmp(got, name)) {
			ok++;
			continue;
		}
		printf("    ident %" PRIu64 ": want \"%s\", got %s%s%s\n", ident, name,
		       got ? "\"" : "nothing", got ? got : "", got ? "\"" : "");
	}
	fclose(f);
	printf("%s: %d/%d expected threads named (%d returned, %.2f ms)\n", ver, ok, want, n, t0);
	return want > 0 && ok == want ? 0 : 1;
}

static int cmd_churn(int calls, pid_t pid)
{
	struct tb_target t;
	int fails = 0, bad = 0, total = 0;
	double worst = 0, sum = 0;

	if (discover(pid, &t))
		return 1;
	for (int c = 0; c < calls; c++) {
		double t0 = now_ms(), dt;
		int n = tb_python_thread_names(pid, &t.layout, t.runtime_addr, names, MAX_NAMES);

		dt = now_ms() - t0;
		sum += dt;
		if (dt > worst)
			worst = dt;
		if (n < 0) {
			fails++;
			continue;
		}
		total += n;
		for (int i = 0; i < n; i++) {
			if ((!strcmp(names[i].name, "MainThread") || !strncmp(names[i].name, "churn-", 6)) &&
			    valid_utf8(names[i].name))
				continue;
			if (bad++ < 5)
				printf("    bad name \"%s\" (ident %" PRIu64 ")\n", names[i].name, names[i].ident);
		}
	}
	printf("churn: %d calls, %d failed, %d names (%d bad), %.2f ms/call, max %.2f ms\n", calls, fails,
	       total, bad, sum / calls, worst);
	return bad || worst > SLOW_MS || fails * 2 > calls ? 1 : 0;
}

/* One call with a suspicious address: must return in time, with sane output. */
static int garbage_call(pid_t pid, const struct tb_layout *l, uint64_t addr, double *worst, int *hits)
{
	double t0 = now_ms(), dt;
	int n = tb_python_thread_names(pid, l, addr, names, MAX_NAMES);

	dt = now_ms() - t0;
	if (dt > *worst)
		*worst = dt;
	if (n > MAX_NAMES)
		return 1;
	for (int i = 0; i < n; i++)
		if (!memchr(names[i].name, '\0', sizeof(names[i].name)) || !valid_utf8(names[i].name))
			return 1;
	*hits += n > 0;
	return 0;
}

/* Start addresses of pid's readable mappings (at most max). */
static int mapping_starts(pid_t pid, uint64_t *out, int max)
{
	char path[64], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) == 3 && perms[0] == 'r')
			out[n++] = start;
	}
	fclose(f);
	return n;
}

static int cmd_garbage(pid_t pid)
{
	/* the discovered layout and the built-in one of every supported version */
	struct tb_layout layouts[1 + TB_PY_MAX_MINOR - TB_PY_MIN_MINOR + 1];
	uint64_t addrs[4096], maps[64];
	struct tb_target t;
	int nl = 0, na = 0, nm, bad = 0, hits = 0;
	double worst = 0, t0 = now_ms();
	char err[512];

	if (tb_discover(pid, &t, err, sizeof(err)) == 0) {
		layouts[nl++] = t.layout;
		addrs[na++] = t.runtime_addr;  /* with the other minors' layouts */
		/* the real runtime, shifted: real Python memory read as the wrong structures */
		for (int64_t d = -512; d <= 512 && na < 4096; d += 8)
			if (d)
				addrs[na++] = t.runtime_addr + (uint64_t)d;
	}
	for (uint32_t minor = TB_PY_MIN_MINOR; minor <= TB_PY_MAX_MINOR; minor++)
		if (!tb_layout_builtin(0x030000f0u | minor << 16, &layouts[nl]))
			nl++;
	nm = mapping_starts(pid, maps, 64);
	for (int i = 0; i < nm && na + 3 <= 4096; i++) {
		addrs[na++] = maps[i];
		addrs[na++] = maps[i] + 4096;
		addrs[na++] = maps[i] + 40;
	}
	addrs[na++] = 0;
	addrs[na++] = ~0ull - 7;
	for (int li = 0; li < nl; li++)
		for (int ai = 0; ai < na; ai++)
			bad += garbage_call(pid, &layouts[li], addrs[ai], &worst, &hits);
	printf("garbage: %d layouts x %d addresses, %d returned names, %d bad, max %.2f ms, total %.0f ms\n",
	       nl, na, hits, bad, worst, now_ms() - t0);
	return bad || worst > SLOW_MS ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: print_names [--expect FILE | --churn N | --garbage] PID\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc == 2)
		return cmd_print((pid_t)atoi(argv[1]));
	if (argc == 4 && !strcmp(argv[1], "--expect"))
		return cmd_expect(argv[2], (pid_t)atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "--churn") && atoi(argv[2]) > 0)
		return cmd_churn(atoi(argv[2]), (pid_t)atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "--garbage"))
		return cmd_garbage((pid_t)atoi(argv[2]));
	usage();
	return 2;
}
