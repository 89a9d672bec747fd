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

#include "authkeys-key.h"
#include "authkeys-map.h"
#include "sunkd/module.h"
#include "util/cleanup.h"
#include "util/macro.h"

#define FACT_NAME "nsscache.sshkey_cache"
#define DROPS_LOGGED_MAX 20
#define LOCAL_LOGGED_MAX 8
#define LOCAL_PASSWD_DEFAULT "/etc/passwd"
#define AUDIT_BURST 20
#define AUDIT_WINDOW_USEC (10 * SUNKD_USEC_PER_SEC)
#define STALE_LOG_USEC (10 * 60 * SUNKD_USEC_PER_SEC)

typedef struct Conf {
        char *sshkey_cache;
        char *local_passwd;
        uint64_t max_staleness_usec;
        int64_t max_keys_per_user;
} Conf;

static const sunkd_cfg_key conf_keys[] = {
        { "sshkey_cache", SUNKD_CFG_PATH, offsetof(Conf, sshkey_cache), 0, 0, 0 },
        { "local_passwd", SUNKD_CFG_PATH, offsetof(Conf, local_passwd), 0, 0, 0 },
        { "max_staleness", SUNKD_CFG_DURATION, offsetof(Conf, max_staleness_usec), 0, 0, 0 },
        { "max_keys_per_user", SUNKD_CFG_INT, offsetof(Conf, max_keys_per_user), 0, 1, AUTHKEYS_MAP_KEYS_PER_USER_MAX },
};

/* What one load hands from the worker to the loop. */
typedef struct Load {
        char *path;
        char *local_passwd;
        AuthkeysLocal *local;
        AuthkeysMapLimits limits;
        AuthkeysMap *map;
        uint64_t mtime_usec;
        AuthkeysDrop drops[DROPS_LOGGED_MAX];
        char *drop_users[DROPS_LOGGED_MAX];
        size_t n_drops, n_dropped;
        char *local_users[LOCAL_LOGGED_MAX]; /* "name (line N)" of local accounts' lines */
        size_t n_local;
        size_t last_bad_line;    /* the last line skipped whole */
        const char *why;         /* why a file was refused whole */
} Load;

typedef struct Metrics {
        sunkd_metric *users, *keys, *queries, *invalid, *bad_lines, *failures, *updated, *stale;
} Metrics;

typedef struct State {
        sunkd_ctx *ctx;
        Conf conf;
        char *path;              /* the file served (and watched); NULL until known */
        bool path_seen;          /* it has been there since it became the one served */
        bool waiting_logged;
        uint64_t fact_updated_usec; /* the nsscache module's last success, if it writes the file */
        sunkd_watch *watch;
        sunkd_watch *local_watch; /* on conf.local_passwd */
        sunkd_job *job;
        Metrics m;

        AuthkeysMap *map;
        char *map_path;
        uint64_t map_loaded_usec, map_mtime_usec;

        uint64_t queries, hits, misses, unavailable, reload_failures;
        char *last_error;
        bool stale;
        uint64_t stale_logged_usec;
        uint64_t audit_window_usec;
        unsigned audit_count, audit_suppressed;
} State;

static uint64_t realtime_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * SUNKD_USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static uint64_t monotonic_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * SUNKD_USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

/* ---- Loading the map (authkeys.load) ------------------------------------ */

static void load_free(Load *l) {
        if (!l)
                return;
        free(l->path);
        free(l->local_passwd);
        authkeys_local_free(l->local);
        authkeys_map_free(l->map);
        for (size_t i = 0; i < l->n_drops; i++)
                free(l->drop_users[i]);
        for (size_t i = 0; i < MIN(l->n_local, (size_t) LOCAL_LOGGED_MAX); i++)
                free(l->local_users[i]);
        free(l);
}

