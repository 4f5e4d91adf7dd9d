/* fuzz_capture.c: libFuzzer harness for the capture reader.  An input that
 * starts with the capture magic is read as a whole file; any other input is
 * a format version byte and a decompressed payload, wrapped in a valid
 * header of that version and a zlib stream first, so that mutations reach
 * the payload parser (of versions 1 and 2) instead of stopping at the zlib
 * checksum.  Every profile that reads is written by
 * every row of the format table (output/format.c, so a new format is fuzzed
 * without a change here), and by every diff writer against itself and
 * against an empty profile (both ways).  Build and run: tests/fuzz/run.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "output/diff.h"
#include "output/format.h"
#include "output/tbp.h"

static void put_le(unsigned char *d, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		d[i] = (unsigned char)(v >> (8 * i));
}

/* header of this version + compress(payload), or NULL */
static unsigned char *wrap(unsigned version, const uint8_t *pay, size_t n, size_t *len)
{
	uLongf zlen = compressBound(n);
	unsigned char *b = malloc(TB_CAP_HEADER_SIZE + zlen);

	if (!b || compress2(b + TB_CAP_HEADER_SIZE, &zlen, pay, n, 1) != Z_OK) {
		free(b);
		return NULL;
	}
	memcpy(b, TB_CAP_MAGIC, TB_CAP_MAGIC_LEN);
	put_le(b + 8, version, 2);
	put_le(b + 10, TB_CAP_FLAG_ZLIB, 2);
	put_le(b + 12, 0, 4);
	put_le(b + 16, n, 8);
	put_le(b + 24, zlen, 8);
	*len = TB_CAP_HEADER_SIZE + zlen;
	return b;
}

static void write_all(const struct tb_profile *p, FILE *null)
{
	static const struct tb_diff_opts opts = { 0.15, 0.001 };
	static struct tb_profile empty;
	static int have_empty;
	const struct tb_format *fm;

	if (!have_empty) {
		tb_profile_init(&empty);
		have_empty = 1;
	}
	for (size_t i = 0; (fm = tb_format_at(i)); i++) {
		fm->write(p, null);
		if (fm->write_diff) {
			fm->write_diff(p, p, &opts, null);
			fm->write_diff(p, &empty, &opts, null);
			fm->write_diff(&empty, p, &opts, null);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct tb_profile p;
	char err[512];
	unsigned char *file = NULL;
	size_t len = size;

	if (!null)
		null = fopen("/dev/null", "w");
	if (!(size >= TB_CAP_MAGIC_LEN && memcmp(data, TB_CAP_MAGIC, TB_CAP_MAGIC_LEN) == 0)) {
		if (!size)
			return 0;
		file = wrap(data[0], data + 1, size - 1, &len);
		if (!file)
			return 0;
	}
	if (tb_read_capture_mem(file ? file : data, len, &p, err, sizeof(err)) == 0) {
		write_all(&p, null);
		tb_profile_free(&p);
	} else if (!err[0] || strchr(err, '\n')) {
		abort(); /* errors are one sentence */
	}
	free(file);
	return 0;
}
