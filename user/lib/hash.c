/* hash.c: SipHash-1-3 (Aumasson, Bernstein; the variant CPython and Rust use
 * for their hash tables) with a per-process key from getrandom(2). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include "lib/hash.h"

static uint64_t key0, key1;
static int keyed;

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

static inline void sipround(uint64_t *v0, uint64_t *v1, uint64_t *v2, uint64_t *v3)
{
	*v0 += *v1;
	*v1 = ROTL(*v1, 13);
	*v1 ^= *v0;
	*v0 = ROTL(*v0, 32);
	*v2 += *v3;
	*v3 = ROTL(*v3, 16);
	*v3 ^= *v2;
	*v0 += *v3;
	*v3 = ROTL(*v3, 21);
	*v3 ^= *v0;
	*v2 += *v1;
	*v1 = ROTL(*v1, 17);
	*v1 ^= *v2;
	*v2 = ROTL(*v2, 32);
}

static void make_key(void)
{
	uint64_t k[2];

	if (getrandom(k, sizeof(k), GRND_NONBLOCK) != (ssize_t)sizeof(k)) {
		/* no entropy yet (early boot) or no getrandom: still unpredictable enough
		 * that a capture file cannot be prepared against this run */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		k[0] = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)(uintptr_t)&ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		k[1] = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&make_key;
	}
	key0 = k[0];
	key1 = k[1];
	keyed = 1;
}

void tb_hash_set_key(uint64_t k0, uint64_t k1)
{
	key0 = k0;
	key1 = k1;
	keyed = 1;
}

void tb_hash_init(struct tb_hasher *h)
{
	if (!keyed) /* the agent is single-threaded */
		make_key();
	h->v0 = key0 ^ 0x736f6d6570736575ull;
	h->v1 = key1 ^ 0x646f72616e646f6dull;
	h->v2 = key0 ^ 0x6c7967656e657261ull;
	h->v3 = key1 ^ 0x7465646279746573ull;
	h->tail = 0;
	h->len = 0;
}

static inline void compress(struct tb_hasher *h, uint64_t m)
{
	h->v3 ^= m;
	sipround(&h->v0, &h->v1, &h->v2, &h->v3);
	h->v0 ^= m;
}

/* 8 bytes as a little-endian word: one load where the machine is little-endian. */
static inline uint64_t load_le64(const unsigned char *b)
{
	uint64_t m = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&m, b, 8);
#else
	for (int i = 0; i < 8; i++)
		m |= (uint64_t)b[i] << (8 * i);
#endif
	return m;
}

void tb_hash_add(struct tb_hasher *h, const void *p, size_t len)
{
	const unsigned char *b = p;
	unsigned used = (unsigned)(h->len & 7);

	h->len += len;
	/* fill the pending word first */
	while (used && len) {
		h->tail |= (uint64_t)*b++ << (8 * used);
		len--;
		if (++used == 8) {
			compress(h, h->tail);
			h->tail = 0;
			used = 0;
		}
	}
	if (len >= 8) { /* the state in locals: b (bytes) could alias it */
		struct tb_hasher w = *h;

		for (; len >= 8; b += 8, len -= 8)
			compress(&w, load_le64(b));
		*h = w;
	}
	for (unsigned i = 0; i < len; i++)
		h->tail |= (uint64_t)b[i] << (8 * i);
}

void tb_hash_word(struct tb_hasher *h, uint64_t v)
{
	if (h->len & 7) {
		unsigned char b[8];

		for (int i = 0; i < 8; i++)
			b[i] = (unsigned char)(v >> (8 * i));
		tb_hash_add(h, b, 8);
		return;
	}
	h->len += 8;
	compress(h, v);
}

void tb_hash_str(struct tb_hasher *h, const char *s)
{
	tb_hash_add(h, s, strlen(s) + 1);
}

uint64_t tb_hash_end(const struct tb_hasher *h)
{
	uint64_t v0 = h->v0, v1 = h->v1, v2 = h->v2, v3 = h->v3;
	uint64_t b = h->len << 56 | h->tail;

	v3 ^= b;
	sipround(&v0, &v1, &v2, &v3);
	v0 ^= b;
	v2 ^= 0xff;
	sipround(&v0, &v1, &v2, &v3);
	sipround(&v0, &v1, &v2, &v3);
	sipround(&v0, &v1, &v2, &v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t tb_hash(const void *p, size_t len)
{
	struct tb_hasher h;

	tb_hash_init(&h);
	tb_hash_add(&h, p, len);
	return tb_hash_end(&h);
}

uint64_t tb_hash2(uint64_t a, uint64_t b)
{
	struct tb_hasher h;

	tb_hash_init(&h);
	tb_hash_word(&h, a);
	tb_hash_word(&h, b);
	return tb_hash_end(&h);
}
