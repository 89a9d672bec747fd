/* abi10: a module built against the frozen ABI 1.0 header (tests/modules/
 * abi-1.0), whose structs are shorter than the host's: the host must copy
 * them by their size.  A job, metrics (one named as only modules built
 * before ABI 1.3 may), a method and child processes: one
 * that writes to stdout and stderr (both must reach `output`, as in 1.0)
 * and one that cannot be executed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "sunkd/module.h"

#if SUNKD_MODULE_ABI_MINOR != 0
#error "abi10 must be built against the frozen ABI 1.0 header"
#endif

typedef struct State {
        sunkd_ctx *ctx;
        sunkd_metric *runs;
        int64_t runs_done, spawned_exit, spawned_missing;
        char *spawned_output;
} State;

static int work(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        return 0;
}

static int done(void *state, int r, void *input, void *result) {
        State *s = state;

        s->runs_done++;
        (void) s->ctx->api->metric_add_value(s->runs, 1, NULL);
        return r;
}

static void on_spawned(void *userdata, int r, const sunkd_spawn_result *res) {
        State *s = userdata;
        s->spawned_exit = r < 0 ? r : res->exit_code;
        free(s->spawned_output);
        s->spawned_output = r < 0 ? NULL : strndup(res->output, res->output_len);
}

static void on_missing(void *userdata, int r, const sunkd_spawn_result *res) {
        State *s = userdata;
        s->spawned_missing = r < 0 ? r : res->exit_code;
}

static int method_ping(sunkd_call *call, struct json_object *params, void *state) {
        State *s = state;
        const char *argv[] = { "/bin/sh", "-c", "echo out; echo err >&2; exit 7", NULL };
        const char *missing[] = { "/nonexistent/abi10", NULL };
        sunkd_spawn_spec spec = { .size = sizeof(spec), .argv = argv, .uid = (uid_t) -1, .gid = (gid_t) -1 };
        json_object *o = json_object_new_object();
        int r = s->ctx->api->spawn(s->ctx, &spec, on_spawned, s);

        spec.argv = missing;
        if (r >= 0)
                r = s->ctx->api->spawn(s->ctx, &spec, on_missing, s);
        json_object_object_add(o, "pong", json_object_new_boolean(1));
        json_object_object_add(o, "spawn", json_object_new_int(r));
        return s->ctx->api->reply(call, o);
}

static const sunkd_method methods[] = {
        { "io.sunkd.Abi10.Ping", SUNKD_METHOD_ANY_UID, method_ping },
};

static int abi10_init(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state) {
        static const sunkd_metric_spec runs = {
                sizeof(sunkd_metric_spec), "abi10_runs_total", "Runs.", SUNKD_METRIC_COUNTER, { NULL }
        };
        /* Named before ABI 1.3 asked for the module's name in front: allowed
         * to a 1.0 module, with a warning. */
        static const sunkd_metric_spec legacy = {
                sizeof(sunkd_metric_spec), "legacy_abi10_up", "Always 1.", SUNKD_METRIC_GAUGE, { NULL }
        };
        sunkd_metric *up;
        sunkd_job_spec job = { .size = sizeof(job),
                               .name = "abi10.work",
                               .flags = SUNKD_JOB_TRIGGER_ONLY,
                               .work = work,
                               .done = done };
        State *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->ctx = c;
        s->spawned_exit = -1;
        s->spawned_missing = 1;
        r = c->api->metric_add(c, &runs, &s->runs);
        if (r >= 0)
                r = c->api->metric_add(c, &legacy, &up);
        if (r >= 0)
                r = c->api->metric_set(up, 1, NULL);
        if (r >= 0)
                r = c->api->job_add(c, &job, NULL);
        if (r >= 0)
                r = c->api->methods_add(c, methods, 1);
        if (r < 0) {
                free(s);
                return r;
        }
        *ret_state = s;
        return 0;
}

static void abi10_fini(void *state) {
        State *s = state;

        free(s->spawned_output);
        free(s);
}

static int abi10_status(void *state, struct json_object *out) {
        State *s = state;

        json_object_object_add(out, "runs", json_object_new_int64(s->runs_done));
        json_object_object_add(out, "spawned_exit", json_object_new_int64(s->spawned_exit));
        json_object_object_add(out, "spawned_output", json_object_new_string(s->spawned_output ?: ""));
        json_object_object_add(out, "spawned_missing", json_object_new_int64(s->spawned_missing));
        return 0;
}

SUNKD_MODULE_DEFINE(.name = "abi10", .version = PACKAGE_VERSION, .init = abi10_init, .fini = abi10_fini,
                    .reload = NULL, .status = abi10_status);
