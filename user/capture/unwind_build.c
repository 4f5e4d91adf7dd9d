/* unwind_build.c: the worker thread of the unwind-table registry.  A job is
 * a file descriptor (a regular file, opened by the agent's thread the way
 * the target would open it); the thread reads it with libelf (pread, no
 * mmap), builds the table (proc/cfi.c, bounded in rows and CPU time), the
 * evaluator ranges (cpython/evalrange.c) and the symbols
 * (proc/nativesym.c: with the .symtab of its debug file, a second
 * descriptor opened the same way and taken only if proc/debugfile.c finds
 * it the file's own, or of its MiniDebugInfo), and queues the result.  The smallest waiting file is
 * built first.  Two queues under one mutex;
 * the thread never touches the registry.  Stopping it drops the queued jobs
 * and cancels the table being built at its next row: the end of a capture
 * waits for no file. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "lib/mem.h"
#include "proc/debugfile.h"
#include "capture/unwind.h"
#include "capture/unwind_build.h"

struct job {
	uint32_t file;
	uint64_t id;
	int fd;
	int debug_fd;                     /* a candidate debug file, or -1 */
	char module[TB_NSYM_MODULE];
	uint64_t size;
};

struct tb_ubuild {
	int threaded, stop, started;
	int cancel;                       /* the build in progress gives up (atomic) */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct job *jobs;                 /* FIFO: jobs[head .. njobs) */
	uint32_t head, njobs, capjobs;
	struct tb_ubuild_result **done;
	uint32_t ndone, capdone;
	uint32_t busy;                    /* a job is being built */
};

/* The file's symbols, with those of its debug file (if it is the file's
 * own) or of its MiniDebugInfo when it has no .symtab. */
static void load_syms(Elf *elf, const struct job *j, struct tb_ubuild_result *r)
{
	struct tb_debug_ids ids;
	uint32_t source = 0;
	char err[200], *mini = NULL;
	Elf *debug = NULL;

	tb_debug_ids_read(elf, &ids);
	if (!ids.has_symtab && j->debug_fd >= 0) {
		debug = elf_begin(j->debug_fd, ELF_C_READ, NULL);
		if (tb_debug_matches(debug, j->debug_fd, &ids, TB_UNWIND_MAX_FILE)) {
			source = TB_NSYM_DEBUGFILE;
		} else if (debug) {
			elf_end(debug);
			debug = NULL;
		}
	}
	if (!ids.has_symtab && !debug && ids.has_minidebug && (debug = tb_debug_minidebug(elf, &mini)))
		source = TB_NSYM_MINIDEBUG;
	tb_nsym_load(elf, debug, source, j->module, &r->syms, err, sizeof(err));
	if (debug)
		elf_end(debug);
	free(mini);
}

static struct tb_ubuild_result *build(const struct job *j, const int *cancel)
{
	const struct tb_cfi_limits lim = { TB_CFI_MAX_ROWS, TB_CFI_MAX_FDES, TB_CFI_MAX_NS, cancel };
	struct tb_ubuild_result *r = tb_calloc(1, sizeof(*r));
	uint64_t t0 = tb_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	char err[200];
	Elf *elf;

	r->file = j->file;
	r->id = j->id;
	elf_version(EV_CURRENT);
	elf = elf_begin(j->fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(r->err, sizeof(r->err), "%s: not an ELF file", j->module);
		snprintf(r->syms.module, sizeof(r->syms.module), "%s", j->module);
		goto out;
	}
	r->table_ok = !tb_cfi_build(elf, &lim, &r->cfi, r->err, sizeof(r->err));
	/* without a table only .symtab can say where the evaluator is */
	if (r->table_ok ? tb_eval_ranges(elf, &r->cfi, &r->eval, err, sizeof(err)) :
			  tb_eval_ranges_symtab(elf, &r->eval))
		memset(&r->eval, 0, sizeof(r->eval));
	load_syms(elf, j, r);
	if (r->table_ok) {                /* the FDEs name stripped functions */
		tb_nsym_set_fdes(&r->syms, r->cfi.fdes, r->cfi.nfdes);
		r->cfi.fdes = NULL;
		r->cfi.nfdes = 0;
	}
out:
	if (elf)
		elf_end(elf);
	close(j->fd);
	if (j->debug_fd >= 0)
		close(j->debug_fd);
	r->cpu_ns = tb_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	return r;
}

