// SPDX-License-Identifier: GPL-2.0
/* tachyon.bpf.c: the perf-event sampler and its scheduler/lifecycle hooks.
 *
 * On each CPU sample of a profiled process: find the running thread's
 * PyThreadState (cached per thread, validated by one read), read its GIL,
 * GC and exception status, walk its frame chain (an inline bounded loop,
 * then bpf_loop for deep stacks; one read per frame and one per distinct
 * code object) and push one record (header, with --kernel the kernel stack,
 * then the frames) into the ring buffer.
 * In wall mode the same walk runs at switch-out and the wake-up carries the
 * time off CPU.  Fork, exec and exit keep the process table current.  Every
 * read of target memory is bounded; the interpreter layout comes from the
 * `procs` map that the agent fills.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "tachyon.h"
#include TB_ARCH_HEADER /* bpf/arch/x86.h or arm64.h: the Makefile picks it */

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 max_depth = TB_DEFAULT_DEPTH;
/* Opcode bytes read: 0 none, 1 the innermost frame's, 2 every frame's. */
const volatile __u32 read_opcodes = 1;
/* Benchmarks only (--bench-walk): 1 skips the code-object read. */
const volatile __u32 bench_walk = 0;
/* Which new processes to report: TB_FOLLOW_* (include/tachyon.h). */
const volatile __u32 follow_mode = 0;
/* Wall mode: also record stacks at switch-out, weighted by time off CPU. */
const volatile __u32 wall_mode = 0;
/* Only tasks under the cgroup (v2) in cgroup_map[0] (--cgroup, --container). */
const volatile __u32 cgroup_filter = 0;
/* --kernel: copy the kernel stack of each sample into its record. */
const volatile __u32 kernel_stacks = 0;
/* --native: native user frames recorded per sample, at most (0: off). */
const volatile __u32 native_depth = 0;
/* --async-aware: read the thread's running asyncio task (3.14+) into each record. */
const volatile __u32 async_aware = 0;
/* Benchmarks only (--bench-task-reads N): the running task read N more times per sample. */
const volatile __u32 bench_task_reads = 0;
/* The kernel has bpf_task_pt_regs and bpf_get_current_task_btf (5.15; the agent
 * probes): else the saved user registers are found at the top of the task's stack. */
const volatile __u32 has_task_pt_regs = 1;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_map SEC(".maps");

/* Is the current task one we may look at? */
static __always_inline int in_scope(void)
{
	return !cgroup_filter || bpf_current_task_under_cgroup(&cgroup_map, 0) == 1;
}

/* Re-walk the thread list of a thread with no state at most this often. */
#define TSTATE_RETRY_NS (50ull * 1000 * 1000)
#define MAX_INTERPRETERS 8
/* Frames walked in the inline loop before bpf_loop takes over. */
#define INLINE_FRAMES 160
/* Entries of the per-walk code-object cache (power of two). */
#define CODE_CACHE 16
/* Bytes of data stack read at once (a page: the rest of a frame's page): see load_frame. */
#define FRAME_BLOCK 4096

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct tb_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct tb_thread);
} threads SEC(".maps");

/* Processes whose children are followed (--subprocesses), key: tgid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u32);
} followed SEC(".maps");

/* Wall mode: when a profiled thread went off CPU, key: tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} off_cpu_since SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20); /* the agent resizes it before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TB_C_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Native unwinding (include/tachyon.h; user/capture/unwind.c fills them).
 * urows is sized by the agent before load (--native-table-mb). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tb_urow);
} urows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TB_MAX_UFILES);
	__type(key, __u32);
	__type(value, struct tb_ufile);
} ufiles SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct tb_umaps);
} umaps SEC(".maps");

/* Per-CPU working memory: the record being built and read buffers. */
struct scratch {
	struct tb_sample sample;
	__u32 lead;       /* words before the Python frames: nkernel + nnative */
	struct tb_py_offsets off;
	__u64 pycode_type;
	__u64 frame;      /* next frame to visit */
	__u64 tstate;     /* thread-list walk cursor */
	__u64 pthread_self; /* the thread's pthread_self(): its thread pointer less proc->tls_to_pthread */
	__u64 gil;        /* the GIL struct of this thread's interpreter, 0: none */
	__u32 flags;
	__u32 depth;
	__u32 walked;     /* frames visited (shims too), at most walk_limit() */
	__u32 phase;      /* without bpf_loop: PHASE_*, where the next program goes on */
	__u32 wake;       /* wake the agent at this record (a body's code not seen before) */
	/* the native walk: registers of the frame being left */
	__u64 npc, nsp, nbp;
	__u64 nlr;        /* the link register (arm64), while nlr_ok */
	__u32 nlr_ok;     /* nlr is this frame's: the first frame, or one a signal frame resumes */
	__u32 nra;        /* npc is a return address (look up npc - 1) */
	__u32 nn;         /* native words written */
	__u32 nat;        /* index of the first native word in words[] */
	__u32 nstop;      /* TB_NS_* */
	__u32 nguess;     /* a frame without a table was left by frame pointer: rbp may be a guess */
	__u32 npartial;   /* a frame without a table met: TB_NS_UNKNOWN_MAP (before NO_TABLE) */
	__u64 sigbuf[7];  /* a signal frame's registers (sigcontext; bpf/arch/TARGET.h) */
	__u64 uregs[TB_PT_REGS_WORDS]; /* the task's saved user registers (saved_user_regs) */
	__u8 tbuf[TB_TSTATE_BUF + 8];
	__u8 gbuf[64];
	__u8 fbuf[TB_FRAME_BUF + 8];
	/* 3.11+: the last data-stack block read, [blk_addr, blk_addr + blk_len) */
	__u64 blk_addr;
	__u32 blk_len;
	__u8 fblock[FRAME_BLOCK + TB_FRAME_BUF + 8];
	__u8 cbuf[TB_CODE_BUF + 8];
	/* Code objects already read during this walk. A code object on the
	 * live frame chain is referenced by its frame, so within one walk its
	 * address cannot be reused: a hit is as good as a read. */
	struct {
		__u64 addr;
		__u64 bytecode;   /* 3.10: co_code (PyBytesObject *); 3.14t+: the copy of tlbc_index */
		__s32 tlbc_index; /* 3.14t+: whose copy bytecode is (0: none read yet) */
		__u16 id;
	} ccache[CODE_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);

	if (v)
		*v += 1;
}

