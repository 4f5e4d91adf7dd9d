/* unwind.c: the unwind-table registry (docs/native-unwinding.md, "The
 * registry").
 *
 * Files are known by identity (device, inode, size, mtime, ctime: what a
 * process cannot forge for a file it does not own), not by build-id, which
 * any file may claim: one process's file never lends its rows to another's.
 * A file is opened once, the way the target maps it (/proc/PID/map_files,
 * else as the target would: proc/targetfile.h), its PT_LOAD headers read
 * for the biases, and handed to the worker (unwind_build.c).  Its finished
 * table is installed in this order: rows into urows (an extent of
 * TB_UNWIND_GRANULE-row units, first fit), then ufiles[slot], then the
 * ranges that point at the slot; eviction goes the other way (no range
 * points at a file without refs; its descriptor is cleared, then its rows
 * freed), a grace period after its last process is gone, or at once, least
 * recently used first, when rows or slots run out.  A process's ranges are
 * written once its files are ready (or after wait_ns: files still building
 * stop the walk, TB_UR_PENDING), so a sample is walked with every table or
 * not at all.  Anonymous code and files without a table are unwound by
 * frame pointer (slot 0).  The vDSO (clock_gettime: time.time() loops) is
 * one file for every process: the agent's own, copied to a memfd and built
 * like the others (the same kernel maps the same vDSO into every 64-bit
 * process; a process's own copy could be written to, the agent's not). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/mem.h"
#include "lib/termsafe.h"
#include "proc/debugfile.h"
#include "proc/perfmap.h"
#include "proc/targetfile.h"
#include "capture/clock.h"
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

/* ------------------------------------------------------------ row extents */

static int rows_alloc(struct tb_unwind *u, uint32_t granules, uint32_t *first)
{
	for (uint32_t i = 0; i < u->nfree_rows; i++) {
		struct extent *e = &u->free_rows[i];

		if (e->len < granules)
			continue;
		*first = e->start;
		e->start += granules;
		e->len -= granules;
		if (!e->len) {
			memmove(e, e + 1, (u->nfree_rows - i - 1) * sizeof(*e));
			u->nfree_rows--;
		}
		return 0;
	}
	return -1;
}

static void rows_free(struct tb_unwind *u, uint32_t start, uint32_t len)
{
	uint32_t i = 0;
	struct extent *e;

	while (i < u->nfree_rows && u->free_rows[i].start < start)
		i++;
	u->free_rows = tb_grow(u->free_rows, &u->capfree_rows, u->nfree_rows + 1, sizeof(*e), 16);
	e = u->free_rows;
	memmove(&e[i + 1], &e[i], (u->nfree_rows - i) * sizeof(*e));
	e[i] = (struct extent){ start, len };
	u->nfree_rows++;
	if (i + 1 < u->nfree_rows && e[i].start + e[i].len == e[i + 1].start) {
		e[i].len += e[i + 1].len;
		memmove(&e[i + 1], &e[i + 2], (u->nfree_rows - i - 2) * sizeof(*e));
		u->nfree_rows--;
	}
	if (i > 0 && e[i - 1].start + e[i - 1].len == e[i].start) {
		e[i - 1].len += e[i].len;
		memmove(&e[i], &e[i + 1], (u->nfree_rows - i - 1) * sizeof(*e));
		u->nfree_rows--;
	}
}

/* ------------------------------------------------------------ files */

static int file_live(const void *ctx, uint32_t i)
{
	const struct tb_unwind *u = ctx;

	return u->files[i].state != F_FREE;
}

static struct ufile *file_find(struct tb_unwind *u, const struct file_key *k)
{
	uint32_t i = tb_hmap_find_key(&u->file_index, u->files, sizeof(*u->files), k, sizeof(*k));

	return i == TB_HMAP_NONE ? NULL : &u->files[i];
}

/* What a file's symbols take: names and entries. */
static uint64_t sym_bytes(const struct tb_nsym_file *s)
{
	return (uint64_t)s->names_cap + (uint64_t)s->nsyms * sizeof(*s->syms) +
	       (uint64_t)s->nfdes * sizeof(*s->fdes);
}

