/* evalrange.c: the address ranges of a python ELF file's evaluator.
 *
 * PGO/LTO builds split _PyEval_EvalFrameDefault: Debian's 3.13-3.15 keep a
 * 1-2 KB hot part under the symbol and the dispatch in an unnamed 77-84 KB
 * cold FDE.  With a .symtab the pieces are named (".cold", ".part.N");
 * stripped files need the jump scan: the hot part (the FDE holding the
 * .dynsym symbol) is decoded instruction by instruction (x86-64: a length
 * decoder; arm64: fixed 4-byte instructions, B, B.cond, CBZ/CBNZ, TBZ/TBNZ),
 * and each FDE that a direct jump from it reaches counts when it starts
 * mid-frame (its first row is not a function entry's: x86-64 CFA = rsp+8,
 * arm64 CFA = sp with the return address in x30), no exported symbol starts
 * there, and the CFA rule at the target equals the one at the jump (a jump
 * does not move the stack). */
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpython/evalrange.h"
#include "lib/mem.h"

#define MAX_SYMBOLS (4u << 20)
#define MAX_SECTIONS 65536u
#define MAX_PHDRS 256u
#define MAX_TARGETS 64        /* distinct FDEs the hot part jumps to, considered */

/* ------------------------------------------------------------ symbols */

/* fn(ctx, name, sym) for every defined FUNC symbol of the sections of type
 * `type`; -1 if there is no such section. */
static int each_function(Elf *elf, Elf64_Word type,
			 void (*fn)(void *ctx, const char *name, const GElf_Sym *sym), void *ctx)
{
	Elf_Scn *scn = NULL;
	int found = -1;

	for (unsigned s = 0; s < MAX_SECTIONS && (scn = elf_nextscn(elf, scn)); s++) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		found = 0;
		n = sh.sh_size / sh.sh_entsize;
		if (n > MAX_SYMBOLS)
			n = MAX_SYMBOLS;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			if ((name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				fn(ctx, name, &sym);
		}
	}
	return found;
}

static int cmp_range(const void *a, const void *b)
{
	const struct tb_code_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Keep the TB_EVAL_MAX largest of ranges r[0..n), sorted by address, and
 * always one range holding `keep`: the one starting there, else the first
 * that holds it (a file may make any number of ranges hold it: only one is
 * spared, so there is always a smallest other one to drop). */
static void select_ranges(struct tb_eval_ranges *out, struct tb_code_range *r, uint32_t n,
			  uint64_t keep)
{
	uint32_t kept = UINT32_MAX;

	for (uint32_t i = 0; i < n; i++)
		if (r[i].lo == keep || (kept == UINT32_MAX && r[i].lo <= keep && keep < r[i].hi))
			kept = i;
	while (n > TB_EVAL_MAX) {
		uint32_t smallest = UINT32_MAX;

		for (uint32_t i = 0; i < n; i++)
			if (i != kept && (smallest == UINT32_MAX ||
					  r[i].hi - r[i].lo < r[smallest].hi - r[smallest].lo))
				smallest = i;
		r[smallest] = r[--n];
		if (kept == n)
			kept = smallest; /* it moved into the hole */
		out->dropped++;
	}
	tb_qsort(r, n, sizeof(*r), cmp_range);
	memcpy(out->r, r, n * sizeof(*r));
	out->n = n;
}

struct named {
	struct tb_code_range r[MAX_TARGETS];
	uint32_t n;
	uint64_t symbol;   /* the evaluator symbol's value, 0 if not seen */
};

static void add_named(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct named *s = ctx;
	size_t len = strlen(TB_EVAL_SYMBOL);

	if (strncmp(name, TB_EVAL_SYMBOL, len) || (name[len] != '\0' && name[len] != '.') ||
	    !sym->st_size || sym->st_value + sym->st_size < sym->st_value)
		return;
	if (name[len] == '\0')
		s->symbol = sym->st_value;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->r[i].lo == sym->st_value)
			return;
	if (s->n < MAX_TARGETS)
		s->r[s->n++] = (struct tb_code_range){ sym->st_value, sym->st_value + sym->st_size };
}

int tb_eval_ranges_symtab(Elf *elf, struct tb_eval_ranges *out)
{
	struct named s = { .n = 0 };

	memset(out, 0, sizeof(*out));
	if (each_function(elf, SHT_SYMTAB, add_named, &s) || !s.symbol)
		return -1;
	out->method = TB_EVAL_SYMTAB;
	select_ranges(out, s.r, s.n, s.symbol);
	return 0;
}

