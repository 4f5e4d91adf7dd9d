/* dump_debug_offsets.c: writes the _Py_DebugOffsets a CPython 3.13+ build would contain,
 * built from that version's own header initializer (so -DPy_GIL_DISABLED=1 gives the
 * free-threaded one). Linked without libpython (unresolved addresses are never read).
 */
#include <Python.h>
#include <stdio.h>

#if PY_VERSION_HEX < 0x030D0000
#error "dump_debug_offsets.c: _Py_DebugOffsets exists in 3.13+"
#endif
#include "pycore_runtime.h"
#include "pycore_interp.h"
#if __has_include("pycore_frame.h")
#include "pycore_frame.h"
#endif
#include "pycore_runtime_init.h"    /* _PyRuntimeState_INIT(runtime, cookie) holds the initializer */

/* Only .debug_offsets is written out; the rest of the runtime state is never used. */
static _PyRuntimeState runtime = _PyRuntimeState_INIT(runtime, _Py_Debug_Cookie);
#define OFFSETS runtime.debug_offsets

int main(int argc, char **argv)
{
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: dump_debug_offsets FILE\n");
		return 2;
	}
	f = fopen(argv[1], "wb");
	if (!f || fwrite(&OFFSETS, sizeof(OFFSETS), 1, f) != 1 || fclose(f)) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
