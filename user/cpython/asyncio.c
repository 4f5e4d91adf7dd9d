/* asyncio.c: a running asyncio task of a target and the tasks awaiting it (3.14+),
 * read from its TaskObj with the offsets of _asyncio's AsyncioDebug section (the
 * version's row in versions.c).  Everything read is the target's: a name is a str
 * (or, never set, the int of "Task-N"), awaited_by one future or a set of them, and
 * every pointer, count and byte is checked before it is used. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "proc/elfsym.h"
#include "proc/procmem.h"
#include "proc/targetfile.h"
#include "cpython/pyread.h"
#include "cpython/versions.h"
#include "cpython/asyncio.h"

#define TASK_READ_MAX 512              /* bytes of a TaskObj read at most */
#define TPFLAGS_LONG_SUBCLASS (1ul << 24)
#define TPFLAGS_UNICODE_SUBCLASS (1ul << 28)
/* PySetObject (3.14, 3.15 default builds): mask, table; setentry {key, hash} */
#define SET_MASK 32
#define SET_TABLE 40
#define SETENTRY_SIZE 16
/* PyLongObject (3.12+): lv_tag (digit count << 3 | sign), then 30-bit digits */
#define LONG_TAG 16
#define LONG_DIGIT 24

const struct tb_asyncio_offsets *tb_asyncio_offsets(const struct tb_layout *l)
{
	const struct tb_pyversion *v = tb_pyversion(l->minor);

	if (!v || !v->asyncio || l->free_threaded || !l->bpf.tstate_running_task)
		return NULL;
	return v->asyncio;
}

/* Py_AsyncioModuleDebugOffsets: asyncio_task_object {size, task_name, task_awaited_by,
 * task_is_task, task_awaited_by_is_set, task_coro, task_node}, asyncio_interpreter_state
 * {size, asyncio_tasks_head}, asyncio_thread_state {size, asyncio_running_loop,
 * asyncio_running_task, asyncio_tasks_head}. */
enum { D_TASK_SIZE, D_NAME, D_AWAITED_BY, D_IS_TASK, D_IS_SET, D_CORO, D_NODE, D_INTERP_SIZE,
       D_INTERP_HEAD, D_TSTATE_SIZE, D_LOOP, D_RUNNING_TASK, D_TSTATE_HEAD, D_VALUES };
_Static_assert(D_VALUES * 8 == TB_ASYNCIO_DEBUG_SIZE, "13 values");

int tb_asyncio_parse_debug(const unsigned char *buf, size_t len, struct tb_asyncio_offsets *out,
			   uint16_t *tstate_running_task, char *err, size_t errlen)
{
	uint64_t v[D_VALUES];
	const struct { int at; unsigned width; int in; const char *name; } fields[] = {
		{ D_NAME, 8, D_TASK_SIZE, "task_name" }, { D_AWAITED_BY, 8, D_TASK_SIZE, "task_awaited_by" },
		{ D_IS_TASK, 1, D_TASK_SIZE, "task_is_task" }, { D_IS_SET, 1, D_TASK_SIZE, "task_awaited_by_is_set" },
		{ D_CORO, 8, D_TASK_SIZE, "task_coro" }, { D_RUNNING_TASK, 8, D_TSTATE_SIZE, "asyncio_running_task" },
	};

	if (!buf || len < TB_ASYNCIO_DEBUG_SIZE) {
		snprintf(err, errlen, "the AsyncioDebug section has %zu bytes, %d needed", len, TB_ASYNCIO_DEBUG_SIZE);
		return -1;
	}
	memcpy(v, buf, sizeof(v));
	if (v[D_TASK_SIZE] > TASK_READ_MAX || v[D_TSTATE_SIZE] > 0xffff) {
		snprintf(err, errlen, "the AsyncioDebug section claims a %llu-byte task, a %llu-byte thread state",
			 (unsigned long long)v[D_TASK_SIZE], (unsigned long long)v[D_TSTATE_SIZE]);
		return -1;
	}
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (v[fields[i].at] + fields[i].width > v[fields[i].in] || (fields[i].width == 8 && v[fields[i].at] % 8)) {
			snprintf(err, errlen, "the AsyncioDebug section's %s (%llu) is outside its struct or misaligned",
				 fields[i].name, (unsigned long long)v[fields[i].at]);
			return -1;
		}
	memset(out, 0, sizeof(*out));
	out->task_size = (uint16_t)v[D_TASK_SIZE];
	out->task_name = (uint16_t)v[D_NAME];
	out->task_awaited_by = (uint16_t)v[D_AWAITED_BY];
	out->task_is_task = (uint16_t)v[D_IS_TASK];
	out->task_awaited_by_is_set = (uint16_t)v[D_IS_SET];
	out->task_coro = (uint16_t)v[D_CORO];
	*tstate_running_task = (uint16_t)v[D_RUNNING_TASK];
	return 0;
}

