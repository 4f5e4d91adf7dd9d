/* cgroup.h: --cgroup and --container: which cgroup v2 subtree to profile. */
#ifndef TB_CGROUP_H
#define TB_CGROUP_H
#include <stddef.h>
#include <sys/types.h>

/* Absolute directory of a cgroup v2 path (absolute, or relative to the
 * cgroup2 mount). 0 ok; -1 with err. */
int tb_cgroup_resolve(const char *arg, char *dir, size_t len, char *err, size_t errlen);
/* The cgroup directory of the one container whose id or name starts with
 * `id`, found from /proc/ and PID/cgroup. 0 ok; -1 with err (none, ambiguous). */
int tb_container_resolve(const char *id, char *dir, size_t len, char *err, size_t errlen);
/* Is pid inside the cgroup directory dir (or below it)? */
int tb_pid_in_cgroup(pid_t pid, const char *dir);

#endif
