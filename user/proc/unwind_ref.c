/* unwind_ref.c: the reference native unwinder (docs/native-unwinding.md),
 * written as the BPF program walks: one step per frame, a range search, a
 * row search, one rule, every step able to stop with a reason.  The
 * machine's facts (link register, signal frame, prologue instructions):
 * proc/cfi_arch.c. */
#include "proc/procmem.h"
#include "proc/unwind_ref.h"

/* a return address below this ends the walk (the thread's first frame) */
#define MIN_RA 0x1000

const char *const tb_uw_stop_names[TB_UW_NSTOP] = {
	[TB_UW_DONE] = "done", [TB_UW_DEPTH] = "depth", [TB_UW_UNKNOWN_MAP] = "unknown_map",
	[TB_UW_NO_TABLE] = "no_table", [TB_UW_INVALID] = "invalid", [TB_UW_READ] = "read",
	[TB_UW_NOT_INCREASING] = "not_increasing", [TB_UW_NO_REGS] = "no_regs",
};

int tb_uw_read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return tb_mem_read(*(const pid_t *)ctx, addr, buf, len);
}

struct state {
	uint64_t pc, sp, bp;
	int is_ra;
	uint64_t lr;
	int lr_ok;      /* lr is this frame's: the first, or one a signal frame resumes */
};

static const struct tb_uw_range *find_range(const struct tb_uw_walk *w, uint64_t pc)
{
	uint32_t i = tb_code_range_find(w->ranges, w->nranges, sizeof(*w->ranges), pc);

	return i < w->nranges ? &w->ranges[i] : NULL;
}

static int tagged(const struct tb_uw_file *f, uint64_t key)
{
	for (uint32_t i = 0; f && i < f->ntags; i++)
		if (f->tags[i].lo <= key && key < f->tags[i].hi)
			return 1;
	return 0;
}

static int failed(enum tb_uw_stop *stop, enum tb_uw_stop why)
{
	*stop = why;
	return -1;
}

/* Leaves the frame at s by the caller's new cfa: the return address as ra
 * says (TB_URA_*: at cfa-8, in the link register, after the caller's fp in a
 * frame record, alone at cfa+8*rbp8), the caller's fp at cfa+8*rbp8 (0:
 * unchanged).  The link register is taken once (lr_ok), and sp may then stay. */
static int leave(const struct tb_uw_walk *w, const struct tb_cfi_arch *a, struct state *s,
		 uint64_t cfa, int rbp8, unsigned ra_rule, enum tb_uw_stop *stop)
{
	uint64_t ra, at = cfa + (uint64_t)(int64_t)(8 * rbp8);

	if (cfa < s->sp || (cfa == s->sp && ra_rule != TB_URA_LR))
		return failed(stop, TB_UW_NOT_INCREASING);
	switch (ra_rule) {
	case TB_URA_LR:
		if (!s->lr_ok)            /* a caller's link register is long overwritten */
			return failed(stop, TB_UW_INVALID);
		ra = s->lr;
		if (rbp8 && w->read(w->ctx, at, &s->bp, sizeof(s->bp)))
			return failed(stop, TB_UW_READ);
		break;
	case TB_URA_RECORD:
		if (w->read(w->ctx, at, &s->bp, sizeof(s->bp)) || w->read(w->ctx, at + 8, &ra, sizeof(ra)))
			return failed(stop, TB_UW_READ);
		break;
	case TB_URA_SAVED:
		if (w->read(w->ctx, at, &ra, sizeof(ra)))
			return failed(stop, TB_UW_READ);
		break;
	default:
		if (w->read(w->ctx, cfa - 8, &ra, sizeof(ra)) ||
		    (rbp8 && w->read(w->ctx, at, &s->bp, sizeof(s->bp))))
			return failed(stop, TB_UW_READ);
	}
	ra &= a->ra_mask;
	s->lr_ok = 0;
	s->sp = cfa;
	s->pc = ra;
	s->is_ra = 1;
	return ra < MIN_RA ? failed(stop, TB_UW_DONE) : 0;
}

/* The interrupted registers saved by the kernel in the signal frame. */
static int leave_signal(const struct tb_uw_walk *w, const struct tb_cfi_arch *a, struct state *s,
			enum tb_uw_stop *stop)
{
	uint64_t sp = s->sp;

	if (w->read(w->ctx, sp + a->sig_fp, &s->bp, 8) || w->read(w->ctx, sp + a->sig_sp, &s->sp, 8) ||
	    w->read(w->ctx, sp + a->sig_pc, &s->pc, 8) ||
	    (a->ra_in_register && w->read(w->ctx, sp + a->sig_lr, &s->lr, 8)))
		return failed(stop, TB_UW_READ);
	s->lr_ok = a->ra_in_register;
	s->is_ra = 0;             /* resumes at the exact pc; sp may jump (sigaltstack) */
	return 0;
}

