/* test_linetable.c: cmocka tests for user/cpython/linetable.c: hand-built tables for every entry kind of
 * both formats, real tables captured from CPython 3.10-3.13, truncated prefixes, seeded random
 * garbage and an encode/decode round trip.  Run once under valgrind or ASan for OOB reads. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpython/linetable.h"
#include "cpython/versions.h"

#define N_ITEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ---- */

/* The direct decoder, checked against a lookup through the table's index: every lookup of
 * every test below is made both ways. */
static int lookup(int minor, const unsigned char *tab, size_t len, int first, int addr,
                  struct tb_location *out)
{
    struct tb_linetable_index ix;
    struct tb_location got = { 7, 7, 7, 7 };
    int rc = tb_linetable_lookup(minor, tab, len, first, addr, out);

    tb_linetable_index(minor, tab, len, &ix);
    assert_int_equal(tb_linetable_index_lookup(&ix, tab, len, first, addr, &got), rc);
    assert_memory_equal(&got, out, sizeof(got));
    tb_linetable_index_free(&ix);
    return rc;
}

static void expect_loc(int minor, const unsigned char *tab, size_t len, int first, int addr,
                       int line, int end_line, int col, int end_col)
{
    struct tb_location got;
    assert_int_equal(lookup(minor, tab, len, first, addr, &got), 0);
    assert_int_equal(got.line, line);
    assert_int_equal(got.end_line, end_line);
    assert_int_equal(got.col, col);
    assert_int_equal(got.end_col, end_col);
}

static void expect_fail(int minor, const unsigned char *tab, size_t len, int first, int addr)
{
    struct tb_location got = { 7, 7, 7, 7 };
    assert_int_equal(lookup(minor, tab, len, first, addr, &got), -1);
    assert_int_equal(got.line, -1);
    assert_int_equal(got.end_line, -1);
    assert_int_equal(got.col, -1);
    assert_int_equal(got.end_col, -1);
}

/* One expected lookup: the location of byte offset addr, or FAILS(addr): none at all. */
struct want {
    int addr, found;
    struct tb_location loc;
};
#define AT(addr, line, end_line, col, end_col) { addr, 1, { line, end_line, col, end_col } }
#define NOLINE(addr) AT(addr, -1, -1, -1, -1)   /* found: a location without a line */
#define FAILS(addr) { addr, 0, { -1, -1, -1, -1 } }

static void expect_lookups(int minor, const unsigned char *tab, size_t len, int first,
                           const struct want *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct tb_location *l = &w[i].loc;
        if (w[i].found)
            expect_loc(minor, tab, len, first, w[i].addr, l->line, l->end_line, l->col, l->end_col);
        else
            expect_fail(minor, tab, len, first, w[i].addr);
    }
}

/* The supported minors, and those whose co_linetable has one format or the other. */
#define EACH_MINOR(m) (int m = TB_PY_MIN_MINOR; m <= TB_PY_MAX_MINOR; m++)
static int lnotab_v2(int minor)
{
    return tb_pyversion((unsigned)minor)->lines == TB_LINES_LNOTAB_V2;
}

/* The k-th (modulo their count) supported minor with the 3.11+ location table. */
static int location_minor(int k)
{
    int n = 0, minors[TB_PY_MAX_MINOR - TB_PY_MIN_MINOR + 1];
    for EACH_MINOR(minor)
        if (!lnotab_v2(minor))
            minors[n++] = minor;
    return minors[k % n];
}

/* First byte of a 3.11+ entry: kind code, length in code units (1..8). */
#define E(code, units) ((unsigned char)(0x80 | (code) << 3 | ((units) - 1)))

/* Deterministic PRNG (xorshift32) so failures reproduce. */
static uint32_t rng_state;

static uint32_t rnd(void)
{
    uint32_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return rng_state = x;
}

/* ---- addr < 0, unsupported versions, empty tables ---- */

static void test_negative_addr(void **state)
{
    (void)state;
    static const unsigned char t11[] = { E(13, 1), 0x02 };
    static const unsigned char t10[] = { 2, 1 };
    for EACH_MINOR(minor) {
        const unsigned char *t = lnotab_v2(minor) ? t10 : t11;
        expect_loc(minor, t, 2, 42, -2, 42, 42, -1, -1);
        expect_loc(minor, t, 2, 42, -1, 42, 42, -1, -1);
        expect_loc(minor, NULL, 0, 7, -2, 7, 7, -1, -1);
    }
}

static void test_bad_version_and_empty(void **state)
{
    (void)state;
    static const unsigned char t[] = { E(13, 1), 0x02 };
    expect_fail(TB_PY_MIN_MINOR - 1, t, sizeof(t), 1, 0);
    expect_fail(TB_PY_MAX_MINOR + 1, t, sizeof(t), 1, 0);
    expect_fail(TB_PY_MIN_MINOR - 1, t, sizeof(t), 1, -2);
    expect_fail(-1, t, sizeof(t), 1, 0);
    for EACH_MINOR(minor) {
        expect_fail(minor, NULL, 0, 1, 0);
        expect_fail(minor, t, 0, 1, 0);
        expect_fail(minor, NULL, 4, 1, 0);
    }
}

/* ---- 3.11+ entry kinds ---- */

static void test_311_short(void **state)
{
    (void)state;
    /* SHORT2 over 3 units: col 2*8 + 5 = 21, width 7; SHORT9 over 1 unit: col 72+3, width 0 */
    static const unsigned char t[] = { E(2, 3), 0x57, E(9, 1), 0x30, E(0, 8), 0x0f };
    static const struct want w[] = {
        AT(0, 10, 10, 21, 28), AT(2, 10, 10, 21, 28), AT(4, 10, 10, 21, 28), AT(6, 10, 10, 75, 75),
        AT(7, 10, 10, 75, 75),     /* odd byte inside a unit */
        AT(8, 10, 10, 0, 15),      /* length 8 = 16 bytes */
        AT(22, 10, 10, 0, 15), FAILS(24) /* past the end */, FAILS(1 << 30),
    };
    for EACH_MINOR(minor)
        if (!lnotab_v2(minor))
            expect_lookups(minor, t, sizeof(t), 10, w, N_ITEMS(w));
}