#define VERIFY_FILES 4                 /* files looked at for the section, at most */
#define VERIFY_FILE_MAX (256ull << 20) /* bytes of such a file, at most */

/* May this mapped file hold an AsyncioDebug section?  The _asyncio extension
 * module, or the interpreter where it is built in. */
static int may_hold_asyncio(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strncmp(base, "_asyncio.", 9) == 0 && strstr(base, ".so"))
		return 2;
	return (strncmp(base, "python", 6) == 0 || strncmp(base, "libpython", 9) == 0) && !strstr(base, ".cpython-");
}

/* The section of the file mapped at [start, end) parsed: 1, 0 (none), -1. */
static int section_of(pid_t pid, uint64_t start, uint64_t end, const char *path,
		      struct tb_asyncio_offsets *a, uint16_t *running, char *err, size_t errlen)
{
	const char *why = NULL;
	struct stat st;
	struct tb_elf e;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *d;
	int fd = tb_open_mapped(pid, start, end, path, VERIFY_FILE_MAX, &st, &why), rc = 0;

	if (fd < 0 || tb_elf_open_fd(fd, &e))
		return 0;
	scn = tb_elf_scn(e.elf, ".AsyncioDebug", &sh);
	if (scn) {
		d = tb_elf_data(e.elf, scn);
		rc = d && tb_asyncio_parse_debug(d->d_buf, d->d_size, a, running, err, errlen) == 0 ? 1 : -1;
		if (!d)
			snprintf(err, errlen, "its AsyncioDebug section cannot be read");
	}
	tb_elf_close(&e);
	return rc;
}

int tb_asyncio_verify(pid_t pid, const struct tb_layout *l, char *err, size_t errlen)
{
	const struct tb_asyncio_offsets *t = tb_asyncio_offsets(l);
	char path[64], line[PATH_MAX + 128];
	int files = 0, rc = 0;
	FILE *f;

	if (!t)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (rc == 0 && files < VERIFY_FILES && fgets(line, sizeof(line), f)) {
		struct tb_asyncio_offsets a;
		uint64_t start, end, offset;
		uint16_t running = 0;
		int pos = 0;

		if (!strchr(line, '\n'))
			break;             /* a name longer than PATH_MAX: stop here */
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &start, &end, &offset, &pos) < 3 ||
		    pos == 0 || offset != 0 || line[pos] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (!may_hold_asyncio(line + pos))
			continue;
		files++;
		rc = section_of(pid, start, end, line + pos, &a, &running, err, errlen);
		if (rc == 1 && (a.task_size != t->task_size || a.task_name != t->task_name ||
				a.task_awaited_by != t->task_awaited_by || a.task_is_task != t->task_is_task ||
				a.task_awaited_by_is_set != t->task_awaited_by_is_set || a.task_coro != t->task_coro ||
				running != l->bpf.tstate_running_task || a.task_coro != l->bpf.task_coro)) {
			snprintf(err, errlen, "its AsyncioDebug section (task size %u, name at %u, coroutine at %u, "
				 "running task at %u) differs from what CPython 3.%u's row says (%u, %u, %u, %u)",
				 a.task_size, a.task_name, a.task_coro, running, l->minor, t->task_size, t->task_name,
				 t->task_coro, l->bpf.tstate_running_task);
			rc = -1;
		}
	}
	fclose(f);
	return rc;
}

static int is_aligned_ptr(uint64_t p)
{
	return p && !(p & 7) && p < (1ull << 47);
}

