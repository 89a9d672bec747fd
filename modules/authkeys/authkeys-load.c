/* authkeys: loading the sshkey map (the trigger-only job authkeys.load:
 * the file read and checked on a worker, the new map swapped in whole on the
 * loop, or the old one kept, counted and shown), and which file it is: the
 * configured one or the nsscache module's (its fact), watched, with the
 * node's own accounts of local_passwd. */
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

int authkeys_load_prepare(void *state, void **ret_input) {
        State *s = state;
        Load *l;

        if (!s->path)
                return -ENOENT;
        l = calloc(1, sizeof(*l));
        if (!l || !(l->path = strdup(s->path)) || !(l->local_passwd = strdup(s->conf.local_passwd))) {
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

int authkeys_load_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
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
        l->mtime_usec =
                (uint64_t) st.st_mtim.tv_sec * SUNKD_USEC_PER_SEC + (uint64_t) st.st_mtim.tv_nsec / 1000;
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
                        sunkd_log_warning(s->ctx, "%s:%zu: user '%s': key %zu dropped: %s.", l->path,
                                          d->line_no, d->user ?: "?", d->key_index + 1,
                                          authkeys_reject_to_string(d->reject));
        }
        if (l->n_dropped > l->n_drops)
                sunkd_log_warning(s->ctx, "%s: %zu more lines or keys dropped.", l->path,
                                  l->n_dropped - l->n_drops);
        log_local_accounts(s, l);
}

void authkeys_load_update_metrics(State *s) {
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
                sunkd_log_notice(s->ctx, "'%s' does not exist yet: waiting for the first sshkey map.",
                                 l->path);
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
                sunkd_log_error_errno(
                        s->ctx, r, "Failed to load '%s' (%s), keeping the %zu users loaded from '%s'.",
                        l ? l->path : "?", why, authkeys_map_stats(s->map)->users, s->map_path);
        else
                sunkd_log_error_errno(s->ctx, r, "Failed to load '%s' (%s), no keys are served.",
                                      l ? l->path : "?", why);
        load_free(l);
        return r;
}

int authkeys_load_done(void *state, int r, void *input, void *result) {
        State *s = state;
        Load *l = input;
        const AuthkeysMapStats *st;

        if (!l) {
                /* No file known yet (waiting for the nsscache module's fact), or no memory. */
                if (r == -ENOENT)
                        (void) s->ctx->api->job_set_message(
                                s->job, "waiting for the nsscache module's sshkey cache");
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
        sunkd_log_info(s->ctx, "Loaded %zu users with %zu keys from '%s' (%zu lines or keys dropped).",
                       st->users, st->keys, s->map_path, l->n_dropped);
        authkeys_load_update_metrics(s);
        load_free(l);
        return 0;
}

/* ---- Which file ---------------------------------------------------------- */

static void on_file_changed(void *userdata, const char *path) {
        State *s = userdata;

        (void) s->ctx->api->job_trigger(s->job, "file changed");
}

int authkeys_load_set_path(State *s, const char *path) {
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
int authkeys_load_watch_local(State *s) {
        int r;

        s->ctx->api->watch_remove(s->local_watch);
        s->local_watch = NULL;
        r = s->ctx->api->watch_add(s->ctx, s->conf.local_passwd, on_local_changed, s, &s->local_watch);
        if (r < 0)
                return sunkd_log_error_errno(s->ctx, r, "Failed to watch '%s': %m", s->conf.local_passwd);
        return 0;
}

void authkeys_load_on_fact(void *userdata, const char *name, struct json_object *value) {
        State *s = userdata;
        json_object *o;
        int r;

        if (!value) {
                /* Keep serving what is loaded: the file is still there. */
                sunkd_log_notice(s->ctx,
                                 "The nsscache module no longer publishes its sshkey cache; keeping '%s'.",
                                 s->path ?: "nothing");
                s->fact_updated_usec = 0;
                return;
        }
        s->fact_updated_usec = json_object_object_get_ex(value, "updated_usec", &o)
                                       ? (uint64_t) json_object_get_int64(o)
                                       : 0;
        if (!json_object_object_get_ex(value, "path", &o) || !json_object_is_type(o, json_type_string) ||
            json_object_get_string(o)[0] != '/') {
                sunkd_log_warning(s->ctx, "Ignoring the fact %s without an absolute path.", name);
                return;
        }
        r = authkeys_load_set_path(s, json_object_get_string(o));
        if (r < 0)
                sunkd_log_error_errno(s->ctx, r, "Failed to switch to '%s': %m", json_object_get_string(o));
}
