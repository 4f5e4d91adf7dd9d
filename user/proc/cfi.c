/* cfi.c: turns an x86-64 or arm64 ELF file's .eh_frame into the compact
 * unwind rows the native unwinder reads (include/tachyon.h,
 * docs/native-unwinding.md; the machine's DWARF facts: proc/cfi_arch.c).
 *
 * The FDEs are listed here (dwarf_next_cfi, their CIE's pointer encoding
 * decoded); libdw evaluates the call-frame program of each, row by row
 * (dwarf_cfi_addrframe), and each row becomes one of the few rules the walk
 * knows: CFA = sp|fp + 8k, the return address at CFA-8 (arm64: also still
 * in the link register, or saved elsewhere below the CFA), the caller's fp
 * saved at CFA-8j or unchanged; the lazy-PLT expression; a signal frame; the
 * outermost frame; arm64's PLT, which has no CFI, gets its rule here.  Anything else is INVALID: the walk stops there rather
 * than guess.  Every count, offset and the time spent is bounded: the file
 * may be hostile.  Before libdw runs a call-frame program, the program is
 * read here (cfa_program_ok): register numbers, remember_state nesting,
 * expression and program lengths are bounded, since libdw sizes its state
 * by the highest register named and copies it at each remember_state; a
 * file with a program beyond a bound gets no table. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/clock.h"
#include "lib/mem.h"
#include "proc/cfi.h"
#include "proc/a64rows.h"
#include "proc/cfi_arch.h"
#include "proc/elfsym.h"

#define MAX_SECTIONS 65536u
#define CIE_CACHE 16          /* CIEs remembered (direct-mapped by offset) */
#define MAX_CFA_OFFSET (8u * 65535)
#define MIN_RBP_OFFSET (-1024) /* fp (or arm64's return address) saved at most 1 KiB below the CFA (s8 units of 8) */
/* what a call-frame program may ask of libdw (x86-64 DWARF registers stop at 125: k7;
 * arm64's at 127: v31 is 95, the SVE z31 127) */
#define MAX_CFA_REG 127
#define MAX_REMEMBER_DEPTH 64
#define MAX_CFA_EXPR 1024        /* bytes of one DWARF expression */
#define MAX_CFA_PROGRAM (64u << 10) /* bytes of one CIE's or FDE's instructions */
#define MAX_CODE_ROWS_BYTES (64u << 10) /* code of a file without CFI read for its rows (a vDSO) */
#define MAX_CODE_ROWS_FUNCS 256u

struct cie_info {
	Dwarf_Off offset;
	uint8_t filled;       /* this slot holds the CIE at offset */
	uint8_t valid;        /* read and understood */
	uint8_t fde_enc;      /* DW_EH_PE_* of the FDE addresses ('R') */
	uint8_t has_z;        /* "z" augmentation: FDEs carry augmentation data */
};

struct builder {
	struct tb_cfi *c;
	const struct tb_cfi_arch *arch;
	struct tb_cfi_limits lim;
	uint64_t cpu0, t0;       /* the thread's CPU time, CLOCK_MONOTONIC at the start */
	char *err;
	size_t errlen;
	const unsigned char *ident;
	Elf_Data *eh;
	uint64_t eh_addr;
	struct cie_info cies[CIE_CACHE];
	struct tb_code_range plt;  /* a PLT without CFI (find_plt); hi 0: none */
	int emit_failed;           /* emit_cb: a row could not be added */
};

static int fail(struct builder *b, const char *what)
{
	snprintf(b->err, b->errlen, "unwind table: %s", what);
	return -1;
}

/* ------------------------------------------------------------ FDE list */

static int read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t byte = *(*p)++;

		*v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return 0;
	}
	return -1;
}

static int read_sleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *start = *p;
	unsigned bits;

	if (read_uleb(p, end, v))
		return -1;
	bits = 7 * (unsigned)(*p - start);
	if (bits < 64 && ((*p)[-1] & 0x40))
		*v |= ~0ull << bits;
	return 0;
}

static int read_fixed(const uint8_t **p, const uint8_t *end, size_t len, int sign, uint64_t *v)
{
	uint64_t x = 0;

	if ((size_t)(end - *p) < len)
		return -1;
	for (size_t i = 0; i < len; i++)
		x |= (uint64_t)(*p)[i] << (8 * i);
	if (sign && len < 8 && (x >> (8 * len - 1)) & 1)
		x |= ~0ull << (8 * len);
	*p += len;
	*v = x;
	return 0;
}

