/* gres.events: XID errors, watched through NVML's event API.
 *
 * The watch runs in a forked child too (SUNKD_JOB_CHILD): one window at a
 * time (xid_window), ended early by the first event so it is logged at once,
 * the next window 100 ms later.  NVML only delivers what happens while a set
 * is registered, so an XID in the gap between two windows is missed; the gap
 * is the child's start and nvmlInit.  The events are kept in a bounded log
 * (gres-xid.h), saved by the child in the state directory so a restart or
 * reload keeps them, and laid over each GPU's health where the List, the fact
 * and the metrics show it (gres-publish.c).
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
#include "util/fileio.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

#define XID_RUN_MAX 64          /* events one window hands back; a storm takes several */
#define XID_FIRST_WINDOW_USEC ((uint64_t) SUNKD_USEC_PER_SEC)
#define XID_LOGGED_PER_RUN 8    /* each logged up to this, then one line for the rest */
#define XID_FILE "xid-events.json"
#define XID_FILE_MAX (256 * 1024)

static int events_prepare(void *state, void **ret_input) {
        State *s = state;

        *ret_input = NULL;
        if (!s->use_proc)
                return 0;
        (void) s->ctx->api->job_set_message(s->events_job, "NVML hung during discovery: XID errors are not watched");
        return -EOPNOTSUPP;
}

/* In the child: the log with this window's events (take_events() added
 * them to the child's own copy of the state), written where the next start
 * reads it. */
static void save_xids(State *s, json_object *out) {
        _cleanup_json_ json_object *log = gres_xid_log_to_json(s->xids);
        const char *text = log ? json_object_to_json_string_ext(log, JSON_C_TO_STRING_PLAIN) : NULL;
        int r;

        r = text ? fileio_write_atomic(s->xid_path, text, strlen(text), 0600, (uid_t) -1, (gid_t) -1) : -ENOMEM;
        if (r < 0)
                json_object_object_add(out, "log_error", json_object_new_string(strerror(-r)));
}

/* Each event as the parent and the next start will read it: one the driver
 * reports in a form they would refuse (a UUID with a space, say) is dropped
 * here, so it can neither differ between the two nor spoil the saved log. */
static size_t take_events(State *s, const GresXidWatch *w, json_object *events) {
        size_t taken = 0;

        for (size_t i = 0; i < w->n; i++) {
                json_object *o = gres_xid_event_to_json(&w->events[i]);
                GresXidEvent e;

                if (!o || gres_xid_event_from_json(o, &e) < 0 || json_object_array_add(events, o) < 0) {
                        json_object_put(o);
                        continue;
                }
                gres_xid_log_add(s->xids, &e);
                taken++;
        }
        return taken;
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
        r = gres_nvml_watch_xids(s->conf.nvml_library, s->watching == 1 ? s->conf.xid_window_usec :
                                 MIN(s->conf.xid_window_usec, XID_FIRST_WINDOW_USEC), XID_RUN_MAX, &w, &error);
        if (r < 0) {
                json_object_object_add(out, "error", json_object_new_string(error ?: strerror(-r)));
                return r;
        }
        json_object_object_add(out, "watched", json_object_new_int64(w.watched));
        for (char **u = w.unwatched; u && *u; u++)
                json_object_array_add(unwatched, json_object_new_string(*u));
        if (take_events(s, &w, events) > 0 && s->xid_path)
                save_xids(s, out);
        if (json_object_array_length(events) < w.n)
                json_object_object_add(out, "dropped", json_object_new_int64((int64_t) (w.n - json_object_array_length(events))));
        gres_xid_watch_done(&w);
        return 0;
}

static void log_xid(State *s, const GresXidEvent *e) {
        bool critical = gres_xid_is_critical(e->xid, s->critical, s->n_critical);
        char mig[64] = "";

        if (e->gpu_instance != GRES_XID_NONE)
                snprintf(mig, sizeof(mig), " (GPU instance %u)", e->gpu_instance);

        sunkd_log(s->ctx, critical ? SUNKD_LOG_WARNING : SUNKD_LOG_NOTICE, 0, "GPU %s at %s%s: XID %llu (%s)%s.", e->uuid,
                  e->bus_id, mig, (unsigned long long) e->xid, gres_xid_describe(e->xid) ?: "not in the catalogue",
                  critical ? "; the GPU counts as unhealthy for xid_hold" : "");
}

