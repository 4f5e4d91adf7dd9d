/* procname.h: the name a process is shown by: the interpreter and what it runs,
 * "python3 app.py", "python3 -m http.server", from its command line (hostile: bounded,
 * control characters and invalid UTF-8 replaced, long arguments elided). */
#ifndef TB_PROCNAME_H
#define TB_PROCNAME_H
#include <stddef.h>
#include <sys/types.h>

#define TB_PROCNAME_MAX 96        /* bytes of a name, NUL included */
#define TB_PROCNAME_ARG_MAX 56    /* bytes of one argument shown; a longer one keeps its end */
#define TB_PROCNAME_READ 4096     /* bytes of /proc/PID/cmdline read */

/* The name from argv: len bytes of NUL-separated arguments as /proc/PID/cmdline gives
 * them (maybe cut anywhere). A launcher (ld-linux*.so --argv0 P ... PROG) is named by
 * P; a python* / pypy* interpreter by "INTERP SCRIPT", "INTERP -m MODULE", "INTERP -c";
 * anything else by its first argument. An empty argv gives comm ("" when NULL).
 * Writes at most outlen bytes (NUL included) of valid UTF-8 without control characters. */
void tb_procname_from_argv(const char *argv, size_t len, const char *comm, char *out, size_t outlen);
/* The same from /proc/PID/cmdline (its first TB_PROCNAME_READ bytes); comm when it is
 * unreadable or empty (a zombie, a kernel thread). */
void tb_procname_read(pid_t pid, const char *comm, char *out, size_t outlen);

#endif
