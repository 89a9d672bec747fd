/* io.sunkd.Health.*: Status (sunkctl health), Run (sunkctl health run,
 * usable as slurmd's HealthCheckProgram), Drain and Undrain (root only:
 * an operator, a Kubernetes preStop hook, the prolog client); Genconf,
 * root only, is health-genconf-job.c's.  A Drain
 * with wait_idle stays pending until no job runs on the node; the signal
 * job polls the node while such a call waits, and a caller that hangs up
 * is forgotten (call_on_gone). */
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

#define OPERATOR_REASON_MAX 200

static const char *const status_names[] = { "pass", "fail", "unknown" };

static json_object *check_json(const Check *k) {
        const HealthCheckCommon *c = k->conf;
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "name", json_object_new_string(c->name));
        json_object_object_add(o, "type", json_object_new_string(c->type));
        json_object_object_add(
                o, "action", json_object_new_string(k->action == HEALTH_ACTION_DRAIN ? "drain" : "report"));
        json_object_object_add(
                o, "result",
                json_object_new_string(k->have_result ? status_names[k->last.status] : "pending"));
        json_object_object_add(o, "failing", json_object_new_boolean(k->count.failing));
        json_object_object_add(
                o, "consecutive",
                json_object_new_int64(k->last.status == HEALTH_PASS ? k->count.passes : k->count.fails));
        json_object_object_add(o, "code", json_object_new_string(k->last.code));
        json_object_object_add(
                o, "remedy",
                json_object_new_string(health_code_remedy_to_string(
                        k->have_result && k->last.status == HEALTH_FAIL ? k->last.remedy
                                                                        : HEALTH_REMEDY_NONE)));
        json_object_object_add(o, "detail", json_object_new_string(k->last.detail));
        json_object_object_add(o, "duration_usec", json_object_new_int64((int64_t) k->duration_usec));
        json_object_object_add(o, "last_usec", json_object_new_int64((int64_t) k->last_usec));
        return o;
}

static json_object *status_json(State *s) {
        json_object *o = json_object_new_object(), *checks = json_object_new_array();
        static const char *const transports[] = { "libslurm", "scontrol", "slurmrestd", "none" };

        if (!o || !checks) {
                json_object_put(o);
                json_object_put(checks);
                return NULL;
        }
        json_object_object_add(o, "node_name", json_object_new_string(s->node_name));
        json_object_object_add(o, "transport", json_object_new_string(transports[s->transport]));
        json_object_object_add(o, "reason_prefix", json_object_new_string(s->conf.reason_prefix));
        json_object_object_add(o, "reason_set", json_object_new_string(s->set_reason));
        json_object_object_add(o, "sticky", json_object_new_boolean(*s->sticky_reason != '\0'));
        if (s->lifted_check[0])
                json_object_object_add(o, "lifted_check", json_object_new_string(s->lifted_check));
        json_object_object_add(o, "last_signal",
                               json_object_new_string(s->have_outcome
                                                              ? health_signal_outcome_to_string(s->outcome)
                                                              : "none"));
        json_object_object_add(o, "last_signal_message", json_object_new_string(s->last_outcome));
        if (s->repair.phase != REPAIR_IDLE || s->repair.n_history > 0)
                json_object_object_add(o, "repair", health_repair_to_json(s));
        for (size_t i = 0; i < s->n_checks; i++)
                json_object_array_add(checks, check_json(&s->checks[i]));
        json_object_object_add(o, "checks", checks);
        return o;
}

int health_status_fill(State *s, json_object *out) {
        json_object *o = status_json(s);

        if (!o)
                return -ENOMEM;
        json_object_object_foreach(o, k, v) json_object_object_add(out, k, json_object_get(v));
        json_object_put(o);
        return 0;
}

static int method_status(sunkd_call *call, json_object *params, void *state) {
        json_object *o = status_json(state);

        (void) params;
        return o ? ((State *) state)->ctx->api->reply(call, o) : -ENOMEM;
}

/* ---- Run ---- */

