/* tachyon.h: what the BPF sampler and the agent share.
 *
 * The ring-buffer record layout (one record per sample), the per-process
 * configuration the agent writes into the `procs` map (interpreter layout as
 * plain numbers: offsets are data, not code paths per version), and the
 * counters the BPF program keeps.  Included from BPF C (vmlinux.h types)
 * and from user space (linux/types.h).
 */
#ifndef TACHYON_H
#define TACHYON_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Deepest stack the BPF program can record (power of two: masks index). */
#define TB_MAX_FRAMES 1024
/* Default --max-depth. */
#define TB_DEFAULT_DEPTH 1024
/* Shim frames the walk visits beyond max_depth (C-boundary entry frames). */
#define TB_SHIM_SLACK 64
/* Most thread states walked to find a thread's state (per lookup). */
#define TB_MAX_THREADS 512
/* Kernels without bpf_loop (before 5.17): a sample's walk goes on from
 * program to program by tail call (at most TB_TAIL_CALLS), each program
 * walking TB_BOUNDED_FRAMES Python frames or TB_BOUNDED_NATIVE native ones
 * (what the verifier of 5.10 takes in one program). */
#define TB_TAIL_CALLS 32
#define TB_BOUNDED_FRAMES 64
#define TB_BOUNDED_NATIVE 8

/* Sample flags. */
#define TB_F_TRUNCATED  (1u << 0) /* chain went on past max depth */
#define TB_F_READ_ERROR (1u << 1) /* a frame or code object could not be read */
#define TB_F_NO_TSTATE  (1u << 2) /* thread has no Python thread state */
#define TB_F_BAD_FRAME  (1u << 3) /* frame failed validation (code type) */
#define TB_F_GIL_HELD   (1u << 4) /* thread holds the GIL */
#define TB_F_GIL_WAIT   (1u << 5) /* thread is blocked on (or spinning for) the GIL */
#define TB_F_GC         (1u << 6) /* a collection is running in its interpreter */
#define TB_F_EXCEPTION  (1u << 7) /* an exception is being handled */
#define TB_F_OFF_CPU    (1u << 8) /* taken at a switch-out (wall mode): weight follows */
#define TB_F_NO_GIL     (1u << 9) /* free-threaded interpreter whose GIL is disabled */

/* Record types. */
#define TB_REC_SAMPLE 0  /* a stack (on-CPU sample, or off-CPU stack at switch-out) */
#define TB_REC_WAKE   1  /* thread back on CPU: value = ns spent off CPU */
#define TB_REC_EXEC   2  /* pid exec'd a new image: discover it */
#define TB_REC_EXIT   3  /* process exited */
#define TB_REC_FORK   4  /* pid is a new child of a followed process: value = parent */

/* Frame flags. */
#define TB_FF_NO_OPCODE (1u << 0) /* opcode byte could not be read */
#define TB_FF_ENTRY     (1u << 1) /* the frame an evaluator call was made for (3.11 is_entry;
				   * 3.12+ the frame above an owner == 3 shim): merging native
				   * and Python frames ends an evaluator's segment here */

/* One Python frame as the BPF program saw it, innermost first. */
struct tb_frame {
	__u64 code;      /* PyCodeObject address in the target */
	__s32 offset;    /* byte offset of the current instruction, -2 before start */
	__u16 code_id;   /* cheap discriminator against code-object address reuse */
	__u8 opcode;     /* opcode byte at offset in the (adaptive) bytecode */
	__u8 flags;      /* TB_FF_* */
};

struct tb_sample_hdr {
	__u64 time_ns;   /* bpf_ktime_get_ns() */
	__u64 value;     /* per type: SAMPLE the thread's pthread_self(), WAKE
			  * off-CPU ns, FORK parent pid */
	__u32 pid;       /* host (init namespace) tgid */
	__u32 tid;       /* host tid */
	__u32 ns_pid;    /* tgid in the task's own pid namespace */
	__u32 ns_tid;    /* tid in the task's own pid namespace */
	__u16 cpu;
	__u8 type;       /* TB_REC_* */
	__u8 native_stop; /* TB_NS_*: why the native walk ended (0: not walked) */
	__u16 flags;     /* TB_F_* */
	__u16 depth;     /* Python frames (struct tb_frame), after the kernel and native words */
	__u16 nkernel;   /* kernel PCs (__u64, leaf first) right after the header */
	__u16 nnative;   /* native words (__u64, leaf first) after the kernel PCs: pc | TB_NF_* */
	__u32 task_coro; /* --async-aware: low 32 bits of the running task's coroutine (tells a
			  * reused task address apart), 0: none */
	__u64 task;      /* --async-aware: the thread's running asyncio task (3.14+), 0: none */
};

