/* chain.c: a three-deep C call chain for tests/native/run.py, built -O2
 * -fomit-frame-pointer (so only the .eh_frame tables can unwind it):
 * chain_a -> chain_b -> chain_c, none inlined and none a tail call. */
#include <stdint.h>

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
