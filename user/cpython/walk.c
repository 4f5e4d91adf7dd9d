/* walk.c: reads every thread's frame chain out of a running process
 * (process_vm_readv, no stop), with the layout the BPF walker uses: shim
 * frames skipped, code objects type-checked, a free-threaded thread's own
 * copy of the bytecode mapped back to its code object's offsets (thread-local
 * bytecode, 3.14t+), no GIL holder where the GIL is disabled. Everything read
 * is the target's: each struct is read into a fixed buffer with the sizes of
 * layout.c's read table (never a size the target declares), every list and
 * chain is bounded and watched for loops, and one walk makes a bounded number
 * of reads. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include "lib/mem.h"
#include "proc/procmem.h"
#include "cpython/walk.h"

#define MAX_INTERPRETERS 8
/* Reads of one walk: 4096 threads of 256 frames (two reads a frame) at most. */
#define MAX_READS (2u << 20)

/* One walk: the target, its read sizes and what is left of the read budget. */
struct walk {
	const struct tb_target *t;
	unsigned tstate_size, frame_size, code_size;
	uint32_t reads_left;
};

/* Brent's loop detection on a chain of addresses: constant memory, and a
 * chain that comes back to an address is noticed within twice its loop's
 * length past the loop's start. */
struct loop_watch {
	uint64_t mark;
	uint32_t power, steps;
};

static int loops_back(struct loop_watch *w, uint64_t addr)
{
	if (w->power && addr == w->mark)
		return 1;
	if (!w->power || ++w->steps == w->power) {
		w->mark = addr;
		w->power = w->power ? w->power * 2 : 1;
		w->steps = 0;
	}
	return 0;
}

static int rd(struct walk *w, uint64_t addr, void *buf, size_t len)
{
	if (!w->reads_left)
		return -1;
	w->reads_left--;
	return tb_mem_read(w->t->pid, addr, buf, len);
}

static int rd64_at(struct walk *w, uint64_t addr, uint64_t *out)
{
	return rd(w, addr, out, sizeof(*out));
}

