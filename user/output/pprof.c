/* pprof.c: the pprof writer (`-o x.pb.gz`): a gzip-compressed
 * perftools.profiles.Profile (github.com/google/pprof proto/profile.proto)
 * encoded by hand.  One Function per (qualname, file, first line, kind), one
 * Location per (function, line), one Sample per unique stack, leaf first,
 * valued [samples, cpu (wall mode: wall) nanoseconds] and labelled with its
 * thread and process.  Native and kernel functions have their module as
 * file name, and their locations a Mapping per module ("[kernel]",
 * "libz.so.1"'s path) that says it has functions. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "lib/hashmap.h"
#include "lib/mem.h"
#include "lib/utf8.h"
#include "model/functab.h"
#include "output/format.h"

#define MARK_TRUNCATED UINT32_MAX      /* qualname of the marker functions */
#define MARK_PARTIAL (UINT32_MAX - 1)

/* Profile field numbers */
enum { P_SAMPLE_TYPE = 1, P_SAMPLE, P_MAPPING, P_LOCATION, P_FUNCTION, P_STRING_TABLE,
       P_TIME_NANOS = 9, P_DURATION_NANOS, P_PERIOD_TYPE, P_PERIOD, P_COMMENT, P_DEFAULT_SAMPLE_TYPE };


struct locs {           /* (function index, line) -> location id */
	uint64_t *keys;
	uint32_t n, cap;
	struct tb_hmap index;
};

