/* What the module shows of the GPUs: its metrics and the fact gres.gpus
 * (its shape is sunkd(8)'s FACTS: a contract, held by 0277-gres-fact.t),
 * from the last discovery and the XID log. */
#include <errno.h>
#include <time.h>

#include <json-c/json.h>

#include "gres-state.h"
#include "gres-xid.h"
#include "sunkd/module.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

int gres_metrics_add(State *s) {
        const sunkd_metric_def defs[] = {
                { { sizeof(sunkd_metric_spec),
                    "gres_gpus",
                    "GPUs found by the last discovery.",
                    SUNKD_METRIC_GAUGE,
                    { NULL } },
                  &s->m_gpus },
                { { sizeof(sunkd_metric_spec),
                    "gres_gpu_memory_bytes",
                    "Memory of each GPU.",
                    SUNKD_METRIC_GAUGE,
                    { "uuid", "bus_id" } },
                  &s->m_memory },
                { { sizeof(sunkd_metric_spec),
                    "gres_discovery_failures_total",
                    "Discoveries that failed.",
                    SUNKD_METRIC_COUNTER,
                    { NULL } },
                  &s->m_failures },
                { { sizeof(sunkd_metric_spec),
                    "gres_gpu_changes_total",
                    "GPUs lost or added between discoveries.",
                    SUNKD_METRIC_COUNTER,
                    { NULL } },
                  &s->m_changes },
                { { sizeof(sunkd_metric_spec),
                    "gres_check",
                    "1 if the GPUs match slurm.conf's Gres=, 0 if not, -1 unknown.",
                    SUNKD_METRIC_GAUGE,
                    { NULL } },
                  &s->m_check },
                { { sizeof(sunkd_metric_spec),
                    "gres_gpu_ecc_uncorrected",
                    "Uncorrectable ECC errors since the driver loaded.",
                    SUNKD_METRIC_GAUGE,
                    { "uuid", "bus_id" } },
                  &s->m_ecc },
                { { sizeof(sunkd_metric_spec),
                    "gres_gpu_xid_errors_total",
                    "XID errors NVML reported for the GPU.",
                    SUNKD_METRIC_COUNTER,
                    { "uuid", "bus_id" } },
                  &s->m_xid },
                { { sizeof(sunkd_metric_spec),
                    "gres_gpu_last_xid",
                    "The GPU's last XID error.",
                    SUNKD_METRIC_GAUGE,
                    { "uuid", "bus_id" } },
                  &s->m_last_xid },
                { { sizeof(sunkd_metric_spec),
                    "gres_gpu_recovery_action",
                    "NVML's GPU recovery action: 0 none, 1 reset, 2 reboot, 3 drain P2P, 4 drain and reset, "
                    "5 recover IMEX.",
                    SUNKD_METRIC_GAUGE,
                    { "uuid", "bus_id" } },
                  &s->m_recovery },
        };

        return sunkd_metrics_add(s->ctx, defs, sizeof(defs) / sizeof(defs[0]));
}

/* A GPU's metric labels: its UUID and bus id. */
static void gpu_labels(json_object *gpu, const char *labels[static 3]) {
        labels[0] = json_member_string(gpu, "uuid") ?: "";
        labels[1] = json_member_string(gpu, "bus_id") ?: "";
        labels[2] = NULL;
}

/* A GPU that is gone takes its series along: none lingers with its last value. */
void gres_forget_gpu_metrics(State *s, json_object *gpu) {
        sunkd_metric *per_gpu[] = { s->m_memory, s->m_ecc, s->m_recovery, s->m_xid, s->m_last_xid };
        const char *labels[3];

        gpu_labels(gpu, labels);
        for (size_t i = 0; i < ELEMENTSOF(per_gpu); i++)
                (void) s->ctx->api->metric_remove(per_gpu[i], labels);
}

static json_object *fact_gpu(json_object *o) {
        json_object *e = json_object_new_object(), *h, *a;

        if (!e)
                return NULL;
        json_object_object_add(e, "uuid", json_object_new_string(json_member_string(o, "uuid") ?: ""));
        json_object_object_add(e, "bus_id", json_object_new_string(json_member_string(o, "bus_id") ?: ""));
        json_object_object_add(e, "type", json_object_new_string(json_member_string(o, "type") ?: ""));
        if (json_object_object_get_ex(o, "health", &h)) {
                if (json_object_object_get_ex(h, "recovery_action", &a))
                        json_object_object_add(e, "recovery_action", json_object_get(a));
                json_object_object_add(e, "health", json_object_get(h));
        }
        if (json_object_object_get_ex(o, "telemetry", &h))
                json_object_object_add(e, "telemetry", json_object_get(h));
        return e;
}

