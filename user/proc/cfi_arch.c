/* cfi_arch.c: the DWARF facts of each machine unwind tables are built for
 * (proc/cfi_arch.h): x86-64 and arm64 (AArch64). */
#include <elf.h>
#include <stddef.h>
#include "proc/arch.h"
#include "proc/cfi_arch.h"

/* push rbp, endbr64, ret: the return address at sp; mov rbp, rsp: the
 * record at sp */
static int x86_fp_leaf(const uint8_t c[4])
{
	if (c[0] == 0x55 || c[0] == 0xc3 || (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa))
		return TB_LEAF_RA_AT_SP;
	if (c[0] == 0x48 && ((c[1] == 0x89 && c[2] == 0xe5) || (c[1] == 0x8b && c[2] == 0xec)))
		return TB_LEAF_RECORD_AT_SP;
	return TB_LEAF_RECORD;
}

/* paciasp, bti c, ret, stp x29, x30, [sp, #-N]!: the return address in x30,
 * sp unmoved; mov x29, sp: the record at sp */
static int arm64_fp_leaf(const uint8_t c[4])
{
	uint32_t insn = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;

	if (insn == 0xd503233f || insn == 0xd503245f || insn == 0xd65f03c0 ||
	    (insn & 0xffc07fff) == 0xa9807bfd)
		return TB_LEAF_RA_IN_LR;
	return insn == 0x910003fd ? TB_LEAF_RECORD_AT_SP : TB_LEAF_RECORD;
}

static const struct tb_cfi_arch arches[] = {
	/* rbp 6, rsp 7, the return address column 16 (rip) */
	{ EM_X86_64, "x86-64", .sp = 7, .fp = 6, .ra = 16, .ra_in_register = 0,
	  .fp_record_at_cfa = 1, .lazy_plt_expr = 1, .negate_ra_state = 0,
	  .ra_mask = ~0ull,
	  /* rt_sigframe: the ucontext's mcontext 40 bytes in: rbp +80, rsp +120, rip +128 */
	  .sig_fp = 40 + 80, .sig_sp = 40 + 120, .sig_pc = 40 + 128, .sig_lr = 0,
	  .fp_leaf = x86_fp_leaf },
	/* x29 (fp) 29, x30 (lr) 30, sp 31 */
	{ EM_AARCH64, "arm64", .sp = 31, .fp = 29, .ra = 30, .ra_in_register = 1,
	  .fp_record_at_cfa = 0, .lazy_plt_expr = 0, .negate_ra_state = 1, .plt_header = 32,
	  .code_rows_sigreturn = "__kernel_rt_sigreturn",
	  .ra_mask = (1ull << 48) - 1,   /* user addresses are below 2^48: PAC bits stripped */
	  /* rt_sigframe: siginfo (128), the ucontext's mcontext 176 bytes in:
	   * fault_address, then regs[0..30], sp, pc */
	  .sig_fp = 128 + 176 + 8 + 29 * 8, .sig_sp = 128 + 176 + 8 + 31 * 8,
	  .sig_pc = 128 + 176 + 8 + 32 * 8, .sig_lr = 128 + 176 + 8 + 30 * 8,
	  .fp_leaf = arm64_fp_leaf },
};

const struct tb_cfi_arch *tb_cfi_arch(uint16_t e_machine)
{
	for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (arches[i].e_machine == e_machine)
			return &arches[i];
	return NULL;
}

const struct tb_cfi_arch *tb_cfi_arch_host(void)
{
	return tb_cfi_arch(tb_arch.elf_machine);
}
