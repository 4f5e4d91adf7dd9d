/* kallsyms.h: the kernel's text symbols from /proc/kallsyms, sorted, to name
 * kernel frames (docs/native-unwinding.md).  The file is read once (open it
 * early: what it shows depends on the opener's capabilities) and again, at
 * most every 10 s, when an address in module space is not covered (modules
 * load later). */
#ifndef TB_KALLSYMS_H
#define TB_KALLSYMS_H
#include <stddef.h>
#include <stdint.h>
#include "lib/mem.h"
#include "lib/strtab.h"

#define TB_KSYMS_PATH "/proc/kallsyms"
#define TB_KSYMS_MAX (1u << 22)             /* symbols kept */
#define TB_KSYMS_MAX_LINE 1024              /* longer lines are skipped */
#define TB_KSYMS_MAX_BYTES (256u << 20)     /* bytes read, at most */
#define TB_KSYMS_MAX_MODULE_SPAN (1u << 20) /* a module symbol covers at most this */
#define TB_KSYMS_RELOAD_NS (10ull * 1000 * 1000 * 1000)
#define TB_KSYMS_HIDDEN "kernel symbols hidden (kptr_restrict=2 or no CAP_SYSLOG)"

struct tb_ksym {
	uint64_t addr;
	uint32_t name;     /* offset in names */
	uint32_t module;   /* id in modules; 0: the kernel itself */
};

struct tb_ksyms {
	char *path;
	struct tb_ksym *syms;      /* sorted by addr, one per address */
	uint32_t n, cap;
	struct tb_buf names;       /* NUL-terminated names */
	struct tb_strtab modules;  /* "nf_tables", "bpf", ... */
	uint64_t kernel_end;       /* _etext: above it, module space */
	int hidden;                /* every address read as 0 (TB_KSYMS_HIDDEN) */
	uint32_t skipped;          /* lines too long or malformed */
	uint32_t reloads;
	uint64_t loaded_ns;        /* CLOCK_MONOTONIC of the last read */
	uint64_t reload_ns;        /* least time between reads (TB_KSYMS_RELOAD_NS) */
};

/* Read path (NULL: /proc/kallsyms; a regular file, not followed if a
 * symlink).  0 on success (hidden may be set); -1 with one line in err. */
int tb_ksyms_load(struct tb_ksyms *k, const char *path, char *err, size_t errlen);
void tb_ksyms_free(struct tb_ksyms *k);

/* The symbol holding addr (addr-1 for a return address), or NULL; *off the
 * distance from its start, *module "" or its module.  A miss in module space
 * re-reads the file if the last read is older than reload_ns. */
const char *tb_ksyms_lookup(struct tb_ksyms *k, uint64_t addr, int is_ra, uint64_t *off,
			    const char **module);

#endif