/* Deepest kernel and native stacks a record holds (--kernel, --native). */
#define TB_MAX_KERNEL 128
#define TB_MAX_NATIVE 256

/* A native word: the pc in the low 60 bits, flags above. */
#define TB_NF_PC_MASK ((1ull << 60) - 1)
#define TB_NF_EVAL (1ull << 60) /* inside the CPython evaluator: stands for Python frames */
#define TB_NF_RA   (1ull << 61) /* a return address: symbolize pc - 1 */
#define TB_NF_FP   (1ull << 62) /* unwound by frame pointer (no table for the file) */
#define TB_NF_PARTIAL (1ull << 63) /* its mapping unknown or its table being built: kept,
				    * its caller found by frame pointer (maybe not the next) */

/* What goes through the ring buffer: the header, nkernel + nnative words,
 * then depth frames (variable size), one contiguous record.  The BPF program
 * builds it in one words[] area: the kernel PCs from word 0 (--kernel), the
 * native words right after them (--native), and the Python frames (two words
 * each) right after those, written at (lead & (TB_LEAD_WORDS - 1)) +
 * 2 * (depth & (TB_MAX_FRAMES - 1)), lead = nkernel + nnative: masked
 * positions the verifier can bound.  Records without kernel or native words
 * (nkernel == nnative == 0) are the header and depth frames, as before. */
#define TB_LEAD_WORDS 512  /* room for nkernel + nnative (<= 384), a power of two */
#define TB_SAMPLE_WORDS (TB_LEAD_WORDS + 2 * TB_MAX_FRAMES)
_Static_assert(TB_MAX_KERNEL + TB_MAX_NATIVE <= TB_LEAD_WORDS, "kernel and native words overflow");
_Static_assert(sizeof(struct tb_frame) == 16, "a frame is two words");
/* the BPF program writes a frame's second word as one store (little-endian) */
_Static_assert(__builtin_offsetof(struct tb_frame, offset) == 8 &&
	       __builtin_offsetof(struct tb_frame, code_id) == 12 &&
	       __builtin_offsetof(struct tb_frame, opcode) == 14 &&
	       __builtin_offsetof(struct tb_frame, flags) == 15, "tb_frame's second word");
struct tb_sample {
	struct tb_sample_hdr hdr;
	__u64 words[TB_SAMPLE_WORDS];
};

/* follow_mode: which new processes the BPF program reports. */
#define TB_FOLLOW_NONE     0
#define TB_FOLLOW_ALL      1 /* every exec on the host (--all-python) */
#define TB_FOLLOW_CHILDREN 2 /* descendants of followed processes (--subprocesses) */

/* Frame layout families. */
#define TB_FRAME_OBJECT  0 /* 3.10: PyFrameObject, f_lasti in code units */
#define TB_FRAME_INTERP  1 /* 3.11+: _PyInterpreterFrame, instruction pointer */

/* How the current frame is reached from the thread state. */
#define TB_NO_OFFSET 0xffff

