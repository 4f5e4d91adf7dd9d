/* print_offsets.c: prints, from a CPython version's own (internal) headers, the
 * value every struct tb_layout field should have, as sorted-friendly name=value
 * lines; for 3.13+ also the objects read for thread names (struct tb_thread_objects).
 * Compiled by check_headers.sh with -DPy_BUILD_CORE -I.../include/python3.X{,/internal},
 * with -DPy_GIL_DISABLED for a version's free-threaded build.
 */
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030A0000
#error "print_offsets.c: needs CPython 3.10+"
#endif
#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>            /* PyFrameObject (3.10) */
#endif
#include "pycore_runtime.h"         /* _PyRuntimeState */
#include "pycore_interp.h"          /* PyInterpreterState */
#if __has_include("pycore_gil.h")
#include "pycore_gil.h"             /* struct _gil_runtime_state (<= 3.13) */
#endif
#if PY_VERSION_HEX >= 0x030B0000
#include "pycore_frame.h"           /* _PyInterpreterFrame, enum _frameowner */
#endif
#if PY_VERSION_HEX >= 0x030D0000
#include "pycore_dict.h"            /* PyDictKeysObject, PyDictValues (thread names) */
#include "pycore_object.h"          /* MANAGED_DICT_OFFSET */
#include "pycore_moduleobject.h"    /* PyModuleObject */
#endif
#if PY_VERSION_HEX >= 0x030E0000
#include "pycore_stackref.h"        /* Py_TAG_BITS */
#if __has_include("pycore_interpframe_structs.h")
#include "pycore_interpframe_structs.h"
#endif
#endif

#define NO 0xffff
#define P(name, val) printf("%s=%lu\n", name, (unsigned long)(val))

/* Bit number of a str state bitfield: set it to 1 in a zeroed object, find the bit. */
#define STATE_BIT(member) ({                                                  \
	PyASCIIObject o_;                                                     \
	uint32_t w_;                                                          \
	int b_ = -1;                                                          \
	memset(&o_, 0, sizeof(o_));                                           \
	o_.state.member = 1;                                                  \
	memcpy(&w_, (char *)&o_ + offsetof(PyASCIIObject, state), sizeof(w_)); \
	for (int i_ = 0; i_ < 32; i_++)                                       \
		if (w_ & (1u << i_)) { b_ = i_; break; }                      \
	b_;                                                                   \
})

