/* unwind_ref.c: the reference native unwinder (docs/native-unwinding.md),
 * written as the BPF program walks: one step per frame, a range search, a
 * row search, one rule, every step able to stop with a reason. */
#include "proc/procmem.h"
#include "proc/unwind_ref.h"

/* rt_sigframe at the trampoline's sp: ucontext's mcontext (struct
 * sigcontext) starts 40 bytes in, and holds rbp, rsp, rip at these offsets */
#define SIGFRAME_MCONTEXT 40
#define SIGCONTEXT_RBP 80
#define SIGCONTEXT_RSP 120
#define SIGCONTEXT_RIP 128
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

/* Leaves the frame at s by the caller's new cfa: the return address at
 * cfa-8, the caller's rbp at cfa+8*rbp8 (0: unchanged). */
static int leave(const struct tb_uw_walk *w, struct state *s, uint64_t cfa, int rbp8,
		 enum tb_uw_stop *stop)
{
	uint64_t ra;

	if (cfa <= s->sp) {
		*stop = TB_UW_NOT_INCREASING;
		return -1;
	}
	if (w->read(w->ctx, cfa - 8, &ra, sizeof(ra)) ||
	    (rbp8 && w->read(w->ctx, cfa + (uint64_t)(int64_t)(8 * rbp8), &s->bp, sizeof(s->bp)))) {
		*stop = TB_UW_READ;
		return -1;
	}
	s->sp = cfa;
	s->pc = ra;
	s->is_ra = 1;
	if (ra < MIN_RA) {
		*stop = TB_UW_DONE;
		return -1;
	}
	return 0;
}

/* The interrupted registers saved by the kernel in the signal frame. */
static int leave_signal(const struct tb_uw_walk *w, struct state *s, enum tb_uw_stop *stop)
{
	uint64_t mc = s->sp + SIGFRAME_MCONTEXT;

	if (w->read(w->ctx, mc + SIGCONTEXT_RBP, &s->bp, 8) ||
	    w->read(w->ctx, mc + SIGCONTEXT_RSP, &s->sp, 8) ||
	    w->read(w->ctx, mc + SIGCONTEXT_RIP, &s->pc, 8)) {
		*stop = TB_UW_READ;
		return -1;
	}
	s->is_ra = 0;             /* resumes at the exact pc; sp may jump (sigaltstack) */
	return 0;
}

/* A leaf (exact pc) left by frame pointer that is at its push rbp (or the
 * endbr64 before it), at mov rbp, rsp, or at a ret has no frame record of
 * its own: its CFA is sp + 8 (sp + 16 after the push), rbp the caller's.
 * 0 otherwise (or the code unreadable). */
static uint64_t prologue_cfa(const struct tb_uw_walk *w, const struct state *s)
{
	uint8_t c[4];

	if (w->read(w->ctx, s->pc, c, sizeof(c)))
		return 0;
	if (c[0] == 0x55 || c[0] == 0xc3 || (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa))
		return s->sp + 8;
	if (c[0] == 0x48 && ((c[1] == 0x89 && c[2] == 0xe5) || (c[1] == 0x8b && c[2] == 0xec)))
		return s->sp + 16;
	return 0;
}

uint32_t tb_unwind(const struct tb_uw_walk *w, const struct tb_uw_regs *regs,
		   struct tb_uw_frame *out, enum tb_uw_stop *stop)
{
	struct state s = { regs->ip, regs->sp, regs->bp, !!regs->ip_is_ra };
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
		int fp_file;

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
		if (fp_file && (!row || row->kind == TB_UK_INVALID)) {
			if (!w->fp_fallback) {
				*stop = TB_UW_NO_TABLE;
				return n;
			}
			out[n++] = (struct tb_uw_frame){ s.pc, flags | TB_UW_FP };
			/* a leaf in its prologue or at a ret: no frame record */
			if (!s.is_ra && (cfa = prologue_cfa(w, &s))) {
				if (leave(w, &s, cfa, 0, stop))
					return n;
				continue;
			}
			if (!s.bp) {      /* the outermost frame cleared rbp (_start) */
				*stop = TB_UW_DONE;
				return n;
			}
			/* the frame record at rbp: saved rbp, then the return address */
			if (leave(w, &s, s.bp + 16, -2, stop))
				return n;
			continue;
		}
		out[n++] = (struct tb_uw_frame){ s.pc, flags };
		switch (row ? row->kind : TB_UK_INVALID) {
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
			if (leave_signal(w, &s, stop))
				return n;
			continue;
		case TB_UK_STOP:
			*stop = TB_UW_DONE;
			return n;
		default:
			*stop = TB_UW_INVALID;
			return n;
		}
		if (leave(w, &s, cfa, row->rbp8, stop))
			return n;
	}
}