/* Interpreter layout for one process: everything the BPF walk reads. */
struct tb_py_offsets {
	__u32 py_version;              /* PY_VERSION_HEX */
	__u16 runtime_interp_head;     /* _PyRuntime -> interpreters.head */
	__u16 interp_threads_head;     /* PyInterpreterState -> threads head */
	__u16 interp_next;             /* PyInterpreterState -> next */
	__u16 tstate_next;             /* PyThreadState -> next */
	__u16 tstate_thread_id;        /* PyThreadState -> thread_id (pthread_t: pthread_self()) */
	__u16 tstate_frame;            /* PyThreadState -> frame / cframe / current_frame */
	__u16 cframe_current_frame;    /* _PyCFrame -> current_frame, TB_NO_OFFSET if none */
	__u16 frame_code;              /* frame -> code object (or tagged stackref) */
	__u16 frame_previous;          /* frame -> caller frame */
	__u16 frame_instr;             /* 3.10: f_lasti (int); 3.11+: instr pointer */
	__u16 frame_owner;             /* 3.11+: owner byte, TB_NO_OFFSET if none */
	__u16 code_adaptive;           /* 3.11+: co_code_adaptive; 3.10: co_code (bytes*) */
	__u16 bytes_sval;              /* PyBytesObject -> ob_sval (3.10 opcode read) */
	__u16 code_firstlineno;
	__u16 code_argcount;
	__u16 code_version;            /* co_version (3.12+), TB_NO_OFFSET if none */
	__u16 object_type;             /* PyObject -> ob_type */
	__u8 frame_kind;               /* TB_FRAME_* */
	__u8 owner_skip_min;           /* owner >= this: shim frame, skip (0xff: none) */
	__u8 owner_cstack;             /* alternative shim owner value (0xff: none) */
	__u8 code_tag_mask;            /* low bits to clear from frame_code (3.14+: 3) */
	__u8 frame_read_size;          /* bytes of a frame read in one go (<= TB_FRAME_BUF) */
	__u8 code_read_size;           /* bytes of a code object header read in one go */
	__u8 tstate_read_size;         /* bytes of a thread state read in one go */
	/* evaluator boundaries, read only with --native (TB_FF_ENTRY) */
	__u8 owner_entry;              /* 3.12+: owner of the shim an evaluator call pushes
					* under its first frame (3), 0xff: none */
	__u8 frame_is_entry;           /* 3.11: offset of the is_entry byte, 0xff: none */
	__u8 pad;
	/* thread status (GIL, GC, exception) */
	__u16 tstate_interp;           /* PyThreadState -> interp */
	__u16 tstate_exc_info;         /* PyThreadState -> exc_info (_PyErr_StackItem*) */
	__u16 stackitem_exc_value;     /* _PyErr_StackItem -> exc_value */
	__u16 runtime_gil;             /* <= 3.11: the GIL struct's offset in _PyRuntime */
	__u16 interp_ceval_gil;        /* 3.12+: interp -> struct _gil_runtime_state* */
	__u16 gil_locked;              /* inside the GIL struct: locked (int) */
	__u16 gil_holder;              /* inside the GIL struct: last_holder (tstate*) */
	__u16 interp_gc_collecting;    /* interp -> gc.collecting (int) */
	__u16 gil_enabled;             /* free-threaded: inside the GIL struct: enabled (int, 0: no
					* GIL), TB_NO_OFFSET on default builds */
	/* thread-local bytecode (free-threaded 3.14+): a frame's instruction pointer points
	 * into co_tlbc->entries[tlbc_index], its thread's copy; TB_NO_OFFSET: none */
	__u16 frame_tlbc_index;        /* frame -> tlbc_index (int32) */
	__u16 code_tlbc;               /* code -> co_tlbc (_PyCodeArray *: size, entries[]) */
	/* asyncio (3.14+, read only with --async-aware): 0: none */
	__u16 tstate_running_task;     /* _PyThreadStateImpl -> asyncio_running_task (TaskObj *) */
	__u16 task_coro;               /* TaskObj -> task_coro */
	/* module and class bodies: co_flags without CO_OPTIMIZED (TB_NO_OFFSET: not checked) */
	__u16 code_flags;              /* code -> co_flags (int) */
};

#define TB_CO_OPTIMIZED 0x1 /* a function's code; a module's or class body's has not */

#define TB_TSTATE_BUF 256

/* Largest frame / code-object prefix read in one bpf_probe_read_user. */
#define TB_FRAME_BUF 128
#define TB_CODE_BUF 128

/* Cheap discriminator of a code object, computed the same way by the BPF
 * program (from the fields it reads) and by the agent (from the object it
 * reads later), to notice that an address now holds another code object. */
static inline __u16 tb_code_id(__u32 firstlineno, __u32 argcount, __u32 version)
{
	__u32 h = firstlineno * 0x9e3779b1u;
	h ^= argcount * 0x85ebca6bu;
	h ^= version * 0xc2b2ae35u;
	return (__u16)(h ^ (h >> 16));
}

