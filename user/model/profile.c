/* profile.c: aggregates ring-buffer records into unique stacks as they
 * arrive, symbolizing each new code object at once (before its process can
 * free it), and keeps per-process and per-thread accounts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/mem.h"
#include "model/profile.h"
#include "cpython/threadnames.h"

void tb_profile_init(struct tb_profile *p)
{
	memset(p, 0, sizeof(*p));
	tb_strtab_init(&p->strs);
	tb_sym_init(&p->sym, &p->strs);
}

void tb_profile_free(struct tb_profile *p)
{
	tb_sym_free(&p->sym);
	tb_strtab_free(&p->strs);
	free(p->procs);
	free(p->threads);
	free(p->stacks);
	tb_hmap_free(&p->stack_index);
	free(p->arena);
	memset(p, 0, sizeof(*p));
}

int tb_profile_find_process(const struct tb_profile *p, uint32_t pid)
{
	for (uint32_t i = p->nprocs; i-- > 0;)
		if ((uint32_t)p->procs[i].target.pid == pid)
			return (int)i;
	return -1;
}

uint32_t tb_profile_add_process(struct tb_profile *p, const struct tb_target *t)
{
	struct tb_pinfo *pi;

	if (p->nprocs == p->capprocs)
		p->procs = tb_grow(p->procs, &p->capprocs, p->nprocs + 1, sizeof(*p->procs), 64);
	pi = &p->procs[p->nprocs];
	memset(pi, 0, sizeof(*pi));
	pi->target = *t;
	tb_layout_version_str(&t->layout, pi->version, sizeof(pi->version));
	return p->nprocs++;
}

static uint32_t thread_name(struct tb_profile *p, uint32_t pid, uint32_t tid)
{
	char path[64], name[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(name, sizeof(name), f))
			name[0] = '\0';
		fclose(f);
	}
	name[strcspn(name, "\n")] = '\0';
	if (!name[0])
		snprintf(name, sizeof(name), "thread");
	return tb_strtab_intern(&p->strs, name);
}

#define NAMES_EVERY_NS (100ull * 1000 * 1000)

/* threading.Thread names of a process's threads, by their ident. */
static void read_python_names(struct tb_profile *p, uint32_t proc)
{
	struct tb_pinfo *pi = &p->procs[proc];
	struct tb_pyname names[256];
	int n = tb_python_thread_names(pi->target.pid, &pi->target.layout, pi->target.runtime_addr,
				       names, 256);

	for (uint32_t i = 0; i < p->nthreads; i++) {
		struct tb_tinfo *t = &p->threads[i];

		if (t->pid != (uint32_t)pi->target.pid || !t->ident)
			continue;
		for (int k = 0; k < n; k++)
			if (names[k].ident == t->ident && names[k].name[0]) {
				t->name = tb_strtab_intern(&p->strs, names[k].name);
				t->python_name = 1;
			}
	}
}

void tb_profile_read_thread_names(struct tb_profile *p, int only_pending)
{
	for (uint32_t i = 0; i < p->nprocs; i++)
		if (!only_pending || p->procs[i].names_pending) {
			p->procs[i].names_pending = 0;
			read_python_names(p, i);
		}
}

