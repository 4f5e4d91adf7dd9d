/* tree.h: the weighted call tree every rich output is written from:
 * root -> process -> frames (Python, native, kernel: the kind is their
 * function's), with per-thread values on every node. */
#ifndef TB_TREE_H
#define TB_TREE_H
#include <stdint.h>
#include "lib/hashmap.h"
#include "model/functab.h"
#include "cpython/linetable.h"
#include "model/profile.h"

enum tb_node_kind { TB_N_ROOT, TB_N_PROCESS, TB_N_FRAME, TB_N_TRUNCATED, TB_N_PARTIAL };

struct tb_tval {          /* one thread's weight on a node */
	uint32_t thread;      /* index into profile threads */
	uint64_t samples, self;
};

struct tb_lval {          /* one source line hit inside a frame node */
	int32_t line;
	uint64_t samples, self;
	struct tb_location loc;   /* union of the spans of the instructions sampled on it */
};

struct tb_oval {          /* executing opcode at the leaf, per thread */
	uint32_t thread;
	uint8_t opcode;
	uint64_t samples;
};

struct tb_ival {          /* one instruction where leaf samples landed */
	int32_t offset;
	uint8_t opcode, has_opcode;
	struct tb_location loc;
	uint64_t samples;
};

struct tb_tnode {
	uint8_t kind;
	uint8_t pruned;
	uint32_t key;         /* FRAME: function index; PROCESS: process index */
	int32_t line;         /* by-line trees: the line; -1 otherwise */
	uint32_t parent, first_child, next_sibling, last_child;
	uint64_t total, self;
	struct tb_tval *tv;
	uint32_t ntv, captv;
	struct tb_lval *lv;
	uint32_t nlv, caplv;
	struct tb_oval *ov;
	uint32_t nov, capov;
	struct tb_ival *iv;
	uint32_t niv, capiv;
	uint8_t py_minor;     /* opcode numbering of this frame's interpreter */
};

struct tb_tree {
	const struct tb_profile *prof;
	struct tb_functab funcs;
	struct tb_tnode *n;      /* n[0] is the root */
	uint32_t nn, cap;
	struct tb_hmap index;    /* (parent, kind, key, line) -> node */
	uint32_t *leaf_of;       /* stack index -> the node its innermost frame is counted in */
	int by_line;
	double min_fraction;
	uint32_t pruned;
};

#define TB_NO_NODE UINT32_MAX

void tb_tree_build(struct tb_tree *t, const struct tb_profile *p, int by_line);
/* Mark nodes below min_fraction of all samples as pruned, unless they are
 * significant for one thread (>= max(1, 0.1% of its Python samples)). */
void tb_tree_prune(struct tb_tree *t, double min_fraction);
void tb_tree_free(struct tb_tree *t);

#endif
