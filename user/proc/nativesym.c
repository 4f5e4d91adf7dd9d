/* nativesym.c: a file's function symbols for native frames: the FUNC
 * symbols of .symtab (else .dynsym, with the .symtab of a debug file or of
 * MiniDebugInfo when given) and the PLT slots (name@plt, from .rela.plt),
 * or names added one by one (a perf map), sorted, one per address (aliases
 * chosen as perf chooses, tools/perf/util/symbol.c choose_best_symbol: one
 * with a size before one without, global before local before weak, the
 * fewest leading underscores, the longest (a perf map's: the shortest); then
 * the first in the table, as perf keeps it (a perf map's: in byte order)).
 * Every count and size is bounded; names are cut at TB_NSYM_MAX_NAME bytes,
 * kept once each as they are read (a file may repeat one name millions of
 * times), at most TB_NSYM_MAX_NAME_BYTES of them per file, and only the names
 * of the symbols kept stay; reading stops at TB_NSYM_MAX_NS of CPU or
 * TB_NSYM_MAX_REPEATS names seen again. */
#define _GNU_SOURCE
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/clock.h"
#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/mem.h"
#include "proc/elfsym.h"
#include "proc/nativesym.h"

#define PLT_SLOT 16             /* bytes per x86-64 PLT entry */
#define RANK_PLT 3

_Static_assert(TB_NSYM_MAX_SYMBOLS <= 1u << 24, "a symbol's order fits its 24 bits");

/* While a file is read: its symbols array's room, the start's CPU time, and
 * each distinct name once (index: the names' offsets in f->names, at[]). */
struct loader {
	struct tb_nsym_file *f;
	uint32_t cap;
	uint64_t cpu0;
	struct tb_hmap index;
	uint32_t *at, nat, capat;
	uint32_t repeats;              /* names found kept already */
	char cand[TB_NSYM_MAX_NAME];   /* the name being looked up */
};

static int same_name(const void *ctx, uint32_t i)
{
	const struct loader *ld = ctx;

	return !strcmp(ld->f->names + ld->at[i], ld->cand);
}

/* The offset of name s + suffix in f->names: the one kept already, or a new copy. */
static uint32_t add_name(struct loader *ld, const char *s, const char *suffix)
{
	struct tb_nsym_file *f = ld->f;
	size_t len = strnlen(s, TB_NSYM_MAX_NAME - 16), slen = strlen(suffix);
	uint32_t at = (uint32_t)f->names_len, i;

	memcpy(ld->cand, s, len);
	memcpy(ld->cand + len, suffix, slen + 1);
	i = tb_hmap_intern(&ld->index, tb_hash(ld->cand, len + slen), ld->nat, same_name, ld);
	if (i != ld->nat) {
		ld->repeats++;
		return ld->at[i];
	}
	ld->at = tb_grow(ld->at, &ld->capat, ld->nat + 1, sizeof(*ld->at), 1024);
	ld->at[ld->nat++] = at;

	if (f->names_len + len + slen + 1 > f->names_cap) {
		size_t cap = f->names_cap ? f->names_cap : 4096;

		while (cap < f->names_len + len + slen + 1)
			cap *= 2;
		f->names = realloc(f->names, cap);
		if (!f->names)
			abort();
		f->names_cap = cap;
	}
	memcpy(f->names + at, s, len);
	memcpy(f->names + at + len, suffix, slen + 1);
	f->names_len += len + slen + 1;
	return at;
}

/* May more symbols be read: within the name bytes and, checked every 4,096
 * symbols, the CPU time (f->cut says which ran out)? */
static int within_budget(struct loader *ld)
{
	struct tb_nsym_file *f = ld->f;

	if (f->nsyms >= TB_NSYM_MAX_SYMBOLS || f->names_len >= TB_NSYM_MAX_NAME_BYTES ||
	    ld->repeats >= TB_NSYM_MAX_REPEATS) {
		f->cut = 1;
		return 0;
	}
	if (!(f->nsyms & 4095) && f->nsyms && tb_clock_ns(CLOCK_THREAD_CPUTIME_ID) - ld->cpu0 > TB_NSYM_MAX_NS) {
		f->cut = 1;
		return 0;
	}
	return 1;
}

static void add_sym(struct loader *ld, uint64_t start, uint64_t size, const char *name, const char *suffix,
		    uint8_t rank)
{
	struct tb_nsym_file *f = ld->f;

	if (f->nsyms >= TB_NSYM_MAX_SYMBOLS || f->names_len >= TB_NSYM_MAX_NAME_BYTES || !name || !name[0] ||
	    start + size < start)
		return;
	f->syms = tb_grow(f->syms, &ld->cap, f->nsyms + 1, sizeof(*f->syms), 256);
	f->syms[f->nsyms] = (struct tb_nsym){ start, start + size, add_name(ld, name, suffix), f->nsyms, rank };
	f->nsyms++;
}

