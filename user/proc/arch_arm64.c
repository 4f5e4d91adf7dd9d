/* arch_arm64.c: the agent's facts of arm64 (proc/arch.h). */
#include <elf.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <asm/ptrace.h>
#include "proc/arch.h"

const struct tb_arch tb_arch = {
	.name = "aarch64",
	.elf_machine = EM_AARCH64,
	.tp_is_pthread = 0,
};

uint64_t tb_arch_breakpoint_word(uint64_t word)
{
	return (word & ~0xffffffffull) | 0xd4200000u; /* brk #0 */
}

/* brk traps with pc on it: nothing to rewind, only checked */
int tb_arch_breakpoint_rewind(pid_t pid, uint64_t addr)
{
	struct user_pt_regs regs;
	struct iovec iov = { &regs, sizeof(regs) };

	if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov) || regs.pc != addr)
		return -1;
	return 0;
}
