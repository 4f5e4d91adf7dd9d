/* print_table.c: prints "number name base" for every opcode of one CPython
 * minor version, from tachyon-bpf's generated tables (tests/opcodes/check.sh). */
#include <stdio.h>
#include <stdlib.h>
#include "cpython/opcodes.h"

int main(int argc, char **argv)
{
	unsigned minor = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
	char b1[32], b2[32];

	for (unsigned op = 0; op < 256; op++) {
		const char *n = tb_opcode_name(minor, op, b1, sizeof(b1));

		if (n == b1)
			continue; /* unused number */
		printf("%u %s %s\n", op, n, tb_opcode_name(minor, tb_opcode_base(minor, op), b2, sizeof(b2)));
	}
	return 0;
}
