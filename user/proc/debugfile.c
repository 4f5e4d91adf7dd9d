/* debugfile.c: finds and checks the separate debug file of an ELF file and
 * unpacks its MiniDebugInfo (docs/native-unwinding.md, "Names").  Every
 * name and size in the file is the target's: the debuglink must be a plain
 * file name, candidates are opened as the target would open them, a debug
 * file counts only if its build-id (or CRC32) matches, and decompression
 * stops at TB_DEBUG_MAX_MINI bytes. */
#define _GNU_SOURCE
#include <gelf.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "lib/mem.h"
#include "proc/debugfile.h"
#include "proc/elfsym.h"
#include "proc/targetfile.h"

#define NOTE_GNU "GNU"
#define CRC_CHUNK (256u << 10)

/* The NT_GNU_BUILD_ID note of a SHT_NOTE section's data, if any. */
static void build_id_of(Elf_Data *data, struct tb_debug_ids *ids)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while (data && off < data->d_size && (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > off) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof(NOTE_GNU) &&
		    !memcmp((const char *)data->d_buf + name_off, NOTE_GNU, sizeof(NOTE_GNU)) &&
		    nh.n_descsz && nh.n_descsz <= TB_DEBUG_MAX_BUILD_ID) {
			memcpy(ids->build_id, (const char *)data->d_buf + desc_off, nh.n_descsz);
			ids->build_id_len = nh.n_descsz;
			return;
		}
		off = next;
	}
}

/* .gnu_debuglink: a NUL-terminated plain file name, padded to 4, a CRC32. */
static void link_of(Elf_Data *data, struct tb_debug_ids *ids)
{
	const char *s;
	size_t len, at;

	if (!data || !data->d_buf)
		return;
	s = data->d_buf;
	len = strnlen(s, data->d_size);
	at = (len + 4) & ~(size_t)3;
	if (!len || len >= TB_DEBUG_MAX_LINK || at + 4 > data->d_size || strchr(s, '/') ||
	    !strcmp(s, ".") || !strcmp(s, ".."))
		return;
	memcpy(ids->link, s, len + 1);
	memcpy(&ids->crc, s + at, 4);
}

void tb_debug_ids_read(Elf *elf, struct tb_debug_ids *ids)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	memset(ids, 0, sizeof(*ids));
	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && sh.sh_entsize && sh.sh_size / sh.sh_entsize > 1)
			ids->has_symtab = 1;
		else if (sh.sh_type == SHT_NOTE && !ids->build_id_len)
			build_id_of(tb_elf_data(elf, scn), ids);
		else if (sh.sh_type == SHT_PROGBITS && (name = elf_strptr(elf, shstrndx, sh.sh_name))) {
			if (!strcmp(name, ".gnu_debuglink"))
				link_of(tb_elf_data(elf, scn), ids);
			else if (!strcmp(name, ".gnu_debugdata"))
				ids->has_minidebug = 1;
		}
	}
}

/* dir of path, without the trailing slash ("" for "/x"); 0 if there is none. */
static int dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (path[0] != '/' || !slash || (size_t)(slash - path) >= len)
		return 0;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return 1;
}

uint32_t tb_debug_candidates(const char *path, const struct tb_debug_ids *ids,
			     char out[TB_DEBUG_MAX_CANDIDATES][PATH_MAX])
{
	char dir[PATH_MAX];
	uint32_t n = 0;

	if (ids->build_id_len >= 2) {
		int at = snprintf(out[n], PATH_MAX, TB_DEBUG_DIR "/.build-id/%02x/", ids->build_id[0]);

		for (uint32_t i = 1; i < ids->build_id_len; i++)
			at += snprintf(out[n] + at, (size_t)(PATH_MAX - at), "%02x", ids->build_id[i]);
		snprintf(out[n] + at, (size_t)(PATH_MAX - at), ".debug");
		n++;
	}
	if (ids->link[0] && dir_of(path, dir, sizeof(dir))) {
		static const char *const forms[] = { "%s/%s", "%s/.debug/%s", TB_DEBUG_DIR "%s/%s" };

		for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
			int len = snprintf(out[n], PATH_MAX, forms[i], dir, ids->link);

			if (len > 0 && len < PATH_MAX)
				n++;
		}
	}
	return n;
}

