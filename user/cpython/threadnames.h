/* pythreads.h: Python thread names (threading.Thread.name) of a running CPython
 * 3.10-3.15 process, read from its memory without stopping it, as py-spy does. */
#ifndef TB_PYTHREADS_H
#define TB_PYTHREADS_H
#include <stdint.h>
#include <sys/types.h>
#include "cpython/layout.h"

struct tb_pyname {
	uint64_t ident;   /* threading.get_ident() == pthread_self() of the thread */
	char name[64];    /* UTF-8, NUL-terminated; longer names are cut at a character boundary */
};

/* Names of the threads in threading._active (started, not yet finished threads, the main
 * thread and dummy threads of foreign threads) of the main interpreter of pid, whose
 * _PyRuntime is at runtime_addr and layout l. Returns how many were written to out (<= max;
 * 0 when threading was never imported), or -1 if they could not be read (not CPython, not
 * initialized or finalizing, free-threaded build, memory unreadable). Everything read is
 * untrusted: loops and strings are bounded, and so are the reads and bytes copied per call
 * (20000 reads, 16 MiB; the tests take about 0.5 ms a call). Keeps no state between calls. */
int tb_python_thread_names(pid_t pid, const struct tb_layout *l, uint64_t runtime_addr,
			   struct tb_pyname *out, int max);

#endif
