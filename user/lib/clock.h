/* clock.h: a clock's reading in nanoseconds (CLOCK_MONOTONIC, a thread's
 * CPU time): the one conversion from struct timespec. */
#ifndef TB_LIB_CLOCK_H
#define TB_LIB_CLOCK_H
#include <stdint.h>
#include <time.h>

uint64_t tb_clock_ns(clockid_t id);

#endif