static __always_inline __u64 read_ptr(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* Field getters on the read buffers: offsets are masked so the verifier
 * sees every access inside the buffer. */
static __always_inline __u64 buf_u64(__u8 *buf, __u16 off)
{
	return *(__u64 *)(buf + (off & (TB_FRAME_BUF - 1)));
}

static __always_inline __u32 buf_u32(__u8 *buf, __u16 off)
{
	return *(__u32 *)(buf + (off & (TB_FRAME_BUF - 1)));
}

static __always_inline __u64 tbuf_u64(__u8 *buf, __u16 off)
{
	return *(__u64 *)(buf + (off & (TB_TSTATE_BUF - 1)));
}

static __always_inline __u8 buf_u8(__u8 *buf, __u16 off)
{
	return *(buf + (off & (TB_FRAME_BUF - 1)));
}

/* bpf_loop takes its context on the stack: it carries the scratch pointer. */
struct loop_ctx {
	struct scratch *s;
};

/* One thread state of the interpreter's list: 1 when the walk stops. */
static __always_inline long match_thread_one(struct scratch *s)
{
	__u64 id;

	if (!s->tstate)
		return 1;
	id = read_ptr(s->tstate + s->off.tstate_thread_id);
	if (id == s->pthread_self) {
		s->frame = s->tstate; /* found: frame holds the match */
		return 1;
	}
	s->tstate = read_ptr(s->tstate + s->off.tstate_next);
	return 0;
}

/* bpf_loop callback: one thread state. */
static long match_thread(__u32 i, struct loop_ctx *ctx)
{
	return match_thread_one(ctx->s);
}

/* Without bpf_loop: every interpreter's list in one bounded loop of
 * TB_MAX_THREADS steps in all, its count the only number the loop carries
 * (loops nested, or a count of interpreters, cost the verifier a product of
 * paths).  The steps taken. */
static __always_inline __u64 walk_threads_flat(struct scratch *s, __u64 interp)
{
	__u32 n;

	s->tstate = read_ptr(interp + s->off.interp_threads_head);
	for (n = 0; n < TB_MAX_THREADS; n++) {
		if (!s->tstate) { /* the list ends: the next interpreter's */
			interp = read_ptr(interp + s->off.interp_next);
			if (!interp)
				break;
			s->tstate = read_ptr(interp + s->off.interp_threads_head);
			continue;
		}
		if (match_thread_one(s))
			break;
	}
	return n;
}

/* Walk every interpreter's thread list for the state whose thread_id is
 * this thread's pthread_self(): exact across pid namespaces. The
 * entries visited are charged to the process's walk budget. */
static __always_inline __u64 walk_threads(struct scratch *s, struct tb_proc *proc, int bounded)
{
	__u64 interp = read_ptr(proc->runtime_addr + s->off.runtime_interp_head);
	struct loop_ctx ctx = { s };
	__u64 entries = 0;
	long n;

	s->frame = 0;
	if (bounded && interp)
		entries = walk_threads_flat(s, interp);
	for (int k = 0; !bounded && k < MAX_INTERPRETERS && interp; k++) {
		s->tstate = read_ptr(interp + s->off.interp_threads_head);
		n = bpf_loop(TB_MAX_THREADS, match_thread, &ctx, 0);
		entries += n > 0 ? n : 0;
		if (s->frame)
			break;
		interp = read_ptr(interp + s->off.interp_next);
	}
	__sync_fetch_and_add(&proc->walk_entries, entries);
	return s->frame;
}

/* May this process walk its thread lists now? Its budget: TB_WALK_BUDGET
 * entries per TB_WALK_WINDOW_NS (updated from every CPU without a lock: a
 * few walks more or less at a window's edge; a window another CPU opened
 * after `now` was taken is the current one). */
static __always_inline int walk_allowed(struct tb_proc *proc, __u64 now)
{
	if ((__s64)(now - proc->walk_window_ns) >= (__s64)TB_WALK_WINDOW_NS) {
		proc->walk_window_ns = now;
		proc->walk_entries = 0;
	}
	return proc->walk_entries < TB_WALK_BUDGET;
}

/* Read the thread state's prefix into tbuf; true if it still belongs to
 * this thread (thread_id == pthread_self()). */
static __always_inline int load_tstate(struct scratch *s, __u64 tstate)
{
	if (bpf_probe_read_user(s->tbuf, s->off.tstate_read_size & (TB_TSTATE_BUF - 1),
				(void *)tstate))
		return 0;
	return tbuf_u64(s->tbuf, s->off.tstate_thread_id) == s->pthread_self;
}

static __always_inline void fill_ns_ids(struct tb_sample_hdr *hdr)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pid *tpid = BPF_CORE_READ(task, thread_pid);
	struct pid *gpid = BPF_CORE_READ(task, group_leader, thread_pid);
	unsigned int level = BPF_CORE_READ(tpid, level);

	hdr->ns_tid = BPF_CORE_READ(tpid, numbers[level].nr);
	hdr->ns_pid = BPF_CORE_READ(gpid, numbers[level].nr);
}

/* The thread's state; also fills the header's namespace ids, kept in the
 * same cache entry (reading them costs five kernel reads). A miss walks the
 * thread lists: at most every TSTATE_RETRY_NS per thread, within the
 * process's walk budget (a skipped walk leaves the cache as it was). */
static __always_inline __u64 find_tstate(struct scratch *s, struct tb_proc *proc, __u32 tid, int bounded)
{
	struct tb_thread *cached = bpf_map_lookup_elem(&threads, &tid);
	struct tb_thread entry = {};
	__u64 now = bpf_ktime_get_ns();

	if (cached && cached->pthread_self == s->pthread_self) {
		s->sample.hdr.ns_pid = cached->ns_pid;
		s->sample.hdr.ns_tid = cached->ns_tid;
		if (cached->tstate && load_tstate(s, cached->tstate))
			return cached->tstate;
		if (!cached->tstate && now - cached->miss_ns < TSTATE_RETRY_NS)
			return 0;
	}
	fill_ns_ids(&s->sample.hdr);
	if (!walk_allowed(proc, now)) {
		count(TB_C_WALKS_SKIPPED);
		return 0;
	}
	count(TB_C_TSTATE_WALKS);
	entry.ns_pid = s->sample.hdr.ns_pid;
	entry.ns_tid = s->sample.hdr.ns_tid;
	entry.pthread_self = s->pthread_self;
	entry.tstate = walk_threads(s, proc, bounded);
	if (entry.tstate && !load_tstate(s, entry.tstate))
		entry.tstate = 0;
	if (!entry.tstate)
		entry.miss_ns = now;
	bpf_map_update_elem(&threads, &tid, &entry, BPF_ANY);
	return entry.tstate;
}

/* GIL holder, collection running, exception being handled: flags read
 * from the interpreter's own state. A free-threaded interpreter's GIL is
 * disabled unless something enabled it at run time: then there is none. */
static __always_inline void thread_status(struct scratch *s, const struct tb_proc *proc, __u64 tstate)
{
	struct tb_py_offsets *off = &s->off;
	__u64 interp = tbuf_u64(s->tbuf, off->tstate_interp), exc;

	s->gil = 0;
	if (off->runtime_gil != TB_NO_OFFSET)
		s->gil = proc->runtime_addr + off->runtime_gil;
	else if (off->interp_ceval_gil != TB_NO_OFFSET && interp)
		s->gil = read_ptr(interp + off->interp_ceval_gil);
	if (s->gil && !bpf_probe_read_user(s->gbuf, sizeof(s->gbuf), (void *)s->gil)) {
		__u32 locked = *(__u32 *)(s->gbuf + (off->gil_locked & 31));
		__u64 holder = *(__u64 *)(s->gbuf + (off->gil_holder & 31));

		if (off->gil_enabled != TB_NO_OFFSET && !*(__u32 *)(s->gbuf + (off->gil_enabled & 31))) {
			s->flags |= TB_F_NO_GIL;
			s->gil = 0; /* nothing to hold or wait for */
		} else if (locked && holder == tstate) {
			s->flags |= TB_F_GIL_HELD;
		}
	}
	if (interp && off->interp_gc_collecting != TB_NO_OFFSET) {
		__u32 collecting = 0;

		if (!bpf_probe_read_user(&collecting, sizeof(collecting),
					 (void *)(interp + off->interp_gc_collecting)) && collecting)
			s->flags |= TB_F_GC;
	}
	exc = tbuf_u64(s->tbuf, off->tstate_exc_info);
	if (exc && off->tstate_exc_info != TB_NO_OFFSET) {
		__u64 value = read_ptr(exc + off->stackitem_exc_value);

		if (value && value != proc->none_addr)
			s->flags |= TB_F_EXCEPTION;
	}
}

