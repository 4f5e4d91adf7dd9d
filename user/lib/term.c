/* term.c: raw ANSI escapes and termios for tachyon-bpf top.  The saved
 * terminal state is restored by tb_term_leave, which atexit, the handlers
 * of fatal signals and Ctrl-Z here, and the abort on a second Ctrl-C
 * (capture/session.c, which handles the signals that end a capture) call. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include "lib/term.h"

#define ENTER_SEQ "\033[?1049h\033[?25l\033[H\033[2J"
#define LEAVE_SEQ "\033[0m\033[?25h\033[?1049l"

static struct termios saved;
static volatile sig_atomic_t active, resized, suspend;
static int in_fd = -1, tty_fd = 1;
static unsigned char keybuf[64];
static unsigned keylen;

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

void tb_term_leave(void)
{
	if (!active)
		return;
	active = 0;
	write_all(1, LEAVE_SEQ, sizeof(LEAVE_SEQ) - 1);
	tcsetattr(tty_fd, TCSADRAIN, &saved);
}

static void on_winch(int sig)
{
	(void)sig;
	resized = 1;
}

static void on_tstp(int sig)
{
	(void)sig;
	suspend = 1;
}

static void on_fatal(int sig)
{
	tb_term_leave();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void handle(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void install_handlers(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };

	handle(SIGWINCH, on_winch);
	handle(SIGTSTP, on_tstp);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		handle(fatal[i], on_fatal);
}

/* Save the terminal's state, make it raw (signals kept) and switch screens. */
static int take_terminal(void)
{
	struct termios raw;

	if (tcgetattr(tty_fd, &saved))
		return -1;
	raw = saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | IEXTEN);
	raw.c_iflag &= ~(tcflag_t)(IXON | ICRNL);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(tty_fd, TCSADRAIN, &raw))
		return -1;
	active = 1;
	write_all(1, ENTER_SEQ, sizeof(ENTER_SEQ) - 1);
	return 0;
}

int tb_term_enter(char *err, unsigned errlen)
{
	static int registered;

	if (!isatty(1)) {
		snprintf(err, errlen, "top needs a terminal on stdout (use -o FILE to write a profile instead)");
		return -1;
	}
	in_fd = isatty(0) ? 0 : open("/dev/tty", O_RDONLY | O_CLOEXEC);
	tty_fd = in_fd >= 0 ? in_fd : 1;
	if (!registered) {
		atexit(tb_term_leave);
		registered = 1;
	}
	install_handlers();
	if (take_terminal()) {
		snprintf(err, errlen, "cannot set up the terminal: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void tb_term_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* One key from the front of keybuf (escape sequences of arrows as one). */
static int take_key(void)
{
	unsigned used = 1;
	int key = keybuf[0];

	if (key == 0x1b && keylen >= 3 && keybuf[1] == '[' && (keybuf[2] == 'A' || keybuf[2] == 'B')) {
		key = keybuf[2] == 'A' ? TB_KEY_UP : TB_KEY_DOWN;
		used = 3;
	} else if (key == 0x1b && keylen >= 2 && (keybuf[1] == '[' || keybuf[1] == 'O')) {
		used = keylen; /* another sequence: drop it */
	}
	keylen -= used;
	memmove(keybuf, keybuf + used, keylen);
	return key;
}

int tb_term_key(int timeout_ms)
{
	struct pollfd pfd = { .fd = in_fd, .events = POLLIN };
	ssize_t n;

	if (keylen)
		return take_key();
	if (in_fd < 0) {
		poll(NULL, 0, timeout_ms);
		return -1;
	}
	if (poll(&pfd, 1, timeout_ms) <= 0 || !(pfd.revents & POLLIN))
		return -1;
	n = read(in_fd, keybuf, sizeof(keybuf));
	if (n <= 0)
		return -1;
	keylen = (unsigned)n;
	return take_key();
}

void tb_term_write(const char *buf, unsigned long len)
{
	write_all(1, buf, len);
}

int tb_term_resized(void)
{
	int r = resized;

	resized = 0;
	return r;
}

void tb_term_handle_suspend(void)
{
	if (!suspend)
		return;
	suspend = 0;
	tb_term_leave();
	signal(SIGTSTP, SIG_DFL);
	raise(SIGTSTP); /* stopped here until fg */
	handle(SIGTSTP, on_tstp);
	take_terminal();
	resized = 1; /* redraw everything */
}
