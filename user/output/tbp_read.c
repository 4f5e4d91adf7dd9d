/* tbp_read.c: reads a capture file (version 1, 2 or 3) back into a profile
 * that every writer can render.  The file is untrusted: every count is
 * bounded by the bytes left before anything is allocated, every index is
 * range-checked, and any problem ends the read with one sentence
 * (docs/capture-format.md).  The payload is inflated as it is parsed
 * (output/tbp_io.c), from the file a block at a time: neither the file nor the
 * payload is ever held whole. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include "lib/mem.h"
#include "output/tbp.h"
#include "output/tbp_io.h"
#include "output/tbp_sections.h"

/* deflate cannot compress better than about 1032:1 */
#define MAX_RATIO 1032u
/* code objects sharing (pid, address, id) with an earlier one: only after
 * a pid was reused during the capture, so a handful at most */
#define MAX_DUP_CODES 1024u
/* largest file read: a header and a stored (incompressible) payload */
#define MAX_FILE (TB_CAP_MAX_PAYLOAD + (TB_CAP_MAX_PAYLOAD >> 8) + 4096)

/* Version 2's metadata after version 1's: native and kernel frames. */
static int read_meta_v2(struct tb_rd *r, struct tb_profile *p, uint32_t flags)
{
	const char *w = "metadata";
	int32_t kptr;

	p->kernel_samples = tb_rd_get(r, 8, w);
	p->kernel_frames = tb_rd_get(r, 8, w);
	p->native_samples = tb_rd_get(r, 8, w);
	p->native_frames = tb_rd_get(r, 8, w);
	p->merged = tb_rd_get(r, 8, w);
	p->unmerged = tb_rd_get(r, 8, w);
	p->native_truncated = tb_rd_get(r, 8, w);
	for (int i = 0; i < TB_NATIVE_STOPS; i++)
		p->native_stop[i] = tb_rd_get(r, 8, w);
	kptr = (int32_t)(uint32_t)tb_rd_get(r, 4, w);
	if (tb_rd_get(r, 4, w) && !r->failed)
		return tb_rd_fail(r, "the metadata has a reserved field set");
	p->off_cpu_records = tb_rd_get(r, 8, w);
	if (r->failed)
		return -1;
	if (kptr < -1 || kptr > 2)
		return tb_rd_fail(r, "the metadata holds an impossible kptr_restrict (%d)", kptr);
	p->kernel = (flags & TB_CAP_META_KERNEL) != 0;
	p->native = (flags & TB_CAP_META_NATIVE) != 0;
	p->kstack.hidden = (flags & TB_CAP_META_KSYMS_HIDDEN) != 0;
	p->kstack.kptr_restrict = kptr;
	return 0;
}

static int read_meta(struct tb_rd *r, struct tb_profile *p)
{
	const char *w = "metadata";
	uint32_t mode, flags, known = TB_CAP_META_BY_LINE | TB_CAP_META_NO_GC;

	p->hz = (unsigned)tb_rd_get(r, 4, w);
	p->max_depth = (unsigned)tb_rd_get(r, 4, w);
	p->duration_s = tb_rd_f64(r, w);
	p->start_unix = (int64_t)tb_rd_get(r, 8, w);
	p->agent_cpu_s = tb_rd_f64(r, w);
	p->first_ns = tb_rd_get(r, 8, w);
	p->last_ns = tb_rd_get(r, 8, w);
	p->samples = tb_rd_get(r, 8, w);
	p->python_samples = tb_rd_get(r, 8, w);
	p->no_python = tb_rd_get(r, 8, w);
	p->truncated = tb_rd_get(r, 8, w);
	p->partial = tb_rd_get(r, 8, w);
	p->frames = tb_rd_get(r, 8, w);
	p->unresolved_frames = tb_rd_get(r, 8, w);
	p->lost = tb_rd_get(r, 8, w);
	p->malformed = tb_rd_get(r, 8, w);
	p->filtered = tb_rd_get(r, 8, w);
	p->off_cpu_samples = tb_rd_get(r, 8, w);
	mode = (uint32_t)tb_rd_get(r, 4, w);
	flags = (uint32_t)tb_rd_get(r, 4, w);
	p->min_fraction = tb_rd_f64(r, w);
	if (r->failed)
		return -1;
	if (mode > TB_MODE_EXCEPTION)
		return tb_rd_fail(r, "the metadata names an unknown sampling mode (%u)", mode);
	if (r->version >= 2)
		known |= TB_CAP_META_KERNEL | TB_CAP_META_NATIVE | TB_CAP_META_KSYMS_HIDDEN;
	if (flags & ~known)
		return tb_rd_fail(r, "the metadata has invalid flags");
	p->mode = (enum tb_mode)mode;
	p->by_line = (flags & TB_CAP_META_BY_LINE) != 0;
	p->no_gc = (flags & TB_CAP_META_NO_GC) != 0;
	if (!isfinite(p->duration_s) || p->duration_s < 0 || !isfinite(p->agent_cpu_s) ||
	    !isfinite(p->min_fraction) || p->min_fraction < 0 || p->min_fraction > 1)
		return tb_rd_fail(r, "the metadata holds an impossible duration, CPU time or fraction");
	/* writers multiply it up to nanoseconds (pprof's int64 time_nanos) */
	if ((uint64_t)p->start_unix > INT64_MAX / 1000000000)
		return tb_rd_fail(r, "the metadata holds an impossible start time");
	return r->version >= 2 ? read_meta_v2(r, p, flags) : 0;
}

