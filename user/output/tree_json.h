/* tree_json.h: pieces of the tree JSON writer, for writers that extend it
 * (the differential profile) and for its two versions (docs/profile-json.md). */
#ifndef TB_TREEJSON_H
#define TB_TREEJSON_H
#include <stdio.h>
#include "model/tree.h"

struct tb_json_hooks {
	/* called inside each node's object, before "children": write ",\"k\":v..." */
	void (*node_extra)(FILE *f, const struct tb_tree *t, uint32_t idx, void *ctx);
	void *ctx;
};

/* One node and its (unpruned) children. */
void tb_json_node(FILE *f, const struct tb_tree *t, uint32_t idx, const struct tb_json_hooks *h);
/* "meta":{...} and "threads":{...} of the tree's profile. */
void tb_json_meta(FILE *f, const struct tb_tree *t);
void tb_json_threads(FILE *f, const struct tb_profile *p);
/* "tasks":{"enabled","samples","list":[{"name","samples","thread_values":{tid: n}}]}
 * (--async-aware): each stack's samples counted for its innermost task frame. */
void tb_json_tasks(FILE *f, const struct tb_profile *p);
/* "kernel_stacks":{...}, and "native_stacks":{...}, each followed by a comma,
 * when the capture asked for those frames or has some (nothing otherwise). */
void tb_json_frame_kinds(FILE *f, const struct tb_profile *p);
/* ",\"timeline\":{...}" when the profile has a timeline (tree_timeline.c). */
void tb_json_timeline(FILE *f, const struct tb_tree *t);

/* What a node shows, the same in both versions: its "name" (buf: room for a
 * process's "comm (pid N)"), "kind", "lineno" (frames), hottest line (its
 * "location"; NULL: none), and its leaf opcodes summed over threads, in
 * opcode order: n entries of op[] and samples[] (the return value). */
const char *tb_json_name(const struct tb_tree *t, const struct tb_tnode *x, char *buf, size_t len);
const char *tb_json_kind(const struct tb_tree *t, const struct tb_tnode *x);
int32_t tb_json_lineno(const struct tb_tree *t, const struct tb_tnode *x);
const struct tb_lval *tb_json_hottest_line(const struct tb_tree *t, const struct tb_tnode *x);
unsigned tb_json_opcode_sums(const struct tb_tree *t, const struct tb_tnode *x, uint8_t op[256],
			     uint64_t samples[256]);
/* Version 2's tables and columns in place of version 1's "tree"
 * (tree_columns.c): the tables and the nodes' order, made once per tree (the
 * tree must outlive them), then written as ",\"strings\":[...],...,
 * \"nodes\":{...}" for each output. */
struct tb_columns;
struct tb_columns *tb_columns_make(const struct tb_tree *t);
void tb_columns_write(FILE *f, struct tb_columns *c);
void tb_columns_free(struct tb_columns *c);

#endif
