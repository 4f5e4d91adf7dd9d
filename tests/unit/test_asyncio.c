/* test_asyncio.c: cmocka tests of --async-aware: cpython/asyncio.c reading a running task,
 * its name and the tasks awaiting it from fake TaskObj, str, int, set and coroutine objects
 * laid out in this test's own memory (3.14 offsets), read back through process_vm_readv of
 * its own pid: named and "Task-N" tasks, awaiters (one future, a set, a cycle, a chain
 * longer than the bound), a reused address (another coroutine), not a task, hostile names
 * (control characters kept, long ones cut); model/tasks.c's cache (one read per task and
 * refresh period; a refresh that fails keeps the frames) and profile.c's placement of the
 * <task NAME> frames at the root of the task's coroutine frames, with the awaiters below,
 * and of <task (finished)> for a task gone before it was read; the AsyncioDebug section parser on
 * lying copies, and the version table against the sections of the sid 3.14 and 3.15 builds
 * when they are installed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sys/mman.h>
#include "cpython/asyncio.h"
#include "proc/elfsym.h"
#include "model/profile.h"
#include "helpers.h"

#define NTASKS 12
#define STR_TYPE_FLAGS (1ul << 28)
#define LONG_TYPE_FLAGS (1ul << 24)

static struct fake {
	_Alignas(16) unsigned char task[NTASKS][256];
	_Alignas(16) unsigned char name[NTASKS][2048];
	_Alignas(16) unsigned char coro[NTASKS][128];
	_Alignas(16) unsigned char str_type[256], long_type[256], set[128];
	_Alignas(16) uint64_t table[8][2];
} *F;
static struct tb_layout L;
static const struct tb_asyncio_offsets *A;

static uint64_t addr(const void *p) { return (uint64_t)(uintptr_t)p; }
static void put64(unsigned char *b, unsigned off, uint64_t v) { memcpy(b + off, &v, 8); }

/* An ASCII str object at name[i]. */
static void set_str(int i, const char *s)
{
	unsigned char *o = F->name[i];
	uint64_t len = strlen(s);
	uint32_t state = (1u << L.unicode_kind_shift) | (1u << L.unicode_compact_bit) | (1u << L.unicode_ascii_bit);

	memset(o, 0, sizeof(F->name[i]));
	put64(o, L.bpf.object_type, addr(F->str_type));
	put64(o, L.unicode_length, len);
	memcpy(o + L.unicode_state, &state, 4);
	memcpy(o + L.unicode_ascii_data, s, len + 1);
}

/* An int object (one 30-bit digit) at name[i]: a task whose name was never set. */
static void set_counter(int i, uint32_t n)
{
	unsigned char *o = F->name[i];
	uint32_t digit = n;

	memset(o, 0, sizeof(F->name[i]));
	put64(o, L.bpf.object_type, addr(F->long_type));
	put64(o, 16, 1u << 3);
	memcpy(o + 24, &digit, 4);
}

/* Task i: its name object, its coroutine (whose frame runs code 0x1000 * (i + 1)), awaited
 * by task `by` (-1: nothing). */
static void set_task(int i, int by)
{
	unsigned char *t = F->task[i];

	memset(t, 0, sizeof(F->task[i]));
	t[A->task_is_task] = 1;
	put64(t, A->task_name, addr(F->name[i]));
	put64(t, A->task_coro, addr(F->coro[i]));
	put64(t, A->task_awaited_by, by >= 0 ? addr(F->task[by]) : 0);
	put64(F->coro[i], A->gen_iframe, 0x1000u * (unsigned)(i + 1) | 1); /* a tagged f_executable */
}

static uint32_t coro32(int i) { return (uint32_t)addr(F->coro[i]); }

static int setup(void **state)
{
	(void)state;
	F = calloc(1, sizeof(*F));
	assert_int_equal(tb_layout_builtin(0x030e0af0, &L), 0);
	A = tb_asyncio_offsets(&L);
	assert_non_null(A);
	put64(F->str_type, L.type_flags, STR_TYPE_FLAGS);
	put64(F->long_type, L.type_flags, LONG_TYPE_FLAGS);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(F);
	return 0;
}

