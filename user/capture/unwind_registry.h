/* unwind_registry.h: what the unwind-table registry's three files share
 * (capture/unwind.c the API, unwind_files.c the files, their rows and
 * their install, unwind_procs.c the processes and their ranges): the
 * registry's structures and the calls between those files.  Private to
 * capture/unwind*.c; everyone else uses capture/unwind.h. */
#ifndef TB_UNWIND_REGISTRY_H
#define TB_UNWIND_REGISTRY_H
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "lib/hashmap.h"
#include "proc/perfmap.h"
#include "capture/unwind.h"
#include "capture/unwind_build.h"


#define MAX_LOADS 16            /* PT_LOAD headers kept per file */
#define MAX_VDSO (64u << 10)    /* bytes of the vDSO image read */
#define MAX_EXEC_MAPPINGS 4096  /* executable mappings read per process */
#define FIRST_FILE_ID 16        /* ids below: anonymous code, vDSO */
#define ANON_ID 1
#define VDSO_ID 2
#define UNREADABLE_ID 3
#define PERFMAP_AGAIN_NS (200ull * 1000 * 1000)   /* a perf map looked at again this often, */
#define PERFMAP_NONE_NS (1000ull * 1000 * 1000)   /* one not there (or not readable) this often */
#define SWEEP_NS (1000ull * 1000 * 1000) /* unused files looked at this often */
#define YOUNG_NS (10000ull * 1000 * 1000) /* a process this young has its maps reread */
#define YOUNG_EVERY_NS (100ull * 1000 * 1000) /* (looked at this often, reread every refresh_ns) */
#define YOUNG_REFRESH_NS (20ull * 1000 * 1000) /* a young process's walk met an unknown pc:
					       * its maps reread at most this often */
/* a process's maps are reread no sooner than this many times the last reread's own time after
 * the usual refresh_ns: a process whose maps are slow to read (tens of thousands of mappings)
 * costs the agent about a tenth of a core at most, however often its walks meet an unknown pc */
#define REREAD_COST_FACTOR 10

struct file_key {               /* first field of struct ufile: no padding */
	uint64_t dev, ino, size, mtime_s, mtime_ns, ctime_s, ctime_ns;
};

enum { F_FREE = 0, F_BUILDING, F_READY };

struct ufile {
	struct file_key key;
	uint64_t id;                /* never reused: native code entries are keyed by it */
	uint32_t refs;              /* (process, mapping) pairs */
	uint8_t state, interp;
	uint8_t fp_only;            /* left by frame pointer (its rows, if any, for leaves) */
	uint64_t unused_since;
	uint32_t slot;              /* ufiles index, 0: none */
	uint32_t first, granules;   /* rows extent in urows, granules 0: none */
	uint32_t next_free;         /* free list (index + 1) */
	uint32_t nloads;
	struct { uint64_t offset, vaddr, filesz; } loads[MAX_LOADS];
	struct tb_nsym_file *syms;  /* NULL until built */
	char module[TB_NSYM_MODULE];
};

enum { R_FILE = 0, R_ANON, R_VDSO };

struct prange {                 /* starts like struct tb_code_range */
	uint64_t start, end;
	int64_t bias;
	uint64_t offset, inode;     /* as /proc/PID/maps says (a reread keeps what did not change) */
	uint32_t file;              /* file index + 1 (R_FILE, R_VDSO), 0: none, or not opened */
	uint32_t kind;
};

struct uproc {
	uint32_t pid;               /* key, first field (0: forgotten) */
	uint32_t nr;
	struct prange *r;
	uint64_t added_ns, refreshed_ns;
	uint8_t published;
	struct tb_perfmap *perfmap; /* names of its anonymous code (JIT), NULL: none read */
	uint64_t perfmap_id;        /* its file id (a new one when the map is another file), 0: no names */
	uint64_t perfmap_next_ns;   /* looked at again (for a pc it does not name) no sooner */
};

struct extent {
	uint32_t start, len;        /* granules */
};

struct tb_unwind {
	uint32_t max_queued;        /* builds waiting, at most (each holds one or two descriptors) */
	struct tb_unwind_maps maps;
	struct tb_unwind_opts o;
	struct tb_ubuild *builder;
	struct ufile *files;
	uint32_t nfiles, capfiles, free_files, live_files;
	struct tb_hmap file_index;
	uint64_t next_id;
	struct uproc *procs;
	uint32_t nprocs, capprocs, dead_procs, unpublished;
	struct tb_hmap proc_index;
	uint32_t *slots;            /* free ufiles slots (a stack) */
	uint32_t nslots;
	struct extent *free_rows;   /* sorted by start, coalesced */
	uint32_t nfree_rows, capfree_rows;
	struct tb_umaps *scratch;
	struct tb_native_resolver resolver;
	uint32_t vdso;              /* the vDSO's file index + 1, 0: none */
	struct tb_unwind_stats st;
	uint64_t swept_ns;          /* last look for files unused long enough */
	uint64_t young_ns;          /* last look at young processes */
};


/* unwind_files.c */
void tb_ureg_rows_free(struct tb_unwind *u, uint32_t start, uint32_t len);
void tb_ureg_file_evict(struct tb_unwind *u, struct ufile *f);
void tb_ureg_file_unref(struct tb_unwind *u, uint32_t file, uint64_t now);
uint32_t tb_ureg_file_new(struct tb_unwind *u, const struct file_key *k, int fd, const char *path, pid_t pid);
void tb_ureg_key_of(const struct stat *st, struct file_key *k);
uint32_t tb_ureg_file_of_mapping(struct tb_unwind *u, pid_t pid, uint64_t start, uint64_t end,
				 const char *path);
int64_t tb_ureg_bias_of(const struct ufile *f, uint64_t start, uint64_t offset);
void tb_ureg_install(struct tb_unwind *u, struct tb_ubuild_result *r, uint64_t now);

/* unwind_procs.c */
struct uproc *tb_ureg_proc_find(struct tb_unwind *u, uint32_t pid);
int tb_ureg_read_ranges(struct tb_unwind *u, pid_t pid, const struct prange *old, uint32_t nold,
			struct prange **out, uint32_t *n);
void tb_ureg_drop_ranges(struct tb_unwind *u, struct prange *r, uint32_t n, uint64_t now);
void tb_ureg_write_ranges(struct tb_unwind *u, struct uproc *p);
void tb_ureg_publish_if_ready(struct tb_unwind *u, struct uproc *p, uint64_t now);
void tb_ureg_compact_procs(struct tb_unwind *u);
void tb_ureg_proc_free_perfmap(struct tb_unwind *u, struct uproc *p);
struct uproc *tb_ureg_proc_new(struct tb_unwind *u, uint32_t pid);

#endif
