/* From the checks to slurmctld: what the checks want (the first failing
 * check whose action is drain, in the order of the config), and the job
 * health.signal that tells slurmctld, one round at a time through the
 * transport.  A round runs when a check changes its verdict, when an
 * operator asks, and every interval, so a drain lost to an unreachable
 * slurmctld is made once it answers again (with the scheduler's backoff). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/health-libslurm.h"
#include "health-state.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/text-escape.h"
#include "util/time-util.h"

#define WAIT_IDLE_POLL_USEC (1 * SUNKD_USEC_PER_SEC)

/* reason_words for @k's finding: its code's, then its remedy's, each once. */
static void words_for(const State *s, const Check *k, char *out, size_t size) {
        const char *remedy = health_code_remedy_to_string(k->last.remedy);
        size_t n = 0;

        out[0] = '\0';
        for (size_t i = 0; i < s->n_words; i++)
                if (streq(s->words[i].key, k->last.code) ||
                    (k->last.status == HEALTH_FAIL && streq(s->words[i].key, remedy)))
                        n += (size_t) snprintf(out + MIN(n, size), size - MIN(n, size), "%s ",
                                               s->words[i].text);
}

/* "<prefix>[<words> ]<check>: <detail>" */
static void check_reason(const State *s, const Check *k, char out[static HEALTH_REASON_MAX]) {
        char what[WORDS_MAX * 8 + CHECK_NAME_MAX + 160];
        size_t n;

        words_for(s, k, what, sizeof(what) - CHECK_NAME_MAX - 1);
        n = strlen(what);
        (void) snprintf(what + n, sizeof(what) - n, "%s", check_name(k));
        health_signal_reason_format(out, s->conf.reason_prefix, what, k->last.detail);
}

/* Every check passed, each run since the foreign token was first seen. */
static bool all_passed_since(const State *s) {
        if (s->token_seen_usec == 0)
                return false;
        for (size_t i = 0; i < s->n_checks; i++) {
                const Check *k = &s->checks[i];

                if (!k->have_result || k->last.status != HEALTH_PASS || k->count.failing ||
                    k->last_usec < s->token_seen_usec)
                        return false;
        }
        return true;
}

void health_judge_token_check(State *s) {
        if (s->token_seen_usec != 0 && all_passed_since(s))
                health_judge_kick(s, "undrain_foreign_token");
}

/* The check whose reason the node should carry, or NULL: healthy. */
static const Check *wanted(State *s) {
        char reason[HEALTH_REASON_MAX];

        for (size_t i = 0; i < s->n_checks; i++) {
                const Check *k = &s->checks[i];

                if (!k->count.failing || k->action != HEALTH_ACTION_DRAIN)
                        continue;
                /* someone resumed the node we drained for this finding: not
                 * again until the check passes or finds something else */
                check_reason(s, k, reason);
                if (streq(s->lifted_check, check_name(k)) && streq(s->lifted_reason, reason))
                        continue;
                return k;
        }
        return NULL;
}

/* A lifted check that passes again may drain again when it next fails. */
static void forget_lifted(State *s) {
        for (size_t i = 0; *s->lifted_check && i < s->n_checks; i++)
                if (streq(s->lifted_check, check_name(&s->checks[i])) && s->checks[i].count.failing)
                        return;
        s->lifted_check[0] = s->lifted_reason[0] = '\0';
}

