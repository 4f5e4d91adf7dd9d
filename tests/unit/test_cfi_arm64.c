/* test_cfi_arm64.c: arm64 unwind rows (proc/cfi.c with proc/cfi_arch.c's
 * arm64 facts) on real arm64 ELF files, Debian bookworm's libc.so.6 and
 * ld-linux-aarch64.so.1 from the arm64 sysroot (scripts/arm64-sysroot.sh),
 * every row compared with what `readelf -wF` (GNU binutils, its own reading
 * of .eh_frame, not libdw's) says at the same address, and the rows of the
 * PLT, which has no CFI; rows read from A64 code (the arm64 vDSO has no
 * CFI); and the reference
 * unwinder (proc/unwind_ref.c) with the arm64 rules over a fake stack: the
 * leaf's return address in x30, frame records, a return address at CFA-8, a
 * signal frame and a PAC-signed return address.  The file checks are
 * skipped (said on stderr) when the sysroot has not been made, unless
 * TB_REQUIRE_ARM64_SYSROOT is set (scripts/test.sh's arm64-cfi suite). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>
#include <gelf.h>
#include "proc/a64rows.h"
#include "proc/cfi.h"
#include "proc/unwind_ref.h"

#define SYSROOT "/var/cache/tachyon-bpf/arm64-sysroot/root"

/* No sysroot: skip, or fail where it is required. */
static void no_sysroot(const char *path)
{
	fprintf(stderr, "test_cfi_arm64: no %s (bash scripts/arm64-sysroot.sh)%s\n", path,
		getenv("TB_REQUIRE_ARM64_SYSROOT") ? "" : ": skipped");
	if (getenv("TB_REQUIRE_ARM64_SYSROOT"))
		fail();
	skip();
}
#define MAX_COLS 64

/* The row readelf's columns give: CFA "sp+N" / "x29+N"; x29 and ra "u"
 * (unchanged: for ra, still in x30) or "c-N" (saved at CFA-N). */
static int expected_row(const char *cfa, const char *fp, const char *ra, struct tb_urow *out)
{
	long cfa_off = 0, fp_off = 0, ra_off = 0;
	uint8_t kind;

	if (sscanf(cfa, "sp+%ld", &cfa_off) == 1)
		kind = TB_UK_RSP;
	else if (sscanf(cfa, "x29+%ld", &cfa_off) == 1)
		kind = TB_UK_RBP;
	else
		return -1;                     /* an expression, another register */
	if (cfa_off % 8 || (strcmp(fp, "u") && sscanf(fp, "c%ld", &fp_off) != 1) ||
	    (strcmp(ra, "u") && sscanf(ra, "c%ld", &ra_off) != 1))
		return -1;
	*out = (struct tb_urow){ 0, (uint16_t)(cfa_off / 8), kind, (int8_t)(fp_off / 8) };
	if (fp_off < 0 && ra_off == fp_off + 8 && (fp_off == -cfa_off || fp_off < -1024) &&
	    fp_off + cfa_off >= 0 && fp_off + cfa_off <= 8 * 127) {   /* the record from the frame's bottom */
		out->kind |= TB_URA_RECORD << TB_URA_SHIFT;
		out->rbp8 = (int8_t)((fp_off + cfa_off) / 8);
		return 0;
	}
	if (fp_off < -1024 || ra_off < -1024 || fp_off > 0 || ra_off > 0) /* beyond a row's reach */
		return -1;
	if (!ra_off)
		out->kind |= TB_URA_LR << TB_URA_SHIFT;
	else if (ra_off == -8)
		out->kind |= TB_URA_CFA8 << TB_URA_SHIFT;
	else if (fp_off && ra_off == fp_off + 8)
		out->kind |= TB_URA_RECORD << TB_URA_SHIFT;
	else if (!fp_off)
		*out = (struct tb_urow){ 0, out->cfa8, (uint8_t)(kind | TB_URA_SAVED << TB_URA_SHIFT),
					 (int8_t)(ra_off / 8) };
	else
		return -1;
	return 0;
}

/* Every row readelf -wF prints for path against the table's row at its
 * address; the rows compared in *compared. */
