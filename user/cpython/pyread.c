/* pyread.c: reads str and bytes objects out of a target process, trusting
 * nothing: lengths are capped, kinds checked, code points validated. */
#include <stdlib.h>
#include <string.h>
#include "lib/utf8.h"
#include "proc/procmem.h"
#include "cpython/pyread.h"

int tb_read_pystr(pid_t pid, const struct tb_layout *l, uint64_t addr, char *out, size_t outlen)
{
	unsigned char hdr[TB_STR_HEAD_MAX], *data;
	uint64_t length, data_addr;
	uint32_t state, kind;
	size_t pos = 0, hsize = tb_layout_read_size(l, TB_READ_STR);

	if (!outlen)
		return -1;
	out[0] = '\0';
	/* length, state and the legacy data pointer lie within hsize <= sizeof(hdr) */
	if (!hsize || tb_mem_read(pid, addr, hdr, hsize))
		return -1;
	memcpy(&length, hdr + l->unicode_length, sizeof(length));
	memcpy(&state, hdr + l->unicode_state, sizeof(state));
	kind = (state >> l->unicode_kind_shift) & 7;
	if (kind != 1 && kind != 2 && kind != 4)
		return -1;
	if (length > TB_MAX_NAME_CHARS)
		length = TB_MAX_NAME_CHARS;
	if ((state >> l->unicode_compact_bit) & 1)
		data_addr = addr + (((state >> l->unicode_ascii_bit) & 1) ?
				    l->unicode_ascii_data : l->unicode_compact_data);
	else /* legacy: data pointer stored after the compact header */
		memcpy(&data_addr, hdr + l->unicode_compact_data, sizeof(data_addr));
	if (length == 0)
		return 0;
	data = malloc(length * kind);
	if (!data)
		return -1;
	if (tb_mem_read(pid, data_addr, data, length * kind)) {
		free(data);
		return -1;
	}
	for (uint64_t i = 0; i < length; i++) {
		unsigned char utf8[4];
		uint32_t cp;
		int n;

		if (kind == 1)
			cp = data[i];
		else if (kind == 2)
			cp = (uint32_t)data[2 * i] | (uint32_t)data[2 * i + 1] << 8;
		else
			memcpy(&cp, data + 4 * i, 4);
		n = tb_utf8_encode(cp, utf8);
		if (pos + (size_t)n >= outlen)
			break; /* truncated at a whole character */
		memcpy(out + pos, utf8, (size_t)n);
		pos += (size_t)n;
	}
	out[pos] = '\0';
	free(data);
	return 0;
}

int tb_read_pybytes(pid_t pid, const struct tb_layout *l, uint64_t addr, size_t max, struct tb_buf *out)
{
	int64_t size;

	out->n = 0;
	if (tb_mem_read(pid, addr + l->bytes_size, &size, sizeof(size)) || size < 0 ||
	    (uint64_t)size > max)
		return -1;
	if (tb_mem_read(pid, addr + l->bytes_sval, tb_buf_room(out, (size_t)size), (size_t)size)) {
		out->n = 0;
		return -1;
	}
	return 0;
}