static uint8_t bind_rank(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 2;
	default:
		return 1;
	}
}

/* The FUNC symbols of a symbol table section; how many were taken. */
static uint32_t read_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct loader *ld)
{
	struct tb_nsym_file *f = ld->f;
	Elf_Data *data;
	uint32_t before = f->nsyms;
	size_t n;

	if (!sh->sh_entsize || !(data = tb_elf_data(elf, scn)) || !elf_getscn(elf, sh->sh_link) ||
	    !tb_elf_data(elf, elf_getscn(elf, sh->sh_link)))
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n && within_budget(ld); i++) {
		GElf_Sym sym;
		int type;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		add_sym(ld, sym.st_value, sym.st_size, elf_strptr(elf, sh->sh_link, sym.st_name), "",
			bind_rank(&sym));
	}
	return f->nsyms - before;
}

/* PLT slots: relocation i of .rela.plt jumps through .plt.sec slot i (IBT
 * builds) or .plt slot i + 1 (slot 0 is the resolver's). */
static void read_plt(Elf *elf, struct loader *ld)
{
	struct tb_nsym_file *f = ld->f;
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rel = tb_elf_scn(elf, ".rela.plt", &rsh), *plt, *dyn;
	Elf_Data *rdata, *ddata;
	uint64_t first;
	size_t n;

	if (!rel || rsh.sh_type != SHT_RELA || !rsh.sh_entsize || !(rdata = tb_elf_data(elf, rel)))
		return;
	if ((plt = tb_elf_scn(elf, ".plt.sec", &psh)))
		first = psh.sh_addr;
	else if ((plt = tb_elf_scn(elf, ".plt", &psh)))
		first = psh.sh_addr + PLT_SLOT;
	else
		return;
	dyn = elf_getscn(elf, rsh.sh_link);
	if (!dyn || !gelf_getshdr(dyn, &dsh) || !dsh.sh_entsize || !(ddata = tb_elf_data(elf, dyn)))
		return;
	n = rsh.sh_size / rsh.sh_entsize;
	for (size_t i = 0; i < n && first + PLT_SLOT * (i + 1) <= psh.sh_addr + psh.sh_size &&
	     within_budget(ld); i++) {
		GElf_Rela r;
		GElf_Sym sym;
		size_t k;

		if (!gelf_getrela(rdata, (int)i, &r) || !(k = GELF_R_SYM(r.r_info)) ||
		    !gelf_getsym(ddata, (int)k, &sym))
			continue;
		add_sym(ld, first + PLT_SLOT * i, PLT_SLOT, elf_strptr(elf, dsh.sh_link, sym.st_name),
			"@plt", RANK_PLT);
		f->nplt++;
	}
}

