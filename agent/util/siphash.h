/* SipHash-1-3, keyed per process, for hash tables whose keys an attacker
 * picks (SCIM names, sshkey cache users): crafted collisions cannot turn a
 * lookup into a scan without the key.  Inline: it is on hot paths. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t siphash_rotl(uint64_t x, int b) {
        return (x << b) | (x >> (64 - b));
}

static inline void siphash_round(uint64_t v[4]) {
        v[0] += v[1];
        v[1] = siphash_rotl(v[1], 13) ^ v[0];
        v[0] = siphash_rotl(v[0], 32);
        v[2] += v[3];
        v[3] = siphash_rotl(v[3], 16) ^ v[2];
        v[0] += v[3];
        v[3] = siphash_rotl(v[3], 21) ^ v[0];
        v[2] += v[1];
        v[1] = siphash_rotl(v[1], 17) ^ v[2];
        v[2] = siphash_rotl(v[2], 32);
}

/* SipHash-1-3 of @len bytes at @p under the key (@k0, @k1). */
static inline uint64_t siphash13(uint64_t k0, uint64_t k1, const unsigned char *p, size_t len) {
        uint64_t v[4] = { k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
                          k1 ^ 0x7465646279746573ULL };
        uint64_t b = (uint64_t) len << 56, m;
        size_t i = 0;

        for (; i + 8 <= len; i += 8) {
                memcpy(&m, p + i, 8);
                v[3] ^= m;
                siphash_round(v);
                v[0] ^= m;
        }
        for (size_t j = 0; i + j < len; j++)
                b |= (uint64_t) p[i + j] << (8 * j);
        v[3] ^= b;
        siphash_round(v);
        v[0] ^= b;
        v[2] ^= 0xff;
        siphash_round(v);
        siphash_round(v);
        siphash_round(v);
        return v[0] ^ v[1] ^ v[2] ^ v[3];
}
