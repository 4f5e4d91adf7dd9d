/* creds.h: the file-system credentials of a process, as /proc/PID/status
 * shows them, to open files as that process would. */
#ifndef TB_CREDS_H
#define TB_CREDS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* More supplementary groups than this: refused (not cut: a group can deny
 * what "other" allows, so fewer groups could mean more access). */
#define TB_CREDS_MAX_GROUPS 1024

struct tb_creds {
	uid_t fsuid;
	gid_t fsgid;
	uint32_t ngroups;
	gid_t groups[TB_CREDS_MAX_GROUPS];
};

/* Parse the text of /proc/PID/status (len bytes, not NUL-terminated):
 * fsuid and fsgid (4th field of Uid: and Gid:) and Groups:. 0 ok; -1 when a
 * line is missing, malformed, cut off or has too many groups. */
int tb_creds_parse(const char *status, size_t len, struct tb_creds *c);
/* Read them through piddir, an open /proc/PID directory. 0 ok; -1. */
int tb_creds_read(int piddir, struct tb_creds *c);

#endif
