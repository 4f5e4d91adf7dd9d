/* linetable.h: decoding of CPython code-object line tables (3.10 co_linetable "lnotab v2",
 * 3.11+ location table) into source locations for one instruction.  Pure logic, no I/O;
 * safe on arbitrary (truncated, corrupted) input bytes. */
#ifndef TACHYON_LINETABLE_H
#define TACHYON_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

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
 * O(len), safe on arbitrary bytes: the reference that the index below must equal. */
int tb_linetable_lookup(int py_minor, const unsigned char *table, size_t len, int firstlineno,
                        int addr, struct tb_location *out);

/* A table decoded once for many lookups: resume points of the decoder, sorted by offset.
 * It holds no pointer into the table (each lookup is given it again) and does not depend
 * on co_firstlineno: code objects with the same table bytes share one index. */
struct tb_linetable_mark;
struct tb_linetable_index {
    struct tb_linetable_mark *marks;
    uint32_t n;
    int format;                /* enum tb_line_format, -1: unsupported minor */
};

/* Build the index of a py_minor table: 0, or -1 for an unsupported minor (the index then
 * fails every lookup; free it all the same). O(len) time; (len / 64 + 1) * 40 bytes at most. */
int tb_linetable_index(int py_minor, const unsigned char *table, size_t len, struct tb_linetable_index *ix);
/* Exactly tb_linetable_lookup of the table the index was built from, in O(log len) plus a
 * few entries decoded. */
int tb_linetable_index_lookup(const struct tb_linetable_index *ix, const unsigned char *table, size_t len,
                              int firstlineno, int addr, struct tb_location *out);
/* Bytes the index holds. */
size_t tb_linetable_index_bytes(const struct tb_linetable_index *ix);
void tb_linetable_index_free(struct tb_linetable_index *ix);

#endif
