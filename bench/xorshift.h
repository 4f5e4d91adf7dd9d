/* xorshift.h: the bench generators' random numbers: xorshift64 from a fixed
 * seed, so that a generated capture is the same at every run. */
#ifndef TB_BENCH_XORSHIFT_H
#define TB_BENCH_XORSHIFT_H
#include <stdint.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#endif