static void test_versions(void **state)
{
	struct tb_layout l;

	(void)state;
	for (uint32_t hex = 0x030a00f0; hex <= 0x030d00f0; hex += 0x10000) {
		assert_int_equal(tb_layout_builtin(hex, &l), 0);
		assert_null(tb_asyncio_offsets(&l));    /* before 3.14: no task attribution */
	}
	assert_int_equal(tb_layout_builtin(0x030f02f0, &l), 0);
	assert_non_null(tb_asyncio_offsets(&l));
	l.free_threaded = 1;
	assert_null(tb_asyncio_offsets(&l));        /* the t builds' offsets are not known */
}

static void test_chain(void **state)
{
	struct tb_task_chain c;

	(void)state;
	set_str(0, "alpha");
	set_str(1, "parent");
	set_counter(2, 7);
	set_task(0, 1);
	set_task(1, 2);
	set_task(2, -1);
	assert_int_equal(tb_asyncio_read(getpid(), &L, addr(F->task[0]), coro32(0), &c), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.name[0], "alpha");
	assert_string_equal(c.name[1], "parent");
	assert_string_equal(c.name[2], "Task-7");
	assert_int_equal(c.coro_code, 0x1000);      /* the tag bits cleared */
	assert_int_equal(c.addr[1], addr(F->task[1]));
	/* another coroutine at the address now: not that task */
	assert_int_equal(tb_asyncio_read(getpid(), &L, addr(F->task[0]), coro32(0) + 16, &c), -1);
	/* not a task (a plain future) */
	F->task[0][A->task_is_task] = 0;
	assert_int_equal(tb_asyncio_read(getpid(), &L, addr(F->task[0]), coro32(0), &c), -1);
	/* unreadable, misaligned */
	assert_int_equal(tb_asyncio_read(getpid(), &L, 0x10, 0, &c), -1);
	assert_int_equal(tb_asyncio_read(getpid(), &L, addr(F->task[1]) + 3, 0, &c), -1);
}

static void test_awaiters(void **state)
{
	struct tb_task_chain c;

	(void)state;
	/* a cycle: 3 awaited by 4, 4 by 3 */
	set_str(3, "a");
	set_str(4, "b");
	set_task(3, 4);
	set_task(4, 3);
	assert_int_equal(tb_asyncio_read(getpid(), &L, addr(F->task[3]), coro32(3), &c), 0);
	assert_int_equal(c.n, 2);
	/* a set of awaiters: the first live entry (dummy and empty ones skipped) */
	set_task(5, -1);
	set_str(5, "child");
	set_str(6, "waiter");
	set_task(6, -1);
	memset(F->table, 0, sizeof(F->table));
	F->table[0][0] = addr(F->task[3]);
	F->table[0][1] = UINT64_MAX;                /* a dummy (removed) entry */
	F->table[2][0] = addr(F->task[6]);
	F->table[2][1] = 42;
	put64(F->set, 32, 7);                       /* mask */
	put64(F->set, 40, addr(F->table));
	put64(F->task[5], A->task_awaited_by, addr(F->set));
	F->task[5][A->task_awaited_by_is_set] = 1;
	assert_int_equal(tb_asyncio_read(getpid(), &L, addr(F->task[5]), coro32(5), &c), 0);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.name[1], "waiter");
	/* a lying mask: at most TB_TASK_SET_MAX entries looked at, then none found */
	memset(F->table, 0, sizeof(F->table));
	put64(F->set, 32, UINT64_MAX);
	assert_int_equal(tb_asyncio_read(getpid(), &L, addr(F->task[5]), coro32(5), &c), 0);
	assert_int_equal(c.n, 1);
	/* a chain longer than the bound */
	for (int i = 0; i < NTASKS; i++) {
		set_str(i, "x");
		set_task(i, i + 1 < NTASKS ? i + 1 : -1);
	}
	assert_int_equal(tb_asyncio_read(getpid(), &L, addr(F->task[0]), coro32(0), &c), 0);
	assert_int_equal(c.n, TB_TASK_CHAIN);
}

