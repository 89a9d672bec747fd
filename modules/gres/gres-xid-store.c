/* The XID log as the module keeps it: the events either source reports
 * taken in (numbered, storms folded, both sources' reports of one event
 * matched: gres-xid.h), logged with storms summed up, counted in the
 * metrics, and saved in the state directory with
 * where the kernel log was read up to, so that a restart goes on from there.
 *
 * One writer: the job gres.save writes the file on a worker, from a copy
 * taken on the loop: at once for a new entry, and SAVE_INTERVAL after what
 * else changed (repeats counted, the kernel log read further: a storm's
 * every batch is not worth a write and a line in the log); at a stop, fini
 * writes what changed since.  With nothing to write it runs once an hour.  Nothing is judged here: the
 * health module does that.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "gres-state.h"
#include "gres-xid.h"
#include "sunkd/module.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

#define XID_FILE "xid-events.json"
#define XID_FILE_MAX (256 * 1024)
#define XID_LOGGED_PER_RUN 8 /* new entries logged one by one per run, then one line for the rest */
#define STORM_SUMMARY_USEC (10 * USEC_PER_SEC) /* repeats are summed up in one line at most this often */
#define STORM_SHOWN 4                          /* entries a summary names */
#define SAVE_INTERVAL_USEC (10 * USEC_PER_SEC)
#define SAVE_IDLE_USEC (3600 * USEC_PER_SEC)

const char *gres_uuid_of(const State *s, const char *bus) {
        const char *any = "";

        /* the whole GPU's, as the driver names it, before a MIG instance's */
        for (size_t i = 0; i < s->n_kmsg_gpus; i++)
                if (streq(s->kmsg_gpus[i].bus_id, bus))
                        return s->kmsg_gpus[i].uuid;
        for (size_t i = 0; i < s->n_known; i++)
                if (streq(s->known[i].bus_id ?: "", bus)) {
                        if (strncmp(s->known[i].uuid ?: "", "GPU-", 4) == 0)
                                return s->known[i].uuid;
                        any = s->known[i].uuid ?: "";
                }
        return any;
}

void gres_xids_name(State *s) {
        for (size_t i = 0; i < s->xids->n; i++) {
                GresXidEvent *e = gres_xid_log_at(s->xids, i);
                const char *uuid;

                if (*e->uuid || !*(uuid = gres_uuid_of(s, e->bus_id)))
                        continue;
                snprintf(e->uuid, sizeof(e->uuid), "%s", uuid);
                s->xid_dirty = true;
        }
}

static void log_entry(State *s, const GresXidEvent *e, uint64_t count) {
        char mig[64] = "", times[48] = "";
        const char *what = gres_xid_describe(e->xid);

        if (e->gpu_instance != GRES_XID_NONE)
                snprintf(mig, sizeof(mig), " (GPU instance %u)", e->gpu_instance);
        if (count > 1)
                snprintf(times, sizeof(times), ", %" PRIu64 " times", count);
        sunkd_log_notice(s->ctx, "GPU %s%sat %s%s: XID %" PRIu64 "%s%s%s%s.", e->uuid, *e->uuid ? " " : "",
                         e->bus_id, mig, e->xid, what ? " (" : "", what ?: "", what ? ")" : "", times);
}

static void count_metrics(State *s, const GresXidEvent *e, uint64_t count) {
        const char *labels[3] = { e->uuid, e->bus_id, NULL };

        (void) s->ctx->api->metric_add_value(s->m_xid, (double) count, labels);
        (void) s->ctx->api->metric_set(s->m_last_xid, (double) e->xid, labels);
}

/* One event of a child's answer: validated as the log file is, the GPU's
 * UUID filled in where the source did not name it (the kernel log). */
static int take(State *s, json_object *o, GresXidEvent *e) {
        if (gres_xid_event_from_json(o, e) < 0 || e->seq != 0)
                return -EBADMSG;
        if (!*e->uuid)
                snprintf(e->uuid, sizeof(e->uuid), "%s", gres_uuid_of(s, e->bus_id));
        strcpy(e->boot_id, s->boot_id);
        return 0;
}

size_t gres_xids_add(State *s, json_object *events, GresXidSource source) {
        size_t added = 0, bad = 0;

        for (size_t i = 0; i < json_object_array_length(events); i++) {
                GresXidEvent e, *entry;
                uint64_t before;

                if (take(s, json_object_array_get_idx(events, i), &e) < 0) {
                        bad++;
                        continue;
                }
                before = s->xids->total;
                switch (gres_xid_log_add(s->xids, &e, e.count, source, &entry)) {
                case GRES_XID_ADDED_NEW:
                        /* past the first few, the line below names them */
                        if (added++ < XID_LOGGED_PER_RUN)
                                log_entry(s, entry, entry->count);
                        entry->reported = entry->count;
                        break;
                case GRES_XID_ADDED_FOLDED:
                case GRES_XID_ADDED_MATCHED:
                        break;
                }
                if (s->xids->total > before)
                        count_metrics(s, entry, s->xids->total - before);
        }
        if (added > XID_LOGGED_PER_RUN)
                sunkd_log_notice(
                        s->ctx,
                        "%zu more GPU and XID pairs than logged here; io.sunkd.Gres.List shows them.",
                        added - XID_LOGGED_PER_RUN);
        if (bad)
                sunkd_log_error(s->ctx, "The %s reader handed back %zu malformed event(s); ignored.",
                                source == GRES_XID_KMSG ? "kernel log" : "XID watcher", bad);
        if (added) {
                (void) s->ctx->api->job_trigger(s->job, "a new XID error: the counters are read again");
                (void) s->ctx->api->job_trigger(s->save_job, "a new XID error");
        }
        return added;
}