/* Thread-list entries the BPF program walks per process and window, at most (the walks
 * after thread-state cache misses: a process with thousands of threads without a Python
 * state, or churning threads, cannot make every sample walk TB_MAX_THREADS entries). */
#define TB_WALK_WINDOW_NS (10ull * 1000 * 1000)
#define TB_WALK_BUDGET (4 * TB_MAX_THREADS)

/* Per-process configuration, key: host tgid. */
struct tb_proc {
	__u64 runtime_addr;            /* &_PyRuntime in the target */
	__u64 pycode_type;             /* &PyCode_Type, 0: do not check */
	__u64 none_addr;               /* &_Py_NoneStruct, 0: unknown */
	/* pthread_self() = the thread pointer - this (x86_64: 0, the fs base is
	 * pthread_self(); arm64: sizeof(struct pthread) of the target's glibc) */
	__u64 tls_to_pthread;
	struct tb_py_offsets off;
	/* kept by the BPF program (the agent writes 0): the thread-list walk budget */
	__u64 walk_window_ns;          /* start of the current window */
	__u64 walk_entries;            /* entries walked in it */
};

/* Per-thread cache, key: host tid. */
struct tb_thread {
	__u64 tstate;                  /* 0: none found */
	__u64 pthread_self;            /* pthread_self() the tstate was matched with */
	__u64 miss_ns;                 /* last failed lookup, to rate-limit walks */
	__u32 ns_pid, ns_tid;          /* ids in the task's pid namespace (never change) */
};

/* Native unwinding (docs/native-unwinding.md): a file's unwind table is a
 * sorted array of these rows, built by the agent from the file's .eh_frame
 * (user/proc/cfi.c).  A row holds from its pc to the next row's. */
enum tb_urow_kind {
	TB_UK_INVALID = 0, /* no usable rule (gap, unusual CFI): the walk stops */
	TB_UK_RSP,         /* CFA = sp + 8*cfa8 (rsp, arm64's sp) */
	TB_UK_RBP,         /* CFA = fp + 8*cfa8 (the frame pointer: rbp, arm64's x29) */
	TB_UK_PLT,         /* lazy PLT entry: CFA = rsp + 8 + ((pc & 15) >= cfa8 ? 8 : 0) */
	TB_UK_STOP,        /* CFA or return address undefined (_start, clone3): outermost */
	TB_UK_SIGNAL,      /* signal trampoline: the registers are in the rt_sigframe at sp */
};
#define TB_UK_MASK 0x0f    /* kind's low bits: TB_UK_*; high bits: TB_URA_* */

/* Where the return address is (kind >> TB_URA_SHIFT).  x86-64 rows are all
 * TB_URA_CFA8 (the byte is the kind alone); arm64's may say the others. */
enum tb_urow_ra {
	TB_URA_CFA8 = 0,   /* at CFA-8; the caller's fp saved at CFA + 8*rbp8 (0: unchanged) */
	TB_URA_LR,         /* still in the link register (a leaf before its prologue saves it):
			    * the caller's fp saved at CFA + 8*rbp8 (0: unchanged) */
	TB_URA_RECORD,     /* a frame record: the caller's fp, the return address right after
			    * it; at CFA + 8*rbp8 when rbp8 < 0, else 8*rbp8 above the frame's
			    * bottom (CFA - 8*cfa8: sp-based rows), where arm64's big frames
			    * keep it, beyond CFA - 1 KiB */
	TB_URA_SAVED,      /* at CFA + 8*rbp8, the caller's fp unchanged */
};
#define TB_URA_SHIFT 4
#define TB_UROW_KIND(r) ((r)->kind & TB_UK_MASK)
#define TB_UROW_RA(r) ((r)->kind >> TB_URA_SHIFT)

struct tb_urow {
	__u32 pc;          /* relative to the table's base (an ELF vaddr) */
	__u16 cfa8;        /* CFA offset in units of 8; PLT: the threshold */
	__u8 kind;         /* TB_UK_* | TB_URA_* << TB_URA_SHIFT */
	__s8 rbp8;         /* caller's fp saved at CFA + 8*rbp8; 0: unchanged (see TB_URA_*) */
};                         /* 8 bytes */

/* Why the native walk of a record ended (tb_sample_hdr.native_stop); the
 * reasons of the reference unwinder (user/proc/unwind_ref.h), one up. */
