/* cfi.h: a file's native unwind table (struct tb_urow rows, include/tachyon.h)
 * built from its .eh_frame with libdw, plus the address ranges of its FDEs and
 * whether frame pointers alone would unwind it (docs/native-unwinding.md). */
#ifndef TB_CFI_H
#define TB_CFI_H
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include "tachyon.h"

/* Rows closer than this to the next FDE extend over the padding between them;
 * a wider gap gets an INVALID row (OTel's MinimumGap). */
#define TB_CFI_MAX_PAD 15

/* At least this share (percent) of the code bytes inside FDEs have an
 * rbp-based CFA: frame pointers alone unwind the file (TB_CFI_FP_ONLY).
 * Measured: Debian sid python3.15 94.5%, python3.14 14.4%, libc 16.6%. */
#define TB_CFI_FP_ONLY_PERCENT 90

/* [lo, hi): ELF virtual addresses. */
struct tb_code_range {
	uint64_t lo, hi;
};

/* Bounds of one build (a hostile file meets one of them). */
struct tb_cfi_limits {
	uint32_t max_rows;     /* table rows */
	uint32_t max_fdes;     /* CIE + FDE entries read */
	uint64_t max_ns;       /* CPU time of the building thread (a hostile FDE can make
				* the build quadratic; a loaded host only slows it) */
	const int *cancel;     /* nonzero there (read atomically, between rows): give up now;
				* NULL: never */
};
#define TB_CFI_MAX_ROWS (1u << 22)              /* 32 MiB of rows */
#define TB_CFI_MAX_FDES (1u << 21)
#define TB_CFI_MAX_NS (4ull * 1000 * 1000 * 1000)

#define TB_CFI_FP_ONLY (1u << 0) /* frame pointers suffice (see above) */

struct tb_cfi {
	uint64_t base;                /* ELF vaddr of rows[i].pc == 0: the first FDE's start */
	struct tb_urow *rows;         /* sorted by pc, no two equal neighbours */
	uint32_t nrows, rows_cap;
	struct tb_code_range *fdes;   /* sorted, non-empty, non-overlapping */
	uint32_t nfdes, fdes_cap;
	uint32_t flags;               /* TB_CFI_* */
	/* what the build saw */
	uint32_t libdw_rows;          /* rows libdw gave, before merging */
	uint32_t bad_fdes;            /* FDEs libdw could not evaluate (an INVALID row) */
	uint32_t kinds[TB_UK_SIGNAL + 1]; /* libdw rows per kind */
	uint64_t code_bytes;          /* bytes inside FDEs */
	uint64_t rbp_bytes;           /* of which with an rbp-based CFA */
	uint64_t nofp_bytes;          /* bytes of FDEs without any rbp-based row */
	uint64_t build_ns;            /* CLOCK_MONOTONIC time it took */
};

/* Build the table of an ELF file (x86-64, .eh_frame) opened with libelf
 * (ELF_C_READ: a file truncated under us gives errors, not SIGBUS); lim NULL:
 * the defaults above.  0 on success; else -1 and one line in err. */
int tb_cfi_build(Elf *elf, const struct tb_cfi_limits *lim, struct tb_cfi *out, char *err,
		 size_t errlen);
/* The same from a file descriptor (not closed; read without mmap). */
int tb_cfi_build_fd(int fd, const struct tb_cfi_limits *lim, struct tb_cfi *out, char *err,
		    size_t errlen);
void tb_cfi_free(struct tb_cfi *c);

/* The row in effect at ELF vaddr addr of a table rows[0..n) relative to base:
 * the last with pc <= addr - base; NULL before the first or beyond 4 GiB. */
const struct tb_urow *tb_cfi_row(const struct tb_urow *rows, uint32_t n, uint64_t base,
				 uint64_t addr);
/* The FDE holding addr, or NULL. */
const struct tb_code_range *tb_cfi_fde(const struct tb_cfi *c, uint64_t addr);
/* The index of the range holding addr among n elements stride bytes apart,
 * each starting with a struct tb_code_range, sorted and not overlapping; n
 * if none holds it. */
uint32_t tb_code_range_find(const void *ranges, uint32_t n, size_t stride, uint64_t addr);

#endif
