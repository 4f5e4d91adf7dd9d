/* test_cfi.c: native unwind tables and the walk over them.  Tables from
 * hand-made .eh_frame sections in hand-made ELF images (each CFA, RA and rbp
 * rule the rows know, and those they refuse; gaps, merging, overlaps);
 * hostile input (a truncated entry, a cyclic CIE pointer, too many FDEs or
 * rows, no time left, a lying .eh_frame_hdr, random corruption, a truncated
 * file) gives errors, never a crash; the row search; the reference unwinder
 * (user/proc/unwind_ref.c) over fake stacks: every stop reason, PLT and
 * signal frames, tags, frame pointers.  tests/unwind/run.py checks real
 * files against readelf and live processes against libdwfl. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>
#include <gelf.h>
#include "proc/cfi.h"
#include "proc/unwind_ref.h"
#include "elf_image.h"

/* ------------------------------------------------------------ .eh_frame */

#define EH_ADDR 0x2000

struct eh {
	uint8_t b[1 << 16];
	size_t n;
};

static void put(struct eh *e, const void *p, size_t len)
{
	assert_true(e->n + len <= sizeof(e->b));
	if (len)
		memcpy(e->b + e->n, p, len);
	e->n += len;
}

static void put32(struct eh *e, uint32_t v)
{
	put(e, &v, 4);
}

/* close the entry started at `start`: pad with DW_CFA_nop, write its length */
static void close_entry(struct eh *e, size_t start)
{
	while ((e->n - start) % 8)
		e->b[e->n++] = 0;
	*(uint32_t *)(e->b + start) = (uint32_t)(e->n - start - 4);
}

/* a CIE: code align 1, data align -8, RA column 16, CFA = rsp+8, RA at
 * CFA-8; aug "zR" (pcrel sdata4) or "zRS" (signal frames) */
static size_t cie(struct eh *e, int signal)
{
	static const uint8_t body[] = { 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1 };
	static const uint8_t body_s[] = { 1, 'z', 'R', 'S', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1 };
	size_t start = e->n;

	put32(e, 0);
	put32(e, 0);             /* CIE id */
	if (signal)
		put(e, body_s, sizeof(body_s));
	else
		put(e, body, sizeof(body));
	close_entry(e, start);
	return start;
}

static void fde(struct eh *e, size_t cie_off, uint64_t lo, uint32_t len, const uint8_t *ins,
		size_t ilen)
{
	size_t start = e->n;

	put32(e, 0);
	put32(e, (uint32_t)(e->n - cie_off));                    /* CIE pointer */
	put32(e, (uint32_t)(int32_t)(lo - (EH_ADDR + e->n)));    /* pcrel sdata4 */
	put32(e, len);
	put(e, "", 1);                                            /* no augmentation data */
	put(e, ins, ilen);
	close_entry(e, start);
}

static uint8_t image[1 << 18];

static int build(const struct eh *e, struct tb_cfi *c, const struct tb_cfi_limits *lim,
		 char *err, size_t errlen)
{
	struct sec s = { ".eh_frame", SHT_PROGBITS, EH_ADDR, e->b, e->n, 0, 0 };
	size_t len = make_elf(image, sizeof(image), &s, 1, EM_X86_64);
	Elf *elf;
	int rc;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)image, len);
	assert_non_null(elf);
	rc = tb_cfi_build(elf, lim, c, err, errlen);
	elf_end(elf);
	return rc;
}

struct want {
	uint64_t pc;
	uint8_t kind, cfa8;
	int8_t rbp8;
};

static void assert_rows(const struct tb_cfi *c, const struct want *w, uint32_t n)
{
	for (uint32_t i = 0; i < n && i < c->nrows; i++) {
		if (c->base + c->rows[i].pc != w[i].pc || c->rows[i].kind != w[i].kind ||
		    c->rows[i].cfa8 != w[i].cfa8 || c->rows[i].rbp8 != w[i].rbp8)
			fail_msg("row %u: %#llx kind %u cfa8 %u rbp8 %d, want %#llx %u %u %d", i,
				 (unsigned long long)(c->base + c->rows[i].pc), c->rows[i].kind,
				 c->rows[i].cfa8, c->rows[i].rbp8, (unsigned long long)w[i].pc,
				 w[i].kind, w[i].cfa8, w[i].rbp8);
	}
	assert_int_equal(c->nrows, n);
}

/* ------------------------------------------------------------ rows */

