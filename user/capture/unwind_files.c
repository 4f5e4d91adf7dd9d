/* unwind_files.c: the unwind-table registry's files (docs/native-unwinding.md,
 * "The registry"): a file known by identity (device, inode, size, mtime,
 * ctime), opened the way its process maps it, its PT_LOAD biases read and
 * its table built by the worker (unwind_build.c); the rows array's extents
 * (first fit in TB_UNWIND_GRANULE-row units); a finished table installed
 * (rows, then ufiles[slot], then the ranges that point at it) and evicted
 * the other way, least recently used first when rows or slots run out. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/hash.h"
#include "lib/mem.h"
#include "lib/termsafe.h"
#include "proc/debugfile.h"
#include "proc/targetfile.h"
#include "capture/unwind_registry.h"

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

void tb_ureg_rows_free(struct tb_unwind *u, uint32_t start, uint32_t len)
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
void tb_ureg_file_evict(struct tb_unwind *u, struct ufile *f)
{
	static const struct tb_ufile none;

	if (f->slot) {
		u->maps.set_file(u->maps.ctx, f->slot, &none);
		u->slots[u->nslots++] = f->slot;
	}
	if (f->granules) {
		tb_ureg_rows_free(u, f->first, f->granules);
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

void tb_ureg_file_unref(struct tb_unwind *u, uint32_t file, uint64_t now)
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
uint32_t tb_ureg_file_new(struct tb_unwind *u, const struct file_key *k, int fd, const char *path, pid_t pid)
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

void tb_ureg_key_of(const struct stat *st, struct file_key *k)
{
	*k = (struct file_key){ (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
				(uint64_t)st->st_mtim.tv_sec, (uint64_t)st->st_mtim.tv_nsec,
				(uint64_t)st->st_ctim.tv_sec, (uint64_t)st->st_ctim.tv_nsec };
}

/* The file mapped at [start, end) of pid (path as its maps name it), known
 * or new; index + 1, or 0 if it cannot be opened. */
uint32_t tb_ureg_file_of_mapping(struct tb_unwind *u, pid_t pid, uint64_t start, uint64_t end,
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
		tb_ureg_key_of(&st, &k);
		if ((f = file_find(u, &k))) {
			close(pathfd);
			return (uint32_t)(f - u->files) + 1;
		}
		fd = tb_reopen_regular(pathfd, &st, TB_UNWIND_MAX_FILE, &why);
		close(pathfd);
	} else {
		fd = tb_open_mapped(pid, start, end, path, TB_UNWIND_MAX_FILE, &st, &why);
		if (fd >= 0) {
			tb_ureg_key_of(&st, &k);
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
	return tb_ureg_file_new(u, &k, fd, path, pid);
}

/* process address - ELF vaddr for a mapping at file offset `offset`. */
int64_t tb_ureg_bias_of(const struct ufile *f, uint64_t start, uint64_t offset)
{
	for (uint32_t i = 0; i < f->nloads; i++)
		if ((f->loads[i].offset & ~0xfffull) <= offset &&
		    offset < f->loads[i].offset + f->loads[i].filesz)
			return (int64_t)(start - (f->loads[i].vaddr - f->loads[i].offset + offset));
	return (int64_t)(start - offset);
}

/* ------------------------------------------------------------ installing */

static void rewrite_users(struct tb_unwind *u, uint32_t file, uint64_t now)
{
	for (uint32_t i = 0; i < u->nprocs; i++) {
		struct uproc *p = &u->procs[i];

		if (!p->pid)
			continue;
		if (!p->published) {
			tb_ureg_publish_if_ready(u, p, now);
			continue;
		}
		for (uint32_t k = 0; k < p->nr; k++)
			if (p->r[k].file == file) {
				tb_ureg_write_ranges(u, p);
				break;
			}
	}
}

/* A finished build: rows, descriptor, then the ranges pointing at it. */
void tb_ureg_install(struct tb_unwind *u, struct tb_ubuild_result *r, uint64_t now)
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
			tb_ureg_file_evict(u, old);
		if (ok && u->maps.set_rows(u->maps.ctx, first * TB_UNWIND_GRANULE, r->cfi.rows, r->cfi.nrows)) {
			tb_ureg_rows_free(u, first, granules);
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
		tb_ureg_file_evict(u, old);
	if (u->nslots) {
		f->slot = u->slots[--u->nslots];
		u->maps.set_file(u->maps.ctx, f->slot, &d);
	}
	f->state = F_READY;
	rewrite_users(u, r->file + 1, now);
}
