#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "gres-health.h"

void gres_health_unknown(GresHealth *h) {
        *h = (GresHealth){ .ecc_uncorrected_volatile = -1,
                           .ecc_uncorrected_aggregate = -1,
                           .retired_pages_pending = -1,
                           .remapped_rows_uncorrectable = -1,
                           .remap_pending = -1,
                           .remap_failure = -1,
                           .recovery_action = -1 };
}

/* nvml.h's nvmlDeviceGpuRecoveryAction_t, in words an admin acts on. */
static const char *recovery_action_to_string(int a) {
        static const char *const names[] = {
                [0] = "none",
                [1] = "reset the GPU",
                [2] = "reboot the node",
                [3] = "drain peer-to-peer traffic",
                [4] = "drain peer-to-peer traffic and reset the GPU",
                [5] = "recover the IMEX domain",
        };

        return a >= 0 && (size_t) a < sizeof(names) / sizeof(names[0]) ? names[a] : NULL;
}

static void add_int(json_object *o, const char *key, int64_t v) {
        if (v >= 0)
                json_object_object_add(o, key, json_object_new_int64(v));
}

json_object *gres_health_json(const GresHealth *h) {
        json_object *o;

        if (!h->read || !(o = json_object_new_object()))
                return NULL;
        add_int(o, "ecc_uncorrected_volatile", h->ecc_uncorrected_volatile);
        add_int(o, "ecc_uncorrected_aggregate", h->ecc_uncorrected_aggregate);
        add_int(o, "retired_pages_pending", h->retired_pages_pending);
        add_int(o, "remapped_rows_uncorrectable", h->remapped_rows_uncorrectable);
        add_int(o, "remap_pending", h->remap_pending);
        add_int(o, "remap_failure", h->remap_failure);
        add_int(o, "recovery_action", h->recovery_action);
        if (h->recovery_action >= 0 && recovery_action_to_string(h->recovery_action))
                json_object_object_add(
                        o, "recovery",
                        json_object_new_string(recovery_action_to_string(h->recovery_action)));
        return o;
}