int main(void)
{
	P("version_hex", PY_VERSION_HEX);
	P("major", PY_MAJOR_VERSION);
	P("minor", PY_MINOR_VERSION);
	P("micro", PY_MICRO_VERSION);
#ifdef Py_GIL_DISABLED
	P("free_threaded", 1);
#else
	P("free_threaded", 0);
#endif

	/* ---- BPF walk ---- */
	P("bpf.py_version", PY_VERSION_HEX);
	P("bpf.runtime_interp_head", offsetof(_PyRuntimeState, interpreters.head));
#if PY_VERSION_HEX < 0x030B0000
	P("bpf.interp_threads_head", offsetof(PyInterpreterState, tstate_head));
#else
	P("bpf.interp_threads_head", offsetof(PyInterpreterState, threads.head));
#endif
	P("bpf.interp_next", offsetof(PyInterpreterState, next));
	P("bpf.tstate_next", offsetof(PyThreadState, next));
	P("bpf.tstate_thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX < 0x030B0000
	P("bpf.tstate_frame", offsetof(PyThreadState, frame));
	P("bpf.cframe_current_frame", NO);
	P("bpf.frame_code", offsetof(PyFrameObject, f_code));
	P("bpf.frame_previous", offsetof(PyFrameObject, f_back));
	P("bpf.frame_instr", offsetof(PyFrameObject, f_lasti));
	P("bpf.frame_owner", NO);
	P("bpf.code_adaptive", offsetof(PyCodeObject, co_code));
	P("bpf.frame_kind", 0);
#else
#if PY_VERSION_HEX < 0x030D0000
	P("bpf.tstate_frame", offsetof(PyThreadState, cframe));
	P("bpf.cframe_current_frame", offsetof(_PyCFrame, current_frame));
	P("bpf.frame_code", offsetof(_PyInterpreterFrame, f_code));
	P("bpf.frame_instr", offsetof(_PyInterpreterFrame, prev_instr));
#else
	P("bpf.tstate_frame", offsetof(PyThreadState, current_frame));
	P("bpf.cframe_current_frame", NO);
	P("bpf.frame_code", offsetof(_PyInterpreterFrame, f_executable));
	P("bpf.frame_instr", offsetof(_PyInterpreterFrame, instr_ptr));
#endif
	P("bpf.frame_previous", offsetof(_PyInterpreterFrame, previous));
	P("bpf.frame_owner", offsetof(_PyInterpreterFrame, owner));
	P("bpf.code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
	P("bpf.frame_kind", 1);
#endif
	P("bpf.bytes_sval", offsetof(PyBytesObject, ob_sval));
	P("bpf.code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("bpf.code_argcount", offsetof(PyCodeObject, co_argcount));
#if PY_VERSION_HEX >= 0x030C0000
	P("bpf.code_version", offsetof(PyCodeObject, co_version));
#else
	P("bpf.code_version", NO);
#endif
	P("bpf.object_type", offsetof(PyObject, ob_type));
	/* Shim (C-stack entry / interpreter-owned) frames, docs/cpython-layouts.md "Shim frames". */
#if PY_VERSION_HEX < 0x030C0000
	P("bpf.owner_skip_min", 0xff);            /* 3.10/3.11: none */
	P("bpf.owner_cstack", 0xff);
#elif PY_VERSION_HEX < 0x030E0000
	P("bpf.owner_skip_min", FRAME_OWNED_BY_CSTACK);
	P("bpf.owner_cstack", FRAME_OWNED_BY_CSTACK);
#elif PY_VERSION_HEX < 0x030F0000
	P("bpf.owner_skip_min", FRAME_OWNED_BY_INTERPRETER);
	P("bpf.owner_cstack", FRAME_OWNED_BY_CSTACK);
#else
	P("bpf.owner_skip_min", FRAME_OWNED_BY_INTERPRETER);
	P("bpf.owner_cstack", 0xff);              /* CSTACK removed in 3.15 */
#endif
#if PY_VERSION_HEX >= 0x030E0000
	P("bpf.code_tag_mask", Py_TAG_BITS);
#else
	P("bpf.code_tag_mask", 0);
#endif
	/* thread-local bytecode (free-threaded 3.14+) */
#if PY_VERSION_HEX >= 0x030E0000 && defined(Py_GIL_DISABLED)
	P("bpf.frame_tlbc_index", offsetof(_PyInterpreterFrame, tlbc_index));
	P("bpf.code_tlbc", offsetof(PyCodeObject, co_tlbc));
#else
	P("bpf.frame_tlbc_index", NO);
	P("bpf.code_tlbc", NO);
#endif

	/* ---- symbolization ---- */
	P("code_size", sizeof(PyCodeObject));
	P("code_filename", offsetof(PyCodeObject, co_filename));
	P("code_name", offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX >= 0x030B0000
	P("code_qualname", offsetof(PyCodeObject, co_qualname));
#else
	P("code_qualname", NO);
#endif
	P("code_linetable", offsetof(PyCodeObject, co_linetable));
	P("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("code_flags", offsetof(PyCodeObject, co_flags));
	P("code_argcount", offsetof(PyCodeObject, co_argcount));
#if PY_VERSION_HEX >= 0x030C0000
	P("code_version", offsetof(PyCodeObject, co_version));
#else
	P("code_version", NO);
#endif
#if PY_VERSION_HEX >= 0x030B0000
	P("code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
	P("code_nunits", offsetof(PyCodeObject, ob_base.ob_size));
#else
	P("code_adaptive", offsetof(PyCodeObject, co_code));
	P("code_nunits", NO);
#endif
	P("bytes_size", offsetof(PyBytesObject, ob_base.ob_size));
	P("bytes_sval", offsetof(PyBytesObject, ob_sval));
	P("unicode_length", offsetof(PyASCIIObject, length));
	P("unicode_state", offsetof(PyASCIIObject, state));
	P("unicode_ascii_data", sizeof(PyASCIIObject));
	P("unicode_compact_data", sizeof(PyCompactUnicodeObject));
	P("unicode_kind_shift", STATE_BIT(kind));
	P("unicode_compact_bit", STATE_BIT(compact));
	P("unicode_ascii_bit", STATE_BIT(ascii));

	/* ---- GIL, native thread id, GC ---- */
#if PY_VERSION_HEX < 0x030C0000
	P("runtime_gil_locked", offsetof(_PyRuntimeState, ceval.gil.locked));
	P("runtime_gil_holder", offsetof(_PyRuntimeState, ceval.gil.last_holder));
	P("interp_ceval_gil", NO);
	P("gil_locked", NO);
	P("gil_holder", NO);
#else
	P("runtime_gil_locked", NO);
	P("runtime_gil_holder", NO);
	P("interp_ceval_gil", offsetof(PyInterpreterState, ceval.gil));
	P("gil_locked", offsetof(struct _gil_runtime_state, locked));
	P("gil_holder", offsetof(struct _gil_runtime_state, last_holder));
#endif
#if PY_VERSION_HEX >= 0x030B0000
	P("tstate_native_thread_id", offsetof(PyThreadState, native_thread_id));
#else
	P("tstate_native_thread_id", NO);
#endif
#ifdef Py_GIL_DISABLED
	P("gil_enabled", offsetof(struct _gil_runtime_state, enabled));
#else
	P("gil_enabled", NO);
#endif
	P("interp_gc_collecting", offsetof(PyInterpreterState, gc.collecting));

	/* ---- thread names: sys.modules, the type fields, the objects read (3.13+) ---- */
#if PY_VERSION_HEX < 0x030C0000
	P("interp_modules", offsetof(PyInterpreterState, modules));
#else
	P("interp_modules", offsetof(PyInterpreterState, imports.modules));
#endif
	P("type_flags", offsetof(PyTypeObject, tp_flags));
	P("type_basicsize", offsetof(PyTypeObject, tp_basicsize));
	P("type_dictoffset", offsetof(PyTypeObject, tp_dictoffset));
	P("heaptype_cached_keys", offsetof(PyHeapTypeObject, ht_cached_keys));
#if PY_VERSION_HEX >= 0x030D0000
	P("objects.module_dict", offsetof(PyModuleObject, md_dict));
	P("objects.dict_keys", offsetof(PyDictObject, ma_keys));
	P("objects.dict_values", offsetof(PyDictObject, ma_values));
	P("objects.dk_size", offsetof(PyDictKeysObject, dk_log2_size));
	P("objects.dk_index_bytes", offsetof(PyDictKeysObject, dk_log2_index_bytes));
	P("objects.dk_kind", offsetof(PyDictKeysObject, dk_kind));
	P("objects.dk_nentries", offsetof(PyDictKeysObject, dk_nentries));
	P("objects.dk_indices", offsetof(PyDictKeysObject, dk_indices));
	P("objects.entry_size", sizeof(PyDictKeyEntry));
	P("objects.entry_hash", offsetof(PyDictKeyEntry, me_hash));
	P("objects.entry_key", offsetof(PyDictKeyEntry, me_key));
	P("objects.entry_value", offsetof(PyDictKeyEntry, me_value));
	P("objects.uentry_size", sizeof(PyDictUnicodeEntry));
	P("objects.uentry_key", offsetof(PyDictUnicodeEntry, me_key));
	P("objects.uentry_value", offsetof(PyDictUnicodeEntry, me_value));
	P("objects.values_values", offsetof(PyDictValues, values));
	P("objects.values_capacity", offsetof(PyDictValues, capacity));
	P("objects.values_valid", offsetof(PyDictValues, valid));
	P("objects.obj_dict", (unsigned long)(0x10000 + MANAGED_DICT_OFFSET)); /* negative: 0x10000 + it */
	P("objects.long_size", offsetof(PyLongObject, long_value.lv_tag));
	P("objects.long_digit", offsetof(PyLongObject, long_value.ob_digit));
#endif
	return 0;
}
