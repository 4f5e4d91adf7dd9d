/* merge.c: native and Python frames of one sample in one list (tb_merge, a
 * pure function), and native functions as code entries.
 *
 * Segments: the Python frames one evaluator call runs, innermost first.  On
 * 3.10 every frame is its own call; on 3.11+ a segment ends with the frame
 * marked TB_FF_ENTRY (3.11 is_entry; 3.12+ the frame above an entry shim),
 * and frames after the last mark (a Python walk cut short) form a last,
 * partial one.  With E native frames in the evaluator and S segments:
 * E == S: the k-th evaluator frame (leaf first) is replaced by the k-th
 * segment.  E == S + 1: the innermost evaluator is entering or leaving a
 * call (its frame not linked yet, or unlinked already): it is dropped
 * (tolerated), unless the Python walk was cut short (then the outer
 * evaluators are the ones without frames).  E < S and the walk stopped early: the segments left follow
 * a <native truncated> marker, toward the root.  E > S with the Python walk
 * cut short: the outer evaluator frames stay as native frames.  Anything
 * else is unmerged: native frames, <native unmerged>, Python frames.
 *
 * Interpreter plumbing (docs/native-unwinding.md): frames of the file that
 * holds the evaluator whose symbol is in the process's version's list of
 * call plumbing (cpython/plumbing.c) are hidden, wherever they are;
 * --native-all shows them.  A frame without a name (stripped, static:
 * module+0xSTART) is never hidden: between two Python frames it is the C
 * part of a py -> C -> py call (builtin_sorted, list_sort_impl on a
 * stripped build), which the call's plumbing around it does not name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/mem.h"
#include "model/merge.h"
#include "cpython/plumbing.h"

const char *const tb_merge_verdict_names[TB_MV_MAX] = {
	[TB_MV_PYTHON_ONLY] = "python_only", [TB_MV_MERGED] = "merged",
	[TB_MV_TOLERATED] = "tolerated", [TB_MV_TRUNCATED] = "truncated",
	[TB_MV_UNMERGED] = "unmerged", [TB_MV_NATIVE_ONLY] = "native_only",
};

/* End (exclusive) of the segment starting at Python frame i. */
static uint32_t segment_end(const struct tb_merge_in *in, uint32_t i)
{
	if (in->py_minor == 10)
		return i + 1;
	while (i < in->nframes && !(in->frames[i].flags & TB_FF_ENTRY))
		i++;
	return i < in->nframes ? i + 1 : i;
}

static uint32_t count_segments(const struct tb_merge_in *in)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < in->nframes; i = segment_end(in, i))
		n++;
	return n;
}

static uint32_t put(struct tb_merge_item *out, uint32_t n, uint8_t kind, uint32_t index)
{
	out[n] = (struct tb_merge_item){ kind, (uint16_t)index };
	return n + 1;
}

static uint32_t put_python(const struct tb_merge_in *in, struct tb_merge_item *out, uint32_t n,
			   uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to && i < in->nframes; i++)
		n = put(out, n, TB_MI_PYTHON, i);
	return n;
}

/* Native frames, then a marker, then the Python frames: the order of the
 * Python frames is kept, and they stay at the root. */
static uint32_t unmerged(const struct tb_merge_in *in, struct tb_merge_item *out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < in->nwords; i++)
		n = put(out, n, TB_MI_NATIVE, i);
	n = put(out, n, TB_MI_UNMERGED, 0);
	return put_python(in, out, n, 0, in->nframes);
}

uint32_t tb_merge(const struct tb_merge_in *in, struct tb_merge_item *out, enum tb_merge_verdict *verdict)
{
	uint32_t evals = 0, segs = count_segments(in), skip = 0, seg = 0, from = 0, n = 0, used;
	int complete = in->stop == TB_NS_DONE;

	for (uint32_t i = 0; i < in->nwords; i++)
		evals += (in->words[i] & TB_NF_EVAL) != 0;
	if (!in->nwords && in->stop == TB_NS_NONE) {
		*verdict = TB_MV_PYTHON_ONLY;
		return put_python(in, out, 0, 0, in->nframes);
	}
	if (!segs) {
		*verdict = TB_MV_NATIVE_ONLY;
		for (uint32_t i = 0; i < in->nwords; i++)
			n = put(out, n, TB_MI_NATIVE, i);
		return n;
	}
	*verdict = TB_MV_MERGED;
	if (evals == segs + 1 && !in->python_truncated) {
		skip = 1;
		*verdict = TB_MV_TOLERATED;
	}
	used = evals - skip;
	if ((used > segs && !in->python_truncated) || (used < segs && complete)) {
		*verdict = TB_MV_UNMERGED;
		return unmerged(in, out);
	}
	for (uint32_t i = 0; i < in->nwords; i++) {
		if (!(in->words[i] & TB_NF_EVAL) || seg == segs) {
			n = put(out, n, TB_MI_NATIVE, i);
			continue;
		}
		if (skip) {           /* the innermost evaluator, without a frame */
			skip = 0;
			continue;
		}
		uint32_t to = segment_end(in, from);

		n = put_python(in, out, n, from, to);
		from = to;
		seg++;
	}
	if (seg < segs) {
		*verdict = TB_MV_TRUNCATED;
		n = put(out, n, TB_MI_TRUNCATED, 0);
		n = put_python(in, out, n, from, in->nframes);
	}
	return n;
}