/* The string table: each string interned as it is read (in order: the same
 * ids as when written, unless the file repeats one), its id kept by the
 * file's. */
static int read_strings(struct tb_rd *r, struct tb_profile *p)
{
	uint32_t n = tb_rd_count(r, 5, "string table"), cap = 0;
	int first_set = 0;

	if (r->failed)
		return -1;
	if (n == 0)
		return tb_rd_fail(r, "the string table is empty");
	for (uint32_t i = 0; i < n; i++) {
		const char *s = tb_rd_str(r, "string table");

		if (!s)
			return -1;
		r->sids = tb_grow(r->sids, &cap, i + 1, sizeof(*r->sids), 1024); /* as strings come */
		if (i == 0)
			first_set = s[0] != 0;
		r->sids[i] = i ? tb_strtab_intern(&p->strs, s) : 0;
	}
	r->nstrs = n;
	if (first_set)
		return tb_rd_fail(r, "string 0 of the string table is not empty");
	return 0;
}

/* String id of the file (checked by tb_rd_strid) -> the string. */
static const char *file_str(const struct tb_rd *r, const struct tb_profile *p, uint32_t id)
{
	return tb_str(&p->strs, r->sids[id]);
}

static int read_processes(struct tb_rd *r, struct tb_profile *p)
{
	/* 40 fixed bytes and four strings of at least 5 bytes */
	uint32_t n = tb_rd_count(r, 60, "process");

	for (uint32_t i = 0; i < n && !r->failed; i++) {
		struct tb_target t;
		char version[32] = "";
		uint32_t ns_pid, vh, reserved, idx;
		uint64_t samples;
		unsigned ft, shared;

		memset(&t, 0, sizeof(t));
		t.pid = (pid_t)tb_rd_get(r, 4, "process");
		ns_pid = (uint32_t)tb_rd_get(r, 4, "process");
		samples = tb_rd_get(r, 8, "process");
		vh = (uint32_t)tb_rd_get(r, 4, "process");
		ft = (unsigned)tb_rd_get(r, 1, "process");
		shared = (unsigned)tb_rd_get(r, 1, "process");
		reserved = (uint32_t)tb_rd_get(r, 2, "process");
		t.runtime_addr = tb_rd_get(r, 8, "process");
		t.pycode_type = tb_rd_get(r, 8, "process");
		tb_rd_copy_str(r, t.name, sizeof(t.name), "process name");
		tb_rd_copy_str(r, t.cmdline, sizeof(t.cmdline), "process command line");
		tb_rd_copy_str(r, t.elf_path, sizeof(t.elf_path), "process executable path");
		tb_rd_copy_str(r, version, sizeof(version), "process Python version");
		if (r->failed)
			return -1;
		if (ft > 1 || shared > 1 || reserved)
			return tb_rd_fail(r, "process %u has invalid flags", i);
		t.shared_lib = (int)shared;
		t.layout.version_hex = vh;
		t.layout.major = (vh >> 24) & 0xff;
		t.layout.minor = (vh >> 16) & 0xff;
		t.layout.micro = (vh >> 8) & 0xff;
		t.layout.free_threaded = (int)ft;
		t.layout.bpf.py_version = vh;
		idx = tb_profile_add_ended(p, &t);
		p->procs[idx].ns_pid = ns_pid;
		p->procs[idx].samples = samples;
		p->procs[idx].version = tb_strtab_intern(&p->pstrs, version);
	}
	return r->failed ? -1 : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int sort_pids(struct tb_rd *r, const struct tb_profile *p)
{
	r->pids = malloc((p->nprocs ? p->nprocs : 1) * sizeof(*r->pids));
	if (!r->pids)
		return tb_rd_fail(r, "out of memory");
	for (uint32_t i = 0; i < p->nprocs; i++)
		r->pids[i] = p->procs[i].pid;
	r->npids = p->nprocs;
	tb_qsort(r->pids, r->npids, sizeof(*r->pids), cmp_u32);
	return 0;
}

static int read_threads(struct tb_rd *r, struct tb_profile *p)
{
	uint32_t n = tb_rd_count(r, 92, "thread");

	for (uint32_t i = 0; i < n && !r->failed; i++) {
		uint32_t pid = (uint32_t)tb_rd_get(r, 4, "thread");
		uint32_t tid = (uint32_t)tb_rd_get(r, 4, "thread");
		uint32_t ns_tid = (uint32_t)tb_rd_get(r, 4, "thread");
		uint32_t name = tb_rd_strid(r, "thread");
		uint32_t comm = tb_rd_strid(r, "thread");
		struct tb_tinfo *t;
		uint32_t idx;

		if (r->failed)
			return -1;
		if (!bsearch(&pid, r->pids, r->npids, sizeof(pid), cmp_u32))
			return tb_rd_fail(r, "thread %u belongs to pid %u, which is not among the processes",
				    i, pid);
		idx = tb_profile_add_thread(p, pid, tid, ns_tid, file_str(r, p, name));
		t = &p->threads[idx]; /* after the call: it may move the array */
		t->comm = r->sids[comm];
		t->python_name = t->comm != t->name;
		t->ident = tb_rd_get(r, 8, "thread");
		t->samples = tb_rd_get(r, 8, "thread");
		t->python_samples = tb_rd_get(r, 8, "thread");
		t->on_cpu = tb_rd_get(r, 8, "thread");
		t->off_cpu = tb_rd_get(r, 8, "thread");
		t->gil_held = tb_rd_get(r, 8, "thread");
		t->gil_wait = tb_rd_get(r, 8, "thread");
		t->gc = tb_rd_get(r, 8, "thread");
		t->exception = tb_rd_get(r, 8, "thread");
	}
	return r->failed ? -1 : 0;
}

/* The kind of a code object from its flags (version 2: native, kernel),
 * or -1 if they are invalid. */
static int code_kind(const struct tb_rd *r, unsigned flags)
{
	unsigned kinds = flags & (TB_CAP_CODE_NATIVE | TB_CAP_CODE_KERNEL);

	if (flags & ~(TB_CAP_CODE_RESOLVED | TB_CAP_CODE_NATIVE | TB_CAP_CODE_KERNEL) ||
	    (kinds && r->version < 2) || kinds == (TB_CAP_CODE_NATIVE | TB_CAP_CODE_KERNEL))
		return -1;
	return kinds == TB_CAP_CODE_NATIVE ? TB_CODE_NATIVE : kinds ? TB_CODE_KERNEL : TB_CODE_PYTHON;
}

/* Insert a code object read from the file: its index. */
static uint32_t insert_code(struct tb_profile *p, int kind, pid_t pid, uint64_t addr, uint16_t code_id,
			    int py_minor, const char *qualname, const char *filename, int32_t firstlineno,
			    const unsigned char *table, uint32_t tlen)
{
	if (kind != TB_CODE_PYTHON)
		return tb_sym_function(&p->sym, (enum tb_code_kind)kind, addr, qualname, filename);
	return tb_sym_insert(&p->sym, pid, addr, code_id, py_minor, qualname, filename, firstlineno,
			     table, tlen);
}

static int read_codes(struct tb_rd *r, struct tb_profile *p)
{
	uint32_t n = tb_rd_count(r, 36, "code object"), dups = 0;

	for (uint32_t i = 0; i < n && !r->failed; i++) {
		pid_t pid = (pid_t)tb_rd_get(r, 4, "code object");
		uint64_t addr = tb_rd_get(r, 8, "code object");
		uint16_t code_id = (uint16_t)tb_rd_get(r, 2, "code object");
		unsigned flags = (unsigned)tb_rd_get(r, 1, "code object");
		int py_minor = (int)tb_rd_get(r, 1, "code object");
		uint32_t qualname = tb_rd_strid(r, "code object");
		uint32_t filename = tb_rd_strid(r, "code object");
		int32_t firstlineno = (int32_t)(uint32_t)tb_rd_get(r, 4, "code object");
		uint32_t nbytes = (uint32_t)tb_rd_get(r, 4, "code object");
		uint32_t tlen = (uint32_t)tb_rd_get(r, 4, "code object");
		const unsigned char *table = tb_rd_take(r, tlen, "code object line table");
		int kind = code_kind(r, flags);
		uint32_t idx;

		if (r->failed)
			return -1;
		if (kind < 0)
			return tb_rd_fail(r, "code object %u has invalid flags", i);
		/* a native or kernel function: pid 0, no bytecode, no lines */
		if (kind != TB_CODE_PYTHON && (pid || code_id || py_minor || firstlineno || nbytes || tlen))
			return tb_rd_fail(r, "code object %u is a %s function with a pid, bytecode or lines", i,
				    tb_code_kind_name((unsigned)kind));
		idx = insert_code(p, kind, pid, addr, code_id, py_minor, file_str(r, p, qualname),
				  file_str(r, p, filename), firstlineno, table, tlen);
		if (idx != i) {
			/* same (pid, address, id) as an earlier, forgotten one: keep both
			 * (a few: each one lengthens the symbolizer's probe chains) */
			if (++dups > MAX_DUP_CODES)
				return tb_rd_fail(r, "more than %u code objects repeat an earlier one's address",
					    MAX_DUP_CODES);
			p->sym.codes[idx].dead = 1;
			idx = insert_code(p, kind, pid, addr, code_id, py_minor, file_str(r, p, qualname),
					  file_str(r, p, filename), firstlineno, table, tlen);
		}
		if (idx != i)
			return tb_rd_fail(r, "code object %u could not be indexed", i);
		p->sym.codes[idx].resolved = (uint8_t)(flags & TB_CAP_CODE_RESOLVED);
		p->sym.codes[idx].nbytes = nbytes;
		if (!(flags & TB_CAP_CODE_RESOLVED))
			p->sym.unresolved_codes++;
	}
	return r->failed ? -1 : 0;
}

static int read_stacks(struct tb_rd *r, struct tb_profile *p)
{
	uint32_t n = tb_rd_count(r, 16, "stack");
	/* version 1: the frames read, and one synthetic leaf (<GC>, <off-CPU>)
	 * below them; version 2: native and kernel frames too */
	unsigned max_depth = r->version >= 2 ? TB_MAX_STACK : TB_MAX_FRAMES + 1;
	struct tb_sframe *f;

	if (r->failed)
		return -1;
	f = malloc(max_depth * sizeof(*f));
	if (!f)
		return tb_rd_fail(r, "out of memory");
	for (uint32_t i = 0; i < n && !r->failed; i++) {
		uint32_t thread = (uint32_t)tb_rd_get(r, 4, "stack");
		uint16_t kind = (uint16_t)tb_rd_get(r, 2, "stack");
		uint16_t depth = (uint16_t)tb_rd_get(r, 2, "stack");
		uint64_t count = tb_rd_get(r, 8, "stack");
		const unsigned char *d;

		if (r->failed)
			break;
		if (thread >= p->nthreads) {
			tb_rd_fail(r, "stack %u names thread %u of %u", i, thread, p->nthreads);
			break;
		}
		if (kind & ~(unsigned)(TB_SK_TRUNCATED | TB_SK_PARTIAL | TB_SK_NATIVE_PARTIAL)) {
			tb_rd_fail(r, "stack %u has invalid flags", i);
			break;
		}
		if (depth == 0 || depth > max_depth) {
			tb_rd_fail(r, "stack %u is %u frames deep (1 to %u)", i, depth, max_depth);
			break;
		}
		d = tb_rd_take(r, (size_t)depth * 10, "stack frames");
		for (uint16_t k = 0; d && k < depth; k++, d += 10) {
			f[k].code = (uint32_t)tb_rd_le(d, 4);
			f[k].offset = (int32_t)(uint32_t)tb_rd_le(d + 4, 4);
			f[k].opcode = d[8];
			f[k].has_opcode = d[9] ? 1 : 0;
			if (f[k].code >= p->sym.n) {
				tb_rd_fail(r, "stack %u names code object %u of %u", i, f[k].code, p->sym.n);
				break;
			}
		}
		if (!r->failed)
			tb_profile_add_stack(p, thread, kind, f, depth, count);
	}
	free(f);
	return r->failed ? -1 : 0;
}

/* The payload, as it is inflated: the sections in order, then the end of
 * the stream exactly where the header said.  A stream that does not
 * decompress says so rather than what its damaged bytes made the parser
 * see, as when it was inflated whole before parsing: the rest is inflated
 * (unread) after a parse error too, and zlib's sentence replaces it. */
static int parse_payload(struct tb_rd_src *src, uint64_t plen, unsigned version, struct tb_profile *p,
			 char *err, size_t errlen)
{
	struct tb_rd r = { src, (size_t)plen, version, err, errlen, 0, NULL, 0, NULL, 0 };

	if (!read_meta(&r, p) && !read_strings(&r, p) && !read_processes(&r, p) && !sort_pids(&r, p) &&
	    !read_threads(&r, p) && !read_codes(&r, p) && !read_stacks(&r, p) &&
	    (version < 3 || !tb_cap_sections_read(&r, p))) {
		size_t extra = r.left;

		if (!tb_rd_src_drain(&r) && extra)
			tb_rd_fail(&r, "%zu unexpected bytes follow the %s", extra,
				   version < 3 ? "stacks" : "extension sections");
	} else {
		struct tb_rd rest = r;

		rest.failed = 0; /* its sentence, if any, goes over the parser's */
		tb_rd_src_drain(&rest);
	}
	free(r.sids);
	free(r.pids);
	return r.failed ? -1 : 0;
}

static int read_header(const unsigned char *b, size_t len, unsigned *version, uint64_t *plen,
		       uint64_t *zlen, char *err, size_t errlen)
{
	unsigned flags;

	if (len == 0) {
		snprintf(err, errlen, "empty file, not a capture");
		return -1;
	}
	if (memcmp(b, TB_CAP_MAGIC, len < TB_CAP_MAGIC_LEN ? len : TB_CAP_MAGIC_LEN)) {
		snprintf(err, errlen, "not a tachyon-bpf capture (bad magic)");
		return -1;
	}
	if (len < TB_CAP_HEADER_SIZE) {
		snprintf(err, errlen, "truncated capture: %zu bytes, shorter than the header", len);
		return -1;
	}
	*version = (unsigned)tb_rd_le(b + 8, 2);
	flags = (unsigned)tb_rd_le(b + 10, 2);
	*plen = tb_rd_le(b + 16, 8);
	*zlen = tb_rd_le(b + 24, 8);
	if (*version > TB_CAP_VERSION) {
		snprintf(err, errlen, "capture format version %u is newer than this tachyon-bpf reads (%u)",
			 *version, TB_CAP_VERSION);
		return -1;
	}
	if (*version == 0 || flags != TB_CAP_FLAG_ZLIB || tb_rd_le(b + 12, 4)) {
		snprintf(err, errlen, "corrupt capture header (version %u, flags 0x%x)", *version, flags);
		return -1;
	}
	if (*zlen != len - TB_CAP_HEADER_SIZE) {
		snprintf(err, errlen, "%s capture: the header announces %llu compressed bytes, %zu follow",
			 *zlen > len - TB_CAP_HEADER_SIZE ? "truncated" : "corrupt",
			 (unsigned long long)*zlen, len - TB_CAP_HEADER_SIZE);
		return -1;
	}
	if (*plen > TB_CAP_MAX_PAYLOAD) {
		snprintf(err, errlen, "the header announces a %llu-byte payload, over the %llu-byte limit",
			 (unsigned long long)*plen, (unsigned long long)TB_CAP_MAX_PAYLOAD);
		return -1;
	}
	if (*plen > *zlen * MAX_RATIO + 64) {
		snprintf(err, errlen, "corrupt capture: %llu compressed bytes cannot hold %llu bytes",
			 (unsigned long long)*zlen, (unsigned long long)*plen);
		return -1;
	}
	return 0;
}

/* A capture of len bytes whose first min(len, 32) are in hdr: the header
 * checked, then the payload inflated from `in` (the bytes after the header,
 * in memory) or from f (positioned there). */
static int read_payload(const unsigned char *hdr, size_t len, const unsigned char *in, FILE *f,
			struct tb_profile *out, char *err, size_t errlen)
{
	struct tb_rd_src *src;
	uint64_t plen, zlen;
	unsigned version;
	int rc;

	if (read_header(hdr, len, &version, &plen, &zlen, err, errlen))
		return -1;
	src = tb_rd_src_new(in, f, zlen, plen);
	if (!src) {
		snprintf(err, errlen, "out of memory for the payload");
		return -1;
	}
	rc = parse_payload(src, plen, version, out, err, errlen);
	tb_rd_src_free(src);
	return rc;
}

int tb_read_capture_mem(const void *buf, size_t len, struct tb_profile *out, char *err,
			size_t errlen)
{
	const unsigned char *b = buf;

	tb_profile_init(out);
	if (read_payload(b, len, len >= TB_CAP_HEADER_SIZE ? b + TB_CAP_HEADER_SIZE : NULL, NULL, out, err,
			 errlen)) {
		tb_profile_free(out);
		return -1;
	}
	return 0;
}

/* A file that is not a regular one (a pipe): read whole, up to the largest capture. */
static int read_unsized(FILE *f, struct tb_profile *out, char *err, size_t errlen)
{
	unsigned char *b = NULL;
	size_t n = 0, cap = 0;
	int rc;

	for (;;) {
		size_t got;

		if (n == cap) {
			unsigned char *nb;

			if (cap > MAX_FILE) {
				snprintf(err, errlen, "file is larger than any capture can be");
				goto fail;
			}
			cap = cap ? cap * 2 : 65536;
			if (cap > MAX_FILE + 1)
				cap = MAX_FILE + 1;
			nb = realloc(b, cap);
			if (!nb) {
				snprintf(err, errlen, "out of memory reading the file");
				goto fail;
			}
			b = nb;
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "read error: %s", strerror(errno));
		goto fail;
	}
	rc = tb_read_capture_mem(b, n, out, err, errlen);
	free(b);
	return rc;
fail:
	free(b);
	tb_profile_init(out);
	tb_profile_free(out);
	return -1;
}

int tb_read_capture(const char *path, struct tb_profile *out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	unsigned char hdr[TB_CAP_HEADER_SIZE];
	struct stat st;
	size_t got;
	int rc = -1;

	tb_profile_init(out);
	if (!f) {
		snprintf(err, errlen, "cannot open: %s", strerror(errno));
		tb_profile_free(out);
		return -1;
	}
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		tb_profile_free(out);
		rc = read_unsized(f, out, err, errlen);
		fclose(f);
		return rc;
	}
	if ((uint64_t)st.st_size > MAX_FILE) {
		snprintf(err, errlen, "file is larger than any capture can be");
		goto out;
	}
	got = fread(hdr, 1, sizeof(hdr), f);
	if (ferror(f)) {
		snprintf(err, errlen, "read error: %s", strerror(errno));
		goto out;
	}
	/* the size the file had (a file cut since reads as cut) */
	rc = read_payload(hdr, got < sizeof(hdr) ? got : (size_t)st.st_size, NULL, f, out, err, errlen);
	if (!rc && ferror(f)) {
		snprintf(err, errlen, "read error: %s", strerror(errno));
		rc = -1;
	}
out:
	fclose(f);
	if (rc)
		tb_profile_free(out);
	return rc;
}