/* Undo an install: descriptor cleared, rows and slot freed, the record free. */
static void file_evict(struct tb_unwind *u, struct ufile *f)
{
	static const struct tb_ufile none;

	if (f->slot) {
		u->maps.set_file(u->maps.ctx, f->slot, &none);
		u->slots[u->nslots++] = f->slot;
	}
	if (f->granules) {
		rows_free(u, f->first, f->granules);
		u->st.rows_used -= (uint64_t)f->granules * TB_UNWIND_GRANULE;
		u->st.tables--;
	}
	if (f->syms) {
		u->st.sym_bytes -= sym_bytes(f->syms);
		tb_nsym_free(f->syms);
	}
	free(f->syms);
	memset(f, 0, sizeof(*f));
	f->next_free = u->free_files;
	u->free_files = (uint32_t)(f - u->files) + 1;
	u->live_files--;
	u->st.evictions++;
	tb_hmap_retain(&u->file_index, file_live, u);
}

/* The least recently used file without refs (installed), or NULL. */
static struct ufile *lru_unused(struct tb_unwind *u)
{
	struct ufile *best = NULL;

	for (uint32_t i = 0; i < u->nfiles; i++) {
		struct ufile *f = &u->files[i];

		if (f->state == F_READY && !f->refs && (f->slot || f->granules) &&
		    (!best || f->unused_since < best->unused_since))
			best = f;
	}
	return best;
}

static void file_unref(struct tb_unwind *u, uint32_t file, uint64_t now)
{
	struct ufile *f;

	if (!file)
		return;
	f = &u->files[file - 1];
	if (f->refs && !--f->refs)
		f->unused_since = now;
}

#define DELETED " (deleted)"     /* what maps adds to the name of a file removed since */

