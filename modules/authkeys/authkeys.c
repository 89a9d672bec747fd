/* authkeys: sshd's AuthorizedKeysCommand answered from memory.
 *
 * The sshkey map (an nsscache sshkey cache) is held as an immutable
 * AuthkeysMap.  Which file: `sshkey_cache:` if set, else the one the
 * nsscache module of this sunkd writes, learnt from its fact
 * nsscache.sshkey_cache, so enabling both needs no other setting.  The file
 * is watched (rename-over and Kubernetes ..data swaps included); each change
 * triggers the trigger-only job authkeys.load, whose work builds a new map on
 * a worker and whose done swaps it in whole.  A file that cannot be read or
 * is over the caps leaves the old map in place, counted and shown.
 *
 * A reload keeps the map, its counters and the watches unless the new
 * section changes what is served (authkeys_reload()).
 *
 * The node's own accounts (the names and uids of local_passwd, watched too,
 * and the reserved system accounts) get no keys, whatever the file says:
 * their lines are skipped as local-account, and logged once per load.
 *
 * io.sunkd.AuthorizedKeys.Get {user, fingerprint? | type? key?} answers from
 * the map on the loop: root and the module's allow: list only.  An exact-key
 * answer (sshd's %f, or %t %k) is written to the journal with the user, the
 * key's fingerprint and the peer's pid, rate-limited; never the key.
 *
 * This file is the glue: the module's definition, its section, its
 * lifecycle, a reload and the status.  authkeys-load.c loads the map and
 * follows the file; authkeys-get.c answers Get and judges staleness;
 * authkeys-state.h is what they share.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "authkeys-state.h"
#include "util/cleanup.h"
#include "util/macro.h"

#define LOCAL_PASSWD_DEFAULT "/etc/passwd"

static const sunkd_cfg_key conf_keys[] = {
        { "sshkey_cache", SUNKD_CFG_PATH, offsetof(Conf, sshkey_cache), 0, 0, 0 },
        { "local_passwd", SUNKD_CFG_PATH, offsetof(Conf, local_passwd), 0, 0, 0 },
        { "max_staleness", SUNKD_CFG_DURATION, offsetof(Conf, max_staleness_usec), 0, 0, 0 },
        { "max_keys_per_user", SUNKD_CFG_INT, offsetof(Conf, max_keys_per_user), 0, 1,
          AUTHKEYS_MAP_KEYS_PER_USER_MAX },
};

/* ---- Lifecycle ------------------------------------------------------------ */

static int load_conf(sunkd_ctx *c, const sunkd_cfg *cfg, Conf *ret) {
        _cleanup_free_ char *error = NULL;
        int r;

        *ret = (Conf){};
        r = c->api->cfg_parse(cfg, conf_keys, sizeof(conf_keys) / sizeof(conf_keys[0]), ret, &error);
        if (r >= 0 && !ret->local_passwd && !(ret->local_passwd = strdup(LOCAL_PASSWD_DEFAULT)))
                r = -ENOMEM;
        if (r < 0) {
                c->api->cfg_clear(conf_keys, sizeof(conf_keys) / sizeof(conf_keys[0]), ret);
                return sunkd_log_error_errno(c, r, "%s", error ?: "invalid configuration");
        }
        return 0;
}

static int add_metrics(State *s) {
        const sunkd_metric_def defs[] = {
                { { sizeof(sunkd_metric_spec),
                    "authkeys_users",
                    "Users in the loaded sshkey map.",
                    SUNKD_METRIC_GAUGE,
                    { NULL } },
                  &s->m.users },
                { { sizeof(sunkd_metric_spec),
                    "authkeys_keys",
                    "Valid keys in the loaded sshkey map.",
                    SUNKD_METRIC_GAUGE,
                    { NULL } },
                  &s->m.keys },
                { { sizeof(sunkd_metric_spec),
                    "authkeys_queries_total",
                    "Key queries by result: hit, miss, unavailable (no map loaded).",
                    SUNKD_METRIC_COUNTER,
                    { "result" } },
                  &s->m.queries },
                { { sizeof(sunkd_metric_spec),
                    "authkeys_invalid_keys",
                    "Keys dropped from the loaded map, by reason.",
                    SUNKD_METRIC_GAUGE,
                    { "reason" } },
                  &s->m.invalid },
                { { sizeof(sunkd_metric_spec),
                    "authkeys_bad_lines",
                    "Lines of the loaded file skipped, by reason.",
                    SUNKD_METRIC_GAUGE,
                    { "reason" } },
                  &s->m.bad_lines },
                { { sizeof(sunkd_metric_spec),
                    "authkeys_reload_failures_total",
                    "Loads that failed and kept the old map.",
                    SUNKD_METRIC_COUNTER,
                    { NULL } },
                  &s->m.failures },
                { { sizeof(sunkd_metric_spec),
                    "authkeys_stale",
                    "1 while the map is older than max_staleness.",
                    SUNKD_METRIC_GAUGE,
                    { NULL } },
                  &s->m.stale },
        };

        return sunkd_metrics_add(s->ctx, defs, sizeof(defs) / sizeof(defs[0]));
}

