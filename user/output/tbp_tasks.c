/* tbp_tasks.c: the tasks section of a capture file (--async-aware; a row of
 * output/tbp_sections.c).  Task frames are stored among the code objects as Python
 * frames of pid 0 named "<task NAME>" (file "<task>"), so a reader that does not
 * know this section shows them as synthetic frames; the section says which code
 * objects they are, and how many samples had task frames:
 *   u64 task samples, u32 count, count x u32 code index. */
#include <string.h>
#include "output/tbp_sections.h"

int tb_cap_tasks_present(const struct tb_profile *p)
{
	return p->async_aware;
}

void tb_cap_tasks_write(struct tb_cap_out *o, const struct tb_profile *p)
{
	struct tb_buf *b = &o->b;
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->sym.n; i++)
		n += p->sym.codes[i].kind == TB_CODE_TASK;
	tb_cap_u64(b, p->task_samples);
	tb_cap_u32(b, n);
	for (uint32_t i = 0; i < p->sym.n; i++)
		if (p->sym.codes[i].kind == TB_CODE_TASK) {
			tb_cap_u32(b, i);
			tb_cap_out_chunk(o);
		}
}

/* A code object that can be a task frame: pid 0, no lines, "<task ...>" in "<task>". */
static int task_like(const struct tb_profile *p, const struct tb_code *c)
{
	const char *name = tb_str(&p->strs, c->qualname);
	size_t len = strlen(name);

	return c->pid == 0 && c->kind == TB_CODE_PYTHON && !c->linetable && len >= 7 &&
	       !strncmp(name, "<task ", 6) && name[len - 1] == '>' &&
	       !strcmp(tb_str(&p->strs, c->filename), "<task>");
}

int tb_cap_tasks_read(struct tb_rd *r, struct tb_profile *p)
{
	uint64_t samples = tb_rd_get(r, 8, "tasks");
	uint32_t n = tb_rd_count(r, 4, "task");

	for (uint32_t i = 0; i < n && !r->failed; i++) {
		uint32_t idx = (uint32_t)tb_rd_get(r, 4, "task");

		if (r->failed)
			break;
		if (idx >= p->sym.n || !task_like(p, &p->sym.codes[idx]))
			return tb_rd_fail(r, "task %u names code object %u, which is not a task frame", i, idx);
		p->sym.codes[idx].kind = TB_CODE_TASK;
	}
	if (r->failed)
		return -1;
	p->async_aware = 1;
	p->task_samples = samples;
	return 0;
}
