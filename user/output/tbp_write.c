/* tbp_write.c: writes a profile as a capture file (`-o capture.tbp`):
 * a fixed header, then one zlib stream holding the metadata, strings,
 * processes, threads, code objects and aggregated stacks, as little-endian
 * fixed-width integers (docs/capture-format.md); version 1 unless the
 * profile holds what version 2 adds (native and kernel frames), version 3
 * when it holds extension sections (output/tbp_sections.h).  The payload is
 * deflated as it is built, a chunk at a time (an hour of a busy host is
 * hundreds of megabytes of it), and the compressed bytes go straight to the
 * file: the header, which gives their size, is written first with zeros and
 * again at the end.  Only when the file cannot seek back (a pipe) are the
 * compressed bytes kept whole until the header is known. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "lib/mem.h"
#include "output/tbp.h"
#include "output/tbp_io.h"
#include "output/tbp_sections.h"


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
	tb_cap_u32(b, p->hz);
	tb_cap_u32(b, p->max_depth);
	tb_cap_f64(b, p->duration_s);
	tb_cap_u64(b, (uint64_t)p->start_unix);
	tb_cap_f64(b, p->agent_cpu_s);
	tb_cap_u64(b, p->first_ns);
	tb_cap_u64(b, p->last_ns);
	tb_cap_u64(b, p->samples);
	tb_cap_u64(b, p->python_samples);
	tb_cap_u64(b, p->no_python);
	tb_cap_u64(b, p->truncated);
	tb_cap_u64(b, p->partial);
	tb_cap_u64(b, p->frames);
	tb_cap_u64(b, p->unresolved_frames);
	tb_cap_u64(b, p->lost);
	tb_cap_u64(b, p->malformed);
	tb_cap_u64(b, p->filtered);
	tb_cap_u64(b, p->off_cpu_samples);
	tb_cap_u32(b, (uint32_t)p->mode);
	tb_cap_u32(b, meta_flags(p, version));
	tb_cap_f64(b, p->min_fraction);
	if (version < 2)
		return;
	tb_cap_u64(b, p->kernel_samples);
	tb_cap_u64(b, p->kernel_frames);
	tb_cap_u64(b, p->native_samples);
	tb_cap_u64(b, p->native_frames);
	tb_cap_u64(b, p->merged);
	tb_cap_u64(b, p->unmerged);
	tb_cap_u64(b, p->native_truncated);
	for (int i = 0; i < TB_NATIVE_STOPS; i++)
		tb_cap_u64(b, p->native_stop[i]);
	tb_cap_u32(b, (uint32_t)p->kstack.kptr_restrict);
	tb_cap_u32(b, 0);
	tb_cap_u64(b, p->off_cpu_records);
}

static void put_strings(struct tb_cap_out *o, const struct tb_profile *p)
{
	struct tb_buf *b = &o->b;

	if (!p->strs.n) { /* never for an initialized profile: id 0 is "" */
		tb_cap_u32(b, 1);
		tb_cap_str(b, "", 1);
		return;
	}
	tb_cap_u32(b, p->strs.n);
	for (uint32_t i = 0; i < p->strs.n; i++) {
		tb_cap_str(b, p->strs.strs[i], (size_t)-1);
		tb_cap_out_chunk(o);
	}
}

static void put_processes(struct tb_cap_out *o, const struct tb_profile *p)
{
	struct tb_buf *b = &o->b;

	tb_cap_u32(b, p->nprocs);
	for (uint32_t i = 0; i < p->nprocs; i++) {
		const struct tb_pinfo *pi = &p->procs[i];

		tb_cap_u32(b, pi->pid);
		tb_cap_u32(b, pi->ns_pid);
		tb_cap_u64(b, pi->samples);
		tb_cap_u32(b, pi->version_hex);
		tb_cap_u8(b, pi->free_threaded);
		tb_cap_u8(b, pi->shared_lib);
		tb_cap_u16(b, 0);
		tb_cap_u64(b, pi->runtime_addr);
		tb_cap_u64(b, pi->pycode_type);
		/* each bounded as its struct tb_target field (where it came from) */
		tb_cap_str(b, tb_str(&p->pstrs, pi->comm), TB_PROCNAME_MAX - 1); /* its name */
		tb_cap_str(b, tb_str(&p->pstrs, pi->cmdline), 256);
		tb_cap_str(b, tb_str(&p->pstrs, pi->elf_path), PATH_MAX);
		tb_cap_str(b, tb_str(&p->pstrs, pi->version), 32);
		tb_cap_out_chunk(o);
	}
}