static void state_free(State *s) {
        if (!s)
                return;
        s->ctx->api->cfg_clear(conf_keys, sizeof(conf_keys) / sizeof(conf_keys[0]), &s->conf);
        free(s->path);
        authkeys_map_free(s->map);
        free(s->map_path);
        free(s->last_error);
        free(s);
}

/* Where the keys come from: the configured file, else the nsscache module's. */
static int choose_source(State *s) {
        int r;

        if (s->conf.sshkey_cache)
                return authkeys_load_set_path(s, s->conf.sshkey_cache);
        r = s->ctx->api->fact_subscribe(s->ctx, FACT_NAME, authkeys_load_on_fact, s);
        if (r < 0 && r != -EEXIST)
                return sunkd_log_error_errno(s->ctx, r,
                                             "Failed to follow the nsscache module's sshkey cache: %m");
        if (!s->path)
                sunkd_log_info(
                        s->ctx,
                        "No sshkey_cache set: serving the sshkey cache of the nsscache module once it "
                        "says where it is.");
        return 0;
}

static int authkeys_init(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state) {
        const sunkd_job_spec spec = {
                .size = sizeof(sunkd_job_spec),
                .name = "authkeys.load",
                .flags = SUNKD_JOB_TRIGGER_ONLY,
                .timeout_usec = 60 * SUNKD_USEC_PER_SEC,
                .backoff_min_usec = SUNKD_USEC_PER_SEC,
                .backoff_max_usec = 60 * SUNKD_USEC_PER_SEC,
                .prepare = authkeys_load_prepare,
                .work = authkeys_load_work,
                .done = authkeys_load_done,
        };
        State *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->ctx = c;
        r = load_conf(c, cfg, &s->conf);
        if (r >= 0)
                r = add_metrics(s);
        if (r >= 0)
                r = c->api->job_add(c, &spec, &s->job);
        if (r >= 0)
                r = authkeys_get_methods_add(s);
        if (r >= 0)
                r = authkeys_load_watch_local(s);
        if (r >= 0)
                r = choose_source(s);
        if (r < 0) {
                state_free(s);
                return r;
        }
        *ret_state = s;
        return 0;
}

/* ---- Reload: what the new section changes, and nothing else ------------- */

/* With no file to serve, no keys: a map is kept only until the next one of the file served. */
static void forget_map(State *s) {
        if (!s->map)
                return;
        sunkd_log_notice(s->ctx, "No sshkey cache to serve: dropping the %zu users loaded from '%s'.",
                         authkeys_map_stats(s->map)->users, s->map_path);
        s->map = authkeys_map_free(s->map);
        s->map_path = mfree(s->map_path);
        authkeys_load_update_metrics(s);
}

static int change_source(State *s, const Conf *old) {
        json_object *fact;
        int r;

        s->fact_updated_usec = 0;
        if (s->conf.sshkey_cache) {
                if (!old->sshkey_cache)
                        (void) s->ctx->api->fact_unsubscribe(s->ctx, FACT_NAME, authkeys_load_on_fact, s);
                return authkeys_load_set_path(s, s->conf.sshkey_cache);
        }
        /* Back to the nsscache module's file: authkeys_load_on_fact switches to it soon, unless there is
         * none. */
        fact = s->ctx->api->fact_get(s->ctx, FACT_NAME);
        if (!fact) {
                r = authkeys_load_set_path(s, NULL);
                forget_map(s);
                if (r < 0)
                        return r;
        }
        json_object_put(fact);
        return choose_source(s);
}

