/* termsafe.c: makes text from targets and captures safe for a terminal
 * (the rules are in termsafe.h), one character at a time. */
#include <string.h>
#include "lib/utf8.h"
#include "lib/termsafe.h"

static const char hex[] = "0123456789abcdef";

/* bidi embeddings, overrides and isolates: they reorder what follows */
static int is_bidi_control(unsigned cp)
{
	return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t tb_termsafe_char(const unsigned char *s, size_t avail, char out[TB_TERMSAFE_MAX], size_t *outlen)
{
	int n = tb_utf8_len(s, avail);
	unsigned cp = 0;

	if (n == 0 || (n == 1 && (s[0] < 0x20 || s[0] == 0x7f))) {
		out[0] = '\\';
		out[1] = 'x';
		out[2] = hex[s[0] >> 4];
		out[3] = hex[s[0] & 15];
		*outlen = 4;
		return 1;
	}
	if (n == 2)
		cp = (unsigned)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
	else if (n == 3)
		cp = (unsigned)(s[0] & 0x0f) << 12 | (unsigned)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
	if ((cp >= 0x80 && cp <= 0x9f) || is_bidi_control(cp)) {
		out[0] = '\\';
		out[1] = 'u';
		for (int i = 0; i < 4; i++)
			out[2 + i] = hex[(cp >> (12 - 4 * i)) & 15];
		*outlen = 6;
		return (size_t)n;
	}
	memcpy(out, s, (size_t)n);
	*outlen = (size_t)n;
	return (size_t)n;
}

struct chunk {
	FILE *f;
	size_t used;
	char b[256];
};

static void flush_if_full(struct chunk *c, size_t need)
{
	if (c->used + need > sizeof(c->b)) {
		fwrite(c->b, 1, c->used, c->f);
		c->used = 0;
	}
}

/* prefix and end as they are, s made safe: in writes of up to 256 bytes
 * (stderr is unbuffered: a short line is one write, not one a character) */
static void put(FILE *f, const char *prefix, const char *s, const char *end)
{
	struct chunk c = { .f = f };
	const unsigned char *p = (const unsigned char *)s;

	for (const char *q = prefix; *q; q++) {
		flush_if_full(&c, 1);
		c.b[c.used++] = *q;
	}
	while (*p) {
		size_t n;

		flush_if_full(&c, TB_TERMSAFE_MAX);
		p += tb_termsafe_char(p, 4, c.b + c.used, &n);
		c.used += n;
	}
	for (const char *q = end; *q; q++) {
		flush_if_full(&c, 1);
		c.b[c.used++] = *q;
	}
	fwrite(c.b, 1, c.used, f);
}

void tb_termsafe_put(FILE *f, const char *s)
{
	put(f, "", s, "");
}

void tb_termsafe_line(FILE *f, const char *prefix, const char *s)
{
	put(f, prefix, s, "\n");
}