int tb_debug_open(pid_t pid, const char *path, const struct tb_debug_ids *ids, uint64_t max_bytes)
{
	char cand[TB_DEBUG_MAX_CANDIDATES][PATH_MAX];
	const char *names[TB_DEBUG_MAX_CANDIDATES];
	uint32_t n = tb_debug_candidates(path, ids, cand);
	struct stat st;
	const char *why;

	_Static_assert(TB_DEBUG_MAX_CANDIDATES <= TB_TF_MAX_ALT + 1, "one helper tries them all");
	for (uint32_t i = 0; i < n; i++)
		names[i] = cand[i];
	return n ? tb_target_open_any(pid, names, n, max_bytes, &st, &why) : -1;
}

static int crc_matches(int fd, uint32_t want, uint64_t max_bytes)
{
	unsigned char *buf = tb_calloc(1, CRC_CHUNK);
	uLong crc = crc32(0, Z_NULL, 0);
	uint64_t total = 0;
	ssize_t got;

	while ((got = pread(fd, buf, CRC_CHUNK, (off_t)total)) > 0 && total <= max_bytes) {
		crc = crc32(crc, buf, (uInt)got);
		total += (uint64_t)got;
	}
	free(buf);
	return got == 0 && total <= max_bytes && (uint32_t)crc == want;
}

int tb_debug_matches(Elf *debug, int fd, const struct tb_debug_ids *ids, uint64_t max_bytes)
{
	struct tb_debug_ids dids;

	if (!debug || elf_kind(debug) != ELF_K_ELF)
		return 0;
	tb_debug_ids_read(debug, &dids);
	if (ids->build_id_len && dids.build_id_len)
		return ids->build_id_len == dids.build_id_len &&
		       !memcmp(ids->build_id, dids.build_id, ids->build_id_len);
	return ids->link[0] && crc_matches(fd, ids->crc, max_bytes);
}

Elf *tb_debug_minidebug(Elf *elf, char **buf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = tb_elf_scn(elf, ".gnu_debugdata", &sh);
	Elf_Data *data;
	lzma_stream strm = LZMA_STREAM_INIT;
	uint64_t cap = 0;
	lzma_ret rc;
	Elf *mini = NULL;

	*buf = NULL;
	if (!scn || sh.sh_type != SHT_PROGBITS || !(data = tb_elf_data(elf, scn)) || !data->d_buf ||
	    lzma_stream_decoder(&strm, 256u << 20, 0) != LZMA_OK)
		return NULL;
	*buf = tb_grow64(NULL, &cap, 1u << 20, 1, 1u << 20);
	strm.next_in = data->d_buf;
	strm.avail_in = data->d_size;
	strm.next_out = (uint8_t *)*buf;
	strm.avail_out = cap;
	while ((rc = lzma_code(&strm, LZMA_FINISH)) == LZMA_OK && !strm.avail_out) {
		uint64_t used = cap;

		if (cap >= TB_DEBUG_MAX_MINI)
			break;                    /* too large: a bomb, or not MiniDebugInfo */
		*buf = tb_grow64(*buf, &cap, cap * 2, 1, 1u << 20);
		strm.next_out = (uint8_t *)*buf + used;
		strm.avail_out = cap - used;
	}
	lzma_end(&strm);
	if (rc != LZMA_STREAM_END || !(mini = elf_memory(*buf, strm.total_out)) || elf_kind(mini) != ELF_K_ELF) {
		if (rc == LZMA_STREAM_END && mini)
			elf_end(mini);
		free(*buf);
		*buf = NULL;
		return NULL;
	}
	return mini;
}