static int ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The PT_LOAD headers of the file on fd (for the biases); 0 ok. */
static int read_loads(int fd, struct ufile *f, struct tb_debug_ids *ids)
{
	Elf *elf;
	size_t n = 0;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n)) {
		if (elf)
			elf_end(elf);
		return -1;
	}
	for (size_t i = 0; i < n && i < 256 && f->nloads < MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->loads[f->nloads++] = (typeof(f->loads[0])){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
	tb_debug_ids_read(elf, ids);
	elf_end(elf);
	return f->nloads ? 0 : -1;
}

/* A new file record for the regular file open on fd (taken; path: as
 * process pid names it, pid 0: none); its build is queued, with its debug
 * file when it has no .symtab and pid can open one.  Index + 1, or 0. */
static uint32_t file_new(struct tb_unwind *u, const struct file_key *k, int fd, const char *path, pid_t pid)
{
	struct tb_debug_ids ids;
	struct ufile *f;
	uint32_t i;
	int debug_fd = -1;
	char module[TB_NSYM_MODULE];

	if (u->live_files >= TB_UNWIND_MAX_FILES) {
		close(fd);
		return 0;
	}
	if (u->free_files) {
		i = u->free_files - 1;
		u->free_files = u->files[i].next_free;
	} else {
		u->files = tb_grow(u->files, &u->capfiles, u->nfiles + 1, sizeof(*u->files), 64);
		i = u->nfiles++;
	}
	f = &u->files[i];
	memset(f, 0, sizeof(*f));
	f->key = *k;
	f->id = u->next_id++;
	snprintf(module, sizeof(module), "%.*s", (int)(strlen(base_name(path)) -
		 (ends_with(path, DELETED) ? strlen(DELETED) : 0)), base_name(path));
	memcpy(f->module, module, sizeof(module));
	f->state = F_BUILDING;
	u->live_files++;
	tb_hmap_insert(&u->file_index, tb_hash(k, sizeof(*k)), i);
	if (read_loads(fd, f, &ids)) {            /* not ELF: no table, no bias */
		close(fd);
		f->state = F_READY;
		u->st.build_failures++;
		return i + 1;
	}
	if (tb_ubuild_pending(u->builder) >= u->max_queued) {
		/* the worker is behind (a host mapping thousands of new files at
		 * once): no descriptor waits without bound; frame pointers here */
		close(fd);
		f->state = F_READY;
		u->st.queue_full++;
		return i + 1;
	}
	if (pid > 0 && !ids.has_symtab && (ids.build_id_len || ids.link[0]))
		debug_fd = tb_debug_open(pid, path, &ids, TB_UNWIND_MAX_FILE);
	u->st.builds++;
	tb_ubuild_submit(u->builder, i, f->id, fd, debug_fd, f->module, f->key.size);
	return i + 1;
}

static void key_of(const struct stat *st, struct file_key *k)
{
	*k = (struct file_key){ (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
				(uint64_t)st->st_mtim.tv_sec, (uint64_t)st->st_mtim.tv_nsec,
				(uint64_t)st->st_ctim.tv_sec, (uint64_t)st->st_ctim.tv_nsec };
}

/* The file mapped at [start, end) of pid (path as its maps name it), known
 * or new; index + 1, or 0 if it cannot be opened. */
static uint32_t file_of_mapping(struct tb_unwind *u, pid_t pid, uint64_t start, uint64_t end,
				const char *path)
{
	char entry[96];
	struct stat st;
	struct file_key k;
	struct ufile *f;
	const char *why;
	int pathfd, fd;

	/* map_files: the very file mapped; looked at with O_PATH, opened
	 * for reading only if it is new and regular */
	snprintf(entry, sizeof(entry), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start, end);
	pathfd = tb_open_path(entry, &st, &why);
	if (pathfd >= 0) {
		key_of(&st, &k);
		if ((f = file_find(u, &k))) {
			close(pathfd);
			return (uint32_t)(f - u->files) + 1;
		}
		fd = tb_reopen_regular(pathfd, &st, TB_UNWIND_MAX_FILE, &why);
		close(pathfd);
	} else {
		fd = tb_open_mapped(pid, start, end, path, TB_UNWIND_MAX_FILE, &st, &why);
		if (fd >= 0) {
			key_of(&st, &k);
			if ((f = file_find(u, &k))) {
				close(fd);
				return (uint32_t)(f - u->files) + 1;
			}
		}
	}
	if (fd < 0) {
		u->st.open_failures++;
		return 0;
	}
	return file_new(u, &k, fd, path, pid);
}

/* process address - ELF vaddr for a mapping at file offset `offset`. */
static int64_t bias_of(const struct ufile *f, uint64_t start, uint64_t offset)
{
	for (uint32_t i = 0; i < f->nloads; i++)
		if ((f->loads[i].offset & ~0xfffull) <= offset &&
		    offset < f->loads[i].offset + f->loads[i].filesz)
			return (int64_t)(start - (f->loads[i].vaddr - f->loads[i].offset + offset));
	return (int64_t)(start - offset);
}

/* ------------------------------------------------------------ processes */

static struct uproc *proc_find(struct tb_unwind *u, uint32_t pid)
{
	uint32_t i = pid ? tb_hmap_find_key(&u->proc_index, u->procs, sizeof(*u->procs), &pid,
					     sizeof(pid)) : TB_HMAP_NONE;

	return i == TB_HMAP_NONE ? NULL : &u->procs[i];
}

/* The range of old[0..nold) (sorted) at the same place, offset and inode
 * as r: the same file, not looked at again. */
static const struct prange *unchanged(const struct prange *old, uint32_t nold, const struct prange *r)
{
	uint32_t i = tb_code_range_find(old, nold, sizeof(*old), r->start);

	return i < nold && old[i].start == r->start && old[i].end == r->end && old[i].offset == r->offset &&
	       old[i].inode == r->inode && old[i].kind == r->kind ? &old[i] : NULL;
}

/* One executable mapping of a maps line (pos: where its path starts); 0
 * if the line is not one. */
static int parse_line(FILE *fp, char *line, size_t len, struct prange *r, int *pos)
{
	char perms[8];

	if (!fgets(line, (int)len, fp))
		return -1;
	if (!strchr(line, '\n')) {        /* longer than a maps line can be: skip it whole */
		int c;

		while ((c = fgetc(fp)) != EOF && c != '\n')
			;
		return 0;
	}
	line[strcspn(line, "\n")] = '\0';
	*pos = 0;
	*r = (struct prange){ 0, 0, 0, 0, 0, 0, R_ANON };
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %" SCNu64 " %n", &r->start, &r->end,
		   perms, &r->offset, &r->inode, pos) < 5 || !*pos || !strchr(perms, 'x') || r->end <= r->start)
		return 0;
	if (line[*pos] == '/')
		r->kind = R_FILE;
	else if (!strcmp(line + *pos, "[vdso]"))
		r->kind = R_VDSO;
	return 1;
}

/* Read pid's executable mappings into *out (refs taken; those that did not
 * change since old[0..nold) keep their file); -1 if its maps cannot be
 * read.  Beyond TB_MAX_RANGES, mapped files are kept before anonymous code
 * (whose frames are left by frame pointer anyway). */