/* Where the frame's bytecode starts. Free-threaded 3.14+ runs each thread on
 * its own copy of the bytecode (thread-local bytecode): the frame's
 * tlbc_index selects it in co_tlbc, {size, entries[]}, whose entry 0 is the
 * code object's own. Read once per code object and walk (a walk is one
 * thread's); 0 when it cannot be read or the index is not in the array. */
static __always_inline __u64 bytecode_start(struct scratch *s, __u8 *fb, typeof(&s->ccache[0]) cached,
					    __u64 code)
{
	struct tb_py_offsets *off = &s->off;
	__u64 arr;
	__s32 idx;

	if (off->frame_tlbc_index == TB_NO_OFFSET)
		return code + off->code_adaptive;
	idx = (__s32)buf_u32(fb, off->frame_tlbc_index);
	if (idx == 0)
		return code + off->code_adaptive;
	if (cached->tlbc_index == idx)
		return cached->bytecode;
	cached->tlbc_index = idx;
	cached->bytecode = 0;
	arr = read_ptr(code + off->code_tlbc);
	if (idx > 0 && arr && (__s64)read_ptr(arr) > idx)
		cached->bytecode = read_ptr(arr + 8 + 8 * (__u64)idx);
	return cached->bytecode;
}

/* Where Python frame i of the record goes: right after the kernel and native
 * words, at a masked position (include/tachyon.h). */
static __always_inline struct tb_frame *frame_slot(struct scratch *s, __u32 i)
{
	return (struct tb_frame *)&s->sample.words[(s->lead & (TB_LEAD_WORDS - 1)) +
						    2 * (i & (TB_MAX_FRAMES - 1))];
}

/* --native: the innermost frame recorded so far is the one an evaluator
 * call was made for (its shim comes next in the chain). */
static __always_inline void mark_entry(struct scratch *s)
{
	if (native_depth && s->depth > 0)
		frame_slot(s, s->depth - 1)->flags |= TB_FF_ENTRY;
}

/* The frame's first frame_read_size bytes, or NULL if they cannot be read.
 * 3.11+ frames live on the thread's data stack, each caller right below its
 * callee: a frame outside the last block read starts a new block, up to
 * FRAME_BLOCK bytes ending with this frame's prefix and not below its page
 * (the page below may be unmapped), so the callers after it need no read of
 * their own.  A frame elsewhere (a generator's, another chunk) is simply
 * outside the block.  3.10's frames are heap objects: one read each. */
static __always_inline __u8 *load_frame(struct scratch *s, __u64 frame)
{
	__u32 size = s->off.frame_read_size & (TB_FRAME_BUF - 1);
	__u64 rel = frame - s->blk_addr, start, len;

	if (rel + size <= s->blk_len && rel < FRAME_BLOCK)
		return s->fblock + (rel & (FRAME_BLOCK - 1));
	if (s->off.frame_kind == TB_FRAME_INTERP && frame > FRAME_BLOCK) {
		start = frame + size - FRAME_BLOCK;
		if (start < (frame & ~4095ull))
			start = frame & ~4095ull;
		len = frame + size - start;
		if (len <= FRAME_BLOCK && !bpf_probe_read_user(s->fblock, len, (void *)start)) {
			s->blk_addr = start;
			s->blk_len = (__u32)len;
			rel = frame - start;
			return s->fblock + (rel & (FRAME_BLOCK - 1));
		}
	}
	if (bpf_probe_read_user(s->fbuf, size, (void *)frame))
		return NULL;
	return s->fbuf;
}

/* A module's or class body's code object (co_flags without CO_OPTIMIZED) is
 * freed when the body ends (an import, a class statement) and its memory
 * reused within a millisecond: at the agent's next timed drain it is gone
 * (38% of an import-heavy run's samples named <unreadable code>).  Such a
 * code object not seen in its slot here wakes the agent at this record, so
 * it reads the object while the body still runs.  A function's code is kept
 * by its function, and steady state costs one slot compare per body frame
 * (the main module's, once per sample). */
#define BODY_SLOTS 1024

struct body_code {
	__u64 code;
	__u32 pid;
	__u16 id;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BODY_SLOTS);
	__type(key, __u32);
	__type(value, struct body_code);
} body_codes SEC(".maps");

static __always_inline void note_body_code(struct scratch *s, __u64 code, __u16 id)
{
	__u32 pid = s->sample.hdr.pid;
	__u32 slot = (__u32)((code >> 4) ^ pid) & (BODY_SLOTS - 1);
	struct body_code *b = bpf_map_lookup_elem(&body_codes, &slot);

	if (!b || (b->code == code && b->pid == pid && b->id == id))
		return;
	b->code = code;
	b->pid = pid;
	b->id = id;
	s->wake = 1;
}

/* Visit one frame, record it unless it is a shim. Non-zero: stop. */
static __always_inline long visit_frame(struct scratch *s)
{
	struct tb_py_offsets *off = &s->off;
	__u64 frame = s->frame, code, instr;
	__u64 *out;
	typeof(&s->ccache[0]) cached;
	__s64 offset;
	__u8 opcode = 0, fflags = 0, *fb;

	if (!frame)
		return 1;
	fb = load_frame(s, frame);
	if (!fb) {
		s->flags |= TB_F_READ_ERROR;
		return 1;
	}
	s->frame = buf_u64(fb, off->frame_previous);
	if (off->frame_owner != TB_NO_OFFSET) {
		__u8 owner = buf_u8(fb, off->frame_owner);

		if (owner >= off->owner_skip_min || owner == off->owner_cstack) {
			if (owner == off->owner_entry)
				mark_entry(s);
			return 0; /* C-boundary shim frame */
		}
	}
	if (s->depth >= max_depth || s->depth >= TB_MAX_FRAMES) {
		s->flags |= TB_F_TRUNCATED;
		return 1;
	}
	code = buf_u64(fb, off->frame_code) & ~(__u64)off->code_tag_mask;
	if (!code) {
		s->flags |= TB_F_READ_ERROR;
		return 1;
	}
	cached = &s->ccache[(code >> 4) & (CODE_CACHE - 1)];
	if (cached->addr != code) {
		__u32 firstlineno, argcount, version = 0;

		if (!bench_walk && bpf_probe_read_user(s->cbuf, off->code_read_size & (TB_CODE_BUF - 1),
						       (void *)code)) {
			s->flags |= TB_F_READ_ERROR;
			return 1;
		}
		if (!bench_walk && s->pycode_type && buf_u64(s->cbuf, off->object_type) != s->pycode_type) {
			s->flags |= TB_F_BAD_FRAME;
			return 1;
		}
		firstlineno = buf_u32(s->cbuf, off->code_firstlineno);
		argcount = buf_u32(s->cbuf, off->code_argcount);
		if (off->code_version != TB_NO_OFFSET)
			version = buf_u32(s->cbuf, off->code_version);
		cached->addr = code;
		cached->id = tb_code_id(firstlineno, argcount, version);
		if (!bench_walk && off->code_flags != TB_NO_OFFSET &&
		    !(buf_u32(s->cbuf, off->code_flags) & TB_CO_OPTIMIZED))
			note_body_code(s, code, cached->id);
		cached->bytecode = off->frame_kind == TB_FRAME_OBJECT ? buf_u64(s->cbuf, off->code_adaptive) : 0;
		cached->tlbc_index = 0;
	}

	if (off->frame_kind == TB_FRAME_OBJECT) {
		__s32 lasti = (__s32)buf_u32(fb, off->frame_instr);

		offset = lasti < 0 ? -2 : (__s64)lasti * 2;
		instr = cached->bytecode + off->bytes_sval + offset;
	} else {
		__u64 start = bytecode_start(s, fb, cached, code);

		instr = buf_u64(fb, off->frame_instr);
		offset = start ? (__s64)(instr - start) : -3; /* -3: not found, as out of range */
	}
	if (offset < -2 || offset > 0x7fffffff) {
		offset = -2; /* not inside this code object: treat as not started */
		fflags |= TB_FF_NO_OPCODE;
	} else if (offset >= 0 && (read_opcodes == 2 || (read_opcodes == 1 && s->depth == 0))) {
		if (bpf_probe_read_user(&opcode, 1, (void *)instr))
			fflags |= TB_FF_NO_OPCODE;
	} else {
		fflags |= TB_FF_NO_OPCODE;
	}

	/* 3.11: the frame an evaluator call was made for */
	if (native_depth && off->frame_is_entry < off->frame_read_size &&
	    buf_u8(fb, off->frame_is_entry))
		fflags |= TB_FF_ENTRY;

	/* struct tb_frame in two stores: code, then offset | code_id | opcode | flags */
	out = (__u64 *)frame_slot(s, s->depth);
	out[0] = code;
	out[1] = (__u32)offset | (__u64)cached->id << 32 | (__u64)opcode << 48 | (__u64)fflags << 56;
	s->depth++;
	return 0;
}

