/* kallsyms.c: reads /proc/kallsyms ("ADDR TYPE NAME [MODULE]" lines) into a
 * sorted table of text symbols (types t T w W), bounded in bytes, line length
 * and count; notices when every address reads as 0 (kptr_restrict, no
 * CAP_SYSLOG); re-reads on a miss in module space, rate-limited.  Only a
 * regular file is opened for reading (a FIFO or a symlink is refused). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "proc/kallsyms.h"

#define CHUNK 65536            /* bytes per read */
#define MAX_NAME 511           /* KSYM_NAME_LEN - 1 */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct reader {
	struct tb_ksyms *k;
	uint32_t text_lines, zero_lines;
};

/* "ffffffff81000000 T _text" or "ffffffffc0a01000 t foo\t[mod]": 0 for a
 * text symbol (its parts cut out in place), 1 for another kind, -1 for a
 * malformed line */
static int parse_line(char *line, uint64_t *addr, char **name, char **module)
{
	char *p = line, *end;
	int digits = 0;

	*addr = 0;
	for (; digits < 17 && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
			       (*p >= 'A' && *p <= 'F')); p++, digits++)
		*addr = *addr << 4 | (uint64_t)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
	if (digits < 1 || digits > 16 || p[0] != ' ' || !p[1] || p[2] != ' ')
		return -1;
	if (!strchr("tTwW", p[1]))
		return 1;
	*name = p + 3;
	end = *name + strcspn(*name, " \t");
	if (end == *name || end - *name > MAX_NAME)
		return -1;
	*module = NULL;
	if (*end) {
		*end++ = '\0';
		end += strspn(end, " \t");
		if (*end) {
			size_t len = strlen(end);

			if (end[0] != '[' || len < 3 || end[len - 1] != ']' || len - 2 > MAX_NAME)
				return -1;
			end[len - 1] = '\0';
			*module = end + 1;
		}
	}
	return 0;
}

static int add_line(struct reader *r, char *line)
{
	struct tb_ksyms *k = r->k;
	uint64_t addr;
	char *name, *module;
	size_t len;

	int kind = parse_line(line, &addr, &name, &module);

	if (kind) {
		k->skipped += kind < 0;
		return 0;
	}
	r->text_lines++;
	if (!addr) {
		r->zero_lines++;
		return 0;
	}
	if (k->n >= TB_KSYMS_MAX)
		return -1;
	if (!module && strcmp(name, "_etext") == 0)
		k->kernel_end = addr;
	len = strlen(name) + 1;
	k->syms = tb_grow(k->syms, &k->cap, k->n + 1, sizeof(*k->syms), 65536);
	k->syms[k->n++] = (struct tb_ksym){ addr, (uint32_t)k->names.n,
					    module ? tb_strtab_intern(&k->modules, module) : 0 };
	tb_buf_put(&k->names, name, len);
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct tb_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;   /* file order */
}

static int fail(char *err, size_t errlen, const char *path, const char *what)
{
	snprintf(err, errlen, "%s: %s", path, what);
	return -1;
}

/* The line of used bytes (overlong: it had more) ends. */
static int end_line(struct reader *r, char *line, size_t used, int overlong)
{
	line[used] = '\0';
	if (overlong) {
		r->k->skipped++;
		return 0;
	}
	return add_line(r, line);
}

