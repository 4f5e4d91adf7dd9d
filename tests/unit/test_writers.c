/* test_writers.c: every output format, taken from the format table
 * (output/format.c), on synthetic profiles: all zero; empty; two threads with an
 * off-CPU stack weighted at wake-up, <GC>, truncated and partial stacks and
 * opcodes; the same by line; hostile names (invalid UTF-8, control
 * characters, </script>, quotes, newlines); a very deep stack; every kind of
 * frame (kernel, native, a callback sandwich, hidden kernel symbols).  Each output
 * is checked by the syntax the table gives it (strict JSON (json_check.h),
 * JSON Lines, lines without control characters, lines ending in counts, a
 * page whose embedded data inflates to JSON, gzip'ed protobuf, a capture
 * that reads back), for one line per entry whatever the names, and
 * round-tripped: output(p) must equal output(read_capture(write_capture(p)))
 * byte for byte.  The diff writers the same on (p, p) and (p, q).  Then the
 * subjects of the former test_exports.c: the JSONL, pstats (sort, limit) and
 * gecko writers in detail, and the table's lookups and lists; how each format
 * shows native and kernel frames, the summary's counts, diffs matching them. */
#include <errno.h>
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
#include "output/diff.h"
#include "output/format.h"
#include "output/tbp.h"
#include "model/profile.h"
#include "json_check.h"
#include "helpers.h"

#define PID 4242
#define MAXIDS 4096

static void test_json_checker(void **state)
{
	static const char *good[] = {
		"{}", "[]", " {\"a\":[1,-2.5e+3,0,true,false,null,\"x\\u00e9\\ud83d\\ude00\\n\"]} ",
		"\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", "0.5", "-0", "[[[]]]",
	};
	static const char *bad[] = {
		"", "{", "{\"a\"}", "{\"a\":1,}", "[1,]", "[01]", "[1.]", "[.5]", "[+1]", "[NaN]",
		"[Infinity]", "[1e]", "\"\x01\"", "\"a\nb\"", "\"\xff\"", "\"\xc0\xaf\"",
		"\"\xed\xa0\x80\"", "\"\\x41\"", "\"\\ud800\"", "\"\\udc00\"", "[1] [2]", "{'a':1}",
		"[tru]", "\"abc",
	};
	size_t at;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (json_valid(good[i], strlen(good[i]), &at))
			fail_msg("valid JSON refused: %s (at %zu)", good[i], at);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!json_valid(bad[i], strlen(bad[i]), &at))
			fail_msg("invalid JSON accepted: %s", bad[i]);
}

/* ---- outputs ----------------------------------------------------------------- */

struct out {
	char *d;
	size_t n;
};

static const struct tb_diff_opts DIFF_OPTS = { 0.15, 0.001 };

/* The output of row fm for p, or for the diff of base and p if base. */
static struct out write_row(const struct tb_format *fm, const struct tb_profile *p,
			    const struct tb_profile *base)
{
	struct out o = { NULL, 0 };
	FILE *m = open_memstream(&o.d, &o.n);
	int rc;

	assert_non_null(m);
	rc = base ? fm->write_diff(base, p, &DIFF_OPTS, m) : fm->write(p, m);
	if (rc)
		fail_msg("%s: the %swriter failed", fm->ext, base ? "diff " : "");
	assert_int_equal(fclose(m), 0);
	return o;
}

/* The output of a file named x.EXT, as a string. */
static char *render(const char *ext, const struct tb_profile *p)
{
	char path[32];
	const struct tb_format *fm;

	snprintf(path, sizeof(path), "x%s", ext);
	fm = tb_format_find(path);
	assert_non_null(fm);
	return write_row(fm, p, NULL).d;  /* open_memstream ends it with a NUL */
}

static void check_json(const char *what, const char *d, size_t n)
{
	size_t at;

	if (json_valid(d, n, &at))
		fail_msg("%s: invalid JSON at byte %zu of %zu: ...%.60s", what, at, n,
			 d + (at > 20 ? at - 20 : 0));
}

/* Lines that end in '\n' and hold no control character (tab included). */
static size_t check_text(const char *what, const char *d, size_t n)
{
	size_t lines = 0;

	if (n && d[n - 1] != '\n')
		fail_msg("%s: no final newline", what);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)d[i];

		if (c == '\n')
			lines++;
		else if (c < 0x20 || c == 0x7f)
			fail_msg("%s: control character 0x%02x at byte %zu", what, c, i);
	}
	return lines;
}

/* Text lines, each "STACK N" (profile) or "STACK N N" (diff). */
static void check_folded(const char *what, const char *d, size_t n, int counts)
{
	check_text(what, d, n);
	for (const char *line = d, *nl; line < d + n; line = nl + 1) {
		const char *p;

		nl = memchr(line, '\n', (size_t)(d + n - line));
		p = nl;
		for (int k = 0; k < counts; k++) {
			const char *digits_end = p;

			while (p > line && p[-1] >= '0' && p[-1] <= '9')
				p--;
			if (p == digits_end || p == line || p[-1] != ' ')
				fail_msg("%s: line %.*s does not end in %d count(s)", what,
					 (int)(nl - line), line, counts);
			p--;
		}
		if (p == line)
			fail_msg("%s: a line without a stack", what);
	}
}

static void check_jsonl(const char *what, const char *d, size_t n)
{
	check_text(what, d, n);
	for (const char *line = d, *nl; line < d + n; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(d + n - line));
		check_json(what, line, (size_t)(nl - line));
	}
}

static int b64_value(int c)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c ? strchr(a, c) : NULL;

	return p ? (int)(p - a) : -1;
}

/* inflate d[0..n) (zlib, or gzip if window is 31) into a new buffer. */
static struct out inflate_all(const char *what, const unsigned char *d, size_t n, int window)
{
	struct out o = { NULL, 0 };
	size_t cap = 1 << 16;
	z_stream zs;
	int rc;

	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, window), Z_OK);
	zs.next_in = (unsigned char *)d;
	zs.avail_in = (uInt)n;
	o.d = malloc(cap);
	do {
		if (o.n == cap) {
			cap *= 2;
			o.d = realloc(o.d, cap);
		}
		assert_non_null(o.d);
		zs.next_out = (unsigned char *)o.d + o.n;
		zs.avail_out = (uInt)(cap - o.n);
		rc = inflate(&zs, Z_NO_FLUSH);
		o.n = cap - zs.avail_out;
	} while (rc == Z_OK);
	if (rc != Z_STREAM_END || zs.avail_in)
		fail_msg("%s: does not inflate (%d, %u bytes left)", what, rc, zs.avail_in);
	inflateEnd(&zs);
	return o;
}

/* The page: a title (the first, in the head) without markup, and the data between
 * id="tb-data"> and </script>: base64 of zlib of one JSON document. */
