/* keymap.h: a hash map from a key of four 32-bit words to dense indices
 * (0, 1, 2... in insertion order), for the writers' interning tables. */
#ifndef TB_KEYMAP_H
#define TB_KEYMAP_H
#include <stdint.h>

struct tb_keymap {
	uint32_t (*keys)[4];
	uint32_t n, cap;
	uint32_t *slots;   /* index + 1, 0: empty */
	uint32_t nslots;
};

/* Index of key (a, b, c, d); added at index n if new (*added set to 1). */
uint32_t tb_keymap_get(struct tb_keymap *m, uint32_t a, uint32_t b, uint32_t c, uint32_t d,
		       int *added);
/* Forget every key, keeping the memory. */
void tb_keymap_clear(struct tb_keymap *m);
void tb_keymap_free(struct tb_keymap *m);

#endif
