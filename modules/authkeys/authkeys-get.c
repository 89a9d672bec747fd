/* authkeys: io.sunkd.AuthorizedKeys.Get, answered from the map on the
 * loop (root and the module's allow: list only), its exact-key answers
 * audited, rate-limited; and the map's staleness against max_staleness. */
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

#define AUDIT_BURST 20
#define AUDIT_WINDOW_USEC (10 * SUNKD_USEC_PER_SEC)
#define STALE_LOG_USEC (10 * 60 * SUNKD_USEC_PER_SEC)

/* ---- Staleness and audit ----------------------------------------------- */

/* When the keys were last known good: the file's mtime, or the nsscache
 * module's last successful run when it writes the file (it leaves an
 * unchanged file alone). */
uint64_t authkeys_get_updated_usec(const State *s) {
        uint64_t t = s->map_mtime_usec;

        if (s->fact_updated_usec > t && s->map_path && s->path && strcmp(s->map_path, s->path) == 0)
                t = s->fact_updated_usec;
        return t;
}

void authkeys_get_check_staleness(State *s) {
        uint64_t now = realtime_usec(), updated = authkeys_get_updated_usec(s), age;
        bool stale;

        if (s->conf.max_staleness_usec == 0 && s->stale) {
                /* Turned off by a reload. */
                (void) s->ctx->api->metric_set(s->m.stale, 0, NULL);
                s->stale = false;
        }
        if (s->conf.max_staleness_usec == 0 || !s->map)
                return;
        age = now > updated ? now - updated : 0;
        stale = age > s->conf.max_staleness_usec;
        if (stale && (!s->stale || monotonic_usec() - s->stale_logged_usec >= STALE_LOG_USEC)) {
                sunkd_log_warning(s->ctx,
                                  "The keys served from '%s' are STALE: last updated %llu s ago, over "
                                  "max_staleness; is the SCIM source failing?",
                                  s->map_path, (unsigned long long) (age / SUNKD_USEC_PER_SEC));
                s->stale_logged_usec = monotonic_usec();
        } else if (!stale && s->stale)
                sunkd_log_notice(s->ctx, "The keys served from '%s' are current again.", s->map_path);
        if (stale != s->stale)
                (void) s->ctx->api->metric_set(s->m.stale, stale, NULL);
        s->stale = stale;
}

static bool audit_pass(State *s) {
        uint64_t now = monotonic_usec();

        if (now - s->audit_window_usec >= AUDIT_WINDOW_USEC) {
                if (s->audit_suppressed > 0)
                        sunkd_log_notice(s->ctx, "%u key answers were not logged (rate limit).",
                                         s->audit_suppressed);
                s->audit_window_usec = now;
                s->audit_count = 0;
                s->audit_suppressed = 0;
        }
        if (s->audit_count >= AUDIT_BURST) {
                s->audit_suppressed++;
                return false;
        }
        s->audit_count++;
        return true;
}

static void audit(State *s, sunkd_call *call, const char *user, AuthkeysMapKey k) {
        char fp[AUTHKEYS_FINGERPRINT_MAX], f_user[300], f_fp[80], f_pid[40];
        uint8_t digest[AUTHKEYS_DIGEST_SIZE];
        AuthkeysKey key;
        pid_t pid = s->ctx->api->call_pid(call);

        if (!audit_pass(s))
                return;
        if (authkeys_key_parse(k.line, k.len, &key) != AUTHKEYS_OK ||
            authkeys_key_digest(k.line, &key, digest) < 0)
                return;
        authkeys_fingerprint_format(digest, fp);
        snprintf(f_user, sizeof(f_user), "SUNKD_USER=%s", user);
        snprintf(f_fp, sizeof(f_fp), "SUNKD_FINGERPRINT=%s", fp);
        snprintf(f_pid, sizeof(f_pid), "SUNKD_PEER_PID=%d", (int) pid);
        const char *fields[] = { f_user, f_fp, f_pid, NULL };
        (void) s->ctx->api->log_fields(s->ctx, SUNKD_LOG_NOTICE, fields,
                                       "Key %s of user '%s' given to pid %d.", fp, user, (int) pid);
}

/* ---- io.sunkd.AuthorizedKeys.Get ------------------------------------------ */

static int invalid_parameter(State *s, sunkd_call *call, const char *name) {
        json_object *p = json_object_new_object();

        if (p)
                json_object_object_add(p, "parameter", json_object_new_string(name));
        return s->ctx->api->reply_error(call, "org.varlink.service.InvalidParameter", p);
}

