/* opcodes.c: lookups in the generated per-version opcode tables (opcodes_gen.c), found
 * through the version's row (versions.c). */
#include <stdio.h>
#include "cpython/opcodes.h"
#include "cpython/versions.h"

static const struct tb_opcode_table *table(unsigned minor)
{
	const struct tb_pyversion *v = tb_pyversion(minor);

	return v ? v->opcodes : NULL;
}

const char *tb_opcode_name(unsigned minor, unsigned op, char *buf, unsigned len)
{
	const struct tb_opcode_table *t = table(minor);

	if (t && op < 256 && t->name[op])
		return t->names[t->name[op]];
	snprintf(buf, len, "<opcode %u>", op & 0xff);
	return buf;
}

unsigned tb_opcode_base(unsigned minor, unsigned op)
{
	const struct tb_opcode_table *t = table(minor);

	return t && op < 256 ? t->base[op] : op;
}
