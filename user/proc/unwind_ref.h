/* unwind_ref.h: the native unwinder in user space, step for step the walk
 * the BPF program runs (docs/native-unwinding.md): per-process ranges ->
 * the file's rows -> CFA rule -> return address (at CFA-8, or arm64's rules)
 * and the frame pointer rule,
 * frame pointers where a file has no table, PLT and signal frames, a reason
 * for every stop, bounded depth, a strictly increasing stack pointer.  Used
 * to prove the tables before BPF, and by `dump --native` on blocked threads. */
#ifndef TB_UNWIND_REF_H
#define TB_UNWIND_REF_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "proc/cfi.h"
#include "proc/cfi_arch.h"

#define TB_UW_MAX_DEPTH 256

/* Why a walk ended. */
enum tb_uw_stop {
	TB_UW_DONE = 0,        /* outermost frame (STOP row, return address or rbp 0) */
	TB_UW_DEPTH,           /* max frames reached */
	TB_UW_UNKNOWN_MAP,     /* pc in no executable mapping */
	TB_UW_NO_TABLE,        /* the file has no table and frame pointers are off */
	TB_UW_INVALID,         /* no usable rule at pc (INVALID row, before the first) */
	TB_UW_READ,            /* stack memory unreadable */
	TB_UW_NOT_INCREASING,  /* the CFA is not above the stack pointer: a loop or garbage */
	TB_UW_NO_REGS,         /* no registers to start from */
	TB_UW_NSTOP,
};
extern const char *const tb_uw_stop_names[TB_UW_NSTOP];

/* Frame flags. */
#define TB_UW_RA  (1u << 0)  /* a return address: its call is at pc-1 */
#define TB_UW_TAG (1u << 1)  /* inside a tagged range of its file (an evaluator) */
#define TB_UW_FP  (1u << 2)  /* left by frame pointer: no table, or a FP_ONLY file's caller */

/* One ELF file's table, shared by every process that maps the file. */
struct tb_uw_file {
	const struct tb_urow *rows;
	uint32_t nrows;
	uint32_t flags;                    /* TB_CFI_FP_ONLY: use frame pointers */
	uint64_t base;                     /* ELF vaddr of rows[i].pc == 0 */
	const struct tb_code_range *tags;  /* ELF vaddr ranges whose frames get TB_UW_TAG */
	uint32_t ntags;
};

/* One executable mapping of a process; a process's are sorted by start and
 * do not overlap. */
struct tb_uw_range {
	struct tb_code_range at;           /* [lo, hi) in the process (first: tb_code_range_find) */
	uint64_t bias;                     /* process address - ELF vaddr */
	const struct tb_uw_file *file;     /* NULL: no table (anonymous code, not built yet) */
};

struct tb_uw_regs {
	uint64_t ip, sp, bp;
	int ip_is_ra;                      /* the leaf resumes after a call or syscall: look up ip-1 */
	uint64_t lr;                       /* the link register (arm64; unused on x86-64), */
	int has_lr;                        /* if known (a blocked thread's /proc/PID/task/TID/syscall
					    * has no lr: the BPF walk always has it) */
};

struct tb_uw_frame {
	uint64_t pc;
	uint32_t flags;                    /* TB_UW_* */
};

/* Reads len bytes at addr of the target; 0 on success. */
typedef int (*tb_uw_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
/* The reader for a live process: ctx points to its pid_t (process_vm_readv). */
int tb_uw_read_pid(void *ctx, uint64_t addr, void *buf, size_t len);

struct tb_uw_walk {
	const struct tb_uw_range *ranges;
	uint32_t nranges;
	tb_uw_read_fn read;
	void *ctx;
	uint32_t max_depth;                /* <= TB_UW_MAX_DEPTH */
	int fp_fallback;                   /* frames of files without a table: by frame pointer */
	const struct tb_cfi_arch *arch;    /* the target's machine; NULL: the agent's own */
};

/* Walk from regs: frames out[0..return value), innermost first; *stop says
 * why it ended. */
uint32_t tb_unwind(const struct tb_uw_walk *w, const struct tb_uw_regs *regs,
		   struct tb_uw_frame *out, enum tb_uw_stop *stop);

#endif
