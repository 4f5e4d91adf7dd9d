/* task.h: one thread of another process as /proc/PID/task/TID shows it: its scheduler
 * state (stat), where it is blocked in user space (syscall: the stack pointer and pc of
 * a thread in a system call) and its kernel stack (stack, root only). Parsers of the
 * files' text (pure, bounded) and readers of a live thread's. */
#ifndef TB_TASK_H
#define TB_TASK_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TB_TASK_KSTACK_MAX 64     /* kernel frames kept */
#define TB_TASK_KNAME 64          /* bytes of a kernel function's name kept */

/* The state letter of a stat line ("R", "S", "D", ...: the field after the last ')',
 * the name being the target's and able to hold ") R"); 0 when malformed. */
char tb_task_parse_state(const char *stat, size_t len);

enum tb_task_regs_kind {
	TB_TASK_REGS_BLOCKED = 0, /* sp and pc of a thread blocked in the kernel */
	TB_TASK_REGS_RUNNING,     /* "running": no registers without stopping it */
	TB_TASK_REGS_NONE,        /* unreadable or malformed */
};

/* The text of /proc/PID/task/TID/syscall: "NR A1 .. A6 SP PC", "-1 SP PC" (blocked, not
 * in a system call) or "running". */
enum tb_task_regs_kind tb_task_parse_syscall(const char *text, size_t len, int64_t *nr, uint64_t *sp,
					     uint64_t *pc);

/* The function names of /proc/PID/task/TID/stack lines ("[<0>] do_nanosleep+0x6d/0x1a0"),
 * innermost first, at most max of them, each cut to TB_TASK_KNAME - 1 bytes and made of
 * printable ASCII; returns how many. */
int tb_task_parse_kstack(const char *text, size_t len, char (*out)[TB_TASK_KNAME], int max);

/* The same, read from a live thread; state 0, NONE and -1 (the stack unreadable: not
 * root) when they cannot be read. */
char tb_task_state(pid_t pid, uint32_t tid);
enum tb_task_regs_kind tb_task_syscall(pid_t pid, uint32_t tid, int64_t *nr, uint64_t *sp, uint64_t *pc);
int tb_task_kstack(pid_t pid, uint32_t tid, char (*out)[TB_TASK_KNAME], int max);

#endif
