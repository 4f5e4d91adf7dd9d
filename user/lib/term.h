/* term.h: a full-screen terminal without ncurses (tachyon-bpf top): raw
 * keys through termios, the alternate screen through ANSI escapes, and a
 * terminal that is put back on exit, on fatal signals, on Ctrl-Z and on
 * the abort of a second Ctrl-C (capture/session.c). */
#ifndef TB_TERM_H
#define TB_TERM_H

#define TB_KEY_UP   0x101
#define TB_KEY_DOWN 0x102

/* Enter the alternate screen with keys unbuffered and unechoed and the
 * cursor hidden; installs the atexit handler and those of fatal signals,
 * SIGWINCH and SIGTSTP (not those that end a capture: capture/session.c).
 * 0 ok; -1 with err set (stdout is not a terminal, ...). */
int tb_term_enter(char *err, unsigned errlen);
/* Restore the terminal (idempotent, async-signal-safe). */
void tb_term_leave(void);
/* Current size in rows and columns (TIOCGWINSZ; 24x80 if unknown). */
void tb_term_size(int *rows, int *cols);
/* Wait up to timeout_ms for a key: the key (TB_KEY_* for arrows), or -1. */
int tb_term_key(int timeout_ms);
/* Write a whole frame to stdout. */
void tb_term_write(const char *buf, unsigned long len);
/* SIGWINCH seen since the last call (or a resume from Ctrl-Z). */
int tb_term_resized(void);
/* Ctrl-Z was pressed: give the terminal back, stop, take it again. */
void tb_term_handle_suspend(void);

#endif