static void put_threads(struct tb_cap_out *o, const struct tb_profile *p)
{
	struct tb_buf *b = &o->b;

	tb_cap_u32(b, p->nthreads);
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct tb_tinfo *t = &p->threads[i];

		tb_cap_u32(b, t->pid);
		tb_cap_u32(b, t->tid);
		tb_cap_u32(b, t->ns_tid);
		tb_cap_u32(b, t->name < p->strs.n ? t->name : 0);
		tb_cap_u32(b, t->comm < p->strs.n ? t->comm : 0);
		tb_cap_u64(b, t->ident);
		tb_cap_u64(b, t->samples);
		tb_cap_u64(b, t->python_samples);
		tb_cap_u64(b, t->on_cpu);
		tb_cap_u64(b, t->off_cpu);
		tb_cap_u64(b, t->gil_held);
		tb_cap_u64(b, t->gil_wait);
		tb_cap_u64(b, t->gc);
		tb_cap_u64(b, t->exception);
		tb_cap_out_chunk(o);
	}
}

static void put_codes(struct tb_cap_out *o, const struct tb_profile *p)
{
	struct tb_buf *b = &o->b;

	tb_cap_u32(b, p->sym.n);
	for (uint32_t i = 0; i < p->sym.n; i++) {
		const struct tb_code *c = &p->sym.codes[i];
		uint32_t tlen = c->linetable ? c->linetable_len : 0;

		tb_cap_u32(b, (uint32_t)c->pid);
		tb_cap_u64(b, c->addr);
		tb_cap_u16(b, c->code_id);
		tb_cap_u8(b, (c->resolved ? TB_CAP_CODE_RESOLVED : 0) |
		      (c->kind == TB_CODE_NATIVE ? TB_CAP_CODE_NATIVE : 0) |
		      (c->kind == TB_CODE_KERNEL ? TB_CAP_CODE_KERNEL : 0));
		tb_cap_u8(b, c->py_minor);
		tb_cap_u32(b, c->qualname < p->strs.n ? c->qualname : 0);
		tb_cap_u32(b, c->filename < p->strs.n ? c->filename : 0);
		tb_cap_u32(b, (uint32_t)c->firstlineno);
		tb_cap_u32(b, c->nbytes);
		tb_cap_u32(b, tlen);
		if (tlen)
			memcpy(tb_buf_room(b, tlen), c->linetable, tlen);
		tb_cap_out_chunk(o);
	}
}

static void put_stacks(struct tb_cap_out *o, const struct tb_profile *p)
{
	struct tb_buf *b = &o->b;

	tb_cap_u32(b, p->nstacks);
	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct tb_stack *s = &p->stacks[i];
		const struct tb_sframe *f = tb_stack_frames(p, s);

		tb_cap_u32(b, s->thread);
		tb_cap_u16(b, s->kind);
		tb_cap_u16(b, s->depth);
		tb_cap_u64(b, s->count);
		for (uint16_t d = 0; d < s->depth; d++) {
			tb_cap_u32(b, f[d].code);
			tb_cap_u32(b, (uint32_t)f[d].offset);
			tb_cap_u8(b, f[d].opcode);
			tb_cap_u8(b, f[d].has_opcode ? 1 : 0);
		}
		tb_cap_out_chunk(o);
	}
}

/* The payload on its way to the file: put in o.b, deflated a chunk at a
 * time into zb, which goes to the file at once (seekable) or stays whole. */
struct sink {
	struct tb_cap_out o;    /* first: the pass finds the sink from it */
	struct tb_buf zb;
	z_stream z;
	FILE *f;
	int seekable;           /* zb goes to f as it fills; the header is written again at the end */
	uint64_t packed;        /* compressed bytes made */
};

