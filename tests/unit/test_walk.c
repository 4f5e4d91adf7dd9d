/* test_walk.c: cmocka tests of user/cpython/walk.c (the user-space stack walk of `dump`)
 * against fake interpreter structures laid out in this test's own memory with the 3.13
 * layout, read back through process_vm_readv of its own pid: a normal walk, lying layouts
 * (offsets beyond the read buffers, overlapping fields), thread lists and frame chains that
 * loop back, chains longer than the bounds, thread-local bytecode (free-threaded 3.14+)
 * with good and hostile indexes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cpython/walk.h"

#define NTHREADS 3
#define NFRAMES 300

/* The fake process: one runtime, one interpreter, thread states, frames, code objects. */
static struct fake {
	_Alignas(8) unsigned char runtime[1024];
	_Alignas(8) unsigned char interp[8192];
	_Alignas(8) unsigned char tstate[NTHREADS][512];
	_Alignas(8) unsigned char frame[NFRAMES][128];
	_Alignas(8) unsigned char code[4][256];
	_Alignas(8) unsigned char code_type[64];
	_Alignas(8) uint64_t tlbc[4][4];            /* co_tlbc arrays: size, entries[3] */
	_Alignas(8) unsigned char copy[4][256];     /* threads' own copies of the bytecode */
} *F;

static struct tb_target T;
static struct tb_uthread th[16];

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static void put64(unsigned char *base, unsigned off, uint64_t v)
{
	memcpy(base + off, &v, 8);
}

static void put32(unsigned char *base, unsigned off, uint32_t v)
{
	memcpy(base + off, &v, 4);
}

/* Thread i runs frames first..first+n-1 (innermost first), each in code (k % 4) at
 * instruction k. */
static void chain(int i, int first, int n)
{
	const struct tb_py_offsets *o = &T.layout.bpf;

	put64(F->tstate[i], o->tstate_frame, n ? addr(F->frame[first]) : 0);
	for (int k = first; k < first + n; k++) {
		unsigned char *fr = F->frame[k], *co = F->code[k % 4];

		memset(fr, 0, sizeof(F->frame[k]));
		put64(fr, o->frame_previous, k + 1 < first + n ? addr(F->frame[k + 1]) : 0);
		put64(fr, o->frame_code, addr(co));
		put64(fr, o->frame_instr, addr(co) + o->code_adaptive + 2u * (unsigned)k);
	}
}

/* The 3.13 layout, NTHREADS threads of 2 frames each. */
static int setup(void **state)
{
	const struct tb_py_offsets *o;

	(void)state;
	F = calloc(1, sizeof(*F));
	memset(&T, 0, sizeof(T));
	T.pid = getpid();
	assert_int_equal(tb_layout_builtin(0x030d00f0, &T.layout), 0);
	o = &T.layout.bpf;
	T.runtime_addr = addr(F->runtime);
	T.pycode_type = addr(F->code_type);
	put64(F->runtime, o->runtime_interp_head, addr(F->interp));
	put64(F->interp, o->interp_threads_head, addr(F->tstate[0]));
	for (int i = 0; i < NTHREADS; i++) {
		put64(F->tstate[i], o->tstate_next, i + 1 < NTHREADS ? addr(F->tstate[i + 1]) : 0);
		put64(F->tstate[i], o->tstate_thread_id, 0x1000u + (unsigned)i);
		put64(F->tstate[i], T.layout.tstate_native_thread_id, 100u + (unsigned)i);
		chain(i, 2 * i, 2);
	}
	for (int c = 0; c < 4; c++) {
		put64(F->code[c], o->object_type, T.pycode_type);
		put32(F->code[c], o->code_firstlineno, 10u * (unsigned)c);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(F);
	return 0;
}

static int walk(int max_depth, char *err, size_t errlen)
{
	return tb_walk_process(&T, th, 16, max_depth, err, errlen);
}

static void test_walk_ok(void **state)
{
	(void)state;
	char err[256];
	int n;

	n = walk(64, err, sizeof(err));
	assert_int_equal(n, NTHREADS);
	assert_string_equal(err, "");
	for (int i = 0; i < n; i++) {
		assert_null(th[i].error);
		assert_int_equal(th[i].native_tid, 100 + i);
		assert_int_equal(th[i].ident, 0x1000 + i);
		assert_int_equal(th[i].depth, 2);
		assert_false(th[i].truncated);
		assert_int_equal(th[i].frames[0].code, addr(F->code[(2 * i) % 4]));
		assert_int_equal(th[i].frames[1].offset, 2 * (2 * i + 1));
	}
	tb_walk_free(th, n);
}

/* Offsets that pass no validation: the walker checks the layout itself. */
static void test_walk_lying_layout(void **state)
{
	static const struct { size_t at; uint16_t v; const char *want; } lies[] = {
		{ offsetof(struct tb_layout, bpf.frame_previous), 65000, "interpreter_frame.previous" },
		{ offsetof(struct tb_layout, bpf.tstate_frame), 65000, "thread_state.current_frame" },
		{ offsetof(struct tb_layout, bpf.tstate_next), 256, "thread_state.next" },
		{ offsetof(struct tb_layout, bpf.frame_owner), 127, "interpreter_frame.owner" },
		{ offsetof(struct tb_layout, bpf.code_firstlineno), 124, "code_object.firstlineno" },
		{ offsetof(struct tb_layout, tstate_native_thread_id), 65535 - 8, "thread_state.native_thread_id" },
	};
	char err[256];

	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		setup(state);
		memcpy((unsigned char *)&T.layout + lies[i].at, &lies[i].v, 2);
		assert_int_equal(walk(64, err, sizeof(err)), -1);
		if (!strstr(err, lies[i].want))
			fail_msg("\"%s\" does not name %s", err, lies[i].want);
		teardown(state);
	}
}

