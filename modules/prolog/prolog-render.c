/* What `sunkctl prolog` prints: a line per run, newest first (job, kind,
 * when, how long, result), and under a failed run the script, how it ended
 * and the end of its output; `sunkctl prolog list` what a run would do.
 * Linked into sunkctl as sunkctl_view_prolog. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "client/sunkctl-view.h"
#include "util/json-util.h"

static const char *str(json_object *o, const char *key) {
        return json_member_string(o, key) ?: "";
}

static void when(json_object *run, char *buf, size_t len) {
        time_t t = (time_t) (json_member_int64(run, "start_usec", 0) / 1000000);
        struct tm tm;

        if (!localtime_r(&t, &tm) || strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
                snprintf(buf, len, "-");
}

/* The end of a failed script's output, each line indented. */
static void output_tail(const char *text, FILE *out) {
        const char *p = text;

        while (*p) {
                const char *nl = strchr(p, '\n');
                int n = nl ? (int) (nl - p) : (int) strlen(p);

                fprintf(out, "    | %.*s\n", n, p);
                p += n + (nl ? 1 : 0);
        }
}

/* Entries of the directory that were not run, and why: a script that lost
 * its x bit shows here rather than vanishing. */
static void skipped_lines(json_object *run, FILE *out) {
        json_object *scripts;

        if (!json_object_object_get_ex(run, "scripts", &scripts) ||
            !json_object_is_type(scripts, json_type_array))
                return;
        for (size_t i = 0; i < json_object_array_length(scripts); i++) {
                json_object *s = json_object_array_get_idx(scripts, i);

                if (*str(s, "skipped"))
                        fprintf(out, "    %s skipped: %s\n", str(s, "name"), str(s, "skipped"));
        }
}

static void run_line(json_object *run, FILE *out) {
        char at[32];

        when(run, at, sizeof(at));
        fprintf(out, "%-12s %-7s %-19s %9.3fs  %s\n", str(run, "job_id"), str(run, "kind"), at,
                (double) json_member_int64(run, "duration_usec", 0) / 1e6, str(run, "result"));
        if (*str(run, "reason"))
                fprintf(out, "    %s\n", str(run, "reason"));
        skipped_lines(run, out);
        if (*str(run, "output"))
                output_tail(str(run, "output"), out);
}

static void prolog_render(json_object *status, const char *view, FILE *out, FILE *err) {
        (void) view;
        (void) err;
        json_object *running, *runs;
        size_t n_running = 0, n_runs = 0;

        fprintf(out, "prolog: %s\nepilog: %s\n", str(status, "prolog_dir"), str(status, "epilog_dir"));
        if (json_object_object_get_ex(status, "running", &running))
                n_running = json_object_array_length(running);
        if (json_object_object_get_ex(status, "runs", &runs))
                n_runs = json_object_array_length(runs);
        if (n_running + n_runs == 0) {
                fprintf(out, "no runs yet\n");
                return;
        }
        fprintf(out, "%-12s %-7s %-19s %10s  %s\n", "JOB", "KIND", "STARTED", "DURATION", "RESULT");
        for (size_t i = 0; i < n_running; i++)
                run_line(json_object_array_get_idx(running, i), out);
        for (size_t i = 0; i < n_runs; i++)
                run_line(json_object_array_get_idx(runs, i), out);
}

/* `sunkctl prolog list [KEY=VALUE...]`: what a run would do for that
 * environment, in order; a line a script, "run" or why not. */
static void list_render(json_object *list, const char *view, FILE *out, FILE *err) {
        (void) view;
        json_object *scripts;
        size_t n = 0;

        fprintf(out, "%s: %s (order: %s, names: %s)\n", str(list, "kind"), str(list, "dir"),
                str(list, "order"), str(list, "names"));
        if (*str(list, "partition_dir"))
                fprintf(out, "partition %s: %s\n", str(list, "partition"), str(list, "partition_dir"));
        else if (*str(list, "partition"))
                fprintf(out, "partition %s: %s\n", str(list, "partition"), str(list, "partition_note"));
        if (*str(list, "error"))
                fprintf(err, "cannot list: %s\n", str(list, "error"));
        if (json_object_object_get_ex(list, "scripts", &scripts) &&
            json_object_is_type(scripts, json_type_array))
                n = json_object_array_length(scripts);
        for (size_t i = 0; i < n; i++) {
                json_object *sc = json_object_array_get_idx(scripts, i);

                json_object *run;

                if (json_object_object_get_ex(sc, "run", &run) && json_object_get_boolean(run))
                        fprintf(out, "run      %s\n", str(sc, "name"));
                else if (*str(sc, "refused"))
                        fprintf(out, "REFUSED  %s: %s\n", str(sc, "name"), str(sc, "refused"));
                else
                        fprintf(out, "skip     %s: %s\n", str(sc, "name"), str(sc, "skipped"));
        }
        if (n == 0 && !*str(list, "error"))
                fprintf(out, "no scripts\n");
}

/* A listing that failed, or a script refused (the run would fail): exit 1. */
static bool list_ok(json_object *list, const char *view) {
        json_object *scripts;

        (void) view;
        if (*str(list, "error"))
                return false;
        if (json_object_object_get_ex(list, "scripts", &scripts) &&
            json_object_is_type(scripts, json_type_array))
                for (size_t i = 0; i < json_object_array_length(scripts); i++)
                        if (*str(json_object_array_get_idx(scripts, i), "refused"))
                                return false;
        return true;
}

static const SunkctlMethodView methods[] = {
        { "status", prolog_render, NULL },
        { "list", list_render, list_ok },
        {},
};

static const SunkctlFlag flags[] = {
        { "list", NULL, "list", NULL, false,
          "prolog --list [KEY=VALUE...]: what a run would do for that job" },
        {},
};

const SunkctlView sunkctl_view_prolog = {
        .module = "prolog",
        .default_verb = "status",
        .help = "the prolog and epilog runs (prolog status); prolog list",
        .methods = methods,
        .flags = flags,
};
