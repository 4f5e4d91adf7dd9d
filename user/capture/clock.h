/* clock.h: the clocks of a capture: monotonic time (the clock of the BPF
 * program's bpf_ktime_get_ns()) and the agent's own CPU time. */
#ifndef TB_CLOCK_H
#define TB_CLOCK_H
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds, comparable with the records' time_ns. */
uint64_t tb_mono_ns(void);
/* The same in seconds. */
double tb_mono_s(void);
/* User + system CPU seconds this process has used so far. */
double tb_cpu_s(void);

#endif