static void test_prologue_and_gaps(void **state)
{
	/* push rbp; mov rsp,rbp; ...; leave: rsp+8, rsp+16 (rbp at c-16),
	 * rbp+16, back to rsp+8 */
	static const uint8_t f1[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x60, 0x0c, 7, 8, 0xc6 };
	static const struct want w[] = {
		{ 0x1000, TB_UK_RSP, 1, 0 }, { 0x1001, TB_UK_RSP, 2, -2 }, { 0x1004, TB_UK_RBP, 2, -2 },
		{ 0x1024, TB_UK_RSP, 1, 0 },
		/* f2 at 0x1048 (8 bytes of padding: no INVALID) equals the last row: merged */
		{ 0x1050, TB_UK_INVALID, 0, 0 },    /* 0x30 bytes to f3: INVALID */
		{ 0x1080, TB_UK_RSP, 2, 0 },
		{ 0x1090, TB_UK_INVALID, 0, 0 },    /* after the last FDE */
	};
	static const uint8_t f3[] = { 0x0e, 16 };
	struct eh e = { .n = 0 };
	struct tb_cfi c;
	char err[256];
	size_t ci;

	(void)state;
	ci = cie(&e, 0);
	fde(&e, ci, 0x1080, 0x10, f3, sizeof(f3));      /* out of order: sorted */
	fde(&e, ci, 0x1000, 0x40, f1, sizeof(f1));
	fde(&e, ci, 0x1048, 0x08, NULL, 0);
	fde(&e, ci, 0x1060, 0x00, NULL, 0);             /* empty: dropped */
	assert_int_equal(build(&e, &c, NULL, err, sizeof(err)), 0);
	assert_rows(&c, w, sizeof(w) / sizeof(w[0]));
	assert_int_equal(c.nfdes, 3);
	assert_int_equal(c.base, 0x1000);
	assert_int_equal(c.code_bytes, 0x40 + 0x08 + 0x10);
	assert_int_equal(c.rbp_bytes, 0x20);
	assert_int_equal(c.nofp_bytes, 0x18);
	assert_false(c.flags & TB_CFI_FP_ONLY);
	assert_non_null(tb_cfi_fde(&c, 0x1048));
	assert_null(tb_cfi_fde(&c, 0x1050));
	tb_cfi_free(&c);
}

/* One FDE [0x1000, 0x1010) of the given instructions (after the CIE's
 * rsp+8, RA at c-8): its first row. */
static struct tb_urow first_row(const uint8_t *ins, size_t len, int signal)
{
	struct eh e = { .n = 0 };
	struct tb_cfi c;
	struct tb_urow r;
	char err[256];

