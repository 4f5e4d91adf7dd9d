/* top_draw.h: one frame of tachyon-bpf top as ANSI text for a terminal of
 * a given size: status lines, the function table, the instruction panel. */
#ifndef TB_TOPDRAW_H
#define TB_TOPDRAW_H
#include <stddef.h>
#include <stdint.h>
#include "cmd/top_view.h"

struct tb_top_status {
	unsigned hz;
	uint64_t samples, lost;
	int opcodes;           /* show the instruction panel */
	int help;              /* show the key help line */
	const char *message;   /* shown instead of the hint line, or NULL */
};

struct tb_frame_buf {
	char *b;
	size_t n, cap;
};

/* Draw the whole screen (rows x cols) into fb (reset first); no line is
 * longer than cols columns and nothing wraps or scrolls. */
void tb_top_draw(struct tb_topview *v, const struct tb_top_status *st, int rows, int cols,
		 struct tb_frame_buf *fb);

#endif