/* ---- native functions as code entries ---- */

void tb_native_codes_free(struct tb_native_codes *c)
{
	free(c->keys);
	tb_hmap_free(&c->index);
	c->keys = NULL;
	c->nkeys = c->capkeys = 0;
}

void tb_native_count(struct tb_native_codes *c, uint32_t stop, uint32_t nwords, enum tb_merge_verdict v)
{
	c->stats.samples++;
	c->stats.words += nwords;
	c->stats.verdicts[v < TB_MV_MAX ? v : TB_MV_UNMERGED]++;
	c->stats.stops[stop < TB_NS_MAX ? stop : TB_NS_NONE]++;
}

/* The key of (file, start): its code entry, named name (or module+0xSTART),
 * made on first sight; whether it is plumbing (on the list pl) is decided
 * then too: the file and its version do not change. */
static struct tb_native_key *native_key(struct tb_native_codes *c, struct tb_symbolizer *sym, uint64_t file_id,
					uint64_t start, const char *name, const char *module,
					const struct tb_plumbing *pl)
{
	struct tb_native_key key = { file_id, start, 0, 0 };
	uint32_t i = tb_hmap_intern_key(&c->index, c->keys, sizeof(*c->keys), &key, 2 * sizeof(uint64_t),
					c->nkeys);
	char text[TB_NSYM_MAX_NAME + TB_NSYM_MODULE + 24];

	if (i < c->nkeys)
		return &c->keys[i];
	if (name)
		snprintf(text, sizeof(text), "%s", name);
	else
		snprintf(text, sizeof(text), "%s+0x%llx", module, (unsigned long long)start);
	/* pid 0, and an address no code object has (the key is file and start) */
	key.code = tb_sym_insert(sym, 0, (1ull << 63) | c->nkeys, 0, 0, text, module, 0, NULL, 0);
	key.plumbing = (uint32_t)tb_plumbing_has(pl, name);
	sym->codes[key.code].kind = TB_CODE_NATIVE;
	c->keys = tb_grow(c->keys, &c->capkeys, c->nkeys + 1, sizeof(*c->keys), 256);
	c->keys[c->nkeys++] = key;
	return &c->keys[c->nkeys - 1];
}

int64_t tb_native_code(struct tb_native_codes *c, struct tb_symbolizer *sym, uint32_t pid, uint64_t w,
		       unsigned py_minor, int32_t *offset)
{
	uint64_t pc = w & TB_NF_PC_MASK, key, start;
	const struct tb_native_key *k;
	struct tb_native_place at;
	const char *name = NULL;
	int64_t off;

	if (!c->resolver || c->resolver->find(c->resolver->ctx, pid, pc, &at)) {
		c->stats.unknown++;
		*offset = -2;
		return native_key(c, sym, 0, 0, "[unknown]", "[unknown]", NULL)->code;
	}
	/* a return address is symbolized at its call */
	key = at.vaddr - ((w & TB_NF_RA) ? 1 : 0);
	if (at.syms) {
		name = tb_nsym_lookup(at.syms, key, &start);
	} else {                  /* still loading: one node for the file */
		name = at.module;
		start = 0;
	}
	/* plumbing: a named function of the evaluator's file on its version's list */
	k = native_key(c, sym, at.file_id, start, name, at.module,
		       at.interp && at.syms ? tb_plumbing_of(py_minor) : NULL);
	if (k->plumbing && !c->show_all) {
		c->stats.hidden++;
		return -1;
	}
	off = (int64_t)(at.vaddr - start);
	*offset = off >= 0 && off <= INT32_MAX ? (int32_t)off : -2;
	c->stats.frames++;
	return k->code;
}
