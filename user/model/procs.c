/* procs.c: a profile's processes and threads: one compact record per
 * process image (an exec or a reused pid starts another; records without a
 * sample dropped and compacted, so churn keeps memory bounded), the newest
 * per pid indexed; threads indexed by (pid, tid) while they run, named from
 * /proc and from threading's names (cpython/threadnames.c), a fork child's
 * main thread by its parent's. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/mem.h"
#include "model/procs.h"
#include "cpython/threadnames.h"

static struct tb_pid_newest *pid_entry(const struct tb_profile *p, uint32_t pid)
{
	uint32_t i = tb_hmap_find_key(&p->pid_index, p->pids, sizeof(*p->pids), &pid, sizeof(pid));

	return i == TB_HMAP_NONE ? NULL : &p->pids[i];
}

int tb_profile_find_process(const struct tb_profile *p, uint32_t pid)
{
	const struct tb_pid_newest *e = pid_entry(p, pid);

	return e && e->proc ? (int)e->proc - 1 : -1;
}

static uint64_t thread_hash(uint32_t pid, uint32_t tid)
{
	return tb_hash2(pid, tid);
}

struct thread_key {
	const struct tb_profile *p;
	uint32_t pid, tid;
};

static int same_thread(const void *ctx, uint32_t i)
{
	const struct thread_key *k = ctx;
	const struct tb_tinfo *t = &k->p->threads[i];

	return t->pid == k->pid && t->tid == k->tid && !t->ended;
}

static int thread_running(const void *ctx, uint32_t i)
{
	const struct tb_profile *p = ctx;

	return !p->threads[i].ended;
}

/* Whoever asks for (pid, tid) from now on gets a new thread. */
static void end_threads(struct tb_profile *p, struct tb_pinfo *pi)
{
	for (uint32_t i = pi->last_thread; i; i = p->threads[i - 1].prev_in_proc) {
		p->threads[i - 1].ended = 1;
		p->ended_indexed++;
	}
	/* ended threads are never found: drop them from the index once they are
	 * half of it, each rebuild paid for by the ends since the last */
	if ((uint64_t)p->ended_indexed * 2 > p->thread_index.used) {
		tb_hmap_retain(&p->thread_index, thread_running, p);
		p->ended_indexed = 0;
	}
}

/* The newest record of e's pid ends: its running state goes, and a record
 * that never had a sample (nor a thread) goes too. */
static void end_record(struct tb_profile *p, struct tb_pid_newest *e)
{
	struct tb_pinfo *pi = &p->procs[e->proc - 1];

	free(pi->live);
	pi->live = NULL;
	end_threads(p, pi);
	p->records_changed++;
	/* its fork children read their code objects from themselves from now on */
	tb_stackcache_invalidate(&p->scache);
	if (pi->samples || pi->last_thread)
		return;
	pi->dropped = 1;
	p->ndropped++;
	e->proc = pi->older;
}

/* Dropped records are removed once they are half of the list: each
 * compaction is paid for by the drops since the last. */
static void maybe_compact(struct tb_profile *p)
{
	if ((uint64_t)p->ndropped * 2 >= p->nprocs)
		tb_profile_compact(p);
}

void tb_profile_compact(struct tb_profile *p)
{
	uint32_t *moved, n = 0, m = 0;

	if (!p->ndropped)
		return;
	p->records_changed++;
	moved = tb_calloc(p->nprocs, sizeof(*moved)); /* old index -> new index + 1 */
	for (uint32_t i = 0; i < p->nprocs; i++) {
		if (p->procs[i].dropped)
			continue;
		p->procs[n] = p->procs[i];
		moved[i] = ++n;
	}
	for (uint32_t i = 0; i < n; i++)
		if (p->procs[i].older)
			p->procs[i].older = moved[p->procs[i].older - 1];
	/* pids without a record left go too */
	tb_hmap_clear(&p->pid_index);
	for (uint32_t i = 0; i < p->npids; i++) {
		if (!p->pids[i].proc)
			continue;
		p->pids[m].pid = p->pids[i].pid;
		p->pids[m].proc = moved[p->pids[i].proc - 1];
		tb_hmap_insert(&p->pid_index, tb_hash(&p->pids[m].pid, sizeof(p->pids[m].pid)), m);
		m++;
	}
	free(moved);
	p->nprocs = n;
	p->npids = m;
	p->ndropped = 0;
}

void tb_profile_process_ended(struct tb_profile *p, uint32_t pid)
{
	struct tb_pid_newest *e = pid_entry(p, pid);

	if (e && e->proc && p->procs[e->proc - 1].live) {
		end_record(p, e);
		maybe_compact(p);
	}
}

