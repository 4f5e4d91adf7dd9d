/* output.h: the output writers, chosen by file extension. */
#ifndef TB_OUTPUT_H
#define TB_OUTPUT_H
#include <stdio.h>
#include "model/profile.h"
#include "out/atomic.h"

/* Write p to path, format from the extension. 0 ok; -1 with err set. */
int tb_write_output(const struct tb_profile *p, const char *path, char *err, size_t errlen);
/* Is the extension of path one we can write? */
int tb_output_supported(const char *path);
/* Collapsed stacks (flamegraph.pl / speedscope): root first, "a;b;c N". */
int tb_write_folded(const struct tb_profile *p, FILE *f);
/* Tree JSON (docs/profile-json.md). */
int tb_write_tree_json(const struct tb_profile *p, FILE *f);
/* Self-contained flame graph page. */
int tb_write_html(const struct tb_profile *p, FILE *f);
/* speedscope JSON, one sampled profile per thread (.speedscope.json). */
int tb_write_speedscope(const struct tb_profile *p, FILE *f);
/* gzip-compressed pprof profile.proto (.pb.gz). */
int tb_write_pprof(const struct tb_profile *p, FILE *f);
/* The extensions tb_write_output knows, for messages. */
#define TB_OUTPUT_FORMATS ".html, .json, .folded, .collapsed, .speedscope.json, .pb.gz, .tbp, " \
	".heatmap.html, .heatmap.json, .gecko.json, .jsonl, .txt"
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
/* Does this output need the sources read during the capture? */
int tb_output_needs_sources(const char *path);
/* End-of-capture summary for stderr. */
void tb_write_summary(const struct tb_profile *p, FILE *f, unsigned top);

#endif