/* A DW_EH_PE-encoded value at *p: its format (low nibble) only when field is
 * NULL, else also pc-relative to field (the vaddr of *p).  Indirect, text-,
 * data- or function-relative and aligned forms are refused. */
static int read_encoded(uint8_t enc, const uint8_t **p, const uint8_t *end, const uint64_t *field,
			uint64_t *v)
{
	static const struct { uint8_t len, sign; } fixed[16] = {
		[DW_EH_PE_absptr] = { 8, 0 }, [DW_EH_PE_udata2] = { 2, 0 },
		[DW_EH_PE_udata4] = { 4, 0 }, [DW_EH_PE_udata8] = { 8, 0 },
		[DW_EH_PE_sdata2] = { 2, 1 }, [DW_EH_PE_sdata4] = { 4, 1 },
		[DW_EH_PE_sdata8] = { 8, 1 },
	};
	uint8_t fmt = enc & 0x0f, app = enc & 0x70;
	int rc;

	if (enc == DW_EH_PE_omit || (field && (enc & DW_EH_PE_indirect)))
		return -1;
	if (fmt == DW_EH_PE_uleb128)
		rc = read_uleb(p, end, v);
	else if (fmt == DW_EH_PE_sleb128)
		rc = read_sleb(p, end, v);
	else if (fixed[fmt].len)
		rc = read_fixed(p, end, fixed[fmt].len, fixed[fmt].sign, v);
	else
		return -1;
	if (rc || !field)
		return rc;
	if (app == DW_EH_PE_pcrel)
		*v += *field;
	else if (app != DW_EH_PE_absptr)
		return -1;
	return 0;
}

/* Is the call-frame program [p, end) one libdw may run?  Every opcode is
 * known and whole, every register number at most MAX_CFA_REG, remember_state
 * nested at most MAX_REMEMBER_DEPTH deep, every expression at most
 * MAX_CFA_EXPR bytes, the program at most MAX_CFA_PROGRAM.  set_loc's operand
 * has the FDE address encoding enc; opcode 0x2d is arm64's negate_ra_state
 * (no operand) where the machine has it, else refused. */
static int cfa_program_ok(const struct tb_cfi_arch *arch, const uint8_t *p, const uint8_t *end,
			  uint8_t enc)
{
	unsigned depth = 0;

	if (end < p || (size_t)(end - p) > MAX_CFA_PROGRAM)
		return 0;
	while (p < end) {
		uint8_t op = *p++;
		uint64_t reg = 0, v, len;
		int regs = 0, ulebs = 0, slebs = 0, block = 0;

		switch (op >> 6) {
		case 1:              /* advance_loc */
			continue;
		case 2:              /* offset: reg in the opcode, ULEB offset */
			if (read_uleb(&p, end, &v))
				return 0;
			continue;
		case 3:              /* restore: reg in the opcode */
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
			continue;
		case DW_CFA_set_loc:
			if (read_encoded(enc & 0x0f, &p, end, NULL, &v))
				return 0;
			continue;
		case DW_CFA_advance_loc1: case DW_CFA_advance_loc2: case DW_CFA_advance_loc4:
			/* a delta of 1, 2 or 4 bytes */
			if (read_fixed(&p, end, op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4, 0, &v))
				return 0;
			continue;
		case DW_CFA_remember_state:
			if (++depth > MAX_REMEMBER_DEPTH)
				return 0;
			continue;
		case DW_CFA_restore_state:
			if (depth)
				depth--;
			continue;
		case DW_CFA_GNU_window_save: /* = DW_CFA_AARCH64_negate_ra_state */
			if (!arch->negate_ra_state)
				return 0;
			continue;
		case DW_CFA_offset_extended: case DW_CFA_register: case DW_CFA_def_cfa:
		case DW_CFA_val_offset: case DW_CFA_GNU_negative_offset_extended:
			regs = 1, ulebs = 1;
			if (op == DW_CFA_register)
				regs = 2, ulebs = 0;
			break;
		case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			regs = 1;
			break;
		case DW_CFA_def_cfa_offset: case DW_CFA_GNU_args_size:
			ulebs = 1;
			break;
		case DW_CFA_def_cfa_offset_sf:
			slebs = 1;
			break;
		case DW_CFA_offset_extended_sf: case DW_CFA_def_cfa_sf: case DW_CFA_val_offset_sf:
			regs = 1, slebs = 1;
			break;
		case DW_CFA_def_cfa_expression:
			block = 1;
			break;
		case DW_CFA_expression: case DW_CFA_val_expression:
			regs = 1, block = 1;
			break;
		default:
			return 0;    /* an opcode libdw may not know either */
		}
		for (int i = 0; i < regs; i++)
			if (read_uleb(&p, end, &reg) || reg > MAX_CFA_REG)
				return 0;
		for (int i = 0; i < ulebs; i++)
			if (read_uleb(&p, end, &v))
				return 0;
		for (int i = 0; i < slebs; i++)
			if (read_sleb(&p, end, &v))
				return 0;
		if (block) {
			if (read_uleb(&p, end, &len) || len > MAX_CFA_EXPR || len > (uint64_t)(end - p))
				return 0;
			p += len;
		}
	}
	return 1;
}