static void check_html(const char *what, const char *d, size_t n)
{
	static const char tag[] = "<script type=\"application/octet-stream\" id=\"tb-data\">";
	const char *t, *te, *s, *e, *p;
	unsigned char *z = NULL;
	size_t zn = 0;
	uint32_t acc = 0;
	int bits = 0;
	struct out json;

	assert_true(n > 0 && memchr(d, 0, n) == NULL);
	t = strstr(d, "<title>");
	te = t ? strstr(t, "</title>") : NULL;
	if (!t || !te)
		fail_msg("%s: no <title>", what);
	for (p = t + 7; p < te; p++)
		if (*p == '<' || *p == '>' || (unsigned char)*p < 0x20)
			fail_msg("%s: markup or control character in the title", what);
	s = strstr(d, tag);
	if (!s || strstr(s + 1, tag))
		fail_msg("%s: not one data block", what);
	s += strlen(tag);
	e = strstr(s, "</script>");
	assert_non_null(e);
	z = malloc((size_t)(e - s) + 1);
	assert_non_null(z);
	for (p = s; p < e && *p != '='; p++) {
		int v = b64_value(*p);

		if (v < 0)
			fail_msg("%s: byte 0x%02x in the base64 data", what, (unsigned char)*p);
		acc = acc << 6 | (uint32_t)v;
		if ((bits += 6) >= 8) {
			bits -= 8;
			z[zn++] = (unsigned char)(acc >> bits);
		}
	}
	while (p < e && *p == '=')
		p++;
	if (p != e || (e - s) % 4)
		fail_msg("%s: bad base64 padding", what);
	json = inflate_all(what, z, zn, 15);
	check_json(what, json.d, json.n);
	free(json.d);
	free(z);
}

static void check_proto_gz(const char *what, const char *d, size_t n)
{
	struct out raw = inflate_all(what, (const unsigned char *)d, n, 31);
	const unsigned char *p = (const unsigned char *)raw.d, *end = p + raw.n;

	while (p < end) {
		uint64_t key = th_varint(what, &p, end), len;

		if (!(key >> 3))
			fail_msg("%s: field number 0", what);
		switch (key & 7) {
		case 0:
			th_varint(what, &p, end);
			break;
		case 1:
		case 5:
			len = (key & 7) == 1 ? 8 : 4;
			if (len > (uint64_t)(end - p))
				fail_msg("%s: fixed field past the end", what);
			p += len;
			break;
		case 2:
			len = th_varint(what, &p, end);
			if (len > (uint64_t)(end - p))
				fail_msg("%s: length past the end", what);
			p += len;
			break;
		default:
			fail_msg("%s: wire type %u", what, (unsigned)(key & 7));
		}
	}
	free(raw.d);
}

/* A capture reads back, and its capture is the same bytes. */
static void check_capture(const char *what, const char *d, size_t n)
{
	struct tb_profile q;
	struct out again;
	char err[256];

	if (tb_read_capture_mem(d, n, &q, err, sizeof(err)))
		fail_msg("%s: does not read back: %s", what, err);
	again = write_row(tb_format_find("x.tbp"), &q, NULL);
	assert_int_equal(again.n, n);
	assert_memory_equal(again.d, d, n);
	free(again.d);
	tb_profile_free(&q);
}

/* The checks of the row's syntax. */
static void check_output(const struct tb_format *fm, const char *what, struct out o, int diff)
{
	switch (fm->syntax) {
	case TB_SYNTAX_TEXT:
		check_text(what, o.d, o.n);
		break;
	case TB_SYNTAX_FOLDED:
		check_folded(what, o.d, o.n, diff ? 2 : 1);
		break;
	case TB_SYNTAX_JSON:
		check_json(what, o.d, o.n);
		break;
	case TB_SYNTAX_JSONL:
		check_jsonl(what, o.d, o.n);
		break;
	case TB_SYNTAX_HTML:
		check_html(what, o.d, o.n);
		break;
	case TB_SYNTAX_PROTO_GZ:
		check_proto_gz(what, o.d, o.n);
		break;
	case TB_SYNTAX_CAPTURE:
		check_capture(what, o.d, o.n);
		break;
	default:
		fail_msg("%s: the test has no check for syntax %d: add one", what, (int)fm->syntax);
	}
}

/* Lines of an output (entries of line formats). */
static size_t count_lines(struct out o)
{
	size_t n = 0;

	for (size_t i = 0; i < o.n; i++)
		n += o.d[i] == '\n';
	return n;
}

/* ---- synthetic profiles ------------------------------------------------------ */

/* frames innermost first, as the BPF program sends them */
static void add_rec(struct tb_profile *p, uint32_t pid, uint32_t tid, int n, const uint64_t *codes,
		    const int32_t *offsets, uint64_t count, uint16_t flags, int opcode)
{
	th_add_stack(p, pid, tid, n, codes, offsets, count, flags, opcode);
}

static void add_flags(struct tb_profile *p, uint32_t tid, int n, const uint64_t *codes,
		      uint64_t count, uint16_t flags, int opcode)
{
	add_rec(p, PID, tid, n, codes, NULL, count, flags, opcode);
}

static void add(struct tb_profile *p, uint32_t tid, int n, const uint64_t *codes, uint64_t count)
{
	add_flags(p, tid, n, codes, count, 0, -1);
}

static void add_process(struct tb_profile *p, uint32_t pid, const char *comm, const char *cmdline)
{
	th_add_process(p, pid, comm, cmdline, 0x030b02f0);
}

/* Nothing at all: no rate, no process. */
static void build_zero(struct tb_profile *p)
{
	tb_profile_init(p);
}

/* A capture of a process that never ran Python. */
static void build_empty(struct tb_profile *p)
{
	tb_profile_init(p);
	add_process(p, PID, "python3.11", "python3.11 idle.py");
	p->hz = 99;
	p->max_depth = 128;
	p->duration_s = 1.5;
	p->start_unix = 1764410000;
}

/* Thread 1: 5x main>work, 2x main>other, 1x truncated work, off-CPU in
 * main>work weighted 5 samples; thread 2: 3x main>work (opcode on the
 * leaf), 1x main>work during GC.  Python samples: 13 + 4. */
static void build_threads(struct tb_profile *p)
{
	const uint64_t mw[] = { 0x2000, 0x1000 }, mo[] = { 0x3000, 0x1000 }, w[] = { 0x2000 };
	struct tb_sample_hdr wake;

	tb_profile_init(p);
	add_process(p, PID, "python3.11", "python3.11 app.py");
	p->hz = 100;
	p->duration_s = 0.2;
	p->mode = TB_MODE_WALL;
	tb_sym_insert(&p->sym, PID, 0x1000, 1, 11, "main", "/app.py", 10, NULL, 0);
	tb_sym_insert(&p->sym, PID, 0x2000, 2, 11, "work", "/app.py", 20, NULL, 0);
	tb_sym_insert(&p->sym, PID, 0x3000, 3, 11, "Klass.other", "/lib/x.py", 30, NULL, 0);
	add(p, 1, 2, mw, 5);
	add(p, 1, 2, mo, 2);
	add_flags(p, 1, 1, w, 1, TB_F_TRUNCATED, -1);
	add_flags(p, 1, 2, mw, 1, TB_F_OFF_CPU, -1);
	memset(&wake, 0, sizeof(wake));
	wake.type = TB_REC_WAKE;
	wake.pid = PID;
	wake.tid = 1;
	wake.value = 50000000; /* 50 ms at 100 Hz: 5 samples */
	th_send(p, &wake, &(struct tb_frame){ 0 }, 1);
	add_flags(p, 2, 2, mw, 3, 0, 100);
	add_flags(p, 2, 2, mw, 1, TB_F_GC, -1);
	assert_int_equal(p->python_samples, 17);
	assert_int_equal(p->nthreads, 2);
}

