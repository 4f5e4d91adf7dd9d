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
 * process; a process's own copy could be written to, the agent's not).
 *
 * This file is the API (capture/unwind.h): processes added, forked and
 * forgotten, the worker's results polled, a pc resolved to its file for
 * names; unwind_files.c holds the files and unwind_procs.c the processes. */
#define _GNU_SOURCE
#include <fcntl.h>
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
#include "lib/mem.h"
#include "capture/clock.h"
#include "capture/unwind_registry.h"

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
	struct uproc *p = tb_ureg_proc_find(u, pid);
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
	tb_ureg_key_of(&st, &k);
	u->vdso = tb_ureg_file_new(u, &k, fd, "[vdso]", 0);
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
		tb_ureg_rows_free(u, 0, granules);
	u->scratch = tb_calloc(1, sizeof(*u->scratch));
	u->resolver = (struct tb_native_resolver){ u, resolve };
	add_vdso(u);
	return u;
}

int tb_unwind_add_process(struct tb_unwind *u, pid_t pid, uint64_t now_ns)
{
	struct uproc *p = tb_ureg_proc_find(u, (uint32_t)pid);
	struct prange *r;
	uint32_t n;

	if (p) {                          /* known: its maps may have changed */
		p->refreshed_ns = 0;
		tb_unwind_unknown_pc(u, pid, now_ns);
		return 0;
	}
	if (tb_ureg_read_ranges(u, pid, NULL, 0, &r, &n))
		return -1;
	if (!(p = tb_ureg_proc_new(u, (uint32_t)pid))) {
		tb_ureg_drop_ranges(u, r, n, now_ns);
		return -1;
	}
	p->r = r;
	p->nr = n;
	p->added_ns = p->refreshed_ns = now_ns;
	tb_ureg_publish_if_ready(u, p, now_ns);
	return 0;
}

int tb_unwind_wait(struct tb_unwind *u, pid_t pid, uint32_t *files, uint32_t *pending)
{
	const struct timespec nap = { 0, 1000 * 1000 };
	struct uproc *p;

	*files = *pending = 0;
	for (;;) {                        /* bounded: published at wait_ns at the latest */
		tb_unwind_poll(u, tb_mono_ns());
		if (!(p = tb_ureg_proc_find(u, (uint32_t)pid)))
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
	if (!(pp = tb_ureg_proc_find(u, (uint32_t)parent)))
		return;
	pi = (uint32_t)(pp - u->procs);
	if (!(c = tb_ureg_proc_new(u, (uint32_t)child)))
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
	struct uproc *p = tb_ureg_proc_find(u, (uint32_t)pid);

	if (!p)
		return;
	tb_ureg_drop_ranges(u, p->r, p->nr, now_ns);
	if (!p->published)
		u->unpublished--;
	tb_ureg_proc_free_perfmap(u, p);
	memset(p, 0, sizeof(*p));
	if (++u->dead_procs * 2 > u->nprocs)
		tb_ureg_compact_procs(u);
}

void tb_unwind_unknown_pc(struct tb_unwind *u, pid_t pid, uint64_t now_ns)
{
	struct uproc *p = tb_ureg_proc_find(u, (uint32_t)pid);
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
	if (tb_ureg_read_ranges(u, pid, p->r, p->nr, &r, &n))
		return;                   /* gone: its exit comes */
	took = tb_mono_ns() - t0;
	u->st.refresh_ns += took;
	p = &u->procs[pi];
	tb_ureg_drop_ranges(u, p->r, p->nr, now_ns);
	p->r = r;
	p->nr = n;
	p->refreshed_ns = now_ns + (took < UINT64_MAX / REREAD_COST_FACTOR ? took * REREAD_COST_FACTOR : 0);
	u->st.refreshes++;
	if (p->published)
		tb_ureg_write_ranges(u, p);
	else
		tb_ureg_publish_if_ready(u, p, now_ns);
}

void tb_unwind_poll(struct tb_unwind *u, uint64_t now_ns)
{
	struct tb_ubuild_result *r;

	while ((r = tb_ubuild_take(u->builder))) {
		tb_ureg_install(u, r, now_ns);
		tb_ubuild_result_free(r);
	}
	for (uint32_t i = 0; u->unpublished && i < u->nprocs; i++)
		if (u->procs[i].pid)
			tb_ureg_publish_if_ready(u, &u->procs[i], now_ns);
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
			tb_ureg_file_evict(u, f);
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
		tb_ureg_proc_free_perfmap(u, &u->procs[i]);
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