static void test_311_one_line(void **state)
{
    (void)state;
    static const unsigned char t[] = {
        E(10, 1), 3, 9,       /* ONE_LINE0: line 5, cols 3..9 */
        E(11, 2), 100, 127,   /* ONE_LINE1: line 6 */
        E(12, 1), 0, 0,       /* ONE_LINE2: line 8 */
        E(1, 1), 0x12,        /* SHORT1: line stays 8, col 9, end 11 */
        E(10, 1), 20, 4,      /* end before start is representable */
    };
    static const struct want w[] = {
        AT(0, 5, 5, 3, 9), AT(2, 6, 6, 100, 127), AT(4, 6, 6, 100, 127), AT(6, 8, 8, 0, 0),
        AT(8, 8, 8, 9, 11), AT(10, 8, 8, 20, 4), FAILS(12),
    };
    expect_lookups(11, t, sizeof(t), 5, w, N_ITEMS(w));
}

static void test_311_no_columns(void **state)
{
    (void)state;
    static const unsigned char t[] = {
        E(13, 2), 0x0a,       /* +5 -> 105 */
        E(13, 1), 0x07,       /* -3 -> 102 */
        E(13, 1), 0x00,       /* +0 */
        E(13, 1), 0x49, 0x03, /* svarint 201 = -100 -> 2 (multi-byte, 0x48|1, 0x03) */
        E(13, 1), 0x48, 0x03, /* svarint 200 = +100 -> 102 */
    };
    static const struct want w[] = {
        AT(0, 105, 105, -1, -1), AT(2, 105, 105, -1, -1), AT(4, 102, 102, -1, -1),
        AT(6, 102, 102, -1, -1), AT(8, 2, 2, -1, -1), AT(10, 102, 102, -1, -1), FAILS(12),
    };
    expect_lookups(12, t, sizeof(t), 100, w, N_ITEMS(w));
}

static void test_311_long(void **state)
{
    (void)state;
    static const unsigned char t[] = {
        E(14, 1), 0x04, 0x03, 0x05, 0x0b,         /* +2 -> 12, end 15, col 4, end col 10 */
        E(14, 2), 0x00, 0x00, 0x00, 0x00,         /* columns "none" (encoded as 0) */
        E(14, 1), 0x01, 0x00, 0x48, 0x03, 0x01,   /* -0 -> 12, col 199, end col 0 */
        E(14, 1), 0x43, 0x01, 0x40, 0x40, 0x01, 0x41, 0x40, 0x00, 0x01, /* see below */
        E(14, 1), 0x5a, 0x60, 0x01, 0x7f, 0x3f, 0x01, 0x01,
    };
    /* entry 3: svarint 0x43,0x01 = 3 | 1<<6 = 67 -> -33 -> -21; end delta 0x40,0x40,0x01 = 4096;
     * col 0x41,0x40,0x00 = 1 (non-minimal encodings decode too) -> 0; end col 0x01 -> 0.
     * entry 4: svarint 0x5a,0x60,0x01 = 26 | 32<<6 | 1<<12 = 6170 -> +3085 -> 3064;
     * end delta 0x7f,0x3f = 63 | 63<<6 = 4095; col 0x01 -> 0; end col 0x01 -> 0 */
    static const struct want w[] = {
        AT(0, 12, 15, 4, 10), AT(2, 12, 12, -1, -1), AT(4, 12, 12, -1, -1), AT(6, 12, 12, 199, 0),
        AT(8, -21, 4075, 0, 0), AT(10, 3064, 3064 + 4095, 0, 0), FAILS(12),
    };
    expect_lookups(13, t, sizeof(t), 10, w, N_ITEMS(w));
}

static void test_311_none(void **state)
{
    (void)state;
    static const unsigned char t[] = {
        E(11, 1), 1, 2,    /* line 21 */
        E(15, 3),          /* no location: running line stays 21 */
        E(13, 1), 0x00,    /* +0 -> 21 */
        E(15, 1),
        E(11, 1), 5, 6,    /* +1 -> 22 */
    };
    static const struct want w[] = {
        AT(0, 21, 21, 1, 2), NOLINE(2), NOLINE(3), NOLINE(4), NOLINE(5), NOLINE(6), NOLINE(7),
        AT(8, 21, 21, -1, -1), NOLINE(10), AT(12, 22, 22, 5, 6), FAILS(14),
    };
    expect_lookups(14, t, sizeof(t), 20, w, N_ITEMS(w));
}

static void test_311_malformed(void **state)
{
    (void)state;
    /* entry start without bit 7 */
    static const unsigned char no_start[] = { E(13, 1), 0x00, 0x05 };
    expect_loc(11, no_start, sizeof(no_start), 1, 0, 1, 1, -1, -1);
    expect_fail(11, no_start, sizeof(no_start), 1, 2);
    /* payload byte with bit 7 set (it would be the next entry's start) */
    static const unsigned char short_hi[] = { E(0, 1), 0x80 };
    expect_fail(11, short_hi, sizeof(short_hi), 1, 0);
    /* varint of 7 chunks */
    static const unsigned char long_varint[] = { E(13, 1), 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0 };
    expect_fail(11, long_varint, sizeof(long_varint), 1, 0);
    /* 6 chunks is accepted (a 32-bit value needs them) */
    static const unsigned char six[] = { E(13, 1), 0x40, 0x40, 0x40, 0x40, 0x40, 0x00 };
    expect_loc(11, six, sizeof(six), 1, 0, 1, 1, -1, -1);
    /* line leaving int range: +2^34 */
    static const unsigned char big[] = { E(13, 1), 0x40, 0x40, 0x40, 0x40, 0x40, 0x20 };
    expect_fail(11, big, sizeof(big), 1, 0);
    /* end line overflow, column overflow */
    static const unsigned char endl[] = { E(14, 1), 0, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0, 0 };
    expect_fail(11, endl, sizeof(endl), 1, 0);
    static const unsigned char colo[] = { E(14, 1), 0, 0, 0x41, 0x40, 0x40, 0x40, 0x40, 0x02, 0 };
    expect_fail(11, colo, sizeof(colo), 1, 0);   /* varint 2^31 + 1 -> col 2^31 */
    /* varint 2^31 -> col INT_MAX still fits */
    static const unsigned char maxcol[] = { E(14, 1), 0, 0, 0x40, 0x40, 0x40, 0x40, 0x40, 0x02, 0 };
    expect_loc(11, maxcol, sizeof(maxcol), 1, 0, 1, 1, 0x7fffffff, -1);
}

