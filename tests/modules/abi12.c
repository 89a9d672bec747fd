/* abi12: a module built against the frozen ABI 1.2 header (tests/modules/
 * abi-1.2), with what 1.3 changed the rules for:
 *   abi12.async  an async job without a `cancel` whose runs the module never
 *                completes (1.2 allowed it; the host must end them),
 *   abi12.block  a thread job that holds its worker, ignoring cancellation,
 *                until `gate_file` exists,
 *   fact_get     a fact read from another module (a 1.2 module puts it).
 * Status: how many runs of each job ended, and the last async result. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "sunkd/module.h"

#if SUNKD_MODULE_ABI_MINOR != 2
#error "abi12 must be built against the frozen ABI 1.2 header"
#endif

typedef struct Conf {
        uint64_t timeout;
        char *gate_file;
} Conf;

static const sunkd_cfg_key conf_keys[] = {
        { "timeout", SUNKD_CFG_DURATION, offsetof(Conf, timeout), 0, 0, 0 },
        { "gate_file", SUNKD_CFG_PATH, offsetof(Conf, gate_file), 0, 0, 0 },
};

typedef struct State {
        sunkd_ctx *ctx;
        Conf conf;
        int64_t async_runs, block_runs, last_async_r;
} State;

static int prepare_async(void *state, void **ret_input) {
        return 0; /* starts nothing and never calls job_complete() */
}

static int done_async(void *state, int r, void *input, void *result) {
        State *s = state;

        s->async_runs++;
        s->last_async_r = r;
        return r;
}

static int work_block(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        State *s = state;
        struct timespec ts = { 0, 10 * 1000 * 1000 };

        while (s->conf.gate_file && access(s->conf.gate_file, F_OK) < 0)
                nanosleep(&ts, NULL);
        return 0;
}

static int done_block(void *state, int r, void *input, void *result) {
        ((State *) state)->block_runs++;
        return r;
}

static int abi12_init(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state) {
        sunkd_job_spec jobs[] = {
                { .size = sizeof(sunkd_job_spec),
                  .name = "abi12.async",
                  .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_ASYNC,
                  .prepare = prepare_async,
                  .done = done_async },
                { .size = sizeof(sunkd_job_spec),
                  .name = "abi12.block",
                  .flags = SUNKD_JOB_TRIGGER_ONLY,
                  .work = work_block,
                  .done = done_block },
        };
        char *error = NULL;
        State *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->ctx = c;
        r = c->api->cfg_parse(cfg, conf_keys, 2, &s->conf, &error);
        if (r < 0) {
                sunkd_log_error(c, "%s", error ?: "bad config");
                free(error);
                free(s);
                return r;
        }
        jobs[0].timeout_usec = s->conf.timeout;
        for (size_t i = 0; i < 2 && r >= 0; i++)
                r = c->api->job_add(c, &jobs[i], NULL);
        if (r < 0) {
                c->api->cfg_clear(conf_keys, 2, &s->conf);
                free(s);
                return sunkd_log_error_errno(c, r, "Failed to add a job: %m");
        }
        *ret_state = s;
        return 0;
}

static void abi12_fini(void *state) {
        State *s = state;

        s->ctx->api->cfg_clear(conf_keys, 2, &s->conf);
        free(s);
}

static int abi12_status(void *state, struct json_object *out) {
        State *s = state;
        struct json_object *fact = s->ctx->api->fact_get(s->ctx, "testmod.echo");

        json_object_object_add(out, "async_runs", json_object_new_int64(s->async_runs));
        json_object_object_add(out, "last_async_r", json_object_new_int64(s->last_async_r));
        json_object_object_add(out, "block_runs", json_object_new_int64(s->block_runs));
        if (fact)
                json_object_object_add(out, "fact", fact); /* ours to hand on */
        return 0;
}

SUNKD_MODULE_DEFINE(.name = "abi12", .version = "1.2", .init = abi12_init, .fini = abi12_fini,
                    .status = abi12_status);