static void sink_deflate(struct sink *k, int flush)
{
	if (k->o.failed)
		return;
	k->o.n += k->o.b.n;
	if (k->o.n > TB_CAP_MAX_PAYLOAD) { /* the reader would refuse it */
		k->o.failed = 1;
		return;
	}
	k->z.next_in = k->o.b.d;
	k->z.avail_in = (uInt)k->o.b.n;
	do {
		const size_t room = 1u << 16;

		k->z.next_out = tb_buf_room(&k->zb, room);
		k->z.avail_out = (uInt)room;
		if (deflate(&k->z, flush) == Z_STREAM_ERROR) {
			k->o.failed = 1;
			return;
		}
		k->zb.n -= k->z.avail_out; /* the room not used */
		k->packed += room - k->z.avail_out;
		if (k->seekable) {
			if (fwrite(k->zb.d, 1, k->zb.n, k->f) != k->zb.n)
				k->o.failed = 1;
			k->zb.n = 0;
		}
	} while (k->z.avail_out == 0);
	k->o.b.n = 0;
}

static void sink_pass(struct tb_cap_out *o)
{
	sink_deflate((struct sink *)o, Z_NO_FLUSH);
}

/* Can f go back to write the header: where it starts, or -1 (a pipe, a
 * terminal, a file opened for appending)? */
static long seek_start(FILE *f)
{
	long at = ftell(f);
	int fd = fileno(f), fl = fd >= 0 ? fcntl(fd, F_GETFL) : 0;

	if (at < 0 || fl < 0 || (fl & O_APPEND) || fseek(f, at, SEEK_SET))
		return -1;
	return at;
}

static void put_header(struct tb_buf *hdr, int version, uint64_t raw, uint64_t packed)
{
	hdr->n = 0;
	memcpy(tb_buf_room(hdr, TB_CAP_MAGIC_LEN), TB_CAP_MAGIC, TB_CAP_MAGIC_LEN);
	tb_cap_u16(hdr, (unsigned)version);
	tb_cap_u16(hdr, TB_CAP_FLAG_ZLIB);
	tb_cap_u32(hdr, 0);
	tb_cap_u64(hdr, raw);
	tb_cap_u64(hdr, packed);
}

/* Level 1: on an hour-sized payload 4.5 times faster than level 6 for 13% more bytes. */
#define CAPTURE_ZLIB_LEVEL 1

int tb_write_capture(const struct tb_profile *p, FILE *f)
{
	struct sink k = { .o.pass = sink_pass, .f = f };
	struct tb_buf hdr = { 0 };
	int rc = -1, version = tb_cap_sections_present(p) ? 3 : needs_v2(p) ? 2 : 1;
	long start = seek_start(f);

	if (deflateInit(&k.z, CAPTURE_ZLIB_LEVEL) != Z_OK)
		return -1;
	k.seekable = start >= 0;
	put_header(&hdr, version, 0, 0); /* the sizes come at the end */
	if (k.seekable && fwrite(hdr.d, 1, hdr.n, f) != hdr.n)
		goto out;
	put_meta(&k.o.b, p, version);
	put_strings(&k.o, p);
	put_processes(&k.o, p);
	put_threads(&k.o, p);
	put_codes(&k.o, p);
	put_stacks(&k.o, p);
	if (version >= 3)
		tb_cap_sections_write(&k.o, p);
	sink_deflate(&k, Z_FINISH);
	if (k.o.failed)
		goto out;
	put_header(&hdr, version, k.o.n, k.packed);
	if (k.seekable)
		rc = fseek(f, start, SEEK_SET) || fwrite(hdr.d, 1, hdr.n, f) != hdr.n ||
		     fseek(f, start + (long)(hdr.n + k.packed), SEEK_SET) ? -1 : 0;
	else if (fwrite(hdr.d, 1, hdr.n, f) == hdr.n && fwrite(k.zb.d, 1, k.zb.n, f) == k.zb.n)
		rc = 0;
out:
	deflateEnd(&k.z);
	free(k.o.b.d);
	free(k.zb.d);
	free(hdr.d);
	return rc || ferror(f) ? -1 : 0;
}