static unsigned underscores(const char *s)
{
	unsigned n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int by_start_then_rank(const void *a, const void *b, void *ctx)
{
	const struct tb_nsym *x = a, *y = b;
	const struct tb_nsym_file *f = ctx;
	const char *nx = f->names + x->name, *ny = f->names + y->name;
	size_t lx, ly;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if ((x->end > x->start) != (y->end > y->start))
		return x->end > x->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (underscores(nx) != underscores(ny))
		return underscores(nx) < underscores(ny) ? -1 : 1;
	lx = strlen(nx);
	ly = strlen(ny);
	/* perf takes the longest of a symbol table's aliases; of a perf map's names at one
	 * start (a JIT's, or a planted map's 512-byte garbage) the shortest is kept */
	if (lx != ly)
		return (lx > ly) == (f->source != TB_NSYM_PERFMAP) ? -1 : 1;
	if (f->source == TB_NSYM_PERFMAP)
		return strcmp(nx, ny);
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Only the kept symbols' names stay, in a buffer of their size. */
static void compact_names(struct tb_nsym_file *f)
{
	size_t len = 0;
	char *names;

	for (uint32_t i = 0; i < f->nsyms; i++)
		len += strlen(f->names + f->syms[i].name) + 1;
	if (len == f->names_len)
		return;
	names = tb_calloc(1, len ? len : 1);
	len = 0;
	for (uint32_t i = 0; i < f->nsyms; i++) {
		size_t n = strlen(f->names + f->syms[i].name) + 1;

		memcpy(names + len, f->names + f->syms[i].name, n);
		f->syms[i].name = (uint32_t)len;
		len += n;
	}
	free(f->names);
	f->names = names;
	f->names_len = f->names_cap = len;
}

/* Sorted by start, one per start (the alias rule), only their names kept. */
static void finish(struct loader *ld)
{
	struct tb_nsym_file *f = ld->f;
	uint32_t keep = 0;

	tb_hmap_free(&ld->index);
	free(ld->at);
	if (f->nsyms)
		qsort_r(f->syms, f->nsyms, sizeof(*f->syms), by_start_then_rank, f);
	for (uint32_t i = 0; i < f->nsyms; i++)
		if (!keep || f->syms[keep - 1].start != f->syms[i].start)
			f->syms[keep++] = f->syms[i];
	f->nsyms = keep;
	compact_names(f);
}

/* The FUNC symbols of elf's first table of type `type` that has any; how many. */
static uint32_t read_tables(Elf *elf, Elf64_Word type, struct loader *ld)
{
	Elf_Scn *scn = NULL;
	uint32_t n = 0;

	while ((scn = elf_nextscn(elf, scn)) && !n) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			n = read_symtab(elf, scn, &sh, ld);
	}
	return n;
}

int tb_nsym_load(Elf *elf, Elf *debug, uint32_t debug_source, const char *module, struct tb_nsym_file *f,
		 char *err, size_t errlen)
{
	struct loader ld = { .f = f, .cpu0 = tb_clock_ns(CLOCK_THREAD_CPUTIME_ID) };
	size_t shnum;

	memset(f, 0, sizeof(*f));
	snprintf(f->module, sizeof(f->module), "%s", module);
	if (elf_getshdrnum(elf, &shnum)) {
		snprintf(err, errlen, "%s: cannot read the section headers: %s", module, elf_errmsg(-1));
		return -1;
	}
	/* the debug file's .symtab has the local functions the file was
	 * stripped of; MiniDebugInfo only those, the exported ones stay in
	 * .dynsym: both are read (aliases at one start: one kept) */
	if (debug && read_tables(debug, SHT_SYMTAB, &ld))
		f->source = debug_source;
	if (read_tables(elf, SHT_SYMTAB, &ld)) {
		if (!f->source)
			f->source = TB_NSYM_SYMTAB;
	} else if (read_tables(elf, SHT_DYNSYM, &ld) && !f->source) {
		f->source = TB_NSYM_DYNSYM;
	}
	read_plt(elf, &ld);
	finish(&ld);
	return 0;
}

struct tb_nsym_builder {
	struct loader ld;
};

struct tb_nsym_builder *tb_nsym_begin(struct tb_nsym_file *f, const char *module, uint32_t source)
{
	struct tb_nsym_builder *b = tb_calloc(1, sizeof(*b));

	memset(f, 0, sizeof(*f));
	snprintf(f->module, sizeof(f->module), "%s", module);
	f->source = source;
	b->ld.f = f;
	b->ld.cpu0 = tb_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return b;
}

int tb_nsym_add(struct tb_nsym_builder *b, uint64_t start, uint64_t size, const char *name)
{
	if (!within_budget(&b->ld))
		return -1;
	add_sym(&b->ld, start, size, name, "", 0);
	return 0;
}

void tb_nsym_end(struct tb_nsym_builder *b)
{
	finish(&b->ld);
	free(b);
}

void tb_nsym_set_fdes(struct tb_nsym_file *f, struct tb_code_range *fdes, uint32_t n)
{
	free(f->fdes);
	f->fdes = fdes;
	f->nfdes = fdes ? n : 0;
}

const char *tb_nsym_lookup(const struct tb_nsym_file *f, uint64_t addr, uint64_t *start)
{
	uint32_t lo = 0, hi = f->nsyms, i;
	const struct tb_code_range *fde = NULL;
	const struct tb_nsym *s;

	i = tb_code_range_find(f->fdes, f->nfdes, sizeof(*f->fdes), addr);
	if (i < f->nfdes)
		fde = &f->fdes[i];
	while (lo < hi) {                 /* the first symbol starting above addr */
		uint32_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0) {
		s = &f->syms[lo - 1];
		/* a sized symbol covers its size; one of size 0 up to the next
		 * symbol, but not into an FDE that starts after it */
		if (s->end > s->start ? addr < s->end : !fde || fde->lo <= s->start) {
			*start = s->start;
			return f->names + s->name;
		}
	}
	*start = fde ? fde->lo : addr;
	return NULL;
}

void tb_nsym_free(struct tb_nsym_file *f)
{
	free(f->syms);
	free(f->names);
	free(f->fdes);
	memset(f, 0, sizeof(*f));
}
