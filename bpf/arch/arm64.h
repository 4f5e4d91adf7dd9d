/* arch/arm64.h: what the BPF program knows of arm64 (AArch64), in one place,
 * the same macros as bpf/arch/x86.h: the user registers as the ABI lays them
 * out (struct user_pt_regs: the perf event's context; the kernel's struct
 * pt_regs starts with it and goes on with orig_x0 and syscallno), the mode
 * bits of pstate, the signal frame, the futex system call's number, where
 * a thread's pointer (tpidr_el0) is, and what the native walk reads of code,
 * the link register and return addresses. */
#ifndef TB_ARCH_ARM64_H
#define TB_ARCH_ARM64_H

/* Word indexes in struct pt_regs: regs[0..30], sp, pc, pstate (struct
 * user_pt_regs, fixed by the ABI), orig_x0, syscallno (an s32, then unused2). */
#define TB_REG_BP        29  /* x29, the frame pointer (a frame record: fp, lr) */
#define TB_REG_LR        30  /* x30, the link register */
#define TB_REG_SP        31
#define TB_REG_IP        32  /* pc */
#define TB_REG_MODE      33  /* pstate */
#define TB_REG_ARG0      34  /* orig_x0: a system call's first argument (x0 gets its result) */
#define TB_REG_SYSCALLNO 35  /* low 32 bits: the system call's number; -1 (NO_SYSCALL) outside one */
#define TB_PT_REGS_WORDS 36  /* the words read: up to syscallno */
/* the bytes of struct pt_regs at the top of the task's kernel stack: it grew
 * over the versions (sdei_ttbr1, pmr_save, stackframe, ...), so the running
 * kernel's size (CO-RE) */
#define TB_PT_REGS_SIZE  bpf_core_type_size(struct pt_regs)

/* pstate's M[4:0]: EL0t (user mode) is 0, M[4] set is an AArch32 task */
#define TB_MODE_USER(m)    (((m) & 0xf) == 0)
#define TB_MODE_USER64(m)  (((m) & 0x1f) == 0)
/* words w (struct pt_regs) hold a 64-bit user task's registers */
#define TB_REGS_USER64(w)  TB_MODE_USER64((w)[TB_REG_MODE])
/* the system call the registers were saved in, -1: none */
#define TB_SYSCALL_NR(w)   ((int)(w)[TB_REG_SYSCALLNO])

/* The task's kernel stack sizes that may hold its saved user registers at
 * their top (THREAD_SIZE: 16 KiB, 32 KiB with KASAN), tried in turn where the
 * kernel has no bpf_task_pt_regs (before 5.15). */
#define TB_STACK_SIZES { 16384, 32768 }

/* rt_sigframe at the signal trampoline's sp: siginfo (128 bytes), then the
 * ucontext, whose uc_mcontext (at 176) is struct sigcontext: fault_address,
 * regs[31], sp, pc, pstate; read from x29: x29, x30, sp, pc, pstate, 7 words */
#define TB_SIGFRAME_REGS (128 + 176 + 8 + 29 * 8)
#define TB_SIG_BP 0
#define TB_SIG_SP 2
#define TB_SIG_IP 3
#define TB_SIG_LR(buf) ((buf)[1])  /* x30 */

/* x30, the link register: a leaf's return address until its prologue saves
 * it (rows TB_URA_LR); taken from the sample's registers (or the signal
 * frame's) for the first frame only. */
#define TB_HAS_LR 1
#define TB_CTX_LR(ctx) CTX_REG(ctx, TB_REG_LR)
#define TB_UREGS_LR(w) ((w)[TB_REG_LR])
/* Saved return addresses may carry a pointer authentication code (PAC,
 * -mbranch-protection=standard) or a tag in their top bits: user addresses
 * are below 2^48 (Debian's arm64 kernels: 48-bit VAs; the kernel gives no
 * user mapping above 2^48 unless asked for one) */
#define TB_RA_MASK ((1ull << 48) - 1)

/* A leaf without a table left by frame pointer: the instruction at its pc
 * (c: its 4 bytes, little-endian) says it has no frame record of its own yet
 * (or any more), its return address in x30 and sp unmoved: at paciasp, bti c,
 * stp x29, x30, [sp, #-N]! or ret (TB_LEAF_RA_IN_LR); at mov x29, sp the
 * record just stored is at sp (TB_LEAF_RECORD_AT_SP); else at x29. */
#define TB_INSN(c) ((__u32)(c)[0] | (__u32)(c)[1] << 8 | (__u32)(c)[2] << 16 | (__u32)(c)[3] << 24)
#define TB_FP_LEAF(c)								\
	(TB_INSN(c) == 0xd503233f || TB_INSN(c) == 0xd503245f ||		\
	 TB_INSN(c) == 0xd65f03c0 || (TB_INSN(c) & 0xffc07fff) == 0xa9807bfd ?	\
	 TB_LEAF_RA_IN_LR :							\
	 TB_INSN(c) == 0x910003fd ? TB_LEAF_RECORD_AT_SP : TB_LEAF_RECORD)

#define TB_NR_FUTEX 98

/* the current thread's pointer, tpidr_el0: glibc's TLS is variant I, the
 * pointer is just past struct pthread (pthread_self() = tp - sizeof(struct
 * pthread), a size that differs between glibc versions: the agent reads it
 * from the target's libc into tb_proc.tls_to_pthread) */
#define TB_TASK_TLS(task) BPF_CORE_READ(task, thread.uw.tp_value)

#endif
