/* dump_running.c: `dump --native`'s running threads (see dump_running.h): one capture
 * session restricted to the process, its samples seen through the profile's sample tap,
 * the first of each thread kept whole (Python frames, native words, flags), the session
 * closed as soon as every thread has one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "capture/clock.h"
#include "capture/session.h"
#include "cmd/dump_running.h"

#define SAMPLE_HZ 997             /* per CPU: a thread on a CPU is sampled within ~1 ms */
#define NATIVE_DEPTH 128          /* as record --native */
#define DRAIN_MS 2                /* the ring drained this often */

struct running {
	uint32_t pid;
	struct dump_sample *s;
	int n, left;                  /* threads, those without a sample yet */
	uint64_t start_ns;            /* sampling started (the program attached) */
};

/* A sample of one of our threads that has none yet: kept. One with no thread state found
 * or taken off CPU says nothing of where the thread runs: the next one is waited for. */
static void on_sample(void *ctx, const struct tb_sample_hdr *h, const __u64 *words, const struct tb_frame *frames)
{
	struct running *r = ctx;

	if (h->pid != r->pid || (h->flags & TB_F_OFF_CPU) || h->native_stop >= TB_NS_MAX)
		return;
	for (int i = 0; i < r->n; i++) {
		struct dump_sample *s = &r->s[i];

		if (s->tid != h->tid || s->taken)
			continue;
		if (h->flags & TB_F_NO_TSTATE) {
			s->why_not = "running, but not sampled: the BPF program did not find its Python thread state";
			return;
		}
		s->taken = 1;
		s->why_not = NULL;
		s->flags = h->flags;
		s->native_stop = h->native_stop;
		s->nnative = h->nnative;   /* <= TB_MAX_NATIVE, TB_MAX_FRAMES: tb_profile_add_record */
		s->depth = h->depth;
		s->after_ns = h->time_ns > r->start_ns ? h->time_ns - r->start_ns : 0;
		memcpy(s->native, words + h->nkernel, (size_t)h->nnative * sizeof(*words));
		memcpy(s->frames, frames, (size_t)h->depth * sizeof(*frames));
		r->left--;
		return;
	}
}

int tb_dump_running_sample(pid_t pid, struct dump_sample *out, int n, double max_s, char *err, size_t errlen)
{
	struct tb_session_opts o;
	struct tb_session *ses = malloc(sizeof(*ses));
	struct running r = { (uint32_t)pid, out, n, n, 0 };
	double end;
	int rc = 0;

	for (int i = 0; i < n; i++) {
		out[i].taken = 0;
		out[i].why_not = "running, but not sampled: it was not on a CPU while the dump sampled it";
	}
	if (!ses) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	tb_session_opts_init(&o);
	o.pids[0] = pid;
	o.npids = 1;
	o.hz = SAMPLE_HZ;
	o.max_depth = TB_MAX_FRAMES;
	o.native_depth = NATIVE_DEPTH;
	o.quiet = 1;
	o.opcodes = -1;
	tb_session_init(ses, &o);
	ses->prof.sample_tap = on_sample;
	ses->prof.sample_tap_ctx = &r;
	if (tb_session_start(ses, err, errlen)) {
		rc = -1;
	} else {
		r.start_ns = ses->attached_ns;   /* CLOCK_MONOTONIC, as the samples' time */
		end = tb_mono_s() + max_s;
		while (r.left > 0 && !tb_session_stop_signal() && !ses->done && tb_mono_s() < end)
			tb_session_step(ses, DRAIN_MS);
		if (r.left > 0)
			tb_sampler_poll(ses->sampler, 0); /* what is in the ring already */
		for (int i = 0; i < n; i++)
			if (!out[i].taken && (tb_session_stop_signal() || ses->done))
				out[i].why_not = tb_session_stop_signal() ? "running, but not sampled: the dump was interrupted"
									  : "running, but not sampled: the process exited";
	}
	tb_session_free(ses);
	free(ses);
	return rc;
}

int tb_dump_sample_adopt(const struct dump_sample *s, struct tb_uthread *th)
{
	struct tb_uframe *f = malloc(((size_t)s->depth + 1) * sizeof(*f));

	if (!f)
		return -1;
	for (uint32_t i = 0; i < s->depth; i++)
		f[i] = (struct tb_uframe){ s->frames[i].code, s->frames[i].offset, s->frames[i].code_id,
					   (s->frames[i].flags & TB_FF_ENTRY) != 0 };
	free(th->frames);
	th->frames = f;
	th->depth = (int)s->depth;
	th->truncated = (s->flags & TB_F_TRUNCATED) != 0;
	th->holds_gil = (s->flags & TB_F_GIL_HELD) != 0;
	th->in_gc = (s->flags & TB_F_GC) != 0;
	th->error = s->flags & TB_F_READ_ERROR ? "a frame or code object could not be read in the sample" :
		    s->flags & TB_F_BAD_FRAME ? "a frame of the sample failed validation" : NULL;
	return 0;
}
