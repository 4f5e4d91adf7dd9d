/* usagetext.c: the commands' usage texts read back as lines of known kinds
 * and as the options they document (usagetext.h): the one reader that the
 * man page (manpage.c) and the shell completions (completion.c) share. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/usagetext.h"

/* an item's term starts within this many spaces; deeper lines continue it */
#define ITEM_INDENT_MAX 6
/* a heading is one word ending in ':' ("Targets:") */
#define HEADING_MAX 24

void tb_usage_iter_init(struct tb_usage_iter *it, const char *s, size_t len)
{
	it->s = s;
	it->len = len;
	it->pos = 0;
	it->prev = TB_UL_BLANK;
}

static int has_lower(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (islower((unsigned char)s[i]))
			return 1;
	return 0;
}

/* The length of an item's term at s (n bytes): option words ("-o,",
 * "--output") and the argument names after them ("FILE", "own|total|name":
 * no lower-case letter, or a '|'), one space apart; two spaces or a word of
 * prose end it. */
static size_t term_length(const char *s, size_t n)
{
	size_t end = 0, i = 0;
	int after_option = 0;

	while (i < n) {
		size_t w = i;
		int option;

		while (w < n && s[w] != ' ')
			w++;
		option = s[i] == '-' || (i == 0 && s[i] == '.');
		if (i > 0 && !option && !(after_option && (!has_lower(s + i, w - i) || memchr(s + i, '|', w - i))))
			break;
		after_option = option;
		end = w;
		if (w + 1 >= n || s[w + 1] == ' ')
			break; /* the end, or two spaces */
		i = w + 1;
	}
	return end;
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

int tb_usage_next(struct tb_usage_iter *it, struct tb_uline *out)
{
	const char *line, *nl;
	size_t n, indent = 0;

	if (it->pos >= it->len)
		return 0;
	line = it->s + it->pos;
	nl = memchr(line, '\n', it->len - it->pos);
	n = nl ? (size_t)(nl - line) : it->len - it->pos;
	it->pos += n + (nl != NULL);
	while (indent < n && line[indent] == ' ')
		indent++;
	memset(out, 0, sizeof(*out));
	out->text = line + indent;
	out->text_len = n - indent;
	trim(&out->text, &out->text_len);
	out->indent = indent;
	if (!out->text_len)
		out->kind = TB_UL_BLANK;
	else if (indent == 0 && n > 7 && !strncmp(line, "usage: ", 7)) {
		out->kind = TB_UL_SYNOPSIS;
		out->text += 7;
		out->text_len -= 7;
		out->indent = 7;
	} else if (indent > ITEM_INDENT_MAX && it->prev == TB_UL_SYNOPSIS)
		out->kind = TB_UL_SYNOPSIS;
	else if (indent == 0 && out->text_len <= HEADING_MAX && out->text[out->text_len - 1] == ':' &&
		 !memchr(out->text, ' ', out->text_len))
		out->kind = TB_UL_HEADING;
	else if (indent > 0 && indent <= ITEM_INDENT_MAX && (out->text[0] == '-' || out->text[0] == '.')) {
		out->kind = TB_UL_ITEM;
		out->term = out->text;
		out->term_len = term_length(out->text, out->text_len);
		out->text += out->term_len;
		out->text_len -= out->term_len;
		trim(&out->text, &out->text_len);
	} else if (indent > ITEM_INDENT_MAX && (it->prev == TB_UL_ITEM || it->prev == TB_UL_MORE))
		out->kind = TB_UL_MORE;
	else
		out->kind = TB_UL_TEXT;
	it->prev = out->kind;
	return 1;
}

static void copy(char *dst, size_t room, const char *s, size_t n)
{
	if (n >= room)
		n = room - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* dst (a help line) with s (n bytes) after it, a space between, cut to room */
static void append(char *dst, size_t room, const char *s, size_t n)
{
	size_t have = strlen(dst);

	if (have + 2 >= room)
		return;
	if (have)
		dst[have++] = ' ';
	copy(dst + have, room - have, s, n);
}

int tb_usage_is_row(const struct tb_uline *l)
{
	for (size_t i = 0; i + 1 < l->text_len; i++)
		if (l->text[i] == ' ' && l->text[i + 1] == ' ')
			return 1;
	return 0;
}

static int is_option_name(const char *s, size_t n)
{
	if (n == 2 && s[0] == '-' && isalpha((unsigned char)s[1]))
		return 1;
	if (n < 3 || n >= TB_UOPT_NAME || s[0] != '-' || s[1] != '-' || !isalnum((unsigned char)s[2]))
		return 0;
	for (size_t i = 2; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-')
			return 0;
	return 1;
}

/* opts[0..n): the option named s, added if new; NULL when full. */
static struct tb_usage_opt *add(struct tb_usage_opt *opts, size_t *n, size_t max, const char *s, size_t len)
{
	for (size_t i = 0; i < *n; i++)
		if (strlen(opts[i].name) == len && !memcmp(opts[i].name, s, len))
			return &opts[i];
	if (*n >= max)
		return NULL;
	memset(&opts[*n], 0, sizeof(opts[*n]));
	copy(opts[*n].name, TB_UOPT_NAME, s, len);
	return &opts[(*n)++];
}

/* "-p, --pid PID[,PID...]", "--from T, --to T": every name, with the
 * argument of its own part or else of the last part. */
static void from_term(const struct tb_uline *l, struct tb_usage_opt *opts, size_t *n, size_t max)
{
	const char *s = l->term, *end = l->term + l->term_len, *last_arg = NULL;
	size_t first = *n, last_arg_len = 0;

	while (s < end) {
		const char *part_end = s, *sp;
		struct tb_usage_opt *o;

		while (part_end < end && !(part_end[0] == ',' && part_end + 1 < end && part_end[1] == ' '))
			part_end++;
		sp = memchr(s, ' ', (size_t)(part_end - s));
		if (is_option_name(s, (size_t)((sp ? sp : part_end) - s)) &&
		    (o = add(opts, n, max, s, (size_t)((sp ? sp : part_end) - s)))) {
			if (sp) {
				last_arg = sp + 1;
				last_arg_len = (size_t)(part_end - sp - 1);
				copy(o->arg, TB_UOPT_ARG, last_arg, last_arg_len);
			}
			copy(o->help, TB_UOPT_HELP, l->text, l->text_len);
		}
		s = part_end + 2;
	}
	for (size_t i = first; i < *n && last_arg; i++)
		if (!opts[i].arg[0])
			copy(opts[i].arg, TB_UOPT_ARG, last_arg, last_arg_len);
}

/* One word of a synopsis without the brackets around it: "[--sort" ->
 * "--sort", "SECONDS]" -> "SECONDS", "PID[,PID...]" stays. */
static void unbracket(const char **w, size_t *n)
{
	int depth = 0;

	while (*n && (**w == '[' || **w == '(')) {
		(*w)++;
		(*n)--;
	}
	for (size_t i = 0; i < *n; i++)
		depth += (*w)[i] == '[' ? 1 : (*w)[i] == ']' ? -1 : 0;
	while (*n && depth < 0 && ((*w)[*n - 1] == ']' || (*w)[*n - 1] == ')')) {
		depth += (*w)[*n - 1] == ']';
		(*n)--;
	}
}

static void from_synopsis(const struct tb_uline *l, struct tb_usage_opt *opts, size_t *n, size_t max)
{
	const char *s = l->text, *end = l->text + l->text_len;
	const char *w[64];
	size_t wl[64], nw = 0, i = 0;

	while (s < end && nw < 64) {
		const char *e = s;

		while (e < end && *e != ' ')
			e++;
		if (e > s) {
			w[nw] = s;
			wl[nw++] = (size_t)(e - s);
		}
		s = e + 1;
	}
	/* "tachyon-bpf COMMAND ...": the options begin after the command */
	if (nw && wl[0] == 11 && !memcmp(w[0], "tachyon-bpf", 11))
		i = 2;
	for (; i < nw; i++) {
		const char *name = w[i], *arg;
		size_t len = wl[i], alen;
		struct tb_usage_opt *o;

		unbracket(&name, &len);
		if (!is_option_name(name, len) || !(o = add(opts, n, max, name, len)))
			continue;
		if (o->arg[0] || i + 1 >= nw || strchr("-|[", w[i + 1][0]))
			continue;
		arg = w[i + 1];
		alen = wl[i + 1];
		unbracket(&arg, &alen);
		if (alen && !(alen >= 3 && !memcmp(arg, "...", 3)))
			copy(o->arg, TB_UOPT_ARG, arg, alen);
	}
}

size_t tb_usage_options(const char *text, size_t len, struct tb_usage_opt *opts, size_t max)
{
	struct tb_usage_iter it;
	struct tb_uline l;
	size_t n = 0, item = 0;

	tb_usage_iter_init(&it, text, len);
	while (tb_usage_next(&it, &l)) {
		if (l.kind == TB_UL_ITEM) {
			item = n;
			from_term(&l, opts, &n, max);
		} else if (l.kind == TB_UL_MORE && !tb_usage_is_row(&l)) {
			for (size_t i = item; i < n; i++)
				append(opts[i].help, TB_UOPT_HELP, l.text, l.text_len);
		} else if (l.kind == TB_UL_MORE) {
			item = n; /* a table under the item (-o's formats): its help ends before */
		}
	}
	tb_usage_iter_init(&it, text, len);
	while (tb_usage_next(&it, &l))
		if (l.kind == TB_UL_SYNOPSIS)
			from_synopsis(&l, opts, &n, max);
	return n;
}

char *tb_usage_capture(void (*usage)(FILE *f), size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	usage(f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
