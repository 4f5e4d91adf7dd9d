/* linetable.h: decoding of CPython code-object line tables (3.10 co_linetable "lnotab v2",
 * 3.11+ location table) into source locations for one instruction.  Pure logic, no I/O;
 * safe on arbitrary (truncated, corrupted) input bytes. */
#ifndef TACHYON_LINETABLE_H
#define TACHYON_LINETABLE_H

#include <stddef.h>

/* a source location; -1 in a field = not known */
struct tb_location { int line, end_line, col, end_col; };

/* Decode the location of the instruction at byte offset `addr` (addr = instruction index * 2) in a
 * code object's line table.  py_minor: the CPython 3.minor whose format the table has (its row in
 * versions.c): 3.10 co_linetable "lnotab v2" (line only, columns -1), 3.11+ the location table
 * (Objects/locations.md); an unsupported minor returns -1.
 * firstlineno = co_firstlineno.  addr < 0 -> {firstlineno, firstlineno, -1, -1}.
 * Returns 0 when found, -1 when addr is not covered by the table or the table is
 * malformed/truncated (then *out is set to all -1).  A location whose line is "none" (3.11+ code
 * 15, 3.10 ldelta -128) returns 0 with all fields -1.  Never reads outside table[0..len), runs in
 * O(len), safe on arbitrary bytes. */
int tb_linetable_lookup(int py_minor, const unsigned char *table, size_t len, int firstlineno,
                        int addr, struct tb_location *out);

#endif
