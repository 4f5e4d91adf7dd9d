/* walk.c: reads every thread's frame chain out of a running process
 * (process_vm_readv, no stop), with the layout the BPF walker uses: shim
 * frames skipped, code objects type-checked, every loop and read bounded. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include "proc/procmem.h"
#include "cpython/walk.h"

#define MAX_INTERPRETERS 8
/* glibc x86_64: offsetof(struct pthread, tid) (2.36 and 2.43 alike); the
 * thread ident is the struct pthread's address. Checked against /proc. */
#define GLIBC_PTHREAD_TID 0x2d0

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

static void walk_frames(const struct tb_target *t, uint64_t frame, struct tb_uthread *th, int max_depth)
{
	const struct tb_py_offsets *o = &t->layout.bpf;
	unsigned char fb[TB_FRAME_BUF], cb[TB_CODE_BUF];
	int steps = 0;

	th->frames = calloc((size_t)max_depth, sizeof(*th->frames));
	if (!th->frames) {
		th->error = "out of memory";
		return;
	}
	while (frame && steps++ < max_depth + 64) {
		uint64_t code, instr;
		int64_t offset;
		uint32_t version = 0;

		if (tb_mem_read(t->pid, frame, fb, 104)) {
			th->error = "a frame could not be read";
			return;
		}
		frame = rd64(fb, o->frame_previous);
		if (o->frame_owner != TB_NO_OFFSET) {
			uint8_t owner = fb[o->frame_owner];

			if (owner >= o->owner_skip_min || owner == o->owner_cstack)
				continue;
		}
		if (th->depth >= max_depth) {
			th->truncated = 1;
			return;
		}
		code = rd64(fb, o->frame_code) & ~(uint64_t)o->code_tag_mask;
		if (!code || tb_mem_read(t->pid, code, cb, 120)) {
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
			instr = rd64(fb, o->frame_instr);
			offset = (int64_t)(instr - (code + o->code_adaptive));
		}
		if (offset < -2 || offset > 0x7fffffff)
			offset = -2;
		th->frames[th->depth].code = code;
		th->frames[th->depth].offset = (int32_t)offset;
		th->frames[th->depth].code_id = tb_code_id(rd32(cb, o->code_firstlineno),
							   rd32(cb, o->code_argcount), version);
		th->depth++;
	}
	if (frame)
		th->truncated = 1;
}

/* 3.10 records no native thread id: read glibc's struct pthread. */
static uint32_t tid_from_pthread(pid_t pid, uint64_t ident)
{
	char path[64];
	int32_t tid = 0;

	if (!ident || tb_mem_read(pid, ident + GLIBC_PTHREAD_TID, &tid, sizeof(tid)) || tid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, tid);
	return access(path, F_OK) == 0 ? (uint32_t)tid : 0;
}

static int gil_holder(const struct tb_target *t, uint64_t interp, uint64_t *holder)
{
	const struct tb_layout *l = &t->layout;
	uint64_t gil = 0;
	int32_t locked = 0;

	*holder = 0;
	if (l->runtime_gil_holder != TB_NO_OFFSET) {
		if (tb_mem_read_u64(t->pid, t->runtime_addr + l->runtime_gil_holder, holder) ||
		    tb_mem_read(t->pid, t->runtime_addr + l->runtime_gil_locked, &locked, 4))
			return -1;
	} else if (l->interp_ceval_gil != TB_NO_OFFSET) {
		if (tb_mem_read_u64(t->pid, interp + l->interp_ceval_gil, &gil) || !gil ||
		    tb_mem_read_u64(t->pid, gil + l->gil_holder, holder) ||
		    tb_mem_read(t->pid, gil + l->gil_locked, &locked, 4))
			return -1;
	}
	if (!locked)
		*holder = 0;
	return 0;
}

int tb_walk_process(const struct tb_target *t, struct tb_uthread *out, int max, int max_depth,
		    char *err, size_t errlen)
{
	const struct tb_py_offsets *o = &t->layout.bpf;
	uint64_t interp = 0;
	int n = 0;

	if (tb_mem_read_u64(t->pid, t->runtime_addr + o->runtime_interp_head, &interp) || !interp) {
		snprintf(err, errlen, "pid %d: the interpreter state could not be read", (int)t->pid);
		return -1;
	}
	for (int k = 0; k < MAX_INTERPRETERS && interp; k++) {
		uint64_t ts = 0, holder = 0;
		int guard = 0;

		gil_holder(t, interp, &holder);
		if (tb_mem_read_u64(t->pid, interp + o->interp_threads_head, &ts))
			break;
		while (ts && n < max && guard++ < TB_WALK_MAX_THREADS) {
			unsigned char tb[TB_TSTATE_BUF];
			struct tb_uthread *th = &out[n++];
			uint64_t frame;

			memset(th, 0, sizeof(*th));
			th->tstate = ts;
			if (tb_mem_read(t->pid, ts, tb, sizeof(tb))) {
				th->error = "the thread state could not be read";
				break;
			}
			th->ident = rd64(tb, o->tstate_thread_id);
			if (t->layout.tstate_native_thread_id != TB_NO_OFFSET)
				th->native_tid = (uint32_t)rd64(tb, t->layout.tstate_native_thread_id);
			else
				th->native_tid = tid_from_pthread(t->pid, th->ident);
			th->holds_gil = holder == ts;
			frame = rd64(tb, o->tstate_frame);
			if (frame && o->cframe_current_frame != TB_NO_OFFSET &&
			    tb_mem_read_u64(t->pid, frame + o->cframe_current_frame, &frame))
				th->error = "the current frame could not be read";
			else
				walk_frames(t, frame, th, max_depth);
			ts = rd64(tb, o->tstate_next);
		}
		if (tb_mem_read_u64(t->pid, interp + o->interp_next, &interp))
			break;
	}
	return n;
}

void tb_walk_free(struct tb_uthread *th, int n)
{
	for (int i = 0; i < n; i++)
		free(th[i].frames);
}
