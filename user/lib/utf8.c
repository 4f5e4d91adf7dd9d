/* utf8.c: UTF-8 validation and encoding (RFC 3629, table 3-7 of the Unicode
 * standard: well-formed byte sequences). */
#include "lib/utf8.h"

static inline int cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

int tb_utf8_len(const unsigned char *s, size_t avail)
{
	unsigned char c;

	if (!avail)
		return 0;
	c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return avail >= 2 && cont(s[1]) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (avail < 2 || !cont(s[1]) ||
		    (c == 0xe0 && s[1] < 0xa0) ||   /* overlong */
		    (c == 0xed && s[1] >= 0xa0))    /* surrogate */
			return 0;
		return avail >= 3 && cont(s[2]) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (avail < 2 || !cont(s[1]) ||
		    (c == 0xf0 && s[1] < 0x90) ||   /* overlong */
		    (c == 0xf4 && s[1] >= 0x90))    /* above U+10FFFF */
			return 0;
		if (avail < 3 || !cont(s[2]))
			return 0;
		return avail >= 4 && cont(s[3]) ? 4 : 0;
	}
	return 0; /* continuation byte, 0xc0/0xc1 (overlong), 0xf5.. */
}

int tb_utf8_encode(uint32_t cp, unsigned char out[4])
{
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		cp = 0xfffd;
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | (cp >> 6));
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | (cp >> 12));
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (unsigned char)(0xf0 | (cp >> 18));
	out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}
