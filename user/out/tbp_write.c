/* tbp_write.c: writes a profile as a capture file (`-o capture.tbp`):
 * a fixed header, then one zlib stream holding the metadata, strings,
 * processes, threads, code objects and aggregated stacks, as little-endian
 * fixed-width integers (docs/capture-format.md); version 1 unless the
 * profile holds what version 2 adds (native and kernel frames). */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "lib/mem.h"
#include "out/tbp.h"


static void put_le(struct tb_buf *b, uint64_t v, int bytes)
{
	unsigned char *d = tb_buf_room(b, (size_t)bytes);

	for (int i = 0; i < bytes; i++)
		d[i] = (unsigned char)(v >> (8 * i));
}

static void u8(struct tb_buf *b, unsigned v) { put_le(b, v, 1); }
static void u16(struct tb_buf *b, unsigned v) { put_le(b, v, 2); }
static void u32(struct tb_buf *b, uint32_t v) { put_le(b, v, 4); }
static void u64(struct tb_buf *b, uint64_t v) { put_le(b, v, 8); }

static void f64(struct tb_buf *b, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	u64(b, bits);
}

/* u32 length, the bytes, a NUL */
static void str(struct tb_buf *b, const char *s, size_t max)
{
	size_t len = strnlen(s, max);

	u32(b, (uint32_t)len);
	memcpy(tb_buf_room(b, len), s, len);
	u8(b, 0);
}

/* Does p need version 2: native or kernel frames, their settings or counts,
 * a stack deeper than version 1 allows? */
static int needs_v2(const struct tb_profile *p)
{
	uint64_t counts = p->kernel_samples | p->kernel_frames | p->native_samples | p->native_frames |
			  p->merged | p->unmerged | p->native_truncated;

	for (int i = 0; i < TB_NATIVE_STOPS; i++)
		counts |= p->native_stop[i];
	if (p->kernel || p->native || counts)
		return 1;
	for (uint32_t i = 0; i < p->sym.n; i++)
		if (p->sym.codes[i].kind != TB_CODE_PYTHON)
			return 1;
	for (uint32_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].depth > TB_MAX_FRAMES + 1)
			return 1;
	return 0;
}

static unsigned meta_flags(const struct tb_profile *p, int version)
{
	unsigned flags = (p->by_line ? TB_CAP_META_BY_LINE : 0) | (p->no_gc ? TB_CAP_META_NO_GC : 0);

	if (version >= 2)
		flags |= (p->kernel ? TB_CAP_META_KERNEL : 0) | (p->native ? TB_CAP_META_NATIVE : 0) |
			 (p->kstack.hidden ? TB_CAP_META_KSYMS_HIDDEN : 0);
	return flags;
}

static void put_meta(struct tb_buf *b, const struct tb_profile *p, int version)
{
	u32(b, p->hz);
	u32(b, p->max_depth);
	f64(b, p->duration_s);
	u64(b, (uint64_t)p->start_unix);
	f64(b, p->agent_cpu_s);
	u64(b, p->first_ns);
	u64(b, p->last_ns);
	u64(b, p->samples);
	u64(b, p->python_samples);
	u64(b, p->no_python);
	u64(b, p->truncated);
	u64(b, p->partial);
	u64(b, p->frames);
	u64(b, p->unresolved_frames);
	u64(b, p->lost);
	u64(b, p->malformed);
	u64(b, p->filtered);
	u64(b, p->off_cpu_samples);
	u32(b, (uint32_t)p->mode);
	u32(b, meta_flags(p, version));
	f64(b, p->min_fraction);
	if (version < 2)
		return;
	u64(b, p->kernel_samples);
	u64(b, p->kernel_frames);
	u64(b, p->native_samples);
	u64(b, p->native_frames);
	u64(b, p->merged);
	u64(b, p->unmerged);
	u64(b, p->native_truncated);
	for (int i = 0; i < TB_NATIVE_STOPS; i++)
		u64(b, p->native_stop[i]);
	u32(b, (uint32_t)p->kstack.kptr_restrict);
	u32(b, 0);
	u64(b, p->off_cpu_records);
}

static void put_strings(struct tb_buf *b, const struct tb_profile *p)
{
	if (!p->strs.n) { /* never for an initialized profile: id 0 is "" */
		u32(b, 1);
		str(b, "", 1);
		return;
	}
	u32(b, p->strs.n);
	for (uint32_t i = 0; i < p->strs.n; i++)
		str(b, p->strs.strs[i], (size_t)-1);
}

