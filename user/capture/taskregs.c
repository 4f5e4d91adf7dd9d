/* taskregs.c: the saved user registers of one process's threads (see taskregs.h): run
 * capture/taskregs_iter.c's task iterator where the binary has it (a weak reference:
 * the unit tests and fuzzers link libtachyon.a without the BPF objects, and get none),
 * and look a blocked thread up in its records. */
#include <stdlib.h>
#include "capture/taskregs.h"

int tb_taskregs_read(pid_t tgid, struct tb_taskregs *out)
{
	*out = (struct tb_taskregs){ 0, NULL };
	if (!tb_taskregs_iter || tb_taskregs_iter(tgid, out)) {
		tb_taskregs_free(out);
		return -1;
	}
	return 0;
}

int tb_taskregs_uw(const struct tb_taskregs *t, uint32_t tid, uint64_t sp, uint64_t pc,
		   struct tb_uw_regs *regs)
{
	for (uint32_t i = 0; i < t->n; i++) {
		const struct tb_task_regs *r = &t->r[i];

		if (r->tid != tid)
			continue;
		if (r->syscall_nr == -1 || r->sp != sp || r->pc != pc)
			return 0;
		/* it resumes after the system call: its pc is a return address; the link
		 * register is the kernel's (x30; x86-64's rows never read one) */
		*regs = (struct tb_uw_regs){ r->pc, r->sp, r->fp, 1, r->lr, 1 };
		return 1;
	}
	return 0;
}

void tb_taskregs_free(struct tb_taskregs *t)
{
	free(t->r);
	*t = (struct tb_taskregs){ 0, NULL };
}
