/* cfi_arch.h: what building unwind rows (proc/cfi.c) and the reference walk
 * (proc/unwind_ref.c) need to know of a machine: its DWARF register numbers,
 * how its frames are laid out, its signal frame and prologue instructions.
 * One row per machine in proc/cfi_arch.c; any machine builds and walks any
 * machine's tables (the unit tests build and walk arm64 rows on x86_64).  The
 * BPF program's copy of the walk facts: bpf/arch/TARGET.h. */
#ifndef TB_CFI_ARCH_H
#define TB_CFI_ARCH_H
#include <stdint.h>

struct tb_cfi_arch {
	uint16_t e_machine;       /* EM_* */
	const char *name;
	unsigned sp, fp, ra;      /* DWARF registers: stack and frame pointers, return address column */
	/* the return address column is a real register (arm64's x30, the link
	 * register): where its rule is "same value" the address is still in it */
	int ra_in_register;
	/* a frame pointer's record [fp, return address] sits right below the CFA
	 * (x86-64's push rbp; mov rbp, rsp), so frame pointers alone give exact
	 * CFAs and a file may be left by them (TB_CFI_FP_ONLY); arm64's record is
	 * at the bottom of the frame: never */
	int fp_record_at_cfa;
	/* GCC's and ld's lazy-PLT CFA expression (x86-64) */
	int lazy_plt_expr;
	/* DW_CFA_AARCH64_negate_ra_state (opcode 0x2d, no operand): pointer
	 * authentication signs the saved return address; the walk strips it */
	int negate_ra_state;
	/* the PLT has no CFI (arm64's ld writes none): the bytes of its header
	 * (lazy binding's entry, 32 on arm64); its entries keep sp and the
	 * return address in the link register.  0: the PLT has CFI (x86-64) */
	uint32_t plt_header;
	/* a file without .eh_frame, small (the kernel's arm64 vDSO) gets rows
	 * read from its code (proc/a64rows.c) for each .dynsym function, and a
	 * signal frame row over this symbol; NULL: such files have no table */
	const char *code_rows_sigreturn;
	/* the walk: */
	uint64_t ra_mask;         /* a saved return address's bits that are the address (arm64: PAC) */
	/* the interrupted fp, sp, pc (and lr, if ra_in_register) in the signal
	 * frame, as offsets from the trampoline's sp */
	uint32_t sig_fp, sig_sp, sig_pc, sig_lr;
	/* a leaf without a table, at the instruction whose first bytes are c:
	 * TB_LEAF_* (TB_FP_LEAF of bpf/arch/TARGET.h) */
	int (*fp_leaf)(const uint8_t c[4]);
};

/* What a frame left by frame pointer has (by its leaf instruction). */
enum {
	TB_LEAF_RECORD,        /* its frame record [fp, return address] at fp */
	TB_LEAF_RA_AT_SP,      /* no record, the return address at sp (x86-64) */
	TB_LEAF_RECORD_AT_SP,  /* its record at sp (just stored) */
	TB_LEAF_RA_IN_LR,      /* no record, the return address in the link register (arm64) */
};

/* The facts of e_machine, or NULL (no table for such files). */
const struct tb_cfi_arch *tb_cfi_arch(uint16_t e_machine);
/* The agent's own machine's (proc/arch.h). */
const struct tb_cfi_arch *tb_cfi_arch_host(void);

#endif
