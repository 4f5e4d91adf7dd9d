/* clock.c: a clock's reading in nanoseconds (lib/clock.h). */
#include "lib/clock.h"

uint64_t tb_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
