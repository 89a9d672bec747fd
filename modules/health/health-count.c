/* The hysteresis of a check (see health-count.h). */
#include <stdio.h>
#include <string.h>

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

HealthStatus health_count_debounce(HealthDebounce *d, HealthStatus st, const char *code, unsigned need) {
        if (d->over || st == HEALTH_UNKNOWN)
                return st;
        if (st == HEALTH_PASS) {
                d->over = true;
                return st;
        }
        if (strcmp(d->code, code) != 0) {
                (void) snprintf(d->code, sizeof(d->code), "%s", code);
                d->seen = 0;
        }
        if (++d->seen >= need) {
                d->over = true;
                return st;
        }
        return HEALTH_UNKNOWN;
}
