/* fake_ft.c: a process that looks like a free-threaded CPython 3.14t/3.15t to the profiler, for
 * tests/integration/run.py (test_fake_tlbc): no such interpreter can be built here, so this
 * program is compiled with -DPy_BUILD_CORE -DPy_GIL_DISABLED=1 against that version's headers
 * (tests/layout/fetch-headers.sh) and lays out, with their real structs, what the agent reads:
 * _PyRuntime with the headers' own _Py_DebugOffsets, the main interpreter with its GIL disabled,
 * two thread states and their frame chains, code objects with names, a line table and
 * thread-local bytecode (co_tlbc). Both threads spin in C while their fake Python stacks say:
 *
 *   outer (fake_ft.py:30) -> middle (:20) -> leaf (:10), each code object 8 code units, unit k
 *   on line first + 1 + k (its location table), f_executable tagged (Py_TAG_REFCNT: deferred).
 *   main thread (tlbc_index 0): outer at unit 4, middle at 2, leaf at 1 in co_code_adaptive;
 *   worker thread (tlbc_index 2): outer at unit 3 of co_code_adaptive (index 0), middle at
 *   unit 5 and leaf at unit 6 of its own copies co_tlbc->entries[2].
 *
 * The leaf's own bytecode holds opcode BASE at every unit, the worker's copy SPEC (argv).
 * Usage: fake_ft SECONDS SPEC BASE; prints "ready TID" (the worker's tid) once set up.
 * Linked with unresolved symbols ignored (the runtime initializer names libpython functions
 * that are never called). */
#include <Python.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#if PY_VERSION_HEX < 0x030E0000 || !defined(Py_GIL_DISABLED)
#error "fake_ft.c: for the free-threaded build of 3.14+ (thread-local bytecode)"
#endif
#include "pycore_runtime.h"
#include "pycore_interp.h"
#include "pycore_frame.h"
#include "pycore_tstate.h"
#include "pycore_code.h"           /* _PyCode_CODE */
#include "pycore_stackref.h"       /* Py_TAG_REFCNT */
#include "pycore_runtime_init.h"

_PyRuntimeState _PyRuntime = _PyRuntimeState_INIT(_PyRuntime, _Py_Debug_Cookie);
const unsigned long Py_Version = PY_VERSION_HEX;
PyTypeObject PyCode_Type, PyUnicode_Type, PyBytes_Type;

#define UNITS 8                     /* code units of each fake code object */
enum { LEAF, MIDDLE, OUTER, NCODE };
static const char *const names[NCODE] = { "leaf", "middle", "outer" };
static const int firstline[NCODE] = { 10, 20, 30 };

static PyCodeObject *code[NCODE];
static _Py_CODEUNIT *copy[NCODE];  /* the worker's copies (tlbc index 2) */
static _PyThreadStateImpl tstates[2];
static _PyInterpreterFrame frames[2][NCODE];
static double seconds;

static void *zalloc(size_t n)
{
	void *p = calloc(1, n + 1024); /* the agent reads fixed-size headers: room after each */

	if (!p) {
		perror("fake_ft");
		exit(1);
	}
	return p;
}

static PyObject *ascii(const char *s)
{
	size_t n = strlen(s);
	PyASCIIObject *o = zalloc(sizeof(*o) + n + 1);

	o->ob_base.ob_type = &PyUnicode_Type;
	o->length = (Py_ssize_t)n;
	o->state.kind = PyUnicode_1BYTE_KIND;
	o->state.compact = 1;
	o->state.ascii = 1;
	memcpy(o + 1, s, n + 1);
	return (PyObject *)o;
}

/* The location table: one entry per code unit, no columns, each one line further. */
static PyObject *linetable(void)
{
	PyBytesObject *b = zalloc(sizeof(*b) + 2 * UNITS);

	b->ob_base.ob_base.ob_type = &PyBytes_Type;
	b->ob_base.ob_size = 2 * UNITS;
	for (int k = 0; k < UNITS; k++) {
		b->ob_sval[2 * k] = (char)(0x80 | (13 << 3)); /* PY_CODE_LOCATION_INFO_NO_COLUMNS, 1 unit */
		b->ob_sval[2 * k + 1] = 2;                     /* signed varint +1 */
	}
	return (PyObject *)b;
}

