/* The stable codes of health findings and the action each recommends.
 *
 * Every result a check gives carries a code ("mount-missing", "gpu-xid");
 * a failing one also a remedy from one vocabulary: none (no repair on the
 * node is known to help: a person looks), reset-gpu, reboot, replace (the
 * hardware) and contact-support.  The table here is the catalogue: each
 * code, its default remedy and one line of meaning, which sunkd.yaml(5)
 * lists and tests/integration/0002-docs.t holds to it.  The gpu check's
 * codes recommend what their finding does (the XID policy's action,
 * NVML's recovery action, the memory counter), not a code's default. */
#pragma once

#include <stdbool.h>

typedef enum HealthRemedy {
        HEALTH_REMEDY_NONE,
        HEALTH_REMEDY_RESET_GPU,
        HEALTH_REMEDY_REBOOT,
        HEALTH_REMEDY_REPLACE,
        HEALTH_REMEDY_CONTACT_SUPPORT,
        _HEALTH_REMEDY_MAX,
} HealthRemedy;

typedef struct HealthCode {
        const char *code;
        bool failing;        /* a code of a failing result (not a pass, not unknown) */
        HealthRemedy remedy; /* its default */
        const char *meaning;
} HealthCode;

/* Every code a check gives, NULL-terminated. */
extern const HealthCode health_codes[];

const char *health_code_remedy_to_string(HealthRemedy r);
int health_code_remedy_from_string(const char *s); /* -EINVAL for anything else */

/* health_code_find() - @code's row, NULL for one not in the table. */
const HealthCode *health_code_find(const char *code);

/* health_code_remedy() - @code's default remedy; none for one not in the
 * table (a script's own words). */
HealthRemedy health_code_remedy(const char *code);
