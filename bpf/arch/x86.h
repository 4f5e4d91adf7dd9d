/* arch/x86.h: what the BPF program knows of x86_64, in one place: the user
 * registers as the ABI lays them out (struct pt_regs of the UAPI: the perf
 * event's context and the registers saved at the top of a task's kernel
 * stack), the 64-bit user code and stack segments, the signal frame, the
 * futex system call's number, where a thread's pointer (fs base) is, and what
 * the native walk reads of code and return addresses.
 * bpf/arch/arm64.h has the same macros; the Makefile picks one (TB_ARCH_HEADER). */
#ifndef TB_ARCH_X86_H
#define TB_ARCH_X86_H

/* Word indexes in struct pt_regs (r15 .. ss): fixed by the ABI, so read as
 * words, never through CO-RE (a 6.9+ kernel's BTF has cs and ss as 16-bit
 * members of a union; older kernels' as unsigned long). */
#define TB_REG_BP      4
#define TB_REG_ARG0    14  /* rdi: a system call's first argument */
#define TB_REG_ORIG_AX 15  /* the system call's number; -1 outside one */
#define TB_REG_IP      16
#define TB_REG_CS      17
#define TB_REG_SP      19
#define TB_REG_SS      20
#define TB_PT_REGS_WORDS 21
/* the bytes of struct pt_regs at the top of the task's kernel stack */
#define TB_PT_REGS_SIZE (8 * TB_PT_REGS_WORDS)

#define TB_USER_CS_64 0x33
#define TB_USER_DS    0x2b
/* a 16-bit selector in a word (the rest is FRED's state on 6.9+) */
#define TB_SEL(w) ((w) & 0xffff)

/* The word that says which mode the registers were taken in (cs), and what
 * it says: user mode (ring 3), a 64-bit user task. */
#define TB_REG_MODE        TB_REG_CS
#define TB_MODE_USER(m)    (((m) & 3) == 3)
#define TB_MODE_USER64(m)  (TB_SEL(m) == TB_USER_CS_64)
/* words w (struct pt_regs) hold a 64-bit user task's registers */
#define TB_REGS_USER64(w)  (TB_MODE_USER64((w)[TB_REG_CS]) && TB_SEL((w)[TB_REG_SS]) == TB_USER_DS)
/* the system call the registers were saved in, -1: none */
#define TB_SYSCALL_NR(w)   ((long)(w)[TB_REG_ORIG_AX])

/* The task's kernel stack sizes that may hold its saved user registers at
 * their top (THREAD_SIZE: 16 KiB, 32 KiB with KASAN), tried in turn where the
 * kernel has no bpf_task_pt_regs (before 5.15). */
#define TB_STACK_SIZES { 16384, 32768 }

/* rt_sigframe at the signal trampoline's sp: sigcontext rbp .. rip, 7 words */
#define TB_SIGFRAME_REGS 120
#define TB_SIG_BP 0
#define TB_SIG_SP 5
#define TB_SIG_IP 6

/* No link register: a return address is always in memory (rows are all
 * TB_URA_CFA8), and user return addresses are taken as they are. */
#define TB_HAS_LR 0
#define TB_CTX_LR(ctx) 0
#define TB_UREGS_LR(w) 0
#define TB_SIG_LR(buf) 0
#define TB_RA_MASK (~0ull)

/* A leaf without a table left by frame pointer: the instruction at its pc
 * (c: its first 4 bytes) says it has no frame record of its own yet (or any
 * more): push rbp, endbr64 before it, ret after leave: the return address at
 * sp, rbp the caller's (TB_LEAF_RA_AT_SP); mov rbp, rsp: its record at sp
 * (TB_LEAF_RECORD_AT_SP); else its record at rbp (TB_LEAF_RECORD). */
#define TB_FP_LEAF(c)								\
	((c)[0] == 0x55 || (c)[0] == 0xc3 ||					\
	 ((c)[0] == 0xf3 && (c)[1] == 0x0f && (c)[2] == 0x1e && (c)[3] == 0xfa) ?	\
	 TB_LEAF_RA_AT_SP :							\
	 (c)[0] == 0x48 && (((c)[1] == 0x89 && (c)[2] == 0xe5) ||		\
			   ((c)[1] == 0x8b && (c)[2] == 0xec)) ? TB_LEAF_RECORD_AT_SP :	\
	 TB_LEAF_RECORD)

#define TB_NR_FUTEX 202

/* the current thread's pointer, its fs base: pthread_self() itself (the agent
 * sets tb_proc.tls_to_pthread to 0) */
#define TB_TASK_TLS(task) BPF_CORE_READ(task, thread.fsbase)

#endif