static int read_ranges(struct tb_unwind *u, pid_t pid, const struct prange *old, uint32_t nold,
		       struct prange **out, uint32_t *n)
{
	char path[64], line[PATH_MAX + 128];
	uint32_t cap = 0, seen = 0, files = 0, anon = 0, anon_room;
	struct prange r;
	FILE *fp;
	int pos, rc;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(fp = fopen(path, "re")))
		return -1;
	while ((rc = parse_line(fp, line, sizeof(line), &r, &pos)) >= 0 && seen < MAX_EXEC_MAPPINGS)
		if (rc) {
			seen++;
			files += r.kind == R_FILE;
		}
	anon_room = files < TB_MAX_RANGES ? TB_MAX_RANGES - files : 0;
	rewind(fp);
	seen = 0;
	while ((rc = parse_line(fp, line, sizeof(line), &r, &pos)) >= 0 && seen < MAX_EXEC_MAPPINGS) {
		const struct prange *same;

		if (!rc)
			continue;
		seen++;
		if (*n == TB_MAX_RANGES || (r.kind != R_FILE && anon++ >= anon_room)) {
			u->st.ranges_dropped++;
			continue;
		}
		if (r.kind == R_FILE) {
			if ((same = unchanged(old, nold, &r)))
				r = *same;
			else
				r.file = file_of_mapping(u, pid, r.start, r.end, line + pos);
		} else if (r.kind == R_VDSO) {
			r.file = u->vdso;
			r.offset = 0;
		}
		if (r.file) {
			u->files[r.file - 1].refs++;
			r.bias = bias_of(&u->files[r.file - 1], r.start, r.offset);
		}
		*out = tb_grow(*out, &cap, *n + 1, sizeof(**out), 32);
		(*out)[(*n)++] = r;
	}
	fclose(fp);
	return 0;
}

static void drop_ranges(struct tb_unwind *u, struct prange *r, uint32_t n, uint64_t now)
{
	for (uint32_t i = 0; i < n; i++)
		file_unref(u, r[i].file, now);
	free(r);
}

/* Are the files of p built (or has it waited long enough)? */
static int proc_ready(const struct tb_unwind *u, const struct uproc *p, uint64_t now)
{
	if (now - p->added_ns >= u->o.wait_ns)
		return 1;
	for (uint32_t i = 0; i < p->nr; i++)
		if (p->r[i].file && u->files[p->r[i].file - 1].state == F_BUILDING)
			return 0;
	return 1;
}

static void write_ranges(struct tb_unwind *u, struct uproc *p)
{
	struct tb_umaps *m = u->scratch;

	m->n = 0;
	m->gen++;
	for (uint32_t i = 0; i < p->nr && m->n < TB_MAX_RANGES; i++) {
		const struct prange *r = &p->r[i];
		struct tb_urange *o = &m->r[m->n++];

		*o = (struct tb_urange){ r->start, r->end, r->bias, 0, 0 };
		if (r->file) {
			const struct ufile *f = &u->files[r->file - 1];

			if (f->state == F_BUILDING)
				o->flags = TB_UR_PENDING;
			else
				o->slot = f->slot;
		}
	}
	u->maps.set_ranges(u->maps.ctx, p->pid, m);
}

static void publish_if_ready(struct tb_unwind *u, struct uproc *p, uint64_t now)
{
	if (p->published || !proc_ready(u, p, now))
		return;
	p->published = 1;
	u->unpublished--;
	write_ranges(u, p);
}

static void compact_procs(struct tb_unwind *u)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < u->nprocs; i++)
		if (u->procs[i].pid)
			u->procs[n++] = u->procs[i];
	u->nprocs = n;
	u->dead_procs = 0;
	tb_hmap_clear(&u->proc_index);
	for (uint32_t i = 0; i < n; i++)
		tb_hmap_insert(&u->proc_index, tb_hash(&u->procs[i].pid, sizeof(u->procs[i].pid)), i);
}

static void proc_free_perfmap(struct tb_unwind *u, struct uproc *p)
{
	if (!p->perfmap)
		return;
	u->st.perfmap_names += p->perfmap->lines;
	tb_perfmap_free(p->perfmap);
	free(p->perfmap);
	p->perfmap = NULL;
}

static struct uproc *proc_new(struct tb_unwind *u, uint32_t pid)
{
	struct uproc *p;