/* Overlapping fields read the wrong things, within bounds. */
static void test_walk_overlapping(void **state)
{
	struct tb_py_offsets *o;
	char err[256];
	int n;

	setup(state);
	o = &T.layout.bpf;
	o->frame_previous = o->frame_code;   /* the code object taken for the caller's frame */
	o->tstate_frame = o->tstate_next;    /* the next thread taken for the frame */
	n = walk(64, err, sizeof(err));
	assert_true(n >= 1 && n <= NTHREADS);
	tb_walk_free(th, n);
	teardown(state);

	setup(state);
	o = &T.layout.bpf;
	T.pycode_type = 0;                   /* nothing type-checked */
	o->frame_previous = o->frame_instr;  /* a pointer into the bytecode taken for a frame */
	n = walk(64, err, sizeof(err));
	assert_int_equal(n, NTHREADS);
	tb_walk_free(th, n);
	teardown(state);
}

static void test_walk_frame_cycle(void **state)
{
	const struct tb_py_offsets *o;
	char err[256];
	int n;

	(void)state;
	o = &T.layout.bpf;
	/* thread 0: 0 -> 1 -> 0; thread 1: 2 -> 3 -> 3 */
	put64(F->frame[1], o->frame_previous, addr(F->frame[0]));
	put64(F->frame[3], o->frame_previous, addr(F->frame[3]));
	n = walk(1000, err, sizeof(err));
	assert_int_equal(n, NTHREADS);
	assert_string_equal(err, "");
	for (int i = 0; i < 2; i++) {
		assert_non_null(th[i].error);
		assert_non_null(strstr(th[i].error, "loops back"));
		assert_true(th[i].depth <= 8);  /* noticed early, not at the depth bound */
	}
	assert_null(th[2].error);
	tb_walk_free(th, n);
}

static void test_walk_thread_cycle(void **state)
{
	const struct tb_py_offsets *o;
	char err[256];
	int n;

	(void)state;
	o = &T.layout.bpf;
	put64(F->tstate[NTHREADS - 1], o->tstate_next, addr(F->tstate[1]));
	n = walk(64, err, sizeof(err));
	assert_int_equal(n, NTHREADS);   /* each thread once */
	assert_non_null(strstr(err, "thread list"));
	assert_non_null(strstr(err, "loops back"));
	tb_walk_free(th, n);
	/* the interpreter list too: the thread lists are walked once each */
	put64(F->tstate[NTHREADS - 1], o->tstate_next, 0);
	put64(F->interp, o->interp_next, addr(F->interp));
	n = walk(64, err, sizeof(err));
	assert_true(n >= NTHREADS && n <= 2 * NTHREADS);
	assert_non_null(strstr(err, "interpreter list"));
	tb_walk_free(th, n);
}

