/* watch.c: reacts to the lifecycle records of the BPF program, each in
 * O(1) (amortized).  An exec'd process is discovered as soon as its runtime
 * is mapped (retried for up to two seconds, quickly at first; at most
 * TB_WATCH_MAX_PENDING at a time), and the image it replaced ends; a
 * fork()ed child of a profiled process inherits its parent's layout and
 * names at once (tb_profile_add_fork); an exited process (the BPF program has dropped it
 * already, after its last sample) ends: the profile keeps a compact record
 * if it was sampled, and its code objects leave the lookup index. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/mem.h"
#include "lib/termsafe.h"
#include "cpython/discover.h"
#include "model/symbolize.h"
#include "capture/clock.h"
#include "capture/watch.h"

#define GIVE_UP_NS (2000ull * 1000 * 1000)

static void add_pending(struct tb_watch *w, uint32_t pid)
{
	uint64_t now = tb_mono_ns();
	uint32_t i;

	if (w->npending == TB_WATCH_MAX_PENDING) {
		w->skipped++;
		return;
	}
	i = tb_hmap_intern_key(&w->pending_index, w->pending, sizeof(*w->pending), &pid, sizeof(pid),
			       w->npending);
	if (i == w->npending) {
		w->pending = tb_grow(w->pending, &w->cappending, w->npending + 1, sizeof(*w->pending), 16);
		w->npending++;
	}
	w->pending[i] = (struct tb_pending){ pid, 0, now, now };
}

/* Process pid ended: its record and code objects leave sampling. */
static void ended(struct tb_watch *w, uint32_t pid)
{
	tb_profile_process_ended(w->prof, pid);
	tb_sym_forget_pid(&w->prof->sym, (pid_t)pid);
}

void tb_watch_record(struct tb_watch *w, const struct tb_sample_hdr *h)
{
	switch (h->type) {
	case TB_REC_EXEC:
		ended(w, h->pid); /* the old image: the BPF program dropped it */
		add_pending(w, h->pid);
		break;
	case TB_REC_FORK: /* the child runs its parent's image, with its names */
		tb_profile_add_fork(w->prof, (uint32_t)h->value, h->pid);
		break;
	case TB_REC_EXIT:
		ended(w, h->pid);
		break;
	}
}

void tb_watch_init(struct tb_watch *w, struct tb_sampler *s, struct tb_profile *p, int quiet)
{
	memset(w, 0, sizeof(*w));
	w->sampler = s;
	w->prof = p;
	w->quiet = quiet;
}

static int try_discover(struct tb_watch *w, pid_t pid)
{
	struct tb_target t;
	char err[512];
	int rc = tb_discover(pid, &t, err, sizeof(err));

	if (rc == 0) {
		if (tb_sampler_add(w->sampler, &t, 0) == 0)
			tb_profile_add_process(w->prof, &t);
		w->discovered++;
		return 1;
	}
	if (rc < 0) { /* gone, or Python we cannot profile: say so once */
		if (!strstr(err, "no such process") && !w->quiet)
			tb_termsafe_line(stderr, "tachyon-bpf: skipping ", err);
		return 1;
	}
	return 0;
}

void tb_watch_poll(struct tb_watch *w)
{
	uint64_t now = tb_mono_ns();
	uint32_t keep = 0;

	for (uint32_t i = 0; i < w->npending; i++) {
		struct tb_pending *pe = &w->pending[i];

		if (pe->next_ns <= now) {
			if (try_discover(w, (pid_t)pe->pid))
				continue;
			if (now - pe->since_ns > GIVE_UP_NS) {
				w->not_python++;
				continue;
			}
			/* the loader maps libpython within milliseconds: poll fast, then slower */
			pe->next_ns = now + (now - pe->since_ns < 50000000ull ? 2000000ull : 50000000ull);
		}
		w->pending[keep++] = *pe;
	}
	if (keep == w->npending)
		return;
	w->npending = keep;
	tb_hmap_clear(&w->pending_index);
	for (uint32_t i = 0; i < keep; i++)
		tb_hmap_insert(&w->pending_index, tb_hash(&w->pending[i].pid, sizeof(w->pending[i].pid)), i);
}

void tb_watch_free(struct tb_watch *w)
{
	free(w->pending);
	tb_hmap_free(&w->pending_index);
	memset(w, 0, sizeof(*w));
}
