/* One job per check, health.<name>: a built-in type runs its `run` in a
 * killable child (file systems, munge) or on a worker (/proc only), a
 * script runs through the host's spawn under its reaper (SUNKD_SPAWN_REAP:
 * nothing it starts outlives it), and each
 * result goes through the hysteresis here.  A change of what the checks
 * want from slurmctld kicks the signal job (health-judge.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <json-c/json.h>

#include "health-state.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/strv.h"
#include "util/time-util.h"
#include "util/trusted-path.h"

#define CHECK_TIMEOUT_DEFAULT_USEC (30 * SUNKD_USEC_PER_SEC)
#define SCRIPT_OUTPUT_MAX (64 * 1024)

static const char *const status_names[] = {
        [HEALTH_PASS] = "pass", [HEALTH_FAIL] = "fail", [HEALTH_UNKNOWN] = "unknown"
};

static json_object *result_to_json(const HealthResult *res) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "status", json_object_new_string(status_names[res->status]));
        json_object_object_add(o, "code", json_object_new_string(res->code));
        json_object_object_add(o, "detail", json_object_new_string(res->detail));
        return o;
}

/* What a child handed back; anything else is the check's own failure. */
static void result_from_json(json_object *o, HealthResult *res) {
        const char *st = json_member_string(o, "status");
        HealthStatus status = HEALTH_FAIL;

        for (size_t i = 0; st && i < ELEMENTSOF(status_names); i++)
                if (streq(st, status_names[i]))
                        status = (HealthStatus) i;
        if (!st) {
                health_result_set(res, HEALTH_FAIL, "check-error", "the check gave no result");
                return;
        }
        health_result_set(res, status, json_member_string(o, "code") ?: "", "%s",
                          json_member_string(o, "detail") ?: "");
}

/* sunkd_health_finding{check,code,remedy}: one series while a check fails,
 * its code the finding's and remedy what it recommends, so an alerting rule
 * can tell an XID from a full disk;
 * the series goes when the check passes or finds something else. */
static void show_finding(Check *k, const HealthResult *res) {
        const sunkd_host_api *api = k->s->ctx->api;
        bool was = k->have_result && k->last.status == HEALTH_FAIL, is = res->status == HEALTH_FAIL;

        if (was && (!is || !streq(k->last.code, res->code) || k->last.remedy != res->remedy))
                (void) api->metric_remove(k->s->m_finding,
                                          (const char *[]){ check_name(k), k->last.code,
                                                            health_code_remedy_to_string(k->last.remedy),
                                                            NULL });
        if (is)
                (void) api->metric_set(k->s->m_finding, 1,
                                       (const char *[]){ check_name(k), res->code,
                                                         health_code_remedy_to_string(res->remedy), NULL });
}

/* "Check 'x': fail (mount-missing, remedy reboot)", with the journal fields
 * SUNKD_HEALTH_CHECK=, SUNKD_HEALTH_STATUS=, SUNKD_HEALTH_CODE= and, for a
 * failure, SUNKD_HEALTH_REMEDY= for a journal query or a log shipper. */
static void log_result(Check *k, const HealthResult *res) {
        State *s = k->s;
        bool fail = res->status == HEALTH_FAIL;
        const char *remedy = health_code_remedy_to_string(res->remedy);
        char f_check[64], f_status[40], f_code[32 + HEALTH_CODE_MAX], f_remedy[64];
        const char *fields[] = { f_check, f_status, f_code, fail ? f_remedy : NULL, NULL };

        snprintf(f_check, sizeof(f_check), "SUNKD_HEALTH_CHECK=%s", check_name(k));
        snprintf(f_status, sizeof(f_status), "SUNKD_HEALTH_STATUS=%s", status_names[res->status]);
        snprintf(f_code, sizeof(f_code), "SUNKD_HEALTH_CODE=%s", res->code);
        snprintf(f_remedy, sizeof(f_remedy), "SUNKD_HEALTH_REMEDY=%s", remedy);
        (void) sunkd_log_fields(s->ctx, fail ? SUNKD_LOG_WARNING : SUNKD_LOG_INFO, fields,
                                "Check '%s': %s%s%s%s%s%s", check_name(k), status_names[res->status],
                                *res->code ? " (" : "", res->code, fail ? ", remedy " : "",
                                fail ? remedy : "", *res->code ? ")" : "");
}

