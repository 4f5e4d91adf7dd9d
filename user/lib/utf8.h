/* utf8.h: the one UTF-8 validator and encoder (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF).  Names come from profiled
 * processes and capture files: anything may arrive. */
#ifndef TB_UTF8_H
#define TB_UTF8_H
#include <stddef.h>
#include <stdint.h>

#define TB_UTF8_REPLACEMENT "\xef\xbf\xbd"   /* U+FFFD */

/* Length (1-4) of the valid UTF-8 sequence at s, of at most avail bytes;
 * 0 if s does not start one (or avail is 0).  Reads no byte past avail. */
int tb_utf8_len(const unsigned char *s, size_t avail);
/* The same for a NUL-terminated string (the NUL ends any sequence). */
static inline int tb_utf8_len_z(const unsigned char *s)
{
	return tb_utf8_len(s, 4);
}
/* Encode code point cp into out (4 bytes of room); surrogates and values
 * above U+10FFFF become U+FFFD.  Returns the length. */
int tb_utf8_encode(uint32_t cp, unsigned char out[4]);

#endif
