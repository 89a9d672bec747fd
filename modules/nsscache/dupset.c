/* Open addressing with linear probing over offsets into one key buffer.
 *
 * A slot holds 0 (empty) or 1 + the offset of its key, stored as one length
 * byte, the key's bytes and a 4-byte value (unaligned, so copied).  The table is kept at most half full;
 * growing rehashes from the key buffer.  Keys are never removed one by one, only all at once by
 * dupset_clear().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/rand-util.h"
#include "util/siphash.h"

#include "dupset.h"

#define SLOTS_MIN 64
#define SLOTS_KEEP_ON_CLEAR 4096
#define KEYS_KEEP_ON_CLEAR (64 * 1024)

struct DupSet {
        uint32_t *slots;
        size_t n_slots; /* a power of two */
        size_t n;
        unsigned char *keys;
        size_t keys_len, keys_cap;
        uint64_t k0, k1;
};

int dupset_new(DupSet **ret) {
        _cleanup_free_ DupSet *s = calloc(1, sizeof(DupSet));

        if (!s)
                return -ENOMEM;
        s->slots = calloc(SLOTS_MIN, sizeof(uint32_t));
        if (!s->slots)
                return -ENOMEM;
        s->n_slots = SLOTS_MIN;
        s->k0 = random_u64();
        s->k1 = random_u64();
        *ret = TAKE_PTR(s);
        return 0;
}

DupSet *dupset_free(DupSet *s) {
        if (!s)
                return NULL;
        free(s->slots);
        free(s->keys);
        free(s);
        return NULL;
}

size_t dupset_size(const DupSet *s) {
        return s->n;
}

static uint64_t key_hash(const DupSet *s, const void *key, size_t len) {
        return siphash13(s->k0, s->k1, key, len);
}

static bool slot_matches(const DupSet *s, uint32_t slot, const void *key, size_t len) {
        const unsigned char *k = s->keys + slot - 1;

        return k[0] == len && memcmp(k + 1, key, len) == 0;
}

/* The slot holding @key, or the empty slot where it would go. */
static size_t find_slot(const DupSet *s, const void *key, size_t len) {
        size_t mask = s->n_slots - 1, i = (size_t) key_hash(s, key, len) & mask;

        while (s->slots[i] != 0 && !slot_matches(s, s->slots[i], key, len))
                i = (i + 1) & mask;
        return i;
}

static int grow_slots(DupSet *s) {
        size_t n_slots = s->n_slots * 2, mask = n_slots - 1;
        uint32_t *slots = calloc(n_slots, sizeof(uint32_t));

        if (!slots)
                return -ENOMEM;
        for (size_t j = 0; j < s->n_slots; j++) {
                uint32_t slot = s->slots[j];
                const unsigned char *k;
                size_t i;

                if (slot == 0)
                        continue;
                k = s->keys + slot - 1;
                i = (size_t) key_hash(s, k + 1, k[0]) & mask;
                while (slots[i] != 0)
                        i = (i + 1) & mask;
                slots[i] = slot;
        }
        free(s->slots);
        s->slots = slots;
        s->n_slots = n_slots;
        return 0;
}

#define VALUE_SIZE sizeof(uint32_t)

static int append_key(DupSet *s, const void *key, size_t len, uint32_t value, uint32_t *ret_slot) {
        size_t need = s->keys_len + 1 + len + VALUE_SIZE;

        if (need >= UINT32_MAX)
                return -ENOMEM;
        if (need > s->keys_cap) {
                size_t cap = s->keys_cap ? s->keys_cap * 2 : 4096;
                unsigned char *k;

                while (cap < need)
                        cap *= 2;
                k = realloc(s->keys, cap);
                if (!k)
                        return -ENOMEM;
                s->keys = k;
                s->keys_cap = cap;
        }
        s->keys[s->keys_len] = (unsigned char) len;
        memcpy(s->keys + s->keys_len + 1, key, len);
        memcpy(s->keys + s->keys_len + 1 + len, &value, VALUE_SIZE);
        *ret_slot = (uint32_t) s->keys_len + 1;
        s->keys_len = need;
        return 0;
}

