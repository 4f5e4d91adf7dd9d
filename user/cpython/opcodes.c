/* opcodes.c: lookups in the generated per-version opcode tables. */
#include <stdio.h>
#include "cpython/opcodes.h"

static const struct tb_opcode_table *table(unsigned minor)
{
	for (unsigned i = 0; i < tb_opcode_ntables; i++)
		if (tb_opcode_tables[i].minor == minor)
			return &tb_opcode_tables[i];
	return NULL;
}

const char *tb_opcode_name(unsigned minor, unsigned op, char *buf, unsigned len)
{
	const struct tb_opcode_table *t = table(minor);

	if (t && op < 256 && t->names[op])
		return t->names[op];
	snprintf(buf, len, "<opcode %u>", op & 0xff);
	return buf;
}

unsigned tb_opcode_base(unsigned minor, unsigned op)
{
	const struct tb_opcode_table *t = table(minor);

	return t && op < 256 ? t->base[op] : op;
}
