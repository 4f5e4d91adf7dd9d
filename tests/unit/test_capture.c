/* test_capture.c: capture files: a synthetic profile written with
 * tb_write_capture and read back renders identically in every format (one
 * with native and kernel frames as version 2, one without as version 1), and
 * the reader refuses (cleanly, with one sentence) or survives every damaged
 * file: empty, bad magic, future version, each truncation, thousands of
 * seeded byte flips (of the file and of the decompressed payload), lying
 * sizes and counts, out-of-range indices, unterminated strings, version 2
 * fields in a version 1 file, native or kernel functions with a pid or
 * lines, stacks over the depth limit of their version. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>
#include "output/tbp.h"
#include "output/format.h"
#include "model/profile.h"
#include "helpers.h"
#include "../../bench/xorshift.h"   /* next_rand(): the generators' xorshift64 */
#include "output/tbp_io.h"
#include "output/tbp_sections.h"

#define PID 4242
#define FLIPS 3000

/* CPython 3.11 co_linetable of a 5-line function whose def is on line 3 */
static const unsigned char LT311[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x80, 0x41, 0xdd, 0x0d, 0x12, 0x90, 0x31, 0x89, 0x58, 0x8c, 0x58,
	0xf0, 0x00, 0x01, 0x05, 0x13, 0xf0, 0x00, 0x01, 0x05, 0x13, 0x88, 0x01, 0xd8, 0x08, 0x09, 0x88,
	0x51, 0x90, 0x11, 0x89, 0x55, 0x89, 0x0a, 0x88, 0x01, 0x88, 0x01, 0xd8, 0x0b, 0x0c, 0x80, 0x48,
};

struct bytes {
	unsigned char *d;
	size_t n;
};

static void add(struct tb_profile *p, uint32_t tid, uint16_t flags, int n, const uint64_t *codes,
		const int32_t *offsets, uint64_t count)
{
	struct tb_sample_hdr h;
	struct tb_frame f[4];

	memset(&h, 0, sizeof(h));
	memset(f, 0, sizeof(f));
	h.pid = PID;
	h.tid = tid;
	h.ns_tid = tid + 1000;
	h.ns_pid = 7;
	h.time_ns = 1000 + count;
	h.flags = flags;
	h.depth = (uint16_t)n;
	for (int i = 0; i < n; i++) {
		f[i].code = codes[i];
		f[i].code_id = (uint16_t)(codes[i] >> 12);
		f[i].offset = offsets ? offsets[i] : -2;
		f[i].opcode = (uint8_t)(0x40 + i);
		f[i].flags = i ? TB_FF_NO_OPCODE : 0;
	}
	th_send(p, &h, f, count);
}

/* A profile with every kind of content the format holds. */
static void build_profile(struct tb_profile *p)
{
	struct tb_target t;
	uint32_t dead;

	tb_profile_init(p);
	memset(&t, 0, sizeof(t));
	t.pid = PID;
	snprintf(t.comm, sizeof(t.comm), "python3.11");
	snprintf(t.cmdline, sizeof(t.cmdline), "python3.11 app.py \"quoted\"");
	snprintf(t.elf_path, sizeof(t.elf_path), "/usr/bin/python3.11");
	t.runtime_addr = 0x7f0000001000ull;
	t.pycode_type = 0x7f0000002000ull;
	assert_int_equal(tb_layout_builtin(0x030b02f0, &t.layout), 0);
	tb_profile_add_process(p, &t);
	t.pid = PID + 1; /* a second process without samples */
	t.shared_lib = 1;
	assert_int_equal(tb_layout_builtin(0x030a0cf0, &t.layout), 0);
	tb_profile_add_process(p, &t);
	p->hz = 99;
	p->max_depth = 128;
	p->duration_s = 2.5;
	p->start_unix = 1764410000;
	p->agent_cpu_s = 0.125;
	p->min_fraction = 0.001;
	p->by_line = 1;
	tb_sym_insert(&p->sym, PID, 0x1000, 1, 11, "main", "/app.py", 10, NULL, 0);
	tb_sym_insert(&p->sym, PID, 0x2000, 2, 11, "work", "/app.py", 3, LT311, sizeof(LT311));
	tb_sym_insert(&p->sym, PID, 0x3000, 3, 11, "K.o;t\"h\nr", "/lib/\xff x.py", 30, NULL, 0);
	/* an unresolved placeholder */
	dead = tb_sym_insert(&p->sym, PID, 0x4000, 4, 11, "<unreadable code 0x4000>", "<unknown>", 0,
			     NULL, 0);
	p->sym.codes[dead].resolved = 0;
	/* a forgotten code object whose address was reused: both stay */
	dead = tb_sym_insert(&p->sym, PID, 0x5000, 5, 11, "old", "/old.py", 50, NULL, 0);
	p->sym.codes[dead].dead = 1;
	tb_sym_insert(&p->sym, PID, 0x5000, 5, 11, "new", "/new.py", 51, NULL, 0);
	{
		const uint64_t a[] = { 0x2000, 0x1000 }, b[] = { 0x3000, 0x1000 };
		const uint64_t c[] = { 0x4000, 0x2000, 0x1000 }, d[] = { 0x5000, 0x1000 };
		const int32_t oa[] = { 46, 8 }, ob[] = { 58, 8 };

		add(p, 1, 0, 2, a, oa, 5);
		add(p, 1, 0, 2, a, ob, 3);
		add(p, 1, TB_F_TRUNCATED, 2, b, NULL, 2);
		add(p, 2, TB_F_READ_ERROR, 3, c, NULL, 4);
		add(p, 2, TB_F_TRUNCATED | TB_F_BAD_FRAME, 2, d, NULL, 1);
		add(p, 3, TB_F_NO_TSTATE, 0, NULL, NULL, 2);
	}
	p->sym.codes[dead].dead = 0; /* two live codes with one key: the reader keeps both */
	{ /* wall mode: an off-CPU stack whose weight has not come yet */
		const struct tb_sframe f = { 2, 10, 0, 0 };

		tb_profile_add_stack(p, 0, 0, &f, 1, 0);
	}
	p->lost = 17;
	p->malformed = 1;
	p->threads[0].ident = 0x7f0012345700ull;
	p->threads[1].gil_held = 3;
	p->threads[1].exception = 1;
	/* counts edited by hand have no time: a profile without a timeline,
	 * written as version 1 (test_timeline has one) */
	tb_timeline_free(&p->tl);
}

