/* What `sunkctl health` and `sunkctl health run` print: the node and the
 * reason we set, then a line per check with its last result, how many
 * times in a row, its action, how long it took and its detail; and an exit
 * status that says whether a check failed (for slurmd's HealthCheckProgram).
 * Linked into sunkctl as sunkctl_view_health. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "client/sunkctl-view.h"
#include "util/json-util.h"
#include "util/macro.h"

static const char *str(json_object *o, const char *key) {
        return json_member_string(o, key) ?: "";
}

static bool flag(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static void health_render(json_object *status, const char *view, FILE *out, FILE *err) {
        (void) view;
        (void) err;
        json_object *checks;
        const char *reason = str(status, "reason_set");

        fprintf(out, "node:      %s (transport %s)\n", str(status, "node_name"), str(status, "transport"));
        fprintf(out, "our reason: %s%s\n", *reason ? reason : "(none)",
                flag(status, "sticky") ? " (sticky: sunkctl health undrain)" : "");
        if (*str(status, "last_signal_message"))
                fprintf(out, "slurmctld: %s: %s\n", str(status, "last_signal"),
                        str(status, "last_signal_message"));
        if (json_object_object_get_ex(status, "repair", &checks) && !streq(str(checks, "phase"), "none"))
                fprintf(out, "repair:    %s for %s [%s]%s%s, %s\n", str(checks, "action"),
                        str(checks, "check"), str(checks, "code"), *str(checks, "target") ? " of GPU " : "",
                        str(checks, "target"), str(checks, "phase"));
        if (*str(status, "message"))
                fprintf(out, "%s\n", str(status, "message"));
        if (!json_object_object_get_ex(status, "checks", &checks) || json_object_array_length(checks) == 0) {
                fprintf(out, "no checks\n");
                return;
        }
        fprintf(out, "%-20s %-8s %-8s %4s %-7s %9s  %s\n", "CHECK", "RESULT", "VERDICT", "IN-A-ROW",
                "ACTION", "DURATION", "DETAIL");
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i);
                double secs = (double) json_member_int64(c, "duration_usec", 0) / 1e6;

                bool fail = streq(str(c, "result"), "fail");

                fprintf(out, "%-20s %-8s %-8s %8" PRId64 " %-7s %8.3fs  %s%s%s%s%s%s%s\n", str(c, "name"),
                        str(c, "result"), flag(c, "failing") ? "failing" : "ok",
                        json_member_int64(c, "consecutive", 0), str(c, "action"), secs,
                        *str(c, "code") ? "[" : "", str(c, "code"), *str(c, "code") ? "] " : "",
                        str(c, "detail"), fail ? " (remedy: " : "", fail ? str(c, "remedy") : "",
                        fail ? ")" : "");
        }
}

/* False when the reply says a check failed ("failed": true, Run's). */
static bool health_render_ok(json_object *status, const char *view) {
        (void) view;
        return !flag(status, "failed");
}

static const SunkctlMethodView methods[] = {
        { "status", health_render, health_render_ok },
        { "run", health_render, health_render_ok },
        { "drain", health_render, health_render_ok },
        { "undrain", health_render, health_render_ok },
        {},
};

static const SunkctlFlag flags[] = {
        { "reason", "TEXT", "drain", "reason", false, "health drain: the reason, after sunkd's prefix" },
        { "wait-idle", NULL, "drain", "wait_idle", true,
          "health drain: return once no job runs on the node (bounded by --timeout)" },
        {},
};

const SunkctlView sunkctl_view_health = {
        .module = "health",
        .default_verb = "status",
        .help = "the checks and the node's drain (health status); health run, health drain,\n"
                "                health undrain",
        .methods = methods,
        .flags = flags,
};
