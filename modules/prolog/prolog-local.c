/* The client's own run of a directory, by the module's rules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prolog-local.h"
#include "util/cleanup.h"
#include "util/time-util.h"

static bool failed(int r, const PrologExecResult *res) {
        return r < 0 || res->signal != 0 || res->exit_code != 0;
}

static void note(PrologKind kind, const PrologScript *s, int r, const PrologExecResult *res, char *reason) {
        const PrologFailure f = {
                .script = s->name,
                .exit_code = res->exit_code,
                .signal = res->signal,
                .timed_out = res->timed_out,
                .error = r < 0 ? prolog_exec_why(r) : NULL,
                .output = res->output,
                .output_len = res->output_len,
        };

        if (!reason[0])
                prolog_failure_reason(reason, kind, &f);
}

int prolog_run_local(const PrologSettings *set, PrologKind kind, char *const *envp, PrologLocalFn fn,
                     void *userdata, char reason[static PROLOG_REASON_MAX + 1], char **ret_error) {
        const char *dir = prolog_settings_dir(set, kind);
        const PrologScript *refused;
        PrologScript *scripts = NULL;
        size_t n = 0;
        uint64_t begin = now_usec(CLOCK_MONOTONIC);
        bool any_failed = false;
        int r;

        reason[0] = '\0';
        r = prolog_dir_select(dir, kind, &set->select, prolog_select_env_partition(envp), &scripts, &n,
                              ret_error);
        if (r < 0) {
                const PrologFailure f = { .script = dir, .error = prolog_dir_why(r) };

                prolog_failure_reason(reason, kind, &f);
                return r;
        }
        refused = prolog_scripts_refused(scripts, n);
        if (refused) {
                r = refused->error;
                note(kind, refused, r, &(PrologExecResult){}, reason);
                *ret_error = strdup(refused->why);
                prolog_scripts_free(scripts, n);
                return *ret_error ? r : -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *error = NULL;
                PrologExecResult res = {};
                PrologExecSpec spec = {
                        .envp = envp,
                        .timeout_usec = prolog_script_timeout(set, now_usec(CLOCK_MONOTONIC) - begin),
                        .kill_grace_usec = set->kill_grace_usec,
                        .output_limit = set->output_limit,
                };
                bool out_of_time = spec.timeout_usec == 0;

                if (scripts[i].why) { /* skipped: said, and not a failure */
                        if (fn)
                                fn(userdata, &scripts[i], 0, &res, scripts[i].why);
                        continue;
                }
                r = out_of_time ? -ETIMEDOUT : prolog_exec(&scripts[i], &spec, &res, &error);
                if (fn)
                        fn(userdata, &scripts[i], r, &res, error ?: (r < 0 ? prolog_exec_why(r) : NULL));
                if (failed(r, &res)) {
                        note(kind, &scripts[i], r, &res, reason);
                        any_failed = true;
                }
                prolog_exec_result_done(&res);
                if ((any_failed && kind == PROLOG_KIND_PROLOG) || out_of_time)
                        break;
        }
        prolog_scripts_free(scripts, n);
        return any_failed ? 1 : 0;
}
