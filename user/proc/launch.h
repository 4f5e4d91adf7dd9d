/* launch.h: start the command to profile. */
#ifndef TB_LAUNCH_H
#define TB_LAUNCH_H
#include <sys/types.h>

/* fork+exec argv; reports exec failure (e.g. not found) as -1 with err set.
 * held (NULL: no) asks, when *held is 1, that the command be held at its entry
 * point (after the exec and the dynamic loader: its libraries mapped, none of
 * its code run); *held says whether it is (else it runs): then release it with
 * tb_launch_release. */
pid_t tb_launch(char *const argv[], int *held, char *err, size_t errlen);
/* Let a held command run (detach). */
void tb_launch_release(pid_t pid);
/* Non-blocking: has the child exited? Stores its exit status. */
int tb_child_exited(pid_t pid, int *status);

#endif