static void make_code(int c, unsigned base, unsigned spec)
{
	PyCodeObject *co = zalloc(sizeof(*co) + UNITS * sizeof(_Py_CODEUNIT));
	_PyCodeArray *arr = zalloc(sizeof(*arr) + 3 * sizeof(char *));

	co->ob_base.ob_base.ob_type = &PyCode_Type;
	co->ob_base.ob_size = UNITS;
	co->co_firstlineno = firstline[c];
	co->co_argcount = c;
	co->co_version = 100 + (unsigned)c;
	co->co_filename = ascii("fake_ft.py");
	co->co_name = ascii(names[c]);
	co->co_qualname = ascii(names[c]);
	co->co_linetable = linetable();
	copy[c] = zalloc(UNITS * sizeof(_Py_CODEUNIT));
	for (int k = 0; k < UNITS; k++) {
		((unsigned char *)&_PyCode_CODE(co)[k])[0] = (unsigned char)base;
		((unsigned char *)&copy[c][k])[0] = (unsigned char)spec;
	}
	arr->size = 3;
	arr->entries[0] = (char *)_PyCode_CODE(co);
	arr->entries[1] = NULL;   /* a thread index with no copy yet */
	arr->entries[2] = (char *)copy[c];
	co->co_tlbc = arr;
	code[c] = co;
}

/* Thread t's stack: frames[t][LEAF] innermost, at the given units, in the given copies. */
static void make_stack(int t, const int unit[NCODE], const int index[NCODE])
{
	PyThreadState *ts = &tstates[t].base;

	for (int c = 0; c < NCODE; c++) {
		_PyInterpreterFrame *f = &frames[t][c];
		_Py_CODEUNIT *bc = index[c] ? copy[c] : _PyCode_CODE(code[c]);

		f->f_executable.bits = (uintptr_t)code[c] | Py_TAG_REFCNT; /* deferred */
		f->previous = c + 1 < NCODE ? &frames[t][c + 1] : NULL;
		f->instr_ptr = bc + unit[c];
		f->tlbc_index = index[c];
		f->owner = FRAME_OWNED_BY_THREAD;
	}
	ts->current_frame = &frames[t][LEAF];
	ts->interp = &_PyRuntime._main_interpreter;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin(int t)
{
	PyThreadState *ts = &tstates[t].base;
	double end = now() + seconds;

	ts->thread_id = (unsigned long)pthread_self();
	__atomic_store_n(&ts->native_thread_id, (unsigned long)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (now() < end)
		;
}

static void *worker(void *arg)
{
	(void)arg;
	spin(1);
	return NULL;
}

int main(int argc, char **argv)
{
	static const int main_units[NCODE] = { 1, 2, 4 }, main_index[NCODE] = { 0, 0, 0 };
	static const int worker_units[NCODE] = { 6, 5, 3 }, worker_index[NCODE] = { 2, 2, 0 };
	PyInterpreterState *interp = &_PyRuntime._main_interpreter;
	pthread_t th;

	if (argc != 4) {
		fprintf(stderr, "usage: fake_ft SECONDS SPEC BASE\n");
		return 2;
	}
	seconds = atof(argv[1]);
	for (int c = 0; c < NCODE; c++)
		make_code(c, (unsigned)atoi(argv[3]), c == LEAF ? (unsigned)atoi(argv[2]) : (unsigned)atoi(argv[3]));
	make_stack(0, main_units, main_index);
	make_stack(1, worker_units, worker_index);
	_PyRuntime.interpreters.head = interp;
	interp->next = NULL;
	interp->threads.head = &tstates[0].base;
	tstates[0].base.next = &tstates[1].base;
	interp->ceval.gil = &interp->_gil;
	interp->_gil.enabled = 0;   /* free-threaded: no GIL */
	tstates[0].base.thread_id = (unsigned long)pthread_self();
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	while (!__atomic_load_n(&tstates[1].base.native_thread_id, __ATOMIC_ACQUIRE))
		usleep(1000);
	printf("ready %lu\n", tstates[1].base.native_thread_id);
	fflush(stdout);
	spin(0);
	pthread_join(th, NULL);
	return 0;
}