void methods_run_done(State *s) {
        bool failed = false;

        for (size_t i = 0; i < s->n_checks; i++)
                failed |= s->checks[i].last.status == HEALTH_FAIL;
        for (size_t i = 0; i < s->n_run_calls; i++) {
                json_object *o = status_json(s);
                if (o)
                        json_object_object_add(o, "failed", json_object_new_boolean(failed));
                (void) s->ctx->api->reply(s->run_calls[i], o);
        }
        s->n_run_calls = 0;
}

static void run_gone(sunkd_call *call, void *userdata) {
        State *s = userdata;

        for (size_t i = 0; i < s->n_run_calls; i++)
                if (s->run_calls[i] == call) {
                        s->run_calls[i] = s->run_calls[--s->n_run_calls];
                        (void) s->ctx->api->reply_error(call, "io.sunkd.Unavailable", NULL);
                        return;
                }
}

static int method_run(sunkd_call *call, json_object *params, void *state) {
        State *s = state;

        (void) params;
        if (s->n_checks == 0)
                return s->ctx->api->reply(call, status_json(s));
        if (s->n_run_calls >= WAITERS_MAX)
                return -EBUSY;
        s->run_calls[s->n_run_calls++] = call;
        (void) s->ctx->api->call_on_gone(call, run_gone, s);
        if (s->n_run_calls == 1) {
                /* each check's next result counts; a run in progress gives one too */
                s->run_pending = (unsigned) s->n_checks;
                for (size_t i = 0; i < s->n_checks; i++)
                        (void) s->ctx->api->job_trigger(s->checks[i].job, "sunkctl health run");
        }
        return SUNKD_CALL_PENDING;
}

/* ---- Drain and Undrain ---- */

static int reply_invalid(State *s, sunkd_call *call, const char *param, const char *why) {
        json_object *p = json_object_new_object();

        if (p) {
                json_object_object_add(p, "parameter", json_object_new_string(param));
                json_object_object_add(p, "reason", json_object_new_string(why));
        }
        return s->ctx->api->reply_error(call, "org.varlink.service.InvalidParameter", p);
}

static void drop_waiter(State *s, size_t i) {
        s->waiters[i] = s->waiters[--s->n_waiters];
}

static void waiter_gone(sunkd_call *call, void *userdata) {
        State *s = userdata;

        for (size_t i = 0; i < s->n_waiters; i++)
                if (s->waiters[i].call == call) {
                        drop_waiter(s, i);
                        /* the round it asked for goes on, answering nobody */
                        if (s->forced_call == call)
                                s->forced_call = NULL;
                        (void) s->ctx->api->reply_error(call, "io.sunkd.Unavailable", NULL);
                        return;
                }
}

/* After a round: answer the waiters when the node is idle, and those whose
 * time is up in any case. */
void methods_answer_waiters(State *s, bool idle, const char *error) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        for (size_t i = s->n_waiters; i-- > 0;) {
                Waiter w = s->waiters[i];
                bool late = w.deadline_usec && now >= w.deadline_usec;

                if (!idle && !late && !error)
                        continue;
                drop_waiter(s, i);
                if (idle)
                        (void) s->ctx->api->reply(w.call, status_json(s));
                else
                        (void) s->ctx->api->reply_error(
                                w.call, "io.sunkd.Timeout",
                                json_object_new_string_object("reason",
                                                              error ?: "jobs still run on the node"));
        }
}

/* The round a Drain or Undrain asked for has ended (health-judge.c). */
void methods_forced_done(State *s, const HealthSignal *sig) {
        sunkd_call *call = s->forced_call;
        json_object *o;

        s->forced_call = NULL;
        if (!call)
                return;
        if (sig->outcome == HEALTH_OUTCOME_FAILED || sig->outcome == HEALTH_OUTCOME_NOT_FOUND ||
            sig->outcome == HEALTH_OUTCOME_OTHER || sig->outcome == HEALTH_OUTCOME_UNREACHABLE) {
                for (size_t i = s->n_waiters; i-- > 0;)
                        if (s->waiters[i].call == call)
                                drop_waiter(s, i);
                (void) s->ctx->api->reply_error(call, "io.sunkd.Refused",
                                                json_object_new_string_object("reason", sig->message));
                return;
        }
        for (size_t i = 0; i < s->n_waiters; i++)
                if (s->waiters[i].call == call)
                        return; /* answered once the node is idle */
        o = status_json(s);
        if (o)
                json_object_object_add(o, "message", json_object_new_string(sig->message));
        (void) s->ctx->api->reply(call, o);
}