/* The FDE pointer encoding of the CIE at offset ('R' of a "z" augmentation;
 * absptr without one).  Remembered: most FDEs share a few CIEs. */
static const struct cie_info *cie_at(struct builder *b, Dwarf_Off offset)
{
	struct cie_info *ci = &b->cies[(offset / 8) % CIE_CACHE];
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	const uint8_t *p, *end;
	const char *aug;

	if (ci->filled && ci->offset == offset)
		return ci->valid ? ci : NULL;
	memset(ci, 0, sizeof(*ci));
	ci->offset = offset;
	ci->filled = 1;
	ci->fde_enc = DW_EH_PE_absptr;
	/* an FDE whose CIE pointer names another FDE (or itself) is refused here */
	if (dwarf_next_cfi(b->ident, b->eh, true, offset, &next, &e) || !dwarf_cfi_cie_p(&e))
		return NULL;
	aug = e.cie.augmentation;
	if (!aug || aug[0] == '\0') {
		ci->valid = cfa_program_ok(b->arch, e.cie.initial_instructions, e.cie.initial_instructions_end,
					   ci->fde_enc);
		return ci->valid ? ci : NULL;
	}
	if (aug[0] != 'z' || !e.cie.augmentation_data)
		return NULL;
	ci->has_z = 1;
	p = e.cie.augmentation_data;
	end = p + e.cie.augmentation_data_size;
	for (size_t i = 1; i < 16 && aug[i]; i++) {
		uint64_t skip;

		switch (aug[i]) {
		case 'R':
			if (p >= end)
				return NULL;
			ci->fde_enc = *p++;
			break;
		case 'L':
			if (p++ >= end)
				return NULL;
			break;
		case 'P':
			if (p >= end)
				return NULL;
			p++;
			if (read_encoded(p[-1], &p, end, NULL, &skip))
				return NULL;
			break;
		case 'S': case 'B': case 'G':
			break;
		default:
			return NULL;
		}
	}
	ci->valid = cfa_program_ok(b->arch, e.cie.initial_instructions, e.cie.initial_instructions_end, ci->fde_enc);
	return ci->valid ? ci : NULL;
}

