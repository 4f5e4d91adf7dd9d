/* tasks.c: the task frames of --async-aware samples, cached per (pid, task, coroutine)
 * (model/tasks.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/mem.h"
#include "lib/termsafe.h"
#include "model/tasks.h"

#define KEY_LEN (offsetof(struct tb_task_entry, task) + sizeof(uint64_t))

void tb_tasks_free(struct tb_tasks *t)
{
	free(t->e);
	tb_hmap_free(&t->index);
	free(t->m);
	tb_hmap_free(&t->mindex);
	free(t->c);
	tb_hmap_free(&t->cindex);
	memset(t, 0, sizeof(*t));
}

uint32_t tb_task_code(struct tb_symbolizer *sym, const char *name)
{
	char label[TB_TASK_NAME_MAX + 8];

	snprintf(label, sizeof(label), "<task %s>", name);
	return tb_sym_function(sym, TB_CODE_TASK, tb_hash(label, strlen(label)), label, "<task>");
}

/* Remember code as a task coroutine of pid (the cache starts over when full). */
static void note_coro(struct tb_tasks *t, uint32_t pid, uint64_t code)
{
	struct tb_task_coro key = { pid, 0, code };
	uint32_t i;

	if (!code)
		return;
	if (t->nc >= TB_TASK_CACHE_MAX) {
		tb_hmap_clear(&t->cindex);
		t->nc = 0;
	}
	t->c = tb_grow(t->c, &t->capc, t->nc + 1, sizeof(*t->c), 16);
	i = tb_hmap_intern_key(&t->cindex, t->c, sizeof(*t->c), &key, sizeof(key), t->nc);
	if (i == t->nc)
		t->c[t->nc++] = key;
}

int tb_tasks_known_coro(const struct tb_tasks *t, uint32_t pid, uint64_t addr)
{
	struct tb_task_coro key = { pid, 0, addr };

	return addr && tb_hmap_find_key(&t->cindex, t->c, sizeof(*t->c), &key, sizeof(key)) != TB_HMAP_NONE;
}

/* Read e's task and its awaiters (again); a read that fails keeps what an earlier one
 * found (the task ended since: its chain as last seen). */
static void fill(struct tb_tasks *t, struct tb_task_entry *e, struct tb_symbolizer *sym,
		 const struct tb_layout *l, uint64_t now)
{
	static struct tb_task_chain c;

	e->read_ns = now;
	t->reads++;
	if (tb_asyncio_read((pid_t)e->pid, l, e->task, e->coro32, &c)) {
		t->failed++;
		return;
	}
	e->n = 0;
	e->coro_code = c.coro_code;
	note_coro(t, e->pid, c.coro_code);
	for (unsigned i = 0; i < c.n && i < TB_TASK_CHAIN; i++)
		e->codes[e->n++] = tb_task_code(sym, c.name[i]);
}

/* May a task be read now (sample time now)? */
static int read_allowed(struct tb_tasks *t, uint64_t now)
{
	if (now - t->window_ns >= 1000000000ull) {
		t->window_ns = now;
		t->window_reads = 0;
	}
	if (t->window_reads >= TB_TASK_READS_PER_S) {
		t->skipped++;
		return 0;
	}
	t->window_reads++;
	return 1;
}

/* Does process pid's own AsyncioDebug section agree with its version's row?  Looked
 * at on its first task sample, again every TB_TASK_REFRESH_NS while it is not found
 * (a few times: then the row is trusted, as before the section was read). */
static int module_ok(struct tb_tasks *t, pid_t pid, const struct tb_layout *l, uint64_t now)
{
	struct tb_task_module key = { .pid = (uint32_t)pid }, *m;
	uint32_t i = tb_hmap_find_key(&t->mindex, t->m, sizeof(*t->m), &key, sizeof(key.pid));
	char err[256], prefix[96];

	if (i == TB_HMAP_NONE) {
		if (t->nm >= TB_TASK_CACHE_MAX) {
			tb_hmap_clear(&t->mindex);
			t->nm = 0;
		}
		t->m = tb_grow(t->m, &t->capm, t->nm + 1, sizeof(*t->m), 16);
		i = tb_hmap_intern_key(&t->mindex, t->m, sizeof(*t->m), &key, sizeof(key.pid), t->nm);
		t->m[t->nm++] = key;
	}
	m = &t->m[i];
	if (m->verdict || m->tries >= TB_TASK_VERIFY_TRIES ||
	    (m->tries && now - m->tried_ns < TB_TASK_REFRESH_NS))
		return m->verdict >= 0;
	m->tries++;
	m->tried_ns = now;
	err[0] = '\0';
	m->verdict = (int8_t)tb_asyncio_verify(pid, l, err, sizeof(err));
	if (m->verdict < 0) {
		t->refused++;
		snprintf(prefix, sizeof(prefix), "tachyon-bpf: pid %d: --async-aware: no task frames: ", (int)pid);
		tb_termsafe_line(stderr, prefix, err);
	}
	return m->verdict >= 0;
}

const struct tb_task_entry *tb_tasks_lookup(struct tb_tasks *t, struct tb_symbolizer *sym,
					    pid_t pid, const struct tb_layout *l,
					    const struct tb_sample_hdr *h)
{
	struct tb_task_entry key = { .pid = (uint32_t)pid, .coro32 = h->task_coro, .task = h->task };
	uint32_t i = tb_hmap_find_key(&t->index, t->e, sizeof(*t->e), &key, KEY_LEN);
	struct tb_task_entry *e;

	t->sampled++;
	if (!module_ok(t, pid, l, h->time_ns)) {
		t->refused_samples++;
		return NULL;
	}
	if (i == TB_HMAP_NONE) {
		if (!read_allowed(t, h->time_ns)) {
			t->over_budget++;
			return NULL;
		}
		if (t->n >= TB_TASK_CACHE_MAX) {
			tb_hmap_clear(&t->index);
			t->n = 0;
		}
		t->e = tb_grow(t->e, &t->cap, t->n + 1, sizeof(*t->e), 64);
		i = tb_hmap_intern_key(&t->index, t->e, sizeof(*t->e), &key, KEY_LEN, t->n);
		t->e[t->n++] = key;
		fill(t, &t->e[i], sym, l, h->time_ns);
	} else if ((int64_t)(h->time_ns - t->e[i].read_ns) > (int64_t)TB_TASK_REFRESH_NS &&
		   read_allowed(t, h->time_ns)) {
		fill(t, &t->e[i], sym, l, h->time_ns);
	}
	e = &t->e[i];
	if (e->n)
		return e;
	t->gone++;
	if (!t->finished_code)
		t->finished_code = tb_task_code(sym, "(finished)");
	t->finished = (struct tb_task_entry){ .pid = e->pid, .n = 1, .codes = { t->finished_code } };
	return &t->finished;
}
