/* hash.h: the one hash of the agent's tables: SipHash-1-3 (64-bit) under a
 * key drawn at random once per process, so names that come from profiled
 * processes or capture files cannot be chosen to collide.  Values differ
 * from run to run: nothing written may depend on them. */
#ifndef TB_HASH_H
#define TB_HASH_H
#include <stddef.h>
#include <stdint.h>

/* Incremental hashing: init, add bytes and words, end. */
struct tb_hasher {
	uint64_t v0, v1, v2, v3;
	uint64_t tail;   /* bytes not yet compressed, little-endian */
	uint64_t len;    /* bytes added so far */
};

void tb_hash_init(struct tb_hasher *h);
void tb_hash_add(struct tb_hasher *h, const void *p, size_t len);
/* Same as adding v's 8 little-endian bytes. */
void tb_hash_word(struct tb_hasher *h, uint64_t v);
/* Add a C string and its terminating NUL (so "a","bc" differs from "ab","c"). */
void tb_hash_str(struct tb_hasher *h, const char *s);
uint64_t tb_hash_end(const struct tb_hasher *h);

/* One call: the hash of len bytes, of two words. */
uint64_t tb_hash(const void *p, size_t len);
uint64_t tb_hash2(uint64_t a, uint64_t b);

/* Tests only: fix the key (before any hashing: tables keep hashes). */
void tb_hash_set_key(uint64_t k0, uint64_t k1);

#endif
