/* a64rows.c: unwind rows read from arm64 (A64) code itself, for code that
 * has no CFI: the kernel's arm64 vDSO (built without .eh_frame; its
 * functions are leaves that never move sp, or frame-record functions such as
 * __kernel_getrandom).  One function's instructions are followed in order:
 *   stp x29, x30, [sp, #-N]!   CFA = sp + N, the frame record at its bottom
 *   sub sp, sp, #M             CFA = sp + N + M (the record then M above sp)
 *   add sp, sp, #M             the reverse
 *   ldp x29, x30, [sp], #N     back to the entry rule (CFA = sp, ra in x30);
 *                              after the ret that follows, the body's rule again
 *                              (code after a mid-function ret is the body's)
 * and any other write to sp, x29 or x30 makes the rest of the function
 * INVALID: the walk stops there rather than guess. */
#include "proc/a64rows.h"

enum state { AT_ENTRY, IN_FRAME, UNKNOWN };

struct frame {
	enum state state;
	uint32_t cfa;        /* CFA = sp + cfa */
	uint32_t record;     /* IN_FRAME: the record at CFA - record */
};

static uint32_t insn_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The row of frame f. */
static struct tb_urow row_of(const struct frame *f)
{
	struct tb_urow r = { 0, 0, TB_UK_INVALID, 0 };

	if (f->state == AT_ENTRY)
		return (struct tb_urow){ 0, 0, TB_UK_RSP | TB_URA_LR << TB_URA_SHIFT, 0 };
	if (f->state != IN_FRAME || f->cfa % 8 || f->cfa / 8 > UINT16_MAX || f->record % 8)
		return r;
	r.kind = TB_UK_RSP | TB_URA_RECORD << TB_URA_SHIFT;
	r.cfa8 = (uint16_t)(f->cfa / 8);
	if (f->record <= 1024 && f->record != f->cfa)
		r.rbp8 = (int8_t)-(int)(f->record / 8);  /* at CFA - record */
	else if (f->cfa - f->record <= 8 * 127)
		r.rbp8 = (int8_t)((f->cfa - f->record) / 8); /* that far above the frame's bottom */
	else
		r.kind = TB_UK_INVALID;
	return r;
}

static int is_call(uint32_t insn)
{
	return (insn & 0xfc000000) == 0x94000000 || (insn & 0xfffffc1f) == 0xd63f0000; /* bl, blr */
}

/* Does insn write x29, x30 or sp (in a way step does not follow)?  Only the
 * classes that can: data processing (immediate: add/sub without flags and
 * logical ops name sp as 31; register: extended add/sub), loads and the
 * writeback forms of loads and stores (pairs name two registers), calls. */
static int writes_frame_regs(uint32_t insn)
{
	unsigned rd = insn & 0x1f, rt2 = (insn >> 10) & 0x1f, rn = (insn >> 5) & 0x1f;
	uint32_t op0 = (insn >> 25) & 0xf;

	if ((op0 & 0xe) == 0x8) {                        /* data processing, immediate */
		uint32_t cls = (insn >> 23) & 0x3f;

		if (rd == 29 || rd == 30)
			return 1;
		return rd == 31 && ((cls == 0x22 && !((insn >> 29) & 1)) ||      /* add/sub, not adds/subs */
				    (cls == 0x24 && ((insn >> 29) & 3) != 3));    /* and/orr/eor, not ands */
	}
	if ((op0 & 0x7) == 0x5)                          /* data processing, register */
		return rd == 29 || rd == 30 ||
		       (rd == 31 && (insn & 0x1f200000) == 0x0b200000 && !((insn >> 29) & 1));
	if ((op0 & 0x5) == 0x4) {                        /* loads and stores */
		int pair = ((insn >> 27) & 0x7) == 0x5, simd = (insn >> 26) & 1;
		int single = ((insn >> 27) & 0x7) == 0x7 && ((insn >> 24) & 0x3) == 0 && !((insn >> 21) & 1);
		int writeback = pair ? ((insn >> 23) & 0x3) == 0x1 || ((insn >> 23) & 0x3) == 0x3 :
				single && ((insn >> 10) & 0x1);
		int load = pair ? (insn >> 22) & 1 : ((insn >> 22) & 3) != 0;

		if (writeback && rn == 31)
			return 1;
		return !simd && load && (rd == 29 || rd == 30 || (pair && (rt2 == 29 || rt2 == 30)));
	}
	return is_call(insn);
}

/* One instruction: f after it (saved: the body's frame across an epilogue). */
static void step(uint32_t insn, struct frame *f, struct frame *saved)
{
	int64_t imm7 = (int64_t)((insn >> 15) & 0x7f) << 57 >> 57;  /* sign-extended */
	uint32_t imm12 = ((insn >> 10) & 0xfff) << ((insn >> 22) & 1 ? 12 : 0);

	if ((insn & 0xffc07fff) == 0xa9807bfd && imm7 < 0 && f->state == AT_ENTRY) {
		f->state = IN_FRAME;                     /* stp x29, x30, [sp, #-N]! */
		f->cfa = f->record = (uint32_t)(-imm7 * 8);
	} else if ((insn & 0xffc07fff) == 0xa8c07bfd && f->state == IN_FRAME &&
		   imm7 * 8 == (int64_t)f->cfa && f->record == f->cfa) {
		*saved = *f;                             /* ldp x29, x30, [sp], #N */
		*f = (struct frame){ AT_ENTRY, 0, 0 };
	} else if ((insn & 0xff8003ff) == 0xd10003ff && f->state == IN_FRAME) {
		f->cfa += imm12;                         /* sub sp, sp, #M */
	} else if ((insn & 0xff8003ff) == 0x910003ff && f->state == IN_FRAME && imm12 < f->cfa &&
		   f->cfa - imm12 >= f->record) {
		f->cfa -= imm12;                         /* add sp, sp, #M */
	} else if (insn == 0xd65f03c0 || insn == 0xd65f0bff) {
		if (saved->state != UNKNOWN)             /* ret (retaa): the body's rule after it */
			*f = *saved;
	} else if (insn == 0x910003fd) {
		/* mov x29, sp: the record is at x29; the CFA stays sp-based */
	} else if (writes_frame_regs(insn) && !(is_call(insn) && f->state == IN_FRAME)) {
		f->state = UNKNOWN;                      /* (a call after the record: x30 is saved) */
	}
}

void tb_a64_rows(const uint8_t *code, uint64_t lo, uint64_t hi,
		 void (*emit)(void *ctx, uint64_t addr, struct tb_urow r), void *ctx)
{
	struct frame f = { AT_ENTRY, 0, 0 }, saved = { UNKNOWN, 0, 0 };

	for (uint64_t a = lo; a + 4 <= hi; a += 4) {
		emit(ctx, a, row_of(&f));
		step(insn_at(code + (a - lo)), &f, &saved);
	}
}
