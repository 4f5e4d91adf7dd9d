/* targets.h: choosing the processes to profile (-p, --all-python, -- CMD). */
#ifndef TB_TARGETS_H
#define TB_TARGETS_H
#include <sys/types.h>
#include "model/profile.h"
#include "capture/sampler.h"

/* Attach to one pid: discover, register with the profile and the sampler.
 * 0 ok; -1 with one line in err (no such pid, not Python, unsupported). */
int tb_target_attach(struct tb_sampler *s, struct tb_profile *p, pid_t pid, char *err, size_t errlen);
/* Attach to every Python process running now (except ourselves), below
 * the cgroup directory if one is given. Returns how
 * many; problems with single processes are reported on stderr unless quiet. */
int tb_target_attach_all(struct tb_sampler *s, struct tb_profile *p, const char *cgroup, int quiet);
/* Wait for a launched child to map its Python runtime, then attach.  held: the
 * child is held at its entry point (proc/launch.h): attached there if it is Python
 * (--native: its tables built first), then let go.
 * 0 ok; -1 with err (exited first, or not Python after timeout_ms). */
int tb_target_attach_launched(struct tb_sampler *s, struct tb_profile *p, pid_t pid, int held,
			      int timeout_ms, char *err, size_t errlen);

#endif