static void put_processes(struct tb_buf *b, const struct tb_profile *p)
{
	u32(b, p->nprocs);
	for (uint32_t i = 0; i < p->nprocs; i++) {
		const struct tb_pinfo *pi = &p->procs[i];

		u32(b, pi->pid);
		u32(b, pi->ns_pid);
		u64(b, pi->samples);
		u32(b, pi->version_hex);
		u8(b, pi->free_threaded);
		u8(b, pi->shared_lib);
		u16(b, 0);
		u64(b, pi->runtime_addr);
		u64(b, pi->pycode_type);
		/* each bounded as its struct tb_target field (where it came from) */
		str(b, tb_str(&p->pstrs, pi->comm), 32);
		str(b, tb_str(&p->pstrs, pi->cmdline), 256);
		str(b, tb_str(&p->pstrs, pi->elf_path), PATH_MAX);
		str(b, tb_str(&p->pstrs, pi->version), 32);
	}
}

static void put_threads(struct tb_buf *b, const struct tb_profile *p)
{
	u32(b, p->nthreads);
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct tb_tinfo *t = &p->threads[i];

		u32(b, t->pid);
		u32(b, t->tid);
		u32(b, t->ns_tid);
		u32(b, t->name < p->strs.n ? t->name : 0);
		u32(b, t->comm < p->strs.n ? t->comm : 0);
		u64(b, t->ident);
		u64(b, t->samples);
		u64(b, t->python_samples);
		u64(b, t->on_cpu);
		u64(b, t->off_cpu);
		u64(b, t->gil_held);
		u64(b, t->gil_wait);
		u64(b, t->gc);
		u64(b, t->exception);
	}
}

static void put_codes(struct tb_buf *b, const struct tb_profile *p)
{
	u32(b, p->sym.n);
	for (uint32_t i = 0; i < p->sym.n; i++) {
		const struct tb_code *c = &p->sym.codes[i];
		uint32_t tlen = c->linetable ? c->linetable_len : 0;

		u32(b, (uint32_t)c->pid);
		u64(b, c->addr);
		u16(b, c->code_id);
		u8(b, (c->resolved ? TB_CAP_CODE_RESOLVED : 0) |
		      (c->kind == TB_CODE_NATIVE ? TB_CAP_CODE_NATIVE : 0) |
		      (c->kind == TB_CODE_KERNEL ? TB_CAP_CODE_KERNEL : 0));
		u8(b, c->py_minor);
		u32(b, c->qualname < p->strs.n ? c->qualname : 0);
		u32(b, c->filename < p->strs.n ? c->filename : 0);
		u32(b, (uint32_t)c->firstlineno);
		u32(b, c->nbytes);
		u32(b, tlen);
		if (tlen)
			memcpy(tb_buf_room(b, tlen), c->linetable, tlen);
	}
}

static void put_stacks(struct tb_buf *b, const struct tb_profile *p)
{
	u32(b, p->nstacks);
	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct tb_stack *s = &p->stacks[i];
		const struct tb_sframe *f = tb_stack_frames(p, s);

		u32(b, s->thread);
		u16(b, s->kind);
		u16(b, s->depth);
		u64(b, s->count);
		for (uint16_t d = 0; d < s->depth; d++) {
			u32(b, f[d].code);
			u32(b, (uint32_t)f[d].offset);
			u8(b, f[d].opcode);
			u8(b, f[d].has_opcode ? 1 : 0);
		}
	}
}

int tb_write_capture(const struct tb_profile *p, FILE *f)
{
	struct tb_buf pay = { 0 }, hdr = { 0 };
	unsigned char *z = NULL;
	uLongf zlen;
	int rc = -1, version = needs_v2(p) ? 2 : 1;

	put_meta(&pay, p, version);
	put_strings(&pay, p);
	put_processes(&pay, p);
	put_threads(&pay, p);
	put_codes(&pay, p);
	put_stacks(&pay, p);

	if (pay.n > TB_CAP_MAX_PAYLOAD) /* the reader would refuse it */
		goto out;
	zlen = compressBound(pay.n);
	z = malloc(zlen);
	if (!z)
		goto out;
	if (compress2(z, &zlen, pay.d, pay.n, 6) != Z_OK)
		goto out;
	memcpy(tb_buf_room(&hdr, TB_CAP_MAGIC_LEN), TB_CAP_MAGIC, TB_CAP_MAGIC_LEN);
	u16(&hdr, (unsigned)version);
	u16(&hdr, TB_CAP_FLAG_ZLIB);
	u32(&hdr, 0);
	u64(&hdr, pay.n);
	u64(&hdr, zlen);
	if (fwrite(hdr.d, 1, hdr.n, f) == hdr.n && fwrite(z, 1, zlen, f) == zlen)
		rc = 0;
out:
	free(z);
	free(pay.d);
	free(hdr.d);
	return rc || ferror(f) ? -1 : 0;
}