/* CPython 3.11 co_linetable of a 5-line function whose def is on line 3 */
static const unsigned char LT311[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x80, 0x41, 0xdd, 0x0d, 0x12, 0x90, 0x31, 0x89, 0x58, 0x8c, 0x58,
	0xf0, 0x00, 0x01, 0x05, 0x13, 0xf0, 0x00, 0x01, 0x05, 0x13, 0x88, 0x01, 0xd8, 0x08, 0x09, 0x88,
	0x51, 0x90, 0x11, 0x89, 0x55, 0x89, 0x0a, 0x88, 0x01, 0x88, 0x01, 0xd8, 0x0b, 0x0c, 0x80, 0x48,
};

/* The two threads, and: partial stacks (a frame that could not be read, a
 * bad frame), a sample without Python, a code with a line table at two
 * offsets, GIL and exception flags, an off-CPU stack never woken, a second
 * process, an unresolved code object. */
static void build_rich(struct tb_profile *p)
{
	const uint64_t lt[] = { 0x4000, 0x1000 }, bad[] = { 0x5000, 0x2000, 0x1000 };
	const uint64_t other[] = { 0x6000 };
	const int32_t oa[] = { 46, 8 }, ob[] = { 58, 8 };
	uint32_t dead;

	build_threads(p);
	add_process(p, PID + 1, "python3.12", "python3.12 -m other");
	tb_sym_insert(&p->sym, PID, 0x4000, 4, 11, "lined", "/app.py", 3, LT311, sizeof(LT311));
	dead = tb_sym_insert(&p->sym, PID, 0x5000, 5, 11, "<unreadable code 0x5000>", "<unknown>", 0,
			     NULL, 0);
	p->sym.codes[dead].resolved = 0;
	tb_sym_insert(&p->sym, PID + 1, 0x6000, 6, 11, "other_main", "/other.py", 1, NULL, 0);
	add_rec(p, PID, 1, 2, lt, oa, 4, TB_F_GIL_HELD, 0x40);
	add_rec(p, PID, 1, 2, lt, ob, 2, TB_F_GIL_WAIT | TB_F_EXCEPTION, -1);
	add_flags(p, 2, 3, bad, 2, TB_F_READ_ERROR, -1);
	add_flags(p, 2, 3, bad, 1, TB_F_BAD_FRAME | TB_F_TRUNCATED, 7);
	add_flags(p, 3, 0, NULL, 2, TB_F_NO_TSTATE, -1);
	add_flags(p, 2, 2, lt, 1, TB_F_OFF_CPU | TB_F_GIL_WAIT, -1);
	add_rec(p, PID + 1, 7, 1, other, NULL, 3, 0, 0x51);
	p->lost = 3;
	p->threads[0].ident = 0x7f0012345700ull;
	assert_true(p->partial > 0 && p->truncated > 0 && p->no_python > 0);
}

static void build_by_line(struct tb_profile *p)
{
	build_rich(p);
	p->by_line = 1;
	p->min_fraction = 0;
}

/* Names a target controls, each distinct (also once cleaned up), and plain
 * ones for the same profile's twin. */
static const char *const HOSTILE_NAMES[] = {
	"bad\xff\xfeutf8\xc3(", "ctl\x01\x1b[31m\t\r\x7f", "</script><script>alert(1)</script>",
	"quo\"te's \\back\\slash", "semi;colon (paren:1) space", "new\nline", "over\xc0\xaflong",
	"surr\xed\xa0\x80ogate", "sep\xe2\x80\xa8line", "&amp;<!--",
};
static const char *const HOSTILE_FILES[] = {
	"/t/\xff</script>\n.py", "/t/\"q\";x.py", "C:\\t\\\x01.py",
};
#define NHOSTILE (sizeof(HOSTILE_NAMES) / sizeof(HOSTILE_NAMES[0]))
#define NHFILES (sizeof(HOSTILE_FILES) / sizeof(HOSTILE_FILES[0]))

static void hostile_profile(struct tb_profile *p, int tame)
{
	uint64_t all[NHOSTILE];
	char name[32], file[32];

	tb_profile_init(p);
	add_process(p, PID, tame ? "python3" : "py\n</title>\x01\xff",
		    tame ? "python3 app.py" : "python3 \"</script>\" '\\' \n\t\xff\xc3 &lt;");
	p->hz = 99;
	p->duration_s = 1;
	p->start_unix = 1764410000;
	for (size_t i = 0; i < NHOSTILE; i++) {
		snprintf(name, sizeof(name), "name%zu", i);
		snprintf(file, sizeof(file), "/file%zu.py", i % NHFILES);
		all[i] = 0x1000 * (i + 1);
		tb_sym_insert(&p->sym, PID, all[i], (uint16_t)(i + 1), 11, tame ? name : HOSTILE_NAMES[i],
			      tame ? file : HOSTILE_FILES[i % NHFILES], (int32_t)i, NULL, 0);
	}
	for (size_t i = 0; i < NHOSTILE; i++) {
		const uint64_t st[] = { all[i], all[(i + 1) % NHOSTILE], all[0] };

		add_flags(p, 1 + (uint32_t)(i % 2), 3, st, 1 + i, 0, (int)i);
	}
	add_flags(p, 1, (int)NHOSTILE, all, 2, TB_F_GC, -1);
	p->threads[0].name = tb_strtab_intern(&p->strs, tame ? "t1" : "thr\n\"</script>\xff");
	p->threads[1].name = tb_strtab_intern(&p->strs, tame ? "t2" : "\x1b]0;title\x07");
}

static void build_hostile(struct tb_profile *p)
{
	hostile_profile(p, 0);
}

/* TB_MAX_FRAMES frames of 64 functions in 8 files on two threads, truncated. */
static void build_deep(struct tb_profile *p)
{
	static uint64_t codes[TB_MAX_FRAMES];
	char name[32], file[32];

	tb_profile_init(p);
	add_process(p, PID, "python3.11", "python3.11 deep.py");
	p->hz = 999;
	p->max_depth = TB_MAX_FRAMES;
	p->duration_s = 3;
	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "level%d", i);
		snprintf(file, sizeof(file), "/deep/m%d.py", i % 8);
		tb_sym_insert(&p->sym, PID, 0x10000 + 0x1000 * (uint64_t)i, (uint16_t)(16 + i), 11, name,
			      file, i, NULL, 0);
	}
	for (int i = 0; i < TB_MAX_FRAMES; i++)
		codes[i] = 0x10000 + 0x1000 * (uint64_t)((i * 7) % 64);
	add_flags(p, 1, TB_MAX_FRAMES, codes, 3, TB_F_TRUNCATED, 1);
	add_flags(p, 1, 700, codes + TB_MAX_FRAMES - 700, 2, 0, -1);
	add_flags(p, 2, TB_MAX_FRAMES, codes, 1, TB_F_TRUNCATED | TB_F_GC, -1);
	add_flags(p, 2, 1, codes + TB_MAX_FRAMES - 1, 5, 0, -1);
}

