/* elf_image.h: a hand-made ELF64 image in memory for the unit tests that read
 * ELF files (test_cfi.c's .eh_frame, test_nativesym.c's symbol tables):
 * sections only, no segments.  Header-only; include after <cmocka.h>. */
#ifndef TB_TEST_ELF_IMAGE_H
#define TB_TEST_ELF_IMAGE_H
#include <stdint.h>
#include <string.h>
#include <gelf.h>

struct sec {
	const char *name;
	uint32_t type;
	uint64_t addr;
	const void *data;
	size_t len;
	uint32_t link;    /* sh_link: 1 + the index in s[] of the linked section, or 0 */
	uint64_t entsize;
};

/* An ELF64 image (ET_DYN, machine, no segments) with sections s[0..n). */
static inline size_t make_elf(uint8_t *buf, size_t cap, const struct sec *s, int n, uint16_t machine)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Shdr sh[8];
	char names[256] = "\0.shstrtab";
	size_t off = sizeof(*eh), nlen = 11, name_off[8];

	assert_true(n < 6);
	memset(buf, 0, cap);
	memset(sh, 0, sizeof(sh));
	for (int i = 0; i < n; i++) {
		name_off[i] = nlen;
		strcpy(names + nlen, s[i].name);
		nlen += strlen(s[i].name) + 1;
		off = (off + 7) & ~(size_t)7;
		assert_true(off + s[i].len < cap);
		if (s[i].len)
			memcpy(buf + off, s[i].data, s[i].len);
		sh[i + 1] = (Elf64_Shdr){ .sh_name = (Elf64_Word)name_off[i], .sh_type = s[i].type,
					  .sh_flags = SHF_ALLOC, .sh_addr = s[i].addr, .sh_offset = off,
					  .sh_size = s[i].len, .sh_addralign = 8,
					  .sh_link = s[i].link, .sh_entsize = s[i].entsize };
		off += s[i].len;
	}
	sh[n + 1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = off,
				  .sh_size = nlen, .sh_addralign = 1 };
	memcpy(buf + off, names, nlen);
	off = (off + nlen + 7) & ~(size_t)7;
	assert_true(off + (size_t)(n + 2) * sizeof(Elf64_Shdr) < cap);
	memcpy(buf + off, sh, (size_t)(n + 2) * sizeof(Elf64_Shdr));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = machine;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shoff = off;
	eh->e_shnum = (Elf64_Half)(n + 2);
	eh->e_shstrndx = (Elf64_Half)(n + 1);
	return off + (size_t)(n + 2) * sizeof(Elf64_Shdr);
}

#endif
