/* gen_flood.c: writes the capture files of tests/hostile/flood.sh with the
 * agent's own capture writer (linked with build/libtachyon.a):
 *
 *   gen_flood flood N OUT.tbp       N function names that all fall in one
 *                                   slot of the old string table (FNV-1a,
 *                                   seed 0, any table size up to 2^19 slots)
 *   gen_flood threads N BASE CUR    two captures of N threads each (one
 *                                   process per two threads) for `diff`
 *   gen_flood files N OUT.tbp       N functions in N different source files
 *   gen_flood find-blocks           recomputes the colliding blocks below
 *
 * How the flood names collide.  The old table (lib/strtab.c before the keyed
 * hash) put a string in slot (h ^ h >> 29) & (slots - 1), h its 64-bit
 * FNV-1a (offset basis, prime 0x100000001b3, seed 0).  FNV-1a is a byte
 * XOR then a multiplication modulo 2^64, and bit i of a product depends only
 * on bits 0..i of the factors: two states equal in their low 48 bits stay
 * equal there whatever bytes follow.  The slot, for up to 2^19 slots, reads
 * bits 0..18 and 29..47 only.  So: from the state after "f_", find two
 * different 8-byte blocks that lead to the same low 48 bits (a birthday
 * collision on 48 bits: Floyd's cycle finding on block -> state, about 2^24
 * steps); from that common state find the next pair; 18 pairs give 2^18
 * names of 146 bytes, all with the same low 48 bits, hence one slot at
 * every table size the old reader went through for 200,000 names (the last
 * was 2^19).  Each name is checked against the old hash when written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/profile.h"
#include "output/tbp.h"

#define PID 4242
#define NBLOCKS 18
#define LOW48 ((1ull << 48) - 1)
#define OLD_SLOTS (1u << 19)

static const char PREFIX[] = "f_";
/* found by `gen_flood find-blocks` (below): each pair meets in the low 48 bits */
static const char *const BLOCKS[NBLOCKS][2] = {
	{ "Jy27Edhm", "k.MbOJDE" }, { "ziygeot9", "8kQH5wvL" }, { "rGKFXZrG", "4o4cDV83" },
	{ "CA5PWdRL", "iC_TJ66o" }, { "QYMW8E1X", "55hORwDP" }, { "r4GKYwHu", "qQsp1m7m" },
	{ "0EQHehhb", "sr3WCrV3" }, { "zfEbwPxJ", "nknQf1mh" }, { "JBnRjL2E", "447T4nSC" },
	{ "88e2YBKp", "vsuU6Nck" }, { "SlTtr0e9", "v50ELVDI" }, { "eNsHbhnY", "Znj2X760" },
	{ "r0f_oVdV", "YVtjOuVw" }, { "v0r3Cx5Y", "oZtUpV.f" }, { "C4oUEX.q", "eUJoP8bh" },
	{ "z4uzTRSI", "Aainoo.R" }, { "XA5j7_PT", "tpOE3qfp" }, { "snhZRxKd", "t3QgBGjn" },
};

/* ------------------------------------------------- the old hash, for checks */