static int forced_start(State *s, sunkd_call *call, HealthWant want, const char *reason) {
        if (s->transport == TRANSPORT_NONE)
                return s->ctx->api->reply_error(
                        call, "io.sunkd.Refused",
                        json_object_new_string_object("reason", "transport is none: nothing is drained"));
        if (s->forced_call)
                return s->ctx->api->reply_error(
                        call, "io.sunkd.Unavailable",
                        json_object_new_string_object("reason", "another drain or undrain is in progress"));
        s->forced = want;
        s->forced_call = call;
        (void) snprintf(s->forced_reason, sizeof(s->forced_reason), "%s", reason ?: "");
        health_judge_kick(s, want == HEALTH_WANT_UNDRAIN ? "undrain" : "drain");
        return SUNKD_CALL_PENDING;
}

static int method_drain(sunkd_call *call, json_object *params, void *state) {
        State *s = state;
        const char *text = json_member_string(params, "reason");
        json_object *v;
        bool wait_idle = false, sticky = true;
        int64_t timeout = 0;
        char reason[HEALTH_REASON_MAX];
        int r;

        if (json_object_object_get_ex(params, "reason", &v) && (!text || strlen(text) > OPERATOR_REASON_MAX))
                return reply_invalid(s, call, "reason", "a string of at most 200 bytes");
        if (json_object_object_get_ex(params, "wait_idle", &v)) {
                if (!json_object_is_type(v, json_type_boolean))
                        return reply_invalid(s, call, "wait_idle", "true or false");
                wait_idle = json_object_get_boolean(v);
        }
        if (json_object_object_get_ex(params, "timeout_usec", &v)) {
                if (!json_object_is_type(v, json_type_int) || (timeout = json_object_get_int64(v)) < 0)
                        return reply_invalid(s, call, "timeout_usec",
                                             "a number of microseconds, 0 for none");
        }
        if (json_object_object_get_ex(params, "sticky", &v)) {
                if (!json_object_is_type(v, json_type_boolean))
                        return reply_invalid(s, call, "sticky", "true or false");
                sticky = json_object_get_boolean(v);
        }
        if (wait_idle && s->n_waiters >= WAITERS_MAX)
                return reply_invalid(s, call, "wait_idle", "too many calls wait already");
        /* "prolog..." after our prefix is what the prolog client sends */
        health_signal_reason_format(reason, s->conf.reason_prefix,
                                    isempty(text) ? "drained by an operator" : text, NULL);
        r = forced_start(s, call, HEALTH_WANT_FORCE_DRAIN, reason);
        if (r == SUNKD_CALL_PENDING)
                s->forced_sticky = sticky;
        if (r == SUNKD_CALL_PENDING && wait_idle) {
                s->waiters[s->n_waiters++] = (Waiter){
                        .call = call,
                        .deadline_usec = timeout > 0 ? now_usec(CLOCK_MONOTONIC) + (uint64_t) timeout : 0,
                };
                (void) s->ctx->api->call_on_gone(call, waiter_gone, s);
        }
        return r;
}

static int method_undrain(sunkd_call *call, json_object *params, void *state) {
        (void) params;
        return forced_start(state, call, HEALTH_WANT_UNDRAIN, NULL);
}

int methods_add(State *s) {
        static const sunkd_method methods[] = {
                { "io.sunkd.Health.Status", SUNKD_METHOD_ANY_UID, method_status },
                { "io.sunkd.Health.Run", SUNKD_METHOD_ROOT, method_run },
                { "io.sunkd.Health.Drain", SUNKD_METHOD_ROOT, method_drain },
                { "io.sunkd.Health.Undrain", SUNKD_METHOD_ROOT, method_undrain },
                { "io.sunkd.Health.Genconf", SUNKD_METHOD_ROOT, health_genconf_job_method },
        };
        return s->ctx->api->methods_add(s->ctx, methods, ELEMENTSOF(methods));
}