static int apply_conf(State *s, const Conf *old) {
        bool source = !streq_ptr(old->sshkey_cache, s->conf.sshkey_cache),
             local = !streq(old->local_passwd, s->conf.local_passwd),
             limits = old->max_keys_per_user != s->conf.max_keys_per_user;
        int r = 0;

        if (old->max_staleness_usec != s->conf.max_staleness_usec)
                authkeys_get_check_staleness(s);
        if (!source && !local && !limits)
                return 0;
        if (local)
                r = authkeys_load_watch_local(s);
        if (r >= 0 && source)
                r = change_source(s, old);
        if (r >= 0 && (local || limits))
                r = s->ctx->api->job_trigger(s->job, "configuration changed");
        return r;
}

/* The map, the counters and the watches stay unless the section changes
 * what is served: a new file is switched to (the map kept until it loads),
 * a new local_passwd or max_keys_per_user loads the file again. */
static int authkeys_reload(void *state, const sunkd_cfg *cfg) {
        State *s = state;
        Conf old = s->conf, conf;
        int r;

        r = load_conf(s->ctx, cfg, &conf);
        if (r < 0)
                return r;
        s->conf = conf;
        r = apply_conf(s, &old);
        s->ctx->api->cfg_clear(conf_keys, sizeof(conf_keys) / sizeof(conf_keys[0]), &old);
        return r;
}

static int authkeys_check(sunkd_ctx *c, const sunkd_cfg *cfg) {
        Conf conf;
        int r = load_conf(c, cfg, &conf);

        if (r >= 0)
                c->api->cfg_clear(conf_keys, sizeof(conf_keys) / sizeof(conf_keys[0]), &conf);
        return r;
}

static void authkeys_fini(void *state) {
        state_free(state);
}

static int authkeys_status(void *state, struct json_object *out) {
        State *s = state;
        const AuthkeysMapStats *st = s->map ? authkeys_map_stats(s->map) : NULL;
        json_object *invalid = json_object_new_object(), *bad = json_object_new_object();

        if (!invalid || !bad) {
                json_object_put(invalid);
                json_object_put(bad);
                return -ENOMEM;
        }
        authkeys_get_check_staleness(s);
        json_object_object_add(out, "source",
                               json_object_new_string(s->conf.sshkey_cache ? "sshkey_cache" : "nsscache"));
        json_object_object_add(out, "state",
                               json_object_new_string(s->map          ? "serving"
                                                      : s->last_error ? "no keys are served"
                                                                      : "waiting for the first sshkey map"));
        json_object_object_add(out, "path", json_object_new_string(s->path ?: ""));
        json_object_object_add(out, "users", json_object_new_int64(st ? (int64_t) st->users : 0));
        json_object_object_add(out, "keys", json_object_new_int64(st ? (int64_t) st->keys : 0));
        if (s->map) {
                json_object_object_add(out, "loaded_from", json_object_new_string(s->map_path));
                json_object_object_add(out, "loaded_usec",
                                       json_object_new_int64((int64_t) s->map_loaded_usec));
                json_object_object_add(out, "updated_usec",
                                       json_object_new_int64((int64_t) authkeys_get_updated_usec(s)));
        }
        json_object_object_add(out, "stale", json_object_new_boolean(s->stale));
        json_object_object_add(out, "queries", json_object_new_int64((int64_t) s->queries));
        json_object_object_add(out, "hits", json_object_new_int64((int64_t) s->hits));
        json_object_object_add(out, "misses", json_object_new_int64((int64_t) s->misses));
        json_object_object_add(out, "unavailable", json_object_new_int64((int64_t) s->unavailable));
        json_object_object_add(out, "reload_failures", json_object_new_int64((int64_t) s->reload_failures));
        json_object_object_add(out, "logins_without_uid", json_object_new_int64((int64_t) s->without_uid));
        for (int i = 1; st && i < _AUTHKEYS_REJECT_MAX; i++)
                if (st->invalid_keys[i])
                        json_object_object_add(invalid, authkeys_reject_to_string(i),
                                               json_object_new_int64((int64_t) st->invalid_keys[i]));
        for (int i = 1; st && i < _AUTHKEYS_LINE_MAX; i++)
                if (st->bad_lines[i])
                        json_object_object_add(bad, authkeys_line_error_to_string(i),
                                               json_object_new_int64((int64_t) st->bad_lines[i]));
        json_object_object_add(out, "invalid_keys", invalid);
        json_object_object_add(out, "bad_lines", bad);
        if (s->last_error)
                json_object_object_add(out, "last_error", json_object_new_string(s->last_error));
        return 0;
}

SUNKD_MODULE_DEFINE(.name = "authkeys", .version = PACKAGE_VERSION, .init = authkeys_init,
                    .check = authkeys_check, .reload = authkeys_reload, .fini = authkeys_fini,
                    .status = authkeys_status);
