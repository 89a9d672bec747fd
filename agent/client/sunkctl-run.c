/* sunkctl run JOB: run a job now and wait for its result. */
#include <stdio.h>

#include "sunkctl-render.h"
#include "sunkctl.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

int verb_run(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *p = NULL, *params = NULL;
        char dur[FORMAT_DURATION_MAX];
        const char *result;
        int r;

        params = json_object_new_object();
        if (!params || json_object_object_add(params, "job", json_object_new_string(argv[1])) < 0 ||
            json_object_object_add(params, "wait", json_object_new_boolean(true)) < 0)
                return EXIT_FAILED;
        /* The job may legitimately take minutes: wait for it, not the default
         * socket timeout; a --timeout given on the command line still holds. */
        if (!c->timeout_set)
                c->timeout_usec = 0;
        r = ctl_call(c, "io.sunkd.Agent.Trigger", params, &p);
        if (r)
                return r;
        result = json_member_string(p, "result") ?: "unknown";
        if (c->json)
                ctl_print_json(p);
        else if (streq(result, "success"))
                printf("%s: success in %s\n", argv[1],
                       render_duration(dur, sizeof(dur), json_member_int64(p, "last_duration_usec", 0)));
        else
                printf("%s: failure after %s: %s\n", argv[1],
                       render_duration(dur, sizeof(dur), json_member_int64(p, "last_duration_usec", 0)),
                       json_member_string(p, "error") ?: "unknown error");
        return streq(result, "success") ? 0 : EXIT_FAILED;
}
