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

void gres_health_telemetry_unknown(GresTelemetry *t) {
        *t = (GresTelemetry){ .temperature = -1,
                              .temperature_slowdown = -1,
                              .temperature_shutdown = -1,
                              .power_mw = -1,
                              .power_limit_mw = -1,
                              .clocks_event_reasons = -1,
                              .persistence_mode = -1 };
}

/* nvml.h's nvmlClocksEventReason* bits, by the names the gpu check's
 * fail_clocks_events takes. */
static const struct {
        uint64_t bit;
        const char *name;
} clocks_events[] = {
        { 0x1, "gpu_idle" },
        { 0x2, "applications_clocks_setting" },
        { 0x4, "sw_power_cap" },
        { 0x8, "hw_slowdown" },
        { 0x10, "sync_boost" },
        { 0x20, "sw_thermal_slowdown" },
        { 0x40, "hw_thermal_slowdown" },
        { 0x80, "hw_power_brake_slowdown" },
        { 0x100, "display_clock_setting" },
};

static json_object *clocks_events_json(uint64_t reasons) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < sizeof(clocks_events) / sizeof(clocks_events[0]); i++)
                if ((reasons & clocks_events[i].bit) &&
                    json_object_array_add(a, json_object_new_string(clocks_events[i].name)) < 0) {
                        json_object_put(a);
                        return NULL;
                }
        return a;
}

static json_object *links_json(const GresTelemetry *t) {
        json_object *a = json_object_new_array();

        for (unsigned i = 0; a && i < t->n_links; i++) {
                const GresNvLink *l = &t->links[i];
                json_object *o = json_object_new_object();

                if (!o || json_object_array_add(a, o) < 0) {
                        json_object_put(o);
                        json_object_put(a);
                        return NULL;
                }
                json_object_object_add(o, "link", json_object_new_int64(i));
                if (l->up >= 0)
                        json_object_object_add(o, "up", json_object_new_boolean(l->up));
                add_int(o, "replay_errors", l->replay);
                add_int(o, "recovery_errors", l->recovery);
                add_int(o, "crc_flit_errors", l->crc_flit);
                add_int(o, "crc_data_errors", l->crc_data);
        }
        return a;
}

json_object *gres_health_telemetry_json(const GresTelemetry *t) {
        json_object *o;

        if (!t->read || !(o = json_object_new_object()))
                return NULL;
        add_int(o, "temperature", t->temperature);
        add_int(o, "temperature_slowdown", t->temperature_slowdown);
        add_int(o, "temperature_shutdown", t->temperature_shutdown);
        add_int(o, "power_mw", t->power_mw);
        add_int(o, "power_limit_mw", t->power_limit_mw);
        if (t->clocks_event_reasons >= 0) {
                add_int(o, "clocks_event_reasons", t->clocks_event_reasons);
                json_object_object_add(o, "clocks_events",
                                       clocks_events_json((uint64_t) t->clocks_event_reasons));
        }
        add_int(o, "persistence_mode", t->persistence_mode);
        if (t->n_links > 0)
                json_object_object_add(o, "links", links_json(t));
        return o;
}
