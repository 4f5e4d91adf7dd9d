/* test_unwind.c: the unwind-table registry (capture/unwind.c) over a fake
 * map backend and this test's own mappings: a process's ranges are written
 * once its tables are built, sorted, every mapped file with a slot and its
 * rows copied where its descriptor says; fork copies take refs and a fork
 * storm gives them all back; a file is shared (built once) across
 * processes and kept through its grace period, evicted after it (its
 * descriptor cleared, its rows freed); rows that do not fit leave a file to
 * frame pointers until unused files are evicted to make room; the resolver
 * names the mappings, the vDSO's functions too (its table is the agent's
 * own vDSO's, kept for every process); waiting for a process's tables (a
 * target known at the start) returns once its ranges are written. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>
#include "capture/clock.h"
#include "capture/unwind.h"
#include "proc/cfi.h"

#define MAX_FILES 64
#define NS 1000000000ull

struct fake {
	struct tb_urow *rows;
	struct tb_ufile files[MAX_FILES];
	uint32_t file_writes;
	uint32_t pid;
	struct tb_umaps ranges;
	int have_ranges;
	uint32_t range_writes, deletes;
};

static int fake_set_rows(void *ctx, uint32_t first, const struct tb_urow *rows, uint32_t n)
{
	struct fake *k = ctx;

	memcpy(k->rows + first, rows, (size_t)n * sizeof(*rows));
	return 0;
}

static int fake_set_file(void *ctx, uint32_t slot, const struct tb_ufile *f)
{
	struct fake *k = ctx;

	assert_true(slot > 0 && slot < MAX_FILES);
	k->files[slot] = *f;
	k->file_writes++;
	return 0;
}

static int fake_set_ranges(void *ctx, uint32_t pid, const struct tb_umaps *m)
{
	struct fake *k = ctx;

	if (!m) {
		k->deletes++;
		return 0;
	}
	if (pid == k->pid) {
		k->ranges = *m;
		k->have_ranges = 1;
	}
	k->range_writes++;
	return 0;
}

/* Is the vDSO mapped here (not under valgrind, which hides it)? */
static int have_vdso(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, "[vdso]") != NULL;
	if (f)
		fclose(f);
	return found && getauxval(AT_SYSINFO_EHDR);
}

static struct tb_unwind *open_registry(struct fake *k, uint32_t max_rows)
{
	struct tb_unwind_maps maps = { k, max_rows, MAX_FILES, fake_set_rows, fake_set_file, fake_set_ranges };
	struct tb_unwind_opts o = { 60 * NS, 0, TB_UNWIND_WAIT_NS, 0, 1 };

	memset(k, 0, sizeof(*k));
	k->rows = calloc(max_rows ? max_rows : 1, sizeof(*k->rows));
	k->pid = (uint32_t)getpid();
	return tb_unwind_new(&maps, &o);
}

/* The range of the fake's ranges holding addr, or NULL. */
static const struct tb_urange *range_at(const struct fake *k, uint64_t addr)
{
	for (uint32_t i = 0; i < k->ranges.n; i++)
		if (k->ranges.r[i].start <= addr && addr < k->ranges.r[i].end)
			return &k->ranges.r[i];
	return NULL;
}

static void test_process_ranges(void **state)
{
	struct fake k;
	struct tb_unwind *u = open_registry(&k, 1u << 22);
	const struct tb_native_resolver *res = tb_unwind_resolver(u);
	uint64_t crc = (uint64_t)(uintptr_t)&crc32, here = (uint64_t)(uintptr_t)&test_process_ranges;
	const struct tb_urange *r;
	const struct tb_ufile *f;
	struct tb_native_place at;
	struct tb_unwind_stats st;
	uint64_t start = 0;

	(void)state;
	assert_int_equal(tb_unwind_add_process(u, getpid(), NS), 0);
	assert_false(k.have_ranges);                   /* not before its tables */
	tb_unwind_poll(u, NS);
	/* built at once (no thread), installed by the poll: written, sorted, within bounds */
	assert_true(k.have_ranges);
	assert_true(k.ranges.n > 3 && k.ranges.n <= TB_MAX_RANGES);
	for (uint32_t i = 1; i < k.ranges.n; i++)
		assert_true(k.ranges.r[i - 1].end <= k.ranges.r[i].start);
	/* libz (linked by this test): a slot, rows copied where it says, and the
	 * row at crc32's address is a function entry: CFA = rsp + 8 */
	r = range_at(&k, crc);
	assert_non_null(r);
	assert_true(r->slot > 0 && !(r->flags & TB_UR_PENDING));
	f = &k.files[r->slot];
	assert_true(f->nrows > 0 && !(f->flags & TB_UF_FP_ONLY));
	{
		const struct tb_urow *row = tb_cfi_row(k.rows + f->first, f->nrows, f->base, crc - (uint64_t)r->bias);

		assert_non_null(row);
		assert_int_equal(row->kind, TB_UK_RSP);
		assert_int_equal(row->cfa8, 1);
	}
	/* the resolver: crc32 by name in libz, this function in the test binary */
	assert_int_equal(res->find(res->ctx, (uint32_t)getpid(), crc, &at), 0);
	assert_non_null(at.syms);
	assert_non_null(strstr(at.module, "libz"));
	assert_string_equal(tb_nsym_lookup(at.syms, at.vaddr, &start), "crc32");
	assert_int_equal(res->find(res->ctx, (uint32_t)getpid(), here, &at), 0);
	assert_string_equal(at.module, "test_unwind");
	assert_string_equal(tb_nsym_lookup(at.syms, at.vaddr, &start), "test_process_ranges");
	assert_int_equal(at.interp, 0);
	if (have_vdso()) { /* clock_gettime of the vDSO, named from the agent's own copy */
		const char *name;

		assert_int_equal(res->find(res->ctx, (uint32_t)getpid(), getauxval(AT_SYSINFO_EHDR) + 0x700,
					   &at), 0);
		assert_string_equal(at.module, "[vdso]");
		assert_non_null(at.syms);
		name = tb_nsym_lookup(at.syms, at.vaddr, &start);
		assert_true(!name || strstr(name, "vdso") || strstr(name, "time") || strstr(name, "cpu"));
	}
	assert_int_equal(res->find(res->ctx, (uint32_t)getpid(), 0x10, &at), -1);
	assert_int_equal(res->find(res->ctx, 1u << 30, here, &at), -1);
	tb_unwind_stats(u, &st);
	assert_int_equal(st.processes, 1);
	assert_true(st.tables >= 2);
	tb_unwind_free(u);
	free(k.rows);
}

