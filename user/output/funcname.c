/* funcname.c: a function's name in the text outputs, by its kind. */
#include <string.h>
#include "output/funcname.h"

int tb_name_has_module(const char *name, const char *module)
{
	size_t n = strlen(module);

	return n && !strncmp(name, module, n) && !strncmp(name + n, "+0x", 3);
}

void tb_put_funcname(FILE *f, const struct tb_profile *p, const struct tb_func *fn,
		     void (*put)(FILE *f, const char *s))
{
	const char *module;

	put(f, tb_str(&p->strs, fn->qualname));
	if (fn->kind == TB_CODE_PYTHON) {
		fputs(" (", f);
		put(f, tb_str(&p->strs, fn->filename));
		fprintf(f, ":%d)", fn->firstlineno);
		return;
	}
	if (fn->kind == TB_CODE_TASK)
		return; /* "<task NAME>" says it all */
	/* kernel modules come bracketed: "[kernel]", "[nf_tables]" */
	module = tb_module_name(fn->kind, tb_str(&p->strs, fn->filename));
	fputs(module[0] == '[' ? " " : " [", f);
	put(f, module);
	if (module[0] != '[')
		fputc(']', f);
}