static void signal_fill(State *s, HealthSignal *sig) {
        const Check *k;

        health_repair_check(s); /* a repair that failed asks for a sticky drain */
        *sig = (HealthSignal){ .max_drained_pct = (unsigned) s->conf.max_drained_pct };
        (void) snprintf(sig->prefix, sizeof(sig->prefix), "%s", s->conf.reason_prefix);
        (void) snprintf(sig->node, sizeof(sig->node), "%s", s->node_name);
        (void) snprintf(sig->foreign_token, sizeof(sig->foreign_token), "%s",
                        s->conf.undrain_foreign_token ?: "");
        sig->all_passed = all_passed_since(s);
        memcpy(sig->set_reason, s->set_reason, sizeof(sig->set_reason));
        memcpy(sig->sticky_reason, s->sticky_reason, sizeof(sig->sticky_reason));
        if (s->forced != HEALTH_WANT_HEALTHY) {
                sig->want = s->forced;
                memcpy(sig->reason, s->forced_reason, sizeof(sig->reason));
                return;
        }
        forget_lifted(s);
        k = wanted(s);
        if (k) {
                sig->want = HEALTH_WANT_DRAIN;
                check_reason(s, k, sig->reason);
                health_repair_fill(s, k, sig);
        }
}

/* What the round found out, into the state that outlives it.  Its message
 * quotes slurmctld's and slurmrestd's text (a node's reason, an error): it
 * enters the state here, through the one rule for outside text. */
void health_judge_apply_outcome(State *s, HealthSignal *sig) {
        const char *labels[] = { health_signal_outcome_to_string(sig->outcome), NULL };
        bool forced = sig->want == HEALTH_WANT_FORCE_DRAIN || sig->want == HEALTH_WANT_UNDRAIN;
        const Check *k = wanted(s);

        text_escape_buf(sig->message, sizeof(sig->message), TEXT_ESCAPE_LINE);
        switch (sig->outcome) {
        case HEALTH_OUTCOME_DRAINED:
        case HEALTH_OUTCOME_UPDATED:
                memcpy(s->set_reason, sig->reason, sizeof(s->set_reason));
                if (sig->want == HEALTH_WANT_FORCE_DRAIN)
                        (void) snprintf(s->sticky_reason, sizeof(s->sticky_reason), "%s",
                                        s->forced_sticky ? sig->reason : "");
                break;
        case HEALTH_OUTCOME_RESUMED:
                s->set_reason[0] = s->sticky_reason[0] = '\0';
                break;
        case HEALTH_OUTCOME_REPAIR:
                memcpy(s->set_reason, sig->reason, sizeof(s->set_reason));
                break;
        case HEALTH_OUTCOME_LIFTED:
                if (k) {
                        (void) snprintf(s->lifted_check, sizeof(s->lifted_check), "%s", check_name(k));
                        memcpy(s->lifted_reason, sig->reason, sizeof(s->lifted_reason));
                }
                s->set_reason[0] = '\0';
                break;
        case HEALTH_OUTCOME_UNCHANGED:
        case HEALTH_OUTCOME_OTHER:
                /* a sticky drain for the reason a check had set already */
                if (sig->outcome == HEALTH_OUTCOME_UNCHANGED && sig->want == HEALTH_WANT_FORCE_DRAIN &&
                    s->forced_sticky && sig->owner == HEALTH_OWNER_OURS)
                        memcpy(s->sticky_reason, sig->reason, sizeof(s->sticky_reason));
                /* nothing of ours on the node (any more): nothing to remember */
                if (sig->owner == HEALTH_OWNER_NONE || sig->owner == HEALTH_OWNER_OTHER)
                        s->set_reason[0] = s->sticky_reason[0] = '\0';
                break;
        default:
                break;
        }
        health_repair_outcome(s, sig);
        /* a foreign reason with the token, seen now: every check runs again,
         * and a round once they all passed may resume it */
        if (sig->token_seen && s->token_seen_usec == 0) {
                s->token_seen_usec = now_usec(CLOCK_REALTIME);
                for (size_t i = 0; i < s->n_checks; i++)
                        if (s->checks[i].job)
                                (void) s->ctx->api->job_trigger(s->checks[i].job, "undrain_foreign_token");
        } else if (!sig->token_seen && sig->outcome != HEALTH_OUTCOME_FAILED)
                s->token_seen_usec = 0;
        if (sig->outcome != HEALTH_OUTCOME_UNCHANGED || !s->have_outcome ||
            !streq(s->last_outcome, sig->message))
                sunkd_log(s->ctx,
                          sig->outcome == HEALTH_OUTCOME_GUARDED || sig->outcome == HEALTH_OUTCOME_FAILED ||
                                          sig->outcome == HEALTH_OUTCOME_REPAIR_HELD
                                  ? SUNKD_LOG_WARNING
                                  : SUNKD_LOG_NOTICE,
                          0, "%s", sig->message);
        (void) snprintf(s->last_outcome, sizeof(s->last_outcome), "%s", sig->message);
        s->outcome = sig->outcome;
        s->have_outcome = true;
        /* an operator's wish is tried once: the answer tells them how it
         * went, with the state after it (its last_signal is this round's) */
        if (forced) {
                s->forced = HEALTH_WANT_HEALTHY;
                methods_forced_done(s, sig);
        }
        (void) s->ctx->api->metric_add_value(s->m_signals, 1, labels);
        store_save(s);
}