/* Every kind of frame, as --kernel and --native give them: kernel frames
 * below a Python frame (a system call), native frames (one stripped, named
 * lib+0xSTART) below one, a callback sandwich (Python, native, Python), an
 * off-CPU stack with <off-CPU> at the root of its kernel part, a [kernel]
 * frame (hidden symbols), a stack of native and kernel frames only, names
 * a target or a module controls.  native_module: the path of libz (another
 * directory matches by file name in diffs). */
static void kinds_profile(struct tb_profile *p, const char *native_module)
{
	enum { MAIN, WORK, CB, RZ, VFS, SYS, ENTRY, SCHED, NANO, NFT, HIDDEN, QSORT, DEFL, STRIP, ODD, OFF,
	       NCODES };
	uint32_t c[NCODES], t1, t2;
	struct tb_sframe f[8];
	uint64_t total = 0;
#define STACK(thread, count, ...) do {                                                          \
		const int idx_[] = { __VA_ARGS__ };                                                 \
		size_t n_ = sizeof(idx_) / sizeof(idx_[0]);                                         \
		for (size_t k_ = 0; k_ < n_; k_++)                                                  \
			f[k_] = (struct tb_sframe){ c[idx_[k_]], idx_[k_] <= CB ? 8 : -2, 0, 0 };      \
		tb_profile_add_stack(p, thread, 0, f, (uint16_t)n_, count);                         \
		total += count;                                                                     \
	} while (0)

	tb_profile_init(p);
	add_process(p, PID, "python3.11", "python3.11 kinds.py");
	p->hz = 100;
	p->duration_s = 0.5;
	p->start_unix = 1764410000;
	p->kernel = p->native = 1;
	p->kstack.kptr_restrict = 1;
	c[MAIN] = tb_sym_insert(&p->sym, PID, 0x1000, 1, 11, "main", "/app.py", 10, NULL, 0);
	c[WORK] = tb_sym_insert(&p->sym, PID, 0x2000, 2, 11, "work", "/app.py", 20, NULL, 0);
	c[CB] = tb_sym_insert(&p->sym, PID, 0x3000, 3, 11, "key_fn", "/app.py", 30, NULL, 0);
	c[RZ] = tb_sym_function(&p->sym, TB_CODE_KERNEL, 0xffffffff81300000ull, "read_zero", "[kernel]");
	c[VFS] = tb_sym_function(&p->sym, TB_CODE_KERNEL, 0xffffffff81200000ull, "vfs_read", "[kernel]");
	c[SYS] = tb_sym_function(&p->sym, TB_CODE_KERNEL, 0xffffffff81100000ull, "do_syscall_64", "[kernel]");
	c[ENTRY] = tb_sym_function(&p->sym, TB_CODE_KERNEL, 0xffffffff81000100ull,
				   "entry_SYSCALL_64_after_hwframe", "[kernel]");
	c[SCHED] = tb_sym_function(&p->sym, TB_CODE_KERNEL, 0xffffffff81400000ull, "schedule", "[kernel]");
	c[NANO] = tb_sym_function(&p->sym, TB_CODE_KERNEL, 0xffffffff81500000ull, "do_nanosleep", "[kernel]");
	c[NFT] = tb_sym_function(&p->sym, TB_CODE_KERNEL, 0xffffffffc0a00000ull, "nft_do_chain", "[nf_tables]");
	c[HIDDEN] = tb_sym_function(&p->sym, TB_CODE_KERNEL, 0, "[kernel]", "[kernel]");
	c[QSORT] = tb_sym_function(&p->sym, TB_CODE_NATIVE, 0x7f0000001000ull, "qsort_r",
				   "/usr/lib/x86_64-linux-gnu/libc.so.6");
	c[DEFL] = tb_sym_function(&p->sym, TB_CODE_NATIVE, 0x7f0000002000ull, "deflate_slow", native_module);
	c[STRIP] = tb_sym_function(&p->sym, TB_CODE_NATIVE, 0x7f0000003230ull, "libfoo.so+0x1230",
				   "/opt/libfoo.so");
	c[ODD] = tb_sym_function(&p->sym, TB_CODE_NATIVE, 0x7f0000004000ull, "op;er\nator<\xff>",
				 "/lib/x;y\n.so");
	c[OFF] = tb_sym_insert(&p->sym, 0, 0x9000, 0, 0, "<off-CPU>", "<synthetic>", 0, NULL, 0);
	t1 = tb_profile_add_thread(p, PID, PID, PID, "MainThread");
	t2 = tb_profile_add_thread(p, PID, PID + 1, PID + 1, "worker");
	STACK(t1, 5, RZ, VFS, SYS, ENTRY, WORK, MAIN);          /* a read(2) below work */
	p->arena[p->stacks[p->nstacks - 1].frames + 4].has_opcode = 1;   /* work's CALL */
	p->arena[p->stacks[p->nstacks - 1].frames + 4].opcode = 171;
	STACK(t1, 3, DEFL, STRIP, WORK, MAIN);                  /* zlib below work */
	STACK(t1, 2, CB, QSORT, WORK, MAIN);                    /* a callback sandwich */
	STACK(t2, 4, SCHED, NANO, OFF, WORK, MAIN);             /* blocked in time.sleep */
	STACK(t2, 1, HIDDEN, MAIN);                             /* kallsyms hid the names */
	STACK(t2, 1, NFT, SYS, QSORT);                          /* native and kernel frames only */
	STACK(t2, 2, ODD, MAIN);
#undef STACK
	p->samples = p->python_samples = total;
	p->threads[t1].samples = p->threads[t1].python_samples = 10;
	p->threads[t2].samples = p->threads[t2].python_samples = total - 10;
	p->procs[0].samples = total;
	th_frame_counts(p, (const uint64_t[8]){ 11, 19, 8, 9, 5, 1, 1, 7 });
}

static void build_kinds(struct tb_profile *p)
{
	kinds_profile(p, "/lib/x86_64-linux-gnu/libz.so.1");
}

struct sample {
	const char *name;
	void (*build)(struct tb_profile *p);
};

static const struct sample SAMPLES[] = {
	{ "zero", build_zero },       { "empty", build_empty },     { "threads", build_threads },
	{ "rich", build_rich },       { "by-line", build_by_line }, { "hostile", build_hostile },
	{ "deep", build_deep },        { "kinds", build_kinds },
};
#define NSAMPLES (sizeof(SAMPLES) / sizeof(SAMPLES[0]))

