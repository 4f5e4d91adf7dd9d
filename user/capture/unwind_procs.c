/* unwind_procs.c: the unwind-table registry's processes (docs/native-unwinding.md,
 * "The registry"): a process's executable mappings read from
 * /proc/PID/maps (a reread keeps the ranges that did not change), each
 * range pointed at its file (unwind_files.c), and the ranges written to
 * the BPF map once every file is ready (or the wait is over), so a sample
 * is walked with every table or not at all. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/mem.h"
#include "capture/unwind_registry.h"

/* ------------------------------------------------------------ processes */

struct uproc *tb_ureg_proc_find(struct tb_unwind *u, uint32_t pid)
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
int tb_ureg_read_ranges(struct tb_unwind *u, pid_t pid, const struct prange *old, uint32_t nold,
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
				r.file = tb_ureg_file_of_mapping(u, pid, r.start, r.end, line + pos);
		} else if (r.kind == R_VDSO) {
			r.file = u->vdso;
			r.offset = 0;
		}
		if (r.file) {
			u->files[r.file - 1].refs++;
			r.bias = tb_ureg_bias_of(&u->files[r.file - 1], r.start, r.offset);
		}
		*out = tb_grow(*out, &cap, *n + 1, sizeof(**out), 32);
		(*out)[(*n)++] = r;
	}
	fclose(fp);
	return 0;
}

void tb_ureg_drop_ranges(struct tb_unwind *u, struct prange *r, uint32_t n, uint64_t now)
{
	for (uint32_t i = 0; i < n; i++)
		tb_ureg_file_unref(u, r[i].file, now);
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

void tb_ureg_write_ranges(struct tb_unwind *u, struct uproc *p)
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

void tb_ureg_publish_if_ready(struct tb_unwind *u, struct uproc *p, uint64_t now)
{
	if (p->published || !proc_ready(u, p, now))
		return;
	p->published = 1;
	u->unpublished--;
	tb_ureg_write_ranges(u, p);
}

void tb_ureg_compact_procs(struct tb_unwind *u)
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

void tb_ureg_proc_free_perfmap(struct tb_unwind *u, struct uproc *p)
{
	if (!p->perfmap)
		return;
	u->st.perfmap_names += p->perfmap->lines;
	tb_perfmap_free(p->perfmap);
	free(p->perfmap);
	p->perfmap = NULL;
}

struct uproc *tb_ureg_proc_new(struct tb_unwind *u, uint32_t pid)
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