/* ------------------------------------------------------------ x86-64 lengths */

enum {
	M = 1,   /* a ModRM byte (with SIB and displacement) */
	B = 2,   /* imm8 */
	W = 4,   /* imm16 */
	Z = 8,   /* imm16 or imm32 (operand size) */
	X = 16,  /* handled apart, or not decodable in 64-bit mode */
};

/* one-byte opcodes; 0x0f, 0x40-0x4f, prefixes, c4/c5/62, a0-a3, b8-bf, c8,
 * e8/e9, f6/f7 are handled in insn_len */
static const uint8_t one_byte[256] = {
	M,   M,   M,   M,   B,   Z,   X,   X,   M,   M,   M,   M,   B,   Z,   X,   X,   /* 0 */
	M,   M,   M,   M,   B,   Z,   X,   X,   M,   M,   M,   M,   B,   Z,   X,   X,   /* 1 */
	M,   M,   M,   M,   B,   Z,   X,   X,   M,   M,   M,   M,   B,   Z,   X,   X,   /* 2 */
	M,   M,   M,   M,   B,   Z,   X,   X,   M,   M,   M,   M,   B,   Z,   X,   X,   /* 3 */
	X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   /* 4 */
	0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   /* 5 */
	X,   X,   X,   M,   X,   X,   X,   X,   Z,   M|Z, B,   M|B, 0,   0,   0,   0,   /* 6 */
	B,   B,   B,   B,   B,   B,   B,   B,   B,   B,   B,   B,   B,   B,   B,   B,   /* 7 */
	M|B, M|Z, X,   M|B, M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   /* 8 */
	0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   X,   0,   0,   0,   0,   0,   /* 9 */
	X,   X,   X,   X,   0,   0,   0,   0,   B,   Z,   0,   0,   0,   0,   0,   0,   /* a */
	B,   B,   B,   B,   B,   B,   B,   B,   X,   X,   X,   X,   X,   X,   X,   X,   /* b */
	M|B, M|B, W,   0,   X,   X,   M|B, M|Z, X,   0,   W,   0,   0,   B,   X,   0,   /* c */
	M,   M,   M,   M,   X,   X,   X,   0,   M,   M,   M,   M,   M,   M,   M,   M,   /* d */
	B,   B,   B,   B,   B,   B,   B,   B,   X,   X,   X,   B,   0,   0,   0,   0,   /* e */
	X,   0,   X,   X,   0,   0,   X,   X,   0,   0,   0,   0,   0,   0,   M,   M,   /* f */
};

/* 0x0f xx; 0f 38 and 0f 3a (three-byte maps) and 0f 80-8f are handled apart */
static const uint8_t two_byte[256] = {
	M,   M,   M,   M,   X,   0,   0,   0,   0,   0,   X,   0,   X,   M,   0,   M|B, /* 0 */
	M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   /* 1 */
	M,   M,   M,   M,   X,   X,   X,   X,   M,   M,   M,   M,   M,   M,   M,   M,   /* 2 */
	0,   0,   0,   0,   0,   0,   X,   0,   X,   X,   X,   X,   X,   X,   X,   X,   /* 3 */
	M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   /* 4 */
	M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   /* 5 */
	M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   /* 6 */
	M|B, M|B, M|B, M|B, M,   M,   M,   0,   M,   M,   X,   X,   M,   M,   M,   M,   /* 7 */
	X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   X,   /* 8 */
	M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   /* 9 */
	0,   0,   0,   M,   M|B, M,   X,   X,   0,   0,   0,   M,   M|B, M,   M,   M,   /* a */
	M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M|B, M,   M,   M,   M,   M,   /* b */
	M,   M,   M|B, M,   M|B, M|B, M|B, M,   0,   0,   0,   0,   0,   0,   0,   0,   /* c */
	M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   /* d */
	M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   /* e */
	M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   /* f */
};