/* Logged when whether and what is watched changes, not at every window. */
static void set_watching(State *s, json_object *res, int r) {
        const char *error = json_member_string(res, "error");
        json_object *unwatched = NULL, *w;
        unsigned watched = 0;

        if (r < 0) {
                _cleanup_free_ char *why = NULL;

                if (r == -ETIMEDOUT && asprintf(&why, "NVML did not answer within %llu s", (unsigned long long)
                                                ((s->conf.xid_window_usec + s->conf.timeout_usec) / SUNKD_USEC_PER_SEC)) < 0)
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
                                 json_object_array_length(unwatched) ?
                                 json_object_to_json_string_ext(unwatched, JSON_C_TO_STRING_PLAIN) : "");
        s->watching = 1;
        s->watch_error = mfree(s->watch_error);
        s->xid_watched = watched;
        json_object_put(s->xid_unwatched);
        s->xid_unwatched = unwatched && json_object_is_type(unwatched, json_type_array) ? json_object_get(unwatched) : NULL;
}

static size_t add_xids(State *s, json_object *events) {
        size_t added = 0, bad = 0;

        for (size_t i = 0; i < json_object_array_length(events); i++) {
                GresXidEvent e;
                const char *labels[3] = { NULL };

                if (gres_xid_event_from_json(json_object_array_get_idx(events, i), &e) < 0) {
                        bad++;
                        continue;
                }
                gres_xid_log_add(s->xids, &e);
                if (added++ < XID_LOGGED_PER_RUN)
                        log_xid(s, &e);
                labels[0] = e.uuid;
                labels[1] = e.bus_id;
                (void) s->ctx->api->metric_add_value(s->m_xid, 1, labels);
                (void) s->ctx->api->metric_set(s->m_last_xid, (double) e.xid, labels);
        }
        if (added > XID_LOGGED_PER_RUN)
                sunkd_log_warning(s->ctx, "%zu more XID errors in this window; io.sunkd.Gres.List shows the last of each GPU.",
                                  added - XID_LOGGED_PER_RUN);
        if (bad)
                sunkd_log_error(s->ctx, "The XID watcher handed back %zu malformed event(s); ignored.", bad);
        return added;
}

static int events_done(void *state, int r, void *input, void *result) {
        State *s = state;
        json_object *res = result, *events;
        size_t added = 0;

        if (r == -ECANCELED) {
                json_object_put(res);
                return r;
        }
        set_watching(s, res, r);
        if (r >= 0 && json_object_object_get_ex(res, "events", &events) && json_object_is_type(events, json_type_array))
                added = add_xids(s, events);
        if (r >= 0 && json_object_object_get_ex(res, "dropped", &events))
                sunkd_log_warning(s->ctx, "Dropped %" PRId64 " XID event(s) of a GPU whose bus id or UUID NVML reports in a "
                                  "form sunkd does not keep.", json_object_get_int64(events));
        if (json_member_string(res, "log_error"))
                sunkd_log_error(s->ctx, "Failed to save the XID log to '%s': %s.", s->xid_path,
                                json_member_string(res, "log_error"));
        if (added || gres_xid_active(s->xids, s->critical, s->n_critical, now_usec(CLOCK_REALTIME), s->conf.xid_hold_usec) !=
                             s->xid_active)
                gres_show_gpus(s);
        json_object_put(res);
        return r < 0 ? r : 0;
}

/* The log the last run saved; a file that is not one is logged and set aside. */
int gres_xids_load(State *s) {
        const char *dir = s->ctx->api->state_dir(s->ctx);
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *o = NULL;
        size_t len;
        int r;

        if (!dir)
                return 0;
        if (asprintf(&s->xid_path, "%s/" XID_FILE, dir) < 0) {
                s->xid_path = NULL;
                return -ENOMEM;
        }
        r = fileio_read(s->xid_path, XID_FILE_MAX, &text, &len);
        if (r == -ENOENT)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && strlen(text) == len)
                o = json_tokener_parse(text);
        if (r >= 0)
                r = o ? gres_xid_log_from_json(o, s->xids) : -EBADMSG;
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                sunkd_log_warning(s->ctx, "Cannot take the XID log from '%s' (%s); it starts empty and the file is "
                                  "replaced at the next event.", s->xid_path, r == -EBADMSG ? "not a valid log" : strerror(-r));
        return 0;
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
