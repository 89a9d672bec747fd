/* io.sunkd.Prolog.List: what a run would do for a job's environment,
 * without running anything: the scripts in the order they would run, and
 * those that would not, with why.  The listing is a run's own
 * (prolog_dir_select() under the configured order, names and the job's
 * partition), so what it shows is what runs.  Root's only, as Run and
 * Status are: it names the scripts root runs and where they resolve to. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prolog-state.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/strv.h"
#include "util/text-escape.h"

/* Outside text (a file's name, a caller's value) as the reply may carry it. */
static json_object *text(const char *s) {
        _cleanup_free_ char *e = s ? text_escape_str(s, TEXT_ESCAPE_LINE) : NULL;

        return e ? json_object_new_string(e) : NULL;
}

static json_object *script_json(const PrologScript *sc) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "name", text(sc->name));
        json_object_object_add(o, "path", text(sc->path));
        json_object_object_add(o, "run", json_object_new_boolean(!sc->why));
        if (sc->why)
                json_object_object_add(o, sc->error < 0 ? "refused" : "skipped", text(sc->why));
        return o;
}

/* The job's environment from the call: every parameter but "kind", each a
 * string ("SLURM_JOB_PARTITION": "gpu"); NULL and *@ret_bad for one that
 * is not. */
static char **params_env(json_object *params, const char **ret_bad) {
        _cleanup_strv_free_ char **env = calloc(json_object_object_length(params) + 1, sizeof(char *));
        size_t n = 0;

        if (!env)
                return NULL;
        json_object_object_foreach(params, k, v) {
                if (streq(k, "kind"))
                        continue;
                if (!json_object_is_type(v, json_type_string) || !*k || strchr(k, '=')) {
                        *ret_bad = k;
                        return NULL;
                }
                if (asprintf(&env[n], "%s=%s", k, json_object_get_string(v)) < 0) {
                        env[n] = NULL;
                        return NULL;
                }
                n++;
        }
        return TAKE_PTR(env);
}

static void add_partition(json_object *o, const char *dir, const char *partition) {
        _cleanup_free_ char *path = NULL;

        json_object_object_add(o, "partition", text(partition));
        if (!partition)
                return;
        if (!prolog_select_partition_valid(partition)) {
                json_object_object_add(
                        o, "partition_note",
                        json_object_new_string("not a plain partition name: no directory of its own"));
                return;
        }
        if (asprintf(&path, "%s/%s", dir, partition) < 0)
                path = NULL;
        else
                json_object_object_add(o, "partition_dir", text(path));
}

int prolog_list_method(sunkd_call *call, json_object *params, void *state) {
        State *s = state;
        const PrologSettings *set = &s->conf.set;
        _cleanup_strv_free_ char **env = NULL;
        _cleanup_free_ char *error = NULL;
        const char *k = json_member_string(params, "kind") ?: "prolog", *bad = NULL, *dir, *partition;
        PrologKind kind = PROLOG_KIND_PROLOG;
        PrologScript *sc = NULL;
        json_object *o, *list;
        size_t n = 0;
        int r;

        if (json_object_object_get_ex(params, "kind", NULL) && !json_member_string(params, "kind"))
                return run_reply_invalid(s, call, "kind", "\"prolog\" or \"epilog\"");
        if (streq(k, "epilog"))
                kind = PROLOG_KIND_EPILOG;
        else if (!streq(k, "prolog"))
                return run_reply_invalid(s, call, "kind", "\"prolog\" or \"epilog\"");
        env = params_env(params, &bad);
        if (!env)
                return bad ? run_reply_invalid(s, call, bad, "a job's environment variable: a string")
                           : -ENOMEM;
        dir = prolog_settings_dir(set, kind);
        partition = prolog_select_env_partition(env);
        r = prolog_dir_select(dir, kind, &set->select, partition, &sc, &n, &error);
        if (r == -ENOMEM)
                return r;
        o = json_object_new_object();
        list = json_object_new_array();
        if (!o || !list) {
                json_object_put(o);
                json_object_put(list);
                prolog_scripts_free(sc, n);
                return -ENOMEM;
        }
        json_object_object_add(o, "kind", json_object_new_string(prolog_kind_name(kind)));
        json_object_object_add(o, "dir", text(dir));
        json_object_object_add(o, "order", json_object_new_string(prolog_select_order_name(&set->select)));
        json_object_object_add(o, "names", text(prolog_select_names_name(&set->select)));
        add_partition(o, dir, partition);
        for (size_t i = 0; i < n; i++)
                json_object_array_add(list, script_json(&sc[i]));
        json_object_object_add(o, "scripts", list);
        if (r < 0)
                json_object_object_add(o, "error", text(error ?: strerror(-r)));
        prolog_scripts_free(sc, n);
        return s->ctx->api->reply(call, o);
}