/* ModRM, SIB and displacement at p[*i]; the reg field, or -1 past the end */
static int modrm(const uint8_t *p, size_t n, size_t *i)
{
	uint8_t m, mod, rm;
	size_t disp = 0;

	if (*i >= n)
		return -1;
	m = p[(*i)++];
	mod = m >> 6;
	rm = m & 7;
	if (mod != 3 && rm == 4) {            /* SIB: base 5 without mod: disp32 */
		if (*i >= n)
			return -1;
		if ((p[(*i)++] & 7) == 5 && mod == 0)
			disp = 4;
	}
	if (mod == 1)
		disp = 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		disp = 4;
	*i += disp;
	return (m >> 3) & 7;
}

/* VEX (c4, c5) and EVEX (62): prefix bytes, opcode, ModRM, imm8 by map */
static size_t vex_len(const uint8_t *p, size_t n, size_t i)
{
	uint8_t lead = p[i], map, op;

	if (lead == 0xc5) {
		map = 1;
		i += 2;
	} else {
		if (i + 1 >= n)
			return 0;
		map = lead == 0x62 ? p[i + 1] & 7 : p[i + 1] & 0x1f;
		i += lead == 0x62 ? 4 : 3;
	}
	if (i >= n || map < 1 || map > 3)
		return 0;
	op = p[i++];
	if (map == 1 && op == 0x77 && lead != 0x62)      /* vzeroupper / vzeroall */
		return i;
	if (modrm(p, n, &i) < 0)
		return 0;
	if (map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
				      (op >= 0xc4 && op <= 0xc6))))
		i++;
	return i;
}

static int is_prefix(uint8_t b)
{
	return b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e ||
	       b == 0x3e || b == 0x26 || b == 0x36 || b == 0x64 || b == 0x65;
}

/* Length of the instruction at p (n bytes readable), 0 if not decodable;
 * for jmp/jcc, *rel is set and *jump = 1. */
static size_t insn_len(const uint8_t *p, size_t n, int *jump, int64_t *rel)
{
	size_t i = 0, imm = 0;
	int opsize16 = 0, addr32 = 0, rexw = 0, reg;
	uint8_t op, flags;

	*jump = 0;
	if (n > 15)
		n = 15;
	for (; i < n && is_prefix(p[i]); i++) {
		opsize16 |= p[i] == 0x66;
		addr32 |= p[i] == 0x67;
	}
	if (i < n && (p[i] & 0xf0) == 0x40)
		rexw = p[i++] & 8;
	if (i >= n)
		return 0;
	op = p[i++];
	if (op == 0xc4 || op == 0xc5 || op == 0x62) {
		size_t len = vex_len(p, n, i - 1);

		return len <= n ? len : 0;
	}
	if (op == 0x0f) {
		if (i >= n)
			return 0;
		op = p[i++];
		if (op >= 0x80 && op <= 0x8f) {                    /* jcc rel32 */
			if (i + 4 > n)
				return 0;
			*rel = (int32_t)(p[i] | p[i + 1] << 8 | p[i + 2] << 16 | (uint32_t)p[i + 3] << 24);
			*jump = 1;
			return i + 4;
		}
		if (op == 0x38 || op == 0x3a) {
			i++;
			if (modrm(p, n, &i) < 0)
				return 0;
			i += op == 0x3a;
			return i <= n ? i : 0;
		}
		flags = two_byte[op];
	} else if (op >= 0xa0 && op <= 0xa3) {                    /* mov moffs */
		i += addr32 ? 4 : 8;
		return i <= n ? i : 0;
	} else if (op >= 0xb8 && op <= 0xbf) {                    /* mov reg, imm */
		i += rexw ? 8 : opsize16 ? 2 : 4;
		return i <= n ? i : 0;
	} else if (op == 0xc8) {                                  /* enter */
		return i + 3 <= n ? i + 3 : 0;
	} else if (op == 0xe8 || op == 0xe9) {                    /* call, jmp rel32 */
		if (i + 4 > n)
			return 0;
		*rel = (int32_t)(p[i] | p[i + 1] << 8 | p[i + 2] << 16 | (uint32_t)p[i + 3] << 24);
		*jump = op == 0xe9;
		return i + 4;
	} else if (op == 0xf6 || op == 0xf7) {                    /* test has an immediate */
		if ((reg = modrm(p, n, &i)) < 0)
			return 0;
		if (reg < 2)
			i += op == 0xf6 ? 1 : opsize16 && !rexw ? 2 : 4;
		return i <= n ? i : 0;
	} else {
		flags = one_byte[op];
		if ((op >= 0x70 && op <= 0x7f) || op == 0xeb) {   /* jcc, jmp rel8 */
			if (i + 1 > n)
				return 0;
			*rel = (int8_t)p[i];
			*jump = 1;
			return i + 1;
		}
	}
	if (flags & X)
		return 0;
	if ((flags & M) && modrm(p, n, &i) < 0)
		return 0;
	imm = (flags & B ? 1 : 0) + (flags & W ? 2 : 0) + (flags & Z ? (opsize16 && !rexw ? 2 : 4) : 0);
	i += imm;
	return i <= n ? i : 0;
}

