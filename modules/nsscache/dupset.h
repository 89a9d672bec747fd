/* A set of short byte strings, for duplicate checks while mapping.
 *
 * Keys (names of at most DUPSET_KEY_MAX bytes, or ids as 4 bytes) are
 * copied into one growing buffer and found through an open-addressing
 * table of offsets, hashed with SipHash-1-3 under a random key, so a
 * directory crafted to collide cannot make mapping quadratic.  Each key
 * carries a 32-bit value (an index into the caller's own table).  About
 * 1 + len + 12 bytes per key.  Non-logging.
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

/**
 * dupset_put() - add @key with @value, or set the value of a present key.
 * Return: 1 added, 0 updated, -EINVAL if @len > DUPSET_KEY_MAX, -ENOMEM.
 */
int dupset_put(DupSet *s, const void *key, size_t len, uint32_t value);

/** dupset_get() - the value of @key (0 for keys added by dupset_add()); false if absent. */
bool dupset_get(const DupSet *s, const void *key, size_t len, uint32_t *ret_value);

/**
 * dupset_get_or_add() - one lookup for "is it there, and if not, add it".
 * Return: 1 added with @value; 0 present, its value in *ret_value; -EINVAL, -ENOMEM.
 */
int dupset_get_or_add(DupSet *s, const void *key, size_t len, uint32_t value, uint32_t *ret_value);

/** dupset_add_id() / dupset_contains_id(): the same for a 32-bit id. */
int dupset_add_id(DupSet *s, uint32_t id);
bool dupset_contains_id(const DupSet *s, uint32_t id);
int dupset_put_id(DupSet *s, uint32_t id, uint32_t value);
bool dupset_get_id(const DupSet *s, uint32_t id, uint32_t *ret_value);
int dupset_get_or_add_id(DupSet *s, uint32_t id, uint32_t value, uint32_t *ret_value);

/** dupset_clear() - empty @s; a large table is given back rather than wiped. */
void dupset_clear(DupSet *s);

size_t dupset_size(const DupSet *s);

/**
 * dupset_mark_contested() - set @bad[i] for every @keys[i] (NULL: none, left
 * alone) whose key another entry of @keys holds too: each holder of a key
 * held twice is marked, the first included.  Return: 0, -EINVAL, -ENOMEM.
 */
int dupset_mark_contested(char *const *keys, size_t n, bool *bad);
