/* helpers.h: building blocks shared by the cmocka unit tests: a process of a
 * synthetic profile, ring-buffer records as the BPF program sends them, a
 * writer's output in memory, protobuf varints, native and kernel counts.  Header-only: every test is
 * one translation unit (include after <cmocka.h>). */
#ifndef TB_TEST_HELPERS_H
#define TB_TEST_HELPERS_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpython/layout.h"
#include "model/profile.h"

/* A process of CPython version_hex (built-in layout) registered with p. */
static inline void th_add_process(struct tb_profile *p, uint32_t pid, const char *comm,
				  const char *cmdline, uint32_t version_hex)
{
	struct tb_target t;

	memset(&t, 0, sizeof(t));
	t.pid = (pid_t)pid;
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	snprintf(t.cmdline, sizeof(t.cmdline), "%s", cmdline ? cmdline : "");
	assert_int_equal(tb_layout_builtin(version_hex, &t.layout), 0);
	tb_profile_add_process(p, &t);
}

/* Send the record h + its h->depth frames `count` times, as the ring would. */
static inline void th_send(struct tb_profile *p, struct tb_sample_hdr *h, const struct tb_frame *f,
			   uint64_t count)
{
	static struct {
		struct tb_sample_hdr h;
		struct tb_frame f[TB_MAX_FRAMES];
	} r;

	assert_true(h->depth <= TB_MAX_FRAMES);
	r.h = *h;
	memcpy(r.f, f, (size_t)h->depth * sizeof(*f));
	for (uint64_t c = 0; c < count; c++)
		assert_int_equal(tb_profile_add_record(p, &r, sizeof(r.h) + (size_t)h->depth * sizeof(*f)), 0);
}

/* count samples of the stack codes[0..n) (innermost first) on thread tid of
 * pid: code ids from the addresses (addr >> 12), offsets (NULL: not started),
 * the leaf's opcode (-1: none), the sample flags (TB_F_*). */
static inline void th_add_stack(struct tb_profile *p, uint32_t pid, uint32_t tid, int n,
				const uint64_t *codes, const int32_t *offsets, uint64_t count,
				uint16_t flags, int opcode)
{
	static struct tb_frame f[TB_MAX_FRAMES];
	struct tb_sample_hdr h;

	memset(&h, 0, sizeof(h));
	h.pid = pid;
	h.tid = tid;
	h.ns_tid = tid;
	h.time_ns = 1000;
	h.depth = (uint16_t)n;
	h.flags = flags;
	memset(f, 0, (size_t)n * sizeof(f[0]));
	for (int i = 0; i < n; i++) {
		f[i].code = codes[i];
		f[i].code_id = (uint16_t)(codes[i] >> 12);
		f[i].offset = offsets ? offsets[i] : -2;
		f[i].flags = TB_FF_NO_OPCODE;
	}
	if (opcode >= 0 && n) {
		f[0].flags = 0;
		f[0].opcode = (uint8_t)opcode;
	}
	th_send(p, &h, f, count);
}

/* The native and kernel counts of p, in the order of the capture's metadata:
 * kernel samples and frames, native samples and frames, merged, unmerged,
 * native walks truncated, native walks that ended for reason 1. */
static inline void th_frame_counts(struct tb_profile *p, const uint64_t c[8])
{
	p->kernel_samples = c[0];
	p->kernel_frames = c[1];
	p->native_samples = c[2];
	p->native_frames = c[3];
	p->merged = c[4];
	p->unmerged = c[5];
	p->native_truncated = c[6];
	p->native_stop[1] = c[7];
}

/* What writer w writes for p, NUL-terminated; *len gets its length. */
static inline char *th_render(int (*w)(const struct tb_profile *, FILE *), const struct tb_profile *p,
			      size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);

	assert_non_null(m);
	assert_int_equal(w(p, m), 0);
	assert_int_equal(fclose(m), 0);
	if (len)
		*len = n;
	return buf;
}

/* A protobuf varint at *d (advanced), failing the test on a bad one. */
static inline uint64_t th_varint(const char *what, const unsigned char **d, const unsigned char *end)
{
	uint64_t v = 0;

	for (int shift = 0; *d < end && shift < 64; shift += 7) {
		unsigned char b = *(*d)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	fail_msg("%s: bad varint", what);
	return 0;
}

#endif