/* A chain longer than the depth: truncated at max_depth, never past the array. */
static void test_walk_deep(void **state)
{
	(void)state;
	char err[256];
	int n;

	chain(0, 0, NFRAMES);
	n = walk(100, err, sizeof(err));
	assert_int_equal(n, NTHREADS);
	assert_int_equal(th[0].depth, 100);
	assert_true(th[0].truncated);
	assert_null(th[0].error);
	tb_walk_free(th, n);
	/* more threads than room: the rest are not shown, and it says so */
	n = tb_walk_process(&T, th, 2, 100, err, sizeof(err));
	assert_int_equal(n, 2);
	assert_non_null(strstr(err, "more than 2 threads"));
	tb_walk_free(th, n);
}

/* Thread-local bytecode: a frame whose tlbc_index is not 0 runs its code object's copy
 * co_tlbc->entries[tlbc_index]; offsets are relative to that copy. Positions of 3.14t. */
static void test_walk_tlbc(void **state)
{
	struct tb_py_offsets *o = &T.layout.bpf;
	char err[256];
	int n;

	(void)state;
	o->frame_tlbc_index = 72;
	o->code_tlbc = 224;
	for (int c = 0; c < 4; c++) {
		F->tlbc[c][0] = 3;
		F->tlbc[c][1] = addr(F->code[c]) + o->code_adaptive;
		F->tlbc[c][3] = addr(F->copy[c]);
		put64(F->code[c], o->code_tlbc, addr(F->tlbc[c]));
	}
	/* thread 0 (frames 0, 1) on the code objects' own bytecode: index 0, co_tlbc not read;
	 * thread 1 (frames 2, 3) on copy 2, instruction k at 2k */
	put64(F->code[0], o->code_tlbc, 0);
	for (int k = 2; k < 4; k++) {
		put32(F->frame[k], o->frame_tlbc_index, 2);
		put64(F->frame[k], o->frame_instr, addr(F->copy[k % 4]) + 2u * (unsigned)k);
	}
	/* thread 2 (frames 4, 5: code objects 0, 1): no co_tlbc; an index past the array's size */
	put32(F->frame[4], o->frame_tlbc_index, 1);
	put32(F->frame[5], o->frame_tlbc_index, 3);
	n = walk(64, err, sizeof(err));
	assert_int_equal(n, NTHREADS);
	assert_string_equal(err, "");
	for (int i = 0; i < n; i++) {
		assert_null(th[i].error);
		assert_int_equal(th[i].depth, 2);
	}
	assert_int_equal(th[0].frames[1].offset, 2);
	assert_int_equal(th[1].frames[0].offset, 4);
	assert_int_equal(th[1].frames[1].offset, 6);
	/* not found: the frame is kept, its offset unknown (-2, as before the first instruction) */
	assert_int_equal(th[2].frames[0].offset, -2);
	assert_int_equal(th[2].frames[1].offset, -2);
	assert_int_equal(th[2].frames[1].code, addr(F->code[1]));
	tb_walk_free(th, n);

	/* hostile indexes and arrays: negative, huge, a size that lies, an unreadable array */
	static const struct { int32_t idx; uint64_t size, arr; } bad[] = {
		{ -1, 3, 1 }, { INT32_MIN, 3, 1 }, { INT32_MAX, 3, 1 }, { 2, (uint64_t)-1, 1 },
		{ 2, 0, 1 }, { 2, 3, 4096 },
	};
	for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		F->tlbc[3][0] = bad[b].size;
		put64(F->code[3], o->code_tlbc, bad[b].arr == 1 ? addr(F->tlbc[3]) : bad[b].arr);
		put32(F->frame[3], o->frame_tlbc_index, (uint32_t)bad[b].idx);
		n = walk(64, err, sizeof(err));
		assert_int_equal(n, NTHREADS);
		assert_int_equal(th[1].depth, 2);
		assert_int_equal(th[1].frames[0].offset, 4);   /* frame 2 still on its copy */
		assert_int_equal(th[1].frames[1].offset, -2);
		tb_walk_free(th, n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_walk_ok, setup, teardown),
		cmocka_unit_test(test_walk_lying_layout),
		cmocka_unit_test(test_walk_overlapping),
		cmocka_unit_test_setup_teardown(test_walk_frame_cycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_thread_cycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_deep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_tlbc, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
