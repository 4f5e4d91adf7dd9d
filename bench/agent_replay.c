/* agent_replay.c: the agent's CPU per sample without the BPF side, the
 * machine's load or the ring's wake-ups: ring-buffer records as the BPF
 * program sends them at RATE Hz (one process, one thread, GIL held) replayed
 * through tb_profile_add_record, timed with the process's CPU clock.  The
 * records draw from STACKS raw stacks (depth 3-10, one in ten 28-35 deep: a
 * recursion, as bench/cpu_bound.py's), skewed so that few stacks are most
 * samples, and the leaf's opcode varies; code objects are registered first
 * (no target reads).  Deterministic (a fixed xorshift seed).
 *
 *   agent_replay [RECORDS] [STACKS] [RATE] [cold]   (default 400000 3000 10000)
 *
 * Prints ns per record (the best of 5 passes over the same records, each
 * into a fresh profile) and the profile's unique stacks.  With `cold`, as
 * the live agent sees them: the records of each 20 ms (the agent's poll
 * period) are laid out one after another in a 4 MiB ring, and 8 MiB of
 * other memory is walked before they are read (the target running on the
 * core meanwhile), so the records and the profile's tables come from
 * memory, not the cache; that walk's own time is measured alone and taken
 * off.  Built against
 * build/libtachyon.a:
 *   cc -O2 -Iinclude -Iuser bench/agent_replay.c build/libtachyon.a $(make -s print-ldlibs) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "model/profile.h"
#include "xorshift.h"

#define PID 4242
#define FUNCS 120
#define PASSES 5
#define MAX_DEPTH 35
#define RING_BYTES (4u << 20)
#define THRASH_BYTES (8u << 20)
#define POLL_NS 20000000ull

struct raw {
	struct tb_sample_hdr h;
	struct tb_frame f[MAX_DEPTH];
};

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned char *ring, *thrash;

/* The records of one poll period into the ring from *at (wrapping), then the
 * cache evicted; process: hand them to p (NULL: the walk's own cost). */
static void cold_batch(struct tb_profile *p, const struct raw *shapes, const uint32_t *order, long from,
		       long to, long rate, size_t *at)
{
	size_t start = *at, pos;
	volatile unsigned char sink = 0;

	for (long i = from; i < to; i++) {
		const struct raw *r = &shapes[order[i]];
		size_t len = sizeof(r->h) + r->h.depth * sizeof(r->f[0]);
		struct raw *w;

		if (*at + len > RING_BYTES)
			*at = 0;
		w = (struct raw *)(ring + *at);
		memcpy(w, r, len);
		w->h.time_ns = 1000000000ull + (uint64_t)i * (1000000000ull / (uint64_t)rate);
		w->f[0].opcode = (uint8_t)(i & 0x7f);
		*at += (len + 7) & ~(size_t)7;
	}
	for (size_t k = 0; k < THRASH_BYTES; k += 64)
		thrash[k]++;
	sink = thrash[0];
	(void)sink;
	if (!p)
		return;
	pos = start;
	for (long i = from; i < to; i++) {
		struct raw *w;

		if (pos + sizeof(w->h) + shapes[order[i]].h.depth * sizeof(w->f[0]) > RING_BYTES)
			pos = 0;
		w = (struct raw *)(ring + pos);
		if (tb_profile_add_record(p, w, sizeof(w->h) + w->h.depth * sizeof(w->f[0]))) {
			fprintf(stderr, "agent_replay: a record was refused\n");
			exit(1);
		}
		pos += (sizeof(w->h) + w->h.depth * sizeof(w->f[0]) + 7) & ~(size_t)7;
	}
}

/* CPU seconds of a pass: every record through p (NULL: the cold walk alone). */
static double cold_pass(struct tb_profile *p, const struct raw *shapes, const uint32_t *order, long records,
			long rate)
{
	long batch = (long)((uint64_t)rate * POLL_NS / 1000000000ull);
	size_t at = 0;
	double t0 = cpu_s();

	if (batch < 1)
		batch = 1;
	for (long i = 0; i < records; i += batch)
		cold_batch(p, shapes, order, i, i + batch < records ? i + batch : records, rate, &at);
	return cpu_s() - t0;
}

