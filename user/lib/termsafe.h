/* termsafe.h: the one way text from a target or a capture reaches a
 * terminal (summary, progress and skip messages, dump, top).  Names,
 * file names and command lines are hostile: an escape sequence in one
 * could retitle the terminal, clear the screen or forge a line.  What
 * cannot be shown as it is is shown escaped, for reading (the forms are
 * not meant to be reversible; a backslash stays a backslash):
 *   \xNN    a byte that is a C0 control (incl. ESC, newline, tab) or DEL,
 *           or that is not part of valid UTF-8;
 *   \uNNNN  a valid character that a terminal would obey rather than
 *           show: a C1 control (U+0080-U+009F) or a bidi embedding,
 *           override or isolate (U+202A-U+202E, U+2066-U+2069).
 * Everything else (printable ASCII, other valid UTF-8) is copied. */
#ifndef TB_TERMSAFE_H
#define TB_TERMSAFE_H
#include <stddef.h>
#include <stdio.h>

/* Room for the safe form of one character: "\u202e" is 6 bytes. */
#define TB_TERMSAFE_MAX 6

/* The safe form of the character at s (avail >= 1 bytes; a NUL-terminated
 * string may pass 4, its NUL ends any sequence): written to out (no NUL),
 * its length in *outlen.  Returns the bytes of s it stands for (1 to 4). */
size_t tb_termsafe_char(const unsigned char *s, size_t avail, char out[TB_TERMSAFE_MAX], size_t *outlen);
/* The safe form of s written to f, however long. */
void tb_termsafe_put(FILE *f, const char *s);
/* One message line: prefix (ours, written as it is), the safe form of s
 * (a target's or a capture's: an error naming its files, ...), newline. */
void tb_termsafe_line(FILE *f, const char *prefix, const char *s);

#endif
