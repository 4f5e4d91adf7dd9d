/* profile.c: aggregates ring-buffer records into unique stacks as they
 * arrive, symbolizing each new code object at once (before its process can
 * free it); its processes and threads are model/procs.c's.  A sample's stack
 * is put together here: kernel frames (model/kstack.c), a synthetic frame,
 * the Python frames; a raw stack seen before is found whole in the raw-stack
 * cache (model/stackcache.c), without a lookup per frame. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/mem.h"
#include "model/procs.h"
#include "model/profile.h"

void tb_profile_init(struct tb_profile *p)
{
	memset(p, 0, sizeof(*p));
	tb_strtab_init(&p->strs);
	tb_strtab_init(&p->pstrs);
	tb_sym_init(&p->sym, &p->strs);
	p->kstack.kptr_restrict = -1;
}

void tb_profile_set_ksyms(struct tb_profile *p, struct tb_ksyms *k, int32_t kptr_restrict)
{
	tb_kstack_free(&p->kstack);
	tb_kstack_init(&p->kstack, k, kptr_restrict);
	tb_stackcache_invalidate(&p->scache); /* kernel PCs name other entries */
}

void tb_profile_free(struct tb_profile *p)
{
	tb_kstack_free(&p->kstack);
	tb_timeline_free(&p->tl);
	tb_native_codes_free(&p->ncodes);
	tb_tasks_free(&p->tasks);
	tb_sym_free(&p->sym);
	tb_strtab_free(&p->strs);
	tb_strtab_free(&p->pstrs);
	for (uint32_t i = 0; i < p->nprocs; i++)
		free(p->procs[i].live);
	free(p->procs);
	free(p->pids);
	tb_hmap_free(&p->pid_index);
	free(p->threads);
	tb_hmap_free(&p->thread_index);
	free(p->stacks);
	tb_hmap_free(&p->stack_index);
	tb_stackcache_free(&p->scache);
	free(p->arena);
	memset(p, 0, sizeof(*p));
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

/* A thread's state counters (struct tb_tinfo), in enum tb_tl_state order,
 * and the flag that sets each (on CPU: the absence of TB_F_OFF_CPU). */
static const struct {
	size_t field;
	uint16_t flag;
} states[TB_TS_N] = {
	[TB_TS_ON_CPU] = { offsetof(struct tb_tinfo, on_cpu), TB_F_OFF_CPU },
	[TB_TS_OFF_CPU] = { offsetof(struct tb_tinfo, off_cpu), TB_F_OFF_CPU },
	[TB_TS_GIL_HELD] = { offsetof(struct tb_tinfo, gil_held), TB_F_GIL_HELD },
	[TB_TS_GIL_WAIT] = { offsetof(struct tb_tinfo, gil_wait), TB_F_GIL_WAIT },
	[TB_TS_GC] = { offsetof(struct tb_tinfo, gc), TB_F_GC },
	[TB_TS_EXCEPTION] = { offsetof(struct tb_tinfo, exception), TB_F_EXCEPTION },
};

uint64_t *tb_tinfo_state(struct tb_tinfo *t, unsigned state)
{
	return (uint64_t *)((char *)t + states[state].field);
}

/* n samples of a thread with these flags over [from_ns, to_ns]: its state
 * counters, and the same in the timeline. */
static void count_status(struct tb_profile *p, uint32_t thread, uint16_t flags, uint64_t n,
			 uint64_t from_ns, uint64_t to_ns)
{
	for (unsigned i = 0; i < TB_TS_N; i++) {
		int set = (flags & states[i].flag) != 0;

		if (i == TB_TS_ON_CPU ? set : !set)
			continue;
		*tb_tinfo_state(&p->threads[thread], i) += n;
		tb_timeline_add(&p->tl, &p->tl.states, thread * TB_TS_N + i, from_ns, to_ns, n);
	}
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

/* What the thread was doing below its Python frames, as a synthetic frame's
 * name (at the root of the kernel part, if any), or NULL. */
static const char *synthetic_name(const struct tb_profile *p, uint16_t flags)
{
	if (flags & TB_F_OFF_CPU)
		return flags & TB_F_GIL_WAIT ? "<waiting for GIL>" : "<off-CPU>";
	if ((flags & TB_F_GC) && !p->no_gc)
		return "<GC>";
	return NULL;
}

/* The kernel part of a sample into out (leaf first): its frame count. */
static uint16_t kernel_part(struct tb_profile *p, const struct tb_sample_hdr *h, const __u64 *pcs,
			    struct tb_sframe *out)
{
	uint32_t codes[TB_MAX_KERNEL];
	uint16_t n = h->nkernel > TB_MAX_KERNEL ? TB_MAX_KERNEL : h->nkernel;

	n = tb_kstack_codes(&p->kstack, &p->sym, (const uint64_t *)pcs, n, (h->flags & TB_F_OFF_CPU) != 0, codes);
	for (uint16_t i = 0; i < n; i++)
		out[i] = (struct tb_sframe){ codes[i], -2, 0, 0 };
	if (n) {
		p->kernel_samples++;
		p->kernel_frames += n;
	}
	return n;
}

/* The symbolizer's index of a code object of process l.  A fork child is a
 * copy of its parent: a code object it had at the fork is at the same
 * address in the running parent, read there once for every sibling (and
 * still there when the child has exited before its samples are drained);
 * one the child made itself is read from the child. */
static uint32_t code_index(struct tb_profile *p, const struct tb_plive *l, const struct tb_pinfo *parent,
			   uint64_t addr, uint16_t code_id)
{
	const struct tb_target *t = &l->target, *pt;
	uint32_t i;

	if (parent) {
		i = tb_sym_find(&p->sym, t->pid, addr, code_id);
		if (i != TB_HMAP_NONE) {
			p->sym.lookups++;
			return i;
		}
		pt = &parent->live->target;
		i = tb_sym_code(&p->sym, pt->pid, &pt->layout, pt->pycode_type, addr, code_id);
		if (p->sym.codes[i].resolved)
			return i;
		tb_sym_forget_code(&p->sym, i); /* not the parent's: no placeholder under its pid */
	}
	return tb_sym_code(&p->sym, t->pid, &t->layout, t->pycode_type, addr, code_id);
}

/* One Python frame of a sample as a stack frame. */
static void python_frame(struct tb_profile *p, const struct tb_pinfo *pi, const struct tb_pinfo *parent,
			 const struct tb_frame *fr, struct tb_sframe *g)
{
	uint32_t known = p->sym.n;

	g->code = code_index(p, pi->live, parent, fr->code, fr->code_id);
	if (p->sources && p->sym.n > known && p->sym.codes[g->code].resolved) {
		uint32_t file = p->sym.codes[g->code].filename;

		tb_sources_note(p->sources, pi->live->target.pid, file, tb_str(&p->strs, file));
	}
	g->offset = fr->offset;
	g->opcode = fr->opcode;
	g->has_opcode = !(fr->flags & TB_FF_NO_OPCODE);
	if (!p->sym.codes[g->code].resolved)
		p->unresolved_frames++;
}

/* The native walk stopped at a library mapped since or whose table is being built:
 * the sample is partial (its callers by frame pointer). */
static int library_not_ready(const struct tb_sample_hdr *h)
{
	return h->native_stop == TB_NS_UNKNOWN_MAP || h->native_stop == TB_NS_NO_TABLE;
}

/* The frame that stands for native frames whose tables were not ready. */
#define NOT_READY "<native tables not ready>"

/* --native: the sample's native and Python frames merged in the order they
 * ran (model/merge.c) into f[0 ..); returns how many. */
static uint16_t merged_frames(struct tb_profile *p, const struct tb_pinfo *pi, const struct tb_pinfo *parent,
			      const struct tb_sample_hdr *h, const __u64 *native, const struct tb_frame *frames,
			      uint16_t depth, struct tb_sframe *f)
{
	static struct tb_merge_item items[TB_MERGED_MAX];
	const struct tb_merge_in in = {
		(const uint64_t *)native, h->nnative, h->native_stop, frames, depth,
		(h->flags & TB_F_TRUNCATED) != 0, (pi->version_hex >> 16) & 0xff,
	};
	enum tb_merge_verdict v;
	uint32_t n = tb_merge(&in, items, &v);
	uint16_t out = 0, shown = 0;

	/* tables not ready: the process's (no walk), or a library's (mapped since, or
	 * still building): the native part the walk could not reach (its root: _start,
	 * the interpreter's main) is one marked frame at the root, so that such samples
	 * make one tower under it, not Python frames at the root beside the whole ones */
	int library = library_not_ready(h);
	int not_ready = depth && (h->native_stop == TB_NS_NONE || (v == TB_MV_TRUNCATED && library));

	tb_native_count(&p->ncodes, h->native_stop, h->nnative, v);
	if (not_ready && h->native_stop == TB_NS_NONE)
		p->ncodes.stats.not_ready_process++;
	else if (library)         /* partial: marked only if its Python frames could not be placed */
		p->ncodes.stats.not_ready_library++;
	if (h->native_stop > TB_NS_NONE && h->native_stop < TB_NS_MAX)
		p->native_stop[h->native_stop - 1]++;
	p->merged += v == TB_MV_MERGED || v == TB_MV_TOLERATED;
	p->unmerged += v == TB_MV_UNMERGED;
	p->native_truncated += v == TB_MV_TRUNCATED;
	for (uint32_t i = 0; i < n; i++) {
		const struct tb_merge_item *it = &items[i];
		struct tb_sframe *g = &f[out];
		int64_t code;

		memset(g, 0, sizeof(*g));
		g->offset = -2;
		switch (it->kind) {
		case TB_MI_PYTHON:
			python_frame(p, pi, parent, &frames[it->index], g);
			break;
		case TB_MI_NATIVE:
			code = tb_native_code(&p->ncodes, &p->sym, h->pid, in.words[it->index], in.py_minor,
					      &g->offset);
			if (code < 0)
				continue;         /* interpreter plumbing */
			g->code = (uint32_t)code;
			shown++;
			break;
		default:
			if (not_ready)
				continue;         /* marked at the root */
			g->code = synthetic_code(p, it->kind == TB_MI_UNMERGED ? "<native unmerged>" :
								       "<native truncated>");
		}
		out++;
	}
	if (not_ready) {
		memset(&f[out], 0, sizeof(f[out]));
		f[out].offset = -2;
		f[out++].code = synthetic_code(p, NOT_READY);
	}
	if (shown) {
		p->native_samples++;
		p->native_frames += shown;
	}
	return out;
}

/* --async-aware: the running task's frame, and above it those of the tasks awaiting
 * it, put into f (n frames, leaf first) at the root end of the task's coroutine
 * frames (its outermost frame running the coroutine's code), or, when that frame is
 * not on the stack, just below the leaf part (first frames, which are kernel and
 * synthetic ones). Returns the new frame count. */
static uint16_t task_frames(struct tb_profile *p, const struct tb_pinfo *pi, const struct tb_sample_hdr *h,
			    struct tb_sframe *f, uint16_t n, uint16_t lead)
{
	const struct tb_task_entry *e;
	uint16_t at = lead;

	if (!p->async_aware || !h->task || !pi->live)
		return n;
	e = tb_tasks_lookup(&p->tasks, &p->sym, pi->live->target.pid, &pi->live->target.layout, h);
	if (!e)
		return n;
	for (uint16_t i = n; i-- > lead;) {
		const struct tb_code *c = &p->sym.codes[f[i].code];

		/* a task gone before it was read: the outermost frame of a coroutine
		 * that other tasks of the process were seen running */
		if (c->kind == TB_CODE_PYTHON && c->pid && (e->coro_code ? c->addr == e->coro_code :
			tb_tasks_known_coro(&p->tasks, e->pid, c->addr))) {
			at = (uint16_t)(i + 1);
			break;
		}
	}
	memmove(&f[at + e->n], &f[at], (size_t)(n - at) * sizeof(*f));
	for (uint32_t k = 0; k < e->n; k++)
		f[at + k] = (struct tb_sframe){ e->codes[k], -2, 0, 0 };
	p->task_samples++;
	return (uint16_t)(n + e->n);
}

/* Sample flags that decide a stack: its kind (TB_SK_*) and synthetic frame
 * (synthetic_name), and the kernel part's trimming (off-CPU). */
#define STACK_FLAGS (TB_F_TRUNCATED | TB_F_READ_ERROR | TB_F_BAD_FRAME | TB_F_OFF_CPU | TB_F_GIL_WAIT | TB_F_GC)
/* Key words of a raw stack: thread, flags and counts, kernel PCs, two per Python frame. */
#define RAW_KEY_MAX (2 + TB_MAX_KERNEL + 2 * TB_MAX_FRAMES)

/* The raw-stack cache's key of a sample (nk kernel PCs, depth Python frames)
 * of a thread: everything its stack is made of but what the profile knows
 * (code indices of (pid, address, code id), kernel names); not the opcodes,
 * which a stack keeps from its first sample only. Returns its words. */
static uint32_t raw_key(const struct tb_sample_hdr *h, const __u64 *pcs, uint16_t nk,
			const struct tb_frame *frames, uint16_t depth, uint32_t thread, uint64_t *key)
{
	uint32_t n = 0;

	key[n++] = thread;
	key[n++] = (uint64_t)(h->flags & STACK_FLAGS) | (uint64_t)depth << 16 | (uint64_t)nk << 32;
	memcpy(&key[n], pcs, (size_t)nk * sizeof(*key));
	n += nk;
	for (uint16_t i = 0; i < depth; i++) {
		key[n++] = frames[i].code;
		key[n++] = (uint64_t)(uint32_t)frames[i].offset | (uint64_t)frames[i].code_id << 32;
	}
	return n;
}

/* Does a sample's stack merge native frames (model/merge.c) with its Python ones? */
static int merges_native(const struct tb_profile *p, const struct tb_sample_hdr *h, const __u64 *words)
{
	return words && (h->native_stop || h->nnative || p->ncodes.resolver);
}

/* The frames of a sample, leaf first: kernel frames, what the thread was
 * doing below Python, then the Python frames (with --native merged with the
 * native ones), task frames among them; without Python frames, the kernel
 * and native ones under one <no Python frame> at the root; the stack they
 * make, added (count 0) if new; TB_HMAP_NONE: nothing to show (no frame, or
 * every frame plumbing). */
static uint32_t build_stack(struct tb_profile *p, const struct tb_pinfo *pi, const struct tb_pinfo *parent,
			    const struct tb_sample_hdr *h, const __u64 *words, const struct tb_frame *frames,
			    uint16_t depth, uint32_t thread, uint16_t kind, uint16_t *kernel)
{
	struct tb_sframe *f = stage(p, TB_MAX_STACK);
	const char *synthetic = synthetic_name(p, h->flags);
	uint16_t n = words ? kernel_part(p, h, words, f) : 0, lead;

	*kernel = n;
	if (synthetic)
		f[n++] = (struct tb_sframe){ synthetic_code(p, synthetic), -2, 0, 0 };
	lead = n;
	if (merges_native(p, h, words)) {
		uint16_t m = merged_frames(p, pi, parent, h, words + h->nkernel, frames, depth, &f[n]);

		if (!m && !n)
			return TB_HMAP_NONE;
		n += m;
	} else {
		for (uint16_t i = 0; i < depth; i++)
			python_frame(p, pi, parent, &frames[i], &f[n + i]);
		n += depth;
	}
	n = task_frames(p, pi, h, f, n, lead);
	if (!depth) {             /* a thread without Python frames: its native and kernel ones */
		if (!n)
			return TB_HMAP_NONE;
		f[n++] = (struct tb_sframe){ synthetic_code(p, TB_NO_PYTHON_FRAME), -2, 0, 0 };
	}
	return add_stack(p, thread, kind, n, 0);
}

/* The stack of a sample (build_stack), through the raw-stack cache when
 * its frames are kernel and Python ones only: a stack seen before costs
 * one hash of its raw words, its per-frame counts added again. */
static uint32_t sample_stack(struct tb_profile *p, const struct tb_pinfo *pi, const struct tb_pinfo *parent,
			     const struct tb_sample_hdr *h, const __u64 *words, const struct tb_frame *frames,
			     uint16_t depth, uint32_t thread, uint16_t kind)
{
	static uint64_t key[RAW_KEY_MAX];
	const struct tb_sc_value *hit;
	uint64_t hash, unresolved = p->unresolved_frames;
	uint16_t nk = !words ? 0 : h->nkernel > TB_MAX_KERNEL ? TB_MAX_KERNEL : h->nkernel, kernel;
	uint32_t nkey, stack;

	if (merges_native(p, h, words) || (p->async_aware && h->task))
		return build_stack(p, pi, parent, h, words, frames, depth, thread, kind, &kernel);
	/* a code object forgotten (process gone, address reused): indices may differ */
	if (p->sym.forgotten != p->scache_forgotten) {
		tb_stackcache_invalidate(&p->scache);
		p->scache_forgotten = p->sym.forgotten;
	}
	nkey = raw_key(h, words, nk, frames, depth, thread, key);
	hash = tb_hash(key, (size_t)nkey * sizeof(*key));
	hit = tb_stackcache_get(&p->scache, key, nkey, hash);
	if (hit) {
		p->unresolved_frames += hit->unresolved;
		if (hit->kernel) {
			p->kernel_samples++;
			p->kernel_frames += hit->kernel;
		}
		return hit->stack;
	}
	stack = build_stack(p, pi, parent, h, words, frames, depth, thread, kind, &kernel);
	if (p->sym.forgotten == p->scache_forgotten) /* else what it read may not hold */
		tb_stackcache_put(&p->scache, key, nkey, hash,
				  (struct tb_sc_value){ stack, (uint16_t)(p->unresolved_frames - unresolved), kernel });
	return stack;
}

void tb_profile_add_sample(struct tb_profile *p, const struct tb_sample_hdr *h, const __u64 *words,
			   const struct tb_frame *frames)
{
	const struct tb_pinfo *parent;
	int memo = p->last_changed == p->records_changed + 1 && p->last_pid == h->pid && p->last_tid == h->tid;
	int proc = memo ? (int)p->last_proc : tb_profile_find_process(p, h->pid);
	struct tb_pinfo *pi;
	struct tb_tinfo *ti;
	uint32_t thread, stack;
	uint16_t kind = 0, depth = h->depth, off_cpu = h->flags & TB_F_OFF_CPU;

	if (off_cpu)
		p->off_cpu_records++; /* a stack at a switch-out, not a sample */
	else
		p->samples++;
	if (!p->first_ns || h->time_ns < p->first_ns)
		p->first_ns = h->time_ns;
	if (h->time_ns > p->last_ns)
		p->last_ns = h->time_ns;
	if (proc < 0 || !p->procs[proc].live)
		return; /* not profiled, or it ended (its samples came late) */
	pi = &p->procs[proc];
	parent = tb_fork_parent(p, pi->live);
	if (memo) {
		thread = p->last_thread;
	} else {
		thread = tb_find_thread(p, pi, h);
		p->last_pid = h->pid;
		p->last_tid = h->tid;
		p->last_proc = (uint32_t)proc;
		p->last_thread = thread;
		p->last_changed = p->records_changed + 1;
	}
	ti = &p->threads[thread];
	ti->pending = 0;
	if (!off_cpu) {
		pi->samples++;
		ti->samples++;
	}
	pi->ns_pid = h->ns_pid;
	if ((h->flags & TB_F_NO_TSTATE) || depth == 0) {
		/* no Python frame: counted; shown under <no Python frame> with its
		 * native or kernel frames (--native, --kernel), on CPU, in the modes
		 * that keep every thread */
		if (off_cpu)
			return;
		p->no_python++;
		if (!(h->nnative || h->nkernel) || !mode_keeps(p, h->flags))
			return;
		depth = 0;
	} else if (!mode_keeps(p, h->flags)) {
		p->filtered++;
		return;
	}
	if (!off_cpu)
		count_status(p, thread, h->flags, 1, h->time_ns, h->time_ns);
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
	if (h->nnative && library_not_ready(h))
		kind |= TB_SK_NATIVE_PARTIAL;
	p->frames += depth;
	stack = sample_stack(p, pi, parent, h, words, frames, depth, thread, kind);
	if (stack == TB_HMAP_NONE)
		return;
	if (off_cpu) {
		/* weight comes with the wake-up (or the end of the capture) */
		ti->pending = stack + 1;
		ti->pending_flags = h->flags;
		ti->pending_since = h->time_ns;
		return;
	}
	p->python_samples++;
	ti->python_samples++;
	p->stacks[stack].count++;
	tb_timeline_add(&p->tl, &p->tl.stacks, stack, h->time_ns, h->time_ns, 1);
}

/* Off-CPU time in sample units (1/hz s each), with the remainder carried. */
static void add_off_cpu(struct tb_profile *p, struct tb_tinfo *ti, uint64_t ns)
{
	uint32_t thread = (uint32_t)(ti - p->threads);
	double units = (double)ns * (double)(p->hz ? p->hz : 1) / 1e9 + ti->carry;
	uint64_t whole = (uint64_t)units;
	int proc;

	ti->carry = units - (double)whole;
	if (!ti->pending || !whole)
		return;
	p->stacks[ti->pending - 1].count += whole;
	p->python_samples += whole;
	p->off_cpu_samples += whole;
	ti->python_samples += whole;
	ti->samples += whole;
	count_status(p, thread, ti->pending_flags, whole, ti->pending_since, ti->pending_since + ns);
	tb_timeline_add(&p->tl, &p->tl.stacks, ti->pending - 1, ti->pending_since, ti->pending_since + ns,
			whole);
	proc = tb_profile_find_process(p, ti->pid);
	if (proc >= 0)
		p->procs[proc].samples += whole;
}

static void on_wake(struct tb_profile *p, const struct tb_sample_hdr *h)
{
	uint32_t i = tb_lookup_thread(p, h->pid, h->tid);

	if (i == TB_HMAP_NONE)
		return;
	if (p->threads[i].pending)
		add_off_cpu(p, &p->threads[i], h->value);
	p->threads[i].pending = 0;
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
	const struct tb_frame *frames;
	const __u64 *lead;
	size_t words;

	if (size < sizeof(*h) || h->depth > TB_MAX_FRAMES || h->nkernel > TB_MAX_KERNEL ||
	    h->nnative > TB_MAX_NATIVE) {
		p->malformed++;
		return -1;
	}
	/* kernel and native words come first, then the Python frames */
	words = ((size_t)h->nkernel + h->nnative) * sizeof(__u64);
	if (size < sizeof(*h) + words + (size_t)h->depth * sizeof(struct tb_frame)) {
		p->malformed++;
		return -1;
	}
	lead = (const __u64 *)(h + 1);
	frames = (const struct tb_frame *)((const char *)(h + 1) + words);
	switch (h->type) {
	case TB_REC_SAMPLE:
		if (p->sample_tap)
			p->sample_tap(p->sample_tap_ctx, h, lead, frames);
		tb_profile_add_sample(p, h, lead, frames);
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

void tb_profile_add_stack(struct tb_profile *p, uint32_t thread, uint16_t kind,
			  const struct tb_sframe *frames, uint16_t depth, uint64_t count)
{
	uint32_t i;

	memcpy(stage(p, depth), frames, (size_t)depth * sizeof(*frames));
	i = add_stack(p, thread, kind, depth, count);
	if (p->tl.on) /* the counts over time still add up to the stack's */
		tb_timeline_put(&p->tl, &p->tl.stacks, i, p->tl.nbuckets ? p->tl.nbuckets - 1 : 0, count);
}

uint64_t tb_profile_native_partial(const struct tb_profile *p)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < p->nstacks; i++)
		if (p->stacks[i].kind & TB_SK_NATIVE_PARTIAL)
			n += p->stacks[i].count;
	return n;
}

void tb_profile_drop_empty_stacks(struct tb_profile *p)
{
	uint32_t *moved = tb_calloc(p->nstacks, sizeof(*moved)), n = 0; /* old -> new + 1 */
	struct tb_tseries *s = &p->tl.stacks;

	for (uint32_t i = 0; i < p->nstacks; i++) {
		if (!p->stacks[i].count)
			continue;
		p->stacks[n] = p->stacks[i];
		moved[i] = ++n;
	}
	tb_hmap_clear(&p->stack_index);
	for (uint32_t i = 0; i < n; i++) {
		const struct tb_stack *x = &p->stacks[i];

		tb_hmap_insert(&p->stack_index, stack_hash(x->thread, x->kind, tb_stack_frames(p, x), x->depth), i);
	}
	for (uint32_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].pending)
			p->threads[i].pending = moved[p->threads[i].pending - 1];
	/* the timeline's stack series follow (an empty stack has no cell) */
	for (uint32_t i = 0; i < s->n; i++)
		s->c[i].series = s->c[i].series < p->nstacks && moved[s->c[i].series] ?
			moved[s->c[i].series] - 1 : 0;
	p->nstacks = n;
	if (s->nlast)
		memset(s->last, 0, (size_t)s->nlast * sizeof(*s->last));
	tb_timeline_normalize(&p->tl);
	tb_stackcache_invalidate(&p->scache); /* it holds old indices */
	free(moved);
}

uint64_t tb_profile_no_python_shown(const struct tb_profile *p)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < p->nstacks; i++) {
		const struct tb_stack *s = &p->stacks[i];
		const struct tb_code *root = s->depth ? &p->sym.codes[tb_stack_frames(p, s)[s->depth - 1].code] : NULL;

		if (root && !root->pid && root->kind == TB_CODE_PYTHON &&
		    !strcmp(tb_str(p->sym.strs, root->qualname), TB_NO_PYTHON_FRAME))
			n += s->count;
	}
	return n;
}

uint16_t tb_stack_leaf(const struct tb_profile *p, const struct tb_stack *s)
{
	const struct tb_sframe *f = tb_stack_frames(p, s);

	for (uint16_t i = 0; i < s->depth; i++)
		if (p->sym.codes[f[i].code].kind == TB_CODE_PYTHON)
			return i;
	return 0;
}
