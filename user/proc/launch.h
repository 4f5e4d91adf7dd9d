/* launch.h: start the command to profile. */
#ifndef TB_LAUNCH_H
#define TB_LAUNCH_H
#include <sys/types.h>

/* fork+exec argv; reports exec failure (e.g. not found) as -1 with err set. */
pid_t tb_launch(char *const argv[], char *err, size_t errlen);
/* Non-blocking: has the child exited? Stores its exit status. */
int tb_child_exited(pid_t pid, int *status);

#endif
