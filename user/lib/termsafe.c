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

const char *tb_termsafe(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0, last_fit = 0; /* last_fit: where "..." goes if needed */
	char one[TB_TERMSAFE_MAX];

	if (len < 4) {
		if (len)
			buf[0] = '\0';
		return buf;
	}
	while (*p) {
		size_t n;

		p += tb_termsafe_char(p, 4, one, &n);
		if (used + n + 1 > len) {
			memcpy(buf + last_fit, "...", 4);
			return buf;
		}
		memcpy(buf + used, one, n);
		used += n;
		if (used + 4 <= len)
			last_fit = used;
	}
	buf[used] = '\0';
	return buf;
}

void tb_termsafe_put(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char one[TB_TERMSAFE_MAX];

	while (*p) {
		size_t n;

		p += tb_termsafe_char(p, 4, one, &n);
		fwrite(one, 1, n, f);
	}
}
