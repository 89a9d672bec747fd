/* io.sunkd.Prolog.Run: one job's prolog or epilog directory, script after
 * script, each a child of the host's spawn, all on the loop.
 *
 * A run answers its call when it ends.  When the client goes first
 * (slurmd's own timeout killed it, or someone did), the script running then
 * is killed with its process group and the run is recorded as aborted:
 * nobody waits for its result, and slurmd has already given up on the job's
 * prolog.  A prolog stops at its first failure, as slurmd's own does; an
 * epilog runs every script, since each cleans up something of its own. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prolog-environ.h"
#include "prolog-script.h"
#include "prolog-state.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/strv.h"
#include "util/text-clean.h"
#include "util/text-escape.h"
#include "util/time-util.h"

static void run_next(Run *run);

Run *run_free(Run *run) {
        if (!run)
                return NULL;
        strv_free(run->env);
        prolog_scripts_free(run->scripts, run->n_scripts);
        for (size_t i = 0; i < run->n_results; i++) {
                free(run->results[i].name);
                free(run->results[i].why);
        }
        free(run->results);
        free(run->error);
        free(run->failed_output);
        free(run);
        return NULL;
}

/* SLURM_JOB_ID as a journal field can hold it: a job id, or "-". */
static void take_job_id(Run *run) {
        const char *v = NULL;

        for (char **e = run->env; e && *e; e++)
                if (strncmp(*e, "SLURM_JOB_ID=", strlen("SLURM_JOB_ID=")) == 0)
                        v = *e + strlen("SLURM_JOB_ID=");
        if (!v || !*v || strlen(v) >= sizeof(run->job_id) || strspn(v, "0123456789_.") != strlen(v)) {
                strcpy(run->job_id, "-");
                return;
        }
        strcpy(run->job_id, v);
}

static void log_script(Run *run, const ScriptResult *res, const char *output, size_t output_len) {
        State *s = run->s;
        const char *kind = prolog_kind_name(run->kind);
        char name[128], f_job[64], f_script[160], f_kind[40], how[96], sig[16], took[32];
        bool failed = res->r < 0 || res->signal || res->exit_code != 0;
        size_t n = 0;

        while (output_len > 0 && output[output_len - 1] == '\n')
                output_len--;
        text_append_clean(name, sizeof(name), &n, res->name);
        snprintf(f_job, sizeof(f_job), "SUNKD_SLURM_JOB_ID=%s", run->job_id);
        snprintf(f_script, sizeof(f_script), "SUNKD_SCRIPT=%s", name);
        snprintf(f_kind, sizeof(f_kind), "SUNKD_PROLOG_KIND=%s", kind);
        const char *const fields[] = { f_job, f_script, f_kind, NULL };

        if (res->r < 0)
                snprintf(how, sizeof(how), "cannot execute: %s", prolog_exec_why(res->r));
        else if (res->timed_out)
                snprintf(how, sizeof(how), "timed out, ended by %s",
                         prolog_signal_name(res->signal ?: SIGKILL, sig));
        else if (res->signal)
                snprintf(how, sizeof(how), "killed by %s", prolog_signal_name(res->signal, sig));
        else
                snprintf(how, sizeof(how), "exit status %d", res->exit_code);
        (void) s->ctx->api->log_fields(
                s->ctx, failed ? SUNKD_LOG_WARNING : SUNKD_LOG_INFO, fields,
                "%s script '%s' of job %s: %s after %s%s%.*s", kind, name, run->job_id, how,
                format_duration(took, sizeof(took), res->duration_usec), output_len ? "; its output:\n" : "",
                (int) MIN(output_len, (size_t) INT_MAX), output ?: "");
}

static int result_add(Run *run, const char *name, ScriptResult **ret) {
        ScriptResult *a = reallocarray(run->results, run->n_results + 1, sizeof(*a));

        if (!a)
                return -ENOMEM;
        run->results = a;
        /* a file's name may hold any byte: it enters the state escaped */
        a[run->n_results] = (ScriptResult){ .name = text_escape_str(name, TEXT_ESCAPE_LINE) };
        if (!a[run->n_results].name)
                return -ENOMEM;
        *ret = &a[run->n_results++];
        return 0;
}

