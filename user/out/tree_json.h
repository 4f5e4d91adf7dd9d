/* tree_json.h: pieces of the tree JSON writer, for writers that extend it
 * (the differential profile). */
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

#endif