/* The profile read from p's capture. */
static void round_trip(const struct tb_profile *p, struct tb_profile *q)
{
	struct out cap = write_row(tb_format_find("x.tbp"), p, NULL);
	char err[256];

	if (tb_read_capture_mem(cap.d, cap.n, q, err, sizeof(err)))
		fail_msg("capture does not read back: %s", err);
	/* The one counter capture format 1 does not hold: the off-CPU stacks
	 * recorded at switch-outs (wall mode; "off_cpu_records" of the tree
	 * JSON, 0 in any render of a capture).  Keeping it needs format 2. */
	q->off_cpu_records = p->off_cpu_records;
	free(cap.d);
}

static void assert_same(const char *what, struct out a, struct out b)
{
	size_t i = 0;

	if (a.n == b.n && memcmp(a.d, b.d, a.n) == 0)
		return;
	while (i < a.n && i < b.n && a.d[i] == b.d[i])
		i++;
	fail_msg("%s: %zu bytes and %zu bytes, first difference at byte %zu", what, a.n, b.n, i);
}

/* ---- every row, every profile ------------------------------------------------- */

static void test_every_format(void **state)
{
	struct tb_profile p, q;
	const struct tb_format *fm;
	char what[128];
	size_t rows = 0;

	(void)state;
	for (size_t s = 0; s < NSAMPLES; s++) {
		SAMPLES[s].build(&p);
		round_trip(&p, &q);
		for (size_t i = 0; (fm = tb_format_at(i)); i++) {
			struct out a = write_row(fm, &p, NULL), again = write_row(fm, &p, NULL);
			struct out b = write_row(fm, &q, NULL);

			snprintf(what, sizeof(what), "%s%s", SAMPLES[s].name, fm->ext);
			check_output(fm, what, a, 0);
			assert_same(what, a, again);                 /* deterministic */
			snprintf(what, sizeof(what), "%s%s round trip", SAMPLES[s].name, fm->ext);
			assert_same(what, a, b);
			free(a.d);
			free(again.d);
			free(b.d);
			rows++;
		}
		tb_profile_free(&p);
		tb_profile_free(&q);
	}
	assert_true(rows >= NSAMPLES * 12);
}

/* Diffs of (p, p) and (p, q), q the next sample (the empty and zero ones too),
 * checked and round-tripped through captures. */
static void test_every_diff(void **state)
{
	struct tb_profile p, q, rp, rq;
	const struct tb_format *fm;
	char what[160];
	size_t rows = 0;

	(void)state;
	for (size_t s = 0; s < NSAMPLES; s++) {
		const struct sample *other = &SAMPLES[(s + 1) % NSAMPLES];

		SAMPLES[s].build(&p);
		other->build(&q);
		round_trip(&p, &rp);
		round_trip(&q, &rq);
		for (size_t i = 0; (fm = tb_format_at(i)); i++) {
			struct out same, a, b;

			if (!fm->write_diff)
				continue;
			same = write_row(fm, &p, &p);
			snprintf(what, sizeof(what), "diff %s %s%s", SAMPLES[s].name, SAMPLES[s].name, fm->ext);
			check_output(fm, what, same, 1);
			a = write_row(fm, &q, &p);
			snprintf(what, sizeof(what), "diff %s %s%s", SAMPLES[s].name, other->name, fm->ext);
			check_output(fm, what, a, 1);
			b = write_row(fm, &rq, &rp);
			snprintf(what, sizeof(what), "diff %s %s%s round trip", SAMPLES[s].name, other->name,
				 fm->ext);
			assert_same(what, a, b);
			free(same.d);
			free(a.d);
			free(b.d);
			rows++;
		}
		tb_profile_free(&p);
		tb_profile_free(&q);
		tb_profile_free(&rp);
		tb_profile_free(&rq);
	}
	assert_true(rows >= NSAMPLES * 3);
}

/* Line formats: hostile names (newlines in them) give as many lines as the
 * same profile with plain names: one line per entry. */
static void test_one_line_per_entry(void **state)
{
	struct tb_profile h, t;
	const struct tb_format *fm;
	size_t checked = 0;

	(void)state;
	hostile_profile(&h, 0);
	hostile_profile(&t, 1);
	for (size_t i = 0; (fm = tb_format_at(i)); i++) {
		for (int diff = 0; diff < 2; diff++) {
			struct out a, b;

			if (fm->syntax != TB_SYNTAX_TEXT && fm->syntax != TB_SYNTAX_FOLDED &&
			    fm->syntax != TB_SYNTAX_JSONL)
				continue;
			if (diff && !fm->write_diff)
				continue;
			a = write_row(fm, &h, diff ? &h : NULL);
			b = write_row(fm, &t, diff ? &t : NULL);
			if (count_lines(a) != count_lines(b))
				fail_msg("%s%s: %zu lines with hostile names, %zu with plain ones", diff ? "diff " : "",
					 fm->ext, count_lines(a), count_lines(b));
			free(a.d);
			free(b.d);
			checked++;
		}
	}
	assert_true(checked >= 4);
	tb_profile_free(&h);
	tb_profile_free(&t);
}

/* Counts near 2^64 (a capture file can hold them): every writer either
 * writes valid output that round-trips or refuses with EFBIG (the gecko
 * writer, which lists every sample, must). */
static void test_huge_counts(void **state)
{
	struct tb_profile p, q;
	struct tb_sframe fr[2];
	const struct tb_format *fm;
	char what[160], dir[] = "/tmp/tb-huge-XXXXXX", path[64], err[256];
	int refused = 0;

	(void)state;
	build_threads(&p);
	memcpy(fr, tb_stack_frames(&p, &p.stacks[0]), sizeof(fr));
	tb_profile_add_stack(&p, 0, 0, fr, 2, UINT64_MAX - 5);
	tb_profile_add_stack(&p, 1, TB_SK_TRUNCATED, fr, 1, UINT64_MAX / 2);
	round_trip(&p, &q);
	for (size_t i = 0; (fm = tb_format_at(i)); i++) {
		FILE *m = fopen("/dev/null", "w");
		struct out a, b;
		int rc;

		assert_non_null(m);
		errno = 0;
		rc = fm->write(&p, m);
		fclose(m);
		snprintf(what, sizeof(what), "huge%s", fm->ext);
		if (rc) {
			if (errno != EFBIG)
				fail_msg("%s: failed without EFBIG", what);
			refused += fm->write == tb_write_gecko;
			continue;
		}
		a = write_row(fm, &p, NULL);
		b = write_row(fm, &q, NULL);
		check_output(fm, what, a, 0);
		assert_same(what, a, b);
		free(a.d);
		free(b.d);
	}
	assert_int_equal(refused, 1);
	/* as a command says it: one sentence, and no file */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.gecko.json", dir);
	assert_int_equal(tb_write_output(&p, path, err, sizeof(err)), -1);
	snprintf(what, sizeof(what), "%s: write failed: %s", path, strerror(EFBIG));
	assert_string_equal(err, what);
	assert_int_equal(rmdir(dir), 0);            /* empty */
	tb_profile_free(&p);
	tb_profile_free(&q);
}

/* ---- the table ---------------------------------------------------------------- */