	if (u->nprocs - u->dead_procs >= TB_UNWIND_MAX_PROCS) {
		u->st.not_followed++;
		return NULL;
	}
	u->procs = tb_grow(u->procs, &u->capprocs, u->nprocs + 1, sizeof(*u->procs), 64);
	p = &u->procs[u->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	tb_hmap_insert(&u->proc_index, tb_hash(&pid, sizeof(pid)), u->nprocs++);
	u->unpublished++;
	return p;
}

/* ------------------------------------------------------------ installing */

static void rewrite_users(struct tb_unwind *u, uint32_t file, uint64_t now)
{
	for (uint32_t i = 0; i < u->nprocs; i++) {
		struct uproc *p = &u->procs[i];

		if (!p->pid)
			continue;
		if (!p->published) {
			publish_if_ready(u, p, now);
			continue;
		}
		for (uint32_t k = 0; k < p->nr; k++)
			if (p->r[k].file == file) {
				write_ranges(u, p);
				break;
			}
	}
}

/* A finished build: rows, descriptor, then the ranges pointing at it. */
static void install(struct tb_unwind *u, struct tb_ubuild_result *r, uint64_t now)
{
	struct ufile *f = r->file < u->nfiles ? &u->files[r->file] : NULL, *old;
	struct tb_ufile d = { 0 };
	uint32_t first = 0;

	if (!f || f->state != F_BUILDING || f->id != r->id)
		return;                           /* evicted while it was built */
	u->st.build_cpu_ns += r->cpu_ns;
	if (!r->table_ok) {
		u->st.build_failures++;
		if (!u->o.quiet && r->err[0])
			tb_termsafe_line(stderr, "tachyon-bpf: native frames by frame pointer: ", r->err);
	}
	if (r->syms.cut && !u->o.quiet)
		tb_termsafe_line(stderr, "tachyon-bpf: native names: symbols past the budget (64 MiB of names, "
				 "65,536 repeated names or 2 s of CPU), the rest unnamed: ", r->syms.module);
	if (u->st.sym_bytes + sym_bytes(&r->syms) > TB_UNWIND_MAX_SYM_BYTES) {
		/* the files' names together are over the budget: this one keeps none */
		if (!u->st.syms_dropped++ && !u->o.quiet)
			tb_termsafe_line(stderr, "tachyon-bpf: native names: the symbols of all files kept are "
					 "over 512 MiB: this file's and later ones' functions unnamed: ", r->syms.module);
		tb_nsym_free(&r->syms);
	}
	f->syms = tb_calloc(1, sizeof(*f->syms));
	*f->syms = r->syms;
	if (f->syms->source == TB_NSYM_DEBUGFILE || f->syms->source == TB_NSYM_MINIDEBUG)
		u->st.debug_files++;
	u->st.sym_bytes += sym_bytes(f->syms);
	memset(&r->syms, 0, sizeof(r->syms));
	d.base = r->cfi.base;
	d.neval = r->eval.n < TB_MAX_EVAL ? r->eval.n : TB_MAX_EVAL;
	for (uint32_t i = 0; i < d.neval; i++) {
		d.eval_lo[i] = r->eval.r[i].lo;
		d.eval_hi[i] = r->eval.r[i].hi;
	}
	f->interp = d.neval > 0;
	/* FP_ONLY files get their rows too: a leaf before push rbp or after leave
	 * (rbp still or again the caller's) is left by its row */
	d.flags = TB_UF_FP_ONLY;
	if (r->table_ok && r->cfi.nrows) {
		uint32_t granules = (r->cfi.nrows + TB_UNWIND_GRANULE - 1) / TB_UNWIND_GRANULE;
		int ok;

		while (!(ok = !rows_alloc(u, granules, &first)) && (old = lru_unused(u)))
			file_evict(u, old);
		if (ok && u->maps.set_rows(u->maps.ctx, first * TB_UNWIND_GRANULE, r->cfi.rows, r->cfi.nrows)) {
			rows_free(u, first, granules);
			ok = 0;
		}
		if (ok) {
			f->first = first;
			f->granules = granules;
			d.first = first * TB_UNWIND_GRANULE;
			d.nrows = r->cfi.nrows;
			d.flags = r->cfi.flags & TB_CFI_FP_ONLY ? TB_UF_FP_ONLY : 0;
			u->st.tables++;
			u->st.rows_used += (uint64_t)granules * TB_UNWIND_GRANULE;
		} else {
			u->st.no_room++;
		}
	}
	f->fp_only = (d.flags & TB_UF_FP_ONLY) != 0;
	if (!u->nslots && (old = lru_unused(u)))
		file_evict(u, old);
	if (u->nslots) {
		f->slot = u->slots[--u->nslots];
		u->maps.set_file(u->maps.ctx, f->slot, &d);
	}
	f->state = F_READY;
	rewrite_users(u, r->file + 1, now);
}

/* ------------------------------------------------------------ the API */

/* pc of anonymous code named by p's perf map (read again, at most every
 * PERFMAP_AGAIN_NS, when it names no pc there): 1 with *out, else 0. */
static int perfmap_place(struct tb_unwind *u, struct uproc *p, uint64_t pc, struct tb_native_place *out)
{
	uint64_t start, now = 0;
	uint32_t resets;
	const char *why;
	int rc;

	if (!p->perfmap_id || !tb_nsym_lookup(&p->perfmap->syms, pc, &start)) {
		if (!p->perfmap_next_ns || (int64_t)((now = tb_mono_ns()) - p->perfmap_next_ns) >= 0) {
			if (!p->perfmap)
				p->perfmap = tb_calloc(1, sizeof(*p->perfmap));
			resets = p->perfmap->resets;
			rc = tb_perfmap_refresh(p->perfmap, (pid_t)p->pid, &why);
			p->perfmap_next_ns = (now ? now : tb_mono_ns()) + (rc < 0 ? PERFMAP_NONE_NS : PERFMAP_AGAIN_NS);
			/* the first names, or another file's: a new id (names are kept by id and start) */
			if (rc > 0 && (!p->perfmap_id || resets != p->perfmap->resets)) {
				p->perfmap_id = u->next_id++;
				u->st.perf_maps++;
			}
		}
		if (!p->perfmap_id || !tb_nsym_lookup(&p->perfmap->syms, pc, &start))
			return 0;
	}
	out->module = TB_PERFMAP_MODULE;
	out->syms = &p->perfmap->syms;
	out->file_id = p->perfmap_id;
	out->vaddr = pc;
	return 1;
}

static int resolve(void *ctx, uint32_t pid, uint64_t pc, struct tb_native_place *out)
{
	struct tb_unwind *u = ctx;
	struct uproc *p = proc_find(u, pid);
	const struct prange *r;
	uint32_t i;

	if (!p || (i = tb_code_range_find(p->r, p->nr, sizeof(*p->r), pc)) >= p->nr)
		return -1;
	r = &p->r[i];
	memset(out, 0, sizeof(*out));
	out->vaddr = pc;
	if (r->kind == R_ANON && perfmap_place(u, p, pc, out))
		return 0;
	if (!r->file) {
		static const struct { const char *module; uint64_t id; } other[] = {
			[R_FILE] = { "[unreadable]", UNREADABLE_ID }, [R_ANON] = { "[anon]", ANON_ID },
			[R_VDSO] = { "[vdso]", VDSO_ID },
		};

		out->module = other[r->kind].module;
		out->file_id = other[r->kind].id;
		return 0;
	}
	out->module = u->files[r->file - 1].module;
	out->syms = u->files[r->file - 1].syms;
	out->file_id = u->files[r->file - 1].id;
	out->interp = u->files[r->file - 1].interp;
	out->vaddr = pc - (uint64_t)r->bias;
	return 0;
}

/* The agent's own vDSO, copied to a memfd and queued for its build like a
 * mapped file; it is never evicted (a ref of its own). */
static void add_vdso(struct tb_unwind *u)
{
	const unsigned char *at = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)at;
	uint64_t size;
	struct file_key k;
	struct stat st;
	int fd;

