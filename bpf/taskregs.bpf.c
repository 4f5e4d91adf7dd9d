/* taskregs.bpf.c: a task iterator (iter/task, 5.8+) that writes, for each thread of
 * one process (target_tgid, set by the agent before the load), the user registers
 * the kernel saved at the thread's last entry (bpf_task_pt_regs, 5.15+): pc, sp,
 * fp, lr and the system call it is in, one struct tb_task_regs per thread.  `dump
 * --native` (capture/taskregs.c) reads them through bpf_iter_create() + read():
 * the exact registers of a thread blocked in a system call, without ptrace.
 * Kernel threads and 32-bit tasks are skipped; the register words are the
 * architecture header's (bpf/arch/x86.h or arm64.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "tachyon.h"
#include TB_ARCH_HEADER /* bpf/arch/x86.h or arm64.h: the Makefile picks it */

char LICENSE[] SEC("license") = "GPL";

/* The process whose threads are reported; no other is. */
const volatile __u32 target_tgid = 0;

SEC("iter/task")
int tb_task_regs(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u64 w[TB_PT_REGS_WORDS];
	struct tb_task_regs rec;

	if (!task || !target_tgid || BPF_CORE_READ(task, tgid) != (int)target_tgid)
		return 0;
	if (bpf_probe_read_kernel(w, sizeof(w), (void *)bpf_task_pt_regs(task)) || !TB_REGS_USER64(w))
		return 0;
	rec = (struct tb_task_regs){
		.tid = (__u32)BPF_CORE_READ(task, pid),
		.syscall_nr = TB_SYSCALL_NR(w),
		.pc = w[TB_REG_IP],
		.sp = w[TB_REG_SP],
		.fp = w[TB_REG_BP],
		.lr = TB_UREGS_LR(w),
	};
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}
