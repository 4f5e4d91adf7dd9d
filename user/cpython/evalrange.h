/* evalrange.h: where a python ELF file's evaluator (_PyEval_EvalFrameDefault)
 * lies: its hot part and its cold fragments, as ELF address ranges, so that
 * native frames inside them can be tagged (docs/native-unwinding.md). */
#ifndef TB_EVALRANGE_H
#define TB_EVALRANGE_H
#include <stdint.h>
#include <libelf.h>
#include "proc/cfi.h"

#define TB_EVAL_SYMBOL "_PyEval_EvalFrameDefault"
#define TB_EVAL_MAX 4               /* ranges kept per file */
#define TB_EVAL_MAX_HOT (4u << 20)  /* bytes of the hot part decoded, at most */

enum tb_eval_method {
	TB_EVAL_NONE = 0,
	TB_EVAL_SYMTAB, /* .symtab: the symbol and its local ".cold"/".part.N" pieces */
	TB_EVAL_JUMPS,  /* the FDE of the .dynsym symbol and the mid-frame FDEs it jumps to */
};

struct tb_eval_ranges {
	uint32_t method;            /* enum tb_eval_method */
	uint32_t n;                 /* ranges, sorted; r[0..n) */
	struct tb_code_range r[TB_EVAL_MAX];
	uint32_t dropped;           /* ranges beyond TB_EVAL_MAX (smallest first) */
	uint32_t jumps;             /* JUMPS: direct jumps out of the hot part */
	uint32_t undecoded;         /* JUMPS: hot-part bytes the decoder could not read */
};

/* From .symtab; -1 if the file has none or it does not name the evaluator. */
int tb_eval_ranges_symtab(Elf *elf, struct tb_eval_ranges *out);
/* From .dynsym, the unwind table's FDEs and the hot part's direct jumps;
 * -1 with one line in err if the symbol, its FDE or its code is missing. */
int tb_eval_ranges_jumps(Elf *elf, const struct tb_cfi *cfi, struct tb_eval_ranges *out,
			 char *err, size_t errlen);
/* .symtab, else the jumps. */
int tb_eval_ranges(Elf *elf, const struct tb_cfi *cfi, struct tb_eval_ranges *out, char *err,
		   size_t errlen);

/* The file bytes of ELF vaddrs [lo, hi) (from the PT_LOAD holding them,
 * owned by elf), or NULL. */
const uint8_t *tb_eval_code(Elf *elf, uint64_t lo, uint64_t hi);
/* Direct jmp/jcc (rel8, rel32) of the x86-64 code at addr (len bytes), decoded
 * instruction by instruction from its start: fn(ctx, source, target) for
 * each.  Returns the bytes left undecoded (an unknown opcode stops it). */
size_t tb_eval_direct_jumps(const uint8_t *code, size_t len, uint64_t addr,
			    void (*fn)(void *ctx, uint64_t from, uint64_t to), void *ctx);
/* The same for arm64 (A64) code: B, B.cond, CBZ/CBNZ, TBZ/TBNZ; the bytes
 * left over (len not a multiple of 4). */
size_t tb_eval_direct_jumps_a64(const uint8_t *code, size_t len, uint64_t addr,
				void (*fn)(void *ctx, uint64_t from, uint64_t to), void *ctx);

#endif