static uint64_t rd64(const unsigned char *b, unsigned off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

static uint32_t rd32(const unsigned char *b, unsigned off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

static void add_frame(struct tb_uthread *th, uint32_t *cap, uint64_t code, int64_t offset, uint16_t id)
{
	th->frames = tb_grow(th->frames, cap, (uint32_t)th->depth + 1, sizeof(*th->frames), 64);
	th->frames[th->depth].code = code;
	th->frames[th->depth].offset = (int32_t)offset;
	th->frames[th->depth].code_id = id;
	th->frames[th->depth].entry = 0;
	th->depth++;
}

/* The last thread-local bytecode looked up: which code object's copy idx starts where. */
struct tlbc_seen {
	uint64_t code, start;
	int32_t idx;
};

/* Where the bytecode of the frame in fb starts: the code object's own, or for a
 * tlbc_index other than 0 entry tlbc_index of co_tlbc = {size, entries[]} (3.14t+).
 * 0 when it cannot be read or the index is not inside the array. */
static uint64_t bytecode_start(struct walk *w, const unsigned char *fb, uint64_t code, struct tlbc_seen *seen)
{
	const struct tb_py_offsets *o = &w->t->layout.bpf;
	uint64_t arr, size, entry, start = 0;
	int32_t idx;

	if (o->frame_tlbc_index == TB_NO_OFFSET || !(idx = (int32_t)rd32(fb, o->frame_tlbc_index)))
		return code + o->code_adaptive;
	if (seen->code == code && seen->idx == idx)
		return seen->start;
	if (idx > 0 && !rd64_at(w, code + o->code_tlbc, &arr) && arr && !rd64_at(w, arr, &size) &&
	    (int64_t)size > idx && !rd64_at(w, arr + 8 + 8 * (uint64_t)idx, &entry))
		start = entry;
	*seen = (struct tlbc_seen){ code, start, idx };
	return start;
}

static void walk_frames(struct walk *w, uint64_t frame, struct tb_uthread *th, int max_depth)
{
	const struct tb_target *t = w->t;
	const struct tb_py_offsets *o = &t->layout.bpf;
	unsigned char fb[TB_FRAME_BUF], cb[TB_CODE_BUF];
	struct loop_watch loop = { 0 };
	struct tlbc_seen seen = { 0 };
	uint32_t cap = 0;
	int steps = 0;

	while (frame && steps++ < max_depth + 64) {
		uint64_t code, instr;
		int64_t offset;
		uint32_t version = 0;

		if (loops_back(&loop, frame)) {
			th->error = "the frame chain loops back on itself";
			return;
		}
		if (rd(w, frame, fb, w->frame_size)) {
			th->error = w->reads_left ? "a frame could not be read" : "the read budget of the walk is spent";
			return;
		}
		frame = rd64(fb, o->frame_previous);
		if (o->frame_owner != TB_NO_OFFSET) {
			uint8_t owner = fb[o->frame_owner];

			if (owner >= o->owner_skip_min || owner == o->owner_cstack) {
				/* 3.12+: an evaluator call's shim lies under its first frame */
				if (owner == o->owner_entry && th->depth)
					th->frames[th->depth - 1].entry = 1;
				continue;
			}
		}
		if (th->depth >= max_depth) {
			th->truncated = 1;
			return;
		}
		code = rd64(fb, o->frame_code) & ~(uint64_t)o->code_tag_mask;
		if (!code || rd(w, code, cb, w->code_size)) {
			th->error = "a code object could not be read";
			return;
		}
		if (t->pycode_type && rd64(cb, o->object_type) != t->pycode_type) {
			th->error = "the frame chain changed while it was read";
			return;
		}
		if (o->code_version != TB_NO_OFFSET)
			version = rd32(cb, o->code_version);
		if (o->frame_kind == TB_FRAME_OBJECT) {
			int32_t lasti = (int32_t)rd32(fb, o->frame_instr);

			offset = lasti < 0 ? -2 : (int64_t)lasti * 2;
		} else {
			uint64_t start = bytecode_start(w, fb, code, &seen);

			instr = rd64(fb, o->frame_instr);
			offset = start ? (int64_t)(instr - start) : -3; /* -3: unknown, as out of range */
		}
		if (offset < -2 || offset > 0x7fffffff)
			offset = -2;
		add_frame(th, &cap, code, offset,
			  tb_code_id(rd32(cb, o->code_firstlineno), rd32(cb, o->code_argcount), version));
		if (o->frame_is_entry < w->frame_size && fb[o->frame_is_entry]) /* 3.11 */
			th->frames[th->depth - 1].entry = 1;
	}
	if (frame)
		th->truncated = 1;
}

/* 3.10 records no native thread id: read glibc's struct pthread (the thread
 * ident is its address; the tid's offset from the target's libc, discover.c).
 * Checked against /proc. */
static uint32_t tid_from_pthread(struct walk *w, uint64_t ident)
{
	char path[64];
	int32_t tid = 0;

	if (!ident || !w->t->pthread_tid_offset ||
	    rd(w, ident + w->t->pthread_tid_offset, &tid, sizeof(tid)) || tid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)w->t->pid, tid);
	return access(path, F_OK) == 0 ? (uint32_t)tid : 0;
}

static int gil_holder(struct walk *w, uint64_t interp, uint64_t *holder)
{
	const struct tb_target *t = w->t;
	const struct tb_layout *l = &t->layout;
	uint64_t gil = 0;
	int32_t locked = 0;

	*holder = 0;
	if (l->runtime_gil_holder != TB_NO_OFFSET) {
		if (rd64_at(w, t->runtime_addr + l->runtime_gil_holder, holder) ||
		    rd(w, t->runtime_addr + l->runtime_gil_locked, &locked, 4))
			return -1;
	} else if (l->interp_ceval_gil != TB_NO_OFFSET) {
		int32_t enabled = 1;

		if (rd64_at(w, interp + l->interp_ceval_gil, &gil) || !gil ||
		    (l->gil_enabled != TB_NO_OFFSET && rd(w, gil + l->gil_enabled, &enabled, 4)))
			return -1;
		if (!enabled) /* free-threaded, GIL disabled: no holder */
			return 0;
		if (rd64_at(w, gil + l->gil_holder, holder) || rd(w, gil + l->gil_locked, &locked, 4))
			return -1;
	}
	if (!locked)
		*holder = 0;
	return 0;
}

/* One thread state at ts into th (holder: the GIL's holder); the next one, 0 at the end
 * of the list or on errors. */
static uint64_t walk_thread(struct walk *w, uint64_t ts, uint64_t holder, int collecting, struct tb_uthread *th,
			    int max_depth)
{
	const struct tb_layout *l = &w->t->layout;
	const struct tb_py_offsets *o = &l->bpf;
	unsigned char tb[TB_TSTATE_BUF];
	uint64_t frame;

	memset(th, 0, sizeof(*th));
	th->tstate = ts;
	if (rd(w, ts, tb, w->tstate_size)) {
		th->error = w->reads_left ? "the thread state could not be read" : "the read budget of the walk is spent";
		return 0;
	}
	th->ident = rd64(tb, o->tstate_thread_id);
	if (l->tstate_native_thread_id != TB_NO_OFFSET)
		th->native_tid = (uint32_t)rd64(tb, l->tstate_native_thread_id);
	else
		th->native_tid = tid_from_pthread(w, th->ident);
	th->holds_gil = holder == ts;
	th->in_gc = th->holds_gil && collecting;
	frame = rd64(tb, o->tstate_frame);
	if (frame && o->cframe_current_frame != TB_NO_OFFSET && rd64_at(w, frame + o->cframe_current_frame, &frame))
		th->error = "the current frame could not be read";
	else
		walk_frames(w, frame, th, max_depth);
	return rd64(tb, o->tstate_next);
}

/* Threads first..n-1 of one list that loops back: keep them up to the first one seen twice
 * (the loop was noticed a few threads after it closed). Returns the new count. */
static int drop_repeats(struct tb_uthread *out, int first, int n)
{
	for (int i = first + 1; i < n; i++) {
		for (int j = first; j < i; j++) {
			if (out[j].tstate != out[i].tstate)
				continue;
			tb_walk_free(out + i, n - i);
			return i;
		}
	}
	return n;
}

int tb_walk_process(const struct tb_target *t, struct tb_uthread *out, int max, int max_depth,
		    char *err, size_t errlen)
{
	const struct tb_py_offsets *o = &t->layout.bpf;
	struct walk w = { t, tb_layout_read_size(&t->layout, TB_READ_TSTATE),
			  tb_layout_read_size(&t->layout, TB_READ_FRAME),
			  tb_layout_read_size(&t->layout, TB_READ_CODE_HEAD), MAX_READS };
	struct loop_watch interps = { 0 };
	uint64_t interp = 0;
	int n = 0;

	err[0] = '\0';
	if (tb_layout_check_reads(&t->layout, err, errlen))
		return -1;
	if (rd64_at(&w, t->runtime_addr + o->runtime_interp_head, &interp) || !interp) {
		snprintf(err, errlen, "the interpreter state could not be read");
		return -1;
	}
	for (int k = 0; k < MAX_INTERPRETERS && interp && !loops_back(&interps, interp); k++) {
		struct loop_watch threads = { 0 };
		uint64_t ts = 0, holder = 0;
		int32_t collecting = 0;
		int first = n;

		gil_holder(&w, interp, &holder);
		if (t->layout.interp_gc_collecting == TB_NO_OFFSET ||
		    rd(&w, interp + t->layout.interp_gc_collecting, &collecting, sizeof(collecting)))
			collecting = 0;
		if (rd64_at(&w, interp + o->interp_threads_head, &ts))
			break;
		for (int guard = 0; ts && guard < TB_WALK_MAX_THREADS; guard++) {
			if (loops_back(&threads, ts)) {
				snprintf(err, errlen, "the thread list of interpreter 0x%llx loops back on itself",
					 (unsigned long long)interp);
				n = drop_repeats(out, first, n);
				break;
			}
			if (n == max) {
				snprintf(err, errlen, "more than %d threads: the rest are not shown", max);
				break;
			}
			ts = walk_thread(&w, ts, holder, collecting != 0, &out[n++], max_depth);
		}
		if (rd64_at(&w, interp + o->interp_next, &interp))
			interp = 0;
	}
	if (interp && !err[0])
		snprintf(err, errlen, "the interpreter list of the process loops back or is longer than %d",
			 MAX_INTERPRETERS);
	if (!w.reads_left && !err[0])
		snprintf(err, errlen, "the walk stopped after %u reads", MAX_READS);
	return n;
}

void tb_walk_free(struct tb_uthread *th, int n)
{
	for (int i = 0; i < n; i++)
		free(th[i].frames);
}
