/* The hysteresis of a check (see health-count.h). */
#include "health-count.h"

bool health_count_feed(HealthCount *c, HealthStatus st, unsigned fail_after, unsigned pass_after) {
        bool was = c->failing;

        if (st == HEALTH_PASS) {
                c->fails = 0;
                if (c->passes < 1000000)
                        c->passes++;
                if (c->failing && c->passes >= pass_after)
                        c->failing = false;
        } else if (st == HEALTH_FAIL) {
                c->passes = 0;
                if (c->fails < 1000000)
                        c->fails++;
                if (!c->failing && c->fails >= fail_after)
                        c->failing = true;
        }
        return was != c->failing;
}