static int by_unreported(const void *a, const void *b) {
        const GresXidEvent *x = *(const GresXidEvent *const *) a, *y = *(const GresXidEvent *const *) b;
        uint64_t nx = x->count - x->reported, ny = y->count - y->reported;

        return nx < ny ? 1 : nx > ny ? -1 : 0;
}

static bool storm_pending(const State *s) {
        for (size_t i = 0; i < s->xids->n; i++)
                if (gres_xid_log_get(s->xids, i)->count > gres_xid_log_get(s->xids, i)->reported)
                        return true;
        return false;
}

/* gres.save runs within SAVE_INTERVAL while something waits for it (a
 * change to write, repeats to sum up), else once an hour. */
static void save_when(State *s) {
        bool soon = s->xid_dirty || storm_pending(s);

        if (s->save_job)
                (void) s->ctx->api->job_set_interval(s->save_job, soon ? SAVE_INTERVAL_USEC : SAVE_IDLE_USEC,
                                                     0);
}

/* The repeats not logged yet, in one line: the entries with the most. */
static void log_storm(State *s, uint64_t now) {
        GresXidEvent *top[GRES_XID_LOG_MAX];
        size_t n = 0;
        uint64_t repeats = 0;
        _cleanup_free_ char *line = NULL;
        size_t len = 0;
        FILE *f;

        for (size_t i = 0; i < s->xids->n; i++) {
                GresXidEvent *e = gres_xid_log_at(s->xids, i);
                if (e->count > e->reported) {
                        top[n++] = e;
                        repeats += e->count - e->reported;
                }
        }
        if (n == 0 || (s->storm_logged_usec && now - s->storm_logged_usec < STORM_SUMMARY_USEC &&
                       now >= s->storm_logged_usec))
                return;
        qsort(top, n, sizeof(top[0]), by_unreported);
        f = open_memstream(&line, &len);
        if (!f)
                return;
        for (size_t i = 0; i < MIN(n, (size_t) STORM_SHOWN); i++)
                fprintf(f, "%sXID %" PRIu64 " on %s%s(pci %s) %" PRIu64 " more, %" PRIu64 " in all",
                        i ? "; " : "", top[i]->xid, top[i]->uuid, *top[i]->uuid ? " " : "", top[i]->bus_id,
                        top[i]->count - top[i]->reported, top[i]->count);
        if (n > STORM_SHOWN)
                fprintf(f, "; and %zu more GPU and XID pairs", n - STORM_SHOWN);
        if (fclose(f) != 0)
                return;
        sunkd_log_warning(s->ctx, "XID storm: %" PRIu64 " repeat(s) folded into the log: %s.", repeats,
                          line);
        for (size_t i = 0; i < n; i++)
                top[i]->reported = top[i]->count;
        s->storm_logged_usec = now;
}

void gres_xids_summary(State *s) {
        log_storm(s, now_usec(CLOCK_REALTIME));
        save_when(s);
}

void gres_xids_changed(State *s) {
        log_storm(s, now_usec(CLOCK_REALTIME));
        s->xid_dirty = true;
        save_when(s);
}

/* ---- The file -------------------------------------------------------------- */

static json_object *store_json(const State *s) {
        json_object *o = gres_xid_log_to_json(s->xids), *k;

        if (!o || !s->kmsg_cursor.valid)
                return o;
        k = json_object_new_object();
        if (!k) {
                json_object_put(o);
                return NULL;
        }
        json_object_object_add(k, "path", json_object_new_string(s->conf.kmsg));
        json_object_object_add(k, "boot_id", json_object_new_string(s->boot_id));
        json_object_object_add(k, "seq", json_object_new_int64((int64_t) s->kmsg_cursor.seq));
        json_object_object_add(o, "kmsg", k);
        return o;
}

static char *store_text(const State *s) {
        _cleanup_json_ json_object *o = store_json(s);

        return o ? strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) : NULL;
}

typedef struct SaveInput {
        char *path;
        char *text;
} SaveInput;

static SaveInput *save_input_free(SaveInput *in) {
        if (in) {
                free(in->path);
                free(in->text);
                free(in);
        }
        return NULL;
}