/* A leaf (exact pc) left by frame pointer that is in its prologue or at a
 * ret has no frame record of its own (cfi_arch.c's fp_leaf): TB_LEAF_*, or
 * TB_LEAF_RECORD when the code is unreadable. */
static int leaf_rule(const struct tb_uw_walk *w, const struct tb_cfi_arch *a, const struct state *s)
{
	uint8_t c[4];

	return w->read(w->ctx, s->pc, c, sizeof(c)) ? TB_LEAF_RECORD : a->fp_leaf(c);
}

uint32_t tb_unwind(const struct tb_uw_walk *w, const struct tb_uw_regs *regs,
		   struct tb_uw_frame *out, enum tb_uw_stop *stop)
{
	const struct tb_cfi_arch *a = w->arch ? w->arch : tb_cfi_arch_host();
	struct state s = { regs->ip, regs->sp, regs->bp, !!regs->ip_is_ra, regs->lr,
			   a->ra_in_register && regs->has_lr };
	uint32_t max = w->max_depth < TB_UW_MAX_DEPTH ? w->max_depth : TB_UW_MAX_DEPTH;
	uint32_t n = 0;

	*stop = TB_UW_NO_REGS;
	if (!s.pc || !s.sp)
		return 0;
	for (;;) {
		const struct tb_uw_range *r;
		const struct tb_uw_file *f;
		const struct tb_urow *row;
		uint64_t key, cfa;
		uint32_t flags = s.is_ra ? TB_UW_RA : 0;
		int fp_file, leaf;

		if (n == max) {
			*stop = TB_UW_DEPTH;
			return n;
		}
		if (!(r = find_range(w, s.pc))) {
			*stop = TB_UW_UNKNOWN_MAP;
			return n;
		}
		key = s.pc - r->bias - (uint64_t)s.is_ra;
		f = r->file;
		if (tagged(f, key))
			flags |= TB_UW_TAG;
		fp_file = !f || !f->nrows || (f->flags & TB_CFI_FP_ONLY);
		/* a FP_ONLY file's leaf (exact pc: maybe before push rbp or after
		 * leave, rbp still or again the caller's) takes its row */
		row = f && f->nrows && !(fp_file && s.is_ra) ? tb_cfi_row(f->rows, f->nrows, f->base, key) : NULL;
		if (fp_file && (!row || TB_UROW_KIND(row) == TB_UK_INVALID)) {
			if (!w->fp_fallback) {
				*stop = TB_UW_NO_TABLE;
				return n;
			}
			out[n++] = (struct tb_uw_frame){ s.pc, flags | TB_UW_FP };
			/* a leaf in its prologue or at a ret: no frame record */
			leaf = s.is_ra ? TB_LEAF_RECORD : leaf_rule(w, a, &s);
			if (leaf != TB_LEAF_RECORD) {
				if (leaf == TB_LEAF_RECORD_AT_SP)
					s.bp = s.sp;
				else if (leave(w, a, &s, leaf == TB_LEAF_RA_AT_SP ? s.sp + 8 : s.sp, 0,
					       leaf == TB_LEAF_RA_AT_SP ? TB_URA_CFA8 : TB_URA_LR, stop))
					return n;
				else
					continue;
			}
			if (!s.bp) {      /* the outermost frame cleared rbp (_start) */
				*stop = TB_UW_DONE;
				return n;
			}
			/* the frame record at fp: saved fp, then the return address */
			if (leave(w, a, &s, s.bp + 16, -2, TB_URA_CFA8, stop))
				return n;
			continue;
		}
		out[n++] = (struct tb_uw_frame){ s.pc, flags };
		switch (row ? TB_UROW_KIND(row) : TB_UK_INVALID) {
		case TB_UK_RSP:
			cfa = s.sp + 8ull * row->cfa8;
			break;
		case TB_UK_RBP:
			cfa = s.bp + 8ull * row->cfa8;
			break;
		case TB_UK_PLT:
			cfa = s.sp + 8 + ((s.pc & 15) >= row->cfa8 ? 8 : 0);
			break;
		case TB_UK_SIGNAL:
			if (leave_signal(w, a, &s, stop))
				return n;
			continue;
		case TB_UK_STOP:
			*stop = TB_UW_DONE;
			return n;
		default:
			*stop = TB_UW_INVALID;
			return n;
		}
		/* a frame record 8*rbp8 above the frame's bottom (CFA - 8*cfa8) when rbp8 >= 0 */
		if (leave(w, a, &s, cfa,
			  TB_UROW_RA(row) == TB_URA_RECORD && row->rbp8 >= 0 ?
			  (int)row->rbp8 - (int)row->cfa8 : row->rbp8,
			  TB_UROW_RA(row), stop))
			return n;
	}
}