static char *render(int (*w)(const struct tb_profile *, FILE *), const struct tb_profile *p,
		    size_t *len)
{
	return th_render(w, p, len);
}

static struct bytes capture_bytes(const struct tb_profile *p)
{
	struct bytes b;

	b.d = (unsigned char *)render(tb_write_capture, p, &b.n);
	return b;
}

static void assert_same_output(int (*w)(const struct tb_profile *, FILE *),
			       const struct tb_profile *a, const struct tb_profile *b)
{
	size_t la, lb;
	char *x = render(w, a, &la), *y = render(w, b, &lb);

	assert_int_equal(la, lb);
	assert_memory_equal(x, y, la);
	free(x);
	free(y);
}

/* q, read from p's capture, renders as p does; its capture is the same file. */
static void assert_same_renders(const struct tb_profile *p, const struct tb_profile *q)
{
	struct bytes b, b2;

	assert_same_output(tb_write_folded, p, q);
	assert_same_output(tb_write_tree_json, p, q);
	assert_same_output(tb_write_speedscope, p, q);
	assert_same_output(tb_write_pprof, p, q);
	b = capture_bytes(p);
	b2 = capture_bytes(q);
	assert_int_equal(b.n, b2.n);
	assert_memory_equal(b.d, b2.d, b.n);
	free(b.d);
	free(b2.d);
}

/* build_profile, and native and kernel frames: version 2. */
static void build_profile_v2(struct tb_profile *p)
{
	uint32_t k, n, off;
	struct tb_sframe f[4];

	build_profile(p);
	p->kernel = p->native = 1;
	p->kstack.hidden = 1;
	p->kstack.kptr_restrict = 2;
	th_frame_counts(p, (const uint64_t[8]){ 3, 4, 5, 6, 7, 8, 9, 10 });
	p->off_cpu_records = 11;
	k = tb_sym_function(&p->sym, TB_CODE_KERNEL, 0xffffffff81100000ull, "do_syscall_64", "[kernel]");
	n = tb_sym_function(&p->sym, TB_CODE_NATIVE, 0x7f0000001000ull, "qsort_r", "/lib/libc.so.6");
	off = tb_sym_insert(&p->sym, 0, 0x9000, 0, 0, "<off-CPU>", "<synthetic>", 0, NULL, 0);
	f[0] = (struct tb_sframe){ k, -2, 0, 0 };
	f[1] = (struct tb_sframe){ off, -2, 0, 0 };
	f[2] = (struct tb_sframe){ n, -2, 0, 0 };
	f[3] = (struct tb_sframe){ 1, 46, 0x40, 1 };
	tb_profile_add_stack(p, 0, 0, f, 4, 6);
	p->python_samples += 6;
}

static void test_round_trip_v2(void **state)
{
	struct tb_profile p, q, v1;
	struct bytes b;
	char err[256];

	(void)state;
	build_profile(&v1);
	b = capture_bytes(&v1);
	assert_int_equal(b.d[8], 1);              /* nothing of version 2: version 1 */
	free(b.d);
	tb_profile_free(&v1);
	build_profile_v2(&p);
	b = capture_bytes(&p);
	assert_int_equal(b.d[8], 2);
	assert_int_equal(tb_read_capture_mem(b.d, b.n, &q, err, sizeof(err)), 0);
	assert_true(q.kernel && q.native && q.kstack.hidden);
	assert_int_equal(q.kstack.kptr_restrict, 2);
	assert_true(q.kernel_samples == 3 && q.kernel_frames == 4 && q.native_samples == 5 &&
		    q.native_frames == 6 && q.merged == 7 && q.unmerged == 8 && q.native_truncated == 9 &&
		    q.native_stop[1] == 10 && q.off_cpu_records == 11);
	assert_int_equal(q.sym.n, p.sym.n);
	for (uint32_t i = 0; i < p.sym.n; i++)
		assert_int_equal(q.sym.codes[i].kind, p.sym.codes[i].kind);
	assert_int_equal(q.sym.codes[p.sym.n - 3].kind, TB_CODE_KERNEL);
	assert_int_equal(q.sym.codes[p.sym.n - 2].kind, TB_CODE_NATIVE);
	assert_same_renders(&p, &q);
	free(b.d);
	tb_profile_free(&p);
	tb_profile_free(&q);
}

