/* A check's hysteresis: how many results in a row make it failing, and
 * how many end that.  Pure, so the unit tests hold it apart from the jobs. */
#pragma once

#include <stdbool.h>

#include "checks/health-check.h"

typedef struct HealthCount {
        unsigned fails, passes; /* in a row */
        bool failing;
} HealthCount;

/* health_count_feed() - count @st: fail_after failures in a row make the
 * check failing, pass_after passes in a row end it; UNKNOWN changes
 * nothing.  Returns whether `failing` changed. */
bool health_count_feed(HealthCount *c, HealthStatus st, unsigned fail_after, unsigned pass_after);