/* bpf_loop callback for frames past the inline part of the walk. */
static long visit_frame_cb(__u32 i, struct loop_ctx *ctx)
{
	return visit_frame(ctx->s);
}

/* Frames a walk visits at most: max_depth and TB_SHIM_SLACK shims. */
static __always_inline __u32 walk_limit(void)
{
	return max_depth + TB_SHIM_SLACK;
}

/* Before a walk: no code object cached, no data-stack block read.  (The barrier keeps the
 * compiler from peeling the loop's first block read: older verifiers refuse
 * the loop it then closes by a fall-through, scripts/check_bpf_cfg.py.) */
static __always_inline void walk_init(struct scratch *s)
{
	for (int i = 0; i < CODE_CACHE; i++)
		s->ccache[i].addr = 0;
	s->blk_len = 0;
	s->walked = 0;
	asm volatile("" ::: "memory");
}

/* The first INLINE_FRAMES frames in a plain bounded loop (an indirect
 * callback per frame costs ~35 ns here), deeper ones with bpf_loop so the
 * verifier's work stays bounded for any --max-depth. */
static __always_inline void walk_frames(struct scratch *s)
{
	struct loop_ctx ctx = { s };
	__u32 limit = walk_limit(), i;

	for (i = 0; i < INLINE_FRAMES && i < limit; i++)
		if (visit_frame(s))
			return;
	if (i < limit && s->frame)
		bpf_loop(limit - i, visit_frame_cb, &ctx, 0);
}

/* Kernels without bpf_loop: TB_BOUNDED_FRAMES frames per program; 1 when the
 * walk goes on (in the next program, by tail call). */
static __always_inline int walk_chunk(struct scratch *s)
{
	for (int i = 0; i < TB_BOUNDED_FRAMES; i++) {
		if (s->walked >= walk_limit())
			return 0;
		s->walked++;
		if (visit_frame(s))
			return 0;
	}
	return s->frame && s->walked < walk_limit();
}


static __always_inline void fill_header(struct scratch *s, __u32 pid, __u32 tid, __u8 type,
					__u64 value)
{
	s->sample.hdr.time_ns = bpf_ktime_get_ns();
	s->sample.hdr.value = value;
	s->sample.hdr.pid = pid;
	s->sample.hdr.tid = tid;
	s->sample.hdr.cpu = (__u16)bpf_get_smp_processor_id();
	s->sample.hdr.type = type;
	s->sample.hdr.flags = 0;
	s->sample.hdr.depth = 0;
	s->sample.hdr.nkernel = 0;
	s->sample.hdr.nnative = 0;
	s->sample.hdr.native_stop = 0;
	s->sample.hdr.task_coro = 0;
	s->sample.hdr.task = 0;
}

/* Waking the agent per record costs a context switch per sample (and in
 * wall mode feeds itself: the agent's wake-up switches a profiled thread
 * out). The agent drains on a timer; wake it only when the ring fills up. */
static __always_inline __u64 wakeup_flag(void)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);

	return avail > size / 4 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}


/* The record: the header, lead words, depth frames; one contiguous piece. */
static __always_inline void submit(struct scratch *s)
{
	__u32 depth = s->depth > TB_MAX_FRAMES ? TB_MAX_FRAMES : s->depth;
	__u64 size = sizeof(struct tb_sample_hdr) +
		     8 * ((__u64)(s->lead & (TB_LEAD_WORDS - 1)) + 2 * (__u64)depth);

	s->sample.hdr.flags = s->flags;
	s->sample.hdr.depth = depth;
	if (size > sizeof(struct tb_sample))
		size = sizeof(struct tb_sample);
	if (s->wake)
		count(TB_C_BODY_WAKEUPS);
	if (bpf_ringbuf_output(&events, &s->sample, size, s->wake ? BPF_RB_FORCE_WAKEUP : wakeup_flag()))
		count(TB_C_LOST);
}

/* --kernel: the kernel stack of this sample (leaf first) into the first
 * words of the record.  A perf_event sample taken in user mode has none; a
 * switch-out's starts in the tracepoint's trampoline and __schedule (the
 * agent trims those).  Its own function: the native walk follows it. */
static __always_inline void kernel_stack(void *ctx, struct scratch *s)
{
	long n;

	if (!kernel_stacks)
		return;
	n = bpf_get_stack(ctx, s->sample.words, TB_MAX_KERNEL * sizeof(__u64), 0);
	if (n <= 0)
		return;
	n /= sizeof(__u64);
	s->sample.hdr.nkernel = (__u16)n;
	s->lead = (__u32)n;
}

/* ---- native user frames (--native): docs/native-unwinding.md ----
 * The walk of user/proc/unwind_ref.c, step for step: one bpf_loop callback
 * per frame finds the pc's mapping (umaps), its file's row (urows), applies
 * the CFA rule and reads the return address (and the caller's frame
 * pointer) in one read, or takes it from the link register (arm64's leaf);
 * files without a table are left by frame pointer.  Every stop has a
 * reason (TB_NS_*).  Words are written at words[at + i]. */

/* The user registers a walk starts from. */
struct uregs {
	__u64 ip, sp, bp, lr;   /* lr: the link register (arm64), 0 on x86-64 */
	__u32 is_ra;       /* ip follows a syscall: look up ip - 1 */
	__u32 ok;
};

/* a return address below this ends the walk (the thread's first frame) */
#define MIN_RA 0x1000
/* search steps: ranges (TB_MAX_RANGES = 2^9), rows (2^24 rows per file) */
#define RANGE_STEPS 10
#define ROW_STEPS 25
#define NATIVE_MASK (TB_MAX_NATIVE - 1)
/* a guessed frame record (after a frame without a table) at most this far above sp */
#define PARTIAL_MAX_FRAME (1ull << 20)

/* The user registers saved at the current task's last entry into the kernel
 * (a system call, a fault, an interrupt) into s->uregs (struct pt_regs, as
 * words); 0 if they cannot be read.  bpf_task_pt_regs where the kernel has
 * it, else the top of the task's kernel stack, where the entry code saves
 * them: each possible stack size is tried and the words found there taken
 * only if they hold a 64-bit user task's segments. */