static uint32_t find_thread(struct tb_profile *p, const struct tb_sample_hdr *h)
{
	struct tb_tinfo *t;

	/* recent threads are the likely ones: search from the end */
	for (uint32_t i = p->nthreads; i-- > 0;)
		if (p->threads[i].tid == h->tid && p->threads[i].pid == h->pid)
			return i;
	if (p->nthreads == p->capthreads)
		p->threads = tb_grow(p->threads, &p->capthreads, p->nthreads + 1, sizeof(*p->threads), 64);
	t = &p->threads[p->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = h->pid;
	t->tid = h->tid;
	t->ns_tid = h->ns_tid;
	t->ident = h->type == TB_REC_SAMPLE ? h->value : 0;
	t->name = t->comm = thread_name(p, h->pid, h->tid);
	p->nthreads++;
	{
		int pi = tb_profile_find_process(p, h->pid);

		if (pi >= 0 && t->ident && h->time_ns - p->procs[pi].names_at > NAMES_EVERY_NS) {
			p->procs[pi].names_at = h->time_ns;
			read_python_names(p, (uint32_t)pi);
		} else if (pi >= 0 && t->ident) {
			p->procs[pi].names_pending = 1; /* read on the agent's next round */
		}
	}
	return p->nthreads - 1;
}

static uint64_t stack_hash(uint32_t thread, uint16_t kind, const struct tb_sframe *f, uint16_t depth)
{
	struct tb_hasher h;

	tb_hash_init(&h);
	tb_hash_word(&h, (uint64_t)thread << 16 | kind);
	for (uint16_t i = 0; i < depth; i++)
		tb_hash_word(&h, ((uint64_t)f[i].code << 32) | (uint32_t)f[i].offset);
	return tb_hash_end(&h);
}

struct stack_key {
	const struct tb_profile *p;
	const struct tb_sframe *f;
	uint32_t thread;
	uint16_t kind, depth;
};

static int same_stack(const void *ctx, uint32_t i)
{
	const struct stack_key *k = ctx;
	const struct tb_stack *s = &k->p->stacks[i];
	const struct tb_sframe *g = &k->p->arena[s->frames];

	if (s->thread != k->thread || s->depth != k->depth || s->kind != k->kind)
		return 0;
	for (uint16_t d = 0; d < k->depth; d++)
		if (g[d].code != k->f[d].code || g[d].offset != k->f[d].offset)
			return 0;
	return 1;
}

/* Frames are staged at the arena's end; kept only if the stack is new. */
static struct tb_sframe *stage(struct tb_profile *p, uint16_t depth)
{
	p->arena = tb_grow64(p->arena, &p->caparena, p->narena + depth, sizeof(*p->arena), 65536);
	return &p->arena[p->narena];
}

static uint32_t add_stack(struct tb_profile *p, uint32_t thread, uint16_t kind, uint16_t depth,
			  uint64_t count)
{
	const struct stack_key k = { p, &p->arena[p->narena], thread, kind, depth };
	uint32_t i = tb_hmap_intern(&p->stack_index, stack_hash(thread, kind, k.f, depth), p->nstacks,
				    same_stack, &k);
	struct tb_stack *s;

	if (i != p->nstacks) {
		p->stacks[i].count += count;
		return i;
	}
	p->stacks = tb_grow(p->stacks, &p->capstacks, p->nstacks + 1, sizeof(*p->stacks), 64);
	s = &p->stacks[p->nstacks];
	s->count = count;
	s->thread = thread;
	s->frames = (uint32_t)p->narena;
	s->depth = depth;
	s->kind = kind;
	p->narena += depth;
	return p->nstacks++;
}

static void count_status(struct tb_tinfo *t, uint16_t flags, uint64_t n)
{
	if (flags & TB_F_GIL_HELD)
		t->gil_held += n;
	if (flags & TB_F_GIL_WAIT)
		t->gil_wait += n;
	if (flags & TB_F_GC)
		t->gc += n;
	if (flags & TB_F_EXCEPTION)
		t->exception += n;
	if (flags & TB_F_OFF_CPU)
		t->off_cpu += n;
	else
		t->on_cpu += n;
}

/* Does the capture mode keep a sample with these flags? */
static int mode_keeps(const struct tb_profile *p, uint16_t flags)
{
	switch (p->mode) {
	case TB_MODE_GIL: /* no GIL (free-threaded): every thread runs as a holder would */
		return (flags & (TB_F_GIL_HELD | TB_F_NO_GIL)) != 0;
	case TB_MODE_EXCEPTION:
		return (flags & TB_F_EXCEPTION) != 0;
	default:
		return 1;
	}
}

static uint32_t synthetic_code(struct tb_profile *p, const char *name)
{
	return tb_sym_insert(&p->sym, 0, (uint64_t)(uintptr_t)name, 0, 0, name, "<synthetic>", 0, NULL, 0);
}

void tb_profile_add_sample(struct tb_profile *p, const struct tb_sample_hdr *h,
			   const struct tb_frame *frames)
{
	int pi = tb_profile_find_process(p, h->pid);
	const struct tb_target *t;
	struct tb_sframe *f;
	struct tb_tinfo *ti;
	uint32_t thread, stack;
	uint16_t kind = 0, depth = h->depth, lead = 0, off_cpu = h->flags & TB_F_OFF_CPU;

	if (off_cpu)
		p->off_cpu_records++; /* a stack at a switch-out, not a sample */
	else
		p->samples++;
	if (!p->first_ns || h->time_ns < p->first_ns)
		p->first_ns = h->time_ns;
	if (h->time_ns > p->last_ns)
		p->last_ns = h->time_ns;
	if (pi < 0)
		return;
	t = &p->procs[pi].target;
	thread = find_thread(p, h);
	ti = &p->threads[thread];
	ti->pending = 0;
	if (!off_cpu) {
		p->procs[pi].samples++;
		ti->samples++;
	}
	p->procs[pi].ns_pid = h->ns_pid;
	if ((h->flags & TB_F_NO_TSTATE) || depth == 0) {
		if (!off_cpu)
			p->no_python++;
		return;
	}
	if (!mode_keeps(p, h->flags)) {
		p->filtered++;
		return;
	}
	if (!off_cpu)
		count_status(ti, h->flags, 1);
	if (depth > TB_MAX_FRAMES)
		depth = TB_MAX_FRAMES;
	if (h->flags & TB_F_TRUNCATED) {
		kind |= TB_SK_TRUNCATED;
		p->truncated++;
	}
	if (h->flags & (TB_F_READ_ERROR | TB_F_BAD_FRAME)) {
		kind |= TB_SK_PARTIAL;
		p->partial++;
	}
	/* synthetic leaf frames say what the thread was doing below Python */
	f = stage(p, depth + 1);
	if (off_cpu) {
		f[0].code = synthetic_code(p, h->flags & TB_F_GIL_WAIT ? "<waiting for GIL>" : "<off-CPU>");
		lead = 1;
	} else if ((h->flags & TB_F_GC) && !p->no_gc) {
		f[0].code = synthetic_code(p, "<GC>");
		lead = 1;
	}
	if (lead) {
		f[0].offset = -2;
		f[0].opcode = 0;
		f[0].has_opcode = 0;
	}
	for (uint16_t i = 0; i < depth; i++) {
		struct tb_sframe *g = &f[i + lead];

		uint32_t known = p->sym.n;

		g->code = tb_sym_code(&p->sym, t->pid, &t->layout, t->pycode_type,
				      frames[i].code, frames[i].code_id);
		if (p->sources && p->sym.n > known && p->sym.codes[g->code].resolved) {
			uint32_t file = p->sym.codes[g->code].filename;

			tb_sources_note(p->sources, t->pid, file, tb_str(&p->strs, file));
		}
		g->offset = frames[i].offset;
		g->opcode = frames[i].opcode;
		g->has_opcode = !(frames[i].flags & TB_FF_NO_OPCODE);
		if (!p->sym.codes[g->code].resolved)
			p->unresolved_frames++;
	}
	p->frames += depth;
	if (off_cpu) {
		/* weight comes with the wake-up (or the end of the capture) */
		stack = add_stack(p, thread, kind, depth + lead, 0);
		ti->pending = stack + 1;
		ti->pending_flags = h->flags;
		ti->pending_since = h->time_ns;
		return;
	}
	p->python_samples++;
	ti->python_samples++;
	add_stack(p, thread, kind, depth + lead, 1);
}

/* Off-CPU time in sample units (1/hz s each), with the remainder carried. */
static void add_off_cpu(struct tb_profile *p, struct tb_tinfo *ti, uint64_t ns)
{
	double units = (double)ns * (double)(p->hz ? p->hz : 1) / 1e9 + ti->carry;
	uint64_t whole = (uint64_t)units;

	ti->carry = units - (double)whole;
	if (!ti->pending || !whole)
		return;
	p->stacks[ti->pending - 1].count += whole;
	p->python_samples += whole;
	p->off_cpu_samples += whole;
	ti->python_samples += whole;
	ti->samples += whole;
	count_status(ti, ti->pending_flags, whole);
	p->procs[tb_profile_find_process(p, ti->pid)].samples += whole;
}

static void on_wake(struct tb_profile *p, const struct tb_sample_hdr *h)
{
	for (uint32_t i = p->nthreads; i-- > 0;) {
		struct tb_tinfo *ti = &p->threads[i];

		if (ti->tid == h->tid && ti->pid == h->pid) {
			if (ti->pending)
				add_off_cpu(p, ti, h->value);
			ti->pending = 0;
			return;
		}
	}
}

void tb_profile_finish(struct tb_profile *p, uint64_t end_ns)
{
	for (uint32_t i = 0; i < p->nthreads; i++) {
		struct tb_tinfo *ti = &p->threads[i];

		if (ti->pending && end_ns > ti->pending_since)
			add_off_cpu(p, ti, end_ns - ti->pending_since);
		ti->pending = 0;
	}
}

int tb_profile_add_record(struct tb_profile *p, const void *data, size_t size)
{
	const struct tb_sample_hdr *h = data;

	if (size < sizeof(*h) || h->depth > TB_MAX_FRAMES ||
	    size < sizeof(*h) + (size_t)h->depth * sizeof(struct tb_frame)) {
		p->malformed++;
		return -1;
	}
	switch (h->type) {
	case TB_REC_SAMPLE:
		tb_profile_add_sample(p, h, (const struct tb_frame *)(h + 1));
		break;
	case TB_REC_WAKE:
		on_wake(p, h);
		break;
	case TB_REC_EXEC: /* process lifecycle: the watch's (capture/watch.c) */
	case TB_REC_FORK:
	case TB_REC_EXIT:
		break;
	default:
		p->malformed++;
		return -1;
	}
	return 0;
}

uint32_t tb_profile_add_thread(struct tb_profile *p, uint32_t pid, uint32_t tid, uint32_t ns_tid,
			       const char *name)
{
	struct tb_tinfo *t;

	if (p->nthreads == p->capthreads)
		p->threads = tb_grow(p->threads, &p->capthreads, p->nthreads + 1, sizeof(*p->threads), 64);
	t = &p->threads[p->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->ns_tid = ns_tid;
	t->name = tb_strtab_intern(&p->strs, name);
	return p->nthreads++;
}

void tb_profile_add_stack(struct tb_profile *p, uint32_t thread, uint16_t kind,
			  const struct tb_sframe *frames, uint16_t depth, uint64_t count)
{
	memcpy(stage(p, depth), frames, (size_t)depth * sizeof(*frames));
	add_stack(p, thread, kind, depth, count);
}
