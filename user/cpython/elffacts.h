/* elffacts.h: what discovery needs from one mapped ELF file (where the
 * CPython runtime is, which version), read once per file. */
#ifndef TB_ELFFACTS_H
#define TB_ELFFACTS_H
#include <stdint.h>
#include <sys/types.h>

/* Largest ELF file looked at (its sections are capped in proc/elfsym.h). */
#define TB_ELFFACTS_MAX_FILE (1ull << 30)

enum {
	TB_EF_RUNTIME = 1,     /* _PyRuntime, or the .PyRuntime section */
	TB_EF_PYCODE_TYPE = 2, /* PyCode_Type */
	TB_EF_NONE = 4,        /* _Py_NoneStruct */
	TB_EF_PY_VERSION = 8,  /* Py_Version (3.11+) */
	TB_EF_MICRO_3_10 = 16, /* no Py_Version, a "3.10.N" PY_VERSION string in .rodata */
};

struct tb_elffacts {
	unsigned have;             /* TB_EF_* */
	uint64_t first_load_vaddr; /* page-aligned vaddr of the first PT_LOAD */
	uint64_t runtime, pycode_type, none, py_version; /* file addresses */
	unsigned micro_3_10;
};

/* The facts of the file process pid maps at [start, end) (path: its name in
 * /proc/PID/maps), opened by tb_open_mapped (regular files only, read with
 * pread) and remembered by the file's identity (device, inode, size, mtime,
 * ctime): the repeated execs of one binary read it once.  0 ok (an ELF
 * file; f->have says what it defines); -1 not readable or not ELF. */
int tb_elffacts_of_mapping(pid_t pid, uint64_t start, uint64_t end, const char *path,
			   struct tb_elffacts *f);

#endif
