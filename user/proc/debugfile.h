/* debugfile.h: where the symbols a file was stripped of are, the way gdb
 * and perf find them: its separate debug file (by the NT_GNU_BUILD_ID note
 * under /usr/lib/debug/.build-id/, or by .gnu_debuglink next to it, in its
 * .debug/ and under /usr/lib/debug/), checked to be the file's own, and
 * its MiniDebugInfo (.gnu_debugdata: an xz-compressed ELF with a .symtab). */
#ifndef TB_DEBUGFILE_H
#define TB_DEBUGFILE_H
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <libelf.h>

#define TB_DEBUG_MAX_BUILD_ID 64        /* build-id bytes kept (20 in practice) */
#define TB_DEBUG_MAX_LINK 256           /* a debuglink name longer than this is ignored */
#define TB_DEBUG_MAX_CANDIDATES 4
#define TB_DEBUG_MAX_MINI (64u << 20)   /* MiniDebugInfo decompressed, at most (else not used) */
#define TB_DEBUG_DIR "/usr/lib/debug"

struct tb_debug_ids {
	uint8_t build_id[TB_DEBUG_MAX_BUILD_ID];
	uint32_t build_id_len;          /* 0: none */
	char link[TB_DEBUG_MAX_LINK];   /* .gnu_debuglink's file name ("": none or not a plain name) */
	uint32_t crc;                   /* its CRC32 of the debug file */
	int has_symtab;                 /* a .symtab with entries: nothing to look for */
	int has_minidebug;              /* a .gnu_debugdata section */
};

/* The file's build-id, debuglink and whether it has a .symtab (bounded:
 * sections of at most TB_ELF_MAX_SECTION, notes of one section each). */
void tb_debug_ids_read(Elf *elf, struct tb_debug_ids *ids);
/* The places to look for path's debug file (path: as the process names it,
 * absolute), in gdb's order: by build-id, then path's dir, dir/.debug/,
 * /usr/lib/debug/dir/ with the debuglink name.  How many written. */
uint32_t tb_debug_candidates(const char *path, const struct tb_debug_ids *ids,
			     char out[TB_DEBUG_MAX_CANDIDATES][PATH_MAX]);
/* Open the first candidate that process pid can read (as pid would:
 * proc/targetfile.h, inside its root; one helper tries them all) as a
 * regular file of at most max_bytes; the descriptor, or -1. */
int tb_debug_open(pid_t pid, const char *path, const struct tb_debug_ids *ids, uint64_t max_bytes);
/* Is debug (open on fd) the debug file of the file with ids: the same
 * build-id when both have one, else the debuglink's CRC32 of its bytes
 * (at most max_bytes read)?  1 yes, 0 no. */
int tb_debug_matches(Elf *debug, int fd, const struct tb_debug_ids *ids, uint64_t max_bytes);
/* The ELF image in elf's .gnu_debugdata, decompressed (at most
 * TB_DEBUG_MAX_MINI bytes, *buf malloc'd: free it after elf_end of the
 * returned Elf); NULL when there is none or it is not valid. */
Elf *tb_debug_minidebug(Elf *elf, char **buf);

#endif
