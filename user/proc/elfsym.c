/* elfsym.c: symbol, section and version-string lookups in ELF files with
 * libelf, bounded so that a hostile or truncated file cannot run away.
 * The file is read with pread (ELF_C_READ), never mapped: a file that
 * shrinks under the reader gives a read error, not SIGBUS, and only the
 * sections looked at are read, each at most TB_ELF_MAX_SECTION bytes. */
#define _GNU_SOURCE
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "proc/elfsym.h"

#define MAX_SYMBOLS (4u << 20)

int tb_elf_open_fd(int fd, struct tb_elf *e)
{
	size_t nphdr = 0;

	memset(e, 0, sizeof(*e));
	e->fd = fd;
	if (fd < 0)
		return -1;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return -1;
	}
	e->elf = elf_begin(e->fd, ELF_C_READ, NULL);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || elf_getphdrnum(e->elf, &nphdr)) {
		tb_elf_close(e);
		return -1;
	}
	for (size_t i = 0; i < nphdr && i < 256; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e->elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			e->first_load_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
			break;
		}
	}
	return 0;
}

void tb_elf_close(struct tb_elf *e)
{
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	e->elf = NULL;
	e->fd = -1;
}

/* Is section i there and small enough to be read whole? */
static int readable(Elf *elf, size_t i)
{
	Elf_Scn *scn = elf_getscn(elf, i);
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && sh.sh_size <= TB_ELF_MAX_SECTION;
}

Elf_Data *tb_elf_data(Elf *elf, Elf_Scn *scn)
{
	return readable(elf, elf_ndxscn(scn)) ? elf_getdata(scn, NULL) : NULL;
}

static int find_in_symtab(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, const char *name,
			  uint64_t *value, uint64_t *size)
{
	Elf_Data *data;
	size_t n;

	/* the symbols and their names (elf_strptr reads sh_link whole) */
	if (!sh->sh_entsize || !readable(elf, sh->sh_link) || !(data = tb_elf_data(elf, scn)))
		return -1;
	n = sh->sh_size / sh->sh_entsize;
	if (n > MAX_SYMBOLS)
		n = MAX_SYMBOLS;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *s;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		s = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (s && strcmp(s, name) == 0) {
			*value = sym.st_value;
			if (size)
				*size = sym.st_size;
			return 0;
		}
	}
	return -1;
}

int tb_elf_symbol(struct tb_elf *e, const char *name, uint64_t *value, uint64_t *size)
{
	static const Elf64_Word kinds[] = { SHT_DYNSYM, SHT_SYMTAB };

	for (size_t k = 0; k < 2; k++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(e->elf, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && sh.sh_type == kinds[k] &&
			    !find_in_symtab(e->elf, scn, &sh, name, value, size))
				return 0;
		}
	}
	return -1;
}

Elf_Scn *tb_elf_scn(Elf *elf, const char *name, GElf_Shdr *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) || !readable(elf, shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *s;

		if (!gelf_getshdr(scn, out))
			continue;
		s = elf_strptr(elf, shstrndx, out->sh_name);
		if (s && strcmp(s, name) == 0)
			return scn;
	}
	return NULL;
}

int tb_elf_section(struct tb_elf *e, const char *name, uint64_t *addr, uint64_t *size)
{
	GElf_Shdr sh;

	if (!tb_elf_scn(e->elf, name, &sh))
		return -1;
	*addr = sh.sh_addr;
	if (size)
		*size = sh.sh_size;
	return 0;
}

int tb_elf_find_version_string(struct tb_elf *e, unsigned minor_wanted, unsigned *micro)
{
	GElf_Shdr sh;
	Elf_Scn *scn = tb_elf_scn(e->elf, ".rodata", &sh);
	Elf_Data *data;
	const char *p, *end;
	char prefix[16];
	size_t plen;

	if (!scn || !(data = tb_elf_data(e->elf, scn)) || !data->d_buf)
		return -1;
	plen = (size_t)snprintf(prefix, sizeof(prefix), "3.%u.", minor_wanted);
	end = (const char *)data->d_buf + data->d_size;
	for (p = (const char *)data->d_buf + 1; p < end && (p = memmem(p, (size_t)(end - p), prefix, plen)); p++) {
		size_t j = plen;
		unsigned v = 0;

		/* PY_VERSION may be tail-merged into a longer literal
		 * ("Python-3.10.13"): accept any non-version character before it */
		if ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.')
			continue;
		while (j < plen + 3 && p + j < end && p[j] >= '0' && p[j] <= '9')
			v = v * 10 + (unsigned)(p[j++] - '0');
		/* exactly PY_VERSION: "3.10.13" followed by NUL (or '+' for dev builds) */
		if (j > plen && p + j < end && (p[j] == '\0' || p[j] == '+')) {
			*micro = v;
			return 0;
		}
	}
	return -1;
}