/* ---- 3.10 lnotab v2 ---- */

static void test_310_basic(void **state)
{
    (void)state;
    static const unsigned char t[] = {
        4, 0,          /* bytes 0..3: line 50 */
        6, 2,          /* 4..9: 52 */
        0, 1,          /* empty range: line becomes 53, covers nothing */
        2, 0xff,       /* 10..11: 52 (53 - 1) */
        4, 0x80,       /* 12..15: no line, running line stays 52 */
        2, 3,          /* 16..17: 55 */
    };
    static const struct want w[] = {
        AT(0, 50, 50, -1, -1), AT(2, 50, 50, -1, -1), AT(4, 52, 52, -1, -1), AT(8, 52, 52, -1, -1),
        AT(10, 52, 52, -1, -1), NOLINE(12), NOLINE(14), AT(16, 55, 55, -1, -1), FAILS(18),
    };
    expect_lookups(10, t, sizeof(t), 50, w, N_ITEMS(w));
    expect_fail(10, t, sizeof(t) - 1, 50, 16);   /* odd length: last pair incomplete */
}

static void test_310_split_deltas(void **state)
{
    (void)state;
    /* The 3.10 compiler splits line deltas beyond +-127 into (0, +-127) pairs and byte deltas
     * beyond 254 into (254, ldelta) + (254, 0)... pairs (Python/compile.c assemble_line_range). */
    static const unsigned char t[] = {
        2, 1,                       /* 0..1: line 1001 */
        0, 127, 0, 127, 6, 46,      /* +300 -> 1301, covering 2..7 */
        254, 0x81, 254, 0, 10, 0,   /* -127 -> 1174, covering 8..525 */
        0, 0x81, 0, 0x81, 2, 0x83,  /* -127 -127 -125 = -379 -> 795, covering 526..527 */
        254, 0x80, 2, 0x80,         /* 528..783: no line */
        2, 5,                       /* 784..785: 800 (the running line survived the -128s) */
    };
    static const struct want w[] = {
        AT(0, 1001, 1001, -1, -1), AT(2, 1301, 1301, -1, -1), AT(6, 1301, 1301, -1, -1),
        AT(8, 1174, 1174, -1, -1), AT(262, 1174, 1174, -1, -1), AT(516, 1174, 1174, -1, -1),
        AT(524, 1174, 1174, -1, -1), AT(526, 795, 795, -1, -1), NOLINE(528), NOLINE(782),
        NOLINE(783), AT(784, 800, 800, -1, -1), FAILS(786), FAILS(0x7fffffff),
    };
    expect_lookups(10, t, sizeof(t), 1000, w, N_ITEMS(w));
}

/* ---- real tables from CPython ---- */

/* Sources (compile(src, ..., "exec").co_consts[0]):
 * basic:    "\ndef f(a, b):\n    x = a + b\n    y = g(x,\n          a)\n    try:\n"
 *           "        z = x / y\n    except ZeroDivisionError:\n        z = None\n"
 *           "    with open(a) as fh:\n        fh.read()\n    for i in range(3):\n"
 *           "        if i: break\n    return z\n"
 *           (_nocol: same, 3.11 run with -X no_debug_ranges)
 * exceptas: "def f(a):\n    try:\n        a()\n    except E as e:\n        a(e)\n"
 * big:      "def h(a):\n    q = 1\n" + 300 blank lines + "    r = k(a, ... 140 times)\n"
 *           + 150 blank lines + "    return q\n"
 * Expected positions: co_positions() (3.11+) or co_lines() per code unit (3.10), None -> -1,
 * run-length coded: {n, location} = the next n code units have that location. */
struct loc_run {
    int n;
    struct tb_location loc;
};

