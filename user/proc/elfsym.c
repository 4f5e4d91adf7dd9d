/* elfsym.c: symbol, section and version-string lookups in ELF files with
 * libelf, bounded so that a hostile or truncated file cannot run away. */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "proc/elfsym.h"

#define MAX_SYMBOLS (4u << 20)

int tb_elf_open(const char *path, struct tb_elf *e)
{
	return tb_elf_open_fd(open(path, O_RDONLY | O_CLOEXEC), e);
}

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
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
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

static int find_in_symtab(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, const char *name,
			  uint64_t *value, uint64_t *size)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || !sh->sh_entsize)
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

static Elf_Scn *section_by_name(struct tb_elf *e, const char *name, GElf_Shdr *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		const char *s;

		if (!gelf_getshdr(scn, out))
			continue;
		s = elf_strptr(e->elf, shstrndx, out->sh_name);
		if (s && strcmp(s, name) == 0)
			return scn;
	}
	return NULL;
}

int tb_elf_section(struct tb_elf *e, const char *name, uint64_t *addr, uint64_t *size)
{
	GElf_Shdr sh;

	if (!section_by_name(e, name, &sh))
		return -1;
	*addr = sh.sh_addr;
	if (size)
		*size = sh.sh_size;
	return 0;
}

int tb_elf_find_version_string(struct tb_elf *e, unsigned minor_wanted, unsigned *micro)
{
	GElf_Shdr sh;
	Elf_Scn *scn = section_by_name(e, ".rodata", &sh);
	Elf_Data *data;
	char prefix[16];
	size_t plen;

	if (!scn || !(data = elf_getdata(scn, NULL)) || !data->d_buf)
		return -1;
	plen = (size_t)snprintf(prefix, sizeof(prefix), "3.%u.", minor_wanted);
	for (size_t i = 1; i + plen + 2 < data->d_size; i++) {
		const char *p = (const char *)data->d_buf + i;
		size_t j = plen;
		unsigned v = 0;

		/* PY_VERSION may be tail-merged into a longer literal
		 * ("Python-3.10.13"): accept any non-version character before it */
		if ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.' || memcmp(p, prefix, plen))
			continue;
		while (j < plen + 3 && i + j < data->d_size && p[j] >= '0' && p[j] <= '9')
			v = v * 10 + (unsigned)(p[j++] - '0');
		/* exactly PY_VERSION: "3.10.13" followed by NUL (or '+' for dev builds) */
		if (j > plen && i + j < data->d_size && (p[j] == '\0' || p[j] == '+')) {
			*micro = v;
			return 0;
		}
	}
	return -1;
}