static void test_output_table(void **state)
{
	const struct tb_format *fm;
	char list[512], err[1024], path[64], *printed = NULL;
	size_t n = 0, plen = 0;
	FILE *m;

	(void)state;
	assert_true(tb_output_supported("x.gecko.json"));
	assert_true(tb_output_supported("x.jsonl"));
	assert_true(tb_output_supported("x.txt"));
	tb_formats_list(list, sizeof(list), TB_USE_PROFILE);
	assert_non_null(strstr(list, ".gecko.json"));
	assert_non_null(strstr(list, ".jsonl"));
	assert_non_null(strstr(list, ".txt"));
	m = open_memstream(&printed, &plen);
	tb_formats_print(m, TB_USE_PROFILE);
	fclose(m);
	for (size_t i = 0; (fm = tb_format_at(i)); i++, n++) {
		char line[64];

		/* every row: found by its extension, listed, printed, with a help line */
		assert_non_null(fm->write);
		assert_true(fm->help && *fm->help && strlen(fm->help) <= 34);
		assert_true(!fm->write_diff == !fm->diff_help);
		assert_true(!fm->diff_help || strlen(fm->diff_help) <= 34);
		snprintf(path, sizeof(path), "dir.d/x%s", fm->ext);
		assert_ptr_equal(tb_format_find(path), fm);
		assert_ptr_equal(tb_output_format(path, TB_USE_PROFILE, err, sizeof(err)), fm);
		assert_ptr_not_equal(tb_format_find(fm->ext), fm); /* no name before it */
		assert_non_null(strstr(list, fm->ext));
		snprintf(line, sizeof(line), "%s\n", fm->ext);
		assert_non_null(strstr(printed, line));
		assert_int_equal(tb_output_needs_sources(path), fm->needs_sources);
		if (!fm->write_diff) {
			assert_null(tb_output_format(path, TB_USE_DIFF, err, sizeof(err)));
			assert_non_null(strstr(err, "unknown diff output format (supported: .html"));
		}
	}
	assert_true(n >= 12);
	free(printed);
	/* the longest extension wins */
	assert_string_equal(tb_format_find("a.speedscope.json")->ext, ".speedscope.json");
	assert_string_equal(tb_format_find("a.heatmap.json")->ext, ".heatmap.json");
	assert_string_equal(tb_format_find("a.b.json")->ext, ".json");
	assert_null(tb_format_find("x.gz"));
	assert_null(tb_format_find(""));
	assert_null(tb_output_format("x.gz", TB_USE_PROFILE, err, sizeof(err)));
	snprintf(path, sizeof(path), "x.gz: unknown output format (supported: ");
	assert_true(strncmp(err, path, strlen(path)) == 0);
	assert_string_equal(err + strlen(path), strcat(list, ")"));
	tb_formats_list(list, sizeof(list), TB_USE_DIFF);
	assert_string_equal(list, ".html, .json, .folded");
	tb_formats_list(list, 16, TB_USE_PROFILE);   /* cut short after a whole one */
	assert_string_equal(list, ".html, .json");
	assert_true(tb_output_needs_sources("x.heatmap.html") && tb_output_needs_sources("x.heatmap.json"));
	assert_false(tb_output_needs_sources("x.html") || tb_output_needs_sources("x.gz"));
}

/* ---- JSON Lines in detail ----------------------------------------------------- */

/* The integer after "key": in line, or -1. */
static long field(const char *line, const char *key)
{
	char pat[64];
	const char *s;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	s = strstr(line, pat);
	return s ? strtol(s + strlen(pat), NULL, 10) : -1;
}

static void test_jsonl(void **state)
{
	struct tb_profile p;
	static char str_def[MAXIDS], frame_def[MAXIDS];
	long tids[8], ntids = 0, stacks = 0, next_str = 0, next_frame = 0;
	uint64_t sum = 0, agg_self = 0;
	char *out, *line, *save = NULL;
	int nline = 0, saw_end = 0, saw_opcode = 0, saw_trunc = 0;

	(void)state;
	build_threads(&p);
	out = render(".jsonl", &p);
	/* the off-CPU weight sits on a synthetic leaf */
	assert_non_null(strstr(out, "\"s\":\"\\u003coff-CPU\\u003e\""));
	memset(str_def, 0, sizeof(str_def));
	memset(frame_def, 0, sizeof(frame_def));
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), nline++) {
		size_t len = strlen(line);

		assert_false(saw_end);                     /* "end" is the last line */
		assert_true(strncmp(line, "{\"type\":\"", 9) == 0);
		assert_int_equal(line[len - 1], '}');
		if (nline == 0) {
			assert_true(strncmp(line, "{\"type\":\"meta\"", 14) == 0);
			assert_int_equal(field(line, "python_samples"), 17);
			assert_int_equal(field(line, "rate_hz"), 100);
			continue;
		}
		if (strncmp(line, "{\"type\":\"str\"", 13) == 0) {
			long id = field(line, "id");

			assert_int_equal(id, next_str++);  /* dense, in file order */
			str_def[id] = 1;
		} else if (strncmp(line, "{\"type\":\"thread\"", 16) == 0) {
			assert_true(str_def[field(line, "name")]);
			tids[ntids++] = field(line, "tid");
		} else if (strncmp(line, "{\"type\":\"frame\"", 15) == 0) {
			long id = field(line, "id");

			assert_int_equal(id, next_frame++);
			assert_true(str_def[field(line, "name")]);
			assert_true(str_def[field(line, "file")]);
			frame_def[id] = 1;
		} else if (strncmp(line, "{\"type\":\"stack\"", 15) == 0) {
			const char *fr = strstr(line, "\"frames\":[") + 10;
			long tid = field(line, "thread"), op = field(line, "opcode");
			int known = 0;
			char *end;

			assert_int_equal(field(line, "id"), stacks++);
			for (long i = 0; i < ntids; i++)
				known |= tids[i] == tid;
			assert_true(known);
			while (*fr != ']') {
				long id = strtol(fr, &end, 10);

				assert_true(end > fr && id >= 0 && id < MAXIDS && frame_def[id]);
				fr = *end == ',' ? end + 1 : end;
			}
			if (op >= 0) {
				assert_true(str_def[op]);
				saw_opcode = 1;
			}
			saw_trunc |= strstr(line, "\"truncated\":true") != NULL;
			sum += (uint64_t)field(line, "count");
		} else if (strncmp(line, "{\"type\":\"agg\"", 13) == 0) {
			long id = field(line, "frame");

			assert_true(id >= 0 && id < MAXIDS && frame_def[id]);
			assert_true(field(line, "self") <= field(line, "total"));
			agg_self += (uint64_t)field(line, "self");
		} else if (strncmp(line, "{\"type\":\"end\"", 13) == 0) {
			saw_end = 1;
			assert_int_equal(field(line, "samples"), 17);
			assert_int_equal(field(line, "stacks"), stacks);
			assert_int_equal(field(line, "frames"), next_frame);
			assert_int_equal(field(line, "strings"), next_str);
		} else if (strncmp(line, "{\"type\":\"process\"", 17) != 0) {
			fail_msg("unknown line: %s", line);
		}
	}
	assert_true(saw_end);
	assert_int_equal(ntids, 2);
	assert_int_equal(sum, 17);
	assert_int_equal(agg_self, 17);   /* every sample has one leaf */
	assert_true(saw_opcode);
	assert_true(saw_trunc);
	free(out);
	tb_profile_free(&p);
}

