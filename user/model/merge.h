/* merge.h: one sample's native frames (--native) and Python frames in one
 * list, in the order they ran (docs/native-unwinding.md, "Merging").  Each
 * native frame of the evaluator (TB_NF_EVAL) stands for the Python frames
 * it was running, down to the entry frame of its call: tb_merge puts them
 * in its place.  The native frames then get names (model code entries of
 * kind native) and the interpreter's call plumbing (its version's list,
 * cpython/plumbing.c) is hidden unless --native-all. */
#ifndef TB_MERGE_H
#define TB_MERGE_H
#include <stdint.h>
#include "lib/hashmap.h"
#include "model/symbolize.h"
#include "proc/nativesym.h"
#include "tachyon.h"

/* Most frames a merged stack has: Python, native, one marker. */
#define TB_MERGED_MAX (TB_MAX_FRAMES + TB_MAX_NATIVE + 1)

enum tb_merge_verdict {
	TB_MV_PYTHON_ONLY = 0, /* no native walk (tables not loaded yet): Python frames only */
	TB_MV_MERGED,          /* every evaluator frame had its Python frames */
	TB_MV_TOLERATED,       /* the innermost evaluator had none (entering or leaving a call) */
	TB_MV_TRUNCATED,       /* the native walk stopped early: the rest of the Python frames
				* follow a <native truncated> marker */
	TB_MV_UNMERGED,        /* the counts disagree: native frames, <native unmerged>, Python frames */
	TB_MV_NATIVE_ONLY,     /* no Python frame: native frames only */
	TB_MV_MAX,
};
extern const char *const tb_merge_verdict_names[TB_MV_MAX];

enum tb_merge_kind { TB_MI_PYTHON, TB_MI_NATIVE, TB_MI_TRUNCATED, TB_MI_UNMERGED };

struct tb_merge_item {
	uint16_t kind;            /* enum tb_merge_kind */
	uint16_t index;           /* into the Python frames or the native words */
};

struct tb_merge_in {
	const uint64_t *words;    /* native words, leaf first: pc | TB_NF_* */
	uint32_t nwords;
	uint32_t stop;            /* TB_NS_*: why the native walk ended */
	const struct tb_frame *frames; /* Python frames, innermost first (TB_FF_ENTRY) */
	uint32_t nframes;
	int python_truncated;     /* the Python walk stopped before the outermost frame */
	unsigned py_minor;        /* 10: each frame is its own evaluator call */
};

/* Merge: out[0..return value), innermost first, at most nwords + nframes
 * + 1 items; *verdict says how it went. */
uint32_t tb_merge(const struct tb_merge_in *in, struct tb_merge_item *out, enum tb_merge_verdict *verdict);

/* Where a native pc lies, as the capture knows it (capture/unwind.c). */
struct tb_native_place {
	const char *module;       /* the mapped file's base name */
	const struct tb_nsym_file *syms; /* its symbols, NULL while they load */
	uint64_t file_id;         /* the file, never reused in a capture */
	uint64_t vaddr;           /* the pc as an ELF vaddr of the file */
	int interp;               /* the file holds the evaluator */
};

struct tb_native_resolver {
	void *ctx;
	/* The place of pc in process pid: 0, or -1 if no known mapping holds it. */
	int (*find)(void *ctx, uint32_t pid, uint64_t pc, struct tb_native_place *out);
};

/* What the merge counted over a capture. */
struct tb_native_stats {
	uint64_t samples;                 /* samples with --native on */
	uint64_t verdicts[TB_MV_MAX];
	uint64_t stops[TB_NS_MAX];        /* native walks by why they ended */
	uint64_t words;                   /* native frames walked (words recorded) */
	uint64_t frames;                  /* native frames shown */
	uint64_t hidden;                  /* interpreter plumbing hidden (not --native-all) */
	uint64_t unknown;                 /* native pcs in no known mapping */
	/* partial samples (model/profile.c): */
	uint64_t not_ready_process;       /* the process's tables not loaded yet (no walk) */
	uint64_t not_ready_library;       /* a frame of a library mapped since, or whose table is
					   * still being built (UNKNOWN_MAP, NO_TABLE): kept, the walk
					   * went on by frame pointer; marked <native tables not
					   * ready> when its Python frames could not be placed */
};

/* Native functions as code entries: one per (file, function start). */
struct tb_native_codes {
	const struct tb_native_resolver *resolver; /* NULL: names are addresses */
	int show_all;             /* --native-all: hide no plumbing */
	struct tb_native_stats stats;
	struct tb_native_key {
		uint64_t file_id, start;
		uint32_t code;
		uint32_t plumbing; /* the evaluator's call plumbing: hidden unless show_all */
	} *keys;
	uint32_t nkeys, capkeys;
	struct tb_hmap index;     /* (file_id, start) -> keys[] */
};

void tb_native_codes_free(struct tb_native_codes *c);
/* Count one sample's merge (nwords native words walked). */
void tb_native_count(struct tb_native_codes *c, uint32_t stop, uint32_t nwords, enum tb_merge_verdict v);
/* The code entry of native word w of process pid, a CPython 3.py_minor
 * (added to sym on first sight, kind native: name = symbol, or
 * module+0xSTART), *offset = pc - function start; -1 if it is the
 * version's call plumbing, hidden (named functions of the evaluator's file
 * only: an unnamed one is never hidden). */
int64_t tb_native_code(struct tb_native_codes *c, struct tb_symbolizer *sym, uint32_t pid, uint64_t w,
		       unsigned py_minor, int32_t *offset);

#endif