static void setup(struct tb_profile *p, unsigned rate)
{
	struct tb_target t;

	tb_profile_init(p);
	p->hz = rate;
	p->max_depth = 128;
	memset(&t, 0, sizeof(t));
	t.pid = PID;
	snprintf(t.comm, sizeof(t.comm), "python3.15");
	tb_layout_builtin(0x030f00a0, &t.layout);
	tb_profile_add_process(p, &t);
	for (unsigned k = 0; k < FUNCS; k++) {
		char name[64];

		snprintf(name, sizeof(name), "func_%u", k);
		tb_sym_insert(&p->sym, PID, 0x7f0000000000ull + k * 0x1000, (uint16_t)k, 15, name, "/app/work.py",
			      (int32_t)(10 * k + 1), NULL, 0);
	}
}

int main(int argc, char **argv)
{
	long records = argc > 1 ? atol(argv[1]) : 400000, stacks = argc > 2 ? atol(argv[2]) : 3000;
	long rate = argc > 3 ? atol(argv[3]) : 10000;
	int cold = argc > 4 && !strcmp(argv[4], "cold");
	double walk = 0;
	struct raw *shapes, *rec;
	uint32_t *order;
	double best = 0;
	struct tb_profile p;

	if (records < 1 || records > 100000000 || stacks < 1 || stacks > 1000000 || rate < 1 || rate > 100000) {
		fprintf(stderr, "usage: agent_replay [RECORDS (1..1e8)] [STACKS (1..1e6)] [RATE (1..1e5)] [cold]\n");
		return 2;
	}
	shapes = calloc((size_t)stacks, sizeof(*shapes));
	order = calloc((size_t)records, sizeof(*order));
	ring = calloc(1, RING_BYTES);
	thrash = calloc(1, THRASH_BYTES);
	if (!shapes || !order || !ring || !thrash)
		return 1;
	for (long s = 0; s < stacks; s++) {
		struct raw *r = &shapes[s];
		uint16_t depth = (uint16_t)(next_rand() % 10 ? 3 + next_rand() % 8 : 28 + next_rand() % 8);

		r->h.type = TB_REC_SAMPLE;
		r->h.pid = r->h.ns_pid = PID;
		r->h.tid = r->h.ns_tid = PID;
		r->h.flags = TB_F_GIL_HELD;
		r->h.depth = depth;
		for (uint16_t d = 0; d < depth; d++) { /* f[0] the leaf; the roots shared */
			uint64_t k = d >= depth - 2 ? (uint64_t)(depth - 1 - d) : 2 + next_rand() % (FUNCS - 2);

			r->f[d] = (struct tb_frame){ 0x7f0000000000ull + k * 0x1000, (int32_t)(2 * (next_rand() % 60)),
						     (uint16_t)k, 0, 0 };
		}
	}
	for (long i = 0; i < records; i++) { /* skewed: stack s about as often as 1 / sqrt(s) */
		uint64_t u = next_rand() % (uint64_t)stacks;

		order[i] = (uint32_t)(u * u / (uint64_t)stacks);
	}
	for (int pass = 0; cold && pass < PASSES; pass++) {
		double t = cold_pass(NULL, shapes, order, records, rate);

		if (!pass || t < walk)
			walk = t;
	}
	for (int pass = 0; pass < PASSES; pass++) {
		double t0, t;

		setup(&p, (unsigned)rate);
		t0 = cpu_s();
		for (long i = 0; i < records && !cold; i++) {
			rec = &shapes[order[i]];
			rec->h.time_ns = 1000000000ull + (uint64_t)i * (1000000000ull / (uint64_t)rate);
			rec->f[0].opcode = (uint8_t)(i & 0x7f);
			if (tb_profile_add_record(&p, rec, sizeof(rec->h) + rec->h.depth * sizeof(rec->f[0]))) {
				fprintf(stderr, "agent_replay: a record was refused\n");
				return 1;
			}
		}
		t = cold ? cold_pass(&p, shapes, order, records, rate) - walk : cpu_s() - t0;
		if (!pass || t < best)
			best = t;
		if (pass == PASSES - 1)
			printf("%ld records, %ld raw stacks, %u unique stacks, %llu frames%s: %.1f ns per record\n",
			       records, stacks, p.nstacks, (unsigned long long)p.frames, cold ? ", cold" : "",
			       best * 1e9 / (double)records);
		tb_profile_free(&p);
	}
	free(shapes);
	free(order);
	free(ring);
	free(thrash);
	return 0;
}
