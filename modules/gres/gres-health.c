#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "util/strv.h"

#include "gres-health.h"

void gres_health_unknown(GresHealth *h) {
        *h = (GresHealth) { .ecc_uncorrected_volatile = -1, .ecc_uncorrected_aggregate = -1,
                            .retired_pages_pending = -1, .remapped_rows_uncorrectable = -1,
                            .remap_pending = -1, .remap_failure = -1, .recovery_action = -1 };
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

char **gres_health_problems(const GresHealth *h) {
        char **l = calloc(1, sizeof(char *));
        int r = 0;

        if (!l || !h->read)
                return l;
        if (h->ecc_uncorrected_volatile > 0)
                r = strv_extendf(&l, "%lld uncorrectable ECC error(s) since the driver loaded",
                        (long long) h->ecc_uncorrected_volatile);
        if (r >= 0 && h->retired_pages_pending == 1)
                r = strv_extendf(&l, "a page retirement is pending (reset the GPU)");
        if (r >= 0 && h->remap_pending == 1)
                r = strv_extendf(&l, "a row remapping is pending (reset the GPU)");
        if (r >= 0 && h->remap_failure == 1)
                r = strv_extendf(&l, "a row remapping failed (the GPU needs service)");
        if (r >= 0 && h->recovery_action > 0)
                r = strv_extendf(&l, "the driver asks to %s", recovery_action_to_string(h->recovery_action) ?: "recover it");
        if (r < 0) {
                strv_free(l);
                return NULL;
        }
        return l;
}

static void add_int(json_object *o, const char *key, int64_t v) {
        if (v >= 0)
                json_object_object_add(o, key, json_object_new_int64(v));
}

json_object *gres_health_json(const GresHealth *h) {
        char **problems;
        json_object *o, *list;

        if (!h->read)
                return NULL;
        problems = gres_health_problems(h);
        o = json_object_new_object();
        list = json_object_new_array();
        if (!problems || !o || !list) {
                strv_free(problems);
                json_object_put(o);
                json_object_put(list);
                return NULL;
        }
        for (char **p = problems; *p; p++)
                json_object_array_add(list, json_object_new_string(*p));
        json_object_object_add(o, "healthy", json_object_new_boolean(!problems[0]));
        json_object_object_add(o, "problems", list);
        add_int(o, "ecc_uncorrected_volatile", h->ecc_uncorrected_volatile);
        add_int(o, "ecc_uncorrected_aggregate", h->ecc_uncorrected_aggregate);
        add_int(o, "retired_pages_pending", h->retired_pages_pending);
        add_int(o, "remapped_rows_uncorrectable", h->remapped_rows_uncorrectable);
        add_int(o, "remap_pending", h->remap_pending);
        add_int(o, "remap_failure", h->remap_failure);
        add_int(o, "recovery_action", h->recovery_action);
        if (h->recovery_action >= 0 && recovery_action_to_string(h->recovery_action))
                json_object_object_add(o, "recovery", json_object_new_string(recovery_action_to_string(h->recovery_action)));
        strv_free(problems);
        return o;
}
