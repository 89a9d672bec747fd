/* Splay exists so that a fleet of nodes started together does not hit the
 * SCIM server in the same second; it needs spread, not secrecy, but draws
 * from getrandom() anyway so nodes booted from one image still differ. */
#include <sys/random.h>
#include <time.h>

#include "util/rand-util.h"

uint64_t random_u64(void) {
        uint64_t v = 0;

        if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t) sizeof(v)) {
                /* Early boot without entropy: spread is all we need. */
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                v = (uint64_t) ts.tv_nsec * UINT64_C(6364136223846793005) + (uint64_t) ts.tv_sec;
        }
        return v;
}

uint64_t random_range(uint64_t lo, uint64_t hi) {
        if (hi <= lo)
                return lo;
        uint64_t span = hi - lo;
        if (span == UINT64_MAX)
                return random_u64();
        /* Rejection sampling keeps the draw uniform. */
        uint64_t limit = UINT64_MAX - (UINT64_MAX % (span + 1));
        uint64_t v;
        do
                v = random_u64();
        while (v >= limit);
        return lo + v % (span + 1);
}
