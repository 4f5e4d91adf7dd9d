/* clock.c: monotonic time and the agent's CPU time (capture/clock.h). */
#include <sys/resource.h>
#include <time.h>
#include "lib/clock.h"
#include "capture/clock.h"

uint64_t tb_mono_ns(void)
{
	return tb_clock_ns(CLOCK_MONOTONIC); /* the clock of bpf_ktime_get_ns() */
}

double tb_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double tb_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}