static __always_inline int saved_user_regs(struct scratch *s)
{
	const __u64 sizes[] = TB_STACK_SIZES;
	__u64 *w = s->uregs;
	void *stack;

	if (has_task_pt_regs)
		return !bpf_probe_read_kernel(w, sizeof(s->uregs),
					      (void *)bpf_task_pt_regs(bpf_get_current_task_btf()));
	stack = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), stack);
	for (int k = 0; k < (int)(sizeof(sizes) / sizeof(sizes[0])); k++)
		if (!bpf_probe_read_kernel(w, sizeof(s->uregs), stack + sizes[k] - TB_PT_REGS_SIZE) &&
		    TB_REGS_USER64(w))
			return 1;
	return 0;
}

/* Word i of the perf event's registers (struct bpf_perf_event_data starts
 * with them): one load at a constant offset from the context pointer itself,
 * the only form of context access the verifier takes. */
#define CTX_REG(ctx, i) ({							\
	__u64 __v;								\
	asm volatile("%0 = *(u64 *)(%1 + %2)" : "=r"(__v) : "r"(ctx), "i"(8 * (i)));	\
	__v;									\
})

/* The interrupted user registers: the perf event's (ctx: NULL at a
 * switch-out) when it hit user mode, else those saved at the task's last
 * kernel entry (then ip follows a syscall when orig_ax says one was made). */
static __always_inline void user_regs(struct scratch *s, void *ctx, struct uregs *r)
{
	*r = (struct uregs){};
	if (!native_depth)
		return;
	if (ctx) {
		__u64 mode = CTX_REG(ctx, TB_REG_MODE);

		if (TB_MODE_USER(mode)) {
			r->ip = CTX_REG(ctx, TB_REG_IP);
			r->sp = CTX_REG(ctx, TB_REG_SP);
			r->bp = CTX_REG(ctx, TB_REG_BP);
			r->lr = TB_CTX_LR(ctx);
			r->is_ra = 0;
			r->ok = TB_MODE_USER64(mode);
			return;
		}
	}
	if (!saved_user_regs(s))
		return;
	r->ip = s->uregs[TB_REG_IP];
	r->sp = s->uregs[TB_REG_SP];
	r->bp = s->uregs[TB_REG_BP];
	r->lr = TB_UREGS_LR(s->uregs);
	r->is_ra = TB_SYSCALL_NR(s->uregs) != -1;
	r->ok = TB_MODE_USER64(s->uregs[TB_REG_MODE]); /* not a kernel thread, not a 32-bit task */
}

struct native_ctx {
	struct scratch *s;
	struct tb_umaps *m;
};

static __always_inline long native_stop(struct scratch *s, __u32 why)
{
	s->nstop = why;
	return 1;
}

static __always_inline void native_push(struct scratch *s, __u64 word)
{
	s->sample.words[(s->nat & NATIVE_MASK) + (s->nn & NATIVE_MASK)] = word;
	s->nn++;
}

/* The mapping holding pc (m->r sorted, not overlapping), or NULL. */
static __always_inline struct tb_urange *find_range(struct tb_umaps *m, __u64 pc)
{
	__u32 lo = 0, hi = m->n < TB_MAX_RANGES ? m->n : TB_MAX_RANGES;

	for (int k = 0; k < RANGE_STEPS && lo < hi; k++) {
		__u32 mid = (lo + hi) / 2;
		struct tb_urange *r = &m->r[mid & (TB_MAX_RANGES - 1)];

		if (pc < r->start)
			hi = mid;
		else if (pc >= r->end)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}

/* The row in effect at rel (relative to the file's base): the last with
 * pc <= rel among urows[first .. first + nrows), or NULL. */
static __always_inline struct tb_urow *find_row(struct tb_ufile *f, __u64 rel)
{
	__u32 lo = f->first, hi = f->first + f->nrows, idx;

	if (rel >> 32 || hi < lo)
		return NULL;
	for (int k = 0; k < ROW_STEPS && lo < hi; k++) {
		__u32 mid = lo + (hi - lo) / 2;
		struct tb_urow *row = bpf_map_lookup_elem(&urows, &mid);

		if (!row)
			return NULL;
		if (row->pc <= (__u32)rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == f->first)
		return NULL;
	idx = lo - 1;
	return bpf_map_lookup_elem(&urows, &idx);
}

static __always_inline __u64 eval_flag(struct tb_ufile *f, __u64 key)
{
	for (__u32 k = 0; k < TB_MAX_EVAL; k++)
		if (k < f->neval && key >= f->eval_lo[k] && key < f->eval_hi[k])
			return TB_NF_EVAL;
	return 0;
}

/* What a frame left by frame pointer has (TB_FP_LEAF of bpf/arch/TARGET.h
 * says it by the leaf's instruction). */
enum {
	TB_LEAF_RECORD,        /* its frame record [fp, return address] at fp */
	TB_LEAF_RA_AT_SP,      /* x86-64: no record, the return address at sp */
	TB_LEAF_RECORD_AT_SP,  /* its record at sp (just stored) */
	TB_LEAF_RA_IN_LR,      /* arm64: no record, the return address in x30 */
};

/* Leave the frame for its caller at cfa: the return address as ra says
 * (TB_URA_*: at cfa - 8, in the link register, after the caller's fp in a
 * frame record, or alone at cfa + 8 * rbp8), the caller's fp at cfa + 8 *
 * rbp8 (0: unchanged; -2, the common push rbp first, read with the return
 * address in one 16-byte read).  A return address in the link register is
 * taken once (nlr_ok): sp may stay (a leaf that has not moved it), and that
 * cannot loop. */
static __always_inline long native_leave(struct scratch *s, __u64 cfa, int rbp8, __u32 ra_rule)
{
	__u64 pair[2], ra;

	if (cfa < s->nsp || (cfa == s->nsp && !(TB_HAS_LR && ra_rule == TB_URA_LR)))
		return native_stop(s, TB_NS_NOT_INCREASING);
	if (TB_HAS_LR && ra_rule == TB_URA_LR) {
		if (!s->nlr_ok)            /* a caller's link register is long overwritten */
			return native_stop(s, TB_NS_INVALID);
		ra = s->nlr;
		if (rbp8 && bpf_probe_read_user(&s->nbp, sizeof(s->nbp),
						(void *)(cfa + (__u64)(__s64)(8 * rbp8))))
			return native_stop(s, TB_NS_READ);
	} else if (TB_HAS_LR && ra_rule == TB_URA_SAVED) {
		if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa + (__u64)(__s64)(8 * rbp8))))
			return native_stop(s, TB_NS_READ);
	} else if (rbp8 == -2 || (TB_HAS_LR && ra_rule == TB_URA_RECORD)) {
		__u64 at = ra_rule == TB_URA_RECORD ? cfa + (__u64)(__s64)(8 * rbp8) : cfa - 16;

		if (bpf_probe_read_user(pair, sizeof(pair), (void *)at))
			return native_stop(s, TB_NS_READ);
		s->nbp = pair[0];
		ra = pair[1];
	} else {
		if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)))
			return native_stop(s, TB_NS_READ);
		if (rbp8 && bpf_probe_read_user(&s->nbp, sizeof(s->nbp),
						(void *)(cfa + (__u64)(__s64)(8 * rbp8))))
			return native_stop(s, TB_NS_READ);
	}
	ra &= TB_RA_MASK;
	s->nlr_ok = 0;
	s->nsp = cfa;
	s->npc = ra;
	s->nra = 1;
	return ra < MIN_RA ? native_stop(s, TB_NS_DONE) : 0;
}

