/* tasktotals.h: a profile's samples per (asyncio task, thread), for the
 * outputs that list tasks (the tree JSON's "tasks", the .txt table's rows). */
#ifndef TB_TASKTOTALS_H
#define TB_TASKTOTALS_H
#include <stdint.h>
#include "model/profile.h"

/* Samples per (task, thread): each stack counts for its innermost task frame. */
struct tb_task_total {
	uint32_t code;            /* the task's code entry */
	uint32_t thread;          /* index into the profile's threads */
	uint64_t samples;
};

/* The profile's (task, thread) totals, by code then thread (a task's rows together),
 * into a new array *out (free it); returns how many. */
uint32_t tb_task_totals(const struct tb_profile *p, struct tb_task_total **out);

#endif