static unsigned char *slot_value(const DupSet *s, uint32_t slot) {
        unsigned char *k = s->keys + slot - 1;

        return k + 1 + k[0];
}

/* Adds @key with @value; an existing key keeps its value unless @replace,
 * and the value it had goes to *ret_old (if not NULL). */
static int put(DupSet *s, const void *key, size_t len, uint32_t value, bool replace, uint32_t *ret_old) {
        uint32_t slot;
        size_t i;
        int r;

        if (len > DUPSET_KEY_MAX)
                return -EINVAL;
        i = find_slot(s, key, len);
        if (s->slots[i] != 0) {
                if (ret_old)
                        memcpy(ret_old, slot_value(s, s->slots[i]), VALUE_SIZE);
                if (replace)
                        memcpy(slot_value(s, s->slots[i]), &value, VALUE_SIZE);
                return 0;
        }
        r = append_key(s, key, len, value, &slot);
        if (r < 0)
                return r;
        s->slots[i] = slot;
        s->n++;
        if (s->n * 2 > s->n_slots) {
                r = grow_slots(s);
                if (r < 0)
                        return r;
        }
        return 1;
}

int dupset_add(DupSet *s, const void *key, size_t len) {
        return put(s, key, len, 0, false, NULL);
}

int dupset_put(DupSet *s, const void *key, size_t len, uint32_t value) {
        return put(s, key, len, value, true, NULL);
}

int dupset_get_or_add(DupSet *s, const void *key, size_t len, uint32_t value, uint32_t *ret_value) {
        return put(s, key, len, value, false, ret_value);
}

bool dupset_contains(const DupSet *s, const void *key, size_t len) {
        return len <= DUPSET_KEY_MAX && s->slots[find_slot(s, key, len)] != 0;
}

bool dupset_get(const DupSet *s, const void *key, size_t len, uint32_t *ret_value) {
        uint32_t slot;

        if (len > DUPSET_KEY_MAX)
                return false;
        slot = s->slots[find_slot(s, key, len)];
        if (slot == 0)
                return false;
        memcpy(ret_value, slot_value(s, slot), VALUE_SIZE);
        return true;
}

int dupset_add_id(DupSet *s, uint32_t id) {
        return dupset_add(s, &id, sizeof(id));
}

bool dupset_contains_id(const DupSet *s, uint32_t id) {
        return dupset_contains(s, &id, sizeof(id));
}

int dupset_put_id(DupSet *s, uint32_t id, uint32_t value) {
        return dupset_put(s, &id, sizeof(id), value);
}

bool dupset_get_id(const DupSet *s, uint32_t id, uint32_t *ret_value) {
        return dupset_get(s, &id, sizeof(id), ret_value);
}

int dupset_get_or_add_id(DupSet *s, uint32_t id, uint32_t value, uint32_t *ret_value) {
        return dupset_get_or_add(s, &id, sizeof(id), value, ret_value);
}

void dupset_clear(DupSet *s) {
        uint32_t *slots;

        s->n = 0;
        s->keys_len = 0;
        if (s->keys_cap > KEYS_KEEP_ON_CLEAR) {
                s->keys = mfree(s->keys);
                s->keys_cap = 0;
        }
        if (s->n_slots > SLOTS_KEEP_ON_CLEAR && (slots = calloc(SLOTS_MIN, sizeof(uint32_t)))) {
                free(s->slots);
                s->slots = slots;
                s->n_slots = SLOTS_MIN;
                return;
        }
        memset(s->slots, 0, s->n_slots * sizeof(uint32_t));
}

int dupset_mark_contested(char *const *keys, size_t n, bool *bad) {
        _cleanup_(dupset_freep) DupSet *seen = NULL;
        int r = dupset_new(&seen);

        for (size_t i = 0; r >= 0 && i < n; i++) {
                uint32_t first;

                if (!keys[i])
                        continue;
                r = dupset_get_or_add(seen, keys[i], strlen(keys[i]), (uint32_t) i, &first);
                if (r == 0) {
                        bad[i] = true;
                        bad[first] = true;
                }
        }
        return r < 0 ? r : 0;
}
