/* cfidump.c: prints what user/proc/cfi.c and user/cpython/evalrange.c find
 * in an ELF file, for tests/unwind/run.py to compare with readelf/objdump:
 *   cfidump rows FILE   "stats ..." (with "cpu_ms", the build's CPU time),
 *                       then "fde LO HI" and "row PC KIND CFA8 RBP8" lines (KIND
 *                       +LR, +RECORD, +SAVED: arm64's return address rules)
 *   cfidump eval FILE   "symtab LO HI" and "jumps LO HI" (the evaluator's
 *                       ranges by each method), "scan ..." counts, and the
 *                       hot part's direct jumps as "jump FROM TO"
 * Addresses are ELF vaddrs in hex.  One line on stderr and exit 1 when the
 * table cannot be built. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cpython/evalrange.h"
#include "proc/cfi.h"

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void print_jump(void *ctx, uint64_t from, uint64_t to)
{
	(void)ctx;
	printf("jump %" PRIx64 " %" PRIx64 "\n", from, to);
}

static void print_ranges(const char *what, const struct tb_eval_ranges *r)
{
	for (uint32_t i = 0; i < r->n; i++)
		printf("%s %" PRIx64 " %" PRIx64 "\n", what, r->r[i].lo, r->r[i].hi);
}

static int eval(Elf *elf, const struct tb_cfi *c)
{
	struct tb_eval_ranges sym, jmp;
	char err[256];
	int nsym = tb_eval_ranges_symtab(elf, &sym);

	if (!nsym)
		print_ranges("symtab", &sym);
	if (tb_eval_ranges_jumps(elf, c, &jmp, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	print_ranges("jumps", &jmp);
	printf("scan jumps_out %u undecoded %u dropped %u\n", jmp.jumps, jmp.undecoded, jmp.dropped);
	/* the hot part: the range that starts like a function (CFA = rsp+8) */
	for (uint32_t i = 0; i < jmp.n; i++) {
		const struct tb_urow *r = tb_cfi_row(c->rows, c->nrows, c->base, jmp.r[i].lo);
		const uint8_t *code = tb_eval_code(elf, jmp.r[i].lo, jmp.r[i].hi);

		if (code && r && r->kind == TB_UK_RSP && r->cfa8 == 1)
			tb_eval_direct_jumps(code, jmp.r[i].hi - jmp.r[i].lo, jmp.r[i].lo, print_jump, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *kinds[] = { "INVALID", "RSP", "RBP", "PLT", "STOP", "SIGNAL" };
	/* where the return address is: nothing for CFA-8 (every x86-64 row) */
	static const char *ras[] = { "", "+LR", "+RECORD", "+SAVED" };
	struct tb_cfi c;
	char err[256];
	Elf *elf;
	int fd, rc = 0;
	double t0;

	if (argc != 3 || (strcmp(argv[1], "rows") && strcmp(argv[1], "eval"))) {
		fprintf(stderr, "usage: cfidump rows|eval ELF\n");
		return 2;
	}
	if ((fd = open(argv[2], O_RDONLY | O_CLOEXEC)) < 0) {
		perror(argv[2]);
		return 1;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	t0 = cpu_ms();
	if (tb_cfi_build(elf, NULL, &c, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", argv[2], err);
		elf_end(elf);
		close(fd);
		return 1;
	}
	if (strcmp(argv[1], "eval") == 0) {
		rc = eval(elf, &c);
	} else {
		printf("stats fdes %u libdw_rows %u rows %u bad_fdes %u code_bytes %" PRIu64
		       " rbp_bytes %" PRIu64 " nofp_bytes %" PRIu64 " fp_only %d ms %.1f cpu_ms %.1f\n",
		       c.nfdes, c.libdw_rows, c.nrows, c.bad_fdes, c.code_bytes, c.rbp_bytes,
		       c.nofp_bytes, !!(c.flags & TB_CFI_FP_ONLY), (double)c.build_ns / 1e6, cpu_ms() - t0);
		for (uint32_t i = 0; i < c.nfdes; i++)
			printf("fde %" PRIx64 " %" PRIx64 "\n", c.fdes[i].lo, c.fdes[i].hi);
		for (uint32_t i = 0; i < c.nrows; i++)
			printf("row %" PRIx64 " %s%s %u %d\n", c.base + c.rows[i].pc,
			       kinds[TB_UROW_KIND(&c.rows[i]) % 6], ras[TB_UROW_RA(&c.rows[i]) % 4],
			       c.rows[i].cfa8, c.rows[i].rbp8);
	}
	tb_cfi_free(&c);
	elf_end(elf);
	close(fd);
	return rc;
}
