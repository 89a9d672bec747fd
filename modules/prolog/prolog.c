/* prolog: slurmd's prolog and epilog directories, run for the client
 * sunkd-prolog (sunkd-epilog) that slurm.conf's Prolog= and Epilog= name.
 *
 * This file holds the module: its definition, its state's life, its
 * metrics and its linger at a stop.  The rest:
 *
 *   prolog-conf.c     the section of sunkd.yaml, and the settings file
 *                     the client's fallback reads
 *   prolog-run.c      io.sunkd.Prolog.Run: a run, script after script
 *   prolog-history.c  the runs remembered, io.sunkd.Prolog.Status
 *   prolog-list.c     io.sunkd.Prolog.List: what a run would do, run by none
 *
 * What the client compiles in too (the directory scan and its checks, the
 * order, name rules and partitions of prolog-select.c, a script's
 * environment, the settings file, the reason text) is libprolog;
 * the client's own runner, which forks, is libprolog-exec, which the module
 * never links.
 * A stop (sunkd restarting, a package upgrade) lets the runs in flight end
 * first, within their total_timeout and kill_grace: killing them would fail
 * the prolog of every job starting on the node then. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prolog-state.h"
#include "util/cleanup.h"
#include "util/macro.h"

static int metrics_add(State *s) {
        const sunkd_metric_def defs[] = {
                { { sizeof(sunkd_metric_spec),
                    "prolog_runs_total",
                    "Runs of a script directory, by kind.",
                    SUNKD_METRIC_COUNTER,
                    { "kind", NULL } },
                  &s->m_runs },
                { { sizeof(sunkd_metric_spec),
                    "prolog_failures_total",
                    "Runs that failed: a script failed, timed out or could not run.",
                    SUNKD_METRIC_COUNTER,
                    { "kind", NULL } },
                  &s->m_failures },
                { { sizeof(sunkd_metric_spec),
                    "prolog_timeouts_total",
                    "Runs in which a script was stopped at its timeout.",
                    SUNKD_METRIC_COUNTER,
                    { "kind", NULL } },
                  &s->m_timeouts },
                { { sizeof(sunkd_metric_spec),
                    "prolog_aborts_total",
                    "Runs whose client went away before they ended.",
                    SUNKD_METRIC_COUNTER,
                    { "kind", NULL } },
                  &s->m_aborts },
                { { sizeof(sunkd_metric_spec),
                    "prolog_last_run_duration_seconds",
                    "How long the last run took, by kind.",
                    SUNKD_METRIC_GAUGE,
                    { "kind", NULL } },
                  &s->m_duration },
        };

        return sunkd_metrics_add(s->ctx, defs, ELEMENTSOF(defs));
}

/* The client finds the settings beside the socket it calls (module.h:
 * runtime_dir), whatever state_dir is.  What releases before this one left
 * in the state directory is removed: no client reads it any more, and a
 * stale copy would only mislead. */
static int settings_path_init(State *s) {
        const char *dir = s->ctx->api->runtime_dir(s->ctx);
        _cleanup_free_ char *old = NULL;

        if (asprintf(&old, "%s/%s", s->ctx->api->state_dir(s->ctx), PROLOG_SETTINGS_FILE) < 0) {
                old = NULL;
                return -ENOMEM;
        }
        (void) unlink(old);
        if (!dir) {
                sunkd_log_warning(s->ctx,
                                  "The client's fallback will find no settings: with sunkd down it fails "
                                  "rather than guess the directories.");
                return 0;
        }
        if (asprintf(&s->settings_path, "%s/%s", dir, PROLOG_SETTINGS_FILE) < 0) {
                s->settings_path = NULL;
                return -ENOMEM;
        }
        return 0;
}

static void prolog_fini(void *state) {
        State *s = state;

        if (!s)
                return;
        /* the host has ended every child: each run has been answered */
        for (size_t i = 0; i < s->n_runs; i++)
                run_free(s->runs[i]);
        free(s->runs);
        history_free(s);
        for (int k = 0; k < _PROLOG_KIND_MAX; k++)
                free(s->skipped_said[k]);
        conf_clear(s->ctx, &s->conf);
        free(s->settings_path);
        free(s);
}

static int prolog_init(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state) {
        State *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->ctx = c;
        *ret_state = s;
        r = conf_parse(c, cfg, &s->conf);
        if (r < 0)
                return r;
        r = settings_path_init(s);
        if (r < 0)
                return r;
        (void) conf_publish(s);
        r = metrics_add(s);
        if (r < 0)
                return r;
        r = methods_add(s);
        if (r < 0)
                return sunkd_log_error_errno(c, r, "Cannot add the io.sunkd.Prolog methods: %m");
        sunkd_log_info(c, "Running %s and %s for slurmd's sunkd-prolog and sunkd-epilog.",
                       s->conf.set.prolog_dir, s->conf.set.epilog_dir);
        return 0;
}

static int prolog_check(sunkd_ctx *c, const sunkd_cfg *cfg) {
        Conf conf = {};
        int r = conf_parse(c, cfg, &conf);

        conf_clear(c, &conf);
        return r;
}

/* In place: a run in flight keeps the settings it started with only in the
 * sense that its scripts are listed; its next script follows the new ones. */
static int prolog_reload(void *state, const sunkd_cfg *cfg) {
        State *s = state;
        Conf conf = {}, old;
        int r;

        r = conf_parse(s->ctx, cfg, &conf);
        if (r < 0) {
                conf_clear(s->ctx, &conf);
                return r;
        }
        old = s->conf;
        s->conf = conf;
        conf_clear(s->ctx, &old);
        history_trim(s);
        (void) conf_publish(s);
        return 0;
}

static uint64_t prolog_linger(void *state) {
        State *s = state;
        uint64_t usec = runs_linger_usec(s);

        if (usec > 0) {
                s->lingering = true;
                sunkd_log_notice(s->ctx, "Stopping: waiting up to %.1fs for %zu run(s) in flight to end.",
                                 (double) usec / 1e6, s->n_runs);
        }
        return usec;
}

static int prolog_status(void *state, json_object *out) {
        State *s = state;

        json_object_object_add(out, "prolog_dir", json_object_new_string(s->conf.set.prolog_dir));
        json_object_object_add(out, "epilog_dir", json_object_new_string(s->conf.set.epilog_dir));
        json_object_object_add(out, "running", json_object_new_int64((int64_t) s->n_runs));
        for (int k = 0; k < _PROLOG_KIND_MAX; k++) {
                static const char *const what[] = { "runs", "failures", "timeouts", "aborts" };
                char key[48];

                for (size_t i = 0; i < ELEMENTSOF(what); i++) {
                        snprintf(key, sizeof(key), "%s_%s", prolog_kind_name((PrologKind) k), what[i]);
                        json_object_object_add(out, key, json_object_new_int64((int64_t) s->counts[k][i]));
                }
        }
        return 0;
}

SUNKD_MODULE_DEFINE(.name = "prolog", .version = PACKAGE_VERSION, .init = prolog_init, .check = prolog_check,
                    .reload = prolog_reload, .fini = prolog_fini, .status = prolog_status,
                    .linger = prolog_linger);
