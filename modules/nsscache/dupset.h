/* A set of short byte strings, for duplicate checks while mapping.
 *
 * Keys (names of at most DUPSET_KEY_MAX bytes, or ids as 4 bytes) are
 * copied into one growing buffer and found through an open-addressing
 * table of offsets, hashed with SipHash-1-3 under a random key, so a
 * directory crafted to collide cannot make mapping quadratic.  About
 * 1 + len + 8 bytes per key.  Non-logging.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DUPSET_KEY_MAX 255

typedef struct DupSet DupSet;

int dupset_new(DupSet **ret);
DupSet *dupset_free(DupSet *s);
static inline void dupset_freep(DupSet **s) {
        if (*s)
                *s = dupset_free(*s);
}

/**
 * dupset_add() - add @key (@len bytes) unless present.
 * Return: 1 added, 0 already present, -EINVAL if @len > DUPSET_KEY_MAX, -ENOMEM.
 */
int dupset_add(DupSet *s, const void *key, size_t len);

/** dupset_contains() - whether @key is in @s. */
bool dupset_contains(const DupSet *s, const void *key, size_t len);

/** dupset_add_id() / dupset_contains_id(): the same for a 32-bit id. */
int dupset_add_id(DupSet *s, uint32_t id);
bool dupset_contains_id(const DupSet *s, uint32_t id);

/** dupset_clear() - empty @s; a large table is given back rather than wiped. */
void dupset_clear(DupSet *s);

size_t dupset_size(const DupSet *s);
