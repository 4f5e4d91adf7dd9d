/* nativesym.h: the function names of one ELF file, for native frames
 * (docs/native-unwinding.md): FUNC symbols of .symtab, else of .dynsym
 * together with the .symtab of its separate debug file or MiniDebugInfo
 * (proc/debugfile.h), PLT slots as name@plt; or the names of a perf map
 * (proc/perfmap.h, through the builder below); code that no symbol covers is named by the start
 * of the FDE holding it (the caller writes it lib+0xSTART), so that one
 * stripped function is one node. */
#ifndef TB_NATIVESYM_H
#define TB_NATIVESYM_H
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include "proc/cfi.h"

#define TB_NSYM_MAX_SYMBOLS (4u << 20)  /* FUNC symbols kept per file */
#define TB_NSYM_MAX_NAME 512            /* longer names are cut */
#define TB_NSYM_MAX_NAME_BYTES (64u << 20) /* name bytes read per file, at most */
#define TB_NSYM_MAX_NS (2ull * 1000 * 1000 * 1000) /* CPU time reading a file's symbols, at most */
#define TB_NSYM_MAX_REPEATS 65536       /* names seen again (one name a million times: a crafted
					 * file) before reading stops */
#define TB_NSYM_MODULE 64               /* bytes of the module name kept */

/* where a file's names came from (the best table read) */
enum tb_nsym_source { TB_NSYM_NONE, TB_NSYM_SYMTAB, TB_NSYM_DYNSYM, TB_NSYM_DEBUGFILE, TB_NSYM_MINIDEBUG,
		      TB_NSYM_PERFMAP };

struct tb_nsym {
	uint64_t start, end;      /* ELF vaddrs [start, end); end == start: up to the next */
	uint32_t name;            /* offset in names */
	uint32_t order : 24;      /* the order read in (the last tie between aliases) */
	uint32_t rank : 8;        /* which of aliases is kept (lower first) */
};

struct tb_nsym_file {
	char module[TB_NSYM_MODULE]; /* the file's base name, as mapped */
	uint32_t source;          /* enum tb_nsym_source */
	struct tb_nsym *syms;     /* sorted by start, one per start */
	uint32_t nsyms;
	uint32_t nplt;            /* of which PLT slots */
	int cut;                  /* reading stopped at a budget: not every symbol is here */
	char *names;
	size_t names_len, names_cap;
	struct tb_code_range *fdes; /* sorted FDE ranges (the unwind table's), or NULL */
	uint32_t nfdes;
};

/* The symbols of an ELF file opened with libelf (read with ELF_C_READ);
 * module: the base name shown.  debug: NULL, or an ELF file holding the
 * .symtab the file was stripped of (its debug file, or its MiniDebugInfo:
 * debug_source says which), read first, then the file's own .dynsym (the
 * budgets are shared).  0 ok (a file without symbols too); -1 with one
 * line in err if its sections cannot be read. */
int tb_nsym_load(Elf *elf, Elf *debug, uint32_t debug_source, const char *module, struct tb_nsym_file *f,
		 char *err, size_t errlen);

/* Names from elsewhere (a perf map), with the same budgets, interning and
 * order: begin, add each, then end (sorted, one per start). */
struct tb_nsym_builder;
struct tb_nsym_builder *tb_nsym_begin(struct tb_nsym_file *f, const char *module, uint32_t source);
/* 0 added; -1 once a budget ran out (f->cut set): stop adding. */
int tb_nsym_add(struct tb_nsym_builder *b, uint64_t start, uint64_t size, const char *name);
void tb_nsym_end(struct tb_nsym_builder *b);
/* Hand over the FDE ranges of the file's unwind table (taken: freed with f). */
void tb_nsym_set_fdes(struct tb_nsym_file *f, struct tb_code_range *fdes, uint32_t n);
/* The function holding ELF vaddr addr: its name, or NULL when no symbol
 * covers it; *start is the function's start (the symbol's, else the FDE's
 * holding addr, else addr itself). */
const char *tb_nsym_lookup(const struct tb_nsym_file *f, uint64_t addr, uint64_t *start);
void tb_nsym_free(struct tb_nsym_file *f);

#endif
