/* gres.kmsg: XID errors from the kernel log (gres-kmsg.h).
 *
 * The module ABI has no file descriptor watch, so the log is read by a job,
 * as NVML's events are (gres-events.c): a child (SUNKD_JOB_CHILD) waits in
 * poll() for up to xid_window, reads until nothing more is there (at most a
 * bounded number of records, and a second from the first), and hands back
 * what it saw, counted per GPU and XID; the next run starts 100 ms later.
 * A child rather than a worker thread: a thread would hold one of the
 * module's workers (half the host's) for as long as the log is quiet and
 * could end its wait only by polling for cancellation; a child holds none,
 * is killed at once when the module stops, and is forked once per burst of
 * records, not per record.
 *
 * The host closes every other file in a child, so each run opens the log
 * itself: /dev/kmsg then hands its oldest record first, and the records up
 * to where the last run stopped (the cursor, kept in the module and saved
 * with the XID log by gres-xid-store.c, so a restart in the same boot goes
 * on from there too) are skipped.  The kernel keeps what comes between two
 * runs in its ring, so nothing falls between them; a gap in the sequence
 * numbers (the ring overwrote records nobody read: EPIPE, or while sunkd was
 * down) is logged and counted.  A stand-in keeps what is written between two
 * runs in its pipe, and a record written in parts is carried to the next.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "gres-kmsg.h"
#include "gres-state.h"
#include "gres-xid.h"
#include "sunkd/module.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

#define KMSG_FIRST_WINDOW_USEC SUNKD_USEC_PER_SEC /* until a run has shown the log can be read */
#define KMSG_RECORDS_PER_RUN 65536

bool gres_reads_kmsg(const State *s) {
        return s->conf.xid_events;
}

/* Logged when it starts or stops working, or fails otherwise than before. */
static void set_reading(State *s, int r, const char *why) {
        if (r >= 0) {
                if (s->kmsg_reading != 1)
                        sunkd_log_notice(s->ctx, "Reading XID errors from the kernel log '%s'.",
                                         s->conf.kmsg);
                s->kmsg_reading = 1;
                s->kmsg_error = mfree(s->kmsg_error);
                return;
        }
        if (s->kmsg_reading != 0 || !streq(s->kmsg_error ?: "", why))
                sunkd_log_warning(s->ctx,
                                  "Not reading XID errors from the kernel log '%s': %s; NVML's events only.",
                                  s->conf.kmsg, why);
        s->kmsg_reading = 0;
        free(s->kmsg_error);
        s->kmsg_error = strdup(why);
        (void) s->ctx->api->job_set_message(s->kmsg_job, why);
}

static int kmsg_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        State *s = state;
        _cleanup_free_ GresKmsgBatch *b = malloc(sizeof(*b));
        _cleanup_close_ int fd = -1;
        uint64_t window = s->kmsg_reading != 1 ? MIN(s->conf.xid_window_usec, KMSG_FIRST_WINDOW_USEC)
                                               : s->conf.xid_window_usec;
        json_object *out;
        int r = 0;

        if (!b)
                return -ENOMEM;
        gres_kmsg_batch_init(b, s->kmsg_cursor.valid, s->kmsg_cursor.seq, s->kmsg_carry,
                             s->kmsg_carry ? strlen(s->kmsg_carry) : 0);
        /* non-blocking: opening a FIFO stand-in must not wait for a writer */
        fd = open(s->conf.kmsg, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                r = -errno;
        else
                r = gres_kmsg_read(fd, window, KMSG_RECORDS_PER_RUN, b);
        /* what was read before a failure is handed back all the same */
        out = gres_kmsg_batch_to_json(b, now_usec(CLOCK_REALTIME), now_usec(CLOCK_MONOTONIC));
        if (!out)
                return -ENOMEM;
        if (r < 0)
                json_object_object_add(out, "error", json_object_new_string(strerror(-r)));
        *ret_result = out;
        return 0;
}

static uint64_t member_uint(json_object *o, const char *key) {
        int64_t v = json_member_int64(o, key, 0);
        return v > 0 ? (uint64_t) v : 0;
}

/* The GPUs the driver named ("NVRM: GPU at ..."), for events without a UUID. */
static void take_gpus(State *s, json_object *gpus) {
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i);
                const char *bus = json_member_string(g, "bus_id"), *uuid = json_member_string(g, "uuid");
                size_t k;

                if (!bus || !uuid || strlen(bus) >= sizeof(s->kmsg_gpus[0].bus_id) ||
                    strlen(uuid) >= sizeof(s->kmsg_gpus[0].uuid))
                        continue;
                for (k = 0; k < s->n_kmsg_gpus && !streq(s->kmsg_gpus[k].bus_id, bus); k++)
                        ;
                if (k == KMSG_GPUS_MAX)
                        continue;
                if (k == s->n_kmsg_gpus)
                        s->n_kmsg_gpus++;
                strcpy(s->kmsg_gpus[k].bus_id, bus);
                strcpy(s->kmsg_gpus[k].uuid, uuid);
        }
}

