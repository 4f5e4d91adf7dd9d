/* symbolize.h: code objects of target processes -> function, file, lines (line tables
 * shared and budgeted: model/linetabs.h); native and kernel functions are code entries
 * of their own kind, so every output walks one list of frames. */
#ifndef TB_SYMBOLIZE_H
#define TB_SYMBOLIZE_H
#include <stdint.h>
#include <sys/types.h>
#include "cpython/linetable.h"
#include "cpython/layout.h"
#include "lib/hashmap.h"
#include "lib/mem.h"
#include "lib/strtab.h"
#include "model/linetabs.h"

/* What a code entry stands for: the one list of frame kinds of every output. */
enum tb_code_kind {
	TB_CODE_PYTHON = 0,    /* a Python code object; also the synthetic <GC>, <off-CPU> (pid 0,
				* file "<synthetic>") */
	TB_CODE_NATIVE,        /* a native function: name = its symbol (or lib+0xSTART), file = its
				* module's path */
	TB_CODE_KERNEL,        /* a kernel function: name from kallsyms, file "[kernel]" or "[module]" */
	TB_CODE_TASK,          /* an asyncio task (--async-aware): name "<task NAME>", file "<task>";
				* a capture stores it as a Python frame of pid 0 and lists it in its
				* tasks section (output/tbp_sections.c) */
	TB_CODE_KINDS
};

/* One code object as read from a target (or a placeholder when it could not be). */
struct tb_code {
	pid_t pid;             /* 0: synthetic, native or kernel */
	uint64_t addr;         /* native, kernel: the function's key (its start address) */
	uint16_t code_id;
	uint8_t resolved;      /* 0: name is a placeholder */
	uint8_t py_minor;
	uint8_t dead;          /* its process is gone: kept for output, never found */
	uint8_t kind;          /* enum tb_code_kind */
	uint32_t qualname;     /* strtab ids */
	uint32_t filename;
	int32_t firstlineno;
	uint32_t linetab;      /* its line table in the symbolizer's tables, 0: none (or over budget) */
	const unsigned char *linetable; /* that table's bytes (shared), NULL: none */
	uint32_t linetable_len;
	uint32_t nbytes;       /* bytecode size in bytes (3.11+; 0: unknown) */
	uint32_t pid_prev;     /* the previous code of this pid + 1 (0: none) */
};

struct tb_sym_pid {            /* the newest code of a pid */
	pid_t pid;
	uint32_t last;             /* code index + 1, 0: none (forgotten) */
	uint64_t lines_kept;       /* bytes of line tables it added (its budget) */
};

struct tb_symbolizer {
	struct tb_strtab *strs;
	struct tb_code *codes;   /* by index */
	uint32_t n, cap;
	struct tb_hmap index;    /* (pid, addr, code_id) -> code (dead ones until pruned) */
	uint32_t dead_indexed;   /* dead codes the index still holds */
	struct tb_sym_pid *pids; /* each pid's chain of codes, to forget them */
	uint32_t npids, cappids;
	struct tb_hmap pid_index;
	struct tb_linetabs tables;  /* the code objects' line tables, one copy each */
	struct tb_buf scratch;      /* a line table being read */
	uint64_t lookups, reads, unresolved_codes, stale;
	uint64_t freed;           /* code objects read after they were freed (read_code) */
	uint64_t forgotten;         /* codes forgotten so far: a change means what maps
				     * (pid, address, code id) to an index must look again */
	uint64_t lines_dropped;     /* code objects whose line table was over the budget */
};

void tb_sym_init(struct tb_symbolizer *s, struct tb_strtab *strs);
void tb_sym_free(struct tb_symbolizer *s);
/* Index of the code object (reading it from the target on first sight). */
uint32_t tb_sym_code(struct tb_symbolizer *s, pid_t pid, const struct tb_layout *l,
		     uint64_t pycode_type, uint64_t addr, uint16_t code_id);
/* The index of the code object if it was read for pid already (and pid is
 * not forgotten), else TB_HMAP_NONE: nothing is read. */
uint32_t tb_sym_find(const struct tb_symbolizer *s, pid_t pid, uint64_t addr, uint16_t code_id);
/* Add a known code object (capture files, tests): returns its index. */
uint32_t tb_sym_insert(struct tb_symbolizer *s, pid_t pid, uint64_t addr, uint16_t code_id,
		       int py_minor, const char *qualname, const char *filename, int32_t firstlineno,
		       const unsigned char *linetable, uint32_t linetable_len);
/* The entry of a native or kernel function (kind TB_CODE_NATIVE or TB_CODE_KERNEL), added
 * on first sight: one per (kind, key), key its start address (or any key unique in the
 * kind); pid 0, no line table, name and module (a path, "[kernel]", "[nf_tables]"). */
uint32_t tb_sym_function(struct tb_symbolizer *s, enum tb_code_kind kind, uint64_t key,
			 const char *name, const char *module);
/* "python", "native", "kernel", "task" ("python" for an unknown kind). */
const char *tb_code_kind_name(unsigned kind);
/* What a function of this kind from this file is shown with: a native one's module
 * without its directories ("libz.so.1"), a kernel one's "[kernel]" or "[nf_tables]"
 * (its file), a Python one's file name. */
const char *tb_module_name(unsigned kind, const char *file);
/* Location of byte offset `offset` in code `idx`. */
void tb_sym_location(const struct tb_symbolizer *s, uint32_t idx, int32_t offset,
		     struct tb_location *loc);
/* Forget the code objects of a process (its addresses may be reused). */
void tb_sym_forget_pid(struct tb_symbolizer *s, pid_t pid);
/* Forget one code object: never found again (kept for what refers to it). */
void tb_sym_forget_code(struct tb_symbolizer *s, uint32_t idx);

#endif
