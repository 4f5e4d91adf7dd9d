/* format.c: the table of output formats (extension, writers, help line) and
 * what is derived from it: the lookup by extension, the writes to a path
 * (through tb_write_atomic), the lists and help lines of the usage texts. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "out/diff.h"
#include "out/format.h"
#include "out/tbp.h"

static int diff_folded(const struct tb_profile *base, const struct tb_profile *cur,
		       const struct tb_diff_opts *o, FILE *f)
{
	(void)o;
	return tb_write_diff_folded(base, cur, f);
}

/* The order is the order of the lists and help texts. */
static const struct tb_format formats[] = {
	{ ".html", NULL, TB_SYNTAX_HTML, 0, tb_write_html, tb_write_diff_html,
	  "flame graph page (self-contained)",
	  "flame graph page in diff mode" },
	{ ".json", NULL, TB_SYNTAX_JSON, 0, tb_write_tree_json, tb_write_diff_json,
	  "call tree (docs/profile-json.md)",
	  "diff tree (docs/diff-json.md)" },
	{ ".folded", ".collapsed", TB_SYNTAX_LINES, 0, tb_write_folded, diff_folded,
	  "collapsed stacks (flamegraph.pl)",
	  "`stack base cur` (difffolded.pl)" },
	{ ".speedscope.json", NULL, TB_SYNTAX_JSON, 0, tb_write_speedscope, NULL,
	  "speedscope, a profile per thread", NULL },
	{ ".pb.gz", NULL, TB_SYNTAX_GZIP, 0, tb_write_pprof, NULL,
	  "pprof (Pyroscope, go tool pprof)", NULL },
	{ ".tbp", NULL, TB_SYNTAX_CAPTURE, 0, tb_write_capture, NULL,
	  "capture file: `render` it later", NULL },
	{ ".heatmap.html", NULL, TB_SYNTAX_HTML, 1, tb_write_heatmap_html, NULL,
	  "source heatmap page", NULL },
	{ ".heatmap.json", NULL, TB_SYNTAX_JSON, 1, tb_write_heatmap_json, NULL,
	  "heatmap (docs/heatmap-json.md)", NULL },
	{ ".gecko.json", NULL, TB_SYNTAX_JSON, 0, tb_write_gecko, NULL,
	  "Firefox Profiler", NULL },
	{ ".jsonl", NULL, TB_SYNTAX_JSONL, 0, tb_write_jsonl, NULL,
	  "JSON Lines (docs/jsonl-format.md)", NULL },
	{ ".txt", NULL, TB_SYNTAX_LINES, 0, tb_write_pstats, NULL,
	  "function table (--sort, --limit)", NULL },
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

const struct tb_format *tb_format_at(size_t i)
{
	return i < NFORMATS ? &formats[i] : NULL;
}

static int usable(const struct tb_format *fm, enum tb_format_use use)
{
	return use == TB_USE_DIFF ? fm->write_diff != NULL : fm->write != NULL;
}

/* Length of ext if path ends with it after at least one character, else 0. */
static size_t suffix_len(const char *path, size_t len, const char *ext)
{
	size_t el = ext ? strlen(ext) : 0;

	return el && len > el && strcmp(path + len - el, ext) == 0 ? el : 0;
}

const struct tb_format *tb_format_find(const char *path)
{
	const struct tb_format *best = NULL;
	size_t len = strlen(path), best_len = 0;

	for (size_t i = 0; i < NFORMATS; i++) {
		size_t a = suffix_len(path, len, formats[i].ext);
		size_t b = suffix_len(path, len, formats[i].alias);
		size_t el = a > b ? a : b;

		if (el > best_len) {
			best = &formats[i];
			best_len = el;
		}
	}
	return best;
}

void tb_formats_list(char *buf, size_t len, enum tb_format_use use)
{
	size_t pos = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < NFORMATS; i++) {
		const char *ext[2] = { formats[i].ext, formats[i].alias };

		for (int k = 0; k < 2 && usable(&formats[i], use); k++) {
			int n;

			if (!ext[k])
				continue;
			n = snprintf(buf + pos, len - pos, "%s%s", pos ? ", " : "", ext[k]);
			if (n < 0 || (size_t)n >= len - pos)
				return; /* cut short, still terminated */
			pos += (size_t)n;
		}
	}
}

const struct tb_format *tb_output_format(const char *path, enum tb_format_use use, char *err,
					 size_t errlen)
{
	const struct tb_format *fm = tb_format_find(path);
	char list[512];

	if (fm && usable(fm, use))
		return fm;
	tb_formats_list(list, sizeof(list), use);
	snprintf(err, errlen, "%s: unknown %soutput format (supported: %s)", path,
		 use == TB_USE_DIFF ? "diff " : "", list);
	return NULL;
}

int tb_output_supported(const char *path)
{
	const struct tb_format *fm = tb_format_find(path);

	return fm && usable(fm, TB_USE_PROFILE);
}

int tb_output_needs_sources(const char *path)
{
	const struct tb_format *fm = tb_format_find(path);

	return fm && fm->needs_sources;
}

void tb_formats_print(FILE *f, enum tb_format_use use)
{
	for (size_t i = 0; i < NFORMATS; i++) {
		if (!usable(&formats[i], use))
			continue;
		fprintf(f, "%s\n", formats[i].ext);
		if (formats[i].alias)
			fprintf(f, "%s\n", formats[i].alias);
	}
}

void tb_formats_help(FILE *f, enum tb_format_use use, const char *indent)
{
	for (size_t i = 0; i < NFORMATS; i++) {
		const struct tb_format *fm = &formats[i];
		char exts[64];

		if (!usable(fm, use))
			continue;
		snprintf(exts, sizeof(exts), "%s%s%s", fm->ext, fm->alias ? " " : "",
			 fm->alias ? fm->alias : "");
		fprintf(f, "%s%-18s %s\n", indent, exts, use == TB_USE_DIFF ? fm->diff_help : fm->help);
	}
}

struct job {
	const struct tb_format *fm;
	const struct tb_profile *p, *base;
	const struct tb_diff_opts *o;
};

static int run_job(const void *ctx, FILE *f)
{
	const struct job *j = ctx;

	return j->base ? j->fm->write_diff(j->base, j->p, j->o, f) : j->fm->write(j->p, f);
}

int tb_write_output(const struct tb_profile *p, const char *path, char *err, size_t errlen)
{
	struct job j = { tb_output_format(path, TB_USE_PROFILE, err, errlen), p, NULL, NULL };

	if (!j.fm)
		return -1;
	return tb_write_atomic(path, run_job, &j, err, errlen);
}

int tb_write_diff_output(const struct tb_profile *base, const struct tb_profile *cur,
			 const struct tb_diff_opts *o, const char *path, char *err, size_t errlen)
{
	struct job j = { tb_output_format(path, TB_USE_DIFF, err, errlen), cur, base, o };

	if (!j.fm)
		return -1;
	return tb_write_atomic(path, run_job, &j, err, errlen);
}
