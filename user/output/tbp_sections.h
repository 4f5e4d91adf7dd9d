/* tbp_sections.h: the extension sections of a capture file (format version
 * 3, docs/capture-format.md): after the stacks, a u32 count, then per
 * section a u32 tag, a u64 length and that many bytes.  A feature that adds
 * data to captures adds one row to the table in tbp_sections.c (its tag,
 * whether a profile has such data, its writer and its reader) instead of a
 * new format version.  The reader skips tags it does not know; a profile
 * with no section present is written as version 1 or 2, byte for byte as
 * before. */
#ifndef TB_TBP_SECTIONS_H
#define TB_TBP_SECTIONS_H
#include <stdint.h>
#include "model/profile.h"
#include "output/tbp_io.h"

/* Tags: one per feature, never reused. */
enum tb_cap_tag {
	TB_CAP_SEC_TEST = 0x7e57,     /* unit tests only: never written by the agent */
	TB_CAP_SEC_TIMELINE = 0x74696d65, /* "time": stacks and thread states over time (tbp_timeline.c) */
	TB_CAP_SEC_TASKS = 0x5441534b, /* --async-aware: which code objects are task frames (tbp_tasks.c) */
};

struct tb_cap_section {
	uint32_t tag;
	const char *name;             /* for messages: "the <name> section" */
	/* does p hold data for this section? */
	int (*present)(const struct tb_profile *p);
	/* put the section's bytes (without tag and length), a chunk at a time
	 * (tb_cap_out_chunk); called twice, first to count them: both calls
	 * must put the same bytes */
	void (*write)(struct tb_cap_out *o, const struct tb_profile *p);
	/* read them from r (bounded to the section's length; r->strs and
	 * r->pids are the file's): 0, or -1 after tb_rd_fail. Every byte of the
	 * section must be consumed. */
	int (*read)(struct tb_rd *r, struct tb_profile *p);
};

/* The tasks section (output/tbp_tasks.c). */
int tb_cap_tasks_present(const struct tb_profile *p);
void tb_cap_tasks_write(struct tb_cap_out *o, const struct tb_profile *p);
int tb_cap_tasks_read(struct tb_rd *r, struct tb_profile *p);

/* The rows, NULL-terminated by a row with tag 0 and no functions. */
extern const struct tb_cap_section tb_cap_sections[];
/* For tests: another table used instead (NULL: the real one). */
void tb_cap_sections_override(const struct tb_cap_section *rows);
const struct tb_cap_section *tb_cap_sections_table(void);

/* The timeline section (output/tbp_timeline.c). */
int tb_cap_timeline_present(const struct tb_profile *p);
void tb_cap_timeline_write(struct tb_cap_out *o, const struct tb_profile *p);
int tb_cap_timeline_read(struct tb_rd *r, struct tb_profile *p);

/* Is any section present (then the file is version 3)? */
int tb_cap_sections_present(const struct tb_profile *p);
/* The trailer: count, then tag, length, bytes per present section (each
 * written once to count its bytes, then for real). */
void tb_cap_sections_write(struct tb_cap_out *o, const struct tb_profile *p);
/* Read the trailer of a version 3 payload (known tags parsed, others skipped). */
int tb_cap_sections_read(struct tb_rd *r, struct tb_profile *p);

#endif