static void test_hostile_names(void **state)
{
	struct tb_task_chain c;
	char longname[1500];

	(void)state;
	set_str(0, "a;b\n<i>\"c\"</i>");
	set_task(0, -1);
	assert_int_equal(tb_asyncio_read(getpid(), &L, addr(F->task[0]), coro32(0), &c), 0);
	assert_string_equal(c.name[0], "a;b\n<i>\"c\"</i>");  /* literal: the writers escape */
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	set_str(0, longname);
	assert_int_equal(tb_asyncio_read(getpid(), &L, addr(F->task[0]), coro32(0), &c), 0);
	assert_int_equal(strlen(c.name[0]), TB_TASK_NAME_MAX - 1);
	/* a name of another type: "?" */
	put64(F->name[0], L.bpf.object_type, addr(F->set));
	assert_int_equal(tb_asyncio_read(getpid(), &L, addr(F->task[0]), coro32(0), &c), 0);
	assert_string_equal(c.name[0], "?");
}

/* A sample of this process whose running task is task 0 (awaited by 1), its Python frames
 * (innermost first) codes[0..n); the coroutine's low bits as the BPF program saw them
 * plus coro_delta (not 0: another task, gone since, had the address). */
static void sample_coro(struct tb_profile *p, const uint64_t *codes, int n, uint64_t time_ns, uint32_t coro_delta)
{
	static struct tb_frame f[8];
	struct tb_sample_hdr h;

	memset(&h, 0, sizeof(h));
	memset(f, 0, sizeof(f));
	h.pid = h.tid = h.ns_tid = (uint32_t)getpid();
	h.time_ns = time_ns;
	h.depth = (uint16_t)n;
	h.task = addr(F->task[0]);
	h.task_coro = coro32(0) + coro_delta;
	for (int i = 0; i < n; i++) {
		f[i].code = codes[i];
		f[i].code_id = 1;
		f[i].offset = -2;
		f[i].flags = TB_FF_NO_OPCODE;
	}
	th_send(p, &h, f, 1);
}

static void sample(struct tb_profile *p, const uint64_t *codes, int n, uint64_t time_ns)
{
	sample_coro(p, codes, n, time_ns, 0);
}

