/* linetable.c: maps an instruction offset to its source location by decoding a CPython
 * co_linetable (3.10 "lnotab v2" pairs, or the 3.11+ location table of Objects/locations.md;
 * which one a version uses is in its row, versions.c): directly (tb_linetable_lookup, linear
 * in the table), or through an index built once per table (a resume point every MARK_BYTES
 * bytes of it: a binary search and at most MARK_BYTES bytes of entries decoded per lookup).
 * Bounds-checked reader: garbage input yields -1, never an out-of-bounds read or a long loop. */
#include "cpython/linetable.h"
#include "cpython/versions.h"
#include "lib/mem.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

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
/* Table bytes between two resume points of an index (at least). */
#define MARK_BYTES 64
/* A line value this far from 0 leaves int range whatever co_firstlineno is: an index
 * stops there (lookups past it fail, as the direct decoder's do). */
#define LINE_HOPELESS ((int64_t)1 << 33)

struct reader {
    const unsigned char *p, *end;
    int bad;                /* set on truncation or a byte that cannot occur here */
};

/* Where the next entry starts, in the table and in the bytecode, and the running line (the
 * absolute line, or relative to co_firstlineno while an index is built). */
struct cursor {
    size_t pos;
    int64_t start, line;
};

/* One decoded entry: bytecode [start, end) has this location (int64, in the cursor's line
 * terms; has_line 0: a location without a line). The decoder requires the line values in
 * [lo, hi] to fit an int (lo > hi: none), which depends on co_firstlineno. */
struct entry {
    int64_t end;
    int has_line;
    int64_t line, end_line, col, end_col;
    int64_t lo, hi;
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

/* The location of a 3.11+ entry of kind `code` (first byte already consumed). */
static void decode_kind(struct reader *r, int code, int64_t *line, struct entry *e)
{
    e->has_line = code != LOC_NONE;
    e->col = e->end_col = -1;
    if (code == LOC_NONE)
        return;
    if (code == LOC_LONG) {
        *line += rd_svarint(r);
        e->end_line = *line + (int64_t)rd_varint(r);
        e->col = (int64_t)rd_varint(r) - 1;
        e->end_col = (int64_t)rd_varint(r) - 1;
        if (!fits_int(e->col) || !fits_int(e->end_col))
            r->bad = 1;
        e->lo = *line;
        e->hi = e->end_line;
    } else if (code == LOC_NO_COLUMNS) {
        *line += rd_svarint(r);
        e->end_line = e->lo = e->hi = *line;
    } else if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2) {
        *line += code - LOC_ONE_LINE0;
        e->end_line = e->lo = e->hi = *line;
        e->col = rd_byte(r);
        e->end_col = rd_byte(r);
    } else { /* SHORT0..SHORT9: line unchanged, 7-bit column + 4-bit width in one byte */
        unsigned c = rd_byte(r);
        e->end_line = *line;
        e->col = code * 8 + (int)((c >> 4) & 7);
        e->end_col = e->col + (int)(c & 15);
    }
    e->line = *line;
}

/* Decode the entry at c and move c past it: 0, or -1 at the end of the table or on a
 * malformed entry (whatever co_firstlineno is). */
static int step(enum tb_line_format fmt, const unsigned char *table, size_t len, struct cursor *c,
                struct entry *e)
{
    e->lo = 1;
    e->hi = 0;
    if (fmt == TB_LINES_LNOTAB_V2) {
        /* (byte delta uint8, line delta int8) pairs; line delta -128 = no line */
        if (c->pos + 1 >= len)
            return -1;
        int ldelta = (signed char)table[c->pos + 1];
        e->end = c->start + table[c->pos];
        e->has_line = ldelta != -128;
        if (e->has_line) {
            c->line += ldelta;
            e->lo = e->hi = c->line;
        }
        e->line = e->end_line = c->line;
        e->col = e->end_col = -1;
        c->pos += 2;
    } else {
        /* entries of 1..8 code units, each starting with a byte >= 0x80 */
        if (c->pos >= len || !(table[c->pos] & 0x80))
            return -1;
        struct reader r = { table + c->pos, table + len, 0 };
        unsigned first = *r.p++;
        e->end = c->start + 2 * (int64_t)((first & 7) + 1);
        decode_kind(&r, (first >> 3) & 15, &c->line, e);
        if (r.bad)
            return -1;
        c->pos = (size_t)(r.p - table);
    }
    c->start = e->end;
    return 0;
}

static void to_location(const struct entry *e, struct tb_location *out)
{
    if (e->has_line)
        *out = (struct tb_location){ (int)e->line, (int)e->end_line, (int)e->col, (int)e->end_col };
    else
        *out = loc_unknown;
}

