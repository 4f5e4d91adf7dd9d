/* test_nativesym.c: a file's function names (proc/nativesym.c) from a
 * hand-made .symtab: which of the aliases at one start is kept, by perf's
 * rule (tools/perf/util/symbol.c choose_best_symbol): a symbol with a size
 * before one without, global before local before weak, the fewest leading
 * underscores, the longest name, then the first in the table (an LTO build
 * has several PyUnicode_READ_CHAR.lto_priv.N.lto_priv.0 at one address, of
 * one length: perf shows the first, whatever the byte order says). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <gelf.h>
#include "proc/nativesym.h"
#include "elf_image.h"

struct want_sym {
	const char *name;
	uint64_t start, size;
	unsigned char bind;
};

static uint8_t image[1 << 16];

/* f: the names of a file whose .symtab holds syms[0..n), in that order. */
static void load(const struct want_sym *syms, int n, struct tb_nsym_file *f)
{
	Elf64_Sym tab[32];
	char strtab[1024] = "";
	size_t slen = 1, len;
	struct sec s[2];
	char err[256] = "";
	Elf *elf;

	assert_true(n < 31);
	memset(tab, 0, sizeof(tab));
	for (int i = 0; i < n; i++) {
		size_t l = strlen(syms[i].name) + 1;

		assert_true(slen + l <= sizeof(strtab));
		memcpy(strtab + slen, syms[i].name, l);
		tab[i + 1] = (Elf64_Sym){ .st_name = (Elf64_Word)slen,
					  .st_info = ELF64_ST_INFO(syms[i].bind, STT_FUNC), .st_shndx = 1,
					  .st_value = syms[i].start, .st_size = syms[i].size };
		slen += l;
	}
	s[0] = (struct sec){ ".symtab", SHT_SYMTAB, 0, tab, (size_t)(n + 1) * sizeof(*tab), 2, sizeof(*tab) };
	s[1] = (struct sec){ ".strtab", SHT_STRTAB, 0, strtab, slen, 0, 0 };
	len = make_elf(image, sizeof(image), s, 2, EM_X86_64);
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)image, len);
	assert_non_null(elf);
	assert_int_equal(tb_nsym_load(elf, NULL, 0, "test.so", f, err, sizeof(err)), 0);
	elf_end(elf);
	assert_int_equal(f->source, TB_NSYM_SYMTAB);
}

static void assert_name_at(const struct tb_nsym_file *f, uint64_t addr, const char *want)
{
	uint64_t start = 0;
	const char *name = tb_nsym_lookup(f, addr, &start);

	assert_non_null(name);
	assert_string_equal(name, want);
	assert_true(start == (addr & ~(uint64_t)0xff));
}

static void test_aliases_as_perf(void **state)
{
	static const struct want_sym syms[] = {
		/* one length, one binding: the first in the table, not the first in byte order */
		{ "READ_CHAR.lto_priv.7.lto_priv.0", 0x1000, 48, STB_LOCAL },
		{ "READ_CHAR.lto_priv.8.lto_priv.0", 0x1000, 48, STB_LOCAL },
		{ "READ_CHAR.lto_priv.1.lto_priv.0", 0x1000, 48, STB_LOCAL },
		/* global before local before weak, whatever the length */
		{ "a_weak_one_long", 0x2000, 16, STB_WEAK },
		{ "a_local_long", 0x2000, 16, STB_LOCAL },
		{ "glob", 0x2000, 16, STB_GLOBAL },
		{ "b_weak_long_name", 0x2100, 16, STB_WEAK },
		{ "b_local", 0x2100, 16, STB_LOCAL },
		/* the fewest leading underscores, then the longest */
		{ "__memcpy_avx", 0x3000, 16, STB_GLOBAL },
		{ "memcpy", 0x3000, 16, STB_GLOBAL },
		{ "_memcpy_x", 0x3000, 16, STB_GLOBAL },
		{ "short", 0x3100, 16, STB_GLOBAL },
		{ "longer", 0x3100, 16, STB_GLOBAL },
		/* a size before none */
		{ "no_size_but_long", 0x4000, 0, STB_GLOBAL },
		{ "sized", 0x4000, 8, STB_GLOBAL },
	};
	struct tb_nsym_file f;

	(void)state;
	load(syms, (int)(sizeof(syms) / sizeof(*syms)), &f);
	assert_int_equal(f.nsyms, 6);
	assert_name_at(&f, 0x1010, "READ_CHAR.lto_priv.7.lto_priv.0");
	assert_name_at(&f, 0x2008, "glob");
	assert_name_at(&f, 0x2108, "b_local");
	assert_name_at(&f, 0x3004, "memcpy");
	assert_name_at(&f, 0x3104, "longer");
	assert_name_at(&f, 0x4004, "sized");
	tb_nsym_free(&f);
}

/* The first in the table wins wherever it stands among many (the sort is not stable). */
static void test_first_of_many(void **state)
{
	static char names[24][16];
	struct want_sym syms[24];
	struct tb_nsym_file f;

	(void)state;
	for (int i = 0; i < 24; i++) {
		snprintf(names[i], sizeof(names[i]), "alias_%02d", (i * 7 + 5) % 24);
		syms[i] = (struct want_sym){ names[i], 0x5000, 32, STB_LOCAL };
	}
	load(syms, 24, &f);
	assert_int_equal(f.nsyms, 1);
	assert_name_at(&f, 0x5000, names[0]);
	tb_nsym_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aliases_as_perf),
		cmocka_unit_test(test_first_of_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