/* ---- the pstats-style table in detail ----------------------------------------- */

struct row {
	unsigned long own, total;
	char name[128];
};

/* The table rows of a pstats rendering. */
static int rows(const struct tb_profile *p, struct row *r, int max)
{
	char *out = render(".txt", p), *line, *save = NULL;
	int n = 0, body = 0;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		double a, b, c, d;
		int used = 0;

		if (!body) {
			body = strstr(line, "function (file:line)") != NULL;
			continue;
		}
		assert_true(n < max);
		assert_int_equal(sscanf(line, "%lu %lu %lf%% %lf%% %lf %lf %n", &r[n].own, &r[n].total,
					&a, &b, &c, &d, &used), 6);
		assert_true(used > 0);
		snprintf(r[n].name, sizeof(r[n].name), "%s", line + used);
		assert_true(a <= b + 1e-9);
		assert_true(c <= d + 1e-9);
		/* time = samples / rate (100 Hz: 10 ms a sample) */
		assert_true(c > (double)r[n].own * 10 - 0.1 && c < (double)r[n].own * 10 + 0.1);
		n++;
	}
	assert_true(body);
	free(out);
	return n;
}

static void test_pstats_sort_and_limit(void **state)
{
	struct tb_profile p;
	struct row r[16];
	int n;

	(void)state;
	build_threads(&p);
	/* own: work 5+1(trunc)+3 = 9, Klass.other 2, <off-CPU> 5, <GC> 1, main 0 */
	p.sort_key = 0;
	n = rows(&p, r, 16);
	assert_int_equal(n, 5);
	for (int i = 1; i < n; i++)
		assert_true(r[i - 1].own > r[i].own ||
			    (r[i - 1].own == r[i].own && r[i - 1].total >= r[i].total));
	assert_string_equal(r[0].name, "work (/app.py:20)");
	assert_int_equal(r[0].own, 9);
	assert_int_equal(r[0].total, 15);  /* + off-CPU 5 + GC 1 below it */

	p.sort_key = 1;
	n = rows(&p, r, 16);
	assert_int_equal(n, 5);
	for (int i = 1; i < n; i++)
		assert_true(r[i - 1].total >= r[i].total);
	assert_string_equal(r[0].name, "main (/app.py:10)");
	assert_int_equal(r[0].total, 16);  /* all but the truncated stack */

	p.sort_key = 2;
	n = rows(&p, r, 16);
	assert_int_equal(n, 5);
	for (int i = 1; i < n; i++)
		assert_true(strcmp(r[i - 1].name, r[i].name) <= 0);

	p.limit = 2;
	assert_int_equal(rows(&p, r, 16), 2);
	assert_true(strcmp(r[0].name, r[1].name) <= 0);
	p.sort_key = 1;
	assert_int_equal(rows(&p, r, 16), 2);
	assert_string_equal(r[0].name, "main (/app.py:10)");
	p.limit = 100;
	assert_int_equal(rows(&p, r, 16), 5);

	assert_int_equal(tb_pstats_sort_key("own"), 0);
	assert_int_equal(tb_pstats_sort_key("total"), 1);
	assert_int_equal(tb_pstats_sort_key("name"), 2);
	assert_int_equal(tb_pstats_sort_key("self"), -1);
	tb_profile_free(&p);
}

/* ---- the Firefox Profiler format in detail ------------------------------------ */

/* Elements of the JSON array of integers starting at s (just after '['). */
static long count_array(const char *s)
{
	long n = 0;

	if (*s == ']')
		return 0;
	for (n = 1; *s && *s != ']'; s++)
		n += *s == ',';
	return n;
}

static void check_thread(const char *json, const char *label, long samples)
{
	const char *t = strstr(json, label), *s;

	assert_non_null(t);
	assert_null(strstr(t + 1, label));           /* one thread per OS thread */
	s = strstr(t, "\"samples\":{\"stack\":[");
	assert_non_null(s);
	assert_int_equal(count_array(s + 20), samples);
	s = strstr(s, "\"time\":[");
	assert_non_null(s);
	assert_int_equal(count_array(s + 8), samples);
	assert_int_equal(field(strstr(s, "\"weightType\""), "length"), samples);
}

static void test_gecko(void **state)
{
	struct tb_profile p;
	char *json;
	const char *s;
	int nthreads = 0;

	(void)state;
	build_threads(&p);
	json = render(".gecko.json", &p);
	assert_true(strncmp(json, "{\"meta\":{\"interval\":10.0", 24) == 0);
	assert_non_null(strstr(json, "\"preprocessedProfileVersion\":57"));
	for (s = json; (s = strstr(s, "\"processType\":\"default\"")); s++)
		nthreads++;
	assert_int_equal(nthreads, 2);
	check_thread(json, "\"name\":\"thread (tid 1)\"", 13);
	check_thread(json, "\"name\":\"thread (tid 2)\"", 4);
	/* categories, markers from the synthetic leaves, opcode subcategory */
	assert_non_null(strstr(json, "{\"name\":\"Off-CPU\",\"color\":\"transparent\""));
	assert_non_null(strstr(json, "{\"name\":\"GC\",\"color\":\"orange\""));
	assert_non_null(strstr(json, "\"Off CPU\""));
	assert_non_null(strstr(json, "\"On CPU\""));
	assert_non_null(strstr(json, "\"GC\""));
	assert_non_null(strstr(json, "\"Thread status\""));
	assert_non_null(strstr(json, "\"\\u003ctruncated\\u003e\""));
	assert_non_null(strstr(json, "\"subcategories\":[\"Other\",\""));
	assert_non_null(strstr(json, "\"stringArray\":[\"(root)\""));
	assert_int_equal(json[strlen(json) - 2], '}');
	free(json);
	tb_profile_free(&p);
}

/* ---- frame kinds in every format ---------------------------------------------- */

static void has(const char *what, const char *out, const char *needle)
{
	if (!strstr(out, needle))
		fail_msg("%s: no %s", what, needle);
}

static void has_not(const char *what, const char *out, const char *needle)
{
	if (strstr(out, needle))
		fail_msg("%s: has %s", what, needle);
}