static void compare_with_readelf(const char *path, unsigned *compared)
{
	char cmd[512], line[4096];
	struct tb_cfi c;
	char err[256];
	int fd = open(path, O_RDONLY), ncols = 0, fp_col = -1, ra_col = -1, in_fde = 0;
	unsigned mismatches = 0;
	FILE *p;

	assert_true(fd >= 0);
	assert_int_equal(tb_cfi_build_fd(fd, NULL, &c, err, sizeof(err)), 0);
	close(fd);
	assert_int_equal(c.flags & TB_CFI_FP_ONLY, 0); /* arm64: never (cfi_arch.c) */
	snprintf(cmd, sizeof(cmd), "readelf -wF '%s' 2>/dev/null", path);
	assert_non_null(p = popen(cmd, "r"));
	*compared = 0;
	while (fgets(line, sizeof(line), p)) {
		char *tok[MAX_COLS], *save = NULL;
		int n = 0;

		for (char *t = strtok_r(line, " \n", &save); t && n < MAX_COLS; t = strtok_r(NULL, " \n", &save))
			tok[n++] = t;
		if (n >= 4 && (strcmp(tok[3], "FDE") == 0 || strcmp(tok[3], "CIE") == 0)) {
			in_fde = strcmp(tok[3], "FDE") == 0;  /* a CIE's initial row is no code's */
			continue;
		}
		if (n >= 2 && strcmp(tok[0], "LOC") == 0) {     /* a header: the columns of the rows below */
			ncols = n;
			fp_col = ra_col = -1;
			for (int i = 0; i < n; i++) {
				if (strcmp(tok[i], "x29") == 0)
					fp_col = i;
				else if (strcmp(tok[i], "ra") == 0)
					ra_col = i;
			}
			continue;
		}
		if (!in_fde || n < 2 || n != ncols || strlen(tok[0]) != 16 || strspn(tok[0], "0123456789abcdef") != 16)
			continue;
		{
			struct tb_urow want;
			const struct tb_urow *got;
			uint64_t loc = strtoull(tok[0], NULL, 16);

			if (expected_row(tok[1], fp_col < 0 ? "u" : tok[fp_col], ra_col < 0 ? "u" : tok[ra_col], &want))
				want = (struct tb_urow){ 0, 0, TB_UK_INVALID, 0 };
			got = tb_cfi_row(c.rows, c.nrows, c.base, loc);
			assert_non_null(got);
			/* readelf shows an undefined return address ("u") as it shows an
			 * unchanged one: the outermost frames (_start, clone) are STOP */
			if (TB_UROW_KIND(got) == TB_UK_STOP && TB_UROW_RA(&want) == TB_URA_LR)
				want = (struct tb_urow){ 0, 0, TB_UK_STOP, 0 };
			if (got->kind != want.kind || got->cfa8 != want.cfa8 || got->rbp8 != want.rbp8) {
				if (mismatches++ < 5)
					fprintf(stderr, "%s %#lx: row kind %#x cfa8 %u rbp8 %d, readelf %s %s %s\n",
						path, (unsigned long)loc, got->kind, got->cfa8, got->rbp8, tok[1],
						fp_col < 0 ? "u" : tok[fp_col], ra_col < 0 ? "u" : tok[ra_col]);
			}
			(*compared)++;
		}
	}
	pclose(p);
	tb_cfi_free(&c);
	assert_int_equal(mismatches, 0);
}

/* ld writes no CFI for arm64's PLT: its header INVALID, its entries CFA =
 * sp with the return address in x30 (proc/cfi.c find_plt) */
static void test_plt_rows(void **state)
{
	const char *path = SYSROOT "/lib/aarch64-linux-gnu/libc.so.6";
	struct tb_cfi c;
	char err[256];
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh = { 0 };
	size_t shstrndx;
	int fd;

	(void)state;
	if ((fd = open(path, O_RDONLY)) < 0)
		no_sysroot(path);
	elf_version(EV_CURRENT);
	assert_non_null(elf = elf_begin(fd, ELF_C_READ, NULL));
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".plt") == 0)
			break;
	assert_non_null(scn);
	assert_int_equal(tb_cfi_build(elf, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(tb_cfi_row(c.rows, c.nrows, c.base, sh.sh_addr)->kind, TB_UK_INVALID);
	for (uint64_t a = sh.sh_addr + 32; a < sh.sh_addr + sh.sh_size; a += 4) {
		const struct tb_urow *r = tb_cfi_row(c.rows, c.nrows, c.base, a);

		assert_int_equal(r->kind, TB_UK_RSP | TB_URA_LR << TB_URA_SHIFT);
		assert_int_equal(r->cfa8, 0);
	}
	tb_cfi_free(&c);
	elf_end(elf);
	close(fd);
}

static void test_rows_like_readelf(void **state)
{
	static const char *const files[] = { SYSROOT "/lib/aarch64-linux-gnu/libc.so.6",
					      SYSROOT "/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1" };
	(void)state;
	if (access(files[0], R_OK))
		no_sysroot(files[0]);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		unsigned compared;

		compare_with_readelf(files[i], &compared);
		fprintf(stderr, "test_cfi_arm64: %s: %u rows equal readelf's\n", files[i], compared);
		assert_true(compared > 100);
	}
}