/* Record one native frame and step to its caller: 1 when the walk stops.
 * A frame whose mapping is not known yet, or whose file's table is being
 * built, is kept (TB_NF_PARTIAL) and left by frame pointer; after it the
 * walk is a guess (nguess): a pc in no known mapping then ends it.  A
 * FP_ONLY file's leaf (the exact pc: it may be before push rbp or after
 * leave, where rbp is still or again the caller's) takes its row.  One
 * frame-pointer exit and one native_leave per kind: each copy costs the
 * verifier (the bounded shape's 8 steps a program hit its limit). */
static __always_inline long native_step_one(struct native_ctx *c)
{
	struct scratch *s = c->s;
	struct tb_urange *r;
	struct tb_ufile *f = NULL;
	struct tb_urow *row;
	__u64 key, word, cfa, bp;
	__u32 slot, keep;
	__u8 code[4];
	__u32 leaf, ra_rule;
	long stop;

	if (s->nn >= native_depth || s->nn >= TB_MAX_NATIVE)
		return native_stop(s, TB_NS_DEPTH);
	word = (s->npc & TB_NF_PC_MASK) | (s->nra ? TB_NF_RA : 0);
	r = find_range(c->m, s->npc);
	if (!r || (r->flags & TB_UR_PENDING)) {
		if (!r && s->nguess)
			return native_stop(s, TB_NS_UNKNOWN_MAP);
		if (!r || !s->npartial)        /* UNKNOWN_MAP first: the agent rereads the maps */
			s->npartial = r ? TB_NS_NO_TABLE : TB_NS_UNKNOWN_MAP;
		s->nguess = 1;
		word |= TB_NF_PARTIAL;
		f = NULL;
		goto by_fp;
	}
	key = s->npc - r->bias - s->nra;       /* ELF vaddr; pc - 1 for return addresses */
	slot = r->slot;
	if (slot)
		f = bpf_map_lookup_elem(&ufiles, &slot);
	if (f)
		word |= eval_flag(f, key);
	row = NULL;
	if (f && f->nrows && !((f->flags & TB_UF_FP_ONLY) && s->nra) && key >= f->base)
		row = find_row(f, key - f->base);
	if (!f || !f->nrows || ((f->flags & TB_UF_FP_ONLY) && (!row || TB_UROW_KIND(row) == TB_UK_INVALID))) {
by_fp:
		native_push(s, word | TB_NF_FP);
		/* a leaf at its prologue or at a ret: no frame record of its own
		 * (TB_FP_LEAF, bpf/arch/TARGET.h; prologue_cfa in
		 * user/proc/unwind_ref.c reads the same bytes) */
		bp = s->nbp;
		keep = 0;
		if (!s->nra && !bpf_probe_read_user(code, sizeof(code), (void *)s->npc)) {
			leaf = TB_FP_LEAF(code);
			if (leaf == TB_LEAF_RA_AT_SP) {
				keep = 1;
				s->nbp = s->nsp - 8;  /* the pair read at sp - 8: only its return address used */
			} else if (leaf == TB_LEAF_RECORD_AT_SP) {
				s->nbp = s->nsp;
			} else if (TB_HAS_LR && leaf == TB_LEAF_RA_IN_LR) {
				return native_leave(s, s->nsp, 0, TB_URA_LR);
			}
		}
		if (!s->nbp)                   /* the outermost frame cleared rbp (_start) */
			return native_stop(s, TB_NS_DONE);
		/* after a frame without a table, rbp is a guess: a frame record more
		 * than PARTIAL_MAX_FRAME above sp is not one this thread's stack made */
		if (s->nguess && s->nbp + 16 - s->nsp > PARTIAL_MAX_FRAME)
			return native_stop(s, TB_NS_NOT_INCREASING);
		stop = native_leave(s, s->nbp + 16, -2, TB_URA_CFA8);
		if (keep)
			s->nbp = bp;
		return stop;
	}
	native_push(s, word);
	if (!row)
		return native_stop(s, TB_NS_INVALID);
	switch (TB_UROW_KIND(row)) {
	case TB_UK_RSP:
		cfa = s->nsp + 8ull * row->cfa8;
		break;
	case TB_UK_RBP:
		cfa = s->nbp + 8ull * row->cfa8;
		break;
	case TB_UK_PLT:
		cfa = s->nsp + 8 + ((s->npc & 15) >= row->cfa8 ? 8 : 0);
		break;
	case TB_UK_SIGNAL:
		/* the interrupted registers: fp, sp, pc (and arm64's lr) of the sigcontext */
		if (bpf_probe_read_user(s->sigbuf, sizeof(s->sigbuf), (void *)(s->nsp + TB_SIGFRAME_REGS)))
			return native_stop(s, TB_NS_READ);
		s->nlr = TB_SIG_LR(s->sigbuf);
		s->nlr_ok = TB_HAS_LR;
		s->nbp = s->sigbuf[TB_SIG_BP];
		s->nsp = s->sigbuf[TB_SIG_SP];
		s->npc = s->sigbuf[TB_SIG_IP];
		s->nra = 0;                    /* resumes at the exact pc; sp may jump */
		return 0;
	case TB_UK_STOP:
		return native_stop(s, TB_NS_DONE);
	default:
		return native_stop(s, TB_NS_INVALID);
	}
	ra_rule = TB_HAS_LR ? TB_UROW_RA(row) : TB_URA_CFA8;
	/* a frame record 8*rbp8 above the frame's bottom (CFA - 8*cfa8) when rbp8 >= 0 */
	return native_leave(s, cfa, ra_rule == TB_URA_RECORD && row->rbp8 >= 0 ?
			    (int)row->rbp8 - (int)row->cfa8 : row->rbp8, ra_rule);
}

/* bpf_loop callback: one native frame. */
static long native_step(__u32 i, struct native_ctx *c)
{
	return native_step_one(c);
}

/* Before the native walk of the current task's user stack from r into
 * words[at ..] (at: the kernel words before them): the process's mappings,
 * or NULL when there is nothing to walk (nstop says why). */
static __always_inline struct tb_umaps *native_setup(struct scratch *s, const struct uregs *r, __u32 at)
{
	__u32 pid = s->sample.hdr.pid;
	struct tb_umaps *m;

	s->nn = 0;
	s->nat = at;
	s->nguess = 0;
	s->npartial = 0;
	s->nstop = TB_NS_NO_REGS;
	if (!r->ok || !r->ip || !r->sp)
		return NULL;
	s->npc = r->ip;
	s->nsp = r->sp;
	s->nbp = r->bp;
	s->nlr = r->lr;
	s->nlr_ok = TB_HAS_LR;  /* saved at the kernel entry too: exact after a syscall */
	s->nra = r->is_ra;
	s->nstop = TB_NS_NONE;  /* its tables are not loaded yet */
	m = bpf_map_lookup_elem(&umaps, &pid);
	if (m)
		s->nstop = TB_NS_DEPTH; /* unless a step says otherwise */
	return m;
}

/* After it: the header gets the count and the reason the walk ended; the
 * Python frames follow the native words. */
static __always_inline void native_end(struct scratch *s)
{
	s->sample.hdr.nnative = s->nn;
	s->sample.hdr.native_stop = s->npartial && s->nstop != TB_NS_UNKNOWN_MAP ? s->npartial : s->nstop;
	s->lead = s->sample.hdr.nkernel + s->sample.hdr.nnative;
}

/* --native: the native user stack of this sample into the words after the
 * kernel PCs, from the perf event's registers (ctx of tb_sample) or, at a
 * switch-out (TB_F_OFF_CPU: ctx of tb_switch), the task's saved ones.  The
 * mappings, NULL if there are no steps to take. */
