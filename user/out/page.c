/* page.c: the page writers (flame graph, heatmap).  The page template is embedded in
 * the binary (assets.S); the tree JSON is zlib-compressed, base64-encoded
 * and put in place of @@TB_DATA@@, so the page is one self-contained file
 * that the browser inflates with DecompressionStream. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "out/diff.h"
#include "out/format.h"

extern const char tb_flamegraph_html[];
extern const char tb_flamegraph_html_end[];
extern const char tb_heatmap_html[];
extern const char tb_heatmap_html_end[];

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void write_base64(FILE *f, const unsigned char *d, size_t n)
{
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16;
		char out[4];

		if (i + 1 < n)
			v |= (uint32_t)d[i + 1] << 8;
		if (i + 2 < n)
			v |= d[i + 2];
		out[0] = b64[(v >> 18) & 63];
		out[1] = b64[(v >> 12) & 63];
		out[2] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		out[3] = i + 2 < n ? b64[v & 63] : '=';
		fwrite(out, 1, 4, f);
	}
}

static void write_html_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
		}
	}
}

/* Render the JSON into memory and deflate it. */
typedef int (*json_fn)(const void *ctx, FILE *f);

static int compressed_json(const void *ctx, json_fn writer, unsigned char **out, size_t *outlen)
{
	char *json = NULL;
	size_t jlen = 0;
	FILE *m = open_memstream(&json, &jlen);
	uLongf clen;
	int rc;

	if (!m)
		return -1;
	rc = writer(ctx, m);
	if (fclose(m) || rc) {
		free(json);
		return -1;
	}
	clen = compressBound(jlen);
	*out = malloc(clen);
	if (!*out || compress2(*out, &clen, (const Bytef *)json, jlen, 6) != Z_OK) {
		free(json);
		free(*out);
		return -1;
	}
	free(json);
	*outlen = clen;
	return 0;
}

static void title(const struct tb_profile *p, char *buf, size_t len)
{
	if (p->nprocs == 1)
		snprintf(buf, len, "tachyon-bpf: %s (pid %d)", tb_str(&p->pstrs, p->procs[0].cmdline),
			 (int)p->procs[0].pid);
	else
		snprintf(buf, len, "tachyon-bpf: %u Python processes", p->nprocs);
}

static int write_page(const char *title_text, FILE *f, const char *tpl, const char *end,
		      json_fn json, const void *ctx)
{
	const char *data = strstr(tpl, "@@TB_DATA@@"), *ttl = strstr(tpl, "@@TB_TITLE@@");
	unsigned char *z;
	size_t zlen;

	if (!data || !ttl || ttl > data || data > end)
		return -1;
	if (compressed_json(ctx, json, &z, &zlen))
		return -1;
	fwrite(tpl, 1, (size_t)(ttl - tpl), f);
	write_html_escaped(f, title_text);
	tpl = ttl + strlen("@@TB_TITLE@@");
	fwrite(tpl, 1, (size_t)(data - tpl), f);
	write_base64(f, z, zlen);
	tpl = data + strlen("@@TB_DATA@@");
	fwrite(tpl, 1, (size_t)(end - tpl), f);
	free(z);
	return ferror(f) ? -1 : 0;
}

static int tree_json(const void *p, FILE *f)
{
	return tb_write_tree_json(p, f);
}

static int heatmap_json(const void *p, FILE *f)
{
	return tb_write_heatmap_json(p, f);
}

int tb_write_html(const struct tb_profile *p, FILE *f)
{
	char t[512];

	title(p, t, sizeof(t));
	return write_page(t, f, tb_flamegraph_html, tb_flamegraph_html_end, tree_json, p);
}

int tb_write_heatmap_html(const struct tb_profile *p, FILE *f)
{
	char t[512];

	title(p, t, sizeof(t));
	return write_page(t, f, tb_heatmap_html, tb_heatmap_html_end, heatmap_json, p);
}

struct diff_args {
	const struct tb_profile *base, *cur;
	const struct tb_diff_opts *o;
};

static int diff_json(const void *ctx, FILE *f)
{
	const struct diff_args *a = ctx;

	return tb_write_diff_json(a->base, a->cur, a->o, f);
}

int tb_write_diff_html(const struct tb_profile *base, const struct tb_profile *cur,
		       const struct tb_diff_opts *o, FILE *f)
{
	struct diff_args a = { base, cur, o };
	char t[512];

	snprintf(t, sizeof(t), "tachyon-bpf diff: %u vs %u Python samples",
		 (unsigned)base->python_samples, (unsigned)cur->python_samples);
	return write_page(t, f, tb_flamegraph_html, tb_flamegraph_html_end, diff_json, &a);
}