/* 3.10.13 firstlineno 2, 34 bytes, 65 code units */
static const unsigned char real_10_basic_table[] = {
    0x08, 0x01, 0x04, 0x01, 0x02, 0x01, 0x04, 0xff, 0x02, 0x02, 0x0c, 0x01, 0x0c, 0x01, 0x08, 0x01,
    0x02, 0xff, 0x0a, 0x02, 0x0a, 0x01, 0x1c, 0xff, 0x0c, 0x02, 0x06, 0x01, 0x04, 0x01, 0x02, 0xff,
    0x04, 0x01,
};
static const struct loc_run real_10_basic_pos[] = {
    {4, {3, 3, -1, -1}}, {2, {4, 4, -1, -1}}, {1, {5, 5, -1, -1}}, {2, {4, 4, -1, -1}},
    {1, {6, 6, -1, -1}}, {6, {7, 7, -1, -1}}, {6, {8, 8, -1, -1}}, {4, {9, 9, -1, -1}},
    {1, {8, 8, -1, -1}}, {5, {10, 10, -1, -1}}, {5, {11, 11, -1, -1}}, {14, {10, 10, -1, -1}},
    {6, {12, 12, -1, -1}}, {3, {13, 13, -1, -1}}, {2, {14, 14, -1, -1}}, {1, {13, 13, -1, -1}},
    {2, {14, 14, -1, -1}},
};
/* 3.10.13 firstlineno 1, 12 bytes, 30 code units */
static const unsigned char real_10_exceptas_table[] = {
    0x02, 0x01, 0x0c, 0x01, 0x0e, 0x01, 0x16, 0x01, 0x08, 0x80, 0x02, 0xff,
};
static const struct loc_run real_10_exceptas_pos[] = {
    {1, {2, 2, -1, -1}}, {6, {3, 3, -1, -1}}, {7, {4, 4, -1, -1}}, {11, {5, 5, -1, -1}},
    {4, {-1, -1, -1, -1}}, {1, {4, 4, -1, -1}},
};
/* 3.10.13 firstlineno 1, 16 bytes, 289 code units */
static const unsigned char real_10_big_table[] = {
    0x04, 0x01, 0x00, 0x7f, 0x00, 0x7f, 0xfe, 0x2f, 0xfe, 0x00, 0x3e, 0x00, 0x00, 0x7f, 0x04, 0x18,
};
static const struct loc_run real_10_big_pos[] = {
    {2, {2, 2, -1, -1}}, {285, {303, 303, -1, -1}}, {2, {454, 454, -1, -1}},
};
/* 3.11.7 firstlineno 2, 227 bytes, 130 code units */
static const unsigned char real_11_basic_table[] = {
    0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xdd, 0x08, 0x09, 0x88, 0x21,
    0xd8, 0x0a, 0x0b, 0xf1, 0x03, 0x01, 0x09, 0x0d, 0xf4, 0x00, 0x01, 0x09, 0x0d, 0x80, 0x41, 0xf0,
    0x04, 0x03, 0x05, 0x11, 0xd8, 0x0c, 0x0d, 0x90, 0x01, 0x89, 0x45, 0x88, 0x01, 0x88, 0x01, 0xf8,
    0xdd, 0x0b, 0x1c, 0xf0, 0x00, 0x01, 0x05, 0x11, 0xf0, 0x00, 0x01, 0x05, 0x11, 0xf0, 0x00, 0x01,
    0x05, 0x11, 0xd8, 0x0c, 0x10, 0x88, 0x01, 0x88, 0x01, 0x88, 0x01, 0xf0, 0x03, 0x01, 0x05, 0x11,
    0xf8, 0xf8, 0xf8, 0xe5, 0x09, 0x0d, 0x88, 0x61, 0x89, 0x17, 0x8c, 0x17, 0xf0, 0x00, 0x01, 0x05,
    0x12, 0x90, 0x42, 0xd8, 0x08, 0x0a, 0x8f, 0x07, 0x8a, 0x07, 0x89, 0x09, 0x8c, 0x09, 0x88, 0x09,
    0xf0, 0x03, 0x01, 0x05, 0x12, 0xf0, 0x00, 0x01, 0x05, 0x12, 0xf0, 0x00, 0x01, 0x05, 0x12, 0xf1,
    0x00, 0x01, 0x05, 0x12, 0xf4, 0x00, 0x01, 0x05, 0x12, 0xf0, 0x00, 0x01, 0x05, 0x12, 0xf0, 0x00,
    0x01, 0x05, 0x12, 0xf0, 0x00, 0x01, 0x05, 0x12, 0xf0, 0x00, 0x01, 0x05, 0x12, 0xf0, 0x00, 0x01,
    0x05, 0x12, 0xf0, 0x00, 0x01, 0x05, 0x12, 0xf8, 0xf8, 0xf8, 0xf0, 0x00, 0x01, 0x05, 0x12, 0xf0,
    0x00, 0x01, 0x05, 0x12, 0xf0, 0x00, 0x01, 0x05, 0x12, 0xf0, 0x00, 0x01, 0x05, 0x12, 0xe5, 0x0d,
    0x12, 0x90, 0x31, 0x89, 0x58, 0x8c, 0x58, 0xf0, 0x00, 0x01, 0x05, 0x14, 0xf0, 0x00, 0x01, 0x05,
    0x14, 0x88, 0x01, 0xd8, 0x0b, 0x0c, 0x88, 0x0b, 0x88, 0x65, 0x88, 0x65, 0x88, 0x0b, 0xd8, 0x0b,
    0x0c, 0x80, 0x48,
};
static const struct loc_run real_11_basic_pos[] = {
    {1, {2, 2, 0, 0}}, {1, {3, 3, 8, 9}}, {1, {3, 3, 12, 13}}, {2, {3, 3, 8, 13}}, {1, {3, 3, 4, 5}},
    {6, {4, 4, 8, 9}}, {1, {4, 4, 10, 11}}, {1, {5, 5, 10, 11}}, {7, {4, 5, 8, 12}},
    {1, {4, 4, 4, 5}}, {1, {6, 9, 4, 16}}, {1, {7, 7, 12, 13}}, {1, {7, 7, 16, 17}},
    {2, {7, 7, 12, 17}}, {2, {7, 7, 8, 9}}, {1, {-1, -1, -1, -1}}, {6, {8, 8, 11, 28}},
    {3, {8, 9, 4, 16}}, {1, {9, 9, 12, 16}}, {3, {9, 9, 8, 9}}, {1, {8, 9, 4, 16}},
    {3, {-1, -1, -1, -1}}, {6, {10, 10, 9, 13}}, {1, {10, 10, 14, 15}}, {7, {10, 10, 9, 16}},
    {1, {10, 11, 4, 17}}, {1, {10, 10, 20, 22}}, {1, {11, 11, 8, 10}}, {11, {11, 11, 8, 15}},
    {8, {11, 11, 8, 17}}, {16, {10, 11, 4, 17}}, {3, {-1, -1, -1, -1}}, {4, {10, 11, 4, 17}},
    {6, {12, 12, 13, 18}}, {1, {12, 12, 19, 20}}, {7, {12, 12, 13, 21}}, {2, {12, 13, 4, 19}},
    {1, {12, 12, 8, 9}}, {1, {13, 13, 11, 12}}, {1, {13, 13, 8, 19}}, {2, {13, 13, 14, 19}},
    {1, {13, 13, 8, 19}}, {1, {14, 14, 11, 12}}, {1, {14, 14, 4, 12}},
};
/* 3.11.7 firstlineno 2, 141 bytes, 130 code units */
static const unsigned char real_11_basic_nocol_table[] = {
    0xe8, 0x00, 0xe8, 0x02, 0xe8, 0x00, 0xe9, 0x00, 0xe8, 0x00, 0xed, 0x02, 0xe8, 0x00, 0xe8, 0x02,
    0xe9, 0x03, 0xec, 0x00, 0xe8, 0x00, 0xe8, 0x04, 0xe8, 0x02, 0xe8, 0x00, 0xe9, 0x00, 0xe8, 0x00,
    0xe8, 0x00, 0xf8, 0xed, 0x02, 0xe8, 0x00, 0xe8, 0x00, 0xe8, 0x00, 0xe8, 0x02, 0xe8, 0x00, 0xe8,
    0x00, 0xe8, 0x00, 0xe8, 0x03, 0xf8, 0xf8, 0xf8, 0xed, 0x04, 0xe8, 0x00, 0xe9, 0x00, 0xec, 0x00,
    0xe8, 0x00, 0xe8, 0x00, 0xe8, 0x02, 0xef, 0x00, 0xea, 0x00, 0xe9, 0x00, 0xec, 0x00, 0xe8, 0x00,
    0xe8, 0x03, 0xe8, 0x00, 0xe8, 0x00, 0xe9, 0x00, 0xec, 0x00, 0xe8, 0x00, 0xe8, 0x00, 0xe8, 0x00,
    0xe8, 0x00, 0xe8, 0x00, 0xe8, 0x00, 0xf8, 0xf8, 0xf8, 0xe8, 0x00, 0xe8, 0x00, 0xe8, 0x00, 0xe8,
    0x00, 0xed, 0x04, 0xe8, 0x00, 0xe9, 0x00, 0xec, 0x00, 0xe8, 0x00, 0xe8, 0x00, 0xe8, 0x00, 0xe8,
    0x02, 0xe8, 0x00, 0xe8, 0x00, 0xe8, 0x00, 0xe8, 0x00, 0xe8, 0x02, 0xe8, 0x00,
};
static const struct loc_run real_11_basic_nocol_pos[] = {
    {1, {2, 2, -1, -1}}, {5, {3, 3, -1, -1}}, {7, {4, 4, -1, -1}}, {1, {5, 5, -1, -1}},
    {8, {4, 4, -1, -1}}, {1, {6, 6, -1, -1}}, {6, {7, 7, -1, -1}}, {1, {-1, -1, -1, -1}},
    {9, {8, 8, -1, -1}}, {4, {9, 9, -1, -1}}, {1, {8, 8, -1, -1}}, {3, {-1, -1, -1, -1}},
    {16, {10, 10, -1, -1}}, {20, {11, 11, -1, -1}}, {16, {10, 10, -1, -1}}, {3, {-1, -1, -1, -1}},
    {4, {10, 10, -1, -1}}, {17, {12, 12, -1, -1}}, {5, {13, 13, -1, -1}}, {2, {14, 14, -1, -1}},
};
/* 3.12.1 firstlineno 2, 137 bytes, 112 code units */
static const unsigned char real_12_basic_table[] = {
    0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xdc, 0x08, 0x09, 0x88, 0x21,
    0xd8, 0x0a, 0x0b, 0xf3, 0x03, 0x01, 0x09, 0x0d, 0x80, 0x41, 0xf0, 0x04, 0x03, 0x05, 0x11, 0xd8,
    0x0c, 0x0d, 0x90, 0x01, 0x89, 0x45, 0x88, 0x01, 0xf4, 0x06, 0x00, 0x0a, 0x0e, 0x88, 0x61, 0x8b,
    0x17, 0xf0, 0x00, 0x01, 0x05, 0x12, 0x90, 0x42, 0xd8, 0x08, 0x0a, 0x8f, 0x07, 0x89, 0x07, 0x8c,
    0x09, 0xf7, 0x03, 0x01, 0x05, 0x12, 0xe4, 0x0d, 0x12, 0x90, 0x31, 0x8b, 0x58, 0xf2, 0x00, 0x01,
    0x05, 0x14, 0x88, 0x01, 0xda, 0x0b, 0x0c, 0x88, 0x65, 0xd8, 0x0b, 0x0c, 0x80, 0x48, 0xf0, 0x05,
    0x01, 0x05, 0x14, 0xe0, 0x0b, 0x0c, 0x80, 0x48, 0xf8, 0xf4, 0x0d, 0x00, 0x0c, 0x1d, 0xf2, 0x00,
    0x01, 0x05, 0x11, 0xd8, 0x0c, 0x10, 0x8a, 0x01, 0xf0, 0x03, 0x01, 0x05, 0x11, 0xfa, 0xf7, 0x04,
    0x01, 0x05, 0x12, 0xf0, 0x00, 0x01, 0x05, 0x12, 0xfa,
};
static const struct loc_run real_12_basic_pos[] = {
    {1, {2, 2, 0, 0}}, {1, {3, 3, 8, 9}}, {1, {3, 3, 12, 13}}, {2, {3, 3, 8, 13}}, {1, {3, 3, 4, 5}},
    {5, {4, 4, 8, 9}}, {1, {4, 4, 10, 11}}, {1, {5, 5, 10, 11}}, {4, {4, 5, 8, 12}},
    {1, {4, 4, 4, 5}}, {1, {6, 9, 4, 16}}, {1, {7, 7, 12, 13}}, {1, {7, 7, 16, 17}},
    {2, {7, 7, 12, 17}}, {1, {7, 7, 8, 9}}, {5, {10, 10, 9, 13}}, {1, {10, 10, 14, 15}},
    {4, {10, 10, 9, 16}}, {1, {10, 11, 4, 17}}, {1, {10, 10, 20, 22}}, {1, {11, 11, 8, 10}},
    {10, {11, 11, 8, 15}}, {5, {11, 11, 8, 17}}, {8, {10, 11, 4, 17}}, {5, {12, 12, 13, 18}},
    {1, {12, 12, 19, 20}}, {4, {12, 12, 13, 21}}, {3, {12, 13, 4, 19}}, {1, {12, 12, 8, 9}},
    {3, {13, 13, 11, 12}}, {1, {13, 13, 14, 19}}, {1, {14, 14, 11, 12}}, {1, {14, 14, 4, 12}},
    {1, {12, 13, 4, 19}}, {1, {14, 14, 11, 12}}, {1, {14, 14, 4, 12}}, {1, {-1, -1, -1, -1}},
    {5, {8, 8, 11, 28}}, {3, {8, 9, 4, 16}}, {1, {9, 9, 12, 16}}, {3, {9, 9, 8, 9}},
    {1, {8, 9, 4, 16}}, {3, {-1, -1, -1, -1}}, {9, {10, 11, 4, 17}}, {3, {-1, -1, -1, -1}},
};
/* 3.13.0 firstlineno 2, 120 bytes, 123 code units */
static const unsigned char real_13_basic_table[] = {
    0x80, 0x00, 0xd8, 0x08, 0x09, 0x89, 0x05, 0x80, 0x41, 0xdc, 0x08, 0x09, 0x88, 0x21, 0xd8, 0x0a,
    0x0b, 0xf3, 0x03, 0x01, 0x09, 0x0d, 0x80, 0x41, 0xf0, 0x04, 0x03, 0x05, 0x11, 0xd8, 0x0c, 0x0d,
    0x89, 0x45, 0x88, 0x01, 0xf4, 0x06, 0x00, 0x0a, 0x0e, 0x88, 0x61, 0x8c, 0x17, 0x90, 0x42, 0xd8,
    0x08, 0x0a, 0x8f, 0x07, 0x89, 0x07, 0x8c, 0x09, 0xf7, 0x03, 0x00, 0x0a, 0x11, 0xe4, 0x0d, 0x12,
    0x90, 0x31, 0x8e, 0x58, 0x88, 0x01, 0xdf, 0x0b, 0x0c, 0x88, 0x31, 0x88, 0x65, 0xd8, 0x0b, 0x0c,
    0x80, 0x48, 0xf1, 0x05, 0x00, 0x0e, 0x16, 0xe0, 0x0b, 0x0c, 0x80, 0x48, 0xf8, 0xf4, 0x0d, 0x00,
    0x0c, 0x1d, 0xf3, 0x00, 0x01, 0x05, 0x11, 0xd8, 0x0c, 0x10, 0x8a, 0x01, 0xf0, 0x03, 0x01, 0x05,
    0x11, 0xfa, 0xe7, 0x09, 0x10, 0x8d, 0x17, 0xfa,
};
static const struct loc_run real_13_basic_pos[] = {
    {1, {2, 2, 0, 0}}, {1, {3, 3, 8, 9}}, {2, {3, 3, 8, 13}}, {1, {3, 3, 4, 5}}, {5, {4, 4, 8, 9}},
    {1, {4, 4, 10, 11}}, {1, {5, 5, 10, 11}}, {4, {4, 5, 8, 12}}, {1, {4, 4, 4, 5}},
    {1, {6, 9, 4, 16}}, {1, {7, 7, 12, 13}}, {2, {7, 7, 12, 17}}, {1, {7, 7, 8, 9}},
    {5, {10, 10, 9, 13}}, {1, {10, 10, 14, 15}}, {5, {10, 10, 9, 16}}, {1, {10, 10, 20, 22}},
    {1, {11, 11, 8, 10}}, {10, {11, 11, 8, 15}}, {5, {11, 11, 8, 17}}, {8, {10, 10, 9, 16}},
    {5, {12, 12, 13, 18}}, {1, {12, 12, 19, 20}}, {7, {12, 12, 13, 21}}, {1, {12, 12, 8, 9}},
    {9, {13, 13, 11, 12}}, {1, {13, 13, 14, 19}}, {1, {14, 14, 11, 12}}, {1, {14, 14, 4, 12}},
    {2, {12, 12, 13, 21}}, {1, {14, 14, 11, 12}}, {1, {14, 14, 4, 12}}, {1, {-1, -1, -1, -1}},
    {5, {8, 8, 11, 28}}, {4, {8, 9, 4, 16}}, {1, {9, 9, 12, 16}}, {3, {9, 9, 8, 9}},
    {1, {8, 9, 4, 16}}, {3, {-1, -1, -1, -1}}, {14, {10, 10, 9, 16}}, {3, {-1, -1, -1, -1}},
};

