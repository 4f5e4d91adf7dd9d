/* opcodes.h: opcode names per CPython version, specialized -> base. The tables are
 * generated (opcodes_gen.c by scripts/gen_opcodes.py); each version's row in versions.c
 * points to its own. */
#ifndef TB_OPCODES_H
#define TB_OPCODES_H

struct tb_opcode_table {
	unsigned minor;
	const char *const *names;        /* name pool shared by every version; [0] = NULL */
	const unsigned short *name;      /* [256] index into names, 0: unused number */
	const unsigned char *base;       /* [256] base (deoptimized) opcode */
};

/* Name of opcode op in CPython 3.minor ("<opcode N>" into buf when unknown). */
const char *tb_opcode_name(unsigned minor, unsigned op, char *buf, unsigned len);
/* Base opcode number of op (op itself when not specialized / unknown). */
unsigned tb_opcode_base(unsigned minor, unsigned op);

#endif