static void test_profile_frames(void **state)
{
	/* innermost first: spin, the task's coroutine (code 0x1000), Handle._run, run_forever */
	const uint64_t codes[] = { 0x5000, 0x1000, 0x6000, 0x7000 };
	const uint64_t nocoro[] = { 0x5000, 0x6000 };
	struct tb_profile p;
	const struct tb_stack *s;
	const struct tb_sframe *f;
	uint64_t reads;

	(void)state;
	set_str(0, "worker");
	set_str(1, "main");
	set_task(0, 1);
	set_task(1, -1);
	tb_profile_init(&p);
	p.async_aware = 1;
	th_add_process(&p, (uint32_t)getpid(), "self", NULL, 0x030e0af0);
	sample(&p, codes, 4, 1000);
	assert_int_equal(p.nstacks, 1);
	s = &p.stacks[0];
	f = tb_stack_frames(&p, s);
	assert_int_equal(s->depth, 6);
	assert_int_equal(p.sym.codes[f[1].code].addr, 0x1000);
	assert_int_equal(p.sym.codes[f[2].code].kind, TB_CODE_TASK);
	assert_string_equal(tb_str(&p.strs, p.sym.codes[f[2].code].qualname), "<task worker>");
	assert_string_equal(tb_str(&p.strs, p.sym.codes[f[3].code].qualname), "<task main>");
	assert_int_equal(p.sym.codes[f[4].code].addr, 0x6000);
	assert_int_equal(p.task_samples, 1);
	/* cached: no read for the same task within the refresh period, one after it */
	reads = p.tasks.reads;
	sample(&p, codes, 4, 2000);
	assert_int_equal(p.tasks.reads, reads);
	assert_int_equal(p.stacks[0].count, 2);
	sample(&p, codes, 4, 1000 + TB_TASK_REFRESH_NS + 1);
	assert_int_equal(p.tasks.reads, reads + 1);
	/* the task ended since: a refresh that cannot read it keeps its frames */
	F->task[0][A->task_is_task] = 0;
	sample(&p, codes, 4, 1000 + 2 * TB_TASK_REFRESH_NS + 2);
	assert_int_equal(p.tasks.reads, reads + 2);
	assert_int_equal(p.stacks[0].count, 4);
	F->task[0][A->task_is_task] = 1;
	/* a task gone before it was read (its address holds another coroutine): one
	 * <task (finished)> frame, at the root of a coroutine that a task was seen running */
	sample_coro(&p, codes, 4, 3000, 16);
	s = &p.stacks[p.nstacks - 1];
	f = tb_stack_frames(&p, s);
	assert_int_equal(s->depth, 5);
	assert_int_equal(p.sym.codes[f[1].code].addr, 0x1000);
	assert_string_equal(tb_str(&p.strs, p.sym.codes[f[2].code].qualname), "<task (finished)>");
	assert_int_equal(p.sym.codes[f[3].code].addr, 0x6000);
	assert_int_equal(p.tasks.gone, 1);
	assert_int_equal(p.task_samples, 5);
	assert_int_equal(p.tasks.sampled, 5);
	/* the coroutine's frame not on the stack: the task frames above the Python frames */
	sample(&p, nocoro, 2, 3000);
	s = &p.stacks[p.nstacks - 1];
	f = tb_stack_frames(&p, s);
	assert_int_equal(s->depth, 4);
	assert_int_equal(p.sym.codes[f[0].code].kind, TB_CODE_TASK);
	/* a target showing a new task address in every sample: reads within the budget */
	reads = p.tasks.reads;
	for (int i = 0; i < 3 * TB_TASK_READS_PER_S; i++) {
		struct tb_sample_hdr h;
		static const struct tb_frame fr = { 0x5000, -2, 1, 0, TB_FF_NO_OPCODE };

		memset(&h, 0, sizeof(h));
		h.pid = h.tid = h.ns_tid = (uint32_t)getpid();
		h.time_ns = 5000 + (uint64_t)i;
		h.depth = 1;
		h.task = 0x10000000u + 16u * (unsigned)i;
		th_send(&p, &h, &fr, 1);
	}
	assert_true(p.tasks.reads - reads <= TB_TASK_READS_PER_S);
	assert_true(p.tasks.skipped >= TB_TASK_READS_PER_S);
	/* without --async-aware: no task frames */
	p.async_aware = 0;
	sample(&p, nocoro, 2, 4000);
	assert_int_equal(p.stacks[p.nstacks - 1].depth, 2);
	tb_profile_free(&p);
}

static void test_debug_section(void **state)
{
	static const struct { uint32_t hex; const char *file; } builds[] = {
		{ 0x030e0af0, "/var/cache/tachyon-bpf/pythons/lib/python3.14/lib-dynload/_asyncio.cpython-314-x86_64-linux-gnu.so" },
		{ 0x030f02f0, "/var/cache/tachyon-bpf/pythons/root/usr/bin/python3.15" },
	};
	uint64_t v[13] = { 0xa8, 0x88, 0x60, 0x6c, 0x6d, 0x80, 0x98, 0x37248, 0x2a80, 0x3a8, 0x360, 0x368, 0x370 };
	struct tb_asyncio_offsets a;
	uint16_t running;
	char err[160];

	(void)state;
	assert_int_equal(tb_asyncio_parse_debug((unsigned char *)v, sizeof(v), &a, &running, err, sizeof(err)), 0);
	assert_int_equal(running, 0x368);
	assert_int_equal(a.task_coro, 0x80);
	assert_int_equal(tb_asyncio_parse_debug((unsigned char *)v, 100, &a, &running, err, sizeof(err)), -1);
	v[5] = 0xa4;                                 /* task_coro past the task */
	assert_int_equal(tb_asyncio_parse_debug((unsigned char *)v, sizeof(v), &a, &running, err, sizeof(err)), -1);
	v[5] = 0x81;                                 /* misaligned */
	assert_int_equal(tb_asyncio_parse_debug((unsigned char *)v, sizeof(v), &a, &running, err, sizeof(err)), -1);
	v[5] = 0x80;
	v[0] = 1u << 20;                             /* a huge task */
	assert_int_equal(tb_asyncio_parse_debug((unsigned char *)v, sizeof(v), &a, &running, err, sizeof(err)), -1);
	/* the version table is what the builds' own sections say */
	for (size_t i = 0; i < sizeof(builds) / sizeof(builds[0]); i++) {
		int fd = open(builds[i].file, O_RDONLY | O_CLOEXEC);
		struct tb_elf e;
		struct tb_layout l;
		const struct tb_asyncio_offsets *t;
		GElf_Shdr sh;
		Elf_Scn *scn;
		Elf_Data *d;

		if (fd < 0) {
			printf("  (no %s: not compared)\n", builds[i].file);
			continue;
		}
		assert_int_equal(tb_elf_open_fd(fd, &e), 0);
		scn = tb_elf_scn(e.elf, ".AsyncioDebug", &sh);
		assert_non_null(scn);
		d = tb_elf_data(e.elf, scn);
		assert_non_null(d);
		assert_int_equal(tb_asyncio_parse_debug(d->d_buf, d->d_size, &a, &running, err, sizeof(err)), 0);
		assert_int_equal(tb_layout_builtin(builds[i].hex, &l), 0);
		t = tb_asyncio_offsets(&l);
		assert_non_null(t);
		assert_int_equal(running, l.bpf.tstate_running_task);
		assert_int_equal(a.task_coro, l.bpf.task_coro);
		assert_int_equal(a.task_size, t->task_size);
		assert_int_equal(a.task_name, t->task_name);
		assert_int_equal(a.task_awaited_by, t->task_awaited_by);
		assert_int_equal(a.task_is_task, t->task_is_task);
		assert_int_equal(a.task_awaited_by_is_set, t->task_awaited_by_is_set);
		assert_int_equal(a.task_coro, t->task_coro);
		tb_elf_close(&e);
	}
}

