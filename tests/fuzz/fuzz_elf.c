/* fuzz_elf.c: libFuzzer harness for what --native reads of every file a
 * process maps: the input is an ELF file (read by libelf from memory, as the
 * agent reads a file), and it goes through the unwind-table builder
 * (proc/cfi.c, bounded in CPU time here as in the agent), the evaluator-range
 * finder (cpython/evalrange.c: from the table, else from .symtab) and the
 * symbol loader (proc/nativesym.c), whose table is then looked up across the
 * file's code; its debug ids and MiniDebugInfo (proc/debugfile.c: the xz
 * image read as the file's debug symbols, and the file as its own debug
 * file); the same bytes as a perf map (proc/perfmap.c).  Build and run:
 * tests/fuzz/run-elf.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>
#include "cpython/evalrange.h"
#include "proc/cfi.h"
#include "proc/debugfile.h"
#include "proc/nativesym.h"
#include "proc/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a quarter of the agent's CPU budget: a slow input is still a finding (-timeout) */
	static const struct tb_cfi_limits lim = { TB_CFI_MAX_ROWS, TB_CFI_MAX_FDES, TB_CFI_MAX_NS / 4, NULL };
	char *copy, err[256];
	struct tb_cfi cfi;
	struct tb_eval_ranges eval;
	struct tb_nsym_file syms, dsyms;
	struct tb_debug_ids ids;
	struct tb_perfmap map = { 0 };
	uint64_t start;
	char *mini_buf;
	Elf *elf, *mini;
	int table_ok;

	if (size < 64 || !(copy = malloc(size)))
		return 0;
	memcpy(copy, data, size);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, size);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		table_ok = !tb_cfi_build(elf, &lim, &cfi, err, sizeof(err));
		if (table_ok ? tb_eval_ranges(elf, &cfi, &eval, err, sizeof(err)) : tb_eval_ranges_symtab(elf, &eval))
			memset(&eval, 0, sizeof(eval));
		tb_nsym_load(elf, NULL, 0, "fuzz", &syms, err, sizeof(err));
		if (table_ok) {
			for (uint32_t i = 0; i < cfi.nrows && i < 64; i++)
				(void)tb_cfi_row(cfi.rows, cfi.nrows, cfi.base, cfi.base + cfi.rows[i].pc);
			tb_nsym_set_fdes(&syms, cfi.fdes, cfi.nfdes);
			cfi.fdes = NULL;
			cfi.nfdes = 0;
			tb_cfi_free(&cfi);
		}
		for (uint32_t i = 0; i < syms.nsyms && i < 64; i++)
			(void)tb_nsym_lookup(&syms, syms.syms[i].start + 1, &start);
		for (uint32_t i = 0; i < eval.n; i++)
			(void)tb_nsym_lookup(&syms, eval.r[i].lo, &start);
		tb_nsym_free(&syms);
		tb_debug_ids_read(elf, &ids);
		if ((mini = tb_debug_minidebug(elf, &mini_buf))) {
			tb_nsym_load(elf, mini, TB_NSYM_MINIDEBUG, "fuzz", &dsyms, err, sizeof(err));
			tb_nsym_free(&dsyms);
			elf_end(mini);
			free(mini_buf);
		}
		tb_nsym_load(elf, elf, TB_NSYM_DEBUGFILE, "fuzz", &dsyms, err, sizeof(err));
		tb_nsym_free(&dsyms);
	}
	tb_perfmap_parse(&map, (const char *)data, size, 0);
	tb_perfmap_free(&map);
	if (elf)
		elf_end(elf);
	free(copy);
	return 0;
}
