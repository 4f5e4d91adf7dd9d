/* format.c: dispatches to a writer by extension, writing through
 * tb_write_atomic (atomic.c), so a failure leaves nothing half-written. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "out/tbp.h"
#include "out/format.h"

struct writer {
	const char *ext;
	int (*write)(const struct tb_profile *p, FILE *f);
};

static const struct writer writers[] = {
	{ ".folded", tb_write_folded },
	{ ".collapsed", tb_write_folded },
	{ ".json", tb_write_tree_json },
	{ ".html", tb_write_html },
	{ ".speedscope.json", tb_write_speedscope },
	{ ".pb.gz", tb_write_pprof },
	{ ".tbp", tb_write_capture },
	{ ".heatmap.json", tb_write_heatmap_json },
	{ ".heatmap.html", tb_write_heatmap_html },
	{ ".gecko.json", tb_write_gecko },
	{ ".jsonl", tb_write_jsonl },
	{ ".txt", tb_write_pstats },
};

/* The longest matching extension wins (.speedscope.json over .json). */
static const struct writer *find_writer(const char *path)
{
	const struct writer *best = NULL;
	size_t len = strlen(path);

	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++) {
		size_t el = strlen(writers[i].ext);

		if (len > el && strcmp(path + len - el, writers[i].ext) == 0 &&
		    (!best || el > strlen(best->ext)))
			best = &writers[i];
	}
	return best;
}

int tb_output_needs_sources(const char *path)
{
	const struct writer *w = find_writer(path);

	return w && (w->write == tb_write_heatmap_json || w->write == tb_write_heatmap_html);
}

int tb_output_supported(const char *path)
{
	return find_writer(path) != NULL;
}

struct profile_write {
	const struct writer *w;
	const struct tb_profile *p;
};

static int write_profile(const void *ctx, FILE *f)
{
	const struct profile_write *pw = ctx;

	return pw->w->write(pw->p, f);
}

int tb_write_output(const struct tb_profile *p, const char *path, char *err, size_t errlen)
{
	struct profile_write pw = { find_writer(path), p };

	if (!pw.w) {
		snprintf(err, errlen, "%s: unknown output format (supported: " TB_OUTPUT_FORMATS ")", path);
		return -1;
	}
	errno = 0;
	return tb_write_atomic(path, write_profile, &pw, err, errlen);
}