/* Local accounts are not a broken file: logged apart, once per load. */
static void on_local_account(Load *l, const AuthkeysDrop *d) {
        if (l->n_local < LOCAL_LOGGED_MAX &&
            asprintf(&l->local_users[l->n_local], "%s (line %zu)", d->user ?: "?", d->line_no) < 0)
                l->local_users[l->n_local] = NULL;
        l->n_local++;
}

static void on_drop(const AuthkeysDrop *d, void *userdata) {
        Load *l = userdata;

        if (d->line_error == AUTHKEYS_LINE_LOCAL_ACCOUNT)
                return on_local_account(l, d);
        l->n_dropped++;
        if (d->line_error != AUTHKEYS_LINE_OK && d->line_no > l->last_bad_line)
                l->last_bad_line = d->line_no;
        if (l->n_drops >= DROPS_LOGGED_MAX)
                return;
        l->drops[l->n_drops] = *d;
        l->drop_users[l->n_drops] = d->user ? strdup(d->user) : NULL;
        l->drops[l->n_drops].user = l->drop_users[l->n_drops];
        l->n_drops++;
}

static int load_prepare(void *state, void **ret_input) {
        State *s = state;
        Load *l;

        if (!s->path)
                return -ENOENT;
        l = calloc(1, sizeof(*l));
        if (!l || !(l->path = strdup(s->path)) ||
            !(l->local_passwd = strdup(s->conf.local_passwd))) {
                load_free(l);
                return -ENOMEM;
        }
        l->limits = authkeys_map_default_limits;
        if (s->conf.max_keys_per_user > 0)
                l->limits.max_keys_per_user = (size_t) s->conf.max_keys_per_user;
        *ret_input = l;
        return 0;
}

/* Whether the file's last byte is a newline (an empty file counts as one). */
static int ends_with_newline(int fd, const struct stat *st) {
        char c;

        if (st->st_size == 0)
                return 1;
        if (pread(fd, &c, 1, st->st_size - 1) != 1)
                return -EIO;
        return c == '\n';
}

/* Skipped lines among good ones are dropped one by one; but a file with no
 * line that could be read is not an sshkey cache, and a last line that is
 * cut off and unreadable is a file caught mid-write (nsscache ends every
 * line): both keep the map that is loaded. */
static int load_check(Load *l, int fd, const struct stat *st) {
        const AuthkeysMapStats *ms = authkeys_map_stats(l->map);
        size_t bad = 0;
        int nl;

        for (int i = 1; i < _AUTHKEYS_LINE_MAX; i++)
                if (i != AUTHKEYS_LINE_LOCAL_ACCOUNT) /* read, and refused */
                        bad += ms->bad_lines[i];
        if (bad > 0 && ms->users == 0)
                return l->why = "no line could be read", -EBADMSG;
        nl = ends_with_newline(fd, st);
        if (nl < 0)
                return nl;
        if (!nl && l->last_bad_line > 0 && l->last_bad_line == ms->lines)
                return l->why = "the last line is cut off", -EBADMSG;
        return 0;
}

static int load_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        Load *l = input;
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        r = authkeys_local_load(l->local_passwd, &l->local);
        if (r < 0)
                return l->why = "the local_passwd file cannot be read", r;
        l->limits.local = l->local;
        fd = open(l->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return l->why = "not a regular file", -EBADMSG;
        r = authkeys_map_build_fd(fd, &l->limits, on_drop, l, &l->map);
        if (r >= 0)
                r = load_check(l, fd, &st);
        if (r < 0)
                return r;
        l->mtime_usec = (uint64_t) st.st_mtim.tv_sec * SUNKD_USEC_PER_SEC + (uint64_t) st.st_mtim.tv_nsec / 1000;
        return 0;
}