static __always_inline struct tb_umaps *native_begin(void *ctx, struct scratch *s, __u32 flags)
{
	struct uregs ur;

	/* flags is a constant of each program: tb_switch never reads a perf context */
	user_regs(s, flags & TB_F_OFF_CPU ? NULL : ctx, &ur);
	return native_setup(s, &ur, s->sample.hdr.nkernel);
}

/* The whole native walk with bpf_loop. */
static __always_inline void native_stack(void *ctx, struct scratch *s, __u32 flags)
{
	struct native_ctx c = { s, NULL };

	if (!native_depth)
		return;
	c.m = native_begin(ctx, s, flags);
	if (c.m)
		bpf_loop(native_depth + 1, native_step, &c, 0);
	native_end(s);
}

/* Without bpf_loop: TB_BOUNDED_NATIVE native frames per program; 1 when the
 * walk goes on (in the next program, by tail call). */
static __always_inline int native_chunk(struct scratch *s)
{
	__u32 pid = s->sample.hdr.pid;
	struct native_ctx c = { s, bpf_map_lookup_elem(&umaps, &pid) };

	if (!c.m)
		return 0; /* the process has just left: its record is dropped */
	for (int i = 0; i < TB_BOUNDED_NATIVE; i++)
		if (native_step_one(&c))
			return 0;
	return 1;
}

/* --async-aware: the thread's running asyncio task (_PyThreadStateImpl's
 * asyncio_running_task, 3.14+) and the low bits of its coroutine, which let
 * the agent tell a reused task address apart; names and await chains are
 * read by the agent (user/cpython/asyncio.c).  Two reads per sample. */
static __always_inline void running_task(struct scratch *s, __u64 tstate)
{
	__u64 task;

	if (!async_aware || !s->off.tstate_running_task)
		return;
	task = read_ptr(tstate + s->off.tstate_running_task);
	for (__u32 i = 0; i < 64 && i < bench_task_reads; i++)
		s->sample.hdr.task_coro ^= (__u32)read_ptr(read_ptr(tstate + s->off.tstate_running_task) +
							   s->off.task_coro);
	if (!task)
		return;
	s->sample.hdr.task = task;
	s->sample.hdr.task_coro = (__u32)read_ptr(task + s->off.task_coro);
}

/* A record's start: the header, the kernel stack.  NULL without scratch. */
static __always_inline struct scratch *begin_record(void *ctx, struct tb_proc *proc, __u32 pid, __u32 tid,
						   __u32 flags, __u64 value)
{
	__u32 zero = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch_map, &zero);

	if (!s)
		return NULL;
	count(TB_C_SAMPLES);
	s->off = proc->off;
	s->pycode_type = proc->pycode_type;
	s->flags = flags;
	s->depth = 0;
	s->lead = 0;
	s->wake = 0;
	fill_header(s, pid, tid, TB_REC_SAMPLE, value);
	kernel_stack(ctx, s);
	return s;
}

/* The Python part before the frames: the thread's state, its status, and
 * the frame the walk starts from (s->frame, 0: nothing to walk). */
static __always_inline void python_begin(struct scratch *s, struct tb_proc *proc, int bounded)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 tstate, frame;

	s->pthread_self = TB_TASK_TLS(task) - proc->tls_to_pthread;
	if (!s->sample.hdr.value)
		s->sample.hdr.value = s->pthread_self; /* pthread_self(): threading.get_ident() */
	tstate = find_tstate(s, proc, s->sample.hdr.tid, bounded);
	s->frame = 0;
	if (!tstate) {
		s->flags |= TB_F_NO_TSTATE;
		return;
	}
	thread_status(s, proc, tstate);
	running_task(s, tstate);
	if ((s->flags & TB_F_OFF_CPU) && s->gil && saved_user_regs(s)) {
		/* blocked in futex() on the GIL's mutex or condition? */
		__u64 uaddr = s->uregs[TB_REG_ARG0];

		if (TB_SYSCALL_NR(s->uregs) == TB_NR_FUTEX && uaddr >= s->gil && uaddr < s->gil + 256)
			s->flags |= TB_F_GIL_WAIT;
	}
	frame = tbuf_u64(s->tbuf, s->off.tstate_frame);
	if (frame && s->off.cframe_current_frame != TB_NO_OFFSET)
		frame = read_ptr(frame + s->off.cframe_current_frame);
	s->frame = frame;
	walk_init(s);
}

/* After the walk: frames left over mean it ran out of iterations. */
static __always_inline void python_end(struct scratch *s)
{
	if (s->frame && !(s->flags & (TB_F_READ_ERROR | TB_F_BAD_FRAME)))
		s->flags |= TB_F_TRUNCATED;
	submit(s);
}

/* Walk the current task's stacks into a record and submit it. */
static __always_inline void sample_current(void *ctx, struct tb_proc *proc, __u32 pid, __u32 tid,
					   __u32 flags, __u64 value)
{
	struct scratch *s = begin_record(ctx, proc, pid, tid, flags, value);

	if (!s)
		return;
	native_stack(ctx, s, flags);
	python_begin(s, proc, 0);
	if (s->frame)
		walk_frames(s);
	python_end(s);
}

/* Kernels without bpf_loop (before 5.17): the same record in bounded
 * loops, from program to program by tail call through `more`, the state in
 * the per-CPU scratch.  Each program holds one phase (the verifier's work
 * stays within its limit): the first program the header, the kernel stack
 * and the first native frames (or, without --native, the first Python
 * frames); MORE_NATIVE the next native frames; MORE_PYTHON the thread's
 * state and the next Python frames.  A walk longer than the kernel's tail
 * calls allow ends as at its depth limit (native) or truncated (Python). */
#define MORE_NATIVE 0
#define MORE_PYTHON 1
#define PHASE_NATIVE 0
#define PHASE_PYTHON 1

/* The Python phase from where it stands. */
static __always_inline void python_bounded(void *ctx, struct scratch *s, struct tb_proc *proc, void *more)
{
	if (s->phase != PHASE_PYTHON) {
		/* the thread's state first, the frames in the next program (the
		 * verifier's work is the sum of the two, not their product) */
		s->phase = PHASE_PYTHON;
		python_begin(s, proc, 1);
	} else if (!walk_chunk(s)) {
		python_end(s);
		return;
	}
	if (s->frame)
		bpf_tail_call(ctx, more, MORE_PYTHON);
	python_end(s);
}

/* The native phase from where it stands, then the Python phase's program. */
static __always_inline void native_bounded(void *ctx, struct scratch *s, void *more)
{
	/* nstop stays TB_NS_DEPTH while the walk has steps to take (native_setup) */
	if (s->nstop == TB_NS_DEPTH && native_chunk(s))
		bpf_tail_call(ctx, more, MORE_NATIVE);
	native_end(s);
	bpf_tail_call(ctx, more, MORE_PYTHON);
	s->flags |= TB_F_TRUNCATED; /* no Python phase: not a silent empty stack */
	submit(s);
}

static __always_inline void sample_bounded(void *ctx, struct tb_proc *proc, __u32 pid, __u32 tid,
					   __u32 flags, void *more)
{
	struct scratch *s = begin_record(ctx, proc, pid, tid, flags, 0);

	if (!s)
		return;
	s->phase = PHASE_NATIVE;
	if (native_depth) {
		native_begin(ctx, s, flags);
		native_bounded(ctx, s, more);
	} else {
		python_bounded(ctx, s, proc, more);
	}
}