static void test_wait(void **state)
{
	struct fake k;
	struct tb_unwind *u = open_registry(&k, 1u << 22);
	uint32_t files = 0, pending = 1;

	(void)state;
	assert_int_equal(tb_unwind_wait(u, getpid(), &files, &pending), -1); /* not followed */
	assert_int_equal(tb_unwind_add_process(u, getpid(), tb_mono_ns()), 0);
	assert_false(k.have_ranges);
	assert_int_equal(tb_unwind_wait(u, getpid(), &files, &pending), 0);
	assert_true(k.have_ranges);
	assert_true(files >= 3);        /* this binary, libc, libz at least */
	assert_int_equal(pending, 0);
	tb_unwind_free(u);
	free(k.rows);
}

static void test_fork_storm_and_eviction(void **state)
{
	struct fake k;
	struct tb_unwind *u = open_registry(&k, 1u << 22);
	struct tb_unwind_stats a, b;
	uint64_t now = NS;

	(void)state;
	assert_int_equal(tb_unwind_add_process(u, getpid(), now), 0);
	tb_unwind_poll(u, now);
	tb_unwind_stats(u, &a);
	/* children of children, forgotten in another order: refs come back */
	for (uint32_t i = 0; i < 2000; i++)
		tb_unwind_fork(u, i < 1000 ? getpid() : (pid_t)(1000000 + i - 1000), (pid_t)(1000000 + i), now);
	tb_unwind_stats(u, &b);
	assert_int_equal(b.processes, 2001);
	assert_int_equal(b.builds, a.builds);          /* the same files, built once */
	for (uint32_t i = 2000; i-- > 0;)
		tb_unwind_forget(u, (pid_t)(1000000 + (i * 7919) % 2000), now);
	tb_unwind_forget(u, (pid_t)(1000000 + 5), now); /* twice: nothing */
	tb_unwind_stats(u, &b);
	assert_int_equal(b.processes, 1);
	/* the files outlive their last process by the grace period */
	tb_unwind_forget(u, getpid(), now);
	tb_unwind_poll(u, now + 59 * NS);
	tb_unwind_stats(u, &b);
	assert_int_equal(b.evictions, 0);
	/* a process mapping them again takes them as they are */
	assert_int_equal(tb_unwind_add_process(u, getpid(), now + 60 * NS), 0);
	tb_unwind_stats(u, &b);
	assert_int_equal(b.builds, a.builds);
	tb_unwind_forget(u, getpid(), now + 61 * NS);
	tb_unwind_poll(u, now + 200 * NS);
	tb_unwind_stats(u, &b);
	/* all but the vDSO (the agent's own, kept for every process) */
	assert_int_equal(b.evictions, a.files - (uint64_t)have_vdso());
	assert_int_equal(b.files, (uint64_t)have_vdso());
	assert_int_equal(b.tables, (uint64_t)have_vdso());
	assert_true(b.rows_used <= TB_UNWIND_GRANULE);
	for (uint32_t s = 1, kept = 0; s < MAX_FILES; s++) /* every other descriptor cleared */
		assert_true((kept += k.files[s].nrows != 0) <= 1);
	tb_unwind_free(u);
	free(k.rows);
}

static void test_no_room(void **state)
{
	struct fake k;
	/* room for one granule of rows: libc and the others do not fit */
	struct tb_unwind *u = open_registry(&k, TB_UNWIND_GRANULE);
	uint64_t crc = (uint64_t)(uintptr_t)&crc32;
	struct tb_unwind_stats st;
	const struct tb_urange *r;

	(void)state;
	assert_int_equal(tb_unwind_add_process(u, getpid(), NS), 0);
	tb_unwind_poll(u, NS);
	tb_unwind_stats(u, &st);
	assert_true(st.no_room > 0);
	assert_true(st.rows_used <= TB_UNWIND_GRANULE);
	/* a file without room keeps its slot (evaluator ranges) and is left by frame pointer */
	r = range_at(&k, crc);
	assert_non_null(r);
	if (r->slot && !k.files[r->slot].nrows)
		assert_true(k.files[r->slot].flags & TB_UF_FP_ONLY);
	tb_unwind_free(u);
	free(k.rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_process_ranges),
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_fork_storm_and_eviction),
		cmocka_unit_test(test_no_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
