/* format.c: the table of output formats (extension, writers, help line) and
 * what is derived from it: the lookup by extension, the writes to a path
 * (through tb_write_atomic), the lists and help lines of the usage texts. */
#include <stdio.h>
#include <string.h>
#include "output/diff.h"
#include "output/format.h"
#include "output/tbp.h"

static int diff_folded(const struct tb_profile *base, const struct tb_profile *cur,
		       const struct tb_diff_opts *o, FILE *f)
{
	(void)o;
	return tb_write_diff_folded(base, cur, f);
}

/* The order is the order of the lists and help texts. */
static const struct tb_format formats[] = {
	{ ".html", TB_SYNTAX_HTML, 0, tb_write_html, tb_write_diff_html,
	  "flame graph page (self-contained)",
	  "flame graph page in diff mode" },
	{ ".json", TB_SYNTAX_JSON, 0, tb_write_tree_json, tb_write_diff_json,
	  "call tree (docs/profile-json.md)",
	  "diff tree (docs/diff-json.md)" },
	{ ".folded", TB_SYNTAX_FOLDED, 0, tb_write_folded, diff_folded,
	  "collapsed stacks (flamegraph.pl)",
	  "`stack base cur` (difffolded.pl)" },
	{ ".collapsed", TB_SYNTAX_FOLDED, 0, tb_write_folded, NULL,
	  "the same as .folded", NULL },
	{ ".speedscope.json", TB_SYNTAX_JSON, 0, tb_write_speedscope, NULL,
	  "speedscope, a profile per thread", NULL },
	{ ".pb.gz", TB_SYNTAX_PROTO_GZ, 0, tb_write_pprof, NULL,
	  "pprof (Pyroscope, go tool pprof)", NULL },
	{ ".tbp", TB_SYNTAX_CAPTURE, 0, tb_write_capture, NULL,
	  "capture file: `render` it later", NULL },
	{ ".heatmap.html", TB_SYNTAX_HTML, 1, tb_write_heatmap_html, NULL,
	  "source heatmap page", NULL },
	{ ".heatmap.json", TB_SYNTAX_JSON, 1, tb_write_heatmap_json, NULL,
	  "heatmap (docs/heatmap-json.md)", NULL },
	{ ".gecko.json", TB_SYNTAX_JSON, 0, tb_write_gecko, NULL,
	  "Firefox Profiler", NULL },
	{ ".jsonl", TB_SYNTAX_JSONL, 0, tb_write_jsonl, NULL,
	  "JSON Lines (docs/jsonl-format.md)", NULL },
	{ ".txt", TB_SYNTAX_TEXT, 0, tb_write_pstats, NULL,
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

const struct tb_format *tb_format_find(const char *path)
{
	const struct tb_format *best = NULL;
	size_t len = strlen(path), best_len = 0;

	for (size_t i = 0; i < NFORMATS; i++) {
		size_t el = strlen(formats[i].ext);

		/* a name before the extension, and the longest extension wins */
		if (len > el && el > best_len && strcmp(path + len - el, formats[i].ext) == 0) {
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
		int n;

		if (!usable(&formats[i], use))
			continue;
		n = snprintf(buf + pos, len - pos, "%s%s", pos ? ", " : "", formats[i].ext);
		if (n < 0 || (size_t)n >= len - pos) {
			buf[pos] = '\0'; /* cut short after a whole extension */
			return;
		}
		pos += (size_t)n;
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
	for (size_t i = 0; i < NFORMATS; i++)
		if (usable(&formats[i], use))
			fprintf(f, "%s\n", formats[i].ext);
}

void tb_formats_help(FILE *f, enum tb_format_use use, const char *indent)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (usable(&formats[i], use))
			fprintf(f, "%s%-18s %s\n", indent, formats[i].ext,
				use == TB_USE_DIFF ? formats[i].diff_help : formats[i].help);
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
