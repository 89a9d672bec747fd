/* health: node health checks that drain and resume the node in slurmctld.
 *
 * This file holds the module: its definition, its state's life (init,
 * fini, status) and its metrics.  The rest, a concern a file, shares the
 * state of health-state.h:
 *
 *   health-settings.c  the section of sunkd.yaml: keys, checks, transport
 *   health-check-jobs.c  a job per check, and the hysteresis
 *   health-gpucheck.c  the gpu check: gres's fact judged by the XID policy
 *   health-judge.c     what the checks want, and the job health.signal
 *   transport/health-scontrol.c  the scontrol transport (spawns on the loop)
 *   transport/health-libslurm.c  the libslurm transport (a child per round)
 *   transport/health-rest.c      the slurmrestd transport (libcurl on a
 *                                worker)
 *   health-store.c     what survives a restart
 *   health-methods.c   io.sunkd.Health.{Status,Run,Drain,Undrain}
 *
 * What needs no module context (the check types in checks/ with their
 * table checks/health-check.c, the rules of draining health-signal.c, the
 * scontrol parser, slurmrestd's JSON and the JWT in transport/, the XID
 * policy) is libhealth, which the unit tests link.  The folder reads as a round does:
 * checks/ -> health-check-jobs.c -> health-judge.c -> health-signal.c ->
 * transport/.  There is no reload in place: a changed section restarts
 * the module, and health-store.c carries the hysteresis and our reason
 * over.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "health-state.h"
#include "sunkd/module.h"
#include "util/macro.h"

static int metrics_add(State *s) {
        const sunkd_metric_def defs[] = {
                { { sizeof(sunkd_metric_spec),
                    "health_check_result",
                    "The check's last result: 1 pass, 0 fail, -1 unknown.",
                    SUNKD_METRIC_GAUGE,
                    { "check", NULL } },
                  &s->m_result },
                { { sizeof(sunkd_metric_spec),
                    "health_check_failing",
                    "1 while the check is judged failing (fail_after consecutive failures).",
                    SUNKD_METRIC_GAUGE,
                    { "check", NULL } },
                  &s->m_failing },
                { { sizeof(sunkd_metric_spec),
                    "health_check_duration_seconds",
                    "How long the check's last run took.",
                    SUNKD_METRIC_GAUGE,
                    { "check", NULL } },
                  &s->m_duration },
                { { sizeof(sunkd_metric_spec),
                    "health_finding",
                    "1 for the finding a check reports while it fails, by its stable code and the "
                    "action it recommends.",
                    SUNKD_METRIC_GAUGE,
                    { "check", "code", "remedy", NULL } },
                  &s->m_finding },
                { { sizeof(sunkd_metric_spec),
                    "health_signals_total",
                    "Rounds with slurmctld, by what came of them.",
                    SUNKD_METRIC_COUNTER,
                    { "outcome", NULL } },
                  &s->m_signals },
                { { sizeof(sunkd_metric_spec),
                    "health_repairs_total",
                    "Repairs, by action and what came of them: taken, held (a limit), helped, failed.",
                    SUNKD_METRIC_COUNTER,
                    { "action", "outcome", NULL } },
                  &s->m_repairs },
        };

        return sunkd_metrics_add(s->ctx, defs, ELEMENTSOF(defs));
}

static void health_fini(void *state) {
        State *s = state;

        if (!s)
                return;
        methods_answer_waiters(s, false, "sunkd's health module stopped");
        health_repair_cancel(s);
        rest_fini(s);
        settings_clear(s);
        health_gpu_free(s->gpu);
        free(s->saved);
        free(s);
}

static int health_init(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state) {
        State *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->ctx = c;
        *ret_state = s;
        r = settings_parse(c, cfg, s);
        if (r < 0)
                return r;
        r = rest_init(s);
        if (r < 0)
                return r;
        store_load(s);
        r = metrics_add(s);
        if (r < 0)
                return r;
        r = methods_add(s);
        if (r < 0)
                return sunkd_log_error_errno(c, r, "Cannot add the io.sunkd.Health methods: %m");
        r = health_check_jobs_add(s);
        if (r < 0)
                return r;
        r = health_judge_add_job(s);
        if (r < 0)
                return sunkd_log_error_errno(c, r, "Cannot add the job health.signal: %m");
        r = health_genconf_job_add(s);
        if (r < 0)
                return r;
        sunkd_log_info(c, "Watching node %s with %zu checks, drains %s.", s->node_name, s->n_checks,
                       s->transport == TRANSPORT_NONE         ? "reported only (transport none)"
                       : s->transport == TRANSPORT_LIBSLURM   ? "through libslurm"
                       : s->transport == TRANSPORT_SLURMRESTD ? "through slurmrestd"
                                                              : "through scontrol");
        return 0;
}

/* Validates a section without side effects: the same parse, then freed. */
static int health_check(sunkd_ctx *c, const sunkd_cfg *cfg) {
        State s = { .ctx = c };
        int r = settings_parse(c, cfg, &s);

        settings_clear(&s);
        return r;
}

static int health_status(void *state, json_object *out) {
        return health_status_fill(state, out);
}

SUNKD_MODULE_DEFINE(.name = "health", .version = PACKAGE_VERSION, .init = health_init, .check = health_check,
                    .reload = NULL, .fini = health_fini, .status = health_status);