/* The first failure names the run's reason; the output kept is its end. */
static void note_failure(Run *run, const ScriptResult *res, const char *output, size_t output_len) {
        size_t keep = MIN(output_len, (size_t) PROLOG_HISTORY_OUTPUT_MAX);
        const PrologFailure f = {
                .script = res->name,
                .exit_code = res->exit_code,
                .signal = res->signal,
                .timed_out = res->timed_out,
                .error = res->r < 0 ? prolog_exec_why(res->r) : NULL,
                .output = output,
                .output_len = output_len,
        };

        if (res->timed_out)
                run->timed_out = true;
        if (run->reason[0])
                return;
        prolog_failure_reason(run->reason, run->kind, &f);
        /* the end of the output, from the start of a UTF-8 character, enters
         * the state through the one rule for outside text */
        while (keep > 0 && keep < output_len && ((unsigned char) output[output_len - keep] & 0xc0) == 0x80)
                keep--;
        if (keep > 0)
                run->failed_output = text_escape(output + output_len - keep, keep, 0, 0);
}

static void counters_add(State *s, const Run *run) {
        const char *labels[] = { prolog_kind_name(run->kind), NULL };
        uint64_t *c = s->counts[run->kind];
        const sunkd_host_api *api = s->ctx->api;

        c[0]++;
        (void) api->metric_add_value(s->m_runs, 1, labels);
        if (run->result == RUN_FAILED) {
                c[1]++;
                (void) api->metric_add_value(s->m_failures, 1, labels);
        }
        if (run->timed_out) {
                c[2]++;
                (void) api->metric_add_value(s->m_timeouts, 1, labels);
        }
        if (run->result == RUN_ABORTED) {
                c[3]++;
                (void) api->metric_add_value(s->m_aborts, 1, labels);
        }
        (void) api->metric_set(s->m_duration, (double) run->duration_usec / 1e6, labels);
}

static void runs_remove(State *s, Run *run) {
        for (size_t i = 0; i < s->n_runs; i++)
                if (s->runs[i] == run) {
                        memmove(s->runs + i, s->runs + i + 1, (s->n_runs - i - 1) * sizeof(*s->runs));
                        s->n_runs--;
                        return;
                }
}

static void run_finish(Run *run) {
        State *s = run->s;
        char took[32];

        run->duration_usec = now_usec(CLOCK_MONOTONIC) - run->start_mono;
        if (run->result == RUN_RUNNING)
                run->result = run->reason[0] ? RUN_FAILED : RUN_OK;
        counters_add(s, run);
        format_duration(took, sizeof(took), run->duration_usec);
        if (run->result == RUN_OK)
                sunkd_log_info(s->ctx, "%s of job %s: %zu script(s) passed in %s.",
                               prolog_kind_name(run->kind), run->job_id, run->n_results, took);
        else if (run->result == RUN_ABORTED)
                sunkd_log_warning(s->ctx,
                                  "%s of job %s aborted after %s: its client went away (slurmd's timeout?); "
                                  "the script running then was killed.",
                                  prolog_kind_name(run->kind), run->job_id, took);
        else
                sunkd_log_warning(s->ctx, "%s of job %s failed after %s: %s", prolog_kind_name(run->kind),
                                  run->job_id, took, run->reason);
        if (run->call)
                (void) s->ctx->api->reply(TAKE_PTR(run->call), run_to_json(run, true));
        runs_remove(s, run);
        history_add(s, run);
        if (s->lingering && s->n_runs == 0)
                s->ctx->api->linger_end(s->ctx);
}

/* After a script: a prolog stops at a failure, an epilog goes on, and an
 * aborted run stops. */
static void script_ended(Run *run, const ScriptResult *res, const char *output, size_t output_len) {
        bool failed = res->r < 0 || res->signal || res->exit_code != 0;

        log_script(run, res, output, output_len);
        if (failed && run->result != RUN_ABORTED)
                note_failure(run, res, output, output_len);
        if (run->result == RUN_ABORTED || (failed && run->kind == PROLOG_KIND_PROLOG) ||
            res->r == -ETIMEDOUT)
                run_finish(run);
        else
                run_next(run);
}