/* The string parameter @name: 1 and *ret set, 0 if absent, -EINVAL if not a string. */
static int string_param(json_object *params, const char *name, const char **ret) {
        json_object *o;

        *ret = NULL;
        if (!json_object_object_get_ex(params, name, &o) || json_object_is_type(o, json_type_null))
                return 0;
        if (!json_object_is_type(o, json_type_string))
                return -EINVAL;
        *ret = json_object_get_string(o);
        return 1;
}

static int parse_match(json_object *params, AuthkeysMatch *m, bool *ret_exact, const char **ret_bad) {
        const char *fp, *type, *key;

        *ret_exact = false;
        if (string_param(params, "fingerprint", &fp) < 0)
                return *ret_bad = "fingerprint", -EINVAL;
        if (string_param(params, "type", &type) < 0)
                return *ret_bad = "type", -EINVAL;
        if (string_param(params, "key", &key) < 0)
                return *ret_bad = "key", -EINVAL;
        if (fp) {
                if ((type || key) || authkeys_match_from_fingerprint(fp, m) < 0)
                        return *ret_bad = "fingerprint", -EINVAL;
                *ret_exact = true;
        } else if (type || key) {
                if (!type || !key)
                        return *ret_bad = type ? "key" : "type", -EINVAL;
                if (authkeys_match_from_key(type, key, m) < 0)
                        return *ret_bad = "key", -EINVAL;
                *ret_exact = true;
        }
        return 0;
}

/* A client run without --uid looked the user's uid up through NSS itself,
 * on every login: said once, where an admin looks, and counted. */
static void note_uid_lookup(State *s, json_object *params) {
        json_object *v;

        if (!json_object_object_get_ex(params, "uid_looked_up", &v) || !json_object_get_boolean(v))
                return;
        s->without_uid++;
        if (s->without_uid_warned)
                return;
        s->without_uid_warned = true;
        sunkd_log_notice(s->ctx,
                         "sunkd-authkeys runs without --uid: each login pays an NSS lookup of the user; "
                         "give it sshd's %%U in sshd_config: AuthorizedKeysCommand .../sunkd-authkeys "
                         "--uid %%U -- %%u %%f (counted in logins_without_uid; said once)");
}

static int method_get(sunkd_call *call, json_object *params, void *state) {
        State *s = state;
        const sunkd_host_api *api = s->ctx->api;
        const char *user, *bad = NULL;
        AuthkeysMatch match;
        bool exact;
        json_object *keys, *reply;
        size_t n = 0;
        int h;

        if (string_param(params, "user", &user) <= 0 || !authkeys_user_name_valid(user, strlen(user)))
                return invalid_parameter(s, call, "user");
        if (parse_match(params, &match, &exact, &bad) < 0)
                return invalid_parameter(s, call, bad);
        note_uid_lookup(s, params);
        if (!s->map) {
                /* The client reads the cache itself then: counted, so that it can be seen. */
                json_object *p = json_object_new_object();
                const char *label[] = { "unavailable", NULL };

                s->unavailable++;
                (void) api->metric_add_value(s->m.queries, 1, label);
                if (p)
                        json_object_object_add(p, "reason",
                                               json_object_new_string("no sshkey map is loaded"));
                return api->reply_error(call, "io.sunkd.Unavailable", p);
        }
        authkeys_get_check_staleness(s);
        keys = json_object_new_array();
        if (!keys)
                return -ENOMEM;
        s->queries++;
        h = authkeys_map_lookup(s->map, user, &n);
        for (size_t i = 0; h >= 0 && i < n; i++) {
                AuthkeysMapKey k = authkeys_map_key(s->map, h, i);

                if (exact && !authkeys_map_key_matches(k, &match))
                        continue;
                json_object_array_add(keys, json_object_new_string_len(k.line, (int) k.len));
                if (exact)
                        audit(s, call, user, k);
        }
        if (json_object_array_length(keys) > 0)
                s->hits++;
        else
                s->misses++;
        {
                const char *label[] = { json_object_array_length(keys) > 0 ? "hit" : "miss", NULL };
                (void) api->metric_add_value(s->m.queries, 1, label);
        }
        reply = json_object_new_object();
        if (!reply) {
                json_object_put(keys);
                return -ENOMEM;
        }
        json_object_object_add(reply, "keys", keys);
        return api->reply(call, reply);
}

static const sunkd_method methods[] = {
        { "io.sunkd.AuthorizedKeys.Get", SUNKD_METHOD_ALLOW, method_get },
};

int authkeys_get_methods_add(State *s) {
        return s->ctx->api->methods_add(s->ctx, methods, sizeof(methods) / sizeof(methods[0]));
}