/* "Task-N" for a task whose name was never set (task_name holds the int N). */
static int read_counter_name(pid_t pid, uint64_t obj, char *out, size_t outlen)
{
	uint64_t tag;
	uint32_t d[2] = { 0, 0 };
	unsigned ndigits;

	if (tb_mem_read_u64(pid, obj + LONG_TAG, &tag))
		return -1;
	ndigits = (unsigned)(tag >> 3);
	if ((tag & 3) != 0 || ndigits < 1 || ndigits > 2 ||
	    tb_mem_read(pid, obj + LONG_DIGIT, d, 4 * ndigits))
		return -1;
	snprintf(out, outlen, "Task-%llu",
		 (unsigned long long)(d[0] & 0x3fffffffu) | ((unsigned long long)(d[1] & 0x3fffffffu) << 30));
	return 0;
}

/* A task's name: its str, or "Task-N". */
static int read_name(pid_t pid, const struct tb_layout *l, uint64_t obj, char *out, size_t outlen)
{
	uint64_t type, flags;

	if (!is_aligned_ptr(obj) || tb_mem_read_u64(pid, obj + l->bpf.object_type, &type) ||
	    !is_aligned_ptr(type) || tb_mem_read_u64(pid, type + l->type_flags, &flags))
		return -1;
	if (flags & TPFLAGS_UNICODE_SUBCLASS)
		return tb_read_pystr(pid, l, obj, out, outlen);
	if (flags & TPFLAGS_LONG_SUBCLASS)
		return read_counter_name(pid, obj, out, outlen);
	return -1;
}

/* The first future of an awaited_by set (entries with a key, not the dummy's hash -1). */
static uint64_t first_in_set(pid_t pid, uint64_t set)
{
	uint64_t mask, table, e[2];

	if (tb_mem_read_u64(pid, set + SET_MASK, &mask) || tb_mem_read_u64(pid, set + SET_TABLE, &table) ||
	    !is_aligned_ptr(table))
		return 0;
	for (uint64_t i = 0; i <= mask && i < TB_TASK_SET_MAX; i++) {
		if (tb_mem_read(pid, table + i * SETENTRY_SIZE, e, sizeof(e)))
			return 0;
		if (is_aligned_ptr(e[0]) && e[1] != UINT64_MAX)
			return e[0];
	}
	return 0;
}

/* The task's object (its first a->task_size bytes, at most TASK_READ_MAX), checked to be
 * a task: 0 on success. */
static int read_task(pid_t pid, const struct tb_asyncio_offsets *a, uint64_t task, unsigned char *buf)
{
	if (!is_aligned_ptr(task) || tb_mem_read(pid, task, buf, a->task_size))
		return -1;
	return buf[a->task_is_task] == 1 ? 0 : -1;
}

static uint64_t field_u64(const unsigned char *buf, uint16_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

int tb_asyncio_read(pid_t pid, const struct tb_layout *l, uint64_t task, uint32_t coro32,
		    struct tb_task_chain *out)
{
	const struct tb_asyncio_offsets *a = tb_asyncio_offsets(l);
	unsigned char buf[TASK_READ_MAX];
	uint64_t at = task, code;

	memset(out, 0, sizeof(*out));
	if (!a || a->task_size > TASK_READ_MAX || a->task_coro + 8u > a->task_size ||
	    a->task_name + 8u > a->task_size || a->task_awaited_by + 8u > a->task_size ||
	    a->task_is_task >= a->task_size || a->task_awaited_by_is_set >= a->task_size)
		return -1;
	while (at && out->n < TB_TASK_CHAIN) {
		uint64_t awaiter;

		for (unsigned i = 0; i < out->n; i++)
			if (out->addr[i] == at)
				return 0;      /* a cycle: the chain so far */
		if (read_task(pid, a, at, buf))
			break;
		if (out->n == 0) {
			out->coro = field_u64(buf, a->task_coro);
			if ((uint32_t)out->coro != coro32 || !is_aligned_ptr(out->coro))
				return -1;     /* the address holds another task now */
			if (!tb_mem_read_u64(pid, out->coro + a->gen_iframe, &code))
				out->coro_code = code & ~(uint64_t)l->bpf.code_tag_mask;
		}
		out->addr[out->n] = at;
		if (read_name(pid, l, field_u64(buf, a->task_name), out->name[out->n], TB_TASK_NAME_MAX))
			snprintf(out->name[out->n], TB_TASK_NAME_MAX, "?");
		out->n++;
		awaiter = field_u64(buf, a->task_awaited_by);
		if (awaiter && buf[a->task_awaited_by_is_set])
			awaiter = first_in_set(pid, awaiter);
		at = is_aligned_ptr(awaiter) ? awaiter : 0;
	}
	return out->n ? 0 : -1;
}
