/* watch.c: reacts to the lifecycle records of the BPF program.  An exec'd
 * process is discovered as soon as its runtime is mapped (retried for up
 * to two seconds, quickly at first); a fork()ed child of a profiled process
 * inherits its parent's layout at once; an exited process keeps its
 * samples and names, and its code objects leave the lookup index. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/mem.h"
#include "lib/termsafe.h"
#include "cpython/discover.h"
#include "model/symbolize.h"
#include "capture/clock.h"
#include "capture/watch.h"

#define GIVE_UP_NS (2000ull * 1000 * 1000)

static void add_pending(struct tb_watch *w, pid_t pid)
{
	uint64_t now = tb_mono_ns();

	for (uint32_t i = 0; i < w->npending; i++)
		if (w->pending[i].pid == pid) {
			w->pending[i].since_ns = w->pending[i].next_ns = now;
			return;
		}
	if (w->npending == w->cappending)
		w->pending = tb_grow(w->pending, &w->cappending, w->npending + 1, sizeof(*w->pending), 16);
	w->pending[w->npending++] = (struct tb_pending){ pid, now, now };
}

static void on_fork(struct tb_watch *w, const struct tb_sample_hdr *h)
{
	int parent = tb_profile_find_process(w->prof, (uint32_t)h->value);
	struct tb_target t;

	if (parent < 0)
		return;
	t = w->prof->procs[parent].target;
	t.pid = (pid_t)h->pid;
	tb_read_proc_names(t.pid, t.comm, sizeof(t.comm), t.cmdline, sizeof(t.cmdline));
	tb_profile_add_process(w->prof, &t);
}

void tb_watch_record(struct tb_watch *w, const struct tb_sample_hdr *h)
{
	switch (h->type) {
	case TB_REC_EXEC:
		add_pending(w, (pid_t)h->pid);
		break;
	case TB_REC_FORK:
		on_fork(w, h);
		break;
	case TB_REC_EXIT:
		if (w->nexited == w->capexited)
			w->exited = tb_grow(w->exited, &w->capexited, w->nexited + 1, sizeof(*w->exited), 16);
		w->exited[w->nexited++] = (pid_t)h->pid;
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
		if (tb_sampler_add(w->sampler, &t) == 0)
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
			if (try_discover(w, pe->pid))
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
	w->npending = keep;
	for (uint32_t i = 0; i < w->nexited; i++) {
		tb_sampler_remove(w->sampler, w->exited[i]);
		tb_sym_forget_pid(&w->prof->sym, w->exited[i]);
	}
	w->nexited = 0;
}

void tb_watch_free(struct tb_watch *w)
{
	free(w->pending);
	free(w->exited);
	memset(w, 0, sizeof(*w));
}