static void on_script_done(void *userdata, int r, const sunkd_spawn_result *res) {
        Run *run = userdata;
        ScriptResult *sr;

        run->child = NULL;
        /* What the script left running in its group goes with it, as in the
         * client's own runner.  Its pid is reaped, but a group that still
         * has members keeps the pid from reuse, so this reaches only them. */
        if (res->pid > 0)
                (void) kill(-res->pid, SIGKILL);
        if (result_add(run, run->scripts[run->next - 1].name, &sr) < 0) {
                sunkd_log_error(run->s->ctx, "Out of memory recording a script's result.");
                run->result = run->result == RUN_ABORTED ? RUN_ABORTED : RUN_FAILED;
                snprintf(run->reason, sizeof(run->reason), "%s: out of memory", prolog_kind_name(run->kind));
                run_finish(run);
                return;
        }
        *sr = (ScriptResult){
                .name = sr->name,
                .r = r,
                .exit_code = res->exit_code,
                .signal = res->signal,
                .timed_out = res->timed_out,
                .duration_usec = res->duration_usec,
        };
        prolog_last_line(res->output, res->output_len, sr->last_line, sizeof(sr->last_line));
        script_ended(run, sr, res->output, res->output_len);
}

/* The result of a script that does not run: r < 0 refused, out of time or
 * no spawn; r == 0 skipped (sc->why says why).  -ENOMEM ends the run. */
static int result_not_run(Run *run, const PrologScript *sc, int r, ScriptResult **ret) {
        ScriptResult *sr;

        if (result_add(run, sc->name, &sr) < 0 ||
            (sc->why && !(sr->why = text_escape_str(sc->why, TEXT_ESCAPE_LINE)))) {
                run->result = RUN_FAILED;
                snprintf(run->reason, sizeof(run->reason), "%s: out of memory", prolog_kind_name(run->kind));
                run_finish(run);
                return -ENOMEM;
        }
        sr->r = r;
        *ret = sr;
        return 0;
}

/* A script that never started: refused, out of time, or no spawn. */
static void script_not_run(Run *run, const PrologScript *sc, int r) {
        ScriptResult *sr;

        if (result_not_run(run, sc, r, &sr) < 0)
                return;
        if (sc->why)
                sunkd_log_error(run->s->ctx, "%s of job %s: %s", prolog_kind_name(run->kind), run->job_id,
                                sc->why);
        script_ended(run, sr, NULL, 0);
}

static int script_start(Run *run, const PrologScript *sc, uint64_t timeout, char **ret_error) {
        const PrologSettings *set = &run->s->conf.set;
        _cleanup_strv_free_ char **envp = prolog_script_env(run->env, sc->name);
        const char *const argv[] = { sc->path, NULL };
        const sunkd_spawn_spec spec = {
                .size = sizeof(spec),
                .argv = argv,
                .envp = (const char *const *) envp,
                .timeout_usec = timeout,
                .output_max = set->output_limit,
                .uid = (uid_t) -1,
                .gid = (gid_t) -1,
                .kill_grace_usec = set->kill_grace_usec,
                .flags = SUNKD_SPAWN_MERGE_STDERR,
        };
        int r;

        if (!envp)
                return -ENOMEM;
        /* the spawn executes the path: what is there now passes the checks
         * the listing made, or it does not run (it may have changed since) */
        r = prolog_script_check(sc, ret_error);
        if (r < 0)
                return r;
        return run->s->ctx->api->spawn_start(run->s->ctx, &spec, on_script_done, run, &run->child);
}

static void run_next(Run *run) {
        _cleanup_free_ char *why = NULL;
        const PrologScript *sc;
        uint64_t timeout;
        int r;

        /* skipped entries are recorded, in a loop: a directory may hold many */
        while (run->result != RUN_ABORTED && run->next < run->n_scripts && run->scripts[run->next].why &&
               run->scripts[run->next].error == 0)
                if (result_not_run(run, &run->scripts[run->next++], 0, &(ScriptResult *){ NULL }) < 0)
                        return;
        if (run->result == RUN_ABORTED || run->next >= run->n_scripts) {
                run_finish(run);
                return;
        }
        sc = &run->scripts[run->next++];
        timeout = prolog_script_timeout(&run->s->conf.set, now_usec(CLOCK_MONOTONIC) - run->start_mono);
        r = timeout == 0 ? -ETIMEDOUT : script_start(run, sc, timeout, &why);
        if (r < 0) {
                if (r != -ETIMEDOUT)
                        sunkd_log_error_errno(run->s->ctx, r,
                                              "Cannot start %s script '%s' (%s) of job %s: %s",
                                              prolog_kind_name(run->kind), sc->name, sc->path, run->job_id,
                                              why ?: strerror(-r));
                if (why && !run->error)
                        run->error = TAKE_PTR(why);
                script_not_run(run, sc, r);
        }
}