static void finish(struct tb_ubuild *b, struct tb_ubuild_result *r)
{
	b->done = tb_grow(b->done, &b->capdone, b->ndone + 1, sizeof(*b->done), 16);
	b->done[b->ndone++] = r;
}

/* The smallest waiting file to the head of the queue (a scan: the queue is
 * bounded, TB_UNWIND_MAX_QUEUED); equal sizes in the order they came. */
static void take_smallest(struct tb_ubuild *b)
{
	uint32_t best = b->head;
	struct job t;

	for (uint32_t i = b->head + 1; i < b->njobs; i++)
		if (b->jobs[i].size < b->jobs[best].size)
			best = i;
	if (best == b->head)
		return;
	t = b->jobs[best];
	memmove(&b->jobs[b->head + 1], &b->jobs[b->head], (size_t)(best - b->head) * sizeof(t));
	b->jobs[b->head] = t;
}

static void *worker(void *arg)
{
	struct tb_ubuild *b = arg;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		struct job j;
		struct tb_ubuild_result *r;

		while (!b->stop && b->head == b->njobs)
			pthread_cond_wait(&b->wake, &b->lock);
		if (b->stop)
			break;
		take_smallest(b);
		j = b->jobs[b->head++];
		b->busy = 1;
		pthread_mutex_unlock(&b->lock);
		r = build(&j, &b->cancel);
		pthread_mutex_lock(&b->lock);
		b->busy = 0;
		finish(b, r);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

struct tb_ubuild *tb_ubuild_start(int threaded)
{
	struct tb_ubuild *b = tb_calloc(1, sizeof(*b));

	b->threaded = threaded;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->wake, NULL);
	if (threaded && !pthread_create(&b->thread, NULL, worker, b))
		b->started = 1;
	else
		b->threaded = 0;
	return b;
}

void tb_ubuild_submit(struct tb_ubuild *b, uint32_t file, uint64_t id, int fd, int debug_fd,
		      const char *module, uint64_t size)
{
	struct job j = { file, id, fd, debug_fd, "", size };

	snprintf(j.module, sizeof(j.module), "%s", module);
	if (!b->threaded) {
		finish(b, build(&j, NULL));
		return;
	}
	pthread_mutex_lock(&b->lock);
	if (b->head == b->njobs)
		b->head = b->njobs = 0;
	b->jobs = tb_grow(b->jobs, &b->capjobs, b->njobs + 1, sizeof(*b->jobs), 16);
	b->jobs[b->njobs++] = j;
	pthread_cond_signal(&b->wake);
	pthread_mutex_unlock(&b->lock);
}

struct tb_ubuild_result *tb_ubuild_take(struct tb_ubuild *b)
{
	struct tb_ubuild_result *r = NULL;

	pthread_mutex_lock(&b->lock);
	if (b->ndone) {
		r = b->done[0];
		memmove(b->done, b->done + 1, (b->ndone - 1) * sizeof(*b->done));
		b->ndone--;
	}
	pthread_mutex_unlock(&b->lock);
	return r;
}

uint32_t tb_ubuild_pending(struct tb_ubuild *b)
{
	uint32_t n;

	pthread_mutex_lock(&b->lock);
	n = b->njobs - b->head + b->busy + b->ndone;
	pthread_mutex_unlock(&b->lock);
	return n;
}

void tb_ubuild_result_free(struct tb_ubuild_result *r)
{
	if (!r)
		return;
	tb_cfi_free(&r->cfi);
	tb_nsym_free(&r->syms);
	free(r);
}

void tb_ubuild_stop(struct tb_ubuild *b)
{
	if (!b)
		return;
	if (b->started) {
		pthread_mutex_lock(&b->lock);
		b->stop = 1;
		/* the file being built gives up at its next row: the end of a
		 * capture waits for no table */
		__atomic_store_n(&b->cancel, 1, __ATOMIC_RELAXED);
		pthread_cond_signal(&b->wake);
		pthread_mutex_unlock(&b->lock);
		pthread_join(b->thread, NULL);
	}
	for (uint32_t i = b->head; i < b->njobs; i++) {
		close(b->jobs[i].fd);
		if (b->jobs[i].debug_fd >= 0)
			close(b->jobs[i].debug_fd);
	}
	for (uint32_t i = 0; i < b->ndone; i++)
		tb_ubuild_result_free(b->done[i]);
	free(b->jobs);
	free(b->done);
	pthread_mutex_destroy(&b->lock);
	pthread_cond_destroy(&b->wake);
	free(b);
}
