/* sunkctl's views of io.sunkd.Gres.List: what the module's answer means to
 * the person or the slurmd run script reading it (a GPU table, the Gres=
 * line slurmd takes, the check's verdict), linked into sunkctl as
 * sunkctl_view_gres. */
#include <errno.h>
#include <inttypes.h>
#include <time.h>

#include "client/sunkctl-view.h"
#include "util/json-util.h"
#include "util/macro.h"

typedef enum GresView {
        GRES_VIEW_TABLE,       /* sunkctl gres */
        GRES_VIEW_SLURMD_CONF, /* sunkctl gres --slurmd-conf */
        GRES_VIEW_CHECK,       /* sunkctl gres --check */
        GRES_VIEW_BLOCK,       /* sunkctl gres --block */
        _GRES_VIEW_MAX,
} GresView;

static const char *const view_names[_GRES_VIEW_MAX] = {
        [GRES_VIEW_SLURMD_CONF] = "slurmd-conf",
        [GRES_VIEW_CHECK] = "check",
        [GRES_VIEW_BLOCK] = "block",
};

/* The view a flag names ("slurmd-conf", "check", "block"); NULL and any other the table. */
static GresView view_from_string(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(view_names); i++)
                if (view_names[i] && streq(view_names[i], s))
                        return (GresView) i;
        return GRES_VIEW_TABLE;
}

static const char *check_result(json_object *list) {
        return json_member_string(json_object_object_get(list, "check"), "result") ?: "unknown";
}

static void render_gpu(json_object *g, FILE *out) {
        char mem[32];

        /* /proc does not tell the memory: 0 means unknown, not none */
        if (json_member_int64(g, "memory", 0) > 0)
                snprintf(mem, sizeof(mem), "%.0fG",
                         (double) json_member_int64(g, "memory", 0) / (1024.0 * 1024 * 1024));
        else
                snprintf(mem, sizeof(mem), "-");
        fprintf(out, "%-5" PRId64 " %-5" PRId64 " %-28s %-12s %-8s %-12s %s\n",
                json_member_int64(g, "index", 0), json_member_int64(g, "minor", 0),
                json_member_string(g, "type") ?: "-", json_member_string(g, "bus_id") ?: "-", mem,
                json_member_string(g, "cores") ?: "-", json_member_string(g, "uuid") ?: "-");
}

/* What the driver reports of a GPU's memory, one line each after the table:
 * each counter above zero and the recovery action it asks for.  What was
 * observed, not a verdict (the health module judges). */
static void render_memory(json_object *gpus, FILE *out) {
        for (size_t i = 0, shown = 0; gpus && i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i),
                            *h = json_object_object_get(g, "health");
                size_t n = 0;

                if (!json_object_is_type(h, json_type_object))
                        continue;
                json_object_object_foreach(h, key, v) {
                        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) <= 0 ||
                            streq(key, "recovery_action"))
                                continue;
                        if (n++ == 0)
                                fprintf(out, "%sGPU %" PRId64 " at %s, memory:", shown++ == 0 ? "\n" : "",
                                        json_member_int64(g, "index", 0),
                                        json_member_string(g, "bus_id") ?: "-");
                        fprintf(out, "%s %s %" PRId64, n > 1 ? "," : "", key, json_object_get_int64(v));
                }
                if (json_member_int64(h, "recovery_action", 0) > 0) {
                        if (n++ == 0)
                                fprintf(out, "%sGPU %" PRId64 " at %s, memory:", shown++ == 0 ? "\n" : "",
                                        json_member_int64(g, "index", 0),
                                        json_member_string(g, "bus_id") ?: "-");
                        fprintf(out, "%s the driver asks to %s", n > 1 ? ";" : "",
                                json_member_string(h, "recovery") ?: "recover it");
                }
                if (n > 0)
                        fprintf(out, "\n");
        }
}

/* A GPU's XID errors as the module observed them, one line each, newest
 * last: what happened, not a verdict (the health module judges). */
