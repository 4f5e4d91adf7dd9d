/* kstack.h: the kernel part of a sample (--kernel): its PCs, leaf first as
 * bpf_get_stack gave them, trimmed (a switch-out's scheduler frames) and
 * named from kallsyms as code entries of kind kernel, one per kernel
 * function, so samples aggregate per function. */
#ifndef TB_KSTACK_H
#define TB_KSTACK_H
#include <stdint.h>
#include "lib/hashmap.h"
#include "proc/kallsyms.h"
#include "model/symbolize.h"

/* Leaf frames of a switch-out searched for __schedule (trampoline,
 * __traceiter_sched_switch, __schedule: a handful). */
#define TB_KSTACK_TRIM_MAX 16
/* PCs remembered with their code entry; past it the memory starts over. */
#define TB_KSTACK_CACHE_MAX (1u << 18)

struct tb_kpc {                /* one address as looked up: the key is its first field */
	uint64_t addr;             /* the PC, minus 1 for a return address */
	uint32_t code;             /* the symbolizer's entry */
	uint32_t schedule;         /* it is in __schedule */
};

struct tb_kstack {
	struct tb_ksyms *ksyms;    /* kernel symbols (the session's, read early), NULL: none */
	int hidden;                /* no address shown (kptr_restrict, no CAP_SYSLOG) or none read:
				    * one [kernel] frame per sample */
	int32_t kptr_restrict;     /* kernel.kptr_restrict when kallsyms was read, -1 unknown */
	struct tb_kpc *pcs;
	uint32_t npcs, cappcs;
	struct tb_hmap index;      /* addr -> pcs (addresses kallsyms named) */
};

/* Name kernel frames from k (NULL: none could be read; hidden: it showed no
 * address), kptr_restrict as read with it. */
void tb_kstack_init(struct tb_kstack *ks, struct tb_ksyms *k, int32_t kptr_restrict);
void tb_kstack_free(struct tb_kstack *ks);
/* The code entries of n kernel PCs (leaf first; n <= TB_MAX_KERNEL) into
 * out, leaf first, as many as are kept: off_cpu (a switch-out's stack, all
 * return addresses) drops the leaf frames up to and including __schedule;
 * a perf_event stack's first PC is exact, the others are return addresses
 * (named at pc - 1).  Hidden symbols: one [kernel] entry for the whole part. */
uint16_t tb_kstack_codes(struct tb_kstack *ks, struct tb_symbolizer *sym, const uint64_t *pcs,
			 uint16_t n, int off_cpu, uint32_t *out);

#endif