static int cmp_range(const void *a, const void *b)
{
	const struct tb_code_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Every FDE's [start, end), sorted; empty ones dropped, duplicates and
 * overlaps cut at the next start. */
static int list_fdes(struct builder *b)
{
	struct tb_cfi *c = b->c;
	Dwarf_Off off = 0, next;
	uint32_t entries = 0, n = 0;

	for (;;) {
		Dwarf_CFI_Entry e;
		const struct cie_info *ci;
		const uint8_t *p;
		uint64_t field, lo, len;
		int rc = dwarf_next_cfi(b->ident, b->eh, true, off, &next, &e);

		if (rc > 0)
			break;
		if (rc < 0)
			return fail(b, ".eh_frame is malformed");
		if (next <= off || ++entries > b->lim.max_fdes)
			return fail(b, "too many .eh_frame entries");
		off = next;
		if (dwarf_cfi_cie_p(&e))
			continue;
		if (!(ci = cie_at(b, e.fde.CIE_pointer)))
			return fail(b, "an FDE names no valid CIE");
		p = e.fde.start;
		field = b->eh_addr + (uint64_t)(p - (const uint8_t *)b->eh->d_buf);
		if (read_encoded(ci->fde_enc, &p, e.fde.end, &field, &lo) ||
		    read_encoded(ci->fde_enc & 0x0f, &p, e.fde.end, NULL, &len))
			return fail(b, "an FDE's address range is unreadable");
		if (ci->has_z) {       /* the augmentation data, then the instructions */
			uint64_t alen;

			if (read_uleb(&p, e.fde.end, &alen) || alen > (uint64_t)(e.fde.end - p))
				return fail(b, "an FDE's augmentation data is unreadable");
			p += alen;
		}
		if (!cfa_program_ok(b->arch, p, e.fde.end, ci->fde_enc))
			return fail(b, "an FDE's call-frame program is beyond the bounds (a register past 127, "
				    "remember_state nested past 64, an expression past 1 KiB or a program past 64 KiB)");
		if (len == 0 || lo + len < lo)
			continue;
		c->fdes = tb_grow(c->fdes, &c->fdes_cap, c->nfdes + 1, sizeof(*c->fdes), 1024);
		c->fdes[c->nfdes++] = (struct tb_code_range){ lo, lo + len };
	}
	tb_qsort(c->fdes, c->nfdes, sizeof(*c->fdes), cmp_range);
	for (uint32_t i = 0; i < c->nfdes; i++) {
		struct tb_code_range r = c->fdes[i];

		if (n && r.lo == c->fdes[n - 1].lo)
			continue;
		if (n && c->fdes[n - 1].hi > r.lo)
			c->fdes[n - 1].hi = r.lo;
		c->fdes[n++] = r;
	}
	c->nfdes = n;
	if (!n)
		return fail(b, ".eh_frame describes no code");
	if (c->fdes[n - 1].hi - c->fdes[0].lo > UINT32_MAX)
		return fail(b, "code spans more than 4 GiB");
	c->base = c->fdes[0].lo;
	return 0;
}

/* ------------------------------------------------------------ rows */

/* "saved at CFA + off": libdw's DW_OP_call_frame_cfa [DW_OP_plus_uconst off] */
static int cfa_slot(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (n < 1 || n > 2 || ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	*off = n == 2 && ops[1].atom == DW_OP_plus_uconst ? (int64_t)ops[1].number : 0;
	return n == 2 && ops[1].atom != DW_OP_plus_uconst ? -1 : 0;
}

/* GCC's and ld's lazy-PLT CFA: rsp + 8 + ((rip & 15) >= N) << 3; the threshold
 * N, or 0 for any other expression. */
static unsigned plt_threshold(const Dwarf_Op *ops, size_t n)
{
	static const uint8_t shape[] = { DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
					 DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	unsigned lit;

	if (n != sizeof(shape))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (shape[i] && ops[i].atom != shape[i])
			return 0;
	if (ops[0].number != 8 || ops[1].number != 0 || ops[4].atom < DW_OP_lit1 ||
	    ops[4].atom > DW_OP_lit15)
		return 0;
	lit = ops[4].atom - DW_OP_lit0;
	return lit;
}

/* A slot at CFA + off that a row can say: off a multiple of 8 in
 * [MIN_RBP_OFFSET, 0): 0 and *off8 = off / 8; else -1. */
static int saved_below_cfa(int64_t off, int8_t *off8)
{
	if (off >= 0 || off < MIN_RBP_OFFSET || off % 8)
		return -1;
	*off8 = (int8_t)(off / 8);
	return 0;
}

static struct tb_urow row_of(uint8_t kind, enum tb_urow_ra ra, uint16_t cfa8, int8_t rbp8)
{
	return (struct tb_urow){ 0, cfa8, (uint8_t)(kind | ra << TB_URA_SHIFT), rbp8 };
}

/* One libdw row as a table row, for machine a. */
static struct tb_urow classify(const struct tb_cfi_arch *a, Dwarf_Frame *f, bool signal)
{
	static const struct tb_urow invalid = { 0, 0, TB_UK_INVALID, 0 };
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t off;
	unsigned plt;
	uint8_t kind;
	uint16_t cfa8 = 0;
	int64_t ra_off = 0, fp_off = 0;
	int8_t ra8 = 0, fp8 = 0;
	int ra_in_lr, fp_saved;

	if (signal)
		return row_of(TB_UK_SIGNAL, TB_URA_CFA8, 0, 0);
	if (dwarf_frame_cfa(f, &ops, &n))
		return invalid;
	if (n == 0)
		return row_of(TB_UK_STOP, TB_URA_CFA8, 0, 0);
	if (n == 1 && ops[0].atom == DW_OP_bregx && (ops[0].number == a->sp || ops[0].number == a->fp)) {
		off = (int64_t)ops[0].number2;
		if (off < 0 || off > MAX_CFA_OFFSET || off % 8)
			return invalid;
		kind = ops[0].number == a->sp ? TB_UK_RSP : TB_UK_RBP;
		cfa8 = (uint16_t)(off / 8);
	} else if (a->lazy_plt_expr && (plt = plt_threshold(ops, n))) {
		kind = TB_UK_PLT;
		cfa8 = (uint16_t)plt;
	} else {
		return invalid;
	}
	/* the return address: undefined (outermost frame), saved below the CFA
	 * (x86-64: always at CFA-8), or (a link register) still in it */
	if (dwarf_frame_register(f, a->ra, mem, &ops, &n))
		return invalid;
	if (n == 0 && ops == mem)
		return row_of(TB_UK_STOP, TB_URA_CFA8, 0, 0);
	if (n == 0 && !a->ra_in_register)
		return invalid;
	ra_in_lr = n == 0;
	if (!ra_in_lr && cfa_slot(ops, n, &ra_off))
		return invalid;
	/* the caller's fp: unchanged (undefined, same value) or saved below the CFA */
	if (dwarf_frame_register(f, a->fp, mem, &ops, &n))
		return invalid;
	fp_saved = n != 0;
	if (fp_saved && (cfa_slot(ops, n, &fp_off) || kind == TB_UK_PLT))
		return invalid;
	/* a frame record near the frame's bottom (CFA - 8*cfa8), maybe beyond
	 * rbp8's reach below the CFA: arm64's big frames (sub sp; stp x29, x30,
	 * [sp, #16]): rbp8 >= 0 says it from the bottom */
	if (a->ra_in_register && !ra_in_lr && fp_saved && ra_off == fp_off + 8 && fp_off < 0 &&
	    (fp_off == -8 * (int64_t)cfa8 || fp_off < MIN_RBP_OFFSET) &&
	    fp_off + 8 * (int64_t)cfa8 >= 0 && fp_off + 8 * (int64_t)cfa8 <= 8 * 127 && fp_off % 8 == 0)
		return row_of(kind, TB_URA_RECORD, cfa8, (int8_t)((fp_off + 8 * (int64_t)cfa8) / 8));
	if (fp_saved && saved_below_cfa(fp_off, &fp8))
		return invalid;
	if (ra_in_lr)
		return row_of(kind, TB_URA_LR, cfa8, fp8);
	if (ra_off == -8)
		return row_of(kind, TB_URA_CFA8, cfa8, fp8);
	if (!a->ra_in_register || saved_below_cfa(ra_off, &ra8))
		return invalid;
	if (fp_saved && ra_off == fp_off + 8)
		return row_of(kind, TB_URA_RECORD, cfa8, fp8);
	if (!fp_saved)
		return row_of(kind, TB_URA_SAVED, cfa8, ra8);
	return invalid;  /* both saved, apart: not a rule the walk has */
}

/* Append row r at vaddr addr (>= the last row's): merged into an equal
 * predecessor, replacing one at the same pc. */
static int emit(struct builder *b, uint64_t addr, struct tb_urow r)
{
	struct tb_cfi *c = b->c;

	r.pc = (uint32_t)(addr - c->base);
	if (c->nrows && c->rows[c->nrows - 1].pc == r.pc)
		c->nrows--;
	if (c->nrows) {
		const struct tb_urow *l = &c->rows[c->nrows - 1];

		if (l->kind == r.kind && l->cfa8 == r.cfa8 && l->rbp8 == r.rbp8)
			return 0;
	}
	if (c->nrows >= b->lim.max_rows)
		return fail(b, "too many rows");
	c->rows = tb_grow(c->rows, &c->rows_cap, c->nrows + 1, sizeof(*c->rows), 4096);
	c->rows[c->nrows++] = r;
	return 0;
}

static const struct tb_urow invalid_row = { 0, 0, TB_UK_INVALID, 0 };

/* The rows of FDE [lo, hi), then an INVALID row at hi if the next FDE
 * starts more than TB_CFI_MAX_PAD bytes later. */
static int fde_rows(struct builder *b, Dwarf_CFI *cfi, uint64_t lo, uint64_t hi, uint64_t next_lo)
{
	struct tb_cfi *c = b->c;
	uint64_t a = lo;
	int has_rbp = 0;

	while (a < hi) {
		Dwarf_Frame *f;
		Dwarf_Addr start, end;
		bool signal;
		struct tb_urow r;

		if (tb_clock_ns(CLOCK_THREAD_CPUTIME_ID) - b->cpu0 > b->lim.max_ns)
			return fail(b, "took too long");
		if (b->lim.cancel && __atomic_load_n(b->lim.cancel, __ATOMIC_RELAXED))
			return fail(b, "cancelled (the capture ended)");
		if (dwarf_cfi_addrframe(cfi, a, &f)) {
			c->bad_fdes++;
			if (emit(b, a, invalid_row))
				return -1;
			break;
		}
		if (dwarf_frame_info(f, &start, &end, &signal) < 0 || start > a || end <= a) {
			free(f);
			c->bad_fdes++;
			if (emit(b, a, invalid_row))
				return -1;
			break;
		}
		r = classify(b->arch, f, signal);
		free(f);
		if (end > hi)
			end = hi;
		c->libdw_rows++;
		c->kinds[TB_UROW_KIND(&r)]++;
		if (TB_UROW_KIND(&r) == TB_UK_RBP) {
			c->rbp_bytes += end - a;
			has_rbp = 1;
		}
		if (emit(b, a, r))
			return -1;
		a = end;
	}
	c->code_bytes += hi - lo;
	if (!has_rbp)
		c->nofp_bytes += hi - lo;
	return next_lo - hi > TB_CFI_MAX_PAD ? emit(b, hi, invalid_row) : 0;
}

/* ------------------------------------------------------------ the file */

static Elf_Scn *section(Elf *elf, const char *want, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	for (unsigned i = 0; i < MAX_SECTIONS && (scn = elf_nextscn(elf, scn)); i++) {
		const char *name;

		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

/* A PLT without CFI (arm64: ld describes none): [lo, hi) of its entries
 * after the header into b->plt, when no FDE overlaps the section; the
 * table's base then starts at the PLT if it comes first. */
static int find_plt(struct builder *b, Elf *elf)
{
	struct tb_cfi *c = b->c;
	GElf_Shdr sh;
	uint64_t lo, hi;

	if (!b->arch->plt_header || !section(elf, ".plt", &sh) || sh.sh_size <= b->arch->plt_header ||
	    sh.sh_addr + sh.sh_size < sh.sh_addr)
		return 0;
	lo = sh.sh_addr;
	hi = sh.sh_addr + sh.sh_size;
	for (uint32_t i = 0; i < c->nfdes; i++)
		if (c->fdes[i].lo < hi && lo < c->fdes[i].hi)
			return 0;
	if (lo < c->base) {
		if (c->fdes[c->nfdes - 1].hi - lo > UINT32_MAX)
			return fail(b, "code spans more than 4 GiB");
		c->base = lo;
	}
	b->plt = (struct tb_code_range){ lo, hi };
	return 0;
}

/* The PLT's rows (find_plt): its header INVALID (lazy binding's entry,
 * which pushes x16 and x30), its entries (adrp, ldr, add, br: sp and x30
 * untouched) CFA = sp with the return address in x30; an INVALID row at its
 * end before a gap to the next FDE at next_lo. */
static int plt_rows(struct builder *b, uint64_t next_lo)
{
	const struct tb_urow entry = { 0, 0, TB_UK_RSP | TB_URA_LR << TB_URA_SHIFT, 0 };

	if (emit(b, b->plt.lo, invalid_row) || emit(b, b->plt.lo + b->arch->plt_header, entry))
		return -1;
	return next_lo - b->plt.hi > TB_CFI_MAX_PAD ? emit(b, b->plt.hi, invalid_row) : 0;
}

/* ------------------------------------------------------------ rows from code */

static void emit_cb(void *ctx, uint64_t addr, struct tb_urow r)
{
	struct builder *b = ctx;

	if (!b->emit_failed && emit(b, addr, r))
		b->emit_failed = 1;
}

/* The file bytes of ELF vaddrs [lo, hi) from the PT_LOAD holding them, or NULL. */
static const uint8_t *load_bytes(Elf *elf, uint64_t lo, uint64_t hi)
{
	size_t nphdr;
	Elf_Data *d;

	if (elf_getphdrnum(elf, &nphdr))
		return NULL;
	for (size_t i = 0; i < nphdr && i < 64; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || lo < ph.p_vaddr ||
		    hi > ph.p_vaddr + ph.p_filesz || hi < lo)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (lo - ph.p_vaddr)), hi - lo, ELF_T_BYTE);
		return d && d->d_size == hi - lo ? d->d_buf : NULL;
	}
	return NULL;
}

/* A file without .eh_frame whose machine reads rows from code (arm64: the
 * kernel's vDSO has no CFI): each .dynsym function's rows from its
 * instructions (proc/a64rows.c), a SIGNAL row over the signal trampoline
 * from the nop before it (return addresses are looked up at pc-1), an
 * INVALID row after each where a gap follows.  At most
 * MAX_CODE_ROWS_FUNCS functions of MAX_CODE_ROWS_BYTES in all. */
static int code_table(struct builder *b, Elf *elf)
{
	struct tb_cfi *c = b->c;
	GElf_Shdr sh;
	Elf_Scn *scn = section(elf, ".dynsym", &sh);
	Elf_Data *d;
	uint64_t sigreturn = 0, bytes = 0;
	size_t n;

	if (!scn || sh.sh_entsize != sizeof(Elf64_Sym) || !(d = tb_elf_data(elf, scn)))
		return fail(b, "no .eh_frame section");
	n = d->d_size / sizeof(Elf64_Sym);
	for (size_t i = 1; i < n && i <= MAX_CODE_ROWS_FUNCS; i++) {
		GElf_Sym sym;
		const char *name;
		struct tb_code_range r;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_size ||
		    sym.st_value % 4 || sym.st_value + sym.st_size < sym.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (name && strcmp(name, b->arch->code_rows_sigreturn) == 0 && sym.st_value >= 4) {
			sigreturn = sym.st_value - 4;
			r = (struct tb_code_range){ sigreturn, sym.st_value + sym.st_size };
		} else if (GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
			r = (struct tb_code_range){ sym.st_value, sym.st_value + sym.st_size };
		} else {
			continue;
		}
		c->fdes = tb_grow(c->fdes, &c->fdes_cap, c->nfdes + 1, sizeof(*c->fdes), 64);
		c->fdes[c->nfdes++] = r;
		bytes += r.hi - r.lo;
	}
	if (!c->nfdes || bytes > MAX_CODE_ROWS_BYTES)
		return fail(b, "no .eh_frame section");
	tb_qsort(c->fdes, c->nfdes, sizeof(*c->fdes), cmp_range);
	for (uint32_t i = 1; i < c->nfdes; i++)
		if (c->fdes[i].lo < c->fdes[i - 1].hi)
			return fail(b, "no .eh_frame section, and its functions overlap");
	c->base = c->fdes[0].lo;
	for (uint32_t i = 0; i < c->nfdes; i++) {
		uint64_t lo = c->fdes[i].lo, hi = c->fdes[i].hi;
		uint64_t next = i + 1 < c->nfdes ? c->fdes[i + 1].lo : UINT64_MAX;
		const uint8_t *code = load_bytes(elf, lo, hi);

		if (!code)
			return fail(b, "no .eh_frame section, and its code is unreadable");
		if (lo == sigreturn)
			emit_cb(b, lo, (struct tb_urow){ 0, 0, TB_UK_SIGNAL, 0 });
		else
			tb_a64_rows(code, lo, hi, emit_cb, b);
		if (next - hi > TB_CFI_MAX_PAD)
			emit_cb(b, hi, invalid_row);
		if (b->emit_failed)
			return -1;
		c->code_bytes += hi - lo;
	}
	return 0;
}

int tb_cfi_build(Elf *elf, const struct tb_cfi_limits *lim, struct tb_cfi *out, char *err,
		 size_t errlen)
{
	static const struct tb_cfi_limits defaults = { TB_CFI_MAX_ROWS, TB_CFI_MAX_FDES, TB_CFI_MAX_NS, NULL };
	struct builder b = { .c = out, .lim = lim ? *lim : defaults,
			     .cpu0 = tb_clock_ns(CLOCK_THREAD_CPUTIME_ID), .t0 = tb_clock_ns(CLOCK_MONOTONIC),
			     .err = err, .errlen = errlen };
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Dwarf_CFI *cfi;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    !(b.ident = (const unsigned char *)elf_getident(elf, NULL)))
		return fail(&b, "not an ELF file");
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || !(b.arch = tb_cfi_arch(eh.e_machine)))
		return fail(&b, "not an x86-64 or arm64 ELF file");
	if (!(scn = section(elf, ".eh_frame", &sh))) {
		if (!b.arch->code_rows_sigreturn)
			return fail(&b, "no .eh_frame section");
		if (code_table(&b, elf)) {
			tb_cfi_free(out);
			return -1;
		}
		out->build_ns = tb_clock_ns(CLOCK_MONOTONIC) - b.t0;
		return 0;
	}
	/* read whole (libelf): bounded first, as a sparse file may claim any size */
	if (sh.sh_size > TB_ELF_MAX_SECTION)
		return fail(&b, ".eh_frame is larger than 64 MiB");
	if (!(b.eh = tb_elf_data(elf, scn)) || !b.eh->d_buf || b.eh->d_size != sh.sh_size)
		return fail(&b, ".eh_frame is unreadable (truncated file?)");
	b.eh_addr = sh.sh_addr;
	if (list_fdes(&b) || find_plt(&b, elf)) {
		tb_cfi_free(out);
		return -1;
	}
	if (!(cfi = dwarf_getcfi_elf(elf))) {
		tb_cfi_free(out);
		return fail(&b, "libdw cannot read .eh_frame");
	}
	for (uint32_t i = 0; i < out->nfdes && !rc; i++) {
		if (b.plt.hi && b.plt.lo < out->fdes[i].lo) {
			rc = plt_rows(&b, out->fdes[i].lo);
			b.plt.hi = 0;
		}
		rc = rc ? rc : fde_rows(&b, cfi, out->fdes[i].lo, out->fdes[i].hi,
					i + 1 < out->nfdes ? out->fdes[i + 1].lo : UINT64_MAX);
	}
	if (!rc && b.plt.hi)
		rc = plt_rows(&b, UINT64_MAX);
	dwarf_cfi_end(cfi);
	if (rc) {
		tb_cfi_free(out);
		return -1;
	}
	if (b.arch->fp_record_at_cfa && out->rbp_bytes * 100 >= out->code_bytes * TB_CFI_FP_ONLY_PERCENT)
		out->flags |= TB_CFI_FP_ONLY;
	out->build_ns = tb_clock_ns(CLOCK_MONOTONIC) - b.t0;
	return 0;
}

