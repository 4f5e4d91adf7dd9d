/* jsonw.h: small helpers to write JSON safely. */
#ifndef TB_JSONW_H
#define TB_JSONW_H
#include <stdio.h>

/* Write s as a JSON string literal: invalid UTF-8 becomes U+FFFD, control
 * characters and <, >, & are \u-escaped (safe to embed in HTML too). */
void tb_json_str(FILE *f, const char *s);

#endif