static void varint(struct tb_buf *b, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;

	do {
		t[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	tb_buf_put(b, t, n);
}

static void field_int(struct tb_buf *b, unsigned field, uint64_t v)
{
	varint(b, (uint64_t)field << 3);
	varint(b, v);
}

static void field_bytes(struct tb_buf *b, unsigned field, const void *d, size_t len)
{
	varint(b, ((uint64_t)field << 3) | 2);
	varint(b, len);
	tb_buf_put(b, d, len);
}

/* a nested message: its encoding in m, then m is emptied */
static void field_msg(struct tb_buf *b, unsigned field, struct tb_buf *m)
{
	field_bytes(b, field, m->d, m->n);
	m->n = 0;
}

static uint32_t loc_id(struct locs *t, uint32_t func, int32_t line, int *is_new)
{
	const uint64_t key = ((uint64_t)func << 32) | (uint32_t)line;
	uint32_t i = tb_hmap_intern_key(&t->index, t->keys, sizeof(*t->keys), &key, sizeof(key), t->n);

	*is_new = i == t->n;
	if (*is_new) {
		t->keys = tb_grow(t->keys, &t->cap, t->n + 1, sizeof(*t->keys), 256);
		t->keys[t->n++] = key;
	}
	return i + 1; /* ids start at 1 */
}

struct ctx {
	const struct tb_profile *p;
	struct tb_strtab strs;     /* the profile's string_table; id 0 is "" */
	struct tb_functab funcs;
	struct locs locs;
	struct tb_buf locations, m;
	struct tb_strtab modules;  /* native and kernel modules: Mapping id = index */
	int64_t period;
};

static uint64_t s(struct ctx *c, const char *str)
{
	return tb_strtab_intern(&c->strs, str);
}

/* Location id of a frame (or marker), emitting the Location when new. */
static uint64_t frame_location(struct ctx *c, const struct tb_code *code, int32_t line)
{
	uint32_t fi = tb_functab_index(&c->funcs, code);
	int is_new;
	uint32_t id = loc_id(&c->locs, fi, line, &is_new);

	if (is_new) {
		struct tb_buf l = { 0 };

		field_int(&l, 1, fi + 1);            /* Line.function_id */
		field_int(&l, 2, (uint64_t)(int64_t)line);
		field_int(&c->m, 1, id);             /* Location.id */
		if (code->kind != TB_CODE_PYTHON)   /* Location.mapping_id */
			field_int(&c->m, 2, tb_strtab_intern(&c->modules,
							     tb_str(&c->p->strs, code->filename)));
		field_msg(&c->m, 4, &l);             /* Location.line */
		field_msg(&c->locations, P_LOCATION, &c->m);
		free(l.d);
	}
	return id;
}

static void label(struct tb_buf *b, struct tb_buf *tmp, uint64_t key, int is_str, uint64_t v)
{
	field_int(tmp, 1, key);
	field_int(tmp, is_str ? 2 : 3, v);
	field_msg(b, 3, tmp);
}

static void add_sample(struct ctx *c, struct tb_buf *out, const struct tb_stack *st)
{
	const struct tb_profile *p = c->p;
	const struct tb_sframe *f = tb_stack_frames(p, st);
	const struct tb_tinfo *t = &p->threads[st->thread];
	int pi = tb_profile_find_process(p, t->pid);
	struct tb_buf ids = { 0 }, vals = { 0 }, sm = { 0 }, tmp = { 0 };
	uint64_t thread_name, process;

	for (uint16_t i = 0; i < st->depth; i++) {
		const struct tb_code *code = &p->sym.codes[f[i].code];
		struct tb_location loc;

		tb_sym_location(&p->sym, f[i].code, f[i].offset, &loc);
		varint(&ids, frame_location(c, code, loc.line >= 0 ? loc.line : code->firstlineno));
	}
	if (st->kind & TB_SK_PARTIAL) {
		struct tb_code m = { .qualname = MARK_PARTIAL };

		varint(&ids, frame_location(c, &m, 0));
	}
	if (st->kind & TB_SK_TRUNCATED) {
		struct tb_code m = { .qualname = MARK_TRUNCATED };

		varint(&ids, frame_location(c, &m, 0));
	}
	varint(&vals, st->count);
	varint(&vals, st->count * (uint64_t)c->period);
	field_bytes(&sm, 1, ids.d, ids.n);   /* Sample.location_id, packed */
	field_bytes(&sm, 2, vals.d, vals.n); /* Sample.value, packed */
	/* each label's value interned before its key, in statements: as arguments
	 * the order is the compiler's (x86-64's gcc went right to left, arm64's
	 * left to right) and the string table's ids would differ */
	thread_name = s(c, tb_str(&p->strs, t->name));
	label(&sm, &tmp, s(c, "thread"), 1, thread_name);
	label(&sm, &tmp, s(c, "thread_id"), 0, t->tid);
	label(&sm, &tmp, s(c, "pid"), 0, t->pid);
	process = s(c, pi >= 0 ? tb_str(&p->pstrs, p->procs[pi].comm) : "?");
	label(&sm, &tmp, s(c, "process"), 1, process);
	field_msg(out, P_SAMPLE, &sm);
	free(ids.d);
	free(vals.d);
	free(sm.d);
	free(tmp.d);
}

static void value_type(struct ctx *c, struct tb_buf *out, unsigned field, const char *type,
		       const char *unit)
{
	field_int(&c->m, 1, s(c, type));
	field_int(&c->m, 2, s(c, unit));
	field_msg(out, field, &c->m);
}

/* One Mapping per module of native and kernel functions (ids from 1). */
static void mappings(struct ctx *c, struct tb_buf *out)
{
	for (uint32_t i = 1; i < c->modules.n; i++) {
		field_int(&c->m, 1, i);                         /* Mapping.id */
		field_int(&c->m, 5, s(c, c->modules.strs[i]));  /* Mapping.filename */
		field_int(&c->m, 7, 1);                         /* Mapping.has_functions */
		field_msg(out, P_MAPPING, &c->m);
	}
}

static void functions(struct ctx *c, struct tb_buf *out)
{
	for (uint32_t i = 0; i < c->funcs.n; i++) {
		const struct tb_func *fn = &c->funcs.f[i];
		uint64_t name = fn->qualname == MARK_TRUNCATED ? s(c, "<truncated>") :
				fn->qualname == MARK_PARTIAL ? s(c, "<partial stack>") :
				s(c, tb_str(&c->p->strs, fn->qualname));

		field_int(&c->m, 1, i + 1);
		field_int(&c->m, 2, name);
		field_int(&c->m, 3, name);
		field_int(&c->m, 4, s(c, tb_str(&c->p->strs, fn->filename)));
		field_int(&c->m, 5, (uint64_t)(int64_t)fn->firstlineno);
		field_msg(out, P_FUNCTION, &c->m);
	}
}

/* A string_table entry, invalid UTF-8 bytes replaced by U+FFFD (protobuf
 * strings must be UTF-8; names come from the targets). */
static void string_entry(struct tb_buf *out, struct tb_buf *tmp, const char *str)
{
	const unsigned char *u = (const unsigned char *)str;

	tmp->n = 0;
	while (*u) {
		int n = tb_utf8_len_z(u);

		if (n)
			tb_buf_put(tmp, u, (size_t)n);
		else
			tb_buf_put(tmp, TB_UTF8_REPLACEMENT, sizeof(TB_UTF8_REPLACEMENT) - 1);
		u += n ? n : 1;
	}
	field_bytes(out, P_STRING_TABLE, tmp->d, tmp->n);
}

static int gzip_out(const struct tb_buf *b, FILE *f)
{
	unsigned char chunk[65536];
	size_t off = 0;
	z_stream z;
	int zrc, rc = 0;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	do {
		if (!z.avail_in && off < b->n) {
			size_t n = b->n - off < (1u << 30) ? b->n - off : (1u << 30);

			z.next_in = b->d + off;
			z.avail_in = (uInt)n;
			off += n;
		}
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zrc = deflate(&z, off == b->n ? Z_FINISH : Z_NO_FLUSH);
		if (zrc == Z_STREAM_ERROR ||
		    fwrite(chunk, 1, sizeof(chunk) - z.avail_out, f) != sizeof(chunk) - z.avail_out) {
			rc = -1;
			break;
		}
	} while (zrc != Z_STREAM_END);
	deflateEnd(&z);
	return rc;
}

int tb_write_pprof(const struct tb_profile *p, FILE *f)
{
	struct ctx c = { .p = p };
	struct tb_buf out = { 0 }, samples = { 0 };
	/* wall mode weighs off-CPU time too */
	const char *measure = p->mode == TB_MODE_WALL ? "wall" : "cpu";
	int rc;

	tb_strtab_init(&c.strs);
	tb_strtab_init(&c.modules);
	c.period = p->hz ? (int64_t)(1e9 / p->hz + 0.5) : 0;
	value_type(&c, &out, P_SAMPLE_TYPE, "samples", "count");
	value_type(&c, &out, P_SAMPLE_TYPE, measure, "nanoseconds");
	for (uint32_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].count) /* wall mode: an off-CPU stack may have no weight yet */
			add_sample(&c, &samples, &p->stacks[i]);
	tb_buf_put(&out, samples.d, samples.n);
	mappings(&c, &out);
	tb_buf_put(&out, c.locations.d, c.locations.n);
	functions(&c, &out);
	field_int(&out, P_TIME_NANOS, (uint64_t)p->start_unix * 1000000000u);
	field_int(&out, P_DURATION_NANOS, p->duration_s > 0 && p->duration_s < 9e9 ?
		  (uint64_t)(p->duration_s * 1e9) : 0);
	value_type(&c, &out, P_PERIOD_TYPE, measure, "nanoseconds");
	field_int(&out, P_PERIOD, (uint64_t)c.period);
	field_int(&out, P_COMMENT, s(&c, "tachyon-bpf"));
	field_int(&out, P_DEFAULT_SAMPLE_TYPE, s(&c, measure));
	for (uint32_t i = 0; i < c.strs.n; i++) /* last: every string is interned by now */
		string_entry(&out, &c.m, c.strs.strs[i]);
	rc = gzip_out(&out, f);
	free(out.d);
	free(samples.d);
	free(c.locations.d);
	free(c.m.d);
	free(c.locs.keys);
	tb_hmap_free(&c.locs.index);
	tb_functab_free(&c.funcs);
	tb_strtab_free(&c.strs);
	tb_strtab_free(&c.modules);
	return rc || ferror(f) ? -1 : 0;
}
