/* funcname.h: how text outputs (the .txt table, the summary) name a
 * function of any kind: Python `name (file:line)`, native and kernel
 * `name [module]` ("do_syscall_64 [kernel]", "deflate_slow [libz.so.1]");
 * and when a native name says its module already (.folded, diff). */
#ifndef TB_FUNCNAME_H
#define TB_FUNCNAME_H
#include <stdio.h>
#include "model/functab.h"
#include "model/profile.h"

/* Does a native function's name already say its module ("libz.so.1+0x1f3a0",
 * a stripped function named by its module and start)? */
int tb_name_has_module(const char *name, const char *module);
/* Write fn's name to f; put writes each string that came from a target or
 * a capture (made safe for the output), the rest is written as it is. */
void tb_put_funcname(FILE *f, const struct tb_profile *p, const struct tb_func *fn,
		     void (*put)(FILE *f, const char *s));

#endif