/* Decode from c (absolute line) to the entry holding addr. */
static int lookup_from(enum tb_line_format fmt, const unsigned char *table, size_t len, struct cursor c,
                       int addr, struct tb_location *out)
{
    struct entry e;

    while (c.start <= addr) {
        if (step(fmt, table, len, &c, &e))
            return -1;
        if (e.lo <= e.hi && (!fits_int(e.lo) || !fits_int(e.hi)))
            return -1;
        if (addr < e.end) {   /* start <= addr holds, so the range is non-empty */
            to_location(&e, out);
            return 0;
        }
    }
    return -1;
}

/* The format of py_minor's tables, or -1 for an unsupported minor. */
static int format_of(int py_minor)
{
    const struct tb_pyversion *v = py_minor >= 0 ? tb_pyversion((unsigned)py_minor) : NULL;

    return v ? (int)v->lines : -1;
}

int tb_linetable_lookup(int py_minor, const unsigned char *table, size_t len, int firstlineno,
                        int addr, struct tb_location *out)
{
    int fmt = format_of(py_minor), rc;

    *out = loc_unknown;
    if (fmt < 0)
        return -1;
    if (addr < 0) {
        *out = (struct tb_location){ firstlineno, firstlineno, -1, -1 };
        return 0;
    }
    if (!table && len)
        return -1;
    rc = lookup_from((enum tb_line_format)fmt, table, len, (struct cursor){ 0, 0, firstlineno }, addr, out);
    if (rc != 0)
        *out = loc_unknown;
    return rc;
}

/* ------------------------------------------------------------------ index */

/* A resume point: the cursor before an entry, its line relative to co_firstlineno, and the
 * range of relative line values the entries before it require to fit an int. */
struct tb_linetable_mark {
    uint32_t pos;
    int64_t start, line;
    int64_t lo, hi;
};

int tb_linetable_index(int py_minor, const unsigned char *table, size_t len, struct tb_linetable_index *ix)
{
    int fmt = format_of(py_minor);
    struct cursor c = { 0, 0, 0 };
    int64_t lo = 0, hi = 0;
    uint32_t cap = 0;

    ix->marks = NULL;
    ix->n = 0;
    ix->format = fmt;
    if (fmt < 0 || (!table && len) || len > UINT32_MAX)
        return -1;
    for (size_t next = 0;;) {
        struct entry e;

        if (c.pos >= next) {
            ix->marks = tb_grow(ix->marks, &cap, ix->n + 1, sizeof(*ix->marks), 4);
            ix->marks[ix->n++] = (struct tb_linetable_mark){ (uint32_t)c.pos, c.start, c.line, lo, hi };
            next = c.pos + MARK_BYTES;
        }
        if (step((enum tb_line_format)fmt, table, len, &c, &e))
            break;
        if (e.lo <= e.hi) {
            lo = e.lo < lo ? e.lo : lo;
            hi = e.hi > hi ? e.hi : hi;
            if (lo < -LINE_HOPELESS || hi > LINE_HOPELESS)
                break;
        }
    }
    if (ix->n < cap)
        ix->marks = realloc(ix->marks, ix->n * sizeof(*ix->marks)) ?: ix->marks;
    return 0;
}

int tb_linetable_index_lookup(const struct tb_linetable_index *ix, const unsigned char *table, size_t len,
                              int firstlineno, int addr, struct tb_location *out)
{
    const struct tb_linetable_mark *m;
    uint32_t a = 0, b;
    int rc;

    *out = loc_unknown;
    if (ix->format < 0)
        return -1;
    if (addr < 0) {
        *out = (struct tb_location){ firstlineno, firstlineno, -1, -1 };
        return 0;
    }
    if (!ix->n)
        return -1;
    /* the last mark at or before addr (marks[0] starts at 0) */
    b = ix->n;
    while (b - a > 1) {
        uint32_t mid = a + (b - a) / 2;

        if (ix->marks[mid].start <= addr)
            a = mid;
        else
            b = mid;
    }
    m = &ix->marks[a];
    /* an entry before the mark whose line leaves int range stops the direct decoder there */
    if (!fits_int(firstlineno + m->lo) || !fits_int(firstlineno + m->hi))
        return -1;
    rc = lookup_from((enum tb_line_format)ix->format, table, len,
                     (struct cursor){ m->pos, m->start, firstlineno + m->line }, addr, out);
    if (rc != 0)
        *out = loc_unknown;
    return rc;
}

size_t tb_linetable_index_bytes(const struct tb_linetable_index *ix)
{
    return (size_t)ix->n * sizeof(*ix->marks);
}

void tb_linetable_index_free(struct tb_linetable_index *ix)
{
    free(ix->marks);
    ix->marks = NULL;
    ix->n = 0;
}
