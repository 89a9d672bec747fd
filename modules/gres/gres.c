/* gres: the node's GPUs, as Slurm wants them described.
 *
 * This file holds the module: its definition and its state's life (init,
 * fini, status).  The rest, a concern a file, shares the state of
 * gres-state.h:
 *
 *   gres-list.c      the method io.sunkd.Gres.List, and the calls that wait
 *                    for the first result (gres-wait.h)
 *   gres-discover.c  the job gres.discover and what is done with its result
 *   gres-events.c    the job gres.events: XID errors from NVML's events
 *   gres-kmsg-job.c  the job gres.kmsg: XID errors from the kernel log
 *   gres-xid-store.c the XID log both feed, and the job gres.save that keeps it
 *   gres-publish.c   the metrics and the fact gres.gpus
 *   gres-settings.c  the module's section of sunkd.yaml: keys, check, reload
 *
 * What needs no module context (NVML, /proc, gres.conf rendering, the
 * slurm.conf check, the XID log, the kernel log's records) is libgres,
 * which the unit tests link.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gres-state.h"
#include "gres-xid.h"
#include "sunkd/module.h"
#include "util/cleanup.h"

void gres_state_free(State *s) {
        if (!s)
                return;
        gres_list_stopping(s);
        free(s->unavailable);
        gres_settings_clear(s);
        json_object_put(s->last);
        gres_known_free(s);
        free(s->check_message);
        free(s->block_error);
        free(s->xids);
        free(s->xid_path);
        free(s->watch_error);
        json_object_put(s->xid_unwatched);
        free(s->kmsg_carry);
        free(s->kmsg_error);
        free(s);
}

static int gres_init(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state) {
        State *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->check = -1;
        s->watching = -1;
        s->kmsg_reading = -1;
        s->waiting.ctx = c;
        s->xids = calloc(1, sizeof(*s->xids));
        r = s->xids ? gres_settings_load(c, cfg, s) : -ENOMEM;
        if (r >= 0)
                r = gres_metrics_add(s);
        if (r >= 0)
                r = gres_xids_load(s);
        if (r >= 0) {
                const sunkd_job_spec spec = gres_discover_spec(s);
                r = c->api->job_add(c, &spec, &s->job);
        }
        if (r >= 0 && gres_watches_xids(s)) {
                const sunkd_job_spec spec = gres_events_spec(s);
                r = c->api->job_add(c, &spec, &s->events_job);
        }
        if (r >= 0 && gres_reads_kmsg(s)) {
                const sunkd_job_spec spec = gres_kmsg_spec(s);
                r = c->api->job_add(c, &spec, &s->kmsg_job);
        }
        if (r >= 0) {
                const sunkd_job_spec spec = gres_save_spec(s);
                r = c->api->job_add(c, &spec, &s->save_job);
        }
        if (r >= 0)
                r = gres_list_methods_add(s);
        if (r < 0) {
                gres_state_free(s);
                return r;
        }
        *ret_state = s;
        return 0;
}

static void gres_fini(void *state) {
        gres_xids_save_now(state);
        gres_state_free(state);
}

static int gres_status(void *state, struct json_object *out) {
        State *s = state;
        json_object *gpus = NULL;

        json_object_object_add(out, "node_name", json_object_new_string(s->conf.node_name));
        json_object_object_add(out, "runs", json_object_new_int64((int64_t) s->runs));
        json_object_object_add(out, "failures", json_object_new_int64((int64_t) s->failures));
        json_object_object_add(out, "changes", json_object_new_int64((int64_t) s->changes));
        if (s->last && json_object_object_get_ex(s->last, "gpus", &gpus)) {
                json_object_object_add(out, "source",
                                       json_object_new_string(json_member_string(s->last, "source") ?: ""));
                json_object_object_add(out, "gpus",
                                       json_object_new_int64((int64_t) json_object_array_length(gpus)));
                json_object_object_add(out, "gres",
                                       json_object_new_string(json_member_string(s->last, "gres") ?: ""));
                json_object_object_add(out, "discovered_usec",
                                       json_object_new_int64((int64_t) s->last_usec));
        }
        json_object_object_add(out, "list_waiting", json_object_new_int64((int64_t) s->waiting.n));
        json_object_object_add(out, "check",
                               json_object_new_string(s->check == 1   ? "match"
                                                      : s->check == 0 ? "mismatch"
                                                                      : "unknown"));
        if (s->check_message)
                json_object_object_add(out, "check_message", json_object_new_string(s->check_message));
        if (s->events_job) {
                json_object_object_add(out, "xid_watch",
                                       json_object_new_string(s->watching == 1   ? "watching"
                                                              : s->watching == 0 ? "failed"
                                                                                 : "starting"));
                if (s->watching == 1)
                        json_object_object_add(out, "xid_watched", json_object_new_int64(s->xid_watched));
                if (s->watch_error)
                        json_object_object_add(out, "xid_watch_error",
                                               json_object_new_string(s->watch_error));
                if (s->xid_unwatched && json_object_array_length(s->xid_unwatched))
                        json_object_object_add(out, "xid_unwatched", json_object_get(s->xid_unwatched));
        }
        if (s->kmsg_job) {
                json_object_object_add(out, "kmsg", json_object_new_string(s->conf.kmsg));
                json_object_object_add(out, "kmsg_read",
                                       json_object_new_string(s->kmsg_reading == 1   ? "reading"
                                                              : s->kmsg_reading == 0 ? "failed"
                                                                                     : "starting"));
                if (s->kmsg_error)
                        json_object_object_add(out, "kmsg_error", json_object_new_string(s->kmsg_error));
                json_object_object_add(out, "kmsg_records",
                                       json_object_new_int64((int64_t) s->kmsg_records));
                json_object_object_add(out, "kmsg_lost", json_object_new_int64((int64_t) s->kmsg_lost));
                json_object_object_add(out, "kmsg_overflows",
                                       json_object_new_int64((int64_t) s->kmsg_overflows));
                json_object_object_add(out, "kmsg_malformed",
                                       json_object_new_int64((int64_t) s->kmsg_malformed));
                if (s->kmsg_cursor.valid)
                        json_object_object_add(out, "kmsg_seq",
                                               json_object_new_int64((int64_t) s->kmsg_cursor.seq));
        }
        json_object_object_add(out, "xid_events", json_object_new_int64((int64_t) s->xids->total));
        json_object_object_add(out, "xid_seq", json_object_new_int64((int64_t) (s->xids->next_seq - 1)));
        return 0;
}

SUNKD_MODULE_DEFINE(.name = "gres", .version = PACKAGE_VERSION, .init = gres_init, .check = gres_check,
                    .reload = gres_reload, .fini = gres_fini, .status = gres_status);
