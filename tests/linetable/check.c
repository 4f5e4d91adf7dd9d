/* check.c: reads dump_positions.py output on stdin and compares tb_linetable_lookup, and the
 * lookup through the table's index, with the positions CPython itself reported, for every
 * code unit of every code object.  Exits non-zero on any mismatch, on malformed input, or
 * when fewer than 1000 code objects were checked. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/linetable.h"

#define MIN_CODE_OBJECTS 1000
#define MAX_REPORTED 20

struct stats {
    long code_objects, instructions, mismatches;
};

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Decodes hex (or "-" = empty) into a malloc'd buffer; returns its length or -1. */
static long parse_hex(const char *hex, unsigned char **buf)
{
    size_t n = strcmp(hex, "-") == 0 ? 0 : strlen(hex);
    if (n % 2)
        return -1;
    *buf = malloc(n / 2 + 1);
    if (!*buf)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        (*buf)[i] = (unsigned char)(hi << 4 | lo);
    }
    return (long)(n / 2);
}

/* Parses "line,end_line,col,end_col"; "x" means not covered (*covered = 0). */
static int parse_pos(const char *tok, struct tb_location *loc, int *covered)
{
    *covered = strcmp(tok, "x") != 0;
    if (!*covered)
        return 0;
    return sscanf(tok, "%d,%d,%d,%d", &loc->line, &loc->end_line, &loc->col, &loc->end_col) == 4
               ? 0 : -1;
}

static void report(struct stats *st, long lineno, int addr, const struct tb_location *want,
                   int want_rc, const struct tb_location *got, int rc)
{
    if (++st->mismatches > MAX_REPORTED)
        return;
    fprintf(stderr, "input line %ld addr %d: want rc %d (%d,%d,%d,%d) got rc %d (%d,%d,%d,%d)\n",
            lineno, addr, want_rc, want->line, want->end_line, want->col, want->end_col, rc,
            got->line, got->end_line, got->col, got->end_col);
}

/* The direct decoder and the table's index ix must both say what CPython said. */
static void expect(struct stats *st, long lineno, const struct tb_linetable_index *ix, int minor,
                   const unsigned char *tab, size_t len, int first, int addr,
                   const struct tb_location *want, int want_rc)
{
    struct tb_location got;
    int rc = tb_linetable_lookup(minor, tab, len, first, addr, &got);
    if (rc == want_rc && (rc != 0 || memcmp(&got, want, sizeof(got)) == 0))
        rc = tb_linetable_index_lookup(ix, tab, len, first, addr, &got);
    if (rc != want_rc || (rc == 0 && memcmp(&got, want, sizeof(got)) != 0))
        report(st, lineno, addr, want, want_rc, &got, rc);
}

/* Checks one dump line; returns -1 when the line itself cannot be parsed. */
static int check_line(struct stats *st, long lineno, char *line)
{
    char *save = NULL;
    char *minor_s = strtok_r(line, " \n", &save);
    char *first_s = strtok_r(NULL, " \n", &save);
    char *hex = strtok_r(NULL, " \n", &save);
    unsigned char *tab = NULL;
    long len;
    int minor, first, i = 0;

    if (!hex || sscanf(minor_s, "%d", &minor) != 1 || sscanf(first_s, "%d", &first) != 1)
        return -1;
    len = parse_hex(hex, &tab);
    if (len < 0) {
        free(tab);
        return -1;
    }
    struct tb_location want = { first, first, -1, -1 };
    struct tb_linetable_index ix;
    tb_linetable_index(minor, tab, (size_t)len, &ix);
    expect(st, lineno, &ix, minor, tab, (size_t)len, first, -2, &want, 0);
    for (char *tok; (tok = strtok_r(NULL, " \n", &save)) != NULL; i++) {
        int covered;
        if (parse_pos(tok, &want, &covered) < 0) {
            tb_linetable_index_free(&ix);
            free(tab);
            return -1;
        }
        expect(st, lineno, &ix, minor, tab, (size_t)len, first, 2 * i, &want, covered ? 0 : -1);
    }
    expect(st, lineno, &ix, minor, tab, (size_t)len, first, 2 * i, &want, -1); /* one past the end */
    st->instructions += i;
    st->code_objects++;
    tb_linetable_index_free(&ix);
    free(tab);
    return 0;
}

int main(void)
{
    struct stats st = { 0, 0, 0 };
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0, bad_input = 0;

    while (getline(&line, &cap, stdin) > 0) {
        if (check_line(&st, ++lineno, line) < 0 && bad_input++ < MAX_REPORTED)
            fprintf(stderr, "input line %ld: cannot parse\n", lineno);
    }
    free(line);
    printf("linetable: %ld code objects, %ld instructions, %ld mismatches\n", st.code_objects,
           st.instructions, st.mismatches);
    if (bad_input)
        fprintf(stderr, "linetable: %ld unparsable input lines\n", bad_input);
    if (st.code_objects < MIN_CODE_OBJECTS)
        fprintf(stderr, "linetable: fewer than %d code objects checked\n", MIN_CODE_OBJECTS);
    return st.mismatches || bad_input || st.code_objects < MIN_CODE_OBJECTS;
}