int tb_cfi_build_fd(int fd, const struct tb_cfi_limits *lim, struct tb_cfi *out, char *err,
		    size_t errlen)
{
	Elf *elf;
	int rc;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE || !(elf = elf_begin(fd, ELF_C_READ, NULL))) {
		snprintf(err, errlen, "unwind table: not an ELF file");
		return -1;
	}
	rc = tb_cfi_build(elf, lim, out, err, errlen);
	elf_end(elf);
	return rc;
}

void tb_cfi_free(struct tb_cfi *c)
{
	free(c->rows);
	free(c->fdes);
	c->rows = NULL;
	c->fdes = NULL;
	c->nrows = c->rows_cap = c->nfdes = c->fdes_cap = 0;
}

const struct tb_urow *tb_cfi_row(const struct tb_urow *rows, uint32_t n, uint64_t base,
				 uint64_t addr)
{
	uint32_t lo = 0, hi = n;
	uint64_t key = addr - base;

	if (addr < base || key > UINT32_MAX || !n || rows[0].pc > key)
		return NULL;
	while (hi - lo > 1) {          /* rows[lo].pc <= key < rows[hi].pc */
		uint32_t mid = lo + (hi - lo) / 2;

		if (rows[mid].pc <= key)
			lo = mid;
		else
			hi = mid;
	}
	return &rows[lo];
}

static const struct tb_code_range *range_at(const void *ranges, size_t stride, uint32_t i)
{
	return (const struct tb_code_range *)(const void *)((const char *)ranges + i * stride);
}

uint32_t tb_code_range_find(const void *ranges, uint32_t n, size_t stride, uint64_t addr)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {          /* the first range ending above addr */
		uint32_t mid = lo + (hi - lo) / 2;

		if (range_at(ranges, stride, mid)->hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && range_at(ranges, stride, lo)->lo <= addr ? lo : n;
}

const struct tb_code_range *tb_cfi_fde(const struct tb_cfi *c, uint64_t addr)
{
	uint32_t i = tb_code_range_find(c->fdes, c->nfdes, sizeof(*c->fdes), addr);

	return i < c->nfdes ? &c->fdes[i] : NULL;
}
