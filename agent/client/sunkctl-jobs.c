/* sunkctl jobs: each job's state, last run and next run, a row each. */
#include <inttypes.h>
#include <stdio.h>

#include "sunkctl-render.h"
#include "sunkctl.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/time-util.h"

static void print_job(json_object *j) {
        char last[64], next[64], dur[FORMAT_DURATION_MAX];

        printf("%-24s %-10s %-10s %-12s %-9s %-8s %-12s %" PRId64 "/%" PRId64 "\n",
               json_member_string(j, "name"), json_member_string(j, "module") ?: "-",
               json_member_string(j, "state"),
               render_ago(last, sizeof(last), json_member_int64(j, "last_start_usec", 0)),
               render_duration(dur, sizeof(dur), json_member_int64(j, "last_duration_usec", -1)),
               json_member_string(j, "last_result") ?: "-",
               render_ago(next, sizeof(next), json_member_int64(j, "next_run_usec", 0)),
               json_member_int64(j, "runs", 0), json_member_int64(j, "failures", 0));
}

int verb_jobs(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *p = NULL;
        json_object *jobs;
        int r;

        r = ctl_call(c, "io.sunkd.Agent.Jobs", NULL, &p);
        if (r)
                return r;
        if (c->json)
                return ctl_print_json(p);
        printf("%-24s %-10s %-10s %-12s %-9s %-8s %-12s %s\n", "JOB", "MODULE", "STATE", "LAST RUN",
               "DURATION", "RESULT", "NEXT RUN", "RUNS/FAILED");
        if (!json_object_object_get_ex(p, "jobs", &jobs))
                return 0;
        for (size_t i = 0; i < json_object_array_length(jobs); i++)
                print_job(json_object_array_get_idx(jobs, i));
        return 0;
}
