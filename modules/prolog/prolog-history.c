/* The runs remembered (keep_runs of them), and io.sunkd.Prolog.Status,
 * what `sunkctl prolog` shows: the last runs, newest first, and for a
 * failure which script, how it ended and the end of its output. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prolog-state.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/strv.h"

static const char *run_result_name(RunResult r) {
        switch (r) {
        case RUN_RUNNING:
                return "running";
        case RUN_OK:
                return "ok";
        case RUN_FAILED:
                return "failed";
        case RUN_ABORTED:
                return "aborted";
        }
        return "unknown";
}

static const char *script_result_name(const ScriptResult *r) {
        if (r->r == 0 && r->why)
                return "skipped";
        if (r->r < 0)
                return "not-run";
        if (r->timed_out)
                return "timeout";
        if (r->signal)
                return "signal";
        return r->exit_code == 0 ? "ok" : "failed";
}

static json_object *script_to_json(const ScriptResult *r) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "name", json_object_new_string(r->name));
        json_object_object_add(o, "result", json_object_new_string(script_result_name(r)));
        json_object_object_add(o, "exit_code", json_object_new_int(r->exit_code));
        json_object_object_add(o, "signal", json_object_new_int(r->signal));
        json_object_object_add(o, "duration_usec", json_object_new_int64((int64_t) r->duration_usec));
        if (r->r < 0)
                json_object_object_add(o, "error", json_object_new_string(r->why ?: prolog_exec_why(r->r)));
        else if (r->why)
                json_object_object_add(o, "skipped", json_object_new_string(r->why));
        if (r->last_line[0])
                json_object_object_add(o, "last_line", json_object_new_string(r->last_line));
        return o;
}

/* The script that failed first, or NULL. */
static const ScriptResult *first_failed(const Run *run) {
        for (size_t i = 0; i < run->n_results; i++) {
                const ScriptResult *r = &run->results[i];

                if (r->r < 0 || r->signal || r->exit_code != 0)
                        return r;
        }
        return NULL;
}

static void add_failure(json_object *o, const Run *run, bool with_output) {
        const ScriptResult *f = first_failed(run);

        json_object_object_add(o, "reason", json_object_new_string(run->reason));
        if (run->error)
                json_object_object_add(o, "error", json_object_new_string(run->error));
        if (f) {
                json_object_object_add(o, "failed_script", json_object_new_string(f->name));
                json_object_object_add(o, "exit_code", json_object_new_int(f->exit_code));
                json_object_object_add(o, "signal", json_object_new_int(f->signal));
                json_object_object_add(o, "timed_out", json_object_new_boolean(f->timed_out));
        }
        if (with_output && run->failed_output)
                json_object_object_add(o, "output", json_object_new_string(run->failed_output));
}

json_object *run_to_json(const Run *run, bool with_output) {
        json_object *o = json_object_new_object(), *scripts = json_object_new_array();

        if (!o || !scripts) {
                json_object_put(o);
                json_object_put(scripts);
                return NULL;
        }
        json_object_object_add(o, "id", json_object_new_int64((int64_t) run->id));
        json_object_object_add(o, "kind", json_object_new_string(prolog_kind_name(run->kind)));
        json_object_object_add(o, "job_id", json_object_new_string(run->job_id));
        json_object_object_add(o, "result", json_object_new_string(run_result_name(run->result)));
        json_object_object_add(o, "start_usec", json_object_new_int64((int64_t) run->start_real));
        json_object_object_add(o, "duration_usec", json_object_new_int64((int64_t) run->duration_usec));
        for (size_t i = 0; i < run->n_results; i++)
                json_object_array_add(scripts, script_to_json(&run->results[i]));
        json_object_object_add(o, "scripts", scripts);
        if (run->result == RUN_FAILED || run->reason[0])
                add_failure(o, run, with_output);
        return o;
}

void history_trim(State *s) {
        size_t keep = (size_t) s->conf.keep_runs, drop;

        if (s->n_history <= keep)
                return;
        drop = s->n_history - keep;
        for (size_t i = 0; i < drop; i++)
                run_free(s->history[i]);
        memmove(s->history, s->history + drop, keep * sizeof(*s->history));
        s->n_history = keep;
}

void history_add(State *s, Run *run) {
        Run **a;

        /* no longer tied to a call or a child; its environment is not kept */
        run->call = NULL;
        run->env = strv_free(run->env);
        a = reallocarray(s->history, s->n_history + 1, sizeof(*a));
        if (!a) {
                run_free(run);
                return;
        }
        s->history = a;
        s->history[s->n_history++] = run;
        history_trim(s);
}

void history_free(State *s) {
        for (size_t i = 0; i < s->n_history; i++)
                run_free(s->history[i]);
        free(s->history);
        s->history = NULL;
        s->n_history = 0;
}

int history_method_status(sunkd_call *call, json_object *params, void *state) {
        State *s = state;
        json_object *o = json_object_new_object(), *runs = json_object_new_array(),
                    *running = json_object_new_array();

        (void) params;
        if (!o || !runs || !running) {
                json_object_put(o);
                json_object_put(runs);
                json_object_put(running);
                return -ENOMEM;
        }
        for (size_t i = 0; i < s->n_runs; i++)
                json_object_array_add(running, run_to_json(s->runs[i], false));
        for (size_t i = s->n_history; i > 0; i--)
                json_object_array_add(runs, run_to_json(s->history[i - 1], true));
        json_object_object_add(o, "prolog_dir", json_object_new_string(s->conf.set.prolog_dir));
        json_object_object_add(o, "epilog_dir", json_object_new_string(s->conf.set.epilog_dir));
        json_object_object_add(o, "running", running);
        json_object_object_add(o, "runs", runs);
        return s->ctx->api->reply(call, o);
}