static void log_local_accounts(State *s, const Load *l) {
        char list[LOCAL_LOGGED_MAX * (AUTHKEYS_MAP_NAME_MAX + 32)] = "";
        size_t len = 0;

        if (l->n_local == 0)
                return;
        for (size_t i = 0; i < MIN(l->n_local, (size_t) LOCAL_LOGGED_MAX) && len < sizeof(list); i++)
                len += (size_t) snprintf(list + len, sizeof(list) - len, "%s%s", i > 0 ? ", " : "",
                                         l->local_users[i] ?: "?");
        sunkd_log_warning(s->ctx, "%s: the keys of %zu local or reserved accounts are never served: %s%s.",
                          l->path, l->n_local, list, l->n_local > LOCAL_LOGGED_MAX ? ", ..." : "");
}

static void log_drops(State *s, const Load *l) {
        for (size_t i = 0; i < l->n_drops; i++) {
                const AuthkeysDrop *d = l->drops + i;

                if (d->line_error != AUTHKEYS_LINE_OK)
                        sunkd_log_warning(s->ctx, "%s:%zu: line skipped: %s.", l->path, d->line_no,
                                          authkeys_line_error_to_string(d->line_error));
                else
                        sunkd_log_warning(s->ctx, "%s:%zu: user '%s': key %zu dropped: %s.", l->path, d->line_no,
                                          d->user ?: "?", d->key_index + 1, authkeys_reject_to_string(d->reject));
        }
        if (l->n_dropped > l->n_drops)
                sunkd_log_warning(s->ctx, "%s: %zu more lines or keys dropped.", l->path, l->n_dropped - l->n_drops);
        log_local_accounts(s, l);
}

static void update_map_metrics(State *s) {
        const sunkd_host_api *api = s->ctx->api;
        const AuthkeysMapStats *st = s->map ? authkeys_map_stats(s->map) : NULL;

        (void) api->metric_set(s->m.users, st ? (double) st->users : 0, NULL);
        (void) api->metric_set(s->m.keys, st ? (double) st->keys : 0, NULL);
        for (int i = 1; i < _AUTHKEYS_REJECT_MAX; i++) {
                const char *label[] = { authkeys_reject_to_string(i), NULL };
                (void) api->metric_set(s->m.invalid, st ? (double) st->invalid_keys[i] : 0, label);
        }
        for (int i = 1; i < _AUTHKEYS_LINE_MAX; i++) {
                const char *label[] = { authkeys_line_error_to_string(i), NULL };
                (void) api->metric_set(s->m.bad_lines, st ? (double) st->bad_lines[i] : 0, label);
        }
}

/* Until the file has been there once, a missing one is awaited, not a
 * failure: the nsscache module writes it after sunkd is up. */
static bool load_waiting(State *s, int r, const Load *l) {
        bool current = s->path && streq(l->path, s->path);

        if (r != -ENOENT || (current && s->path_seen)) {
                s->path_seen = s->path_seen || current;
                return false;
        }
        (void) s->ctx->api->job_set_message(s->job, "waiting for the first sshkey map");
        if (current && !s->waiting_logged)
                sunkd_log_notice(s->ctx, "'%s' does not exist yet: waiting for the first sshkey map.", l->path);
        s->waiting_logged = s->waiting_logged || current;
        return true;
}

static int load_failed(State *s, int r, Load *l) {
        const char *why = l && l->why ? l->why : strerror(-r);

        s->reload_failures++;
        (void) s->ctx->api->metric_add_value(s->m.failures, 1, NULL);
        if (asprintf(&s->last_error, "%s: %s", l ? l->path : "?", why) < 0)
                s->last_error = NULL;
        if (s->map)
                sunkd_log_error_errno(s->ctx, r, "Failed to load '%s' (%s), keeping the %zu users loaded from '%s'.",
                                      l ? l->path : "?", why, authkeys_map_stats(s->map)->users, s->map_path);
        else
                sunkd_log_error_errno(s->ctx, r, "Failed to load '%s' (%s), no keys are served.",
                                      l ? l->path : "?", why);
        load_free(l);
        return r;
}