/* Records that were never read: said each time, with the numbers. */
static void log_lost(State *s, json_object *res) {
        json_object *gaps = json_object_object_get(res, "gaps");
        uint64_t lost = member_uint(res, "lost"), overflows = member_uint(res, "overflows");
        char first[96] = "";

        s->kmsg_lost += lost;
        s->kmsg_overflows += overflows;
        if (lost == 0 && overflows == 0)
                return;
        if (json_object_array_length(gaps) > 0) {
                json_object *g = json_object_array_get_idx(gaps, 0);
                snprintf(first, sizeof(first), " (records %" PRId64 " to %" PRId64 "%s)",
                         json_object_get_int64(json_object_array_get_idx(g, 0)),
                         json_object_get_int64(json_object_array_get_idx(g, 1)),
                         json_object_array_length(gaps) > 1 ? ", and more" : "");
        }
        sunkd_log_warning(s->ctx,
                          "The kernel log lost %" PRIu64 " record(s) before sunkd read them%s%s: XID errors "
                          "among them are seen only as NVML's events.",
                          lost, first,
                          overflows ? ", its ring overflowed" : ", its sequence numbers jumped");
}

static void take_cursor(State *s, json_object *res) {
        json_object *seq;

        if (!json_object_object_get_ex(res, "seq", &seq))
                return;
        s->kmsg_cursor = (KmsgCursor){ .valid = true, .seq = (uint64_t) json_object_get_int64(seq) };
        /* saved with the next XID error, or at the stop: records read again
         * after a crash are harmless unless they hold one */
        s->xid_dirty = true;
}

static int kmsg_done(void *state, int r, void *input, void *result) {
        State *s = state;
        json_object *res = result, *events = NULL;
        const char *error = json_member_string(res, "error"), *partial = json_member_string(res, "partial");
        bool changed;

        if (r == -ECANCELED) {
                json_object_put(res);
                return r;
        }
        if (r < 0 || !res) {
                set_reading(s, r < 0 ? r : -EBADMSG, r < 0 ? strerror(-r) : "no answer from the reader");
                json_object_put(res);
                return r < 0 ? r : -EBADMSG;
        }
        s->kmsg_records += member_uint(res, "records");
        s->kmsg_malformed += member_uint(res, "malformed");
        log_lost(s, res);
        take_gpus(s, json_object_object_get(res, "gpus"));
        take_cursor(s, res);
        free(s->kmsg_carry);
        s->kmsg_carry = partial ? strdup(partial) : NULL;
        changed = json_object_object_get_ex(res, "events", &events) && json_object_array_length(events) > 0;
        if (changed)
                (void) gres_xids_add(s, events, GRES_XID_KMSG);
        if (member_uint(res, "dropped"))
                sunkd_log_warning(s->ctx,
                                  "%" PRIu64
                                  " XID error(s) of more GPU and XID pairs than one read keeps were "
                                  "not counted.",
                                  member_uint(res, "dropped"));
        if (changed) {
                gres_xids_changed(s);
                gres_show_gpus(s);
        } else
                gres_xids_summary(s);
        if (error) {
                set_reading(s, -EIO, error);
                json_object_put(res);
                return -EIO;
        }
        if (json_object_get_boolean(json_object_object_get(res, "eof"))) {
                set_reading(s, -ENODATA, "end of file: nothing writes to it");
                json_object_put(res);
                return -ENODATA;
        }
        set_reading(s, 0, NULL);
        json_object_put(res);
        return 0;
}

/* The job's timing follows the configuration; the rest of it is fixed. */
sunkd_job_spec gres_kmsg_spec(const State *s) {
        return (sunkd_job_spec){
                .size = sizeof(sunkd_job_spec),
                .name = "gres.kmsg",
                .interval_usec = 100 * SUNKD_USEC_PER_MSEC,
                .backoff_min_usec = 10 * SUNKD_USEC_PER_SEC,
                .backoff_max_usec = s->conf.interval_usec,
                .timeout_usec = s->conf.xid_window_usec + s->conf.timeout_usec,
                .flags = SUNKD_JOB_CHILD,
                .work = kmsg_work,
                .done = kmsg_done,
        };
}