struct real_table {
    const char *name;
    int minor, first;
    const unsigned char *table;
    size_t len;
    const struct loc_run *pos;
    size_t nruns;
};

/* Code units a real table's expected positions cover. */
static int real_units(const struct real_table *r)
{
    int n = 0;
    for (size_t j = 0; j < r->nruns; j++)
        n += r->pos[j].n;
    return n;
}

#define REAL(ident, minor, first) \
    { #ident, minor, first, ident##_table, sizeof(ident##_table), ident##_pos, N_ITEMS(ident##_pos) }

static const struct real_table real_tables[] = {
    REAL(real_10_basic, 10, 2),
    REAL(real_10_exceptas, 10, 1),
    REAL(real_10_big, 10, 1),
    REAL(real_11_basic, 11, 2),
    REAL(real_11_basic_nocol, 11, 2),
    REAL(real_12_basic, 12, 2),
    REAL(real_13_basic, 13, 2),
};

static void test_real_tables(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_ITEMS(real_tables); k++) {
        const struct real_table *r = &real_tables[k];
        int unit = 0;
        for (size_t j = 0; j < r->nruns; j++) {
            const struct tb_location *p = &r->pos[j].loc;
            for (int i = 0; i < r->pos[j].n; i++, unit++)
                expect_loc(r->minor, r->table, r->len, r->first, 2 * unit, p->line, p->end_line,
                           p->col, p->end_col);
        }
        expect_fail(r->minor, r->table, r->len, r->first, 2 * unit);
    }
}

