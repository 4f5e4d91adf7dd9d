/* rootfs.h: open a file as a (possibly containerized) process sees it. */
#ifndef TB_ROOTFS_H
#define TB_ROOTFS_H
#include <sys/types.h>

/* Open `path` inside pid's root (absolute) or cwd (relative), with
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS): symlinks inside a
 * container resolve inside it, never to the agent's files. -1 on error. */
int tb_open_in_root(pid_t pid, const char *path);

#endif