static uint32_t add_record(struct tb_profile *p, const struct tb_target *t, int running)
{
	uint32_t pid = (uint32_t)t->pid, i;
	struct tb_pid_newest *e;
	struct tb_pinfo *pi;
	char version[32];

	i = tb_hmap_intern_key(&p->pid_index, p->pids, sizeof(*p->pids), &pid, sizeof(pid), p->npids);
	if (i == p->npids) {
		p->pids = tb_grow(p->pids, &p->cappids, p->npids + 1, sizeof(*p->pids), 64);
		p->pids[p->npids++] = (struct tb_pid_newest){ pid, 0 };
	}
	e = &p->pids[i];
	if (e->proc && p->procs[e->proc - 1].live)
		end_record(p, e); /* an exec, or an exit we did not hear of */
	p->procs = tb_grow(p->procs, &p->capprocs, p->nprocs + 1, sizeof(*p->procs), 64);
	pi = &p->procs[p->nprocs];
	memset(pi, 0, sizeof(*pi));
	pi->pid = pid;
	pi->comm = tb_strtab_intern(&p->pstrs, t->name[0] ? t->name : t->comm); /* the name it is shown by */
	pi->cmdline = tb_strtab_intern(&p->pstrs, t->cmdline);
	pi->elf_path = tb_strtab_intern(&p->pstrs, t->elf_path);
	pi->version = tb_strtab_intern(&p->pstrs, tb_layout_version_str(&t->layout, version, sizeof(version)));
	pi->version_hex = t->layout.version_hex;
	pi->free_threaded = t->layout.free_threaded ? 1 : 0;
	pi->shared_lib = t->shared_lib ? 1 : 0;
	pi->runtime_addr = t->runtime_addr;
	pi->pycode_type = t->pycode_type;
	pi->older = e->proc;
	pi->serial = p->serials++;
	if (running) {
		pi->live = tb_calloc(1, sizeof(*pi->live));
		pi->live->target = *t;
	}
	e->proc = ++p->nprocs;
	p->records_changed++;
	maybe_compact(p);
	return p->nprocs - 1; /* the newest record is last, compacted or not */
}

uint32_t tb_profile_add_process(struct tb_profile *p, const struct tb_target *t)
{
	if (p->async_aware && !tb_asyncio_offsets(&t->layout))
		fprintf(stderr, "tachyon-bpf: pid %d (Python %u.%u%s): --async-aware task attribution needs "
			"CPython 3.14+ (default build); profiled without task frames\n", (int)t->pid,
			t->layout.major, t->layout.minor, t->layout.free_threaded ? "t" : "");
	return add_record(p, t, 1);
}

int tb_profile_add_fork(struct tb_profile *p, uint32_t parent_pid, uint32_t child_pid)
{
	int parent = tb_profile_find_process(p, parent_pid);
	struct tb_target *t;
	uint32_t child, serial;

	if (parent < 0 || !p->procs[parent].live)
		return -1;
	serial = p->procs[parent].serial;
	t = tb_calloc(1, sizeof(*t)); /* the parent's copy may move as records are added */
	*t = p->procs[parent].live->target;
	t->pid = (pid_t)child_pid;
	child = add_record(p, t, 1);
	free(t);
	p->procs[child].live->parent_pid = parent_pid;
	p->procs[child].live->parent_serial = serial;
	return (int)child;
}

/* The running fork parent of l (not a process that reused its pid), or NULL. */
const struct tb_pinfo *tb_fork_parent(const struct tb_profile *p, const struct tb_plive *l)
{
	int parent = l->parent_pid ? tb_profile_find_process(p, l->parent_pid) : -1;

	return parent >= 0 && p->procs[parent].serial == l->parent_serial && p->procs[parent].live ?
		&p->procs[parent] : NULL;
}

uint32_t tb_profile_add_ended(struct tb_profile *p, const struct tb_target *t)
{
	return add_record(p, t, 0);
}

static uint32_t thread_name(struct tb_profile *p, uint32_t pid, uint32_t tid)
{
	char path[64], name[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(name, sizeof(name), f))
			name[0] = '\0';
		fclose(f);
	}
	name[strcspn(name, "\n")] = '\0';
	if (!name[0])
		snprintf(name, sizeof(name), "thread");
	return tb_strtab_intern(&p->strs, name);
}

#define NAMES_EVERY_NS (100ull * 1000 * 1000)

/* threading.Thread names of a running process's threads, by their ident. */
/* Reads after a new thread appeared that may leave a thread without its
 * Python name (a thread sampled before threading registered it), each on
 * the agent's next round: the name comes while the thread runs, not only at
 * the end, when a short-lived process may be gone. */
#define NAME_RETRIES 10

