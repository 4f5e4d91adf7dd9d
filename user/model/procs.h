/* procs.h: a profile's processes and threads (model/procs.c): what
 * model/profile.c needs to put a sample in its thread; the public calls
 * (tb_profile_add_process, tb_profile_add_thread, ...) are in profile.h. */
#ifndef TB_PROCS_H
#define TB_PROCS_H
#include <stdint.h>
#include "model/profile.h"

/* The running fork parent of l (not a process that reused its pid), or NULL. */
const struct tb_pinfo *tb_fork_parent(const struct tb_profile *p, const struct tb_plive *l);
/* The running thread (pid, tid), or TB_HMAP_NONE. */
uint32_t tb_lookup_thread(const struct tb_profile *p, uint32_t pid, uint32_t tid);
/* The thread of a sample of the running process pi, added if new (named
 * from /proc, its Python name read now or on the agent's next round). */
uint32_t tb_find_thread(struct tb_profile *p, struct tb_pinfo *pi, const struct tb_sample_hdr *h);

#endif