	if (!at || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return;
	size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize; /* the headers come last */
	if (size < sizeof(*eh) || size > MAX_VDSO)
		return;
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, at, size) != (ssize_t)size || fstat(fd, &st)) {
		close(fd);
		return;
	}
	key_of(&st, &k);
	u->vdso = file_new(u, &k, fd, "[vdso]", 0);
	if (u->vdso)
		u->files[u->vdso - 1].refs = 1;
}

/* The builds that may wait, each holding a descriptor: the soft descriptor
 * limit raised to the hard one (the agent's own files need few), half of it,
 * at most TB_UNWIND_MAX_QUEUED. */
static uint32_t queue_bound(void)
{
	struct rlimit rl;
	uint64_t half;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 64;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	/* each job holds up to two (the file and its debug file): half the limit at most */
	half = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur / 4;
	return half < TB_UNWIND_MAX_QUEUED ? (uint32_t)half : TB_UNWIND_MAX_QUEUED;
}

struct tb_unwind *tb_unwind_new(const struct tb_unwind_maps *maps, const struct tb_unwind_opts *o)
{
	struct tb_unwind *u = tb_calloc(1, sizeof(*u));
	uint32_t granules = maps->max_rows / TB_UNWIND_GRANULE;

	u->maps = *maps;
	u->o = *o;
	u->next_id = FIRST_FILE_ID;
	u->max_queued = queue_bound();
	u->builder = tb_ubuild_start(o->threaded);
	u->slots = tb_calloc(maps->max_files ? maps->max_files : 1, sizeof(*u->slots));
	for (uint32_t s = maps->max_files; s > 1; s--)
		u->slots[u->nslots++] = s - 1;    /* slot 1 first */
	if (granules)
		rows_free(u, 0, granules);
	u->scratch = tb_calloc(1, sizeof(*u->scratch));
	u->resolver = (struct tb_native_resolver){ u, resolve };
	add_vdso(u);
	return u;
}

