/* procname.c: a process's display name from its command line ("python3 app.py"),
 * see procname.h. Everything in argv is the target's: at most MAX_ARGS arguments are
 * looked at, each shown through put_arg (replaced controls and invalid UTF-8, elided). */
#include <stdio.h>
#include <string.h>
#include "lib/utf8.h"
#include "proc/procname.h"

#define MAX_ARGS 64

struct out {
	char *buf;
	size_t cap, len;     /* cap: room for text, the NUL excluded */
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s && s[1] ? s + 1 : p;
}

/* Bytes of the character at s (NUL-terminated) and whether it may be shown as it is. */
static size_t char_at(const unsigned char *s, int *shown)
{
	int n = tb_utf8_len_z(s);
	unsigned cp;

	*shown = 0;
	if (n == 0)
		return 1;
	if (n == 1) {
		*shown = s[0] >= 0x20 && s[0] != 0x7f;
		return 1;
	}
	cp = n == 2 ? (unsigned)(s[0] & 0x1f) << 6 | (s[1] & 0x3f)
		    : n == 3 ? (unsigned)(s[0] & 0x0f) << 12 | (unsigned)(s[1] & 0x3f) << 6 | (s[2] & 0x3f) : 0x10000;
	*shown = !(cp >= 0x80 && cp <= 0x9f) && !(cp >= 0x202a && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069);
	return (size_t)n;
}

/* Appends s, made safe, at most TB_PROCNAME_ARG_MAX bytes of it: a longer one is shown as
 * "..." and its end (a script's file name is at the end of its path). */
static void put_arg(struct out *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t total = 0, skip = 0;
	int shown;

	for (const unsigned char *q = p; *q; q += char_at(q, &shown))
		total += shown ? (size_t)tb_utf8_len_z(q) : 1;
	if (total > TB_PROCNAME_ARG_MAX) {
		size_t keep = TB_PROCNAME_ARG_MAX - 3, at = 0;

		while (*p && total - at > keep) {
			size_t n = char_at(p, &shown);

			at += shown ? n : 1;
			p += n;
		}
		skip = 1;
	}
	if (skip && o->len + 3 <= o->cap) {
		memcpy(o->buf + o->len, "...", 3);
		o->len += 3;
	}
	while (*p) {
		size_t n = char_at(p, &shown), w = shown ? n : 1;

		if (o->len + w > o->cap)
			break;
		if (shown)
			memcpy(o->buf + o->len, p, n);
		else
			o->buf[o->len] = '?';
		o->len += w;
		p += n;
	}
	o->buf[o->len] = '\0';
}

static void put_word(struct out *o, const char *s)
{
	if (o->len && o->len < o->cap)
		o->buf[o->len++] = ' ';
	put_arg(o, s);
}

static int is_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

/* ld.so's own options before the program (glibc 2.33+: --argv0, --glibc-hwcaps-*). */
static const char *const ld_value_opts[] = { "--library-path", "--preload", "--audit", "--inhibit-rpath",
					      "--argv0", "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask", NULL };

/* Python options that take a value (besides -c and -m, which end the options). */
static int py_short_takes_value(char c)
{
	return c == 'W' || c == 'X' || c == 'Q';
}

static const char *const py_long_value_opts[] = { "--check-hash-based-pycs", NULL };

static int looks_like_python(const char *base)
{
	return !strncmp(base, "python", 6) || !strncmp(base, "pypy", 4);
}

/* The interpreter's options from args[i]: writes "-m MODULE", "-c" or the script. */
static void put_python_target(struct out *o, char **args, int n, int i)
{
	for (; i < n; i++) {
		const char *a = args[i];

		if (!a[0]) /* an empty argument, or the zeros after a setproctitle */
			continue;
		if (!strcmp(a, "--")) {
			if (i + 1 < n)
				put_word(o, args[i + 1]);
			return;
		}
		if (a[0] != '-' || !a[1]) { /* the script, or "-": stdin */
			put_word(o, a);
			return;
		}
		if (a[1] == '-') {
			if (is_one_of(a, py_long_value_opts))
				i++;
			continue;
		}
		for (const char *c = a + 1; *c; c++) {
			if (*c == 'm') {
				put_word(o, "-m");
				if (c[1])
					put_word(o, c + 1);
				else if (i + 1 < n)
					put_word(o, args[i + 1]);
				return;
			}
			if (*c == 'c') {
				put_word(o, "-c");
				return;
			}
			if (py_short_takes_value(*c)) {
				if (!c[1])
					i++;
				break;
			}
		}
	}
}

void tb_procname_from_argv(const char *argv, size_t len, const char *comm, char *out, size_t outlen)
{
	char copy[TB_PROCNAME_READ + 1], *args[MAX_ARGS];
	struct out o = { out, outlen ? outlen - 1 : 0, 0 };
	const char *prog;
	int n = 0, i = 0;

	if (!outlen)
		return;
	out[0] = '\0';
	if (len > TB_PROCNAME_READ)
		len = TB_PROCNAME_READ;
	memcpy(copy, argv, len);
	copy[len] = '\0';
	for (size_t at = 0; at < len && n < MAX_ARGS; at += strlen(copy + at) + 1)
		args[n++] = copy + at;
	if (!n || !args[0][0]) {
		put_arg(&o, comm ? comm : "");
		return;
	}
	prog = args[0];
	if (!strncmp(base_name(args[0]), "ld-linux", 8) || !strncmp(base_name(args[0]), "ld.so", 5)) {
		const char *argv0 = NULL;

		for (i = 1; i < n && !strncmp(args[i], "--", 2); i++) {
			if (!is_one_of(args[i], ld_value_opts))
				continue;
			if (!strcmp(args[i], "--argv0") && i + 1 < n)
				argv0 = args[i + 1];
			i++;
		}
		if (i < n)
			prog = argv0 ? argv0 : args[i];
	}
	put_arg(&o, base_name(prog));
	if (looks_like_python(base_name(prog)))
		put_python_target(&o, args, n, i + 1);
}

void tb_procname_read(pid_t pid, const char *comm, char *out, size_t outlen)
{
	char path[64], buf[TB_PROCNAME_READ];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	f = fopen(path, "re");
	if (f) {
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
	}
	tb_procname_from_argv(buf, n, comm, out, outlen);
}
