/* The gpu check: the fact gres.gpus judged by the XID and memory policies
 * (health-gpu.h).  gres observes, this judges: on the loop, since facts
 * are loop-only, in the job's prepare (a job with no work), and again as
 * soon as the fact changes, so an XID drains the node within the time
 * gres takes to publish it.  What the judge remembers (the events it has
 * counted, the GPUs it holds failed) is kept with the rest of the state. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "health-gpu.h"
#include "health-state.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/time-util.h"

#define GRES_FACT "gres.gpus"

static int gpu_prepare(void *state, void **ret_input) {
        Check *k = state;
        State *s = k->s;
        _cleanup_json_ json_object *fact = s->ctx->api->fact_get(s->ctx, GRES_FACT);
        _cleanup_free_ HealthResult *res = calloc(1, sizeof(*res));
        int r;

        HealthGpuLimits limits;

        if (!res)
                return -ENOMEM;
        health_gpu_limits_from_conf(k->conf, &limits);
        health_gpu_set_limits(s->gpu, &limits);
        r = health_gpu_judge(s->gpu, fact, now_usec(CLOCK_REALTIME), res);
        if (r < 0)
                return r;
        *ret_input = TAKE_PTR(res);
        return 0;
}

static int gpu_done(void *state, int r, void *input, void *result) {
        Check *k = state;
        _cleanup_free_ HealthResult *res = input;
        HealthResult err = {};

        (void) result;
        if (r == -ECANCELED)
                return r;
        if (r < 0 || !res) {
                health_result_set(&err, HEALTH_FAIL, "check-error", "%s", strerror(r < 0 ? -r : EIO));
                res = NULL;
        }
        health_check_jobs_record(k, res ?: &err, 0);
        (void) k->s->ctx->api->job_set_message(k->job, k->last.detail);
        return r < 0 ? r : k->last.status == HEALTH_FAIL ? -EIO : 0;
}

static void on_fact(void *userdata, const char *name, json_object *value) {
        Check *k = userdata;

        (void) name;
        (void) value;
        if (k->job)
                (void) k->s->ctx->api->job_trigger(k->job, "gres.gpus changed");
}

int gpu_check_spec(State *s, Check *k, sunkd_job_spec *spec) {
        int r;

        if (!s->gpu) {
                r = health_gpu_new(&s->xid_policy, s->conf.root, &s->gpu);
                if (r < 0)
                        return r;
                health_gpu_set_memory_policy(s->gpu, &s->memory_policy);
                store_load_gpu(s);
        }
        spec->prepare = gpu_prepare;
        spec->done = gpu_done;
        spec->timeout_usec = 0;
        r = s->ctx->api->fact_subscribe(s->ctx, GRES_FACT, on_fact, k);
        return r == -EEXIST ? 0 : r;
}