int tb_unwind_add_process(struct tb_unwind *u, pid_t pid, uint64_t now_ns)
{
	struct uproc *p = proc_find(u, (uint32_t)pid);
	struct prange *r;
	uint32_t n;

	if (p) {                          /* known: its maps may have changed */
		p->refreshed_ns = 0;
		tb_unwind_unknown_pc(u, pid, now_ns);
		return 0;
	}
	if (read_ranges(u, pid, NULL, 0, &r, &n))
		return -1;
	if (!(p = proc_new(u, (uint32_t)pid))) {
		drop_ranges(u, r, n, now_ns);
		return -1;
	}
	p->r = r;
	p->nr = n;
	p->added_ns = p->refreshed_ns = now_ns;
	publish_if_ready(u, p, now_ns);
	return 0;
}

int tb_unwind_wait(struct tb_unwind *u, pid_t pid, uint32_t *files, uint32_t *pending)
{
	const struct timespec nap = { 0, 1000 * 1000 };
	struct uproc *p;

	*files = *pending = 0;
	for (;;) {                        /* bounded: published at wait_ns at the latest */
		tb_unwind_poll(u, tb_mono_ns());
		if (!(p = proc_find(u, (uint32_t)pid)))
			return -1;
		if (p->published)
			break;
		nanosleep(&nap, NULL);
	}
	for (uint32_t i = 0; i < p->nr; i++) {
		uint32_t k = 0, file = p->r[i].file;

		while (k < i && p->r[k].file != file)
			k++;
		if (!file || k < i)
			continue;                 /* none, or counted already */
		(*files)++;
		*pending += u->files[file - 1].state == F_BUILDING;
	}
	return 0;
}

void tb_unwind_fork(struct tb_unwind *u, pid_t parent, pid_t child, uint64_t now_ns)
{
	struct uproc *pp, *c;
	uint32_t pi;

	tb_unwind_forget(u, child, now_ns);       /* a reused pid we did not hear the end of */
	if (!(pp = proc_find(u, (uint32_t)parent)))
		return;
	pi = (uint32_t)(pp - u->procs);
	if (!(c = proc_new(u, (uint32_t)child)))
		return;
	pp = &u->procs[pi];               /* procs may have moved */
	c->r = tb_calloc(pp->nr ? pp->nr : 1, sizeof(*c->r));
	memcpy(c->r, pp->r, pp->nr * sizeof(*c->r));
	c->nr = pp->nr;
	for (uint32_t i = 0; i < c->nr; i++)
		if (c->r[i].file)
			u->files[c->r[i].file - 1].refs++;
	c->added_ns = pp->added_ns;
	c->refreshed_ns = pp->refreshed_ns;
	if (pp->published) {              /* the BPF program copied its ranges */
		c->published = 1;
		u->unpublished--;
	}
}

void tb_unwind_forget(struct tb_unwind *u, pid_t pid, uint64_t now_ns)
{
	struct uproc *p = proc_find(u, (uint32_t)pid);

	if (!p)
		return;
	drop_ranges(u, p->r, p->nr, now_ns);
	if (!p->published)
		u->unpublished--;
	proc_free_perfmap(u, p);
	memset(p, 0, sizeof(*p));
	if (++u->dead_procs * 2 > u->nprocs)
		compact_procs(u);
}

