/* chain.c: a three-deep C call chain for tests/native/run.py, built -O2
 * -fomit-frame-pointer (so only the .eh_frame tables can unwind it):
 * chain_a -> chain_b -> chain_c, none inlined and none a tail call; and
 * chain_start_worker, a pthread of its own (named c-worker, no Python thread
 * state) running chain_worker -> chain_a -> ... for some seconds; and
 * chain_interrupted, which spins while a SIGALRM every 20 ms runs
 * chain_handler -> chain_a -> ... on its stack: samples there are unwound
 * through the signal frame (the vDSO's __kernel_rt_sigreturn on arm64,
 * libc's __restore_rt on x86-64) back to chain_interrupted. */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;

NOINLINE uint64_t chain_c(uint64_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (uint64_t i = 0; i < n; i++)
		h = (h ^ i) * 1099511628211ull;
	return h;
}

NOINLINE uint64_t chain_b(uint64_t n)
{
	uint64_t h = chain_c(n);

	sink = h;          /* work after the call: no tail call */
	return h + 1;
}

NOINLINE uint64_t chain_a(uint64_t n)
{
	uint64_t h = chain_b(n);

	sink = h;
	return h + 2;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double worker_seconds;

NOINLINE void *chain_worker(void *arg)
{
	double end = now_s() + worker_seconds;

	(void)arg;
	while (now_s() < end)
		sink = chain_a(200000);
	return NULL;
}

/* Start the worker for seconds; 0, or the pthread_create error. */
int chain_start_worker(double seconds)
{
	pthread_t t;
	int rc;

	worker_seconds = seconds;
	rc = pthread_create(&t, NULL, chain_worker, NULL);
	if (rc)
		return rc;
	pthread_setname_np(t, "c-worker");
	return pthread_detach(t);
}

/* half of each 20 ms in the handler */
NOINLINE void chain_handler(int sig)
{
	double end = now_s() + 0.010;

	(void)sig;
	while (now_s() < end)
		sink = chain_a(100000);
}

/* Spin for seconds (clock_gettime: the vDSO) under a SIGALRM every 20 ms
 * handled by chain_handler; 0, or -1 if the handler or timer failed. */
NOINLINE int chain_interrupted(double seconds)
{
	struct sigaction sa = { .sa_handler = chain_handler, .sa_flags = SA_RESTART };
	struct itimerval every = { { 0, 20000 }, { 0, 20000 } }, off = { { 0, 0 }, { 0, 0 } };
	double end = now_s() + seconds;

	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &every, NULL))
		return -1;
	while (now_s() < end)
		sink = sink * 3 + 1;
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	return 0;
}
