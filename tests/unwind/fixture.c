/* fixture.c: code for the unwind tests, built by tests/unwind/run.py with
 * several compilers and flags (frame pointers or not, lazy PLT, without
 * .eh_frame_hdr): frameless and frame-pointer functions, calls through the
 * PLT, a big stack frame, a realigned stack (its CFA is an expression), a
 * hand-written signal trampoline (.cfi_signal_frame) and a real signal
 * handler.  Run as a target it stops itself (SIGSTOP) in its leaf:
 *   fixture plain     main -> outer -> middle -> leaf (stops)
 *   fixture signal    main -> spin loop, SIGALRM handler -> leaf (stops) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile int sink;
static volatile sig_atomic_t stopped;

__attribute__((noinline)) static void leaf(int n)
{
	sink += n;
	raise(SIGSTOP);           /* through the PLT */
	sink -= n;
}

__attribute__((noinline)) static void middle(int n)
{
	char buf[4096];           /* a frame the CFA offset must span */

	memset(buf, n, sizeof(buf));
	leaf(buf[n & 4095]);
	sink += buf[7];
}

__attribute__((noinline)) static void outer(int n)
{
	middle(n + 1);
	sink++;
}

/* a frame larger than the rows can describe (CFA offset > 8 * 65535) */
__attribute__((noinline)) void huge_frame(int n)
{
	volatile char buf[600000];

	buf[n] = 1;
	sink += buf[n / 2];
}

/* realigned stack with alloca: GCC's CFA goes through r10 (DRAP), then an
 * expression (*(rbp - 8)) */
__attribute__((noinline)) void realigned(int n)
{
	volatile char a[64] __attribute__((aligned(64)));
	char *p = __builtin_alloca(n);

	p[0] = 1;
	a[n & 63] = p[0];
	sink += a[3];
}

/* a trampoline marked as a signal frame, as libc's __restore_rt */
__asm__(".text\n"
	".globl fake_trampoline\n"
	".type fake_trampoline, @function\n"
	"nop\n"
	"fake_trampoline:\n"
	".cfi_startproc simple\n"
	".cfi_signal_frame\n"
	".cfi_def_cfa rsp, 8\n"
	"mov $15, %rax\n"
	"syscall\n"
	"ret\n"
	".cfi_endproc\n"
	".size fake_trampoline, .-fake_trampoline\n");

static void on_alarm(int sig)
{
	(void)sig;
	stopped = 1;
	leaf(sig);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "plain") == 0) {
		outer(3);
	} else if (argc > 1 && strcmp(argv[1], "signal") == 0) {
		signal(SIGALRM, on_alarm);
		alarm(1);
		while (!stopped)
			sink++;
	} else {
		huge_frame(argc);
		realigned(argc);
		printf("usage: fixture plain|signal\n");
		return 2;
	}
	return 0;
}
