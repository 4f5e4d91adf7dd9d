/* tree.h: the weighted call tree every rich output is written from:
 * root -> process -> frames (Python, native, kernel: the kind is their
 * function's), with per-thread values on every node.  A node is 80 bytes;
 * its lines, opcodes, instructions and (with more than one thread) per-thread
 * values are spans of four arenas shared by the tree. */
#ifndef TB_TREE_H
#define TB_TREE_H
#include <stddef.h>
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
	struct tb_location loc;   /* loc.line: the line; the union of the spans of the
				   * instructions sampled on it */
	uint64_t samples, self;
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

/* A node's entries in one of the tree's arenas: n of them from at.  The
 * room is n rounded up to a power of two; a full span moves to the arena's
 * end with twice the room (its old place stays unused). */
struct tb_span {
	uint32_t at, n;
};

struct tb_tnode {
	uint8_t kind;
	uint8_t pruned;
	uint8_t py_minor;     /* opcode numbering of this frame's interpreter */
	uint8_t nkids;        /* while building: children, up to TB_TREE_SCAN; then TB_TREE_INDEXED */
	uint32_t key;         /* FRAME: function index; PROCESS: process index */
	int32_t line;         /* by-line trees: the line; -1 otherwise */
	uint32_t parent, first_child, next_sibling, last_child;
	uint32_t thread;      /* the first thread counted here (TB_NO_THREAD: none yet) */
	uint64_t total, self;
	struct tb_span tv;    /* per-thread values, only once a second thread is counted:
			       * while tv.n == 0 the one thread's values are total and self */
	struct tb_span lv, ov, iv; /* lines, leaf opcodes, leaf instructions */
};

struct tb_tree {
	const struct tb_profile *prof;
	struct tb_functab funcs;
	struct tb_tnode *n;      /* n[0] is the root */
	uint32_t nn, cap;
	struct tb_tval *tvals;   /* the arenas of the nodes' spans */
	struct tb_lval *lvals;
	struct tb_oval *ovals;
	struct tb_ival *ivals;
	uint32_t ntvals, captvals, nlvals, caplvals, novals, capovals, nivals, capivals;
	struct tb_hmap index;    /* (parent, kind, key, line) -> node, while building: the
				  * children of nodes with more than TB_TREE_SCAN */
	uint32_t *leaf_of;       /* stack index -> the node its innermost frame is counted in */
	int by_line;
	double min_fraction;
	uint32_t pruned;
};

#define TB_NO_NODE UINT32_MAX
/* Building: a node's children are found by walking its list while it has
 * at most TB_TREE_SCAN of them (most nodes of a deep profile have one or
 * two), through the index once it has more. */
#define TB_TREE_SCAN 8
#define TB_TREE_INDEXED 255
#define TB_NO_THREAD UINT32_MAX

/* How many threads a node has values for, and the i-th (0 <= i < that,
 * in the order they were first counted) of them. */
static inline uint32_t tb_tnode_nthreads(const struct tb_tnode *x)
{
	return x->tv.n ? x->tv.n : x->thread != TB_NO_THREAD;
}
struct tb_tval tb_tnode_tval(const struct tb_tree *t, const struct tb_tnode *x, uint32_t i);
/* A node's lines, opcodes and instructions: x->lv.n (ov.n, iv.n) entries,
 * NULL when there are none. */
static inline const struct tb_lval *tb_tnode_lines(const struct tb_tree *t, const struct tb_tnode *x)
{
	return x->lv.n ? t->lvals + x->lv.at : NULL;
}
static inline const struct tb_oval *tb_tnode_opcodes(const struct tb_tree *t, const struct tb_tnode *x)
{
	return x->ov.n ? t->ovals + x->ov.at : NULL;
}
static inline const struct tb_ival *tb_tnode_instructions(const struct tb_tree *t, const struct tb_tnode *x)
{
	return x->iv.n ? t->ivals + x->iv.at : NULL;
}

void tb_tree_build(struct tb_tree *t, const struct tb_profile *p, int by_line);
/* Mark nodes below min_fraction of all samples as pruned, unless they are
 * significant for one thread (>= max(1, 0.1% of its Python samples)). */
void tb_tree_prune(struct tb_tree *t, double min_fraction);
/* Mark also the nodes below fraction of all samples and of each of their
 * threads' (tb_tree_prune again gives back its marks). */
void tb_tree_prune_more(struct tb_tree *t, double fraction);
void tb_tree_free(struct tb_tree *t);

#endif