/* Every prefix of a valid table, copied to an exact-size heap buffer (so valgrind/ASan see any
 * overread): lookups either fail or agree with the full table. */
static void check_prefixes(int minor, const unsigned char *t, size_t len, int first, int max_addr)
{
    for (size_t k = 0; k <= len; k++) {
        unsigned char *copy = malloc(k ? k : 1);
        assert_non_null(copy);
        memcpy(copy, t, k);
        for (int addr = 0; addr <= max_addr; addr += 2) {
            struct tb_location want, got;
            int want_rc = lookup(minor, t, len, first, addr, &want);
            int rc = lookup(minor, copy, k, first, addr, &got);
            if (rc == 0) {
                assert_int_equal(want_rc, 0);
                assert_memory_equal(&got, &want, sizeof(got));
            } else {
                assert_int_equal(rc, -1);
            }
        }
        free(copy);
    }
}

static void test_truncated_real(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_ITEMS(real_tables); k++) {
        const struct real_table *r = &real_tables[k];
        check_prefixes(r->minor, r->table, r->len, r->first, 2 * real_units(r) + 4);
    }
}

static void test_truncated_hand(void **state)
{
    (void)state;
    static const unsigned char t11[] = {
        E(14, 1), 0x43, 0x01, 0x40, 0x40, 0x01, 0x41, 0x40, 0x00, 0x01,
        E(13, 1), 0x49, 0x03, E(10, 2), 3, 9, E(15, 1), E(3, 1), 0x12,
    };
    static const unsigned char t10[] = { 2, 1, 0, 127, 254, 0x80, 4, 0xff, 3, 2 };
    for EACH_MINOR(minor)
        if (lnotab_v2(minor))
            check_prefixes(minor, t10, sizeof(t10), 5, 270);
        else
            check_prefixes(minor, t11, sizeof(t11), 5, 20);
}

