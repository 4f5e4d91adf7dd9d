/* dump_native.h: `dump --native`: each thread's native frames, merged with its Python
 * frames as `record --native` merges them (model/merge.c). Without stopping the process:
 * a thread blocked in the kernel is unwound from the registers the kernel saved at its
 * system call's entry (capture/taskregs.c's BPF task iterator), else from the stack
 * pointer and pc /proc/PID/task/TID/syscall shows and a guessed frame pointer, over
 * the unwind tables of the files it maps
 * (capture/unwind.c's registry, built at once) with proc/unwind_ref.c; a running
 * thread's registers cannot be read that way: its frames are a sample's (dump_running.h). */
#ifndef TB_DUMP_NATIVE_H
#define TB_DUMP_NATIVE_H
#include <stdint.h>
#include <sys/types.h>
#include "cpython/walk.h"
#include "model/symbolize.h"

struct dump_native;
struct dump_sample;

/* One frame of a merged stack. */
struct dump_frame {
	int python;               /* index into the thread's Python frames, or -1 */
	uint32_t code;            /* native: its code entry in the symbolizer (name, module) */
	const char *marker;       /* "<native truncated>", "<native unmerged>", or NULL */
};

/* The unwind tables and symbols of pid's mapped files; NULL with err when they cannot
 * be read. */
struct dump_native *tb_dump_native_open(pid_t pid, char *err, size_t errlen);
/* Thread th's frames merged, innermost first, into out (room for
 * th->depth + TB_MAX_NATIVE + 1); returns how many, in *note NULL or why native
 * frames are missing or cut (not sampled, a stop reason), and in *regs_from where the
 * registers of a blocked thread's walk came from: "kernel", "guessed" (the frame
 * pointer), or NULL (a sample, or no walk). A running thread's native frames are those
 * of sample (dump_running.h) when it was taken (th then holds its Python frames);
 * without one, a thread blocked now is unwound as above. */
int tb_dump_native_thread(struct dump_native *n, struct tb_symbolizer *sym, unsigned py_minor,
			  const struct tb_uthread *th, const struct dump_sample *sample, struct dump_frame *out,
			  const char **note, const char **regs_from);
void tb_dump_native_close(struct dump_native *n);

#endif