/* The round's result as the job shows it.  A drain that found the node not
 * responding (a resume leaves it so for a second), or that the fleet guard
 * held, is tried again with the scheduler's backoff instead of waiting for
 * the next interval: the node drains soon after there is room. */
int health_judge_result(const HealthSignal *sig) {
        bool drain = sig->want == HEALTH_WANT_DRAIN || sig->want == HEALTH_WANT_FORCE_DRAIN;

        switch (sig->outcome) {
        case HEALTH_OUTCOME_FAILED:
                return -EIO;
        case HEALTH_OUTCOME_NOT_FOUND:
                return -ENOENT;
        case HEALTH_OUTCOME_UNREACHABLE:
                return drain ? -EAGAIN : 0;
        case HEALTH_OUTCOME_GUARDED:
                return -EAGAIN;
        default:
                return 0;
        }
}

void health_judge_kick(State *s, const char *why) {
        if (s->signal_job)
                (void) s->ctx->api->job_trigger(s->signal_job, why);
}

static int signal_prepare(void *state, void **ret_input) {
        State *s = state;
        HealthSignal *sig = calloc(1, sizeof(*sig));
        int r;

        *ret_input = NULL;
        if (!sig)
                return -ENOMEM;
        signal_fill(s, sig);
        s->signal = sig;
        r = scontrol_start(s);
        if (r < 0) {
                s->signal = NULL;
                free(sig);
        }
        return r;
}

static void signal_cancel(void *state, void *input) {
        (void) input;
        scontrol_cancel(state);
}

/* The interval of the next round: quick while someone waits for the node
 * to go idle. */
static void signal_pace(State *s) {
        uint64_t want = s->n_waiters > 0 ? WAIT_IDLE_POLL_USEC : s->conf.interval_usec,
                 repair = health_repair_next_usec(s);

        if (repair > 0 && repair < want)
                want = repair; /* the repair's bound is judged in a round */
        (void) s->ctx->api->job_set_interval(s->signal_job, want, 0);
}

static int signal_done(void *state, int r, void *input, void *result) {
        State *s = state;

        (void) input;
        (void) result;
        if (s->n_waiters > 0 && r >= 0)
                methods_answer_waiters(s, !s->node_busy, NULL);
        else if (s->n_waiters > 0)
                methods_answer_waiters(s, false, NULL); /* only those whose time is up */
        signal_pace(s);
        return r;
}

/* ---- libslurm and slurmrestd: the round as the job's work ---- */

static const char *transport_name(const State *s) {
        return s->transport == TRANSPORT_LIBSLURM ? "libslurm" : "slurmrestd";
}

static int round_prepare(void *state, void **ret_input) {
        HealthSignal *sig = calloc(1, sizeof(*sig));

        if (!sig)
                return -ENOMEM;
        signal_fill(state, sig);
        *ret_input = sig;
        return 0;
}

