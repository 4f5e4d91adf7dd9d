/* tbp_sections.c: the table of a capture file's extension sections and the
 * trailer that holds them (format version 3; output/tbp_sections.h). */
#include <stdlib.h>
#include <string.h>
#include "output/tbp_sections.h"

/* Most sections a file may hold (each has a distinct tag). */
#define MAX_SECTIONS 64

const struct tb_cap_section tb_cap_sections[] = {
	{ TB_CAP_SEC_TIMELINE, "timeline", tb_cap_timeline_present, tb_cap_timeline_write,
	  tb_cap_timeline_read },
	{ TB_CAP_SEC_TASKS, "tasks", tb_cap_tasks_present, tb_cap_tasks_write, tb_cap_tasks_read },
	{ 0, NULL, NULL, NULL, NULL },
};

static const struct tb_cap_section *override;

void tb_cap_sections_override(const struct tb_cap_section *rows)
{
	override = rows;
}

const struct tb_cap_section *tb_cap_sections_table(void)
{
	return override ? override : tb_cap_sections;
}

int tb_cap_sections_present(const struct tb_profile *p)
{
	for (const struct tb_cap_section *s = tb_cap_sections_table(); s->tag; s++)
		if (s->present(p))
			return 1;
	return 0;
}

/* The counting pass: a section's length comes before its bytes. */
static void count_pass(struct tb_cap_out *o)
{
	o->n += o->b.n;
	o->b.n = 0;
}

void tb_cap_sections_write(struct tb_cap_out *o, const struct tb_profile *p)
{
	uint32_t n = 0;

	for (const struct tb_cap_section *s = tb_cap_sections_table(); s->tag; s++)
		n += s->present(p) != 0;
	tb_cap_u32(&o->b, n);
	for (const struct tb_cap_section *s = tb_cap_sections_table(); s->tag; s++) {
		struct tb_cap_out count = { .pass = count_pass };
		uint64_t at;

		if (!s->present(p))
			continue;
		s->write(&count, p);
		free(count.b.d);
		tb_cap_u32(&o->b, s->tag);
		tb_cap_u64(&o->b, tb_cap_out_size(&count));
		at = tb_cap_out_size(o);
		s->write(o, p);
		if (tb_cap_out_size(o) - at != tb_cap_out_size(&count))
			o->failed = 1; /* the two passes differ: the length written is wrong */
		tb_cap_out_chunk(o);
	}
}

static const struct tb_cap_section *find(uint32_t tag)
{
	for (const struct tb_cap_section *s = tb_cap_sections_table(); s->tag; s++)
		if (s->tag == tag)
			return s;
	return NULL;
}

int tb_cap_sections_read(struct tb_rd *r, struct tb_profile *p)
{
	uint32_t n = tb_rd_count(r, 12, "extension"), seen[MAX_SECTIONS];

	if (!r->failed && n > MAX_SECTIONS)
		return tb_rd_fail(r, "the file holds %u extension sections, more than %d", n, MAX_SECTIONS);
	for (uint32_t i = 0; i < n && !r->failed; i++) {
		uint32_t tag = (uint32_t)tb_rd_get(r, 4, "extension");
		uint64_t len = tb_rd_get(r, 8, "extension");
		const struct tb_cap_section *s;
		struct tb_rd sub;

		if (r->failed)
			break;
		if (len > r->left)
			return tb_rd_fail(r, "extension section %u claims %llu bytes, %zu are left", tag,
					  (unsigned long long)len, r->left);
		for (uint32_t k = 0; k < i; k++)
			if (seen[k] == tag)
				return tb_rd_fail(r, "extension section %u appears twice", tag);
		seen[i] = tag;
		s = find(tag);
		sub = *r; /* the same stream, bounded to the section */
		sub.left = (size_t)len;
		r->left -= (size_t)len;
		if (!s) /* a newer feature's data: this version does without it */
			tb_rd_skip(&sub, sub.left, "extension");
		if ((s && s->read(&sub, p)) || sub.failed) {
			r->failed = 1; /* sub wrote its sentence into r's buffer */
			return -1;
		}
		if (s && sub.left)
			return tb_rd_fail(r, "%zu unexpected bytes end the %s section", sub.left, s->name);
	}
	return r->failed ? -1 : 0;
}