/* Map a copy of file named _asyncio.cpython-314-x86_64-linux-gnu.so in dir (its
 * AsyncioDebug task size changed to task_size unless 0); the mapping's address. */
static void *map_copy(const char *file, const char *dir, uint64_t task_size, size_t *len)
{
	char path[512], cmd[1200];
	struct tb_elf e;
	GElf_Shdr sh;
	void *at;
	int fd;

	snprintf(path, sizeof(path), "%s/_asyncio.cpython-314-x86_64-linux-gnu.so", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", file, path);
	assert_int_equal(system(cmd), 0);
	fd = open(path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	if (task_size) {
		assert_int_equal(tb_elf_open_fd(dup(fd), &e), 0);
		assert_non_null(tb_elf_scn(e.elf, ".AsyncioDebug", &sh));
		assert_int_equal(pwrite(fd, &task_size, sizeof(task_size), (off_t)sh.sh_offset), sizeof(task_size));
		tb_elf_close(&e);
	}
	*len = (size_t)lseek(fd, 0, SEEK_END);
	at = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(at != MAP_FAILED);
	close(fd);
	return at;
}

/* tb_asyncio_verify reads the section of the _asyncio module a process maps: this
 * test's own mappings of a copy of sid 3.14's module, as it is and changed. */
static void test_verify(void **state)
{
	static const char *file =
		"/var/cache/tachyon-bpf/pythons/lib/python3.14/lib-dynload/_asyncio.cpython-314-x86_64-linux-gnu.so";
	char dir[] = "/tmp/tb-asyncio-XXXXXX", err[256] = "", cmd[300];
	struct tb_layout l;
	size_t len;
	void *at;

	(void)state;
	assert_int_equal(tb_layout_builtin(0x030e0af0, &l), 0);
	assert_int_equal(tb_asyncio_verify(getpid(), &l, err, sizeof(err)), 0); /* nothing mapped */
	if (access(file, R_OK)) {
		printf("  (no %s: not verified)\n", file);
		return;
	}
	assert_non_null(mkdtemp(dir));
	at = map_copy(file, dir, 0, &len);
	assert_int_equal(tb_asyncio_verify(getpid(), &l, err, sizeof(err)), 1);
	munmap(at, len);
	at = map_copy(file, dir, 0xb0, &len);                /* a task of another size */
	assert_int_equal(tb_asyncio_verify(getpid(), &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "differs"));
	munmap(at, len);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_awaiters),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test(test_profile_frames),
		cmocka_unit_test(test_debug_section),
		cmocka_unit_test(test_verify),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