/* Seeded random buffers of 0..96 bytes, exact-size heap copies: must terminate with 0 or -1. */
static void test_random_garbage(void **state)
{
    (void)state;
    rng_state = 0x2545f491;
    for (int n = 0; n < 5000; n++) {
        size_t len = rnd() % 97;
        unsigned char *buf = malloc(len ? len : 1);
        assert_non_null(buf);
        /* half the buffers bias towards entry-start bytes so deeper paths are reached */
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char)((n & 1) && rnd() % 3 == 0 ? 0x80 | rnd() : rnd());
        int first = (int)(rnd() % 2000) - 1000;
        for EACH_MINOR(minor) {
            for (int addr = -2; addr <= (int)len * 16 + 2; addr += 2 + (int)(rnd() % 7)) {
                struct tb_location got;
                int rc = lookup(minor, buf, len, first, addr, &got);
                assert_true(rc == 0 || rc == -1);
                if (rc == -1)
                    assert_int_equal(got.line, -1);
            }
            struct tb_location got;
            int rc = lookup(minor, buf, len, first, 0x7fffffff, &got);
            assert_int_equal(rc, -1);
        }
        free(buf);
    }
}

/* ---- round trip against a small encoder following Objects/locations.md ---- */

static size_t put_varint(unsigned char *p, uint32_t v)
{
    size_t n = 0;
    while (v >= 64) {
        p[n++] = (unsigned char)(0x40 | (v & 63));
        v >>= 6;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static size_t put_svarint(unsigned char *p, int v)
{
    return put_varint(p, v < 0 ? ((uint32_t)-v << 1) | 1 : (uint32_t)v << 1);
}

/* Appends one random entry covering `units` code units; records the expected location. */
static size_t put_random_entry(unsigned char *p, int *line, int units, struct tb_location *want)
{
    int code = (int)(rnd() % 16), n = 0;
    p[n++] = E(code, units);
    if (code <= 9) {
        int col = code * 8 + (int)(rnd() % 8), width = (int)(rnd() % 16);
        p[n++] = (unsigned char)((col & 7) << 4 | width);
        *want = (struct tb_location){ *line, *line, col, col + width };
    } else if (code <= 12) {
        *line += code - 10;
        int col = (int)(rnd() % 128), end = (int)(rnd() % 128);
        p[n++] = (unsigned char)col;
        p[n++] = (unsigned char)end;
        *want = (struct tb_location){ *line, *line, col, end };
    } else if (code == 13) {
        int delta = (int)(rnd() % 20001) - 10000;
        *line += delta;
        n += (int)put_svarint(p + n, delta);
        *want = (struct tb_location){ *line, *line, -1, -1 };
    } else if (code == 14) {
        int delta = (int)(rnd() % 200001) - 100000;
        uint32_t span = rnd() % 5000, col = rnd() % 3 ? rnd() % 100000 : 0, end = rnd() % 300;
        *line += delta;
        n += (int)put_svarint(p + n, delta);
        n += (int)put_varint(p + n, span);
        n += (int)put_varint(p + n, col);
        n += (int)put_varint(p + n, end);
        *want = (struct tb_location){ *line, *line + (int)span, (int)col - 1, (int)end - 1 };
    } else {
        *want = (struct tb_location){ -1, -1, -1, -1 };
    }
    return (size_t)n;
}

static void test_roundtrip(void **state)
{
    (void)state;
    enum { ENTRIES = 200 };
    static unsigned char table[ENTRIES * 32];
    static struct tb_location want[ENTRIES * 8];
    rng_state = 0x9e3779b9;
    for (int round = 0; round < 50; round++) {
        int first = (int)(rnd() % 100000), line = first, units = 0;
        size_t len = 0;
        for (int e = 0; e < ENTRIES; e++) {
            int n = 1 + (int)(rnd() % 8);
            struct tb_location loc;
            len += put_random_entry(table + len, &line, n, &loc);
            for (int i = 0; i < n; i++)
                want[units++] = loc;
        }
        int minor = location_minor(round);
        for (int i = 0; i < units; i++)
            expect_loc(minor, table, len, first, 2 * i, want[i].line, want[i].end_line,
                       want[i].col, want[i].end_col);
        expect_fail(minor, table, len, first, 2 * units);
    }
}

/* ---- the index against the direct decoder, every offset of long random tables ---- */

/* Both ways for every offset 0..max_addr (and some past it) of one index. */
static void expect_same(int minor, const unsigned char *t, size_t len, int first, int max_addr)
{
    struct tb_linetable_index ix;

    tb_linetable_index(minor, t, len, &ix);
    assert_true(tb_linetable_index_bytes(&ix) <= (len / 64 + 1) * 40);
    for (int addr = -2; addr <= max_addr + 4; addr += 2) {
        struct tb_location want, got;
        int rc = tb_linetable_lookup(minor, t, len, first, addr, &want);
        if (tb_linetable_index_lookup(&ix, t, len, first, addr, &got) != rc ||
            memcmp(&got, &want, sizeof(got)))
            fail_msg("3.%d len %zu first %d addr %d: index rc/line %d/%d, direct %d/%d", minor, len, first,
                     addr, rc ? 0 : got.line, got.col, rc, want.line);
    }
    tb_linetable_index_free(&ix);
}

/* Random valid-looking tables of up to 1000 entries (many resume points), with lines that
 * wander far and co_firstlineno near the ends of int (so that entries leave int range at
 * different places for different code objects sharing one table), then random bytes. */
static void test_index_random(void **state)
{
    (void)state;
    enum { ENTRIES = 1000 };
    static unsigned char table[ENTRIES * 32];
    static const int firsts[] = { 1, -5, INT_MAX - 70000, INT_MIN + 90000 };
    rng_state = 0x12345678;
    for (int round = 0; round < 24; round++) {
        int line = 0, units = 0, n_entries = 1 + (int)(rnd() % ENTRIES);
        size_t len = 0;
        int minor = round % 4 == 0 ? TB_PY_MIN_MINOR : location_minor(round);
        for (int e = 0; e < n_entries; e++) {
            if (lnotab_v2(minor)) {     /* (byte delta, line delta) pairs, some "no line" */
                table[len++] = (unsigned char)(rnd() % 3 ? 2 * (rnd() % 8) : 0);
                table[len++] = (unsigned char)(rnd() % 9 == 0 ? 0x80 : rnd());
                units += 8;
            } else {
                struct tb_location loc;
                int n = 1 + (int)(rnd() % 8);
                len += put_random_entry(table + len, &line, n, &loc);
                units += n;
            }
        }
        for (size_t f = 0; f < N_ITEMS(firsts); f++)
            expect_same(minor, table, len, firsts[f], 2 * units);
        /* the same table cut anywhere, and one byte broken */
        size_t cut = rnd() % (len + 1);
        expect_same(minor, table, cut, firsts[round % N_ITEMS(firsts)], 2 * units);
        table[rnd() % len] = (unsigned char)rnd();
        expect_same(minor, table, len, firsts[round % N_ITEMS(firsts)], 2 * units);
    }
    for (int round = 0; round < 200; round++) {
        size_t len = rnd() % 1000;
        for (size_t i = 0; i < len; i++)
            table[i] = (unsigned char)(rnd() % 3 == 0 ? 0x80 | rnd() : rnd());
        for EACH_MINOR(minor)
            expect_same(minor, table, len, (int)rnd(), (int)len * 16);
    }
}

/* Lines that leave int range far into a table: the index fails exactly where the direct
 * decoder does, for each co_firstlineno. */
static void test_index_hopeless_lines(void **state)
{
    (void)state;
    static unsigned char t[4096];
    size_t len = 0;
    for (int e = 0; e < 400; e++) {          /* +2^29 per entry after entry 100 */
        t[len++] = E(13, 1);
        len += put_svarint(t + len, e < 100 ? 1 : (1 << 29));
    }
    for EACH_MINOR(minor)
        if (!lnotab_v2(minor))
            for (int k = 0; k < 6; k++) {
                expect_same(minor, t, len, k - 3, 800);
                expect_same(minor, t, len, INT_MAX - k, 800);
                expect_same(minor, t, len, INT_MIN + k, 800);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_negative_addr),
        cmocka_unit_test(test_bad_version_and_empty),
        cmocka_unit_test(test_311_short),
        cmocka_unit_test(test_311_one_line),
        cmocka_unit_test(test_311_no_columns),
        cmocka_unit_test(test_311_long),
        cmocka_unit_test(test_311_none),
        cmocka_unit_test(test_311_malformed),
        cmocka_unit_test(test_310_basic),
        cmocka_unit_test(test_310_split_deltas),
        cmocka_unit_test(test_real_tables),
        cmocka_unit_test(test_truncated_real),
        cmocka_unit_test(test_truncated_hand),
        cmocka_unit_test(test_random_garbage),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_index_random),
        cmocka_unit_test(test_index_hopeless_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