static void test_round_trip(void **state)
{
	struct tb_profile p, q;
	char err[256] = "", path[] = "/tmp/tb-capture-XXXXXX";
	int fd;
	FILE *f;

	(void)state;
	build_profile(&p);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_int_equal(tb_write_capture(&p, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(tb_read_capture(path, &q, err, sizeof(err)), 0);
	unlink(path);

	assert_int_equal(q.samples, p.samples);
	assert_int_equal(q.python_samples, p.python_samples);
	assert_int_equal(q.no_python, p.no_python);
	assert_int_equal(q.truncated, p.truncated);
	assert_int_equal(q.partial, p.partial);
	assert_int_equal(q.frames, p.frames);
	assert_int_equal(q.unresolved_frames, p.unresolved_frames);
	assert_int_equal(q.lost, 17);
	assert_int_equal(q.malformed, 1);
	assert_int_equal(q.hz, 99);
	assert_int_equal(q.max_depth, 128);
	assert_int_equal(q.start_unix, 1764410000);
	assert_true(q.duration_s == 2.5 && q.agent_cpu_s == 0.125 && q.min_fraction == 0.001);
	assert_int_equal(q.by_line, 1);
	assert_int_equal(q.nprocs, 2);
	assert_int_equal(q.nthreads, p.nthreads);
	assert_int_equal(q.nstacks, p.nstacks);
	assert_int_equal(q.sym.n, p.sym.n);
	assert_string_equal(tb_str(&q.pstrs, q.procs[0].version), tb_str(&p.pstrs, p.procs[0].version));
	assert_string_equal(tb_str(&q.pstrs, q.procs[1].version), "3.10.12");
	assert_string_equal(tb_str(&q.pstrs, q.procs[0].cmdline), tb_str(&p.pstrs, p.procs[0].cmdline));
	assert_int_equal(q.procs[0].ns_pid, 7);
	assert_int_equal(q.procs[1].shared_lib, 1);
	assert_int_equal(q.threads[1].ns_tid, 1002);
	assert_int_equal(q.sym.codes[3].resolved, 0);
	assert_int_equal(q.sym.codes[1].linetable_len, sizeof(LT311));
	for (uint32_t i = 0; i < p.nthreads; i++) {
		const struct tb_tinfo *a = &p.threads[i], *c = &q.threads[i];

		assert_true(a->pid == c->pid && a->tid == c->tid && a->ns_tid == c->ns_tid &&
			    a->ident == c->ident && a->samples == c->samples &&
			    a->python_samples == c->python_samples && a->on_cpu == c->on_cpu &&
			    a->off_cpu == c->off_cpu && a->gil_held == c->gil_held &&
			    a->gil_wait == c->gil_wait && a->gc == c->gc && a->exception == c->exception);
		assert_string_equal(tb_str(&q.strs, c->name), tb_str(&p.strs, a->name));
	}
	assert_int_equal(q.threads[0].ident, 0x7f0012345700ull);
	for (uint32_t i = 0; i < p.nstacks; i++) {
		const struct tb_sframe *fp = tb_stack_frames(&p, &p.stacks[i]);
		const struct tb_sframe *fq = tb_stack_frames(&q, &q.stacks[i]);

		assert_int_equal(q.stacks[i].count, p.stacks[i].count);
		assert_int_equal(q.stacks[i].kind, p.stacks[i].kind);
		assert_int_equal(q.stacks[i].depth, p.stacks[i].depth);
		for (uint16_t d = 0; d < p.stacks[i].depth; d++) {
			assert_int_equal(fq[d].code, fp[d].code);
			assert_int_equal(fq[d].offset, fp[d].offset);
			assert_int_equal(fq[d].opcode, fp[d].opcode);
			assert_int_equal(fq[d].has_opcode, fp[d].has_opcode);
		}
	}
	assert_same_renders(&p, &q);
	tb_profile_free(&p);
	tb_profile_free(&q);
}

/* The reader must fail with one sentence, leaving an empty profile. */
static void expect_fail(const void *d, size_t n, const char *needle)
{
	struct tb_profile q;
	char err[512] = "";

	assert_int_equal(tb_read_capture_mem(d, n, &q, err, sizeof(err)), -1);
	assert_true(err[0] != '\0');
	assert_null(strchr(err, '\n'));
	if (needle && !strstr(err, needle))
		fail_msg("error \"%s\" does not mention \"%s\"", err, needle);
	assert_int_equal(q.nstacks, 0);
	assert_null(q.stacks);
	tb_profile_free(&q);
}

/* Success is fine too, if every writer can render the result. */
static int read_and_render(const void *d, size_t n)
{
	struct tb_profile q;
	char err[512] = "";
	FILE *null;

	if (tb_read_capture_mem(d, n, &q, err, sizeof(err))) {
		assert_true(err[0] != '\0');
		assert_null(strchr(err, '\n'));
		return -1;
	}
	null = fopen("/dev/null", "w");
	assert_non_null(null);
	assert_int_equal(tb_write_folded(&q, null), 0);
	assert_int_equal(tb_write_tree_json(&q, null), 0);
	assert_int_equal(tb_write_speedscope(&q, null), 0);
	assert_int_equal(tb_write_pprof(&q, null), 0);
	assert_int_equal(tb_write_heatmap_json(&q, null), 0);
	assert_int_equal(tb_write_capture(&q, null), 0);
	fclose(null);
	tb_profile_free(&q);
	return 0;
}

static void put_le(unsigned char *d, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		d[i] = (unsigned char)(v >> (8 * i));
}

/* A capture file of this version around a (possibly hand-made) payload. */
static struct bytes wrap(const unsigned char *pay, size_t n, unsigned version)
{
	uLongf zlen = compressBound(n);
	struct bytes b;

	b.d = malloc(TB_CAP_HEADER_SIZE + zlen);
	assert_non_null(b.d);
	assert_int_equal(compress2(b.d + TB_CAP_HEADER_SIZE, &zlen, pay, n, 6), Z_OK);
	memcpy(b.d, TB_CAP_MAGIC, TB_CAP_MAGIC_LEN);
	put_le(b.d + 8, version, 2);
	put_le(b.d + 10, TB_CAP_FLAG_ZLIB, 2);
	put_le(b.d + 12, 0, 4);
	put_le(b.d + 16, n, 8);
	put_le(b.d + 24, zlen, 8);
	b.n = TB_CAP_HEADER_SIZE + zlen;
	return b;
}

static struct bytes payload_of(const struct bytes *file)
{
	struct bytes p;
	uLongf n;

	p.n = (size_t)file->d[16] | (size_t)file->d[17] << 8 | (size_t)file->d[18] << 16;
	p.d = malloc(p.n);
	n = p.n;
	assert_int_equal(uncompress(p.d, &n, file->d + TB_CAP_HEADER_SIZE, file->n - TB_CAP_HEADER_SIZE),
			 Z_OK);
	assert_int_equal(n, p.n);
	return p;
}

static void test_header_errors(void **state)
{
	struct tb_profile p;
	static const char junk[] = "PK\3\4 not a capture at all, longer than a header";
	struct bytes b, c;
	char err[256];

	(void)state;
	build_profile(&p);
	b = capture_bytes(&p);
	tb_profile_free(&p);
	assert_int_equal(read_and_render(b.d, b.n), 0);
	c.d = malloc(b.n + 16);
	expect_fail(b.d, 0, "empty");
	expect_fail(junk, sizeof(junk), "bad magic");
	memcpy(c.d, b.d, b.n);
	c.d[8] = TB_CAP_VERSION + 1; /* future version */
	expect_fail(c.d, b.n, "newer");
	c.d[8] = 0;
	expect_fail(c.d, b.n, "corrupt");
	memcpy(c.d, b.d, b.n);
	c.d[10] = 3; /* unknown flag */
	expect_fail(c.d, b.n, "corrupt");
	memcpy(c.d, b.d, b.n);
	put_le(c.d + 16, 1ull << 40, 8); /* a huge decompressed size */
	expect_fail(c.d, b.n, "limit");
	put_le(c.d + 16, TB_CAP_MAX_PAYLOAD, 8); /* allowed, but not from so few bytes */
	expect_fail(c.d, b.n, "cannot hold");
	put_le(c.d + 16, (b.d[16] | b.d[17] << 8) + 1, 8); /* one byte more than there is */
	expect_fail(c.d, b.n, "decompress");
	memcpy(c.d, b.d, b.n);
	put_le(c.d + 24, UINT64_MAX, 8);
	expect_fail(c.d, b.n, "truncated");
	memcpy(c.d, b.d, b.n);
	memset(c.d + b.n, 0, 16); /* trailing garbage */
	expect_fail(c.d, b.n + 16, "corrupt");
	put_le(c.d + 24, b.n + 16 - TB_CAP_HEADER_SIZE, 8); /* ...even when announced */
	expect_fail(c.d, b.n + 16, "decompress");
	/* every truncation */
	for (size_t n = 0; n < b.n; n++)
		expect_fail(b.d, n, NULL);
	/* a missing file */
	assert_int_equal(tb_read_capture("/nonexistent/x.tbp", &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
	tb_profile_free(&p);
	free(b.d);
	free(c.d);
}

/* FLIPS damaged copies of the capture b: flips in the file (file: nearly all
 * caught by zlib), or in its payload, re-wrapped (they reach the parser).
 * How many still read (and render). */
static unsigned flips(const struct bytes *b, int file)
{
	struct bytes pay = payload_of(b), c;
	size_t n = file ? b->n : pay.n;
	unsigned ok = 0;

	c.d = malloc(n);
	for (int i = 0; i < FLIPS; i++) {
		memcpy(c.d, file ? b->d : pay.d, n);
		for (int k = 1 + (int)(next_rand() % 4); k > 0; k--) {
			size_t at = next_rand() % n;

			if (!file && next_rand() % 4 == 0)
				c.d[at] = (unsigned char)next_rand(); /* a whole byte */
			else
				c.d[at] ^= (unsigned char)(1u << (next_rand() % 8));
		}
		if (file) {
			ok += read_and_render(c.d, n) == 0;
		} else {
			struct bytes w = wrap(c.d, n, b->d[8]);

			ok += read_and_render(w.d, w.n) == 0;
			free(w.d);
		}
	}
	free(c.d);
	free(pay.d);
	return ok;
}

static void test_random_flips(void **state)
{
	void (*build[])(struct tb_profile *) = { build_profile, build_profile_v2 };

	(void)state;
	for (int v = 0; v < 2; v++) {
		struct tb_profile p;
		struct bytes b;
		unsigned file, payload;

		build[v](&p);
		b = capture_bytes(&p);
		tb_profile_free(&p);
		file = flips(&b, 1);
		payload = flips(&b, 0);
		print_message("version %u: byte flips: %u of %d damaged files, %u of %d damaged payloads still read\n",
			      b.d[8], file, FLIPS, payload, FLIPS);
		free(b.d);
	}
}

/* Hand-made payloads: a little writer. */
struct pw {
	unsigned char d[32768];
	size_t n;
};

static void w_le(struct pw *w, uint64_t v, int bytes)
{
	assert_true(w->n + (size_t)bytes <= sizeof(w->d));
	put_le(w->d + w->n, v, bytes);
	w->n += (size_t)bytes;
}

static void w_str(struct pw *w, const char *s, size_t len, int nul)
{
	w_le(w, len, 4);
	memcpy(w->d + w->n, s, len);
	w->n += len;
	w->d[w->n++] = nul ? 0 : 'x';
}

static void w_meta(struct pw *w, unsigned version, uint32_t flags, int32_t kptr)
{
	w->n = 0;
	w_le(w, 99, 4);
	w_le(w, 128, 4);
	for (int i = 0; i < 16; i++) /* duration .. off_cpu_samples: zero */
		w_le(w, 0, 8);
	w_le(w, 0, 4);
	w_le(w, flags, 4);
	w_le(w, 0, 8); /* min_fraction 0.0 */
	if (version < 2)
		return;
	for (int i = 0; i < 15; i++) /* kernel_samples .. native_stop[7] */
		w_le(w, (uint64_t)i, 8);
	w_le(w, (uint32_t)kptr, 4);
	w_le(w, 0, 4);
	w_le(w, 0, 8); /* off_cpu_records */
}

static void w_process(struct pw *w, uint32_t pid)
{
	w_le(w, pid, 4);
	w_le(w, pid, 4);
	w_le(w, 1, 8);
	w_le(w, 0x030b02f0, 4);
	w_le(w, 0, 4);
	w_le(w, 0, 8);
	w_le(w, 0, 8);
	w_str(w, "py", 2, 1);
	w_str(w, "py x", 4, 1);
	w_str(w, "/bin/py", 7, 1);
	w_str(w, "3.11.2", 6, 1);
}

static void w_thread(struct pw *w, uint32_t pid, uint32_t name)
{
	w_le(w, pid, 4);
	w_le(w, 1, 4);
	w_le(w, 1, 4);
	w_le(w, name, 4);
	w_le(w, 0, 4); /* comm: "" */
	for (int i = 0; i < 9; i++)
		w_le(w, 1, 8);
}

/* A code object (flags: TB_CAP_CODE_*) with tlen bytes of line table. */
static void w_code_obj(struct pw *w, uint32_t pid, uint64_t addr, uint16_t id, unsigned flags,
		       unsigned minor, uint32_t name, int32_t first, uint32_t tlen)
{
	w_le(w, pid, 4);
	w_le(w, addr, 8);
	w_le(w, id, 2);
	w_le(w, flags, 1);
	w_le(w, minor, 1);
	w_le(w, name, 4);
	w_le(w, name, 4);
	w_le(w, (uint32_t)first, 4);
	w_le(w, 0, 4);
	w_le(w, tlen, 4);
	for (uint32_t i = 0; i < tlen; i++)
		w_le(w, 0x80, 1);
}

/* A Python code object of pid 1 named by string `name`. */
static void w_code(struct pw *w, uint32_t name)
{
	w_code_obj(w, 1, 0x1000, 1, TB_CAP_CODE_RESOLVED, 11, name, 1, 0);
}

/* A native or kernel function named "f" (flags: TB_CAP_CODE_*): pid, line table as given. */
static void w_function(struct pw *w, unsigned flags, uint32_t pid, uint32_t tlen)
{
	w_code_obj(w, pid, 0xffffffff81100000ull, 0, flags, 0, 1, 0, tlen);
}

static void w_stack(struct pw *w, uint32_t thread, uint16_t depth, uint32_t code)
{
	w_le(w, thread, 4);
	w_le(w, 0, 2);
	w_le(w, depth, 2);
	w_le(w, 3, 8);
	for (uint16_t i = 0; i < depth && depth <= TB_MAX_STACK; i++) {
		w_le(w, code, 4);
		w_le(w, 0, 4);
		w_le(w, 0, 1);
		w_le(w, 0, 1);
	}
}

/* strings: "", "f"; one process, thread, code, stack (by default); the V2_
 * cases are version 2 files with a kernel function as a second code object */
enum { BAD_NONE, BAD_STR_NUL, BAD_STR0, BAD_THREAD_NAME, BAD_THREAD_PID, BAD_CODE_NAME,
       BAD_STACK_THREAD, BAD_STACK_CODE, BAD_STACK_DEPTH, BAD_COUNT_STACKS, BAD_COUNT_STRS,
       BAD_COUNT_CODES, BAD_TRAILING, BAD_MODE, BAD_FRACTION, BAD_STACK_DEPTH0,
       BAD_V1_KIND, BAD_V1_KERNEL_FLAG, V2_FIRST, V2_NONE = V2_FIRST, V2_DEEP, BAD_V2_LINES,
       BAD_V2_PID, BAD_V2_BOTH_KINDS, BAD_V2_DEPTH, BAD_V2_KPTR, BAD_V2_FLAGS };

static struct bytes hand_made(int bad)
{
	static struct pw w;
	unsigned version = bad >= V2_FIRST ? 2 : 1;
	uint32_t meta_flags = bad == BAD_V1_KERNEL_FLAG ? TB_CAP_META_KERNEL :
			      bad == BAD_V2_FLAGS ? 64 : version == 2 ? TB_CAP_META_KERNEL : 0;
	uint16_t depth = bad == BAD_STACK_DEPTH ? 1026 : bad == BAD_STACK_DEPTH0 ? 0 :
			 bad == V2_DEEP ? 1300 : bad == BAD_V2_DEPTH ? TB_MAX_STACK + 1 : 2;

	w_meta(&w, version, meta_flags, bad == BAD_V2_KPTR ? 7 : 1);
	if (bad == BAD_MODE)
		put_le(w.d + 136, 9, 4);
	if (bad == BAD_FRACTION)
		put_le(w.d + 144, 0x7ff8000000000000ull, 8); /* NaN */
	w_le(&w, bad == BAD_COUNT_STRS ? 0xffffffffu : 2, 4);
	w_str(&w, bad == BAD_STR0 ? "z" : "", bad == BAD_STR0, 1);
	w_str(&w, "f", 1, bad != BAD_STR_NUL);
	w_le(&w, 1, 4);
	w_process(&w, 10);
	w_le(&w, 1, 4);
	w_thread(&w, bad == BAD_THREAD_PID ? 11 : 10, bad == BAD_THREAD_NAME ? 2 : 1);
	w_le(&w, bad == BAD_COUNT_CODES ? 0x80000000u : version == 2 || bad == BAD_V1_KIND ? 2 : 1, 4);
	w_code(&w, bad == BAD_CODE_NAME ? 7 : 1);
	if (version == 2 || bad == BAD_V1_KIND)
		w_function(&w, bad == BAD_V2_BOTH_KINDS ? 7 : TB_CAP_CODE_RESOLVED | TB_CAP_CODE_KERNEL,
			   bad == BAD_V2_PID ? 10 : 0, bad == BAD_V2_LINES ? 8 : 0);
	w_le(&w, bad == BAD_COUNT_STACKS ? 0xffffffffu : 1, 4); /* 2^32 - 1 stacks */
	w_stack(&w, bad == BAD_STACK_THREAD ? 1 : 0, depth,
		bad == BAD_STACK_CODE ? 1 + (version == 2) : version == 2 ? 1 : 0);
	if (bad == BAD_TRAILING)
		w_le(&w, 0, 1);
	return wrap(w.d, w.n, version);
}

static void test_hand_made_payloads(void **state)
{
	static const struct { int bad; const char *needle; } cases[] = {
		{ BAD_STR_NUL, "NUL" },
		{ BAD_STR0, "string 0" },
		{ BAD_THREAD_NAME, "out of range" },
		{ BAD_THREAD_PID, "not among the processes" },
		{ BAD_CODE_NAME, "out of range" },
		{ BAD_STACK_THREAD, "thread 1 of 1" },
		{ BAD_STACK_CODE, "code object 1 of 1" },
		{ BAD_STACK_DEPTH, "1026 frames" },
		{ BAD_STACK_DEPTH0, "0 frames" }, /* never written: no Python frame, no stack */
		{ BAD_COUNT_STACKS, "4294967295 entries" },
		{ BAD_COUNT_STRS, "4294967295 entries" },
		{ BAD_COUNT_CODES, "2147483648 entries" },
		{ BAD_TRAILING, "unexpected bytes" },
		{ BAD_MODE, "mode" },
		{ BAD_FRACTION, "fraction" },
		{ BAD_V1_KIND, "invalid flags" },          /* a kernel function needs version 2 */
		{ BAD_V1_KERNEL_FLAG, "invalid flags" },
		{ BAD_V2_LINES, "lines" },
		{ BAD_V2_PID, "pid" },
		{ BAD_V2_BOTH_KINDS, "invalid flags" },
		{ BAD_V2_DEPTH, "1421 frames" },
		{ BAD_V2_KPTR, "kptr_restrict" },
		{ BAD_V2_FLAGS, "invalid flags" },
	};
	struct tb_profile q;
	struct bytes b;
	char err[256];
	char *folded;

	(void)state;
	b = hand_made(BAD_NONE);
	assert_int_equal(tb_read_capture_mem(b.d, b.n, &q, err, sizeof(err)), 0);
	folded = render(tb_write_folded, &q, NULL);
	assert_string_equal(folded, "py (pid 10);f (tid 1);f (f:1);f (f:1) 3\n");
	free(folded);
	tb_profile_free(&q);
	free(b.d);
	/* version 2: a kernel function; a stack deeper than version 1 allows */
	b = hand_made(V2_NONE);
	assert_int_equal(tb_read_capture_mem(b.d, b.n, &q, err, sizeof(err)), 0);
	folded = render(tb_write_folded, &q, NULL);
	assert_string_equal(folded, "py (pid 10);f (tid 1);f_[k];f_[k] 3\n");
	assert_true(q.kernel && !q.native && q.kstack.kptr_restrict == 1);
	free(folded);
	tb_profile_free(&q);
	free(b.d);
	b = hand_made(V2_DEEP);
	assert_int_equal(read_and_render(b.d, b.n), 0);
	free(b.d);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		b = hand_made(cases[i].bad);
		expect_fail(b.d, b.n, cases[i].needle);
		free(b.d);
	}
}

/* ---- extension sections (format version 3) --------------------------------- */

/* A test section: the profile's hz as a u32 and one string of the string
 * table (by id), present when hz is 4242; what it read goes to seen_hz. */
static uint32_t seen_hz;

static int test_present(const struct tb_profile *p)
{
	return p->hz == 4242;
}

static void test_write(struct tb_cap_out *o, const struct tb_profile *p)
{
	tb_cap_u32(&o->b, p->hz);
	tb_cap_u32(&o->b, p->strs.n > 1 ? 1 : 0);
}

static int test_read(struct tb_rd *r, struct tb_profile *p)
{
	(void)p;
	seen_hz = (uint32_t)tb_rd_get(r, 4, "test section");
	tb_rd_strid(r, "test section");
	return r->failed ? -1 : 0;
}

static const struct tb_cap_section test_rows[] = {
	{ TB_CAP_SEC_TEST, "test", test_present, test_write, test_read },
	{ 0, NULL, NULL, NULL, NULL },
};

static void test_sections(void **state)
{
	struct tb_profile p, q;
	struct bytes b, plain, payload, bad;
	char err[256];

	(void)state;
	tb_profile_init(&p);
	build_profile(&p);
	plain = capture_bytes(&p);              /* no section present: version 1 */
	assert_int_equal(tb_rd_le(plain.d + 8, 2), 1);
	p.hz = 4242;
	tb_cap_sections_override(test_rows);
	b = capture_bytes(&p);
	assert_int_equal(tb_rd_le(b.d + 8, 2), 3);
	seen_hz = 0;
	assert_int_equal(tb_read_capture_mem(b.d, b.n, &q, err, sizeof(err)), 0);
	assert_int_equal(seen_hz, 4242);
	assert_same_output(tb_write_folded, &p, &q);
	tb_profile_free(&q);
	/* a reader that does not know the tag skips the section */
	tb_cap_sections_override(NULL);
	seen_hz = 0;
	assert_int_equal(tb_read_capture_mem(b.d, b.n, &q, err, sizeof(err)), 0);
	assert_int_equal(seen_hz, 0);
	assert_same_output(tb_write_folded, &p, &q);
	tb_profile_free(&q);
	/* broken trailers: a length past the end, the tag twice, bytes left over */
	tb_cap_sections_override(test_rows);
	payload = payload_of(&b);
	{
		size_t n = payload.n;
		unsigned char *d = payload.d;
		/* trailer: u32 count(1) u32 tag u64 len(8) u32 hz u32 strid = 24 bytes at the end */
		unsigned char *t = d + n - 24;

		assert_int_equal(tb_rd_le(t, 4), 1);
		put_le(t + 8, 9, 8);                        /* one byte more than there is */
		bad = wrap(d, n, 3);
		expect_fail(bad.d, bad.n, "extension section");
		free(bad.d);
		put_le(t + 8, 8, 8);
		put_le(t + 20, 4000000, 4);                 /* string id out of range */
		bad = wrap(d, n, 3);
		expect_fail(bad.d, bad.n, "string index");
		free(bad.d);
		put_le(t + 20, 0, 4);
		put_le(t + 8, 4, 8);                        /* the section ends early: 4 bytes follow */
		bad = wrap(d, n, 3);
		expect_fail(bad.d, bad.n, "");
		free(bad.d);
		put_le(t + 8, 8, 8);
		put_le(t, 70, 4);                           /* more sections than allowed */
		bad = wrap(d, n, 3);
		expect_fail(bad.d, bad.n, "extension");
		free(bad.d);
	}
	tb_cap_sections_override(NULL);
	free(payload.d);
	free(b.d);
	free(plain.d);
	tb_profile_free(&p);
}

/* The writer goes back to the header when the file can seek (a memory
 * stream here), and keeps the compressed bytes until the end when it cannot:
 * a pipe, a file opened for appending (after what it holds).  The same bytes. */
static void test_unseekable_outputs(void **state)
{
	struct tb_profile p;
	struct bytes b;
	unsigned char *got = malloc(1 << 16);
	char path[] = "/tmp/tb-cap-XXXXXX";
	int fds[2], fd;
	size_t n = 0;
	ssize_t r;
	FILE *f;

	(void)state;
	build_profile(&p);
	b = capture_bytes(&p);
	assert_true(b.n < 1 << 16); /* fits in the pipe */
	assert_int_equal(pipe(fds), 0);
	f = fdopen(fds[1], "w");
	assert_non_null(f);
	assert_int_equal(tb_write_capture(&p, f), 0);
	assert_int_equal(fclose(f), 0);
	while ((r = read(fds[0], got + n, (1 << 16) - n)) > 0)
		n += (size_t)r;
	close(fds[0]);
	assert_int_equal(n, b.n);
	assert_memory_equal(got, b.d, b.n);
	fd = mkstemp(path);
	assert_true(fd >= 0 && write(fd, "ab", 2) == 2);
	close(fd);
	f = fopen(path, "a");
	assert_non_null(f);
	assert_int_equal(tb_write_capture(&p, f), 0);
	assert_int_equal(fclose(f), 0);
	f = fopen(path, "r");
	n = fread(got, 1, 1 << 16, f);
	fclose(f);
	unlink(path);
	assert_int_equal(n, b.n + 2);
	assert_memory_equal(got + 2, b.d, b.n);
	free(got);
	free(b.d);
	tb_profile_free(&p);
}

/* A payload many times the reader's window: a line table and a section
 * (u32 count, count x u32) each larger than the window, thousands of deep
 * stacks; read from a file a block at a time, from memory, and with the
 * section unknown (skipped across windows). */
#define BIG_CELLS 300000u
static int big_section_ok;

static int big_present(const struct tb_profile *p)
{
	return p->hz == 4343;
}

static void big_write(struct tb_cap_out *o, const struct tb_profile *p)
{
	(void)p;
	tb_cap_u32(&o->b, BIG_CELLS);
	for (uint32_t i = 0; i < BIG_CELLS; i++) {
		tb_cap_u32(&o->b, i * 7);
		tb_cap_out_chunk(o);
	}
}

static int big_read(struct tb_rd *r, struct tb_profile *p)
{
	uint32_t n = tb_rd_count(r, 4, "big");

	(void)p;
	for (uint32_t i = 0; i < n && !r->failed; i++)
		if (tb_rd_get(r, 4, "big") != i * 7)
			return tb_rd_fail(r, "big section value %u is wrong", i);
	big_section_ok = !r->failed && n == BIG_CELLS;
	return r->failed ? -1 : 0;
}

static const struct tb_cap_section big_rows[] = {
	{ TB_CAP_SEC_TEST, "big", big_present, big_write, big_read },
	{ 0, NULL, NULL, NULL, NULL },
};

static void test_big_payload(void **state)
{
	struct tb_profile p, q;
	size_t tlen = 700000;
	unsigned char *table = malloc(tlen);
	char err[256] = "", path[] = "/tmp/tb-big-XXXXXX", *want, *got;
	struct bytes b;
	uint32_t code;
	int fd;
	FILE *f;

	(void)state;
	for (size_t i = 0; i < tlen; i++)
		table[i] = LT311[i % sizeof(LT311)];
	build_profile(&p);
	p.hz = 4343;
	code = tb_sym_insert(&p.sym, PID, 0x6000, 6, 11, "big", "/big.py", 1, table, (uint32_t)tlen);
	for (uint32_t i = 0; i < 4000; i++) {
		struct tb_sframe fr[40];
		uint16_t depth = (uint16_t)(10 + i % 30);

		for (uint16_t d = 0; d < depth; d++)
			fr[d] = (struct tb_sframe){ d == 0 ? code : (i + d) % code, (int32_t)(i * 2 + d), 0, 0 };
		tb_profile_add_stack(&p, 0, 0, fr, depth, 1 + i % 5);
	}
	tb_cap_sections_override(big_rows);
	b = capture_bytes(&p);
	assert_true(tb_rd_le(b.d + 16, 8) > (2u << 20)); /* the payload: many windows */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_int_equal(fwrite(b.d, 1, b.n, f), b.n);
	assert_int_equal(fclose(f), 0);
	want = render(tb_write_folded, &p, NULL);
	big_section_ok = 0;
	assert_int_equal(tb_read_capture(path, &q, err, sizeof(err)), 0);
	assert_true(big_section_ok);
	assert_int_equal(q.sym.codes[code].linetable_len, tlen);
	assert_memory_equal(q.sym.codes[code].linetable, table, tlen);
	got = render(tb_write_folded, &q, NULL);
	assert_string_equal(got, want);
	free(got);
	tb_profile_free(&q);
	big_section_ok = 0;
	assert_int_equal(tb_read_capture_mem(b.d, b.n, &q, err, sizeof(err)), 0);
	assert_true(big_section_ok);
	tb_profile_free(&q);
	tb_cap_sections_override(NULL); /* unknown: skipped */
	big_section_ok = 0;
	assert_int_equal(tb_read_capture(path, &q, err, sizeof(err)), 0);
	assert_false(big_section_ok);
	got = render(tb_write_folded, &q, NULL);
	assert_string_equal(got, want);
	free(got);
	tb_profile_free(&q);
	/* cut short in the middle of the section: the file, or the stream */
	assert_int_equal(truncate(path, (off_t)b.n - 1000), 0);
	assert_int_equal(tb_read_capture(path, &q, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "truncated"));
	unlink(path);
	expect_fail(b.d, b.n - 1000, "truncated");
	put_le(b.d + 24, b.n - 1000 - TB_CAP_HEADER_SIZE, 8); /* the stream itself cut short */
	expect_fail(b.d, b.n - 1000, "decompress");
	free(want);
	free(table);
	free(b.d);
	tb_profile_free(&p);
}

static void test_extensions(void **state)
{
	(void)state;
	assert_true(tb_output_supported("x.tbp"));
	assert_true(tb_output_supported("x.speedscope.json"));
	assert_true(tb_output_supported("x.pb.gz"));
	assert_false(tb_output_supported("x.gz"));
	assert_false(tb_output_supported(".tbp"));
}

/* .speedscope.json goes to the speedscope writer, not the tree JSON one */
static void test_speedscope_wins_over_json(void **state)
{
	struct tb_profile p;
	char err[256], path[] = "/tmp/tb-ss-XXXXXX.speedscope.json", buf[128] = "";
	int fd;
	FILE *f;

	(void)state;
	build_profile(&p);
	fd = mkstemps(path, 16);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(tb_write_output(&p, path, err, sizeof(err)), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	unlink(path);
	assert_non_null(strstr(buf, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""));
	tb_profile_free(&p);
}

static void test_speedscope_content(void **state)
{
	struct tb_profile p;
	char *out;

	(void)state;
	build_profile(&p);
	p.by_line = 0; /* the two offsets of work() are one frame */
	out = render(tb_write_speedscope, &p, NULL);
	assert_non_null(strstr(out, "\"shared\":{\"frames\":[{\"name\":\"main\",\"file\":\"/app.py\","
				    "\"line\":10},{\"name\":\"work\",\"file\":\"/app.py\",\"line\":3},"
				    "{\"name\":\"<truncated>\"},{\"name\":\"K.o;t\\\"h\\nr\",\"file\":"
				    "\"/lib/\\ufffd x.py\",\"line\":30},{\"name\":\"<partial stack>\"}"));
	assert_non_null(strstr(out, "{\"type\":\"sampled\",\"name\":\"thread (tid 1, pid 4242)\","
				    "\"unit\":\"seconds\",\"startValue\":0,\"endValue\":0.101010101,"
				    "\"samples\":[[0,1],[2,0,3]],\"weights\":[0.0808080808,0.0202020202]}"));
	assert_null(strstr(out, "tid 3,")); /* no Python stack: no profile */
	free(out);
	tb_profile_free(&p);
}

/* pprof: gzip, then the top-level fields of a Profile message */
static void test_pprof_structure(void **state)
{
	struct tb_profile p;
	size_t zlen, n = 0;
	unsigned char *z, *raw = malloc(1 << 20);
	const unsigned char *d, *end;
	unsigned counts[16] = { 0 };
	int first_string = 1;
	z_stream zs;

	(void)state;
	build_profile(&p);
	z = (unsigned char *)render(tb_write_pprof, &p, &zlen);
	assert_true(zlen > 18 && z[0] == 0x1f && z[1] == 0x8b); /* gzip */
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 31), Z_OK);
	zs.next_in = z;
	zs.avail_in = (uInt)zlen;
	zs.next_out = raw;
	zs.avail_out = 1 << 20;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	n = zs.total_out;
	inflateEnd(&zs);
	for (d = raw, end = raw + n; d < end;) {
		uint64_t key = th_varint("pprof", &d, end), field = key >> 3;

		assert_true(field > 0 && field < 16);
		counts[field]++;
		if ((key & 7) == 2) {
			uint64_t len = th_varint("pprof", &d, end);

			assert_true(len <= (uint64_t)(end - d));
			if (field == 6 && first_string) {
				assert_int_equal(len, 0); /* string_table[0] = "" */
				first_string = 0;
			}
			d += len;
		} else {
			assert_int_equal(key & 7, 0);
			th_varint("pprof", &d, end);
		}
	}
	assert_int_equal(counts[1], 2);           /* sample_type: samples/count, cpu/nanoseconds */
	assert_int_equal(counts[2], p.nstacks - 1); /* one sample per stack with samples */
	assert_int_equal(counts[5], 5 + 2);       /* functions in stacks, and the two markers */
	assert_true(counts[4] >= counts[5]);      /* locations: (function, line) */
	assert_int_equal(counts[9] + counts[10] + counts[11] + counts[12], 4);
	free(z);
	free(raw);
	tb_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_random_flips),
		cmocka_unit_test(test_round_trip_v2),
		cmocka_unit_test(test_hand_made_payloads),
		cmocka_unit_test(test_unseekable_outputs),
		cmocka_unit_test(test_big_payload),
		cmocka_unit_test(test_extensions),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_speedscope_wins_over_json),
		cmocka_unit_test(test_speedscope_content),
		cmocka_unit_test(test_pprof_structure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
