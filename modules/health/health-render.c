/* What `sunkctl health` and `sunkctl health run` print: the node and the
 * reason we set, then a line per check with its last result, how many
 * times in a row, its action, how long it took and its detail; and an exit
 * status that says whether a check failed (for slurmd's HealthCheckProgram);
 * and the baseline of `sunkctl health genconf` as a `checks:` block.
 * Linked into sunkctl as sunkctl_view_health. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

/* @s on @out as one line of a comment: a control byte as '?'. */
static void comment_text(FILE *out, const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
}

/* `sunkctl health genconf`: a `checks:` block ready for sunkd.yaml, with a
 * header naming the node, the date and sunkd's version, and a comment for
 * each thing left out.  An entry that is not one flow mapping on one line
 * (never one the module makes) becomes a comment, never broken YAML. */
static void health_render_genconf(json_object *reply, const char *view, FILE *out, FILE *err) {
        json_object *entries = json_object_object_get(reply, "entries"),
                    *notes = json_object_object_get(reply, "notes");
        time_t when = (time_t) (json_member_int64(reply, "generated_usec", 0) / 1000000);
        struct tm tm;
        char date[64] = "?";
        size_t n = json_object_is_type(entries, json_type_array) ? json_object_array_length(entries) : 0;

        (void) view;
        if (gmtime_r(&when, &tm))
                strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
        fputs("# The health checks of node ", out);
        comment_text(out, str(reply, "node_name"));
        fprintf(out, " as it was on %s (sunkd ", date);
        comment_text(out, str(reply, "version"));
        fputs("),\n# made by sunkctl health genconf", out);
        if (*str(reply, "root") && !streq(str(reply, "root"), "/")) {
                fputs(" from the tree under ", out);
                comment_text(out, str(reply, "root"));
        }
        fputs(": each passes on that node now.  Review it, then put it\n"
              "# under modules: health: in sunkd.yaml.\n",
              out);
        for (size_t i = 0;
             json_object_is_type(notes, json_type_array) && i < json_object_array_length(notes); i++) {
                fputs("# left out: ", out);
                comment_text(out, json_object_get_string(json_object_array_get_idx(notes, i)));
                fputc('\n', out);
        }
        if (flag(reply, "incomplete"))
                fprintf(err, "sunkctl: the baseline is incomplete: sunkd ran out of memory making it\n");
        fprintf(out, "checks:%s\n", n ? "" : " []");
        for (size_t i = 0; i < n; i++) {
                const char *e = json_object_get_string(json_object_array_get_idx(entries, i)) ?: "";
                bool line = e[0] == '{' && e[strlen(e) - 1] == '}';

                for (const unsigned char *p = (const unsigned char *) e; line && *p; p++)
                        line = *p >= 0x20 && *p != 0x7f;
                if (line)
                        fprintf(out, "  - %s\n", e);
                else {
                        fputs("  # left out: an entry that is not one line: ", out);
                        comment_text(out, e);
                        fputc('\n', out);
                }
        }
}

/* False when the baseline is not whole. */
static bool health_render_genconf_ok(json_object *reply, const char *view) {
        (void) view;
        return !flag(reply, "incomplete") &&
               json_object_is_type(json_object_object_get(reply, "entries"), json_type_array);
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
        { "genconf", health_render_genconf, health_render_genconf_ok },
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
                "                health undrain; health genconf [-o FILE]: checks that pass on this node",
        .methods = methods,
        .flags = flags,
        .output_verbs = (const char *const[]){ "genconf", NULL },
};