/* The record of a bounded walk is in this CPU's scratch; its process may
 * have left (then it is dropped). */
static __always_inline struct scratch *bounded_record(struct tb_proc **proc)
{
	__u32 zero = 0;
	struct scratch *s = bpf_map_lookup_elem(&scratch_map, &zero);

	if (!s)
		return NULL;
	*proc = bpf_map_lookup_elem(&procs, &s->sample.hdr.pid);
	return *proc ? s : NULL;
}

/* The programs a bounded walk goes on in, MORE_* (the agent sets them; a
 * tail call stays within one program type: one array per type). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} sample_more SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} switch_more SEC(".maps");

/* A CPU sample of a profiled process: its current thread. */
static __always_inline void on_sample(void *ctx, int bounded)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32;
	struct tb_proc *proc = bpf_map_lookup_elem(&procs, &pid);

	if (!proc || !in_scope())
		return;
	if (bounded)
		sample_bounded(ctx, proc, pid, (__u32)pid_tgid, 0, &sample_more);
	else
		sample_current(ctx, proc, pid, (__u32)pid_tgid, 0, 0);
}

SEC("perf_event")
int tb_sample(struct bpf_perf_event_data *ctx)
{
	on_sample(ctx, 0);
	return 0;
}

/* The same, for kernels without bpf_loop, and the program its walks go on in. */
SEC("perf_event")
int tb_sample_bounded(struct bpf_perf_event_data *ctx)
{
	on_sample(ctx, 1);
	return 0;
}

SEC("perf_event")
int tb_sample_native(struct bpf_perf_event_data *ctx)
{
	struct tb_proc *proc;
	struct scratch *s = bounded_record(&proc);

	if (s)
		native_bounded(ctx, s, &sample_more);
	return 0;
}

SEC("perf_event")
int tb_sample_python(struct bpf_perf_event_data *ctx)
{
	struct tb_proc *proc;
	struct scratch *s = bounded_record(&proc);

	if (s)
		python_bounded(ctx, s, proc, &sample_more);
	return 0;
}

/* A small record with no frames (lifecycle, wake-ups). */
static __always_inline void emit_event(__u32 pid, __u32 tid, __u8 type, __u64 value)
{
	struct tb_sample_hdr h = {};

	h.time_ns = bpf_ktime_get_ns();
	h.value = value;
	h.pid = pid;
	h.tid = tid;
	h.type = type;
	h.cpu = (__u16)bpf_get_smp_processor_id();
	if (bpf_ringbuf_output(&events, &h, sizeof(h), wakeup_flag()))
		count(TB_C_LOST);
}

/* Wall mode: a profiled thread comes back on the CPU (its time off CPU
 * goes out), another leaves it (current == prev here): record its stack
 * now, its weight comes with its wake-up.  The stack last: a bounded walk
 * goes on by tail call and does not come back. */
static __always_inline void on_switch(void *ctx, struct task_struct *prev, struct task_struct *next,
				      int bounded)
{
	__u32 prev_pid = prev->tgid, next_pid = next->tgid, tid;
	struct tb_proc *proc;
	__u64 now, *since;

	if (bpf_map_lookup_elem(&procs, &next_pid)) {
		tid = next->pid;
		since = bpf_map_lookup_elem(&off_cpu_since, &tid);
		if (since) {
			now = bpf_ktime_get_ns();
			emit_event(next_pid, tid, TB_REC_WAKE, now - *since);
			bpf_map_delete_elem(&off_cpu_since, &tid);
		}
	}
	proc = bpf_map_lookup_elem(&procs, &prev_pid);
	if (!proc || (__u32)prev->pid != (__u32)bpf_get_current_pid_tgid() || !in_scope())
		return;
	tid = prev->pid;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&off_cpu_since, &tid, &now, BPF_ANY);
	if (bounded)
		sample_bounded(ctx, proc, prev_pid, tid, TB_F_OFF_CPU, &switch_more);
	else
		sample_current(ctx, proc, prev_pid, tid, TB_F_OFF_CPU, 0);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tb_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(ctx, prev, next, 0);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tb_switch_bounded, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(ctx, prev, next, 1);
	return 0;
}

/* Not attached: reached by tail call only (the agent turns their auto-attach off). */
SEC("tp_btf/sched_switch")
int BPF_PROG(tb_switch_native, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct tb_proc *proc;
	struct scratch *s = bounded_record(&proc);

	if (s)
		native_bounded(ctx, s, &switch_more);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tb_switch_python, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct tb_proc *proc;
	struct scratch *s = bounded_record(&proc);

	if (s)
		python_bounded(ctx, s, proc, &switch_more);
	return 0;
}

/* New processes: a child of a followed process is followed too, and a
 * profiled parent's layout is valid in a fork()ed child at once. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(tb_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = parent->tgid, cpid = child->tgid, one = 1;
	struct tb_proc *proc;

	if (child->pid != child->tgid)
		return 0; /* a thread, not a process */
	if (follow_mode == TB_FOLLOW_CHILDREN && bpf_map_lookup_elem(&followed, &ppid))
		bpf_map_update_elem(&followed, &cpid, &one, BPF_ANY);
	if (follow_mode == TB_FOLLOW_NONE)
		return 0;
	proc = bpf_map_lookup_elem(&procs, &ppid);
	if (proc) {
		struct tb_proc copy = *proc;
		struct tb_umaps *m;

		bpf_map_update_elem(&procs, &cpid, &copy, BPF_ANY);
		/* the child maps what its parent maps (the agent takes its refs
		 * at the fork record) */
		if (native_depth && (m = bpf_map_lookup_elem(&umaps, &ppid)))
			bpf_map_update_elem(&umaps, &cpid, m, BPF_ANY);
		emit_event(cpid, cpid, TB_REC_FORK, ppid);
	}
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(tb_exec, struct task_struct *p)
{
	__u32 pid = p->tgid;

	/* the old image's layout and mappings are void */
	bpf_map_delete_elem(&procs, &pid);
	if (native_depth)
		bpf_map_delete_elem(&umaps, &pid);
	if (!in_scope())
		return 0;
	if (follow_mode == TB_FOLLOW_ALL ||
	    (follow_mode == TB_FOLLOW_CHILDREN && bpf_map_lookup_elem(&followed, &pid)))
		emit_event(pid, pid, TB_REC_EXEC, 0);
	return 0;
}

/* A task of p's process ends; when it is the last one (its count of live
 * tasks is down to zero here), the process leaves the table and the agent
 * hears of it: no record of it follows (the agent forgets it at once, and a
 * reused pid cannot lose an entry the agent would delete late). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(tb_exit, struct task_struct *p)
{
	__u32 pid = p->tgid, tid = p->pid;
	int last = BPF_CORE_READ(p, signal, live.counter) == 0;

	if (last)
		bpf_map_delete_elem(&followed, &pid);
	if (!bpf_map_lookup_elem(&procs, &pid))
		return 0;
	bpf_map_delete_elem(&off_cpu_since, &tid);
	if (last) {
		bpf_map_delete_elem(&procs, &pid);
		if (native_depth)
			bpf_map_delete_elem(&umaps, &pid);
		emit_event(pid, tid, TB_REC_EXIT, 0);
	}
	return 0;
}

/* The floor for benchmarks: the same pid filter, nothing else. Loaded only
 * when the agent asks for it (--bench-floor). */
SEC("perf_event")
int tb_floor(struct bpf_perf_event_data *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	if (!bpf_map_lookup_elem(&procs, &pid))
		return 0;
	count(TB_C_SAMPLES);
	return 0;
}