size_t tb_eval_direct_jumps(const uint8_t *code, size_t len, uint64_t addr,
			    void (*fn)(void *ctx, uint64_t from, uint64_t to), void *ctx)
{
	size_t off = 0;

	while (off < len) {
		int jump;
		int64_t rel = 0;
		size_t n = insn_len(code + off, len - off, &jump, &rel);

		if (!n)
			break;
		if (jump)
			fn(ctx, addr + off, addr + off + n + (uint64_t)rel);
		off += n;
	}
	return len - off;
}

/* arm64 (A64): every instruction is 4 bytes; the direct jumps that stay in
 * the function (BL calls are not jumps): B imm26, B.cond imm19, CBZ/CBNZ
 * imm19, TBZ/TBNZ imm14, offsets in instructions from the jump itself. */
size_t tb_eval_direct_jumps_a64(const uint8_t *code, size_t len, uint64_t addr,
				void (*fn)(void *ctx, uint64_t from, uint64_t to), void *ctx)
{
	static const struct { uint32_t mask, match; unsigned shift, bits; } forms[] = {
		{ 0xfc000000, 0x14000000, 0, 26 },   /* B */
		{ 0xff000010, 0x54000000, 5, 19 },   /* B.cond */
		{ 0x7e000000, 0x34000000, 5, 19 },   /* CBZ, CBNZ */
		{ 0x7e000000, 0x36000000, 5, 14 },   /* TBZ, TBNZ */
	};
	size_t off;

	for (off = 0; off + 4 <= len; off += 4) {
		uint32_t insn = (uint32_t)code[off] | (uint32_t)code[off + 1] << 8 |
				(uint32_t)code[off + 2] << 16 | (uint32_t)code[off + 3] << 24;

		for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
			uint64_t imm;
			int64_t rel;

			if ((insn & forms[k].mask) != forms[k].match)
				continue;
			imm = (insn >> forms[k].shift) & ((1u << forms[k].bits) - 1);
			rel = (int64_t)(imm << (64 - forms[k].bits)) >> (64 - forms[k].bits); /* sign-extended */
			fn(ctx, addr + off, addr + off + (uint64_t)(rel * 4));
			break;
		}
	}
	return len - off;
}

/* ------------------------------------------------------------ the jump scan */

typedef size_t (*jumps_fn)(const uint8_t *code, size_t len, uint64_t addr,
			   void (*fn)(void *ctx, uint64_t from, uint64_t to), void *ctx);

/* What the scan knows of each machine: its decoder, a function entry's row. */
static const struct machine {
	uint16_t e_machine;
	jumps_fn jumps;
	uint8_t entry_kind;       /* struct tb_urow kind (TB_UK_* | TB_URA_*) and cfa8 at an entry */
	uint16_t entry_cfa8;
} machines[] = {
	{ EM_X86_64, tb_eval_direct_jumps, TB_UK_RSP, 1 },                                /* rsp+8, ra at CFA-8 */
	{ EM_AARCH64, tb_eval_direct_jumps_a64, TB_UK_RSP | TB_URA_LR << TB_URA_SHIFT, 0 }, /* sp, ra in x30 */
};

struct scan {
	const struct machine *m;
	const struct tb_cfi *cfi;
	struct tb_code_range hot;
	uint64_t *exported;       /* .dynsym function addresses, sorted */
	uint32_t nexported, cap;
	uint64_t symbol;          /* the evaluator's, 0 if not exported */
	struct tb_code_range found[MAX_TARGETS];
	uint32_t nfound, jumps;
};