static int load_done(void *state, int r, void *input, void *result) {
        State *s = state;
        Load *l = input;
        const AuthkeysMapStats *st;

        if (!l) {
                /* No file known yet (waiting for the nsscache module's fact), or no memory. */
                if (r == -ENOENT)
                        (void) s->ctx->api->job_set_message(s->job, "waiting for the nsscache module's sshkey cache");
                return r == -ENOENT ? 0 : r;
        }
        free(s->last_error);
        s->last_error = NULL;
        if (load_waiting(s, r, l)) {
                load_free(l);
                return 0;
        }
        if (r < 0)
                return load_failed(s, r, l);
        log_drops(s, l);
        authkeys_map_free(s->map);
        s->map = l->map;
        l->map = NULL;
        free(s->map_path);
        s->map_path = l->path;
        l->path = NULL;
        s->map_mtime_usec = l->mtime_usec;
        s->map_loaded_usec = realtime_usec();
        st = authkeys_map_stats(s->map);
        sunkd_log_info(s->ctx, "Loaded %zu users with %zu keys from '%s' (%zu lines or keys dropped).", st->users,
                       st->keys, s->map_path, l->n_dropped);
        update_map_metrics(s);
        load_free(l);
        return 0;
}

/* ---- Which file ---------------------------------------------------------- */

static void on_file_changed(void *userdata, const char *path) {
        State *s = userdata;

        (void) s->ctx->api->job_trigger(s->job, "file changed");
}

static int set_path(State *s, const char *path) {
        char *p;
        int r;

        if (s->path && path && strcmp(s->path, path) == 0)
                return 0;
        p = path ? strdup(path) : NULL;
        if (path && !p)
                return -ENOMEM;
        s->ctx->api->watch_remove(s->watch);
        s->watch = NULL;
        free(s->path);
        s->path = p;
        s->path_seen = s->waiting_logged = false;
        if (!p)
                return 0;
        r = s->ctx->api->watch_add(s->ctx, p, on_file_changed, s, &s->watch);
        if (r < 0)
                return sunkd_log_error_errno(s->ctx, r, "Failed to watch '%s': %m", p);
        sunkd_log_info(s->ctx, "Serving the keys in '%s'.", p);
        return s->ctx->api->job_trigger(s->job, "new file");
}

static void on_local_changed(void *userdata, const char *path) {
        State *s = userdata;

        (void) s->ctx->api->job_trigger(s->job, "local_passwd changed");
}

/* A new local account loses its keys at once, not at the next map. */
static int watch_local(State *s) {
        int r;

        s->ctx->api->watch_remove(s->local_watch);
        s->local_watch = NULL;
        r = s->ctx->api->watch_add(s->ctx, s->conf.local_passwd, on_local_changed, s, &s->local_watch);
        if (r < 0)
                return sunkd_log_error_errno(s->ctx, r, "Failed to watch '%s': %m", s->conf.local_passwd);
        return 0;
}

static void on_fact(void *userdata, const char *name, struct json_object *value) {
        State *s = userdata;
        json_object *o;
        int r;

        if (!value) {
                /* Keep serving what is loaded: the file is still there. */
                sunkd_log_notice(s->ctx, "The nsscache module no longer publishes its sshkey cache; keeping '%s'.",
                                 s->path ?: "nothing");
                s->fact_updated_usec = 0;
                return;
        }
        s->fact_updated_usec = json_object_object_get_ex(value, "updated_usec", &o) ?
                (uint64_t) json_object_get_int64(o) : 0;
        if (!json_object_object_get_ex(value, "path", &o) || !json_object_is_type(o, json_type_string) ||
            json_object_get_string(o)[0] != '/') {
                sunkd_log_warning(s->ctx, "Ignoring the fact %s without an absolute path.", name);
                return;
        }
        r = set_path(s, json_object_get_string(o));
        if (r < 0)
                sunkd_log_error_errno(s->ctx, r, "Failed to switch to '%s': %m", json_object_get_string(o));
}