/* What each format shows of the kinds profile: (extension, text it holds). */
static const struct { const char *ext, *needle; } KINDS_SHOWN[] = {
	/* root first; kernel frames symbol_[k], native symbol (library), a stripped one alone */
	{ ".folded", "python3.11 (pid 4242);MainThread (tid 4242);main (/app.py:10);work (/app.py:20);"
		     "entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];vfs_read_[k];read_zero_[k] 5\n" },
	{ ".folded", ";work (/app.py:20);libfoo.so+0x1230;deflate_slow (libz.so.1) 3\n" },
	{ ".folded", ";work (/app.py:20);qsort_r (libc.so.6);key_fn (/app.py:30) 2\n" },
	{ ".folded", ";work (/app.py:20);<off-CPU> (<synthetic>:0);do_nanosleep_[k];schedule_[k] 4\n" },
	{ ".folded", ";main (/app.py:10);[kernel]_[k] 1\n" },
	{ ".folded", "(tid 4243);qsort_r (libc.so.6);do_syscall_64_[k];nft_do_chain_[k] 1\n" },
	{ ".folded", ";main (/app.py:10);op:er?ator<\xff> (x:y?.so) 2\n" },
	{ ".json", "\"name\":\"read_zero\",\"kind\":\"kernel\",\"filename\":\"[kernel]\"" },
	{ ".json", "\"name\":\"deflate_slow\",\"kind\":\"native\",\"filename\":\"/lib/x86_64-linux-gnu/libz.so.1\"" },
	{ ".json", "\"name\":\"work\",\"kind\":\"frame\"" },
	{ ".json", "\"kernel_stacks\":{\"enabled\":true,\"samples\":11,\"frames\":19,"
		   "\"symbols_hidden\":false,\"kptr_restrict\":1}" },
	{ ".json", "\"native_stacks\":{\"enabled\":true,\"samples\":8,\"frames\":9,\"merged\":5,"
		   "\"unmerged\":1,\"truncated\":1,\"stops\":[0,7,0,0,0,0,0,0]}" },
	{ ".json", "\"opcodes\":[[" },            /* the leaf instruction: work's, above kernel frames */
	{ ".jsonl", ",\"kind\":\"kernel\"}\n" },
	{ ".jsonl", ",\"kind\":\"native\"}\n" },
	{ ".jsonl", "\"kernel_stacks\":{" },
	{ ".speedscope.json", "{\"name\":\"do_syscall_64\",\"file\":\"[kernel]\"}" },
	{ ".speedscope.json", "{\"name\":\"qsort_r\",\"file\":\"/usr/lib/x86_64-linux-gnu/libc.so.6\"}" },
	{ ".speedscope.json", "{\"name\":\"work\",\"file\":\"/app.py\",\"line\":20}" },
	{ ".txt", "  read_zero [kernel]\n" },
	{ ".txt", "  nft_do_chain [nf_tables]\n" },
	{ ".txt", "  deflate_slow [libz.so.1]\n" },
	{ ".txt", "  work (/app.py:20)\n" },
	{ ".gecko.json", "{\"name\":\"Kernel\",\"color\":\"red\"" },
	{ ".gecko.json", "{\"name\":\"Native\",\"color\":\"blue\"" },
	{ ".gecko.json", "\"Off CPU\"" },        /* the leaf of the Python part is <off-CPU> */
	{ ".gecko.json", "\"[nf_tables]\"" },
};
/* ... and what it does not: (profile: 1 kinds, 0 threads; extension, text). */
static const struct { int kinds; const char *ext, *needle; } KINDS_NOT_SHOWN[] = {
	{ 1, ".heatmap.json", "[kernel]" }, { 1, ".heatmap.json", "libz" },
	{ 0, ".json", "kernel_stacks" }, { 0, ".json", "native_stacks" }, { 0, ".gecko.json", "\"Kernel\"" },
};

static void test_kinds(void **state)
{
	struct tb_profile p[2];

	(void)state;
	build_threads(&p[0]);
	build_kinds(&p[1]);
	p[1].json_version = 1; /* the .json needles are version 1's nodes */
	for (size_t i = 0; i < sizeof(KINDS_SHOWN) / sizeof(KINDS_SHOWN[0]); i++) {
		char *out = render(KINDS_SHOWN[i].ext, &p[1]);

		if (!strstr(out, KINDS_SHOWN[i].needle))
			fail_msg("%s: no %s", KINDS_SHOWN[i].ext, KINDS_SHOWN[i].needle);
		free(out);
	}
	for (size_t i = 0; i < sizeof(KINDS_NOT_SHOWN) / sizeof(KINDS_NOT_SHOWN[0]); i++) {
		char *out = render(KINDS_NOT_SHOWN[i].ext, &p[KINDS_NOT_SHOWN[i].kinds]);

		if (strstr(out, KINDS_NOT_SHOWN[i].needle))
			fail_msg("%s: has %s", KINDS_NOT_SHOWN[i].ext, KINDS_NOT_SHOWN[i].needle);
		free(out);
	}
	tb_profile_free(&p[0]);
	tb_profile_free(&p[1]);
}

/* The summary counts kernel frames and says why their names are missing. */
static void test_kinds_summary(void **state)
{
	struct tb_profile p;
	char *out = NULL;
	size_t n = 0;
	FILE *m;

	(void)state;
	build_kinds(&p);
	p.kstack.hidden = 1;
	m = open_memstream(&out, &n);
	tb_write_summary(&p, m, 20);
	fclose(m);
	has("summary", out, "  kernel: 11 samples and off-CPU stacks with kernel frames, 19 kernel frames, "
			    "8 kernel functions\n");
	has("summary", out, "  kernel symbols hidden: kptr_restrict=1 or no CAP_SYSLOG");
	has("summary", out, "  native: 8 samples with native frames, 9 native frames, 4 native functions; "
			    "5 merged, 1 unmerged (12.50%), 1 truncated; 0 shown partial (a library's table not "
			    "ready: its callers by frame pointer)\n");
	has("summary", out, "read_zero [kernel]\n");
	free(out);
	tb_profile_free(&p);
}

/* diff: kernel frames match by symbol, native ones by (module file name,
 * symbol): the same profile with libz in another directory is all matched. */
static void test_kinds_diff(void **state)
{
	struct tb_profile a, b;
	char *out;
	struct out o;

	(void)state;
	kinds_profile(&a, "/lib/x86_64-linux-gnu/libz.so.1");
	kinds_profile(&b, "/opt/venv/lib/libz.so.1");
	o = write_row(tb_format_find("x.folded"), &b, &a);
	out = o.d;
	has("diff .folded", out, ";libfoo.so+0x1230;deflate_slow (libz.so.1) 3 3\n");
	has("diff .folded", out, ";read_zero_[k] 5 5\n");
	has_not("diff .folded", out, " 0\n");
	free(out);
	o = write_row(tb_format_find("x.json"), &b, &a);
	has_not("diff .json", o.d, "\"class\":\"new\"");
	has_not("diff .json", o.d, "\"elided\":true");
	free(o.d);
	tb_profile_free(&a);
	tb_profile_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_checker),
		cmocka_unit_test(test_output_table),
		cmocka_unit_test(test_every_format),
		cmocka_unit_test(test_every_diff),
		cmocka_unit_test(test_one_line_per_entry),
		cmocka_unit_test(test_huge_counts),
		cmocka_unit_test(test_jsonl),
		cmocka_unit_test(test_pstats_sort_and_limit),
		cmocka_unit_test(test_gecko),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_kinds_summary),
		cmocka_unit_test(test_kinds_diff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
