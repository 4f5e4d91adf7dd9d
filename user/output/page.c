/* page.c: the page writers (flame graph, heatmap).  The page template is embedded in
 * the binary (assets.S); the tree JSON is zlib-compressed, base64-encoded
 * (streamed: deflated as it is written) and put in place of @@TB_DATA@@, so the page is one self-contained file
 * that the browser inflates with DecompressionStream.  A big tree's page also
 * has a preview in place of @@TB_PREVIEW@@ (before the page's script, the data
 * after it; JSON as it is, read without waiting for an inflate): the nodes its
 * first view draws, shown while the rest loads. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "output/diff.h"
#include "output/format.h"

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

/* The JSON goes through deflate straight into the base64 text of the page,
 * a buffer at a time (never the whole JSON in memory): the same bytes as
 * compress2 (level ZLEVEL) of all of it, then base64 of that.  Level 4, not
 * zlib's default 6: the tree JSON's number columns make long match chains;
 * on the 29.6 MB of 100k unique stacks 6 takes 1.48 s for a 6.8 MB page, 5
 * 0.73 s for 7.1 MB, 4 0.35 s for 7.3 MB (bench/big-results.md). */
#define ZLEVEL 4
typedef int (*json_fn)(const void *ctx, FILE *f);

#define ZCHUNK (3 * 16384) /* a multiple of 3: its base64 has no padding */

struct zstream {
	z_stream z;
	FILE *out;
	unsigned char buf[ZCHUNK];
	int failed;
};

/* Deflate len bytes (flush: Z_NO_FLUSH or Z_FINISH), writing each full buffer as base64. */
static int zpush(struct zstream *zs, const char *d, size_t len, int flush)
{
	zs->z.next_in = (Bytef *)d;
	zs->z.avail_in = (uInt)len;
	for (;;) {
		int rc = deflate(&zs->z, flush);

		if (rc == Z_STREAM_ERROR)
			return -1;
		if (!zs->z.avail_out) {
			write_base64(zs->out, zs->buf, ZCHUNK);
			zs->z.next_out = zs->buf;
			zs->z.avail_out = ZCHUNK;
			continue;
		}
		if (flush == Z_FINISH ? rc == Z_STREAM_END : !zs->z.avail_in)
			return 0;
	}
}

static ssize_t zwrite(void *cookie, const char *d, size_t len)
{
	struct zstream *zs = cookie;

	for (size_t off = 0; off < len && !zs->failed;) { /* avail_in is a uInt */
		size_t n = len - off < (1u << 30) ? len - off : (1u << 30);

		zs->failed = zpush(zs, d + off, n, Z_NO_FLUSH) != 0;
		off += n;
	}
	return zs->failed ? -1 : (ssize_t)len;
}

static int write_compressed_json(FILE *out, const void *ctx, json_fn writer)
{
	static const cookie_io_functions_t io = { .write = zwrite };
	struct zstream *zs = calloc(1, sizeof(*zs));
	FILE *m;
	int rc = -1;

	if (!zs)
		return -1;
	zs->out = out;
	zs->z.next_out = zs->buf;
	zs->z.avail_out = ZCHUNK;
	if (deflateInit(&zs->z, ZLEVEL) != Z_OK) {
		free(zs);
		return -1;
	}
	m = fopencookie(zs, "w", io);
	if (m) {
		rc = writer(ctx, m);
		rc |= fclose(m) ? -1 : 0; /* flushes the last of the JSON into deflate */
		if (!rc && !zs->failed && !zs->z.total_in)
			; /* nothing written: nothing in the page either */
		else if (!rc && !zs->failed && !zpush(zs, NULL, 0, Z_FINISH))
			write_base64(out, zs->buf, ZCHUNK - zs->z.avail_out);
		else
			rc = -1;
	}
	deflateEnd(&zs->z);
	free(zs);
	return rc;
}

static void title(const struct tb_profile *p, char *buf, size_t len)
{
	if (p->nprocs == 1)
		snprintf(buf, len, "tachyon-bpf: %s (pid %d)", tb_str(&p->pstrs, p->procs[0].cmdline),
			 (int)p->procs[0].pid);
	else
		snprintf(buf, len, "tachyon-bpf: %u Python processes", p->nprocs);
}

/* The template with its placeholders filled: the title, the preview (where
 * the template has one: the flame graph's; as it is, JSON without a '<';
 * preview NULL: empty) and the data. */
static int write_page(const char *title_text, FILE *f, const char *tpl, const char *end,
		      json_fn json, json_fn preview, const void *ctx)
{
	const char *ttl = strstr(tpl, "@@TB_TITLE@@"), *pv = strstr(tpl, "@@TB_PREVIEW@@");
	const char *data = strstr(tpl, "@@TB_DATA@@");

	if (!data || !ttl || ttl > data || data > end || (pv && (pv < ttl || pv > data)))
		return -1;
	fwrite(tpl, 1, (size_t)(ttl - tpl), f);
	write_html_escaped(f, title_text);
	tpl = ttl + strlen("@@TB_TITLE@@");
	if (pv) {
		fwrite(tpl, 1, (size_t)(pv - tpl), f);
		if (preview && preview(ctx, f))
			return -1;
		tpl = pv + strlen("@@TB_PREVIEW@@");
	}
	fwrite(tpl, 1, (size_t)(data - tpl), f);
	if (write_compressed_json(f, ctx, json))
		return -1;
	tpl = data + strlen("@@TB_DATA@@");
	fwrite(tpl, 1, (size_t)(end - tpl), f);
	return ferror(f) ? -1 : 0;
}

static int tree_json(const void *p, FILE *f)
{
	return tb_write_tree_json(p, f);
}

static int tree_preview_json(const void *p, FILE *f)
{
	return tb_write_tree_preview_json(p, f);
}

static int heatmap_json(const void *p, FILE *f)
{
	return tb_write_heatmap_json(p, f);
}

int tb_write_html(const struct tb_profile *p, FILE *f)
{
	char t[512];

	title(p, t, sizeof(t));
	return write_page(t, f, tb_flamegraph_html, tb_flamegraph_html_end, tree_json, tree_preview_json, p);
}

int tb_write_heatmap_html(const struct tb_profile *p, FILE *f)
{
	char t[512];

	title(p, t, sizeof(t));
	return write_page(t, f, tb_heatmap_html, tb_heatmap_html_end, heatmap_json, NULL, p);
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
	return write_page(t, f, tb_flamegraph_html, tb_flamegraph_html_end, diff_json, NULL, &a);
}
