/* a64rows.h: unwind rows read from arm64 (A64) code that has no CFI (the
 * kernel's arm64 vDSO): proc/a64rows.c. */
#ifndef TB_A64ROWS_H
#define TB_A64ROWS_H
#include <stdint.h>
#include "tachyon.h"

/* The rows of the function whose code (4-byte instructions) is at ELF vaddrs
 * [lo, hi): emit(ctx, addr, row) for each instruction, in order (equal
 * neighbours are the caller's to merge). */
void tb_a64_rows(const uint8_t *code, uint64_t lo, uint64_t hi,
		 void (*emit)(void *ctx, uint64_t addr, struct tb_urow r), void *ctx);

#endif
