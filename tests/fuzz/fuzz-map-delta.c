/* Fuzz target: map deltas.  OLD \0 NEW \0: the delta made from OLD to NEW
 * gives NEW back (or is refused for a map that is not whole lines);
 * BASE \0 DELTA: a delta from an untrusted server applied to BASE fails
 * cleanly or gives a map of whole lines, never a crash or a leak. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "modules/nsscache/fleet/map-delta.h"
#include "util/cleanup.h"

#define MAX (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const char *a, size_t alen, const char *b, size_t blen) {
        _cleanup_free_ char *delta = NULL, *back = NULL, *err = NULL;
        size_t dlen, n;
        bool whole = (alen == 0 || a[alen - 1] == '\n') && (blen == 0 || b[blen - 1] == '\n');
        int r = map_delta_make(a, alen, b, blen, MAX, &delta, &dlen);

        if (r == -EINVAL && !whole)
                return;
        if (r < 0)
                __builtin_trap();
        if (map_delta_apply(a, alen, delta, dlen, MAX, &back, &n, &err) < 0 || n != blen ||
            memcmp(back, b, n) != 0)
                __builtin_trap();
}

static void apply(const char *base, size_t blen, const char *delta, size_t dlen) {
        _cleanup_free_ char *out = NULL, *err = NULL;
        size_t n;
        int r = map_delta_apply(base, blen, delta, dlen, MAX, &out, &n, &err);

        if (r < 0 && (out || !err) && r != -ENOMEM)
                __builtin_trap();
        if (r >= 0 && ((n > 0 && out[n - 1] != '\n') || strlen(out) > n))
                __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *p = (const char *) data, *z1 = memchr(p, 0, size), *z2;

        if (!z1)
                return 0;
        z2 = memchr(z1 + 1, 0, size - (size_t) (z1 + 1 - p));
        if (z2 && z2 == p + size - 1)
                round_trip(p, (size_t) (z1 - p), z1 + 1, (size_t) (z2 - z1 - 1));
        else
                apply(p, (size_t) (z1 - p), z1 + 1, size - (size_t) (z1 + 1 - p));
        return 0;
}
