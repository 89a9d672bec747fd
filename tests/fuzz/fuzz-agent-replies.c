/* The host's side of outside text: what a module hands sched as a job's
 * message (shown by Agent.Jobs, Agent.Trigger and `sunkctl status`), the
 * reply backstop (varlink_repair_utf8()) over any tree of strings, and the
 * rule itself (text-escape.h): its output is valid UTF-8, at most four
 * bytes a byte, and goes through the rule again unchanged (but for
 * TEXT_ESCAPE_ASCII's backslashes).
 *
 * The input: a flags byte, then the text. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/text-escape.h"
#include "proto/varlink.h"
#include "work.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct {
        sd_event *event;
        WorkPool *pool;
        Sched *sched;
        Job *job;
        bool started;
} H;

static int prepare(void *state, void **ret_input) {
        H.started = true;
        return 0;
}

static int done(void *state, int r, void *input, void *result) {
        return r;
}

static void cancel(void *state, void *input) {
}

static void must_format(json_object *o, const char *what) {
        _cleanup_json_ json_object *msg = json_object_new_object();
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r;

        json_object_object_add(msg, "parameters", json_object_get(o));
        r = varlink_format(msg, &buf, &len);
        if (r < 0 && r != -ENOMEM) {
                fprintf(stderr, "%s: not valid Varlink JSON: %s\n", what, strerror(-r));
                abort();
        }
}

/* A job that has run once and failed: its message is shown. */
static void setup(void) {
        static const sunkd_job_spec spec = {
                .size = sizeof(sunkd_job_spec),
                .name = "fuzz.job",
                .timeout_usec = 3600 * SUNKD_USEC_PER_SEC,
                .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_ASYNC,
                .prepare = prepare,
                .done = done,
                .cancel = cancel,
        };
        static void *state;

        if (sd_event_new(&H.event) < 0 || work_pool_new(H.event, 1, &H.pool) < 0 ||
            sched_new(H.event, H.pool, &H.sched) < 0 ||
            sched_job_add(H.sched, &spec, &state, NULL, "fuzz", &H.job) < 0 ||
            sched_job_trigger(H.job, "fuzz") < 0)
                abort();
        for (int i = 0; i < 1000 && !H.started; i++)
                (void) sd_event_run(H.event, 10000);
        if (!H.started || sched_job_complete(H.job, -EIO) < 0)
                abort();
}

static void check_rule(const char *s, size_t n, unsigned flags) {
        _cleanup_free_ char *once = text_escape(s, n, 0, flags), *twice = NULL;

        if (!once)
                return;
        if (!text_escape_utf8_valid(once, strlen(once)) || strlen(once) > n * TEXT_ESCAPE_RATIO)
                abort();
        /* TEXT_ESCAPE_ASCII escapes the backslashes of its own escapes:
         * its output goes through the rest of the rule unchanged */
        twice = text_escape(once, strlen(once), 0, flags & ~TEXT_ESCAPE_ASCII);
        if (twice && strcmp(once, twice) != 0)
                abort();
        if (!memchr(s, 0, n) && !text_escape_needed(s, n, flags) && strncmp(once, s, n) != 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *o = NULL, *tree = NULL, *arr = NULL;
        unsigned flags;
        const char *s;
        size_t n;

        if (!H.sched)
                setup();
        if (size == 0)
                return 0;
        flags = data[0] & (TEXT_ESCAPE_LINE | TEXT_ESCAPE_ASCII);
        s = (const char *) data + 1;
        n = size - 1;
        check_rule(s, n, flags);
        text = strndup(s, n);
        if (!text)
                return 0;

        /* a module's message, into Agent.Jobs' and Agent.Trigger's answers */
        if (sched_job_set_message(H.job, text) < 0)
                return 0;
        if (sched_job_to_json(H.job, &o) >= 0) {
                json_object_object_add(o, "error", json_object_new_string(sched_job_error(H.job) ?: ""));
                must_format(o, "a job's message");
        }

        /* the backstop, over strings and keys of any bytes */
        tree = json_object_new_object();
        arr = json_object_new_array();
        if (!tree || !arr)
                return 0;
        json_object_array_add(arr, json_object_new_string_len(s, (int) n));
        json_object_array_add(arr, json_object_new_string(text));
        json_object_object_add(tree, text, json_object_new_string_len(s, (int) n));
        json_object_object_add(tree, "list", json_object_get(arr));
        if (varlink_repair_utf8(tree) >= 0)
                must_format(tree, "a repaired reply");
        return 0;
}