static uint64_t fnv_add(uint64_t h, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint32_t old_slot(const char *s, uint32_t slots)
{
	uint64_t h = fnv_add(0xcbf29ce484222325ull, s, strlen(s));

	return (uint32_t)(h ^ (h >> 29)) & (slots - 1);
}

/* ------------------------------------------------------------ find-blocks */

static const char ALPHABET[65] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.";

static void block_of(uint64_t x, char b[9])
{
	for (int i = 0; i < 8; i++)
		b[i] = ALPHABET[(x >> (6 * i)) & 63];
	b[8] = '\0';
}

static uint64_t step(uint64_t state, uint64_t x)
{
	char b[9];

	block_of(x, b);
	return fnv_add(state, b, 8) & LOW48;
}

static int find_blocks(void)
{
	uint64_t state = fnv_add(0xcbf29ce484222325ull, PREFIX, strlen(PREFIX));

	for (int k = 0; k < NBLOCKS; k++) {
		for (uint64_t x0 = 0x123456789ull * (uint64_t)(k + 1) & LOW48;; x0++) {
			uint64_t t = step(state, x0), r = step(state, t), a = x0, b, pa = 0, pb = 0;
			char ba[9], bb[9];

			while (t != r) { /* Floyd: meet inside the cycle */
				t = step(state, t);
				r = step(state, step(state, r));
			}
			for (b = t; a != b; a = step(state, a), b = step(state, b)) {
				pa = a; /* the two predecessors of the cycle's entry */
				pb = b;
			}
			block_of(pa, ba);
			block_of(pb, bb);
			if (pa == pb || !strcmp(ba, bb))
				continue; /* x0 was on the cycle: no collision, try another */
			printf("{ \"%s\", \"%s\" },\n", ba, bb);
			state = fnv_add(state, ba, 8);
			break;
		}
	}
	return 0;
}

/* -------------------------------------------------------------- captures */

static void start(struct tb_profile *p, uint32_t pid, const char *comm)
{
	struct tb_target t;

	memset(&t, 0, sizeof(t));
	t.pid = (pid_t)pid;
	snprintf(t.comm, sizeof(t.comm), "%s", comm);
	snprintf(t.cmdline, sizeof(t.cmdline), "%s app.py", comm);
	if (tb_layout_builtin(0x030b02f0, &t.layout)) {
		fprintf(stderr, "gen_flood: no built-in 3.11 layout\n");
		exit(1);
	}
	tb_profile_add_process(p, &t);
}

static void finish(struct tb_profile *p, const char *path)
{
	FILE *f = fopen(path, "wb");

	p->hz = 99;
	p->max_depth = 128;
	p->duration_s = 10;
	p->start_unix = 1764410000;
	p->min_fraction = 0.001;
	for (uint32_t i = 0; i < p->nstacks; i++) {
		p->samples += p->stacks[i].count;
		p->python_samples += p->stacks[i].count;
		p->threads[p->stacks[i].thread].samples += p->stacks[i].count;
		p->threads[p->stacks[i].thread].python_samples += p->stacks[i].count;
	}
	if (!f || tb_write_capture(p, f) || fclose(f)) {
		fprintf(stderr, "gen_flood: cannot write %s\n", path);
		exit(1);
	}
	tb_profile_free(p);
}

static void one_frame_stack(struct tb_profile *p, uint32_t thread, uint32_t main_code, uint32_t code,
			    uint64_t count)
{
	const struct tb_sframe f[2] = { { code, 10, 0, 0 }, { main_code, 4, 0, 0 } };

	tb_profile_add_stack(p, thread, 0, f, 2, count);
}

static int flood(uint32_t n, const char *path)
{
	struct tb_profile p;
	uint32_t thread, main_code, slot = 0;
	char name[sizeof(PREFIX) + 8 * NBLOCKS];

	if (n > 1u << NBLOCKS) {
		fprintf(stderr, "gen_flood: at most %u colliding names\n", 1u << NBLOCKS);
		return 1;
	}
	tb_profile_init(&p);
	start(&p, PID, "python3.11");
	thread = tb_profile_add_thread(&p, PID, PID, PID, "MainThread");
	main_code = tb_sym_insert(&p.sym, PID, 0x1000, 1, 11, "main", "/app.py", 1, NULL, 0);
	for (uint32_t i = 0; i < n; i++) {
		size_t len = strlen(PREFIX);

		memcpy(name, PREFIX, len);
		for (int k = 0; k < NBLOCKS; k++, len += 8)
			memcpy(name + len, BLOCKS[k][i >> k & 1], 8);
		name[len] = '\0';
		if (i == 0)
			slot = old_slot(name, OLD_SLOTS);
		if (old_slot(name, OLD_SLOTS) != slot) {
			fprintf(stderr, "gen_flood: name %u does not collide under the old hash\n", i);
			return 1;
		}
		one_frame_stack(&p, thread, main_code,
				tb_sym_insert(&p.sym, PID, 0x100000 + 16ull * i, 1, 11, name, "/app.py",
					      10, NULL, 0), 1);
	}
	finish(&p, path);
	printf("%u names, all in slot %u of the old %u-slot string table\n", n, slot, OLD_SLOTS);
	return 0;
}

/* n threads, two per process; each runs three of 40 functions. */
static void threads_capture(uint32_t n, const char *path, uint64_t weight)
{
	struct tb_profile p;
	uint32_t codes[40], main_code;
	char name[32];

	tb_profile_init(&p);
	main_code = tb_sym_insert(&p.sym, 0, 0x1000, 1, 11, "main", "/app.py", 1, NULL, 0);
	for (uint32_t c = 0; c < 40; c++) {
		snprintf(name, sizeof(name), "task_%u", c);
		codes[c] = tb_sym_insert(&p.sym, 0, 0x2000 + 16 * c, 1, 11, name, "/tasks.py", 10 + c,
					 NULL, 0);
	}
	for (uint32_t t = 0; t < n; t++) {
		uint32_t pid = 10000 + 2 * (t / 2), thread;

		if (t % 2 == 0)
			start(&p, pid, "python3.11");
		thread = tb_profile_add_thread(&p, pid, pid + t % 2, pid + t % 2,
					       t % 2 ? "worker" : "MainThread");
		for (uint32_t k = 0; k < 3; k++)
			one_frame_stack(&p, thread, main_code, codes[(t * 7 + k * 13) % 40], weight + k);
	}
	finish(&p, path);
}

static int files(uint32_t n, const char *path)
{
	struct tb_profile p;
	uint32_t thread, main_code;
	char name[32], file[64];

	tb_profile_init(&p);
	start(&p, PID, "python3.11");
	thread = tb_profile_add_thread(&p, PID, PID, PID, "MainThread");
	main_code = tb_sym_insert(&p.sym, PID, 0x1000, 1, 11, "main", "/app.py", 1, NULL, 0);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "handler_%u", i);
		snprintf(file, sizeof(file), "/srv/app/module_%u.py", i);
		one_frame_stack(&p, thread, main_code,
				tb_sym_insert(&p.sym, PID, 0x100000 + 16ull * i, 1, 11, name, file, 5, NULL, 0),
				1 + i % 3);
	}
	finish(&p, path);
	return 0;
}

static uint32_t count_arg(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end || !v || v > 10000000) {
		fprintf(stderr, "gen_flood: bad count %s\n", s);
		exit(2);
	}
	return (uint32_t)v;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "find-blocks"))
		return find_blocks();
	if (argc == 4 && !strcmp(argv[1], "flood"))
		return flood(count_arg(argv[2]), argv[3]);
	if (argc == 5 && !strcmp(argv[1], "threads")) {
		threads_capture(count_arg(argv[2]), argv[3], 5);
		threads_capture(count_arg(argv[2]), argv[4], 7);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "files"))
		return files(count_arg(argv[2]), argv[3]);
	fprintf(stderr, "usage: gen_flood flood N OUT.tbp | threads N BASE.tbp CUR.tbp | files N OUT.tbp | "
		"find-blocks\n");
	return 2;
}