enum tb_native_stop {
	TB_NS_NONE = 0,       /* not walked (--native off) */
	TB_NS_DONE,           /* outermost frame (STOP row, return address or rbp 0) */
	TB_NS_DEPTH,          /* --native-depth frames recorded, more were there */
	TB_NS_UNKNOWN_MAP,    /* a pc in no known executable mapping (the agent rereads the maps);
			       * the leaf's, or a caller's found by its table, is kept (TB_NF_PARTIAL) */
	TB_NS_NO_TABLE,       /* a file whose table is being built: its frame kept (TB_NF_PARTIAL),
			       * the walk went on by frame pointer */
	TB_NS_INVALID,        /* no usable rule at the pc */
	TB_NS_READ,           /* stack memory unreadable */
	TB_NS_NOT_INCREASING, /* the CFA is not above the stack pointer: a loop or garbage */
	TB_NS_NO_REGS,        /* no user registers (kernel thread, 32-bit task) */
	TB_NS_MAX,
};

/* The native unwinding maps (the agent fills them: user/capture/unwind.c).
 * urows: every loaded file's rows, one BPF_F_MMAPABLE array sized by
 * --native-table-mb; ufiles[slot]: where a file's rows are and its evaluator
 * ranges (slot 0: none); umaps[tgid]: a process's executable mappings,
 * sorted by start, each with its file's slot (0: no table, frame pointers)
 * and bias (process address - ELF vaddr). */
#define TB_MAX_UFILES 4096
#define TB_PREALLOC_UMAPS 1024 /* processes in umaps where the kernel preallocates it (before 6.1) */
#define TB_MAX_RANGES 512  /* executable mappings per process (power of two) */
#define TB_MAX_EVAL 4      /* evaluator ranges per file */
#define TB_UF_FP_ONLY (1u << 0) /* unwound by frame pointers; its rows (if any) for the leaf */
#define TB_UR_PENDING (1u << 0) /* the range's table is being built: frame pointers (NO_TABLE) */

struct tb_ufile {
	__u64 base;                    /* ELF vaddr rows' pcs are relative to */
	__u32 first, nrows;            /* urows[first .. first + nrows), sorted by pc */
	__u32 flags;                   /* TB_UF_* */
	__u32 neval;                   /* evaluator ranges (<= TB_MAX_EVAL) */
	__u64 eval_lo[TB_MAX_EVAL];    /* ELF vaddrs [lo, hi): native frames in them are */
	__u64 eval_hi[TB_MAX_EVAL];    /* tagged TB_NF_EVAL */
};

struct tb_urange {
	__u64 start, end;              /* [start, end) in the process */
	__s64 bias;                    /* process address - ELF vaddr */
	__u32 slot;                    /* ufiles index, 0: no table (frame pointers) */
	__u32 flags;                   /* TB_UR_* */
};

struct tb_umaps {
	__u32 n;                       /* ranges used, <= TB_MAX_RANGES */
	__u32 gen;                     /* bumped by the agent at each rewrite */
	struct tb_urange r[TB_MAX_RANGES];
};

/* Indexes of the counters array map. What the records themselves say (no
 * thread state, truncated, read errors) is counted from their flags by the
 * agent; these are what only the program sees. */
enum tb_counter {
	TB_C_SAMPLES = 0,  /* program runs on profiled threads (bench/run.sh reads it) */
	TB_C_LOST,         /* ring buffer full */
	TB_C_TSTATE_WALKS, /* thread-list walks (thread-state cache misses) */
	TB_C_WALKS_SKIPPED, /* walks not made: the process's walk budget was spent */
	TB_C_BODY_WAKEUPS, /* agent woken for a module or class body's code not seen before */
	TB_C_MAX,
};

/* One record of the task-registers iterator (bpf/taskregs.bpf.c, read by
 * capture/taskregs.c): a thread of the asked process and the user registers
 * the kernel saved at its last entry (at a system call's entry for a thread
 * blocked in one). */
struct tb_task_regs {
	__u32 tid;
	__u32 pad;
	__s64 syscall_nr;              /* the system call it is in, -1: none */
	__u64 pc, sp, fp;              /* fp: rbp / x29 */
	__u64 lr;                      /* x30 on arm64, 0 on x86_64 */
};

#endif /* TACHYON_H */
