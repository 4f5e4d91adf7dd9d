/* usagetext.h: reads the commands' own usage texts (what --help prints) as
 * lines of known kinds, and the options they document, so that the man page
 * and the shell completions are made from the same text as --help and never
 * repeat it.  The texts are ours; the reads are bounded all the same. */
#ifndef TB_USAGETEXT_H
#define TB_USAGETEXT_H
#include <stddef.h>
#include <stdio.h>

enum tb_uline_kind {
	TB_UL_BLANK,
	TB_UL_SYNOPSIS, /* "usage: tachyon-bpf ..." and the lines that continue it */
	TB_UL_HEADING,  /* "Targets:" alone on its line */
	TB_UL_ITEM,     /* "  -o, --output FILE   text": term and text (text may be empty) */
	TB_UL_MORE,     /* a deeper-indented line continuing the item before it */
	TB_UL_TEXT,     /* a line of prose */
};

struct tb_uline {
	enum tb_uline_kind kind;
	const char *term, *text; /* term: ITEM only; text: the rest, trimmed (not NUL-ended) */
	size_t term_len, text_len;
	size_t indent; /* the line's leading spaces ("usage: " counts as 7) */
};

/* Walks a usage text line by line; pos starts at 0. */
struct tb_usage_iter {
	const char *s;
	size_t len, pos;
	enum tb_uline_kind prev;
};

void tb_usage_iter_init(struct tb_usage_iter *it, const char *s, size_t len);
/* The next line's kind and parts: 1, or 0 at the end. */
int tb_usage_next(struct tb_usage_iter *it, struct tb_uline *out);

/* Is this line (TB_UL_MORE) a row of a table under its item ("  .html
 * flame graph page" under -o: two spaces inside), not prose continuing it? */
int tb_usage_is_row(const struct tb_uline *l);

/* One option a usage text documents: "--pid" (or "-p"), its argument's
 * name ("PID[,PID...]", "own|total|name"; "" when it takes none) and its
 * help, the lines of prose joined and cut to fit ("" when only the synopsis
 * names it). */
#define TB_UOPT_NAME 40
#define TB_UOPT_ARG 40
#define TB_UOPT_HELP 120
struct tb_usage_opt {
	char name[TB_UOPT_NAME], arg[TB_UOPT_ARG], help[TB_UOPT_HELP];
};

/* The options documented in text (its items' terms, then the synopsis'
 * bracketed words after "tachyon-bpf COMMAND"), each once, in that order;
 * at most max.  Returns how many. */
size_t tb_usage_options(const char *text, size_t len, struct tb_usage_opt *opts, size_t max);

/* A usage function's text in a malloc'ed buffer (*len bytes, NUL-ended),
 * or NULL (out of memory). */
char *tb_usage_capture(void (*usage)(FILE *f), size_t *len);

#endif
