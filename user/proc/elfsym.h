/* elfsym.h: the few things the agent needs from an ELF file (libelf, read
 * with pread: never mapped, so a file changing underneath cannot SIGBUS). */
#ifndef TB_ELFSYM_H
#define TB_ELFSYM_H
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>
#include <libelf.h>

#define TB_ELF_MAX_SECTION (64u << 20) /* larger sections are not read */

struct tb_elf {
	int fd;
	Elf *elf;
	uint64_t first_load_vaddr; /* page-aligned vaddr of the first PT_LOAD */
};

/* Read the ELF file open on fd (taken over: closed by tb_elf_close, or
 * here on failure). 0 ok; -1: not ELF or unreadable. */
int tb_elf_open_fd(int fd, struct tb_elf *e);
void tb_elf_close(struct tb_elf *e);
/* Look a symbol up in .dynsym, then .symtab. 0 when found. */
int tb_elf_symbol(struct tb_elf *e, const char *name, uint64_t *value, uint64_t *size);
/* Section address and size by name. 0 when found. */
int tb_elf_section(struct tb_elf *e, const char *name, uint64_t *addr, uint64_t *size);
/* The section named name (its header in *sh), or NULL. */
Elf_Scn *tb_elf_scn(Elf *elf, const char *name, GElf_Shdr *sh);
/* A section's data, read whole if at most TB_ELF_MAX_SECTION bytes; NULL. */
Elf_Data *tb_elf_data(Elf *elf, Elf_Scn *scn);
/* Find a "3.X.Y" PY_VERSION string in .rodata (for 3.10, which has no
 * Py_Version). Writes PY_VERSION_HEX-style major/minor/micro; 0 when found. */
int tb_elf_find_version_string(struct tb_elf *e, unsigned minor_wanted, unsigned *micro);

#endif