static bool has_uuid(json_object *gpus, const char *uuid) {
        for (size_t i = 0; i < json_object_array_length(gpus); i++)
                if (streq(json_member_string(json_object_array_get_idx(gpus, i), "uuid") ?: "", uuid))
                        return true;
        return false;
}

/* The GPUs of the discovery that found the most that this one did not. */
static json_object *fact_missing(State *s, json_object *gpus) {
        json_object *list = json_object_new_array();

        for (size_t i = 0; list && i < s->n_known; i++) {
                json_object *m;

                if (has_uuid(gpus, s->known[i].uuid ?: ""))
                        continue;
                m = json_object_new_object();
                if (!m || json_object_array_add(list, m) < 0) {
                        json_object_put(m);
                        json_object_put(list);
                        return NULL;
                }
                json_object_object_add(m, "uuid", json_object_new_string(s->known[i].uuid ?: ""));
                json_object_object_add(m, "bus_id", json_object_new_string(s->known[i].bus_id ?: ""));
                json_object_object_add(m, "type", json_object_new_string(s->known[i].type ?: ""));
        }
        return list;
}

static void fact_xids(State *s, json_object *f) {
        json_object_object_add(f, "xid_seq", json_object_new_int64((int64_t) (s->xids->next_seq - 1)));
        json_object_object_add(f, "xid_total", json_object_new_int64((int64_t) s->xids->total));
        json_object_object_add(f, "xid_events", gres_xid_log_tail_json(s->xids, XID_FACT_MAX));
}

/* gres.gpus: what the health module's gpu check reads. */
static void publish_fact(State *s, json_object *gpus) {
        json_object *f = json_object_new_object(), *list = json_object_new_array();
        int r;

        if (!f || !list) {
                json_object_put(f);
                json_object_put(list);
                return;
        }
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i), *e = fact_gpu(o);
                if (!e)
                        break;
                json_object_array_add(list, e);
        }
        json_object_object_add(f, "found", json_object_new_int64((int64_t) json_object_array_length(gpus)));
        json_object_object_add(f, "expected", json_object_new_int64((int64_t) s->n_known));
        json_object_object_add(f, "check", s->check < 0 ? NULL : json_object_new_boolean(s->check == 1));
        if (s->check_message)
                json_object_object_add(f, "check_message", json_object_new_string(s->check_message));
        json_object_object_add(f, "gpus", list);
        json_object_object_add(f, "missing", fact_missing(s, gpus));
        json_object_object_add(f, "read_usec", json_object_new_int64((int64_t) s->read_usec));
        json_object_object_add(f, "boot_id", json_object_new_string(s->boot_id));
        fact_xids(s, f);
        if (s->last && json_member_string(s->last, "topology_block"))
                json_object_object_add(
                        f, "topology_block",
                        json_object_new_string(json_member_string(s->last, "topology_block")));
        r = s->ctx->api->fact_publish(s->ctx, "gres.gpus", f);
        if (r < 0)
                sunkd_log_error_errno(s->ctx, r, "Failed to publish the fact gres.gpus: %m");
}

static void update_metrics(State *s, json_object *gpus) {
        const sunkd_host_api *api = s->ctx->api;

        (void) api->metric_set(s->m_gpus, (double) json_object_array_length(gpus), NULL);
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i), *m, *h;
                const char *labels[3];

                gpu_labels(o, labels);

                if (json_object_object_get_ex(o, "memory", &m))
                        (void) api->metric_set(s->m_memory, (double) json_object_get_int64(m), labels);
                if (json_object_object_get_ex(o, "health", &h) &&
                    json_object_object_get_ex(h, "ecc_uncorrected_volatile", &m))
                        (void) api->metric_set(s->m_ecc, (double) json_object_get_int64(m), labels);
                if (json_object_object_get_ex(o, "health", &h) &&
                    json_object_object_get_ex(h, "recovery_action", &m))
                        (void) api->metric_set(s->m_recovery, (double) json_object_get_int64(m), labels);
        }
}

/* Each GPU of @gpus (a copy the caller owns) with its XID events. */
int gres_apply_xids(State *s, json_object *gpus) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < json_object_array_length(gpus); i++)
                r = gres_xid_show(s->xids, json_object_array_get_idx(gpus, i));
        return r;
}

/* The metrics and the fact, from the last discovery and the XID log. */
void gres_show_gpus(State *s) {
        json_object *gpus;

        if (!s->last || !json_object_object_get_ex(s->last, "gpus", &gpus))
                return;
        gres_xids_name(s);
        update_metrics(s, gpus);
        publish_fact(s, gpus);
}
