/* gres.events: XID errors, watched through NVML's event API.
 *
 * The watch runs in a forked child too (SUNKD_JOB_CHILD): one window at a
 * time (xid_window), ended early by the first event so it is logged at once,
 * the next window 100 ms later.  NVML only delivers what happens while a set
 * is registered, so an XID in the gap between two windows is missed; the gap
 * is the child's start and nvmlInit.  The kernel log (gres-kmsg-job.c) has
 * no such gap; NVML's events count for what it does not name, and name the
 * MIG instance.  Both go into the one log (gres-xid-store.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "gres-nvml.h"
#include "gres-state.h"
#include "gres-xid.h"
#include "sunkd/module.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

#define XID_RUN_MAX 64 /* events one window hands back; a storm takes several */
#define XID_FIRST_WINDOW_USEC ((uint64_t) SUNKD_USEC_PER_SEC)

static int events_prepare(void *state, void **ret_input) {
        State *s = state;

        *ret_input = NULL;
        if (!s->use_proc)
                return 0;
        (void) s->ctx->api->job_set_message(s->events_job,
                                            "NVML hung during discovery: XID errors are not watched");
        return -EOPNOTSUPP;
}

/* Each event as the parent will read it: one the driver reports in a form
 * it would refuse (a UUID with a space, say) is dropped here. */
static void take_events(const GresXidWatch *w, json_object *events) {
        for (size_t i = 0; i < w->n; i++) {
                json_object *o = gres_xid_event_to_json(&w->events[i], 0);
                GresXidEvent e;

                if (!o || gres_xid_event_from_json(o, &e) < 0 || json_object_array_add(events, o) < 0)
                        json_object_put(o);
        }
}

static int events_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        State *s = state;
        _cleanup_free_ char *error = NULL;
        json_object *out = json_object_new_object(), *events = json_object_new_array(),
                    *unwatched = json_object_new_array();
        GresXidWatch w;
        int r;

        if (!out || !events || !unwatched) {
                json_object_put(out);
                json_object_put(events);
                json_object_put(unwatched);
                return -ENOMEM;
        }
        *ret_result = out;
        json_object_object_add(out, "events", events);
        json_object_object_add(out, "unwatched", unwatched);
        /* Until a window has shown that the watch works (at start, after a
         * failure), a short one: status and the log say so within a second,
         * not after xid_window. */
        r = gres_nvml_watch_xids(s->conf.nvml_library,
                                 s->watching == 1 ? s->conf.xid_window_usec
                                                  : MIN(s->conf.xid_window_usec, XID_FIRST_WINDOW_USEC),
                                 XID_RUN_MAX, &w, &error);
        if (r < 0) {
                json_object_object_add(out, "error", json_object_new_string(error ?: strerror(-r)));
                return r;
        }
        json_object_object_add(out, "watched", json_object_new_int64(w.watched));
        for (char **u = w.unwatched; u && *u; u++)
                json_object_array_add(unwatched, json_object_new_string(*u));
        take_events(&w, events);
        if (json_object_array_length(events) < w.n)
                json_object_object_add(
                        out, "dropped",
                        json_object_new_int64((int64_t) (w.n - json_object_array_length(events))));
        gres_xid_watch_done(&w);
        return 0;
}

/* Logged when whether and what is watched changes, not at every window. */
static void set_watching(State *s, json_object *res, int r) {
        const char *error = json_member_string(res, "error");
        json_object *unwatched = NULL, *w;
        unsigned watched = 0;

        if (r < 0) {
                _cleanup_free_ char *why = NULL;

                if (r == -ETIMEDOUT &&
                    asprintf(&why, "NVML did not answer within %llu s",
                             (unsigned long long) ((s->conf.xid_window_usec + s->conf.timeout_usec) /
                                                   SUNKD_USEC_PER_SEC)) < 0)
                        why = NULL;
                if (s->watching != 0 || strcmp(s->watch_error ?: "", why ?: error ?: strerror(-r)) != 0)
                        sunkd_log_warning(s->ctx, "Not watching for XID errors: %s.", why ?: error ?: strerror(-r));
                free(s->watch_error);
                s->watch_error = strdup(why ?: error ?: strerror(-r));
                s->watching = 0;
                (void) s->ctx->api->job_set_message(s->events_job, s->watch_error);
                return;
        }
        if (json_object_object_get_ex(res, "watched", &w))
                watched = (unsigned) json_object_get_int64(w);
        (void) json_object_object_get_ex(res, "unwatched", &unwatched);
        if (s->watching != 1 || watched != s->xid_watched)
                sunkd_log_notice(s->ctx, "Watching %u GPU(s) for XID errors%s%s.", watched,
                                 json_object_array_length(unwatched) ? "; cannot watch " : "",
                                 json_object_array_length(unwatched)
                                         ? json_object_to_json_string_ext(unwatched, JSON_C_TO_STRING_PLAIN)
                                         : "");
        s->watching = 1;
        s->watch_error = mfree(s->watch_error);
        s->xid_watched = watched;
        json_object_put(s->xid_unwatched);
        s->xid_unwatched = unwatched && json_object_is_type(unwatched, json_type_array)
                                   ? json_object_get(unwatched)
                                   : NULL;
}

static int events_done(void *state, int r, void *input, void *result) {
        State *s = state;
        json_object *res = result, *events;

        if (r == -ECANCELED) {
                json_object_put(res);
                return r;
        }
        set_watching(s, res, r);
        if (r >= 0 && json_object_object_get_ex(res, "events", &events) &&
            json_object_is_type(events, json_type_array) && json_object_array_length(events) > 0) {
                (void) gres_xids_add(s, events, GRES_XID_NVML);
                gres_xids_changed(s);
                gres_show_gpus(s);
        } else
                gres_xids_summary(s);
        if (r >= 0 && json_object_object_get_ex(res, "dropped", &events))
                sunkd_log_warning(s->ctx,
                                  "Dropped %" PRId64
                                  " XID event(s) of a GPU whose bus id or UUID NVML reports in a "
                                  "form sunkd does not keep.",
                                  json_object_get_int64(events));
        json_object_put(res);
        return r < 0 ? r : 0;
}

/* The job's timing follows the configuration; the rest of it is fixed. */
sunkd_job_spec gres_events_spec(const State *s) {
        return (sunkd_job_spec){
                .size = sizeof(sunkd_job_spec),
                .name = "gres.events",
                .interval_usec = 100 * SUNKD_USEC_PER_MSEC,
                .backoff_min_usec = 10 * SUNKD_USEC_PER_SEC,
                .backoff_max_usec = s->conf.interval_usec,
                .timeout_usec = s->conf.xid_window_usec + s->conf.timeout_usec,
                .flags = SUNKD_JOB_CHILD,
                .prepare = events_prepare,
                .work = events_work,
                .done = events_done,
        };
}

bool gres_watches_xids(const State *s) {
        return s->conf.xid_events && s->backend != BACKEND_PROC;
}
