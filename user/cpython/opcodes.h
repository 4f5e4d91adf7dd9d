/* opcodes.h: opcode names per CPython version, specialized -> base. */
#ifndef TB_OPCODES_H
#define TB_OPCODES_H

struct tb_opcode_table {
	unsigned minor;
	const char *const *names;        /* [256], NULL: unused number */
	const unsigned char *base;       /* [256] base (deoptimized) opcode */
};

extern const struct tb_opcode_table tb_opcode_tables[];
extern const unsigned tb_opcode_ntables;

/* Name of opcode op in CPython 3.minor ("<op N>" style into buf when unknown). */
const char *tb_opcode_name(unsigned minor, unsigned op, char *buf, unsigned len);
/* Base opcode number of op (op itself when not specialized / unknown). */
unsigned tb_opcode_base(unsigned minor, unsigned op);

#endif
