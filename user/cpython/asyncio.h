/* asyncio.h: asyncio tasks of a target (3.14+): the running task the BPF program
 * recorded (include/tachyon.h: tb_sample_hdr.task), its name, its coroutine's code
 * object (where the task's frames begin) and the tasks that await it, read from the
 * _asyncio module's TaskObj with the offsets of its AsyncioDebug section. */
#ifndef TB_ASYNCIO_H
#define TB_ASYNCIO_H
#include <stdint.h>
#include <sys/types.h>
#include "cpython/layout.h"

#define TB_TASK_NAME_MAX 256   /* bytes of a task name kept (UTF-8, cut at a character) */
#define TB_TASK_CHAIN 8        /* a task and the tasks awaiting it, at most */
#define TB_TASK_SET_MAX 64     /* entries of an awaited_by set looked at, at most */

/* What _asyncio's Py_AsyncioModuleDebugOffsets say of a TaskObj and a coroutine. */
struct tb_asyncio_offsets {
	uint16_t task_size;            /* sizeof(TaskObj): the bytes read of a task */
	uint16_t task_name, task_awaited_by, task_is_task, task_awaited_by_is_set, task_coro;
	uint16_t gen_iframe;           /* PyGenObject -> gi_iframe (its f_executable first) */
};

/* A running task and its awaiters as read: chain[0] the task, chain[i + 1] a task
 * awaiting chain[i] (the first one of a set), names literal (only cut to fit). */
struct tb_task_chain {
	uint64_t coro;                 /* the task's coroutine */
	uint64_t coro_code;            /* the code object of its frame, 0: unknown */
	unsigned n;                    /* tasks in chain (>= 1 when read) */
	uint64_t addr[TB_TASK_CHAIN];
	char name[TB_TASK_CHAIN][TB_TASK_NAME_MAX];
};

/* Bytes of Py_AsyncioModuleDebugOffsets (3.14, 3.15): 13 u64 values. */
#define TB_ASYNCIO_DEBUG_SIZE 104
/* Parse a copy of the _asyncio module's AsyncioDebug section (untrusted: every value is
 * range-checked) into *out and the thread state's asyncio_running_task offset. 0, or -1
 * with one sentence in err. */
int tb_asyncio_parse_debug(const unsigned char *buf, size_t len, struct tb_asyncio_offsets *out,
			   uint16_t *tstate_running_task, char *err, size_t errlen);
/* Check the version's offsets against the target's own: the AsyncioDebug section of
 * the _asyncio module it maps (or of its python / libpython, where _asyncio is built
 * in), read with the target's credentials.  1: found and equal; 0: no such section
 * mapped (yet); -1: different or unreadable, with one sentence in err. */
int tb_asyncio_verify(pid_t pid, const struct tb_layout *l, char *err, size_t errlen);
/* The offsets for layout l, or NULL: no task attribution (before 3.14, free-threaded). */
const struct tb_asyncio_offsets *tb_asyncio_offsets(const struct tb_layout *l);
/* Read task (a TaskObj of pid) whose coroutine's low 32 bits are coro32 (what the BPF
 * program saw: another value means the address now holds another task) and the tasks
 * awaiting it. 0 on success; -1 when it is not that task or cannot be read. */
int tb_asyncio_read(pid_t pid, const struct tb_layout *l, uint64_t task, uint32_t coro32,
		    struct tb_task_chain *out);

#endif
