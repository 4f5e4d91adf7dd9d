/* format.h: the output formats, one table (format.c) that the commands, their
 * usage texts, the tests and the fuzzer all take the list from; the
 * writers' declarations. */
#ifndef TB_OUTPUT_H
#define TB_OUTPUT_H
#include <stddef.h>
#include <stdio.h>
#include "model/profile.h"
#include "output/atomic.h"

struct tb_diff_opts;

/* What an output is written from: one profile, or a pair (`diff`). */
enum tb_format_use { TB_USE_PROFILE, TB_USE_DIFF };

/* What an output is, for the checks of the tests (tests/unit/test_writers.c):
 * lines of text; lines ending in counts ("a;b;c 5"); one JSON document; JSON
 * Lines; an HTML page with its data embedded; gzip'ed protobuf; a capture. */
enum tb_syntax { TB_SYNTAX_TEXT, TB_SYNTAX_FOLDED, TB_SYNTAX_JSON, TB_SYNTAX_JSONL, TB_SYNTAX_HTML,
		 TB_SYNTAX_PROTO_GZ, TB_SYNTAX_CAPTURE };

struct tb_format {
	const char *ext;      /* ".speedscope.json" */
	enum tb_syntax syntax;
	int needs_sources;    /* the sources must be read at capture time */
	int (*write)(const struct tb_profile *p, FILE *f);
	/* the differential form (`diff`), or NULL */
	int (*write_diff)(const struct tb_profile *base, const struct tb_profile *cur,
			  const struct tb_diff_opts *o, FILE *f);
	/* the line of the usage texts (34 characters at most), for write and write_diff */
	const char *help, *diff_help;
};

/* The rows in order, i from 0; NULL past the last. */
const struct tb_format *tb_format_at(size_t i);
/* The row of path's extension (the longest one that matches: .speedscope.json
 * over .json), whatever its uses; NULL if none. */
const struct tb_format *tb_format_find(const char *path);
/* The row to write path for this use, or NULL with one sentence in err
 * ("PATH: unknown output format (supported: ...)"). */
const struct tb_format *tb_output_format(const char *path, enum tb_format_use use, char *err,
					 size_t errlen);
/* Can we write path from a profile? Does it need the sources read during the capture? */
int tb_output_supported(const char *path);
int tb_output_needs_sources(const char *path);

/* Write p (or the diff of base and cur) to path through tb_write_atomic,
 * format from the extension. 0 ok; -1 with err set (TB_ATOMIC_KEPT: written
 * under another name, which err gives). */
int tb_write_output(const struct tb_profile *p, const char *path, char *err, size_t errlen);
int tb_write_diff_output(const struct tb_profile *base, const struct tb_profile *cur,
			 const struct tb_diff_opts *o, const char *path, char *err, size_t errlen);
/* Around the outputs of one run of p (p unchanged in between): the call
 * tree is built once, by the first writer that needs it, for all of them
 * (tree_json.c), and freed by tb_outputs_end. */
void tb_outputs_begin(const struct tb_profile *p);
void tb_outputs_end(void);

/* For usage texts and messages: one extension a line (--list-formats); the
 * help lines, each after indent; the extensions as ".a, .b, .c" in buf. */
void tb_formats_print(FILE *f, enum tb_format_use use);
void tb_formats_help(FILE *f, enum tb_format_use use, const char *indent);
void tb_formats_list(char *buf, size_t len, enum tb_format_use use);

/* The writers (one file each). */
/* Collapsed stacks (flamegraph.pl / speedscope): root first, "a;b;c N". */
int tb_write_folded(const struct tb_profile *p, FILE *f);
/* Tree JSON (docs/profile-json.md). */
int tb_write_tree_json(const struct tb_profile *p, FILE *f);
/* Self-contained flame graph page. */
int tb_write_html(const struct tb_profile *p, FILE *f);
/* The page's preview (page.c): the tree JSON of the nodes its first view can
 * draw, when the tree has too many nodes for a first view within a second;
 * nothing otherwise. */
int tb_write_tree_preview_json(const struct tb_profile *p, FILE *f);
/* speedscope JSON, one sampled profile per thread (.speedscope.json). */
int tb_write_speedscope(const struct tb_profile *p, FILE *f);
/* gzip-compressed pprof profile.proto (.pb.gz). */
int tb_write_pprof(const struct tb_profile *p, FILE *f);
/* Firefox Profiler processed profile (.gecko.json). */
int tb_write_gecko(const struct tb_profile *p, FILE *f);
/* JSON Lines, definitions before use (docs/jsonl-format.md). */
int tb_write_jsonl(const struct tb_profile *p, FILE *f);
/* pstats-style text table, p->sort_key order, p->limit rows (.txt). */
int tb_write_pstats(const struct tb_profile *p, FILE *f);
/* --sort name (own, total, name) -> sort_key, -1 if unknown. */
int tb_pstats_sort_key(const char *name);
/* Source heatmap data (docs/heatmap-json.md) and page. */
int tb_write_heatmap_json(const struct tb_profile *p, FILE *f);
int tb_write_heatmap_html(const struct tb_profile *p, FILE *f);
/* End-of-capture summary for stderr. */
void tb_write_summary(const struct tb_profile *p, FILE *f, unsigned top);
/* Fewer samples with Python frames than this: the summary, render and the
 * page warn that the shares mean little. */
#define TB_FEW_SAMPLES 50
/* That warning, one line (nothing when there are enough samples). */
void tb_few_samples_warning(const struct tb_profile *p, FILE *f);

#endif
