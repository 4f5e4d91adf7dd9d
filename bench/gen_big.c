/* gen_big.c: writes a generated capture of many unique stacks, as a busy
 * host leaves after an hour (issue 18): 1,000,704 samples in STACKS unique
 * stacks of depth 8-30 over 3,000 functions, one process, one thread; each
 * leaf has an opcode.  Deterministic (a fixed xorshift seed).  For
 * bench/big.sh: render time and memory as the tree grows (it prints the
 * number of tree nodes too).
 *
 *   gen_big OUT.tbp [STACKS]     (default 100000)
 *
 * Built against build/libtachyon.a (bench/big.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/profile.h"
#include "model/tree.h"
#include "output/tbp.h"
#include "xorshift.h"

#define SAMPLES 1000704ull
#define FUNCS 3000
#define ROOTS 10        /* the stacks' outermost functions: the rest differ below them */
#define MIN_DEPTH 8
#define MAX_DEPTH 30
#define PID 4242

int main(int argc, char **argv)
{
	long want = argc > 2 ? atol(argv[2]) : 100000;
	uint32_t nstacks = want > 0 && (uint64_t)want <= SAMPLES ? (uint32_t)want : 0, code0;
	struct tb_sframe frames[MAX_DEPTH];
	struct tb_profile p;
	struct tb_target t;
	struct tb_tree tree;
	FILE *f;

	if (argc < 2 || !nstacks) {
		fprintf(stderr, "usage: gen_big OUT.tbp [STACKS (1..%llu)]\n", SAMPLES);
		return 2;
	}
	tb_profile_init(&p);
	p.hz = 1000;
	p.max_depth = 128;
	p.duration_s = (double)SAMPLES / 1000;
	p.start_unix = 1764547200;  /* fixed (2025-12-01 00:00 UTC): the same file at every run */
	p.min_fraction = 0;   /* every node kept, as the issue measured */
	memset(&t, 0, sizeof(t));
	t.pid = PID;
	snprintf(t.comm, sizeof(t.comm), "python3.12");
	snprintf(t.cmdline, sizeof(t.cmdline), "python3.12 -m bigservice");
	snprintf(t.elf_path, sizeof(t.elf_path), "/usr/bin/python3.12");
	tb_layout_builtin(0x030c04f0, &t.layout);
	tb_profile_add_ended(&p, &t);
	code0 = p.sym.n;
	for (unsigned k = 0; k < FUNCS; k++) {
		char name[64], file[64];

		snprintf(name, sizeof(name), "Module%u.Class%u.method_%u", k % 23, k % 101, k);
		snprintf(file, sizeof(file), "/srv/bigservice/pkg%u/mod%u.py", k % 17, k % 211);
		tb_sym_insert(&p.sym, PID, 0x7f0000000000ull + k * 0x1000, (uint16_t)k, 12, name, file,
			      (int32_t)(10 * k + 1), NULL, 0);
	}
	tb_profile_add_thread(&p, PID, PID, PID, "MainThread");
	for (uint32_t s = 0; s < nstacks; s++) {
		uint16_t depth = (uint16_t)(MIN_DEPTH + next_rand() % (MAX_DEPTH - MIN_DEPTH + 1));
		uint64_t count = SAMPLES / nstacks + (s < SAMPLES % nstacks);

		for (uint16_t d = 0; d < depth; d++) /* frames[0] is the leaf, frames[depth - 1] the root */
			frames[depth - 1 - d] = (struct tb_sframe){
				code0 + (uint32_t)(d == 0 ? s % ROOTS : next_rand() % FUNCS),
				(int32_t)(2 * (next_rand() % 40)), 0, 0 };
		frames[0].opcode = (uint8_t)(1 + next_rand() % 100);
		frames[0].has_opcode = 1;
		tb_profile_add_stack(&p, 0, 0, frames, depth, count);
	}
	p.threads[0].samples = p.threads[0].python_samples = SAMPLES;
	p.threads[0].on_cpu = SAMPLES;
	p.procs[0].samples = SAMPLES;
	p.samples = p.python_samples = SAMPLES;
	f = fopen(argv[1], "wbe");
	if (!f || tb_write_capture(&p, f) || fclose(f)) {
		fprintf(stderr, "gen_big: cannot write %s\n", argv[1]);
		return 1;
	}
	tb_tree_build(&tree, &p, 0);
	printf("%llu samples, %u unique stacks, %u tree nodes\n", SAMPLES, p.nstacks, tree.nn);
	tb_tree_free(&tree);
	tb_profile_free(&p);
	return 0;
}