/* ------------------------------------------------------------ rows from code */

struct got_rows {
	uint64_t addr[32];
	struct tb_urow row[32];
	unsigned n;
};

static void record_row(void *ctx, uint64_t addr, struct tb_urow r)
{
	struct got_rows *g = ctx;

	assert_true(g->n < 32);
	g->addr[g->n] = addr;
	g->row[g->n++] = r;
}

#define LR_ROW ((uint8_t)(TB_UK_RSP | TB_URA_LR << TB_URA_SHIFT))
#define REC_ROW ((uint8_t)(TB_UK_RSP | TB_URA_RECORD << TB_URA_SHIFT))

/* proc/a64rows.c on the shapes of the kernel's arm64 vDSO (6.12's
 * __kernel_getrandom: a record, an epilogue and a ret mid-function; its
 * clock functions: leaves) and what it must refuse */
static void test_code_rows(void **state)
{
	static const uint32_t framed[] = {
		0xd503233f, /* paciasp */
		0xa9b87bfd, /* stp x29, x30, [sp, #-128]! */
		0x910003fd, /* mov x29, sp */
		0xd10043ff, /* sub sp, sp, #16 */
		0x94000000, /* bl (x30 saved: fine) */
		0x910043ff, /* add sp, sp, #16 */
		0xa8c87bfd, /* ldp x29, x30, [sp], #128 */
		0xd50323bf, /* autiasp */
		0xd65f03c0, /* ret */
		0xf9400260, /* ldr x0, [x19]: the body again */
		0xf100041f, /* cmp x0, #1 (subs xzr: not sp) */
		0x910003bf, /* mov sp, x29: not followed */
		0xd65f03c0, /* ret */
	};
	static const uint32_t leaf[] = { 0xd2800e28, 0xd4000001, 0xd65f03c0 }; /* mov x8; svc; ret */
	static const uint32_t calls[] = { 0x94000000, 0xd65f03c0 };          /* bl at entry: x30 lost */
	struct got_rows g = { .n = 0 };

	(void)state;
	tb_a64_rows((const uint8_t *)framed, 0x800, 0x800 + sizeof(framed), record_row, &g);
	assert_int_equal(g.n, 13);
	assert_int_equal(g.row[0].kind, LR_ROW);           /* paciasp */
	assert_int_equal(g.row[1].kind, LR_ROW);           /* at the stp */
	assert_true(g.row[2].kind == REC_ROW && g.row[2].cfa8 == 16 && g.row[2].rbp8 == 0);
	assert_true(g.row[4].kind == REC_ROW && g.row[4].cfa8 == 18 && g.row[4].rbp8 == -16);
	assert_true(g.row[6].kind == REC_ROW && g.row[6].cfa8 == 16 && g.row[6].rbp8 == 0);
	assert_int_equal(g.row[7].kind, LR_ROW);           /* after the ldp */
	assert_int_equal(g.row[8].kind, LR_ROW);           /* the ret */
	assert_true(g.row[9].kind == REC_ROW && g.row[9].cfa8 == 16);
	assert_int_equal(g.row[10].kind, REC_ROW);
	assert_int_equal(g.row[11].kind, REC_ROW);         /* at the mov sp, x29 */
	assert_int_equal(g.row[12].kind, TB_UK_INVALID);   /* after it */
	g.n = 0;
	tb_a64_rows((const uint8_t *)leaf, 0x100, 0x100 + sizeof(leaf), record_row, &g);
	for (unsigned i = 0; i < g.n; i++)
		assert_true(g.row[i].kind == LR_ROW && g.row[i].cfa8 == 0);
	g.n = 0;
	tb_a64_rows((const uint8_t *)calls, 0x100, 0x100 + sizeof(calls), record_row, &g);
	assert_true(g.n == 2 && g.row[0].kind == LR_ROW && g.row[1].kind == TB_UK_INVALID);
}

/* ------------------------------------------------------------ the walk */

#define CODE 0x400000ull
#define STACK 0x7fff0000ull
static uint64_t stack[160];         /* STACK .. STACK + 1280 */

static int read_stack(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < STACK || addr + len > STACK + sizeof(stack))
		return -1;
	memcpy(buf, (const uint8_t *)stack + (addr - STACK), len);
	return 0;
}

