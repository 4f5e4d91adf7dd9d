/* discover.h: is a process CPython, which version, where is its runtime. */
#ifndef TB_DISCOVER_H
#define TB_DISCOVER_H
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include "cpython/layout.h"
#include "proc/procname.h"

struct tb_target {
	pid_t pid;
	char comm[32];            /* /proc/PID/comm */
	char name[TB_PROCNAME_MAX]; /* shown as: "python3 app.py" (proc/procname.c), else comm */
	char cmdline[256];        /* /proc/PID/cmdline, spaces between args */
	char elf_path[PATH_MAX];  /* file holding _PyRuntime, as the target sees it */
	int shared_lib;           /* runtime lives in libpython*.so */
	uint64_t runtime_addr;    /* &_PyRuntime */
	uint64_t pycode_type;     /* &PyCode_Type, 0 if not found */
	uint64_t none_addr;       /* &_Py_NoneStruct, 0 if not found */
	/* glibc's struct pthread (proc/pthreadfacts.c): pthread_self() is the thread
	 * pointer less tls_to_pthread (proc/arch.h); the tid at pthread_tid_offset (0: unknown) */
	uint64_t tls_to_pthread;
	uint32_t pthread_tid_offset;
	struct tb_layout layout;
};

/* Inspect pid. 0: it is a supported CPython, *t filled.
 * 1: it is not (yet) a Python process (err says why).
 * -1: error: no such process, unsupported version, unreadable (err says). */
int tb_discover(pid_t pid, struct tb_target *t, char *err, size_t errlen);
/* Fill the BPF view (struct tb_proc) of a discovered target. */
void tb_target_to_proc(const struct tb_target *t, struct tb_proc *p);
/* Read /proc/PID/comm and cmdline into t (best effort). */
void tb_read_proc_names(pid_t pid, char *comm, size_t commlen, char *cmdline, size_t cmdlen);

#endif
