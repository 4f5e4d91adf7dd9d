/* kstack.c: names the kernel part of a sample from kallsyms, one code entry
 * per kernel function (keyed by the symbol's address), with a memory of the
 * addresses already named; trims a switch-out's scheduler frames by symbol
 * (__schedule), not by count; under hidden symbols the whole part is one
 * [kernel] frame, so its time stays attributed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/mem.h"
#include "model/kstack.h"

#define KERNEL_MODULE "[kernel]"
#define HIDDEN_KEY 0      /* keys of entries that are no symbol */
#define UNKNOWN_KEY 1

void tb_kstack_init(struct tb_kstack *ks, struct tb_ksyms *k, int32_t kptr_restrict)
{
	memset(ks, 0, sizeof(*ks));
	ks->ksyms = k;
	ks->hidden = !k || k->hidden || !k->n;
	ks->kptr_restrict = kptr_restrict;
}

void tb_kstack_free(struct tb_kstack *ks)
{
	free(ks->pcs);
	tb_hmap_free(&ks->index);
	memset(ks, 0, sizeof(*ks));
}

/* The entry of the kernel function holding addr (already minus 1 for a
 * return address); remembered if kallsyms named it. */
static struct tb_kpc lookup(struct tb_kstack *ks, struct tb_symbolizer *sym, uint64_t addr)
{
	uint32_t i = tb_hmap_find_key(&ks->index, ks->pcs, sizeof(*ks->pcs), &addr, sizeof(addr));
	const char *name, *module;
	char bracketed[TB_KSYMS_MAX_LINE + 3];
	uint64_t off;
	struct tb_kpc e;

	if (i != TB_HMAP_NONE)
		return ks->pcs[i];
	name = tb_ksyms_lookup(ks->ksyms, addr, 0, &off, &module);
	if (!name) /* not remembered: a module loaded later is found on a later sample */
		return (struct tb_kpc){ addr, tb_sym_function(sym, TB_CODE_KERNEL, UNKNOWN_KEY, "[unknown]",
							      KERNEL_MODULE), 0 };
	if (ks->npcs >= TB_KSTACK_CACHE_MAX) {
		ks->npcs = 0;
		tb_hmap_clear(&ks->index);
	}
	snprintf(bracketed, sizeof(bracketed), "[%s]", module);
	e = (struct tb_kpc){ addr, tb_sym_function(sym, TB_CODE_KERNEL, addr - off, name,
						   module[0] ? bracketed : KERNEL_MODULE),
			     strcmp(name, "__schedule") == 0 };
	ks->pcs = tb_grow(ks->pcs, &ks->cappcs, ks->npcs + 1, sizeof(*ks->pcs), 1024);
	ks->pcs[ks->npcs] = e;
	tb_hmap_insert(&ks->index, tb_hash(&addr, sizeof(addr)), ks->npcs++);
	return e;
}

uint16_t tb_kstack_codes(struct tb_kstack *ks, struct tb_symbolizer *sym, const uint64_t *pcs,
			 uint16_t n, int off_cpu, uint32_t *out)
{
	uint16_t kept = 0;

	if (!n)
		return 0;
	if (ks->hidden || !ks->ksyms) {
		out[0] = tb_sym_function(sym, TB_CODE_KERNEL, HIDDEN_KEY, KERNEL_MODULE, KERNEL_MODULE);
		return 1;
	}
	for (uint16_t i = 0; i < n; i++) {
		struct tb_kpc e = lookup(ks, sym, pcs[i] - (off_cpu || i ? 1 : 0));

		if (off_cpu && i < TB_KSTACK_TRIM_MAX && e.schedule) {
			kept = 0;          /* everything so far was the switch itself */
			continue;
		}
		out[kept++] = e.code;
	}
	return kept;
}