static unsigned debounce_need(const State *s, const char *code) {
        for (size_t i = 0; i < s->n_debounce; i++)
                if (streq(s->debounce[i].code, code))
                        return s->debounce[i].need;
        return 0;
}

void health_check_jobs_record(Check *k, const HealthResult *res, uint64_t duration_usec) {
        State *s = k->s;
        const char *labels[] = { check_name(k), NULL };
        bool detail_changed =
                k->count.failing && res->status == HEALTH_FAIL && !streq(k->last.detail, res->detail);
        bool changed;
        HealthStatus counted;

        if (res->status != k->last.status || !streq(res->code, k->last.code) || !k->have_result)
                log_result(k, res);
        show_finding(k, res);
        k->last = *res;
        k->have_result = true;
        k->last_usec = now_usec(CLOCK_REALTIME);
        k->duration_usec = duration_usec;
        counted = health_count_debounce(&k->debounce, res->status, res->code, debounce_need(s, res->code));
        if (counted != res->status)
                sunkd_log_info(
                        s->ctx,
                        "Check '%s': %s not counted yet: %u of %u in a row since the start (debounce)",
                        check_name(k), res->code, k->debounce.seen, debounce_need(s, res->code));
        changed = health_count_feed(&k->count, counted, (unsigned) s->conf.fail_after,
                                    (unsigned) s->conf.pass_after);
        (void) s->ctx->api->metric_set(s->m_result,
                                       res->status == HEALTH_PASS   ? 1
                                       : res->status == HEALTH_FAIL ? 0
                                                                    : -1,
                                       labels);
        (void) s->ctx->api->metric_set(s->m_failing, k->count.failing, labels);
        (void) s->ctx->api->metric_set(s->m_duration, (double) duration_usec / 1e6, labels);
        if (changed)
                sunkd_log(s->ctx, k->count.failing ? SUNKD_LOG_WARNING : SUNKD_LOG_NOTICE, 0,
                          "Check '%s' is %s after %u %s%s%s", check_name(k),
                          k->count.failing ? "failing" : "passing again",
                          k->count.failing ? k->count.fails : k->count.passes,
                          k->count.failing ? "consecutive failures" : "consecutive passes",
                          k->count.failing ? ": " : "", k->count.failing ? res->detail : "");
        store_save(s);
        if ((changed || detail_changed) && k->action == HEALTH_ACTION_DRAIN)
                health_judge_kick(s, check_name(k));
        else
                health_judge_token_check(s);
        if (s->run_pending > 0 && --s->run_pending == 0)
                methods_run_done(s);
}

/* A run that did not end with a result: timed out, or failed to start. */
static void record_error(Check *k, int r) {
        HealthResult res = {};

        if (r == -ETIMEDOUT)
                health_result_set(&res, HEALTH_FAIL, "check-timeout", "no answer within %.1fs",
                                  (double) ((HealthCheckCommon *) k->conf)->timeout_usec / 1e6);
        else
                health_result_set(&res, HEALTH_FAIL, "check-error", "%s", strerror(-r));
        health_check_jobs_record(k, &res, 0);
}

typedef struct RunInput {
        uint64_t start_usec;
} RunInput;

static int builtin_prepare(void *state, void **ret_input) {
        RunInput *in = malloc(sizeof(*in));

        (void) state;
        if (!in)
                return -ENOMEM;
        in->start_usec = now_usec(CLOCK_MONOTONIC);
        *ret_input = in;
        return 0;
}

/* In a child or on a worker: the check, and nothing of the loop's. */
static int builtin_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        const Check *k = state;
        HealthEnv env = { .root = k->s->conf.root };
        HealthResult res = {};
        int r;

        (void) input;
        (void) cancel;
        r = k->type->run(k->conf, &env, &res);
        if (r < 0)
                health_result_set(&res, HEALTH_FAIL, "check-error", "%s", strerror(-r));
        *ret_result = result_to_json(&res);
        return *ret_result ? 0 : -ENOMEM;
}

