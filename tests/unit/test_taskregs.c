/* test_taskregs.c: cmocka tests of capture/taskregs.c, how `dump --native` takes a
 * blocked thread's registers from the kernel's records: a thread found at the sp and pc
 * its /proc syscall file showed gets the record's pc, sp, frame pointer and link register
 * (its pc a return address); one that moved since (another sp or pc), one not in a
 * system call, a tid the process does not have get nothing (the guess); and linked
 * without the BPF objects (libtachyon.a alone, as here) there are no records: the
 * read fails quietly and empty. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "capture/taskregs.h"

static struct tb_task_regs records[] = {
	{ .tid = 101, .syscall_nr = 230, .pc = 0x7f0000001234, .sp = 0x7ffc00001000, .fp = 0x7ffc00001100,
	  .lr = 0x7f0000005678 },
	{ .tid = 102, .syscall_nr = -1, .pc = 0x400000, .sp = 0x7ffc00002000, .fp = 0, .lr = 0 },
};
static const struct tb_taskregs table = { 2, records };

static void test_found_at_its_sp_and_pc(void **state)
{
	struct tb_uw_regs regs = { 0 };

	(void)state;
	assert_int_equal(tb_taskregs_uw(&table, 101, 0x7ffc00001000, 0x7f0000001234, &regs), 1);
	assert_int_equal(regs.ip, 0x7f0000001234);
	assert_int_equal(regs.sp, 0x7ffc00001000);
	assert_int_equal(regs.bp, 0x7ffc00001100);
	assert_int_equal(regs.lr, 0x7f0000005678);
	assert_int_equal(regs.has_lr, 1);
	assert_int_equal(regs.ip_is_ra, 1);
}

static void test_not_taken(void **state)
{
	const struct tb_uw_regs untouched = { 1, 2, 3, 0, 4, 0 };
	struct tb_uw_regs regs = untouched;

	(void)state;
	/* moved since the iterator ran: another sp, another pc */
	assert_int_equal(tb_taskregs_uw(&table, 101, 0x7ffc00000ff0, 0x7f0000001234, &regs), 0);
	assert_int_equal(tb_taskregs_uw(&table, 101, 0x7ffc00001000, 0x7f0000001238, &regs), 0);
	/* not in a system call (its registers are stale), not a thread of the process */
	assert_int_equal(tb_taskregs_uw(&table, 102, 0x7ffc00002000, 0x400000, &regs), 0);
	assert_int_equal(tb_taskregs_uw(&table, 103, 0x7ffc00001000, 0x7f0000001234, &regs), 0);
	assert_memory_equal(&regs, &untouched, sizeof(regs));
}

static void test_without_the_iterator(void **state)
{
	struct tb_taskregs t = { 7, records };
	struct tb_uw_regs regs = { 0 };

	(void)state;
	assert_null(tb_taskregs_iter);   /* libtachyon.a alone: no BPF objects */
	assert_int_equal(tb_taskregs_read(1, &t), -1);
	assert_int_equal(t.n, 0);
	assert_null(t.r);
	assert_int_equal(tb_taskregs_uw(&t, 1, 0x1000, 0x2000, &regs), 0);
	tb_taskregs_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found_at_its_sp_and_pc),
		cmocka_unit_test(test_not_taken),
		cmocka_unit_test(test_without_the_iterator),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
