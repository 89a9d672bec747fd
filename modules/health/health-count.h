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

/* The debounce at start-up (`debounce:`): a code a site knows to be a false
 * positive at boot (NVLink down while the fabric comes up) counts only once
 * it was seen @need times in a row since the start.  Over for the check at
 * its first pass or first counted failure: later findings count at once. */
typedef struct HealthDebounce {
        char code[HEALTH_CODE_MAX]; /* the failure being observed */
        unsigned seen;              /* in a row */
        bool over;
} HealthDebounce;

/* health_count_debounce() - the status the hysteresis counts for a result
 * @st with @code, whose code needs @need (0 or 1: no debounce) observations
 * in a row: UNKNOWN for the first need - 1 of them at start-up, @st
 * otherwise. */
HealthStatus health_count_debounce(HealthDebounce *d, HealthStatus st, const char *code, unsigned need);