static int save_prepare(void *state, void **ret_input) {
        State *s = state;
        SaveInput *in;

        *ret_input = NULL;
        if (!s->xid_path || !s->xid_dirty)
                return -EALREADY;
        in = calloc(1, sizeof(*in));
        if (!in || !(in->path = strdup(s->xid_path)) || !(in->text = store_text(s))) {
                save_input_free(in);
                return -ENOMEM;
        }
        s->xid_dirty = false;
        *ret_input = in;
        return 0;
}

static int save_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        SaveInput *in = input;

        *ret_result = NULL;
        return fileio_write_atomic(in->path, in->text, strlen(in->text), 0600, (uid_t) -1, (gid_t) -1);
}

static int save_done(void *state, int r, void *input, void *result) {
        State *s = state;

        save_input_free(input);
        if (r < 0 && r != -EALREADY) {
                s->xid_dirty = true; /* written at the next run, or at the stop */
                if (r != -ECANCELED)
                        sunkd_log_error_errno(s->ctx, r, "Failed to save the XID log to '%s': %m",
                                              s->xid_path);
        }
        /* repeats that came after the last summary are summed up here once
         * it is due, even if nothing else comes */
        gres_xids_summary(s);
        return r == -EALREADY ? 0 : r;
}

sunkd_job_spec gres_save_spec(const State *s) {
        return (sunkd_job_spec){
                .size = sizeof(sunkd_job_spec),
                .name = "gres.save",
                .interval_usec = SAVE_IDLE_USEC,
                .timeout_usec = s->conf.timeout_usec,
                .backoff_min_usec = SUNKD_USEC_PER_SEC,
                .backoff_max_usec = s->conf.interval_usec,
                .prepare = save_prepare,
                .work = save_work,
                .done = save_done,
        };
}

/* At a stop, on the loop: the last changes, which no job will write now. */
void gres_xids_save_now(State *s) {
        _cleanup_free_ char *text = NULL;
        int r;

        if (!s->xid_path || !s->xid_dirty)
                return;
        text = store_text(s);
        r = text ? fileio_write_atomic(s->xid_path, text, strlen(text), 0600, (uid_t) -1, (gid_t) -1)
                 : -ENOMEM;
        if (r < 0)
                sunkd_log_error_errno(s->ctx, r, "Failed to save the XID log to '%s': %m", s->xid_path);
        else
                s->xid_dirty = false;
}

/* This boot's id, under the root (a test's or a container's); "" when it
 * cannot be read, and every boot then looks like this one. */
static void read_boot_id(State *s) {
        const char *root = s->conf.root && strcmp(s->conf.root, "/") != 0 ? s->conf.root : "";
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t len;

        s->boot_id[0] = '\0';
        if (asprintf(&path, "%s/proc/sys/kernel/random/boot_id", root) < 0 ||
            fileio_read(path, 64, &text, &len) < 0)
                return;
        len = strcspn(text, "\n");
        if (len == 0 || len >= sizeof(s->boot_id))
                return;
        for (size_t i = 0; i < len; i++)
                if (text[i] <= ' ' || text[i] > '~')
                        return;
        memcpy(s->boot_id, text, len);
        s->boot_id[len] = '\0';
}

/* Where the kernel log was read up to: for the same file in this boot only. */
static int take_cursor(State *s, json_object *o) {
        json_object *k, *seq;
        const char *path, *boot;

        if (!json_object_object_get_ex(o, "kmsg", &k))
                return 0;
        path = json_member_string(k, "path");
        boot = json_member_string(k, "boot_id");
        if (!path || !boot || !json_object_object_get_ex(k, "seq", &seq) ||
            !json_object_is_type(seq, json_type_int) || json_object_get_int64(seq) < 0)
                return -EBADMSG;
        if (!streq(path, s->conf.kmsg))
                return 0;
        if (!streq(boot, s->boot_id)) {
                sunkd_log_info(
                        s->ctx,
                        "The node booted since the kernel log was last read: reading it from its start.");
                return 0;
        }
        s->kmsg_cursor = (KmsgCursor){ .valid = true, .seq = (uint64_t) json_object_get_int64(seq) };
        return 0;
}

/* The log the last run saved; a file that is not one is logged and set aside. */
int gres_xids_load(State *s) {
        const char *dir = s->ctx->api->state_dir(s->ctx);
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *o = NULL;
        size_t len;
        int r;

        gres_xid_log_init(s->xids);
        read_boot_id(s);
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
        if (r >= 0)
                r = take_cursor(s, o);
        if (r < 0) {
                gres_xid_log_init(s->xids);
                s->kmsg_cursor = (KmsgCursor){};
                sunkd_log_warning(s->ctx,
                                  "Cannot take the XID log from '%s' (%s); it starts empty and the file is "
                                  "replaced at the next event.",
                                  s->xid_path, r == -EBADMSG ? "not a valid log" : strerror(-r));
        }
        return 0;
}