static void read_python_names(struct tb_profile *p, struct tb_pinfo *pi)
{
	const struct tb_target *t = &pi->live->target;
	struct tb_pyname names[256];
	int n = tb_python_thread_names(t->pid, &t->layout, t->runtime_addr, names, 256), unnamed = 0;

	for (uint32_t i = pi->last_thread; i; i = p->threads[i - 1].prev_in_proc) {
		struct tb_tinfo *ti = &p->threads[i - 1];

		if (!ti->ident)
			continue;
		for (int k = 0; k < n; k++)
			if (names[k].ident == ti->ident && names[k].name[0]) {
				ti->name = tb_strtab_intern(&p->strs, names[k].name);
				ti->python_name = 1;
			}
		unnamed |= !ti->python_name;
	}
	if (unnamed && pi->live->name_retries < NAME_RETRIES) {
		pi->live->name_retries++;
		pi->live->names_pending = 1;
	}
}

void tb_profile_read_thread_names(struct tb_profile *p, int only_pending)
{
	for (uint32_t i = 0; i < p->nprocs; i++) {
		struct tb_pinfo *pi = &p->procs[i];

		if (pi->live && (!only_pending || pi->live->names_pending)) {
			pi->live->names_pending = 0;
			read_python_names(p, pi);
		}
	}
}

/* Append a thread of pid, indexed under (pid, tid) unless an indexed one
 * has that key already (capture files may repeat one), chained to its
 * process's record if it has one. */
static uint32_t append_thread(struct tb_profile *p, uint32_t pid, uint32_t tid, uint32_t ns_tid)
{
	const struct thread_key k = { p, pid, tid };
	int proc = tb_profile_find_process(p, pid);
	struct tb_tinfo *t;

	tb_hmap_intern(&p->thread_index, thread_hash(pid, tid), p->nthreads, same_thread, &k);
	p->threads = tb_grow(p->threads, &p->capthreads, p->nthreads + 1, sizeof(*p->threads), 64);
	t = &p->threads[p->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->ns_tid = ns_tid;
	if (proc >= 0) {
		t->prev_in_proc = p->procs[proc].last_thread;
		p->procs[proc].last_thread = p->nthreads + 1;
	}
	return p->nthreads++;
}

uint32_t tb_lookup_thread(const struct tb_profile *p, uint32_t pid, uint32_t tid)
{
	const struct thread_key k = { p, pid, tid };

	return tb_hmap_find(&p->thread_index, thread_hash(pid, tid), same_thread, &k);
}

/* Most threads of a fork parent searched for a child's thread name. */
#define MAX_PARENT_THREADS 4096

/* The main thread t of a fork child is the parent's thread that forked
 * (same ident, copied with the process): it takes that thread's names
 * (comm, and the Python name if known). 1 if found there. */
static int inherit_names(struct tb_profile *p, const struct tb_plive *l, struct tb_tinfo *t)
{
	const struct tb_pinfo *parent = t->ident && t->tid == t->pid ? tb_fork_parent(p, l) : NULL;
	uint32_t i, n = 0;

	if (!parent)
		return 0;
	for (i = parent->last_thread; i && n < MAX_PARENT_THREADS;
	     i = p->threads[i - 1].prev_in_proc, n++) {
		const struct tb_tinfo *pt = &p->threads[i - 1];

		if (pt->ident == t->ident) {
			t->comm = pt->comm;
			t->name = pt->name;
			t->python_name = pt->python_name;
			return 1;
		}
	}
	return 0;
}

/* The thread of a sample of the running process pi, added if new. */
uint32_t tb_find_thread(struct tb_profile *p, struct tb_pinfo *pi, const struct tb_sample_hdr *h)
{
	uint32_t i = tb_lookup_thread(p, h->pid, h->tid);
	struct tb_tinfo *t;

	if (i != TB_HMAP_NONE)
		return i;
	i = append_thread(p, h->pid, h->tid, h->ns_tid);
	t = &p->threads[i];
	t->ident = h->type == TB_REC_SAMPLE ? h->value : 0;
	if (!inherit_names(p, pi->live, t))
		t->name = t->comm = thread_name(p, h->pid, h->tid);
	if (!t->ident || t->python_name)
		return i;
	pi->live->name_retries = 0;
	if (h->time_ns - pi->live->names_at > NAMES_EVERY_NS) {
		pi->live->names_at = h->time_ns;
		read_python_names(p, pi);
	} else {
		pi->live->names_pending = 1; /* read on the agent's next round */
	}
	return i;
}

uint32_t tb_profile_add_thread(struct tb_profile *p, uint32_t pid, uint32_t tid, uint32_t ns_tid,
			       const char *name)
{
	uint32_t i = append_thread(p, pid, tid, ns_tid);

	p->threads[i].name = tb_strtab_intern(&p->strs, name);
	return i;
}
