/* arch_x86.c: the agent's facts of x86_64 (proc/arch.h). */
#include <elf.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include "proc/arch.h"

const struct tb_arch tb_arch = {
	.name = "x86_64",
	.elf_machine = EM_X86_64,
	.tp_is_pthread = 1,
};

uint64_t tb_arch_breakpoint_word(uint64_t word)
{
	return (word & ~0xffull) | 0xcc; /* int3 */
}

/* int3 traps with rip past it */
int tb_arch_breakpoint_rewind(pid_t pid, uint64_t addr)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) || regs.rip != addr + 1)
		return -1;
	regs.rip = addr;
	return ptrace(PTRACE_SETREGS, pid, NULL, &regs) ? -1 : 0;
}
