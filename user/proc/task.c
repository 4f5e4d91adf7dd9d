/* task.c: a thread's scheduler state, blocked registers and kernel stack from
 * /proc/PID/task/TID (see task.h). The files are read once, at most READ_MAX bytes,
 * and their text is parsed with bounds: the thread's name in stat is the target's. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc/task.h"

#define READ_MAX 8192

char tb_task_parse_state(const char *stat, size_t len)
{
	const char *close = NULL;

	for (size_t i = 0; i < len && stat[i]; i++)
		if (stat[i] == ')')
			close = stat + i;
	if (!close || (size_t)(close - stat) + 2 >= len || close[1] != ' ')
		return 0;
	return close[2] >= 'A' && close[2] <= 'z' ? close[2] : 0;
}

enum tb_task_regs_kind tb_task_parse_syscall(const char *text, size_t len, int64_t *nr, uint64_t *sp,
					     uint64_t *pc)
{
	char buf[256], *tok[9], *save = NULL;
	int n = 0;

	if (!len || len >= sizeof(buf))
		return TB_TASK_REGS_NONE;
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (!strncmp(buf, "running", 7))
		return TB_TASK_REGS_RUNNING;
	for (char *t = strtok_r(buf, " \n", &save); t && n < 9; t = strtok_r(NULL, " \n", &save))
		tok[n++] = t;
	if (n != 3 && n != 9)
		return TB_TASK_REGS_NONE;
	for (int i = 0; i < n; i++) {
		char *end;

		errno = 0;
		if (i)
			(void)strtoull(tok[i], &end, 16);
		else
			(void)strtoll(tok[i], &end, 10);
		if (errno || end == tok[i] || *end)
			return TB_TASK_REGS_NONE;
	}
	*nr = strtoll(tok[0], NULL, 10);
	*sp = strtoull(tok[n - 2], NULL, 16);
	*pc = strtoull(tok[n - 1], NULL, 16);
	return TB_TASK_REGS_BLOCKED;
}

int tb_task_parse_kstack(const char *text, size_t len, char (*out)[TB_TASK_KNAME], int max)
{
	int n = 0;
	size_t i = 0;

	while (i < len && n < max) {
		size_t end = i, k = 0;

		while (end < len && text[end] != '\n')
			end++;
		/* "[<0>] " then the name up to '+' */
		while (i < end && text[i] != ']')
			i++;
		i += i < end ? 1 : 0;
		while (i < end && text[i] == ' ')
			i++;
		while (i < end && text[i] != '+' && text[i] != ' ' && k + 1 < TB_TASK_KNAME) {
			unsigned char c = (unsigned char)text[i++];

			out[n][k++] = c > 0x20 && c < 0x7f ? (char)c : '?';
		}
		out[n][k] = '\0';
		n += k > 0;
		i = end + 1;
	}
	return n;
}

/* The file's text (at most READ_MAX - 1 bytes, NUL-terminated), its length or -1. */
static ssize_t read_task_file(pid_t pid, uint32_t tid, const char *name, char *buf)
{
	char path[96];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/%s", (int)pid, tid, name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, READ_MAX - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (ssize_t)n;
}

char tb_task_state(pid_t pid, uint32_t tid)
{
	char buf[READ_MAX];
	ssize_t n = read_task_file(pid, tid, "stat", buf);

	return n > 0 ? tb_task_parse_state(buf, (size_t)n) : 0;
}

enum tb_task_regs_kind tb_task_syscall(pid_t pid, uint32_t tid, int64_t *nr, uint64_t *sp, uint64_t *pc)
{
	char buf[READ_MAX];
	ssize_t n = read_task_file(pid, tid, "syscall", buf);

	return n > 0 ? tb_task_parse_syscall(buf, (size_t)n, nr, sp, pc) : TB_TASK_REGS_NONE;
}

int tb_task_kstack(pid_t pid, uint32_t tid, char (*out)[TB_TASK_KNAME], int max)
{
	char buf[READ_MAX];
	ssize_t n = read_task_file(pid, tid, "stack", buf);

	return n < 0 ? -1 : tb_task_parse_kstack(buf, (size_t)n, out, max);
}
