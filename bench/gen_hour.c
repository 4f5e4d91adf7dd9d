/* gen_hour.c: writes a generated host-wide capture with a timeline, as the
 * agent would after SECONDS (default 3600) at HZ (1000) on CPUS (8) CPUs:
 * PROCS (40) Python processes of 5 threads each, every CPU busy half the
 * time, each thread's hot stacks changing every 5 minutes (so time slices
 * differ), a burst of one process at 10% and 60% of the capture.  For
 * bench/timeline.sh: the capture's size, and the page of it.
 *
 *   gen_hour OUT.tbp [SECONDS [CPUS [PROCS]]]
 *
 * Built against build/libtachyon.a (bench/timeline.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "model/profile.h"
#include "output/tbp.h"
#include "xorshift.h"

#define THREADS_PER_PROC 5
#define FUNCS_PER_PROC 80
#define STACKS_PER_THREAD 100
#define PHASE_MS (300 * 1000)
#define HZ 1000

static void count_state(struct tb_profile *p, uint32_t th, unsigned state, uint64_t ns)
{
	(*tb_tinfo_state(&p->threads[th], state))++;
	tb_timeline_add(&p->tl, &p->tl.states, th * TB_TS_N + state, ns, ns, 1);
}

int main(int argc, char **argv)
{
	unsigned seconds = argc > 2 ? (unsigned)atoi(argv[2]) : 3600, cpus = argc > 3 ? (unsigned)atoi(argv[3]) : 8;
	unsigned procs = argc > 4 ? (unsigned)atoi(argv[4]) : 40, nthreads = procs * THREADS_PER_PROC;
	uint32_t *first_stack = calloc(nthreads, sizeof(uint32_t));
	struct tb_sframe frames[24];
	struct tb_profile p;
	struct tb_target t;
	uint64_t t0 = 1000000000ull, samples = 0;
	FILE *f;

	if (argc < 2 || !seconds || !cpus || !procs) {
		fprintf(stderr, "usage: gen_hour OUT.tbp [SECONDS [CPUS [PROCS]]]\n");
		return 2;
	}
	tb_profile_init(&p);
	p.hz = HZ;
	p.max_depth = 128;
	p.duration_s = seconds;
	p.start_unix = (int64_t)time(NULL) - seconds;
	p.min_fraction = 0.001;
	for (unsigned i = 0; i < procs; i++) {
		uint32_t pid = 10000 + i * 10, code0 = p.sym.n;

		memset(&t, 0, sizeof(t));
		t.pid = (pid_t)pid;
		snprintf(t.comm, sizeof(t.comm), "python3.12");
		snprintf(t.cmdline, sizeof(t.cmdline), "python3.12 -m service%u --workers 4", i);
		snprintf(t.elf_path, sizeof(t.elf_path), "/usr/bin/python3.12");
		tb_layout_builtin(0x030c04f0, &t.layout);
		tb_profile_add_ended(&p, &t);
		for (unsigned k = 0; k < FUNCS_PER_PROC; k++) {
			char name[64], file[64];

			snprintf(name, sizeof(name), "Handler%u.step_%u", k % 7, k);
			snprintf(file, sizeof(file), "/srv/service%u/app/mod%u.py", i, k % 9);
			tb_sym_insert(&p.sym, pid, 0x7f0000000000ull + k * 0x1000, (uint16_t)k, 12, name, file,
				      (int32_t)(10 * k + 1), NULL, 0);
		}
		for (unsigned th = 0; th < THREADS_PER_PROC; th++) {
			char tname[32];
			uint32_t ti;

			snprintf(tname, sizeof(tname), th ? "worker-%u" : "MainThread", th);
			ti = tb_profile_add_thread(&p, pid, pid + th, pid + th, tname);
			first_stack[ti] = p.nstacks;
			for (unsigned s = 0; s < STACKS_PER_THREAD; s++) {
				uint16_t depth = (uint16_t)(6 + next_rand() % 16);

				for (uint16_t d = 0; d < depth; d++) /* root 0, callees deeper */
					frames[depth - 1 - d] = (struct tb_sframe){
						code0 + (uint32_t)(d == 0 ? 0 : (d * 7 + s * (d > 3)) % FUNCS_PER_PROC),
						(int32_t)(2 * (next_rand() % 40)), 0, 0 };
				tb_profile_add_stack(&p, ti, 0, frames, depth, 0);
			}
		}
	}
	tb_timeline_start(&p.tl, t0);
	for (uint64_t ms = 0; ms < (uint64_t)seconds * 1000; ms++) {
		uint64_t ns = t0 + ms * 1000000ull;
		int burst = ms % ((uint64_t)seconds * 1000 / 2) > (uint64_t)seconds * 100 &&
			    ms % ((uint64_t)seconds * 1000 / 2) < (uint64_t)seconds * 120;

		for (unsigned c = 0; c < cpus; c++) {
			uint64_t r = next_rand();
			uint32_t th, s;

			if ((r & 1) && !burst)
				continue; /* idle half the time */
			th = burst && c < cpus / 2 ? (uint32_t)((r >> 8) % THREADS_PER_PROC) : (uint32_t)((r >> 8) % nthreads);
			/* the thread's hot quarter of its stacks this phase, skewed */
			s = (uint32_t)(((ms / PHASE_MS + th) % 4) * (STACKS_PER_THREAD / 4) +
				       ((r >> 32) % 25) * ((r >> 40) % 25) / 25);
			s += first_stack[th];
			p.stacks[s].count++;
			tb_timeline_add(&p.tl, &p.tl.stacks, s, ns, ns, 1);
			p.threads[th].samples++;
			p.threads[th].python_samples++;
			count_state(&p, th, TB_TS_ON_CPU, ns);
			if ((r >> 48) % 10)
				count_state(&p, th, TB_TS_GIL_HELD, ns);
			if ((r >> 52) % 50 == 0)
				count_state(&p, th, TB_TS_GC, ns);
			samples++;
		}
	}
	for (uint32_t i = 0; i < p.nthreads; i++) {
		int pi = tb_profile_find_process(&p, p.threads[i].pid);

		if (pi >= 0)
			p.procs[pi].samples += p.threads[i].samples;
	}
	p.samples = p.python_samples = samples;
	f = fopen(argv[1], "wbe");
	if (!f || tb_write_capture(&p, f) || fclose(f)) {
		fprintf(stderr, "gen_hour: cannot write %s\n", argv[1]);
		return 1;
	}
	printf("%llu samples, %u threads, %u stacks, %u buckets of %.2f s, %u + %u cells\n",
	       (unsigned long long)samples, p.nthreads, p.nstacks, p.tl.nbuckets, p.tl.width_ns / 1e9,
	       p.tl.stacks.n, p.tl.states.n);
	tb_profile_free(&p);
	free(first_stack);
	return 0;
}
