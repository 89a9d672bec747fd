/* io.sunkd.Health.Genconf (sunkctl health genconf): a baseline of `checks:`
 * from the node itself, as NHC's nhc-genconf makes one.  Each check type's
 * genconf reads the node under the module's root; that reads file systems
 * (statvfs() of an NFS mount whose server is gone hangs), so it runs in the
 * killable child of the trigger-only job health.genconf, as a built-in
 * check's run does.  The gpu check is weighed on the loop from the fact
 * gres.gpus, so its entry is made here in `done`, where facts can be read.
 * Root only: the answer shows the node's mount points and services, and
 * each call has the node read every file system it has. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "health-state.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

/* within sunkctl's own 30 s, so the caller hears why */
#define GENCONF_TIMEOUT_USEC (25 * SUNKD_USEC_PER_SEC)
#define GRES_FACT "gres.gpus"

static json_object *strings_json(char **v, size_t n) {
        json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < n; i++)
                json_object_array_add(a, json_object_new_string(v[i]));
        return a;
}

/* In the child: every type's baseline, in the table's order. */
static int genconf_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        const State *s = state;
        HealthEnv env = { .root = s->conf.root };
        HealthGenconf g = {};
        json_object *o;

        (void) input;
        (void) cancel;
        for (const HealthCheckType *const *t = health_check_types; *t && !g.oom; t++) {
                int r;

                if (!(*t)->genconf)
                        continue;
                r = (*t)->genconf(&env, &g);
                if (r < 0 && r != -ENOMEM)
                        (void) health_genconf_note(&g, "%s: nothing could be read: %s", (*t)->name,
                                                   strerror(-r));
        }
        o = json_object_new_object();
        if (o) {
                json_object_object_add(o, "entries", strings_json(g.entries, g.n));
                json_object_object_add(o, "notes", strings_json(g.notes, g.n_notes));
                json_object_object_add(o, "incomplete", json_object_new_boolean(g.oom));
        }
        health_genconf_clear(&g);
        *ret_result = o;
        return o ? 0 : -ENOMEM;
}

/* The child's answer back into @g. */
static int genconf_from_json(json_object *o, HealthGenconf *g) {
        json_object *entries = json_object_object_get(o, "entries"),
                    *notes = json_object_object_get(o, "notes");
        int r = 0;

        if (!json_object_is_type(entries, json_type_array) || !json_object_is_type(notes, json_type_array))
                return -EBADMSG;
        for (size_t i = 0; r >= 0 && i < json_object_array_length(entries); i++)
                r = health_genconf_add(g, "%s",
                                       json_object_get_string(json_object_array_get_idx(entries, i)));
        for (size_t i = 0; r >= 0 && i < json_object_array_length(notes); i++)
                r = health_genconf_note(g, "%s",
                                        json_object_get_string(json_object_array_get_idx(notes, i)));
        if (json_object_get_boolean(json_object_object_get(o, "incomplete")))
                g->oom = true;
        return r;
}

/* The gpu check where gres has found GPUs: the judge weighs the fact on the loop. */
static int genconf_gpu(State *s, HealthGenconf *g) {
        _cleanup_json_ json_object *fact = s->ctx->api->fact_get(s->ctx, GRES_FACT);
        json_object *gpus = fact ? json_object_object_get(fact, "gpus") : NULL;
        char name[HEALTH_GENCONF_NAME_MAX + 1];

        if (!json_object_is_type(gpus, json_type_array) || json_object_array_length(gpus) == 0)
                return 0;
        return health_genconf_add(g, "{name: %s, type: gpu}", health_genconf_name(g, "gpu", NULL, name));
}

static json_object *answer_json(State *s, const HealthGenconf *g) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "node_name", json_object_new_string(s->node_name));
        json_object_object_add(o, "version", json_object_new_string(PACKAGE_VERSION));
        json_object_object_add(o, "root", json_object_new_string(s->conf.root ?: "/"));
        json_object_object_add(o, "generated_usec",
                               json_object_new_int64((int64_t) now_usec(CLOCK_REALTIME)));
        json_object_object_add(o, "entries", strings_json(g->entries, g->n));
        json_object_object_add(o, "notes", strings_json(g->notes, g->n_notes));
        json_object_object_add(o, "incomplete", json_object_new_boolean(g->oom));
        return o;
}