/* ---- Staleness and audit ----------------------------------------------- */

/* When the keys were last known good: the file's mtime, or the nsscache
 * module's last successful run when it writes the file (it leaves an
 * unchanged file alone). */
static uint64_t map_updated_usec(const State *s) {
        uint64_t t = s->map_mtime_usec;

        if (s->fact_updated_usec > t && s->map_path && s->path && strcmp(s->map_path, s->path) == 0)
                t = s->fact_updated_usec;
        return t;
}

static void check_staleness(State *s) {
        uint64_t now = realtime_usec(), updated = map_updated_usec(s), age;
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
                sunkd_log_warning(s->ctx, "The keys served from '%s' are STALE: last updated %llu s ago, over "
                                  "max_staleness; is the SCIM source failing?", s->map_path,
                                  (unsigned long long) (age / SUNKD_USEC_PER_SEC));
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
                        sunkd_log_notice(s->ctx, "%u key answers were not logged (rate limit).", s->audit_suppressed);
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
        if (authkeys_key_parse(k.line, k.len, &key) != AUTHKEYS_OK || authkeys_key_digest(k.line, &key, digest) < 0)
                return;
        authkeys_fingerprint_format(digest, fp);
        snprintf(f_user, sizeof(f_user), "SUNKD_USER=%s", user);
        snprintf(f_fp, sizeof(f_fp), "SUNKD_FINGERPRINT=%s", fp);
        snprintf(f_pid, sizeof(f_pid), "SUNKD_PEER_PID=%d", (int) pid);
        const char *fields[] = { f_user, f_fp, f_pid, NULL };
        (void) s->ctx->api->log_fields(s->ctx, SUNKD_LOG_NOTICE, fields, "Key %s of user '%s' given to pid %d.", fp,
                                       user, (int) pid);
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
        if (!s->map) {
                /* The client reads the cache itself then: counted, so that it can be seen. */
                json_object *p = json_object_new_object();
                const char *label[] = { "unavailable", NULL };

                s->unavailable++;
                (void) api->metric_add_value(s->m.queries, 1, label);
                if (p)
                        json_object_object_add(p, "reason", json_object_new_string("no sshkey map is loaded"));
                return api->reply_error(call, "io.sunkd.Unavailable", p);
        }
        check_staleness(s);
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
                { { sizeof(sunkd_metric_spec), "authkeys_users", "Users in the loaded sshkey map.", SUNKD_METRIC_GAUGE, { NULL } }, &s->m.users },
                { { sizeof(sunkd_metric_spec), "authkeys_keys", "Valid keys in the loaded sshkey map.", SUNKD_METRIC_GAUGE, { NULL } }, &s->m.keys },
                { { sizeof(sunkd_metric_spec), "authkeys_queries_total", "Key queries by result: hit, miss, unavailable (no map loaded).", SUNKD_METRIC_COUNTER, { "result" } }, &s->m.queries },
                { { sizeof(sunkd_metric_spec), "authkeys_invalid_keys", "Keys dropped from the loaded map, by reason.", SUNKD_METRIC_GAUGE, { "reason" } }, &s->m.invalid },
                { { sizeof(sunkd_metric_spec), "authkeys_bad_lines", "Lines of the loaded file skipped, by reason.", SUNKD_METRIC_GAUGE, { "reason" } }, &s->m.bad_lines },
                { { sizeof(sunkd_metric_spec), "authkeys_reload_failures_total", "Loads that failed and kept the old map.", SUNKD_METRIC_COUNTER, { NULL } }, &s->m.failures },
                { { sizeof(sunkd_metric_spec), "authkeys_stale", "1 while the map is older than max_staleness.", SUNKD_METRIC_GAUGE, { NULL } }, &s->m.stale },
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
                return set_path(s, s->conf.sshkey_cache);
        r = s->ctx->api->fact_subscribe(s->ctx, FACT_NAME, on_fact, s);
        if (r < 0 && r != -EEXIST)
                return sunkd_log_error_errno(s->ctx, r, "Failed to follow the nsscache module's sshkey cache: %m");
        if (!s->path)
                sunkd_log_info(s->ctx, "No sshkey_cache set: serving the sshkey cache of the nsscache module once it "
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
                .prepare = load_prepare,
                .work = load_work,
                .done = load_done,
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
                r = c->api->methods_add(c, methods, sizeof(methods) / sizeof(methods[0]));
        if (r >= 0)
                r = watch_local(s);
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
        update_map_metrics(s);
}

static int change_source(State *s, const Conf *old) {
        json_object *fact;
        int r;

        s->fact_updated_usec = 0;
        if (s->conf.sshkey_cache) {
                if (!old->sshkey_cache)
                        (void) s->ctx->api->fact_unsubscribe(s->ctx, FACT_NAME, on_fact, s);
                return set_path(s, s->conf.sshkey_cache);
        }
        /* Back to the nsscache module's file: on_fact switches to it soon, unless there is none. */
        fact = s->ctx->api->fact_get(s->ctx, FACT_NAME);
        if (!fact) {
                r = set_path(s, NULL);
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
                check_staleness(s);
        if (!source && !local && !limits)
                return 0;
        if (local)
                r = watch_local(s);
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
        check_staleness(s);
        json_object_object_add(out, "source", json_object_new_string(s->conf.sshkey_cache ? "sshkey_cache" : "nsscache"));
        json_object_object_add(out, "state", json_object_new_string(s->map ? "serving" :
                                                                    s->last_error ? "no keys are served" :
                                                                    "waiting for the first sshkey map"));
        json_object_object_add(out, "path", json_object_new_string(s->path ?: ""));
        json_object_object_add(out, "users", json_object_new_int64(st ? (int64_t) st->users : 0));
        json_object_object_add(out, "keys", json_object_new_int64(st ? (int64_t) st->keys : 0));
        if (s->map) {
                json_object_object_add(out, "loaded_from", json_object_new_string(s->map_path));
                json_object_object_add(out, "loaded_usec", json_object_new_int64((int64_t) s->map_loaded_usec));
                json_object_object_add(out, "updated_usec", json_object_new_int64((int64_t) map_updated_usec(s)));
        }
        json_object_object_add(out, "stale", json_object_new_boolean(s->stale));
        json_object_object_add(out, "queries", json_object_new_int64((int64_t) s->queries));
        json_object_object_add(out, "hits", json_object_new_int64((int64_t) s->hits));
        json_object_object_add(out, "misses", json_object_new_int64((int64_t) s->misses));
        json_object_object_add(out, "unavailable", json_object_new_int64((int64_t) s->unavailable));
        json_object_object_add(out, "reload_failures", json_object_new_int64((int64_t) s->reload_failures));
        for (int i = 1; st && i < _AUTHKEYS_REJECT_MAX; i++)
                if (st->invalid_keys[i])
                        json_object_object_add(invalid, authkeys_reject_to_string(i), json_object_new_int64((int64_t) st->invalid_keys[i]));
        for (int i = 1; st && i < _AUTHKEYS_LINE_MAX; i++)
                if (st->bad_lines[i])
                        json_object_object_add(bad, authkeys_line_error_to_string(i), json_object_new_int64((int64_t) st->bad_lines[i]));
        json_object_object_add(out, "invalid_keys", invalid);
        json_object_object_add(out, "bad_lines", bad);
        if (s->last_error)
                json_object_object_add(out, "last_error", json_object_new_string(s->last_error));
        return 0;
}

SUNKD_MODULE_DEFINE(.name = "authkeys", .version = PACKAGE_VERSION, .init = authkeys_init, .check = authkeys_check,
                    .reload = authkeys_reload, .fini = authkeys_fini, .status = authkeys_status);
