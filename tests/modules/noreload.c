/* noreload: a module without a reload hook, so a reload stops it (waiting
 * for its running job) and initialises it again with the new config.
 * noreload.gated runs, ignoring cancellation, until `gate_file` exists. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "sunkd/module.h"

typedef struct State {
        sunkd_ctx *ctx;
        char *gate_file;
        int64_t generation, runs;
} State;

static const sunkd_cfg_key keys[] = {
        { "gate_file", SUNKD_CFG_PATH, offsetof(State, gate_file), 0, 0, 0 },
        { "generation", SUNKD_CFG_INT, offsetof(State, generation), 0, 0, 1000000 },
};

static int prepare(void *state, void **ret_input) {
        State *s = state;

        *ret_input = s->gate_file ? strdup(s->gate_file) : NULL;
        return *ret_input ? 0 : -EINVAL;
}

static int work(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        struct timespec ts = { 0, 1000000 };
        char started[4096];

        snprintf(started, sizeof(started), "%s.started", (const char *) input);
        fclose(fopen(started, "w"));
        while (access(input, F_OK) < 0)
                nanosleep(&ts, NULL);
        return 0;
}

static int done(void *state, int r, void *input, void *result) {
        State *s = state;

        free(input);
        s->runs++;
        return r;
}

static int method_ping(sunkd_call *call, struct json_object *params, void *state) {
        State *s = state;
        json_object *o = json_object_new_object();

        json_object_object_add(o, "generation", json_object_new_int64(s->generation));
        return s->ctx->api->reply(call, o);
}

static const sunkd_method methods[] = {
        { "io.sunkd.NoReload.Ping", SUNKD_METHOD_ANY_UID, method_ping },
};

static void noreload_fini(void *state) {
        State *s = state;

        if (!s)
                return;
        s->ctx->api->cfg_clear(keys, 2, s);
        free(s);
}

static int noreload_init(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state) {
        sunkd_job_spec job = { .size = sizeof(job),
                               .name = "noreload.gated",
                               .flags = SUNKD_JOB_TRIGGER_ONLY,
                               .prepare = prepare,
                               .work = work,
                               .done = done };
        char *error = NULL;
        State *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->ctx = c;
        r = c->api->cfg_parse(cfg, keys, 2, s, &error);
        if (r < 0) {
                sunkd_log_error_errno(c, r, "%s", error ?: "invalid configuration");
                free(error);
                noreload_fini(s);
                return r;
        }
        r = c->api->job_add(c, &job, NULL);
        if (r >= 0)
                r = c->api->methods_add(c, methods, 1);
        if (r < 0) {
                noreload_fini(s);
                return r;
        }
        *ret_state = s;
        return 0;
}

static int noreload_status(void *state, struct json_object *out) {
        State *s = state;

        json_object_object_add(out, "generation", json_object_new_int64(s->generation));
        json_object_object_add(out, "runs", json_object_new_int64(s->runs));
        return 0;
}

SUNKD_MODULE_DEFINE(.name = "noreload", .version = PACKAGE_VERSION, .init = noreload_init,
                    .fini = noreload_fini, .status = noreload_status);