static void run_gone(sunkd_call *call, void *userdata) {
        Run *run = userdata;

        (void) call;
        run->result = RUN_ABORTED;
        if (run->child)
                (void) run->s->ctx->api->child_kill(run->child);
}

/* ---- The call ---- */

int run_reply_invalid(State *s, sunkd_call *call, const char *param, const char *why) {
        json_object *p = json_object_new_object();
        _cleanup_free_ char *name = text_escape_str(param, TEXT_ESCAPE_LINE); /* a caller's key, for List */

        if (p) {
                json_object_object_add(p, "parameter", json_object_new_string(name ?: ""));
                json_object_object_add(p, "reason", json_object_new_string(why));
        }
        return s->ctx->api->reply_error(call, "org.varlink.service.InvalidParameter", p);
}

static int parse_kind(json_object *params, PrologKind *ret) {
        const char *k = json_member_string(params, "kind");

        if (k && streq(k, "prolog"))
                *ret = PROLOG_KIND_PROLOG;
        else if (k && streq(k, "epilog"))
                *ret = PROLOG_KIND_EPILOG;
        else
                return -EINVAL;
        return 0;
}

/* The job's environment: "environ", base64 of its NUL-ended entries
 * (prolog-environ.h), any bytes; or "env", an array of "NAME=value" strings,
 * what clients before it sent. */
static int parse_env(json_object *params, char ***ret) {
        _cleanup_strv_free_ char **env = NULL;
        json_object *a;
        size_t n;

        if (json_object_object_get_ex(params, "environ", &a)) {
                if (!json_object_is_type(a, json_type_string))
                        return -EINVAL;
                return prolog_environ_decode(json_object_get_string(a), ret);
        }
        if (!json_object_object_get_ex(params, "env", &a) || !json_object_is_type(a, json_type_array))
                return -EINVAL;
        n = json_object_array_length(a);
        env = calloc(n + 1, sizeof(char *));
        if (!env)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *v = json_object_array_get_idx(a, i);
                const char *e = json_object_get_string(v);

                if (!json_object_is_type(v, json_type_string) || !e || e[0] == '=' || !strchr(e, '='))
                        return -EINVAL;
                env[i] = strdup(e);
                if (!env[i])
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(env);
        return 0;
}

static int run_create(State *s, sunkd_call *call, PrologKind kind, char **env, Run **ret) {
        Run *run = calloc(1, sizeof(*run));
        Run **a;

        if (!run)
                return -ENOMEM;
        a = reallocarray(s->runs, s->n_runs + 1, sizeof(*a));
        if (!a) {
                free(run);
                return -ENOMEM;
        }
        s->runs = a;
        *run = (Run){
                .s = s,
                .id = ++s->next_id,
                .kind = kind,
                .env = env,
                .call = call,
                .start_mono = now_usec(CLOCK_MONOTONIC),
                .start_real = now_usec(CLOCK_REALTIME),
        };
        take_job_id(run);
        s->runs[s->n_runs++] = run;
        *ret = run;
        return 0;
}

/* A directory that cannot be listed, or is refused, fails the run. */
static void run_list_failed(Run *run, int r, char *error) {
        const char *dir = prolog_settings_dir(&run->s->conf.set, run->kind);
        const PrologFailure f = { .script = dir, .error = prolog_dir_why(r) };

        sunkd_log_error(run->s->ctx, "%s of job %s: %s", prolog_kind_name(run->kind), run->job_id,
                        error ?: strerror(-r));
        run->error = text_escape_str(error ?: strerror(-r), TEXT_ESCAPE_LINE);
        free(error);
        prolog_failure_reason(run->reason, run->kind, &f);
        run_finish(run);
}

