/* strtab.h: interned strings (one copy of each file name, function name). */
#ifndef TB_STRTAB_H
#define TB_STRTAB_H
#include <stddef.h>
#include <stdint.h>
#include "lib/hashmap.h"

struct tb_strtab {
	char **strs;      /* by id; id 0 is "" */
	uint32_t n, cap;
	struct tb_hmap index;
};

void tb_strtab_init(struct tb_strtab *t);
void tb_strtab_free(struct tb_strtab *t);
uint32_t tb_strtab_intern(struct tb_strtab *t, const char *s);
static inline const char *tb_str(const struct tb_strtab *t, uint32_t id)
{
	return id < t->n ? t->strs[id] : "";
}

#endif
