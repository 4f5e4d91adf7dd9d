/* linetabs.h: the line tables of the symbolizer's code objects, one copy per distinct
 * content (found by a keyed hash of the bytes and their format, compared in full on a
 * match), each with its index (cpython/linetable.h) built when it is added. Code objects that
 * share a table (equal bytes, whatever their co_firstlineno) share the copy and the index.
 * What is kept is budgeted: in total, and per process for the tables a process brings in;
 * a table past a budget is not kept (its code objects keep their first line only). */
#ifndef TB_LINETABS_H
#define TB_LINETABS_H
#include <stdint.h>
#include "cpython/linetable.h"
#include "lib/hashmap.h"

/* Bytes of tables and indexes kept at most: in all, and added for one process. */
#define TB_LINETABS_TOTAL (64ull << 20)
#define TB_LINETABS_PER_PROCESS (16ull << 20)

struct tb_linetab {
	unsigned char *bytes;
	uint32_t len;
	int format;                      /* enum tb_line_format, -1: none (no location found) */
	struct tb_linetable_index ix;
};

struct tb_linetabs {
	struct tb_linetab *tabs;         /* table id - 1 */
	uint32_t n, cap;
	struct tb_hmap index;
	uint64_t kept;                   /* bytes of tables and indexes */
	uint64_t total_budget, process_budget; /* TB_LINETABS_TOTAL, .._PER_PROCESS (tests lower them) */
};

void tb_linetabs_init(struct tb_linetabs *t);
void tb_linetabs_free(struct tb_linetabs *t);
/* The id (> 0) of the table of these len bytes in py_minor's format, copying and indexing it
 * when it is new and fits the budgets; process_kept: the bytes kept so far for the process
 * that brings it (grown by what is added), NULL for no per-process budget. 0: an empty table,
 * or a new one past a budget. */
uint32_t tb_linetabs_add(struct tb_linetabs *t, int py_minor, const unsigned char *bytes, uint32_t len,
			 uint64_t *process_kept);
/* The table of an id from tb_linetabs_add. */
const struct tb_linetab *tb_linetabs_get(const struct tb_linetabs *t, uint32_t id);
/* The location of offset addr in table id for a code object starting at firstlineno:
 * tb_linetable_lookup's result, through the index. */
int tb_linetabs_lookup(const struct tb_linetabs *t, uint32_t id, int firstlineno, int addr,
		       struct tb_location *out);

#endif