static int builtin_done(void *state, int r, void *input, void *result) {
        Check *k = state;
        _cleanup_free_ RunInput *in = input;
        _cleanup_json_ json_object *o = result;
        HealthResult res = {};

        if (r == -ECANCELED)
                return r;
        if (r < 0) {
                record_error(k, r);
        } else {
                result_from_json(o, &res);
                health_check_jobs_record(k, &res, in ? now_usec(CLOCK_MONOTONIC) - in->start_usec : 0);
        }
        (void) k->s->ctx->api->job_set_message(k->job, k->last.detail);
        return r < 0 ? r : k->last.status == HEALTH_FAIL ? -EIO : 0;
}

/* The last non-empty line of @out, cut to what a reason holds. */
static void last_line(const char *out, char *buf, size_t len) {
        const char *end = out + strlen(out), *start;

        while (end > out && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
                end--;
        start = end;
        while (start > out && start[-1] != '\n')
                start--;
        (void) snprintf(buf, len, "%.*s", (int) MIN((size_t) (end - start), len - 1), start);
}

/* A script sunkd runs as root is what every file sunkd executes must be:
 * root's (or sunkd's) alone through each directory and link on its way
 * (trusted_path_check(), the prolog module's rule too), a regular file,
 * executable.  Checked when the config is read and again before each run:
 * a script swapped since is refused, not run. */
int health_check_jobs_script_trusted(const char *path, char **ret_error) {
        struct stat st;
        int r;

        r = trusted_path_check(path, "health script", 0, ret_error);
        if (r < 0)
                return r;
        if (stat(path, &st) < 0)
                return errmsg_set(ret_error, negative_errno(), "health script '%s': %m", path);
        if (!S_ISREG(st.st_mode))
                return errmsg_set(ret_error, -EPERM, "refusing health script '%s': not a regular file",
                                  path);
        if (!(st.st_mode & 0111))
                return errmsg_set(ret_error, -EACCES,
                                  "refusing health script '%s': not executable (mode %04o)", path,
                                  (unsigned) (st.st_mode & 07777));
        return 0;
}

static void script_finish(Check *k, const HealthResult *hr, uint64_t duration_usec) {
        health_check_jobs_record(k, hr, duration_usec);
        (void) k->s->ctx->api->job_set_message(k->job, k->last.detail);
        (void) k->s->ctx->api->job_complete(k->job, hr->status == HEALTH_FAIL ? -EIO : 0);
}

static void script_done_cb(void *userdata, int r, const sunkd_spawn_result *res) {
        Check *k = userdata;
        const ScriptConf *sc = k->conf;
        HealthResult hr = {};
        char line[HEALTH_DETAIL_MAX];

        k->child = NULL;
        if (r < 0)
                health_result_set(&hr, HEALTH_FAIL, "script-exec", "cannot run %s: %s", sc->path,
                                  strerror(-r));
        else if (res->timed_out)
                health_result_set(&hr, HEALTH_FAIL, "check-timeout", "no answer within %.1fs, killed",
                                  (double) sc->common.timeout_usec / 1e6);
        else if (res->signal != 0)
                health_result_set(&hr, HEALTH_FAIL, "script-signal", "killed by signal %d", res->signal);
        else {
                last_line(res->output, line, sizeof(line));
                if (!*line)
                        last_line(res->err_output, line, sizeof(line));
                if (res->exit_code == 0)
                        health_result_set(&hr, HEALTH_PASS, "", "%s", line);
                else
                        health_result_set(&hr, HEALTH_FAIL, "script-failed", "%s",
                                          *line ? line : "exited non-zero");
        }
        script_finish(k, &hr, res->duration_usec);
}

static int script_prepare(void *state, void **ret_input) {
        Check *k = state;
        const ScriptConf *sc = k->conf;
        _cleanup_free_ const char **argv = NULL;
        _cleanup_free_ char *error = NULL;
        size_t n = 0;
        char node_env[128];
        const char *envp[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", node_env,
                               NULL };
        int r;

        *ret_input = NULL;
        r = health_check_jobs_script_trusted(sc->path, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* not run: a failure that names the script and says why */
                HealthResult hr = {};

                health_result_set(&hr, HEALTH_FAIL, "script-refused", "%s", error ?: strerror(-r));
                script_finish(k, &hr, 0);
                return -EIO;
        }
        argv = calloc(2 + (sc->args ? strv_length(sc->args) : 0), sizeof(char *));
        if (!argv)
                return -ENOMEM;
        argv[n++] = sc->path;
        for (char **a = sc->args; a && *a; a++)
                argv[n++] = *a;
        /* what slurmd gives its HealthCheckProgram */
        (void) snprintf(node_env, sizeof(node_env), "SLURMD_NODENAME=%s", k->s->node_name);
        sunkd_spawn_spec spec = {
                .size = sizeof(spec),
                .argv = argv,
                .envp = envp,
                .timeout_usec = sc->common.timeout_usec,
                .output_max = SCRIPT_OUTPUT_MAX,
                .uid = (uid_t) -1,
                .gid = (gid_t) -1,
                .kill_grace_usec = 2 * SUNKD_USEC_PER_SEC,
                /* a check leaves nothing running as root: setsid or not */
                .flags = SUNKD_SPAWN_REAP,
        };
        r = k->s->ctx->api->spawn_start(k->s->ctx, &spec, script_done_cb, k, &k->child);
        return r;
}

static void script_cancel(void *state, void *input) {
        Check *k = state;

        (void) input;
        if (k->child)
                (void) k->s->ctx->api->child_kill(k->child);
}

static int script_done(void *state, int r, void *input, void *result) {
        Check *k = state;

        (void) input;
        (void) result;
        /* The callback completes with 0 or -EIO; anything else is a spawn
         * that never started or a run the host ended. */
        if (r < 0 && r != -EIO && r != -ECANCELED)
                record_error(k, r);
        return r;
}

static int check_add_job(State *s, Check *k) {
        HealthCheckCommon *common = k->conf;
        char name[64];
        int r;

        if (common->timeout_usec == 0)
                common->timeout_usec = CHECK_TIMEOUT_DEFAULT_USEC;
        (void) snprintf(name, sizeof(name), "health.%s", common->name);
        sunkd_job_spec spec = {
                .size = sizeof(spec),
                .name = name,
                .interval_usec = s->conf.interval_usec,
                .splay_usec = MIN(s->conf.interval_usec, 5 * SUNKD_USEC_PER_SEC),
                .jitter_pct = 5,
                /* a failing check keeps its interval: failing is its answer, not its error */
                .backoff_min_usec = s->conf.interval_usec,
                .backoff_max_usec = s->conf.interval_usec,
                .userdata = k,
        };
        switch (k->kind) {
        case CHECK_SCRIPT:
                spec.flags = SUNKD_JOB_ASYNC;
                spec.prepare = script_prepare;
                spec.done = script_done;
                spec.cancel = script_cancel;
                /* the spawn's own timeout and grace end it first */
                spec.timeout_usec = common->timeout_usec + 10 * SUNKD_USEC_PER_SEC;
                break;
        case CHECK_BUILTIN:
                spec.flags = k->type->child ? SUNKD_JOB_CHILD | SUNKD_JOB_CHILD_REUSE : 0;
                spec.prepare = builtin_prepare;
                spec.work = builtin_work;
                spec.done = builtin_done;
                spec.timeout_usec = common->timeout_usec;
                break;
        case CHECK_GPU:
                r = gpu_check_spec(s, k, &spec);
                if (r < 0)
                        return r;
                break;
        }
        return s->ctx->api->job_add(s->ctx, &spec, &k->job);
}

int health_check_jobs_add(State *s) {
        for (size_t i = 0; i < s->n_checks; i++) {
                int r = check_add_job(s, &s->checks[i]);
                if (r < 0)
                        return sunkd_log_error_errno(s->ctx, r, "Cannot add the job of check '%s': %m",
                                                     check_name(&s->checks[i]));
        }
        return 0;
}