void tb_unwind_unknown_pc(struct tb_unwind *u, pid_t pid, uint64_t now_ns)
{
	struct uproc *p = proc_find(u, (uint32_t)pid);
	struct prange *r;
	uint32_t n, pi;
	uint64_t t0, took;

	/* refreshed_ns may lie ahead (a slow reread's hold-off): compared signed; a young
	 * process (imports dlopen extension modules) may be reread sooner */
	if (!p || (p->refreshed_ns && (int64_t)(now_ns - p->refreshed_ns) <
		   (int64_t)(now_ns - p->added_ns < YOUNG_NS ? YOUNG_REFRESH_NS : u->o.refresh_ns)))
		return;
	pi = (uint32_t)(p - u->procs);
	t0 = tb_mono_ns();
	if (read_ranges(u, pid, p->r, p->nr, &r, &n))
		return;                   /* gone: its exit comes */
	took = tb_mono_ns() - t0;
	u->st.refresh_ns += took;
	p = &u->procs[pi];
	drop_ranges(u, p->r, p->nr, now_ns);
	p->r = r;
	p->nr = n;
	p->refreshed_ns = now_ns + (took < UINT64_MAX / REREAD_COST_FACTOR ? took * REREAD_COST_FACTOR : 0);
	u->st.refreshes++;
	if (p->published)
		write_ranges(u, p);
	else
		publish_if_ready(u, p, now_ns);
}

void tb_unwind_poll(struct tb_unwind *u, uint64_t now_ns)
{
	struct tb_ubuild_result *r;

	while ((r = tb_ubuild_take(u->builder))) {
		install(u, r, now_ns);
		tb_ubuild_result_free(r);
	}
	for (uint32_t i = 0; u->unpublished && i < u->nprocs; i++)
		if (u->procs[i].pid)
			publish_if_ready(u, &u->procs[i], now_ns);
	if (now_ns - u->young_ns >= YOUNG_EVERY_NS) {
		/* young processes load libraries (imports): reread their maps
		 * before a walk has to stop at one */
		u->young_ns = now_ns;
		for (uint32_t i = 0; i < u->nprocs; i++)
			if (u->procs[i].pid && now_ns - u->procs[i].added_ns < YOUNG_NS &&
			    (int64_t)(now_ns - u->procs[i].refreshed_ns) >= (int64_t)u->o.refresh_ns)
				tb_unwind_unknown_pc(u, (pid_t)u->procs[i].pid, now_ns);
	}
	if (now_ns - u->swept_ns < SWEEP_NS)
		return;
	u->swept_ns = now_ns;
	for (uint32_t i = 0; i < u->nfiles; i++) {
		struct ufile *f = &u->files[i];

		if (f->state == F_READY && !f->refs && now_ns - f->unused_since >= u->o.grace_ns)
			file_evict(u, f);
	}
}

uint32_t tb_unwind_building(struct tb_unwind *u)
{
	return tb_ubuild_pending(u->builder);
}

const struct tb_native_resolver *tb_unwind_resolver(struct tb_unwind *u)
{
	return &u->resolver;
}

void tb_unwind_stats(const struct tb_unwind *u, struct tb_unwind_stats *out)
{
	*out = u->st;
	for (uint32_t i = 0; i < u->nprocs; i++)       /* the names of the maps still held too */
		if (u->procs[i].pid && u->procs[i].perfmap)
			out->perfmap_names += u->procs[i].perfmap->lines;
	out->files = u->live_files;
	out->processes = u->nprocs - u->dead_procs;
	out->fp_only = 0;
	for (uint32_t i = 0; i < u->nfiles; i++)
		out->fp_only += u->files[i].state == F_READY && u->files[i].fp_only;
}

void tb_unwind_free(struct tb_unwind *u)
{
	if (!u)
		return;
	tb_ubuild_stop(u->builder);
	for (uint32_t i = 0; i < u->nprocs; i++) {
		free(u->procs[i].r);
		proc_free_perfmap(u, &u->procs[i]);
	}
	for (uint32_t i = 0; i < u->nfiles; i++) {
		if (u->files[i].syms)
			tb_nsym_free(u->files[i].syms);
		free(u->files[i].syms);
	}
	free(u->files);
	free(u->procs);
	tb_hmap_free(&u->file_index);
	tb_hmap_free(&u->proc_index);
	free(u->slots);
	free(u->free_rows);
	free(u->scratch);
	free(u);
}