static int child_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        const State *s = state;
        HealthSignal *sig = input;
        json_object *o;

        (void) cancel;
        libslurm_round(sig, s->conf.slurm_conf, s->node_name);
        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        json_object_object_add(o, "outcome", json_object_new_int(sig->outcome));
        json_object_object_add(o, "owner", json_object_new_int(sig->owner));
        json_object_object_add(o, "busy", json_object_new_boolean(sig->busy));
        json_object_object_add(o, "token_seen", json_object_new_boolean(sig->token_seen));
        json_object_object_add(o, "message", json_object_new_string(sig->message));
        *ret_result = o;
        return 0;
}

/* On a worker the round fills the signal itself: no result. */
static int rest_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        const State *s = state;

        (void) ret_result;
        rest_round(input, &s->rest, s->node_name, cancel);
        return 0;
}

/* What the child said, into the round's own copy: bounded, for the child
 * shares our memory only up to the fork. */
static void child_result(HealthSignal *sig, json_object *o) {
        int64_t outcome = json_member_int64(o, "outcome", -1), owner = json_member_int64(o, "owner", -1);
        json_object *v;

        if (outcome < 0 || outcome > HEALTH_OUTCOME_REPAIR_HELD || owner < 0 || owner > HEALTH_OWNER_OTHER) {
                sig->outcome = HEALTH_OUTCOME_FAILED;
                (void) snprintf(sig->message, sizeof(sig->message), "the libslurm round gave no result");
                return;
        }
        sig->outcome = (HealthOutcome) outcome;
        sig->owner = (HealthOwner) owner;
        sig->busy = json_object_object_get_ex(o, "busy", &v) && json_object_get_boolean(v);
        sig->token_seen = json_object_object_get_ex(o, "token_seen", &v) && json_object_get_boolean(v);
        /* the child set the repair's reason in its own memory: the same here */
        if (sig->outcome == HEALTH_OUTCOME_REPAIR) {
                health_signal_repair_reason(sig->repair_reason, sig->prefix, sig->repair, sig->reason);
                memcpy(sig->reason, sig->repair_reason, sizeof(sig->reason));
        }
        (void) snprintf(sig->message, sizeof(sig->message), "%s", json_member_string(o, "message") ?: "");
}

static int round_done(void *state, int r, void *input, void *result) {
        State *s = state;
        _cleanup_free_ HealthSignal *sig = input;
        _cleanup_json_ json_object *o = result;

        if (!sig)
                return r;
        if (r == -ECANCELED)
                return r;
        if (r < 0) {
                sig->outcome = HEALTH_OUTCOME_FAILED;
                (void) snprintf(sig->message, sizeof(sig->message), "the %s round ended: %s",
                                transport_name(s), strerror(-r));
        } else if (s->transport == TRANSPORT_LIBSLURM)
                child_result(sig, o);
        s->node_busy = sig->busy;
        health_judge_apply_outcome(s, sig);
        (void) s->ctx->api->job_set_message(s->signal_job, sig->message);
        return signal_done(state, health_judge_result(sig), NULL, NULL);
}

int health_judge_add_job(State *s) {
        if (s->transport == TRANSPORT_NONE)
                return 0;
        sunkd_job_spec spec = {
                .size = sizeof(spec),
                .name = "health.signal",
                .interval_usec = s->conf.interval_usec,
                .splay_usec = 0,
                .backoff_min_usec = SUNKD_USEC_PER_SEC,
                .backoff_max_usec = MAX(s->conf.interval_usec, 2 * SUNKD_USEC_PER_SEC),
                .timeout_usec = 60 * SUNKD_USEC_PER_SEC,
        };
        if (s->transport == TRANSPORT_LIBSLURM) {
                spec.flags = SUNKD_JOB_CHILD;
                spec.prepare = round_prepare;
                spec.work = child_work;
                spec.done = round_done;
        } else if (s->transport == TRANSPORT_SLURMRESTD) {
                spec.prepare = round_prepare;
                spec.work = rest_work;
                spec.done = round_done;
        } else {
                spec.flags = SUNKD_JOB_ASYNC;
                spec.prepare = signal_prepare;
                spec.done = signal_done;
                spec.cancel = signal_cancel;
        }
        return s->ctx->api->job_add(s->ctx, &spec, &s->signal_job);
}
