/* linetable.c: maps an instruction offset to its source location by decoding a CPython
 * co_linetable (3.10 "lnotab v2" pairs, or the 3.11+ location table of Objects/locations.md;
 * which one a version uses is in its row, versions.c).
 * Bounds-checked reader: garbage input yields -1, never an out-of-bounds read or a long loop. */
#include "cpython/linetable.h"
#include "cpython/versions.h"

#include <limits.h>
#include <stdint.h>

/* 3.11+ entry kinds (first byte bits 3..6), Include/cpython/code.h _PyCodeLocationInfoKind */
enum {
    LOC_SHORT_MAX = 9,      /* 0..9: SHORT0..SHORT9 */
    LOC_ONE_LINE0 = 10,     /* 10..12: ONE_LINE0..ONE_LINE2 */
    LOC_ONE_LINE2 = 12,
    LOC_NO_COLUMNS = 13,
    LOC_LONG = 14,
    LOC_NONE = 15,
};

/* Bytes a real varint never needs: 6 chunks carry 36 bits, more than any int. */
#define VARINT_MAX_CHUNKS 6

struct reader {
    const unsigned char *p, *end;
    int bad;                /* set on truncation or a byte that cannot occur here */
};

static const struct tb_location loc_unknown = { -1, -1, -1, -1 };

static int fits_int(int64_t v)
{
    return v >= INT_MIN && v <= INT_MAX;
}

/* A payload byte of a 3.11+ entry: bit 7 is reserved for entry starts. */
static unsigned rd_byte(struct reader *r)
{
    if (r->p >= r->end || (*r->p & 0x80)) {
        r->bad = 1;
        return 0;
    }
    return *r->p++;
}

/* Unsigned varint: 6-bit little-endian chunks, 0x40 = more chunks follow. */
static uint64_t rd_varint(struct reader *r)
{
    uint64_t val = 0;
    for (int i = 0; i < VARINT_MAX_CHUNKS; i++) {
        unsigned b = rd_byte(r);
        if (r->bad)
            return 0;
        val |= (uint64_t)(b & 63) << (6 * i);
        if (!(b & 64))
            return val;
    }
    r->bad = 1;
    return 0;
}

/* Signed varint: low bit is the sign, magnitude in the rest. */
static int64_t rd_svarint(struct reader *r)
{
    uint64_t u = rd_varint(r);
    int64_t mag = (int64_t)(u >> 1);
    return (u & 1) ? -mag : mag;
}

/* Adds delta to the running line; flags the reader when the result leaves int range. */
static void add_line(struct reader *r, int64_t *line, int64_t delta)
{
    *line += delta;
    if (!fits_int(*line))
        r->bad = 1;
}

/* Fills loc for a 3.11+ entry of kind `code` (first byte already consumed). */
static void decode_kind(struct reader *r, int code, int64_t *line, struct tb_location *loc)
{
    *loc = loc_unknown;
    if (code == LOC_NONE)
        return;
    if (code == LOC_LONG) {
        add_line(r, line, rd_svarint(r));
        int64_t end_line = *line + (int64_t)rd_varint(r);
        int64_t col = (int64_t)rd_varint(r) - 1;
        int64_t end_col = (int64_t)rd_varint(r) - 1;
        if (!fits_int(end_line) || !fits_int(col) || !fits_int(end_col))
            r->bad = 1;
        loc->end_line = (int)end_line;
        loc->col = (int)col;
        loc->end_col = (int)end_col;
    } else if (code == LOC_NO_COLUMNS) {
        add_line(r, line, rd_svarint(r));
        loc->end_line = (int)*line;
    } else if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2) {
        add_line(r, line, code - LOC_ONE_LINE0);
        loc->end_line = (int)*line;
        loc->col = (int)rd_byte(r);
        loc->end_col = (int)rd_byte(r);
    } else { /* SHORT0..SHORT9: line unchanged, 7-bit column + 4-bit width in one byte */
        unsigned c = rd_byte(r);
        loc->end_line = (int)*line;
        loc->col = code * 8 + (int)((c >> 4) & 7);
        loc->end_col = loc->col + (int)(c & 15);
    }
    loc->line = (int)*line;
}

/* 3.11+ location table: entries of 1..8 code units, each starting with a byte >= 0x80. */
static int lookup_locations(const unsigned char *table, size_t len, int firstlineno, int addr,
                            struct tb_location *out)
{
    struct reader r = { table, table + len, 0 };
    int64_t line = firstlineno, start = 0;

    while (r.p < r.end && start <= addr) {
        unsigned first = *r.p++;
        if (!(first & 0x80))
            return -1;
        int64_t end = start + 2 * (int64_t)((first & 7) + 1);
        struct tb_location loc;
        decode_kind(&r, (first >> 3) & 15, &line, &loc);
        if (r.bad)
            return -1;
        if (addr < end) {
            *out = loc;
            return 0;
        }
        start = end;
    }
    return -1;
}

/* 3.10 co_linetable: (byte delta uint8, line delta int8) pairs; line delta -128 = no line. */
static int lookup_lnotab_v2(const unsigned char *table, size_t len, int firstlineno, int addr,
                            struct tb_location *out)
{
    int64_t line = firstlineno, start = 0;

    for (size_t i = 0; i + 1 < len && start <= addr; i += 2) {
        int64_t end = start + table[i];
        int ldelta = (signed char)table[i + 1];
        int cur = -1;
        if (ldelta != -128) {
            line += ldelta;
            if (!fits_int(line))
                return -1;
            cur = (int)line;
        }
        if (addr < end) {   /* start <= addr holds, so the range is non-empty */
            *out = (struct tb_location){ cur, cur, -1, -1 };
            return 0;
        }
        start = end;
    }
    return -1;
}

int tb_linetable_lookup(int py_minor, const unsigned char *table, size_t len, int firstlineno,
                        int addr, struct tb_location *out)
{
    const struct tb_pyversion *v = py_minor >= 0 ? tb_pyversion((unsigned)py_minor) : NULL;
    int rc = -1;

    *out = loc_unknown;
    if (!v)
        return -1;
    if (addr < 0) {
        *out = (struct tb_location){ firstlineno, firstlineno, -1, -1 };
        return 0;
    }
    if (!table && len)
        return -1;
    if (v->lines == TB_LINES_LNOTAB_V2)
        rc = lookup_lnotab_v2(table, len, firstlineno, addr, out);
    else
        rc = lookup_locations(table, len, firstlineno, addr, out);
    if (rc != 0)
        *out = loc_unknown;
    return rc;
}
