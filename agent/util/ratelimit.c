/* The log rate limit of ratelimit.h. */
#include "util/ratelimit.h"
#include "util/time-util.h"

bool ratelimit_pass(Ratelimit *rl, uint64_t interval_usec, unsigned burst, unsigned *ret_suppressed) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (rl->begin == 0 || now - rl->begin >= interval_usec) {
                rl->begin = now;
                rl->n = 0;
        }
        if (rl->n >= burst) {
                rl->suppressed++;
                return false;
        }
        rl->n++;
        *ret_suppressed = rl->suppressed;
        rl->suppressed = 0;
        return true;
}