#define RA(rule) ((uint8_t)((rule) << TB_URA_SHIFT))

/* leaf [0x100, 0x200): CFA = sp, ra in x30; mid [0x200, 0x300): CFA = sp+32,
 * a frame record at CFA-32; x29 frame [0x300, 0x400): CFA = x29+16, ra at
 * CFA-8, x29 at CFA-16; signal trampoline [0x400, 0x500); outer [0x500,
 * 0x600): STOP. */
static struct tb_urow rows[] = {
	{ 0x100, 0, TB_UK_RSP | RA(TB_URA_LR), 0 },
	{ 0x200, 4, TB_UK_RSP | RA(TB_URA_RECORD), -4 },
	{ 0x300, 2, TB_UK_RBP | RA(TB_URA_CFA8), -2 },
	{ 0x400, 0, TB_UK_SIGNAL, 0 },
	{ 0x500, 0, TB_UK_STOP, 0 },
	{ 0x600, 0, TB_UK_INVALID, 0 },
};

static uint32_t walk(uint64_t pc, uint64_t sp, uint64_t fp, uint64_t lr, struct tb_uw_frame *out,
		     enum tb_uw_stop *stop)
{
	static const struct tb_uw_file file = { rows, 6, 0, CODE, NULL, 0 };
	static const struct tb_uw_range range = { { CODE, CODE + 0x1000 }, 0, &file };
	struct tb_uw_walk w = { &range, 1, read_stack, NULL, 16, 1, tb_cfi_arch(EM_AARCH64) };
	struct tb_uw_regs r = { pc, sp, fp, 0, lr, 1 };

	return tb_unwind(&w, &r, out, stop);
}

static void test_walk_arm64(void **state)
{
	struct tb_uw_frame f[16];
	enum tb_uw_stop stop;
	const struct tb_cfi_arch *a = tb_cfi_arch(EM_AARCH64);
	uint32_t n;

	(void)state;
	memset(stack, 0, sizeof(stack));
	/* mid's frame at sp = STACK: record [x29 = STACK + 0x40, ra = x29 frame +4, PAC-signed] */
	stack[0] = STACK + 0x40;
	stack[1] = (0x5a1dull << 48) | (CODE + 0x304);
	/* the x29 frame's record at x29 = STACK + 0x40: [0, ra = the signal trampoline] */
	stack[8] = 0;
	stack[9] = CODE + 0x404;
	/* the signal frame at sp = STACK + 0x50: x29, x30, sp, pc of the interrupted code
	 * (a leaf again: its return address in the saved x30) */
	stack[(0x50 + a->sig_fp) / 8] = 0;
	stack[(0x50 + a->sig_lr) / 8] = CODE + 0x508;
	stack[(0x50 + a->sig_sp) / 8] = STACK + 0x100;
	stack[(0x50 + a->sig_pc) / 8] = CODE + 0x120;
	n = walk(CODE + 0x110, STACK, 0x1234, CODE + 0x208, f, &stop);
	assert_int_equal(n, 6);
	assert_int_equal(stop, TB_UW_DONE);
	assert_true(f[0].pc == CODE + 0x110 && !(f[0].flags & TB_UW_RA)); /* leaf: ra from x30 */
	assert_true(f[1].pc == CODE + 0x208 && (f[1].flags & TB_UW_RA));  /* record at sp */
	assert_int_equal(f[2].pc, CODE + 0x304);                          /* PAC bits stripped */
	assert_int_equal(f[3].pc, CODE + 0x404);                          /* the trampoline */
	assert_true(f[4].pc == CODE + 0x120 && !(f[4].flags & TB_UW_RA)); /* interrupted: x30 again */
	assert_int_equal(f[5].pc, CODE + 0x508);                          /* outermost */

	/* the same record said from the frame's bottom (rbp8 >= 0: CFA - 8*cfa8 + 8*rbp8) */
	rows[1].rbp8 = 0;
	n = walk(CODE + 0x110, STACK, 0x1234, CODE + 0x208, f, &stop);
	rows[1].rbp8 = -4;
	assert_int_equal(n, 6);
	assert_int_equal(f[2].pc, CODE + 0x304);

	/* a caller whose row says "ra in x30": its x30 is long gone */
	n = walk(CODE + 0x110, STACK, 0, CODE + 0x110 + 4, f, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(stop, TB_UW_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_like_readelf),
		cmocka_unit_test(test_plt_rows),
		cmocka_unit_test(test_code_rows),
		cmocka_unit_test(test_walk_arm64),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