	fde(&e, cie(&e, signal), 0x1000, 0x10, ins, len);
	if (build(&e, &c, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	assert_true(c.nrows >= 1);
	r = c.rows[0];
	tb_cfi_free(&c);
	return r;
}

static void test_rules(void **state)
{
	static const struct {
		const char *what;
		uint8_t ins[16];
		size_t len;
		int signal;
		struct tb_urow want;
	} cases[] = {
		{ "entry", { 0 }, 0, 0, { 0, 1, TB_UK_RSP, 0 } },
		{ "big frame", { 0x0e, 0x80, 0x80, 0x02 }, 4, 0, { 0, 4096, TB_UK_RSP, 0 } },
		{ "largest CFA", { 0x0e, 0xf8, 0xff, 0x1f }, 4, 0, { 0, 65535, TB_UK_RSP, 0 } },
		{ "CFA too far", { 0x0e, 0x80, 0x80, 0x20 }, 4, 0, { 0, 0, TB_UK_INVALID, 0 } },
		{ "CFA not /8", { 0x0e, 12 }, 2, 0, { 0, 0, TB_UK_INVALID, 0 } },
		{ "rbp-based", { 0x0c, 6, 16, 0x86, 2 }, 5, 0, { 0, 2, TB_UK_RBP, -2 } },
		{ "CFA in r10 (DRAP)", { 0x0c, 10, 0 }, 3, 0, { 0, 0, TB_UK_INVALID, 0 } },
		{ "RA undefined", { 0x07, 16 }, 2, 0, { 0, 0, TB_UK_STOP, 0 } },
		{ "RA at c-16", { 0x90, 2 }, 2, 0, { 0, 0, TB_UK_INVALID, 0 } },
		{ "RA in a register", { 0x09, 16, 3 }, 3, 0, { 0, 0, TB_UK_INVALID, 0 } },
		{ "rbp at c-1024", { 0x0e, 0x88, 8, 0x86, 0x80, 1 }, 6, 0, { 0, 129, TB_UK_RSP, -128 } },
		{ "rbp too deep", { 0x0e, 0x90, 8, 0x86, 0x81, 1 }, 6, 0, { 0, 0, TB_UK_INVALID, 0 } },
		{ "rbp above the CFA", { 0x11, 6, 0x7e }, 3, 0, { 0, 0, TB_UK_INVALID, 0 } },
		{ "rbp in a register", { 0x09, 6, 12 }, 3, 0, { 0, 0, TB_UK_INVALID, 0 } },
		{ "rbp undefined", { 0x07, 6 }, 2, 0, { 0, 1, TB_UK_RSP, 0 } },
		{ "lazy PLT", { 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 }, 13, 0,
		  { 0, 11, TB_UK_PLT, 0 } },
		{ "PLT, threshold 10", { 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3a, 0x2a, 0x33, 0x24, 0x22 },
		  13, 0, { 0, 10, TB_UK_PLT, 0 } },
		{ "other expression", { 0x0f, 3, 0x76, 0x78, 0x06 }, 5, 0, { 0, 0, TB_UK_INVALID, 0 } },
		{ "signal frame", { 0 }, 0, 1, { 0, 0, TB_UK_SIGNAL, 0 } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tb_urow r = first_row(cases[i].ins, cases[i].len, cases[i].signal);

		if (r.kind != cases[i].want.kind || r.cfa8 != cases[i].want.cfa8 ||
		    r.rbp8 != cases[i].want.rbp8)
			fail_msg("%s: kind %u cfa8 %u rbp8 %d", cases[i].what, r.kind, r.cfa8, r.rbp8);
	}
}

static void assert_well_formed(const struct tb_cfi *c);

static void test_overlapping_fdes(void **state)
{
	static const uint8_t deep[] = { 0x0e, 32 };
	struct eh e = { .n = 0 };
	struct tb_cfi c;
	char err[256];
	size_t ci = cie(&e, 0);

	(void)state;
	fde(&e, ci, 0x1000, 0x40, NULL, 0);
	fde(&e, ci, 0x1020, 0x10, deep, sizeof(deep));
	fde(&e, ci, 0x1020, 0x10, deep, sizeof(deep));  /* twice: one kept */
	assert_int_equal(build(&e, &c, NULL, err, sizeof(err)), 0);
	/* which FDE libdw evaluates inside the overlap is its choice; the list
	 * is cut at the second start, the rows stay sorted */
	assert_int_equal(c.nfdes, 2);
	assert_int_equal(c.fdes[0].hi, 0x1020);
	assert_int_equal(c.fdes[1].hi, 0x1030);
	assert_well_formed(&c);
	assert_int_equal(c.rows[c.nrows - 1].pc + c.base, 0x1030);
	tb_cfi_free(&c);
}

/* ------------------------------------------------------------ hostile */

static void expect_error(const struct eh *e, const struct tb_cfi_limits *lim, const char *what)
{
	struct tb_cfi c;
	char err[256] = "";

	assert_int_equal(build(e, &c, lim, err, sizeof(err)), -1);
	if (!strstr(err, what))
		fail_msg("error \"%s\", want \"%s\"", err, what);
	assert_null(c.rows);
	assert_null(c.fdes);
}

static void expect_ok(const struct eh *e)
{
	struct tb_cfi c;
	char err[256] = "";

	if (build(e, &c, NULL, err, sizeof(err)))
		fail_msg("error \"%s\", want a table", err);
	tb_cfi_free(&c);
}

static void test_truncated_entry(void **state)
{
	struct eh e = { .n = 0 };
	size_t ci = cie(&e, 0);

	(void)state;
	fde(&e, ci, 0x1000, 0x10, NULL, 0);
	*(uint32_t *)(e.b + ci) = 4000;                 /* the CIE runs past the section */
	expect_error(&e, NULL, "malformed");
}

static void test_cyclic_cie_pointer(void **state)
{
	struct eh e = { .n = 0 };
	size_t ci = cie(&e, 0), f1, f2;

	(void)state;
	f1 = e.n;
	fde(&e, ci, 0x1000, 0x10, NULL, 0);
	f2 = e.n;
	fde(&e, ci, 0x1010, 0x10, NULL, 0);
	*(uint32_t *)(e.b + f2 + 4) = (uint32_t)(f2 + 4 - f1);   /* names the first FDE */
	expect_error(&e, NULL, "no valid CIE");
	*(uint32_t *)(e.b + f2 + 4) = 4;                /* names itself */
	expect_error(&e, NULL, "");
	*(uint32_t *)(e.b + f2 + 4) = 0x7ffffff0;       /* far outside the section */
	expect_error(&e, NULL, "");
}

static void test_limits(void **state)
{
	static struct eh e;
	static const int yes = 1;
	struct tb_cfi_limits fdes = { TB_CFI_MAX_ROWS, 1000, TB_CFI_MAX_NS, NULL };
	struct tb_cfi_limits rows = { 100, TB_CFI_MAX_FDES, TB_CFI_MAX_NS, NULL };
	struct tb_cfi_limits time = { TB_CFI_MAX_ROWS, TB_CFI_MAX_FDES, 0, NULL };
	struct tb_cfi_limits cancelled = { TB_CFI_MAX_ROWS, TB_CFI_MAX_FDES, TB_CFI_MAX_NS, &yes };
	static const uint8_t ins[] = { 0x41, 0x0e, 16, 0x41, 0x0e, 8 };
	size_t ci;

	(void)state;
	e.n = 0;
	ci = cie(&e, 0);
	for (int i = 0; i < 2000; i++)
		fde(&e, ci, 0x1000 + 32 * (uint64_t)i, 8, ins, sizeof(ins));
	expect_error(&e, &fdes, "too many .eh_frame entries");
	expect_error(&e, &rows, "too many rows");
	expect_error(&e, &time, "took too long");
	expect_error(&e, &cancelled, "cancelled");
}

/* A call-frame program is read before libdw runs it: a register past 127,
 * remember_state nested past 64, an expression past 1 KiB refuse the table;
 * at the bounds it builds. */
static void test_program_bounds(void **state)
{
	static struct eh e;
	static uint8_t ins[2048];
	size_t ci, n;

	(void)state;
	/* DW_CFA_undefined r127 (ULEB 0x7f): accepted; r128 (0x80 0x01), r2^24: refused */
	e.n = 0;
	ci = cie(&e, 0);
	fde(&e, ci, 0x1000, 8, (const uint8_t[]){ 0x07, 0x7f }, 2);
	expect_ok(&e);
	e.n = 0;
	ci = cie(&e, 0);
	fde(&e, ci, 0x1000, 8, (const uint8_t[]){ 0x07, 0x80, 0x01 }, 3);
	expect_error(&e, NULL, "call-frame program is beyond the bounds");
	e.n = 0;
	ci = cie(&e, 0);
	fde(&e, ci, 0x1000, 8, (const uint8_t[]){ 0x07, 0x80, 0x80, 0x80, 0x08 }, 5);
	expect_error(&e, NULL, "call-frame program is beyond the bounds");
	/* 64 remember_state (0x0a) nested: accepted; 65: refused; 8000 remember/restore pairs: fine */
	for (int depth = 64; depth <= 65; depth++) {
		memset(ins, 0x0a, (size_t)depth);
		e.n = 0;
		ci = cie(&e, 0);
		fde(&e, ci, 0x1000, 8, ins, (size_t)depth);
		if (depth == 64)
			expect_ok(&e);
		else
			expect_error(&e, NULL, "call-frame program is beyond the bounds");
	}
	for (n = 0; n + 2 <= 1000; n += 2) {
		ins[n] = 0x0a;
		ins[n + 1] = 0x0b;
	}
	e.n = 0;
	ci = cie(&e, 0);
	fde(&e, ci, 0x1000, 8, ins, n);
	expect_ok(&e);
	/* DW_CFA_def_cfa_expression (0x0f) of 1025 bytes (ULEB 0x81 0x08): refused */
	ins[0] = 0x0f;
	ins[1] = 0x81;
	ins[2] = 0x08;
	memset(ins + 3, 0x96, 1025);    /* DW_OP_nop */
	e.n = 0;
	ci = cie(&e, 0);
	fde(&e, ci, 0x1000, 8, ins, 3 + 1025);
	expect_error(&e, NULL, "call-frame program is beyond the bounds");
	/* an opcode no DWARF version has (0x3f): refused */
	e.n = 0;
	ci = cie(&e, 0);
	fde(&e, ci, 0x1000, 8, (const uint8_t[]){ 0x3f }, 1);
	expect_error(&e, NULL, "call-frame program is beyond the bounds");
}

static void test_not_usable(void **state)
{
	struct eh e = { .n = 0 };
	struct sec s = { ".eh_frame", SHT_PROGBITS, EH_ADDR, e.b, 0, 0, 0 };
	struct sec nobits = { ".eh_frame", SHT_NOBITS, EH_ADDR, NULL, 0, 0, 0 };
	struct sec other = { ".text", SHT_PROGBITS, 0x1000, "\xc3", 1, 0, 0 };
	struct tb_cfi c;
	char err[256];
	size_t len;
	Elf *elf;

	(void)state;
	fde(&e, cie(&e, 0), 0x1000, 0x10, NULL, 0);
	s.len = e.n;
	elf_version(EV_CURRENT);
	len = make_elf(image, sizeof(image), &s, 1, EM_RISCV);
	elf = elf_memory((char *)image, len);
	assert_int_equal(tb_cfi_build(elf, NULL, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not an x86-64"));
	elf_end(elf);
	len = make_elf(image, sizeof(image), &other, 1, EM_X86_64);
	elf = elf_memory((char *)image, len);
	assert_int_equal(tb_cfi_build(elf, NULL, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no .eh_frame"));
	elf_end(elf);
	len = make_elf(image, sizeof(image), &nobits, 1, EM_X86_64);
	elf = elf_memory((char *)image, len);
	assert_int_equal(tb_cfi_build(elf, NULL, &c, err, sizeof(err)), -1);
	elf_end(elf);
	assert_int_equal(tb_cfi_build(NULL, NULL, &c, err, sizeof(err)), -1);
	assert_int_equal(tb_cfi_build_fd(-1, NULL, &c, err, sizeof(err)), -1);
	e.n = 0;
	cie(&e, 0);
	expect_error(&e, NULL, "describes no code");
}

/* a well-formed table, for corruption */
static void sample_eh(struct eh *e)
{
	static const uint8_t f1[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x60, 0x0c, 7, 8, 0xc6 };
	static const uint8_t plt[] = { 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 };
	static const uint8_t state_ops[] = { 0x41, 0x0a, 0x0e, 48, 0x42, 0x0b, 0x41, 0x07, 16 };
	size_t ci = cie(e, 0), cs = cie(e, 1);

	fde(e, ci, 0x1000, 0x40, f1, sizeof(f1));
	fde(e, ci, 0x1040, 0x20, plt, sizeof(plt));
	fde(e, cs, 0x1060, 0x08, NULL, 0);
	fde(e, ci, 0x1070, 0x30, state_ops, sizeof(state_ops));
}

static void assert_well_formed(const struct tb_cfi *c)
{
	for (uint32_t i = 0; i < c->nrows; i++) {
		assert_true(c->rows[i].kind <= TB_UK_SIGNAL);
		if (i)
			assert_true(c->rows[i].pc > c->rows[i - 1].pc);
	}
	for (uint32_t i = 0; i < c->nfdes; i++) {
		assert_true(c->fdes[i].lo < c->fdes[i].hi);
		if (i)
			assert_true(c->fdes[i].lo >= c->fdes[i - 1].hi);
	}
}

static void test_random_corruption(void **state)
{
	static struct eh good, e;
	struct tb_cfi c;
	char err[256];
	unsigned seed = 12345, built = 0;

	(void)state;
	sample_eh(&good);
	for (int round = 0; round < 3000; round++) {
		e = good;
		for (int flips = 1 + round % 4; flips > 0; flips--) {
			seed = seed * 1103515245u + 12345u;
			e.b[(seed >> 8) % e.n] ^= (uint8_t)(1u << ((seed >> 4) & 7));
		}
		if (round % 7 == 0)
			e.n = (seed >> 3) % e.n;     /* cut short too */
		if (!build(&e, &c, NULL, err, sizeof(err))) {
			assert_well_formed(&c);
			built++;
		}
		tb_cfi_free(&c);
	}
	assert_true(built > 0);
}

/* .eh_frame_hdr claiming a huge sorted table: libdw must not read past it */
static void test_lying_eh_frame_hdr(void **state)
{
	static struct eh e;
	uint8_t hdr[20] = { 1, 0x1b, 0x03, 0x3b };
	struct sec s[2];
	struct tb_cfi c;
	char err[256];
	size_t len;
	Elf *elf;

	(void)state;
	e.n = 0;
	sample_eh(&e);
	*(int32_t *)(hdr + 4) = (int32_t)(EH_ADDR - (0x1000 + 4));   /* eh_frame_ptr */
	*(uint32_t *)(hdr + 8) = 0x7fffffff;                         /* fde_count */
	s[0] = (struct sec){ ".eh_frame_hdr", SHT_PROGBITS, 0x1000, hdr, sizeof(hdr), 0, 0 };
	s[1] = (struct sec){ ".eh_frame", SHT_PROGBITS, EH_ADDR, e.b, e.n, 0, 0 };
	len = make_elf(image, sizeof(image), s, 2, EM_X86_64);
	elf = elf_memory((char *)image, len);
	if (!tb_cfi_build(elf, NULL, &c, err, sizeof(err)))
		assert_well_formed(&c);
	tb_cfi_free(&c);
	elf_end(elf);
}

/* this test program's own file, cut at many lengths: errors or tables */
static void test_truncated_file(void **state)
{
	char path[] = "/tmp/tb-test-cfi-XXXXXX";
	static uint8_t self[8 << 20];
	FILE *f = fopen("/proc/self/exe", "rb");
	size_t n;
	int fd = mkstemp(path);
	struct tb_cfi c;
	char err[256];
	int fd_self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_non_null(f);
	assert_true(fd >= 0 && fd_self >= 0);
	n = fread(self, 1, sizeof(self), f);
	fclose(f);
	assert_true(n > 4096 && n < sizeof(self));
	assert_int_equal(tb_cfi_build_fd(fd_self, NULL, &c, err, sizeof(err)), 0);
	assert_true(c.nrows > 100);
	tb_cfi_free(&c);
	close(fd_self);
	for (int cut = 1; cut < 64; cut++) {
		size_t len = n * (size_t)cut / 64;

		assert_int_equal(ftruncate(fd, 0), 0);
		assert_int_equal(pwrite(fd, self, len, 0), (ssize_t)len);
		if (!tb_cfi_build_fd(fd, NULL, &c, err, sizeof(err)))
			assert_well_formed(&c);
		tb_cfi_free(&c);
	}
	close(fd);
	unlink(path);
}

static void test_row_search(void **state)
{
	static const struct tb_urow rows[] = {
		{ 0, 1, TB_UK_RSP, 0 }, { 4, 2, TB_UK_RSP, 0 }, { 9, 0, TB_UK_INVALID, 0 },
	};

	(void)state;
	assert_null(tb_cfi_row(rows, 3, 0x1000, 0xfff));
	assert_ptr_equal(tb_cfi_row(rows, 3, 0x1000, 0x1000), &rows[0]);
	assert_ptr_equal(tb_cfi_row(rows, 3, 0x1000, 0x1003), &rows[0]);
	assert_ptr_equal(tb_cfi_row(rows, 3, 0x1000, 0x1004), &rows[1]);
	assert_ptr_equal(tb_cfi_row(rows, 3, 0x1000, 0x1009), &rows[2]);
	assert_ptr_equal(tb_cfi_row(rows, 3, 0x1000, 0x100000), &rows[2]);
	assert_null(tb_cfi_row(rows, 3, 0x1000, 0x1000 + (1ull << 32)));
	assert_null(tb_cfi_row(rows, 0, 0x1000, 0x1000));
}

/* ------------------------------------------------------------ the walk */

/* A fake process: code at 0x400000 (ELF vaddr 0x1000, bias 0x3ff000) with
 * the rows below, a stack of words at 0x7000 */
#define STACK 0x7000
static uint64_t stack[512];

/* the anonymous code at 0x500000 (readable: the walk looks at a leaf's
 * instruction): push rbp; mov rbp,rsp; nop; pop rbp; ret; endbr64 */
#define ANON 0x500000
static const uint8_t anon_code[] = { 0x55, 0x48, 0x89, 0xe5, 0x90, 0x5d, 0xc3, 0xf3, 0x0f, 0x1e, 0xfa, 0x90 };

static int read_stack(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr >= ANON && addr + len <= ANON + sizeof(anon_code)) {
		memcpy(buf, anon_code + (addr - ANON), len);
		return 0;
	}
	if (addr < STACK || addr + len > STACK + sizeof(stack) || addr + len < addr)
		return -1;
	memcpy(buf, (uint8_t *)stack + (addr - STACK), len);
	return 0;
}

static const struct tb_urow walk_rows[] = {
	{ 0x000, 1, TB_UK_RSP, 0 },      /* 0x1000: leaf, CFA = rsp+8 */
	{ 0x100, 3, TB_UK_RSP, -2 },     /* 0x1100: CFA = rsp+24, rbp at CFA-16 */
	{ 0x200, 2, TB_UK_RBP, -2 },     /* 0x1200: frame pointer */
	{ 0x300, 0, TB_UK_STOP, 0 },     /* 0x1300: _start */
	{ 0x400, 11, TB_UK_PLT, 0 },     /* 0x1400: PLT */
	{ 0x500, 0, TB_UK_SIGNAL, 0 },   /* 0x1500: __restore_rt */
	{ 0x600, 0, TB_UK_INVALID, 0 },  /* 0x1600: no CFI */
};
static const struct tb_code_range walk_tags[] = { { 0x1200, 0x1300 } };
static const struct tb_uw_file walk_file = { walk_rows, 7, 0, 0x1000, walk_tags, 1 };
static const struct tb_uw_range walk_ranges[] = {
	{ { 0x400000, 0x401000 }, 0x3ff000, &walk_file },
	{ { 0x500000, 0x501000 }, 0x500000, NULL },      /* anonymous code */
};
#define CODE(vaddr) (0x3ff000ull + (vaddr))

static uint32_t walk(const struct tb_uw_regs *r, struct tb_uw_frame *out, enum tb_uw_stop *stop,
		     int fp)
{
	struct tb_uw_walk w = { walk_ranges, 2, read_stack, NULL, 64, fp, NULL };

	return tb_unwind(&w, r, out, stop);
}

/* walk from (ip, sp, bp), frame pointers allowed or not: n frames into f,
 * ending for reason `want` */
static void expect_walk(uint64_t ip, uint64_t sp, uint64_t bp, int fp, uint32_t n,
			enum tb_uw_stop want, struct tb_uw_frame *f)
{
	struct tb_uw_regs r = { ip, sp, bp, 0, 0, 0 };
	enum tb_uw_stop stop;

	assert_int_equal(walk(&r, f, &stop, fp), n);
	if (stop != want)
		fail_msg("stop %s, want %s", tb_uw_stop_names[stop], tb_uw_stop_names[want]);
}

static void test_walk_rules(void **state)
{
	struct tb_uw_frame f[64];
	enum tb_uw_stop stop;
	struct tb_uw_regs r = { CODE(0x1010), STACK + 0x100, 0x1234, 0, 0, 0 };
	uint32_t n;

	(void)state;
	memset(stack, 0, sizeof(stack));
	/* leaf at 0x1010 (CFA = sp+8): RA -> 0x1180 */
	stack[0x100 / 8] = CODE(0x1180);
	/* 0x1180 (CFA = sp+24 = 0x7120): RA at 0x7118 -> 0x1250, rbp at 0x7110 = 0x7200 */
	stack[0x118 / 8] = CODE(0x1250);
	stack[0x110 / 8] = STACK + 0x200;
	/* 0x1250 (CFA = rbp+16 = 0x7210): RA at 0x7208 -> 0x1300, rbp at 0x7200 */
	stack[0x208 / 8] = CODE(0x1301);                /* -1: in the STOP row */
	stack[0x200 / 8] = 0;
	n = walk(&r, f, &stop, 1);
	assert_int_equal(stop, TB_UW_DONE);
	assert_int_equal(n, 4);
	assert_int_equal(f[0].pc, CODE(0x1010));
	assert_int_equal(f[0].flags, 0);
	assert_int_equal(f[1].flags, TB_UW_RA);
	assert_int_equal(f[2].pc, CODE(0x1250));
	assert_int_equal(f[2].flags, TB_UW_RA | TB_UW_TAG);
	assert_int_equal(f[3].pc, CODE(0x1301));
	assert_int_equal(f[3].flags, TB_UW_RA);
	/* a return address right after the tagged range is looked up at pc-1 */
	r = (struct tb_uw_regs){ CODE(0x1300), STACK + 0x100, 0, 1, 0, 0 };
	stack[0x100 / 8] = 0;
	n = walk(&r, f, &stop, 1);
	assert_int_equal(n, 1);
	assert_int_equal(stop, TB_UW_NOT_INCREASING);
	assert_int_equal(f[0].flags, TB_UW_RA | TB_UW_TAG);
}

static void test_walk_stops(void **state)
{
	struct tb_uw_frame f[64];

	(void)state;
	memset(stack, 0, sizeof(stack));
	expect_walk(0, STACK, 0, 1, 0, TB_UW_NO_REGS, f);
	expect_walk(0x900000, STACK, 0, 1, 0, TB_UW_UNKNOWN_MAP, f);
	expect_walk(CODE(0x1600), STACK, 0, 1, 1, TB_UW_INVALID, f);
	expect_walk(CODE(0x1010), STACK + sizeof(stack), 0, 1, 1, TB_UW_READ, f);
	expect_walk(0x500010, STACK, 0, 0, 0, TB_UW_NO_TABLE, f);
	/* an rbp-based CFA below sp */
	expect_walk(CODE(0x1250), STACK + 0x100, STACK + 0x10, 1, 1, TB_UW_NOT_INCREASING, f);
}

static void test_walk_loops_and_depth(void **state)
{
	struct tb_uw_frame f[64];

	(void)state;
	/* frame pointers in anonymous code, the chain pointing at itself */
	memset(stack, 0, sizeof(stack));
	stack[0] = STACK;
	stack[1] = 0x500020;
	expect_walk(0x500010, STACK - 8, STACK, 1, 2, TB_UW_NOT_INCREASING, f);
	assert_int_equal(f[0].flags, TB_UW_FP);
	/* a chain ending in rbp 0 (_start cleared it) is complete */
	stack[0] = 0;
	expect_walk(0x500010, STACK - 8, STACK, 1, 2, TB_UW_DONE, f);
	assert_int_equal(f[1].flags, TB_UW_FP | TB_UW_RA);
	/* the same leaf frame over and over, the stack growing: depth */
	for (int i = 0; i < 512; i++)
		stack[i] = CODE(0x1010);
	expect_walk(CODE(0x1010), STACK, 0, 1, 64, TB_UW_DEPTH, f);
}

/* A FP_ONLY file (frame pointers leave its frames) with the rows of one
 * function at 0x2000: push rbp; mov rbp,rsp (+1, +4), its body, ret after
 * leave at +0x6a; no CFI from 0x2300.  Mapped at 0x600000. */
static const struct tb_urow fp_rows[] = {
	{ 0x000, 1, TB_UK_RSP, 0 },      /* before push rbp: CFA = rsp+8 */
	{ 0x001, 2, TB_UK_RSP, -2 },     /* after it: CFA = rsp+16, rbp at CFA-16 */
	{ 0x004, 2, TB_UK_RBP, -2 },     /* after mov rbp,rsp */
	{ 0x06a, 1, TB_UK_RSP, 0 },      /* after leave: ret */
	{ 0x300, 0, TB_UK_INVALID, 0 },
};
static const struct tb_uw_file fp_file = { fp_rows, 5, TB_CFI_FP_ONLY, 0x2000, NULL, 0 };
static const struct tb_uw_range fp_ranges[] = {
	{ { 0x600000, 0x601000 }, 0x600000 - 0x2000, &fp_file },
};
#define FPCODE(vaddr) (0x600000ull - 0x2000 + (vaddr))

static uint32_t fp_walk(uint64_t ip, uint64_t sp, uint64_t bp, struct tb_uw_frame *f, enum tb_uw_stop *stop)
{
	struct tb_uw_walk w = { fp_ranges, 1, read_stack, NULL, 64, 1, NULL };
	struct tb_uw_regs r = { ip, sp, bp, 0, 0, 0 };

	return tb_unwind(&w, &r, f, stop);
}

/* issue 27: a leaf of frame-pointer code sampled before push rbp or after
 * leave has the caller's rbp; frame pointers alone would skip the caller.
 * The leaf takes its row, its callers their frame records. */
static void test_walk_fp_only_leaf(void **state)
{
	static const struct { uint64_t pc, sp, bp; } leaves[] = {
		{ 0x2000, STACK + 0x100, STACK + 0x200 },    /* at the entry */
		{ 0x2001, STACK + 0xf8, STACK + 0x200 },     /* rbp pushed, not moved */
		{ 0x2020, STACK + 0xf8, STACK + 0xf8 },      /* the body: its own frame record */
		{ 0x206a, STACK + 0x100, STACK + 0x200 },    /* after leave, at ret */
	};
	struct tb_uw_frame f[64];
	enum tb_uw_stop stop;

	(void)state;
	memset(stack, 0, sizeof(stack));
	stack[0xf8 / 8] = STACK + 0x200;                 /* the leaf's saved rbp */
	stack[0x100 / 8] = FPCODE(0x2150);               /* -> its caller */
	stack[0x200 / 8] = 0;                            /* the caller's record: outermost */
	stack[0x208 / 8] = FPCODE(0x2250);               /* -> the caller's caller */
	for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		assert_int_equal(fp_walk(FPCODE(leaves[i].pc), leaves[i].sp, leaves[i].bp, f, &stop), 3);
		assert_int_equal(stop, TB_UW_DONE);
		assert_int_equal(f[0].flags, 0);         /* by its row */
		assert_int_equal(f[1].pc, FPCODE(0x2150));
		assert_int_equal(f[1].flags, TB_UW_RA | TB_UW_FP);
		assert_int_equal(f[2].pc, FPCODE(0x2250));
	}
	/* no CFI at the leaf: frame pointers, as before */
	assert_int_equal(fp_walk(FPCODE(0x2300), STACK + 0xf8, STACK + 0xf8, f, &stop), 3);
	assert_int_equal(f[0].flags, TB_UW_FP);
}

/* The same without a table (anonymous code: a JIT, -X perf's trampolines):
 * the leaf's instruction says where its return address is. */
static void test_walk_fp_prologue(void **state)
{
	static const struct { uint64_t pc, sp, bp; } leaves[] = {
		{ ANON + 0, STACK + 0x100, STACK + 0x200 },    /* push rbp */
		{ ANON + 1, STACK + 0xf8, STACK + 0x200 },     /* mov rbp,rsp */
		{ ANON + 4, STACK + 0xf8, STACK + 0xf8 },      /* the body: frame record */
		{ ANON + 5, STACK + 0xf8, STACK + 0xf8 },      /* pop rbp: frame record still */
		{ ANON + 6, STACK + 0x100, STACK + 0x200 },    /* ret */
		{ ANON + 7, STACK + 0x100, STACK + 0x200 },    /* endbr64 */
	};
	struct tb_uw_frame f[64];
	enum tb_uw_stop stop;

	(void)state;
	memset(stack, 0, sizeof(stack));
	stack[0xf8 / 8] = STACK + 0x200;
	stack[0x100 / 8] = ANON + 0x20;                  /* -> its caller (anonymous code) */
	stack[0x200 / 8] = 0;
	stack[0x208 / 8] = ANON + 0x30;                  /* -> the caller's caller */
	for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		struct tb_uw_regs r = { leaves[i].pc, leaves[i].sp, leaves[i].bp, 0, 0, 0 };

		assert_int_equal(walk(&r, f, &stop, 1), 3);
		assert_int_equal(stop, TB_UW_DONE);
		assert_int_equal(f[1].pc, ANON + 0x20);
		assert_int_equal(f[2].pc, ANON + 0x30);
	}
}

static void test_walk_plt_and_signal(void **state)
{
	struct tb_uw_frame f[64];
	enum tb_uw_stop stop;
	struct tb_uw_regs r;
	uint64_t sig = STACK + 0x100;

	(void)state;
	memset(stack, 0, sizeof(stack));
	/* PLT slot byte 6 (< 11): CFA = sp+8; byte 11: after the push, sp+16 */
	r = (struct tb_uw_regs){ CODE(0x1406), STACK, 0, 0, 0, 0 };
	stack[0] = CODE(0x1601);                          /* returns into code without CFI */
	assert_int_equal(walk(&r, f, &stop, 1), 2);
	assert_int_equal(f[1].pc, CODE(0x1601));
	r.ip = CODE(0x140b);
	stack[1] = CODE(0x1601);
	stack[0] = 7;                                     /* the pushed slot index */
	assert_int_equal(walk(&r, f, &stop, 1), 2);
	assert_int_equal(f[1].pc, CODE(0x1601));
	/* a signal frame: the interrupted registers in the sigcontext */
	stack[(0x100 + 40 + 80) / 8] = STACK + 0x300;      /* rbp */
	stack[(0x100 + 40 + 120) / 8] = STACK + 0x180;     /* rsp */
	stack[(0x100 + 40 + 128) / 8] = CODE(0x1020);      /* rip: exact */
	stack[0x180 / 8] = CODE(0x1601);
	r = (struct tb_uw_regs){ CODE(0x1501), sig, 0, 1, 0, 0 }; /* returned into the trampoline */
	assert_int_equal(walk(&r, f, &stop, 1), 3);
	assert_int_equal(f[1].pc, CODE(0x1020));
	assert_int_equal(f[1].flags, 0);
	assert_int_equal(f[2].pc, CODE(0x1601));
	assert_int_equal(stop, TB_UW_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prologue_and_gaps),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_overlapping_fdes),
		cmocka_unit_test(test_truncated_entry),
		cmocka_unit_test(test_cyclic_cie_pointer),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_program_bounds),
		cmocka_unit_test(test_not_usable),
		cmocka_unit_test(test_random_corruption),
		cmocka_unit_test(test_lying_eh_frame_hdr),
		cmocka_unit_test(test_truncated_file),
		cmocka_unit_test(test_row_search),
		cmocka_unit_test(test_walk_rules),
		cmocka_unit_test(test_walk_stops),
		cmocka_unit_test(test_walk_loops_and_depth),
		cmocka_unit_test(test_walk_plt_and_signal),
		cmocka_unit_test(test_walk_fp_only_leaf),
		cmocka_unit_test(test_walk_fp_prologue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