static void add_exported(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct scan *s = ctx;

	if (strcmp(name, TB_EVAL_SYMBOL) == 0)
		s->symbol = sym->st_value;
	if (s->nexported < MAX_SYMBOLS) {
		s->exported = tb_grow(s->exported, &s->cap, s->nexported + 1, sizeof(uint64_t), 1024);
		s->exported[s->nexported++] = sym->st_value;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const struct tb_urow *row_at(const struct tb_cfi *c, uint64_t addr)
{
	return tb_cfi_row(c->rows, c->nrows, c->base, addr);
}

static void on_jump(void *ctx, uint64_t from, uint64_t to)
{
	struct scan *s = ctx;
	const struct tb_code_range *fde;
	const struct tb_urow *entry, *src, *dst;
	uint32_t i;

	if (to >= s->hot.lo && to < s->hot.hi)
		return;
	s->jumps++;
	if (!(fde = tb_cfi_fde(s->cfi, to)) || !(entry = row_at(s->cfi, fde->lo)) ||
	    (entry->kind == s->m->entry_kind && entry->cfa8 == s->m->entry_cfa8) ||
	    bsearch(&fde->lo, s->exported, s->nexported, sizeof(uint64_t), cmp_u64))
		return;
	src = row_at(s->cfi, from);
	dst = row_at(s->cfi, to);
	if (!src || !dst || src->kind != dst->kind || src->cfa8 != dst->cfa8 ||
	    (TB_UROW_KIND(src) != TB_UK_RSP && TB_UROW_KIND(src) != TB_UK_RBP))
		return;
	for (i = 0; i < s->nfound; i++)
		if (s->found[i].lo == fde->lo)
			return;
	if (s->nfound < MAX_TARGETS)
		s->found[s->nfound++] = *fde;
}

const uint8_t *tb_eval_code(Elf *elf, uint64_t lo, uint64_t hi)
{
	size_t nphdr;
	Elf_Data *d;

	if (elf_getphdrnum(elf, &nphdr))
		return NULL;
	for (size_t i = 0; i < nphdr && i < MAX_PHDRS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || lo < ph.p_vaddr ||
		    hi > ph.p_vaddr + ph.p_filesz || hi < lo)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (lo - ph.p_vaddr)), hi - lo,
					 ELF_T_BYTE);
		return d && d->d_size == hi - lo ? d->d_buf : NULL;
	}
	return NULL;
}

int tb_eval_ranges_jumps(Elf *elf, const struct tb_cfi *cfi, struct tb_eval_ranges *out,
			 char *err, size_t errlen)
{
	struct scan s = { .cfi = cfi };
	struct tb_code_range r[MAX_TARGETS + 1];
	const struct tb_code_range *hot = NULL;
	const uint8_t *code = NULL;
	const char *why = NULL;
	GElf_Ehdr eh;
	uint32_t n = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; gelf_getehdr(elf, &eh) && i < sizeof(machines) / sizeof(machines[0]); i++)
		if (machines[i].e_machine == eh.e_machine)
			s.m = &machines[i];
	if (!s.m)
		why = "is in a machine's code the scan does not decode";
	else if (each_function(elf, SHT_DYNSYM, add_exported, &s) || !s.symbol)
		why = "is not in .dynsym";
	else if (!(hot = tb_cfi_fde(cfi, s.symbol)) || hot->hi - hot->lo > TB_EVAL_MAX_HOT)
		why = "has no usable FDE";
	else if (!(code = tb_eval_code(elf, hot->lo, hot->hi)))
		why = "has unreadable code";
	if (why) {
		free(s.exported);
		snprintf(err, errlen, "evaluator: %s %s", TB_EVAL_SYMBOL, why);
		return -1;
	}
	s.hot = *hot;
	tb_qsort(s.exported, s.nexported, sizeof(uint64_t), cmp_u64);
	out->undecoded = (uint32_t)s.m->jumps(code, hot->hi - hot->lo, hot->lo, on_jump, &s);
	free(s.exported);
	out->method = TB_EVAL_JUMPS;
	out->jumps = s.jumps;
	r[n++] = *hot;
	for (uint32_t i = 0; i < s.nfound; i++)
		r[n++] = s.found[i];
	select_ranges(out, r, n, hot->lo);
	return 0;
}

int tb_eval_ranges(Elf *elf, const struct tb_cfi *cfi, struct tb_eval_ranges *out, char *err,
		   size_t errlen)
{
	if (!tb_eval_ranges_symtab(elf, out))
		return 0;
	return tb_eval_ranges_jumps(elf, cfi, out, err, errlen);
}