static void answer_all(State *s, json_object *o, const char *error, const char *why) {
        for (size_t i = 0; i < s->n_genconf_calls; i++) {
                if (o)
                        (void) s->ctx->api->reply(s->genconf_calls[i], json_object_get(o));
                else
                        (void) s->ctx->api->reply_error(s->genconf_calls[i], error,
                                                        json_object_new_string_object("reason", why));
        }
        s->n_genconf_calls = 0;
}

static int genconf_done(void *state, int r, void *input, void *result) {
        State *s = state;
        _cleanup_json_ json_object *child = result, *o = NULL;
        HealthGenconf g = {};
        char why[128];

        (void) input;
        if (r >= 0)
                r = genconf_from_json(child, &g);
        if (r >= 0)
                r = genconf_gpu(s, &g);
        if (r >= 0 && !(o = answer_json(s, &g)))
                r = -ENOMEM;
        health_genconf_clear(&g);
        if (r == -ETIMEDOUT)
                answer_all(s, NULL, "io.sunkd.Timeout",
                           "the node's file systems did not all answer within 25s (a hung mount?)");
        else if (r < 0) {
                (void) snprintf(why, sizeof(why), "the baseline could not be made: %s", strerror(-r));
                answer_all(s, NULL, r == -ECANCELED ? "io.sunkd.Unavailable" : "io.sunkd.InternalError",
                           why);
        } else
                answer_all(s, o, NULL, NULL);
        if (r < 0 && r != -ECANCELED)
                sunkd_log_warning(s->ctx, "Cannot make the baseline of checks: %s", strerror(-r));
        return r;
}

static void genconf_gone(sunkd_call *call, void *userdata) {
        State *s = userdata;

        for (size_t i = 0; i < s->n_genconf_calls; i++)
                if (s->genconf_calls[i] == call) {
                        s->genconf_calls[i] = s->genconf_calls[--s->n_genconf_calls];
                        (void) s->ctx->api->reply_error(call, "io.sunkd.Unavailable", NULL);
                        return;
                }
}

int health_genconf_job_method(sunkd_call *call, json_object *params, void *state) {
        State *s = state;
        json_object *p;

        json_object_object_foreach(params, key, value) {
                (void) value;
                p = json_object_new_object();
                if (p) {
                        json_object_object_add(p, "parameter", json_object_new_string(key));
                        json_object_object_add(p, "reason",
                                               json_object_new_string("Genconf takes no parameters"));
                }
                return s->ctx->api->reply_error(call, "org.varlink.service.InvalidParameter", p);
        }
        if (s->n_genconf_calls >= WAITERS_MAX)
                return -EBUSY;
        s->genconf_calls[s->n_genconf_calls++] = call;
        (void) s->ctx->api->call_on_gone(call, genconf_gone, s);
        /* one run answers every call waiting when it ends */
        if (s->n_genconf_calls == 1) {
                int r = s->ctx->api->job_trigger(s->genconf_job, "sunkctl health genconf");

                if (r < 0) {
                        s->n_genconf_calls = 0;
                        return r;
                }
        }
        return SUNKD_CALL_PENDING;
}

int health_genconf_job_add(State *s) {
        sunkd_job_spec spec = {
                .size = sizeof(spec),
                .name = "health.genconf",
                .flags = SUNKD_JOB_CHILD | SUNKD_JOB_TRIGGER_ONLY,
                .timeout_usec = GENCONF_TIMEOUT_USEC,
                .work = genconf_work,
                .done = genconf_done,
        };
        int r;

        r = s->ctx->api->job_add(s->ctx, &spec, &s->genconf_job);
        if (r < 0)
                return sunkd_log_error_errno(s->ctx, r, "Cannot add the job health.genconf: %m");
        return 0;
}