/* Read path into k (empty); lines longer than TB_KSYMS_MAX_LINE are skipped. */
static int read_file(struct tb_ksyms *k, const char *path, char *err, size_t errlen)
{
	struct reader r = { .k = k };
	char line[TB_KSYMS_MAX_LINE + 1], *chunk = malloc(CHUNK);
	size_t used = 0, total = 0;
	int overlong = 0, fd = -1, rc = 0;
	uint32_t n = 0;
	struct stat st;

	if (!chunk)
		return fail(err, errlen, path, "out of memory");
	/* looked at first (O_PATH), opened for reading only if a regular file */
	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		rc = fail(err, errlen, path, strerror(errno));
	else if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		rc = fail(err, errlen, path, "not a regular file");
	if (fd >= 0) {
		char self[64];
		int pathfd = fd;

		snprintf(self, sizeof(self), "/proc/self/fd/%d", pathfd);
		fd = rc ? -1 : open(self, O_RDONLY | O_CLOEXEC);
		close(pathfd);
		if (fd < 0 && !rc)
			rc = fail(err, errlen, path, strerror(errno));
	}
	while (!rc) {
		ssize_t got = read(fd, chunk, CHUNK);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = fail(err, errlen, path, strerror(errno));
		} else if ((total += (size_t)got) > TB_KSYMS_MAX_BYTES) {
			rc = fail(err, errlen, path, "larger than 256 MiB");
		} else if (got == 0) {
			if ((used || overlong) && end_line(&r, line, used, overlong))
				rc = fail(err, errlen, path, "more than 4 M text symbols");
			break;
		}
		for (ssize_t i = 0; !rc && i < got; i++) {
			if (chunk[i] != '\n') {
				if (used < TB_KSYMS_MAX_LINE)
					line[used++] = chunk[i];
				else
					overlong = 1;
				continue;
			}
			if (end_line(&r, line, used, overlong))
				rc = fail(err, errlen, path, "more than 4 M text symbols");
			used = 0;
			overlong = 0;
		}
	}
	if (fd >= 0)
		close(fd);
	free(chunk);
	if (rc)
		return rc;
	k->hidden = r.text_lines && r.zero_lines == r.text_lines;
	tb_qsort(k->syms, k->n, sizeof(*k->syms), cmp_sym);
	for (uint32_t i = 0; i < k->n; i++)   /* one symbol per address: the first listed */
		if (!n || k->syms[n - 1].addr != k->syms[i].addr)
			k->syms[n++] = k->syms[i];
	k->n = n;
	return 0;
}

static void release(struct tb_ksyms *k)
{
	free(k->syms);
	free(k->names.d);
	tb_strtab_free(&k->modules);
}

int tb_ksyms_load(struct tb_ksyms *k, const char *path, char *err, size_t errlen)
{
	memset(k, 0, sizeof(*k));
	k->path = strdup(path ? path : TB_KSYMS_PATH);
	k->reload_ns = TB_KSYMS_RELOAD_NS;
	k->kernel_end = UINT64_MAX;
	tb_strtab_init(&k->modules);
	k->loaded_ns = now_ns();
	if (!k->path || read_file(k, k->path, err, errlen)) {
		tb_ksyms_free(k);
		return -1;
	}
	return 0;
}

void tb_ksyms_free(struct tb_ksyms *k)
{
	release(k);
	free(k->path);
	memset(k, 0, sizeof(*k));
}

/* Read the file again; the old table stays if that fails or shows nothing. */
static void reload(struct tb_ksyms *k)
{
	struct tb_ksyms fresh;
	char err[256];

	memset(&fresh, 0, sizeof(fresh));
	fresh.kernel_end = UINT64_MAX;
	tb_strtab_init(&fresh.modules);
	k->loaded_ns = now_ns();
	k->reloads++;
	if (read_file(&fresh, k->path, err, sizeof(err)) || fresh.hidden || !fresh.n) {
		release(&fresh);
		return;
	}
	release(k);
	k->syms = fresh.syms;
	k->n = fresh.n;
	k->cap = fresh.cap;
	k->names = fresh.names;
	k->modules = fresh.modules;
	k->kernel_end = fresh.kernel_end;
	k->skipped = fresh.skipped;
}

static const struct tb_ksym *find(const struct tb_ksyms *k, uint64_t a)
{
	uint32_t lo = 0, hi = k->n;

	while (lo < hi) {          /* first symbol above a */
		uint32_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* below _etext the kernel's symbols tile the text; above it a symbol
	 * covers a bounded span (the next module may not be read yet) */
	if (a >= k->kernel_end && a - k->syms[lo - 1].addr >= TB_KSYMS_MAX_MODULE_SPAN)
		return NULL;
	return &k->syms[lo - 1];
}

const char *tb_ksyms_lookup(struct tb_ksyms *k, uint64_t addr, int is_ra, uint64_t *off,
			    const char **module)
{
	uint64_t a = addr - (is_ra ? 1 : 0);
	const struct tb_ksym *s = find(k, a);

	if (!s && a >= k->kernel_end && now_ns() - k->loaded_ns >= k->reload_ns) {
		reload(k);
		s = find(k, a);
	}
	if (!s)
		return NULL;
	if (off)
		*off = addr - s->addr;
	if (module)
		*module = tb_str(&k->modules, s->module);
	return (const char *)k->names.d + s->name;
}