static void render_xids(json_object *gpus, FILE *out) {
        for (size_t i = 0, shown = 0; gpus && i < json_object_array_length(gpus); i++) {
                json_object *g = json_object_array_get_idx(gpus, i),
                            *list = json_object_object_get(g, "xid_events");

                if (!json_object_is_type(list, json_type_array) || json_object_array_length(list) == 0)
                        continue;
                fprintf(out, "%sGPU %" PRId64 " at %s, XID errors:", shown++ == 0 ? "\n" : "",
                        json_member_int64(g, "index", 0), json_member_string(g, "bus_id") ?: "-");
                for (size_t k = 0; k < json_object_array_length(list); k++) {
                        json_object *e = json_object_array_get_idx(list, k);
                        time_t t = (time_t) (json_member_int64(e, "last_usec", 0) / 1000000);
                        int64_t count = json_member_int64(e, "count", 1);
                        const char *what = json_member_string(e, "what");
                        char when[32];
                        struct tm tm;

                        if (!gmtime_r(&t, &tm) ||
                            strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                                snprintf(when, sizeof(when), "?");
                        fprintf(out, "%s XID %" PRId64 "%s%s%s at %s", k ? ";" : "",
                                json_member_int64(e, "xid", 0), what ? " (" : "", what ?: "",
                                what ? ")" : "", when);
                        if (count > 1)
                                fprintf(out, ", %" PRId64 " times", count);
                        fprintf(out, " [%s]", json_member_string(e, "source") ?: "?");
                }
                fprintf(out, "\n");
        }
}

static void render_table(json_object *p, FILE *out) {
        json_object *gpus = json_object_object_get(p, "gpus"), *check = json_object_object_get(p, "check");
        const char *message = json_member_string(check, "message");

        fprintf(out, "source: %s, Gres=%s\ncheck: %s%s%s\n", json_member_string(p, "source") ?: "?",
                json_member_string(p, "gres") ?: "", check_result(p), message ? ": " : "", message ?: "");
        if (json_member_string(p, "topology_block"))
                fprintf(out, "topology/block: %s\n", json_member_string(p, "topology_block"));
        else if (json_member_string(p, "topology_block_error"))
                fprintf(out, "topology/block: none: %s\n", json_member_string(p, "topology_block_error"));
        fprintf(out, "\n%-5s %-5s %-28s %-12s %-8s %-12s %s\n", "INDEX", "MINOR", "TYPE", "BUS", "MEMORY",
                "CORES", "UUID");
        for (size_t i = 0; gpus && i < json_object_array_length(gpus); i++)
                render_gpu(json_object_array_get_idx(gpus, i), out);
        render_memory(gpus, out);
        render_xids(gpus, out);
}

static void gres_render(json_object *list, const char *view_name, FILE *out, FILE *err) {
        GresView view = view_from_string(view_name);
        const char *gres = json_member_string(list, "gres"),
                   *block = json_member_string(list, "topology_block");

        switch (view) {
        case GRES_VIEW_SLURMD_CONF:
                /* What `slurmd -Z --conf "..."` takes; nothing for a node without GPUs. */
                if (!isempty(gres))
                        fprintf(out, "Gres=%s\n", gres);
                break;
        case GRES_VIEW_CHECK:
                fprintf(out, "%s: %s\n", check_result(list),
                        json_member_string(json_object_object_get(list, "check"), "message") ?: "");
                break;
        case GRES_VIEW_BLOCK:
                /* This node's line of a topology.conf for topology/block. */
                if (block)
                        fprintf(out, "%s\n", block);
                else
                        fprintf(err, "sunkctl: gres: no topology/block line: %s\n",
                                json_member_string(list, "topology_block_error")
                                        ?: "the GPUs are in no multi-node NVLink domain");
                break;
        default:
                render_table(list, out);
        }
}

/* False where the view reports a failure: a check that does not match, no block line. */
static bool gres_render_ok(json_object *list, const char *view_name) {
        GresView view = view_from_string(view_name);

        if (view == GRES_VIEW_CHECK)
                return streq(check_result(list), "match");
        if (view == GRES_VIEW_BLOCK)
                return json_member_string(list, "topology_block") != NULL;
        return true;
}

static const SunkctlMethodView methods[] = {
        { "list", gres_render, gres_render_ok },
        {},
};

static const SunkctlFlag flags[] = {
        { "slurmd-conf", NULL, "list", NULL, false, "gres: print the Gres= for slurmd -Z --conf" },
        { "check", NULL, "list", NULL, false, "gres: compare with slurm.conf; exit 1 if they differ" },
        { "block", NULL, "list", NULL, false,
          "gres: print this node's topology/block line (multi-node NVLink)" },
        {},
};

const SunkctlView sunkctl_view_gres = {
        .module = "gres",
        .default_verb = "list",
        .help = "the GPUs found, as gres.conf and Gres= see them (gres list)",
        .methods = methods,
        .flags = flags,
};
