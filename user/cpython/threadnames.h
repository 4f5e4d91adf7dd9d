/* threadnames.h: Python thread names (threading.Thread.name) of a running CPython
 * process, read from its memory without stopping it, as py-spy does; and the per-version
 * layouts of the objects read for them (each version's row in versions.c points to one). */
#ifndef TB_THREADNAMES_H
#define TB_THREADNAMES_H
#include <stdint.h>
#include <sys/types.h>
#include "cpython/layout.h"

/* Where instance attributes live. */
enum tb_inst_kind {
	TB_INST_DICTOFFSET,  /* 3.10: dict at obj + tp_dictoffset */
	TB_INST_VALUES_PTR,  /* 3.11: PyDictValues* at obj + obj_values, dict at obj + obj_dict */
	TB_INST_TAGGED,      /* 3.12: at obj + obj_dict: dict, or (values - 1) with bit 0 set */
	TB_INST_INLINE,      /* 3.13+: dict at obj + obj_dict, else values at obj + tp_basicsize */
};

/* Object layouts that _Py_DebugOffsets does not describe (default builds, and the
 * free-threaded builds' own), measured with offsetof() from the headers (3.10's
 * PyDictKeysObject, private to Objects/dict-common.h, from libpython3.10's DWARF).
 * TB_NO_OFFSET: no such field in this version. */
struct tb_thread_objects {
	uint8_t inst;                /* enum tb_inst_kind */
	uint8_t keys_log2;           /* 1: dk_log2_size, dk_log2_index_bytes, dk_kind (3.11+); 0: dk_size */
	uint8_t long_tagged;         /* 1: lv_tag = ndigits << 3 | sign (3.12+); 0: signed ob_size */
	uint16_t module_dict;        /* PyModuleObject -> md_dict */
	uint16_t dict_keys, dict_values;            /* PyDictObject -> ma_keys, ma_values */
	uint16_t dk_size;            /* 3.10: dk_size (Py_ssize_t); 3.11+: dk_log2_size (uint8_t) */
	uint16_t dk_index_bytes, dk_kind;           /* uint8_t, 3.11+ */
	uint16_t dk_nentries, dk_indices;
	uint8_t entry_size, entry_hash, entry_key, entry_value;  /* PyDictKeyEntry */
	uint8_t uentry_size, uentry_key, uentry_value;           /* PyDictUnicodeEntry (3.11+) */
	uint16_t values_values;                     /* PyDictValues -> values[] */
	uint16_t values_capacity, values_valid;     /* uint8_t, 3.13+ */
	int16_t obj_values, obj_dict;               /* pre-header words, relative to the object */
	uint16_t long_size, long_digit;             /* ob_size or lv_tag; ob_digit[] (uint32_t) */
};

struct tb_pyname {
	uint64_t ident;   /* threading.get_ident() == pthread_self() of the thread */
	char name[64];    /* UTF-8, NUL-terminated; longer names are cut at a character boundary */
};

/* Names of the threads in threading._active (started, not yet finished threads, the main
 * thread and dummy threads of foreign threads) of the main interpreter of pid, whose
 * _PyRuntime is at runtime_addr and layout l. Returns how many were written to out (<= max;
 * 0 when threading was never imported), or -1 if they could not be read (not CPython, not
 * initialized or finalizing, a free-threaded build the version's row does not describe,
 * memory unreadable). Default and free-threaded builds alike. Everything read is
 * untrusted: loops and strings are bounded, and so are the reads and bytes copied per call
 * (20000 reads, 16 MiB; the tests take about 0.5 ms a call). Keeps no state between calls. */
int tb_python_thread_names(pid_t pid, const struct tb_layout *l, uint64_t runtime_addr,
			   struct tb_pyname *out, int max);

#endif
