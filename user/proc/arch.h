/* arch.h: what the agent knows of the machine it is built for, one file per
 * architecture (proc/arch_x86.c, proc/arch_arm64.c: the Makefile builds the
 * one of ARCH): the thread pointer, what --native lacks, the breakpoint
 * launch.c holds a command at. */
#ifndef TB_ARCH_H
#define TB_ARCH_H
#include <stdint.h>
#include <sys/types.h>

struct tb_arch {
	const char *name;           /* as uname -m says it: "x86_64", "aarch64" */
	uint16_t elf_machine;       /* EM_X86_64, EM_AARCH64 */
	/* the thread pointer is pthread_self() (x86_64's fs base: glibc's TLS
	 * variant II); else it is sizeof(struct pthread) past it (variant I) */
	int tp_is_pthread;
};
extern const struct tb_arch tb_arch;

/* The code word at a breakpoint's address with the breakpoint instruction
 * written over its first bytes. */
uint64_t tb_arch_breakpoint_word(uint64_t word);
/* pid stopped with SIGTRAP: 0 if at the breakpoint at addr, its pc now back
 * on addr (to run the instruction put back there); -1 if not (or unreadable). */
int tb_arch_breakpoint_rewind(pid_t pid, uint64_t addr);

#endif
