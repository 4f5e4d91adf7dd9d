/* taskregs.h: the exact user registers of the threads of one process, read from the
 * kernel without ptrace: bpf/taskregs.bpf.c, a task iterator (iter/task, 5.8+) over
 * bpf_task_pt_regs (5.15+), loaded once and read through bpf_iter_create() + read().
 * For a thread blocked in a system call they are its registers at the call's entry
 * (pc, sp, the frame pointer, arm64's link register): what `dump --native` unwinds from
 * instead of guessing the frame pointer. A running thread's are stale: not for it. */
#ifndef TB_TASKREGS_H
#define TB_TASKREGS_H
#include <stdint.h>
#include <sys/types.h>
#include "tachyon.h"
#include "proc/unwind_ref.h"

#define TB_TASKREGS_MAX 4096  /* threads read, at most (the rest: not found, guessed) */

struct tb_taskregs {
	uint32_t n;
	struct tb_task_regs *r;   /* n records, tids as the kernel gave them */
};

/* The registers of every thread of tgid into *out: 0, else -1 and *out empty when the
 * iterator does not load or run (a kernel without iter/task or bpf_task_pt_regs, not
 * root, no BTF): the caller does without, quietly. */
int tb_taskregs_read(pid_t tgid, struct tb_taskregs *out);
/* Thread tid's registers into *regs when it is in out and blocked in a system call at
 * the sp and pc the caller read for it (/proc/PID/task/TID/syscall: the same saved
 * registers, so a thread that has moved since the iterator ran does not match): 1,
 * else 0 and *regs untouched. */
int tb_taskregs_uw(const struct tb_taskregs *t, uint32_t tid, uint64_t sp, uint64_t pc,
		   struct tb_uw_regs *regs);
void tb_taskregs_free(struct tb_taskregs *t);
/* capture/taskregs_iter.c: the iterator itself, as tb_taskregs_read (which calls it);
 * weak: NULL where the BPF objects are not linked (libtachyon.a alone) */
int tb_taskregs_iter(pid_t tgid, struct tb_taskregs *out) __attribute__((weak));

#endif