/* The entries a listing skips, logged when they change, not at every run:
 * a script that lost its x bit is said once, and again after a fix. */
static void skipped_log(State *s, PrologKind kind, const PrologScript *sc, size_t n) {
        _cleanup_free_ char *said = NULL;
        size_t len = 0;
        const char *sep = "";
        FILE *f = open_memstream(&said, &len);

        if (!f)
                return;
        for (size_t i = 0; i < n; i++)
                if (sc[i].why && sc[i].error == 0) {
                        fprintf(f, "%s'%s' (%s)", sep, sc[i].name, sc[i].why);
                        sep = ", ";
                }
        if (fclose(f) != 0 || !said)
                return;
        if (streq(said, s->skipped_said[kind] ?: ""))
                return;
        if (said[0])
                sunkd_log_warning(s->ctx, "%s directory %s: not run: %s.", prolog_kind_name(kind),
                                  prolog_settings_dir(&s->conf.set, kind), said);
        else
                sunkd_log_notice(s->ctx, "%s directory %s: every script runs again.", prolog_kind_name(kind),
                                 prolog_settings_dir(&s->conf.set, kind));
        free(s->skipped_said[kind]);
        s->skipped_said[kind] = TAKE_PTR(said);
}

static int method_run(sunkd_call *call, json_object *params, void *state) {
        const PrologScript *refused;
        State *s = state;
        _cleanup_strv_free_ char **env = NULL;
        char *error = NULL;
        PrologKind kind;
        uint64_t id;
        Run *run;
        int r;

        if (parse_kind(params, &kind) < 0)
                return run_reply_invalid(s, call, "kind", "\"prolog\" or \"epilog\"");
        r = parse_env(params, &env);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return run_reply_invalid(
                        s, call, "environ",
                        "base64 of the environment's NUL-ended entries (or \"env\": an array of "
                        "\"NAME=value\" strings)");
        if (s->n_runs >= PROLOG_RUNS_MAX)
                return s->ctx->api->reply_error(
                        call, "io.sunkd.Prolog.Busy",
                        json_object_new_string_object("reason", "too many runs in flight"));
        r = run_create(s, call, kind, env, &run);
        if (r < 0)
                return r;
        env = NULL;
        r = prolog_dir_select(prolog_settings_dir(&s->conf.set, kind), kind, &s->conf.set.select,
                              prolog_select_env_partition(run->env), &run->scripts, &run->n_scripts, &error);
        if (r < 0) {
                run_list_failed(run, r, error);
                return 0;
        }
        skipped_log(s, kind, run->scripts, run->n_scripts);
        refused = prolog_scripts_refused(run->scripts, run->n_scripts);
        if (refused) {
                /* the run fails at it, and nothing after it runs either */
                run->next = run->n_scripts;
                script_not_run(run, refused, refused->error);
                return 0;
        }
        (void) s->ctx->api->call_on_gone(call, run_gone, run);
        id = run->id;
        run_next(run);
        /* the run may have ended (and been answered) already */
        for (size_t i = 0; i < s->n_runs; i++)
                if (s->runs[i]->id == id)
                        return SUNKD_CALL_PENDING;
        return 0;
}

/* How long a stop waits for the runs in flight: each may take its total
 * and the grace of its last kill. */
uint64_t runs_linger_usec(State *s) {
        const PrologSettings *set = &s->conf.set;
        uint64_t now = now_usec(CLOCK_MONOTONIC), longest = 0;

        for (size_t i = 0; i < s->n_runs; i++) {
                uint64_t end = s->runs[i]->start_mono + set->total_timeout_usec + set->kill_grace_usec;

                longest = MAX(longest, end > now ? end - now : 1);
        }
        return longest;
}

/* Status is prolog-history.c's, List prolog-list.c's; the host takes a
 * module's methods at once. */
int methods_add(State *s) {
        static const sunkd_method methods[] = {
                { "io.sunkd.Prolog.Run", SUNKD_METHOD_ROOT, method_run },
                { "io.sunkd.Prolog.Status", SUNKD_METHOD_ROOT, history_method_status },
                { "io.sunkd.Prolog.List", SUNKD_METHOD_ROOT, prolog_list_method },
        };
        return s->ctx->api->methods_add(s->ctx, methods, ELEMENTSOF(methods));
}
