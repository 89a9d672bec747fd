/* sunkctl status: the daemon, its modules, and each module's own status. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sunkctl-render.h"
#include "sunkctl.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

static void print_headline(json_object *p) {
        char d[FORMAT_DURATION_MAX];
        int64_t up = json_member_int64(p, "uptime_usec", 0),
                unreaped = json_member_int64(p, "unreaped_runs", 0);

        printf("sunkd %s, pid %" PRId64 ", up %s, %s\n", json_member_string(p, "version") ?: "?",
               json_member_int64(p, "pid", 0),
               up < (int64_t) USEC_PER_SEC
                       ? "<1s"
                       : format_duration(d, sizeof(d), (uint64_t) up / USEC_PER_SEC * USEC_PER_SEC),
               json_object_get_boolean(json_object_object_get(p, "ready")) ? "ready" : "starting");
        printf("config:  %s\nsocket:  %s\n", json_member_string(p, "config") ?: "-",
               json_member_string(p, "socket") ?: "-");
        print_pending_restart(stdout, p);
        if (unreaped > 0) {
                char ago[64];
                printf("unreaped: %" PRId64 " run%s unreaped since %s\n", unreaped, unreaped == 1 ? "" : "s",
                       render_ago(ago, sizeof(ago), json_member_int64(p, "unreaped_since_usec", 0)));
        }
}

/* Each module's own status, one "key value" a line. */
static int print_module_status(json_object *m) {
        json_object *st;

        if (!json_object_object_get_ex(m, "status", &st) || !json_object_is_type(st, json_type_object) ||
            json_object_object_length(st) == 0)
                return 0;
        printf("\n%s:\n", json_member_string(m, "name"));
        json_object_object_foreach(st, key, val) {
                _cleanup_free_ char *text = render_scalar(key, val);
                if (!text)
                        return -ENOMEM;
                printf("  %-18s %s\n", key, text);
        }
        return 0;
}

int verb_status(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *p = NULL;
        json_object *mods;
        int r;

        r = ctl_call(c, "io.sunkd.Agent.Status", NULL, &p);
        if (r)
                return r;
        if (c->json)
                return ctl_print_json(p);
        print_headline(p);
        printf("\n%-14s %-9s %-9s %s\n", "MODULE", "STATE", "VERSION", "ERROR");
        if (!json_object_object_get_ex(p, "modules", &mods))
                return 0;
        for (size_t i = 0; i < json_object_array_length(mods); i++) {
                json_object *m = json_object_array_get_idx(mods, i);
                printf("%-14s %-9s %-9s %s\n", json_member_string(m, "name"), json_member_string(m, "state"),
                       json_member_string(m, "version") ?: "-", json_member_string(m, "error") ?: "");
        }
        for (size_t i = 0; i < json_object_array_length(mods); i++)
                if (print_module_status(json_object_array_get_idx(mods, i)) < 0)
                        return EXIT_FAILED;
        return 0;
}
