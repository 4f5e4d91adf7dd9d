/* functab.h: functions (file + qualified name + first line + kind) of a capture. */
#ifndef TB_FUNCTAB_H
#define TB_FUNCTAB_H
#include <stdint.h>
#include "lib/hashmap.h"
#include "model/symbolize.h"

struct tb_func {
	uint32_t qualname, filename;   /* strtab ids */
	int32_t firstlineno;
	uint32_t kind;                 /* enum tb_code_kind: a kernel function is never a Python one */
	uint64_t self, total;          /* filled by tb_functab_count */
	uint64_t stamp;
};

struct tb_functab {
	struct tb_func *f;
	uint32_t n, cap;
	struct tb_hmap index;          /* (qualname, filename, firstlineno, kind) */
	uint32_t *of_code;             /* code index -> function + 1 (0: not looked up yet) */
	uint32_t nof_code;             /* its capacity (tb_grow) */
};

struct tb_profile;

void tb_functab_free(struct tb_functab *t);
/* Index of the function a code object belongs to (added if new). */
uint32_t tb_functab_index(struct tb_functab *t, const struct tb_code *c);
/* The same by code index of sym, each code looked up once (a capture's
 * frames name a few thousand codes a million times). */
uint32_t tb_functab_of_code(struct tb_functab *t, const struct tb_symbolizer *sym, uint32_t code);
/* Count self and total samples of every function of p (recursion counts
 * once per sample in total). */
void tb_functab_count(struct tb_functab *t, const struct tb_profile *p);

#endif
