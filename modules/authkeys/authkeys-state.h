/* What the files of the authkeys module share: its configuration, its
 * state, a load handed from the worker to the loop, and the functions one
 * file calls in another.  authkeys.c is the glue (the module's definition,
 * its configuration and lifecycle, a reload, the status); authkeys-load.c
 * loads the map (the job authkeys.load) and follows which file to serve;
 * authkeys-get.c answers io.sunkd.AuthorizedKeys.Get and judges the map's
 * staleness. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>

#include "authkeys-key.h"
#include "authkeys-local.h"
#include "authkeys-map.h"
#include "sunkd/module.h"

#define FACT_NAME "nsscache.sshkey_cache"
#define DROPS_LOGGED_MAX 20
#define LOCAL_LOGGED_MAX 8

typedef struct Conf {
        char *sshkey_cache;
        char *local_passwd;
        uint64_t max_staleness_usec;
        int64_t max_keys_per_user;
} Conf;

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
        size_t last_bad_line; /* the last line skipped whole */
        const char *why;      /* why a file was refused whole */
} Load;

typedef struct Metrics {
        sunkd_metric *users, *keys, *queries, *invalid, *bad_lines, *failures, *updated, *stale;
} Metrics;

typedef struct State {
        sunkd_ctx *ctx;
        Conf conf;
        char *path;     /* the file served (and watched); NULL until known */
        bool path_seen; /* it has been there since it became the one served */
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
        uint64_t without_uid; /* calls of a client run without --uid (an NSS lookup each) */
        bool without_uid_warned;
        char *last_error;
        bool stale;
        uint64_t stale_logged_usec;
        uint64_t audit_window_usec;
        unsigned audit_count, audit_suppressed;
} State;

static inline uint64_t realtime_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * SUNKD_USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static inline uint64_t monotonic_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * SUNKD_USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

/* authkeys-load.c */
int authkeys_load_prepare(void *state, void **ret_input);
int authkeys_load_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result);
int authkeys_load_done(void *state, int r, void *input, void *result);
void authkeys_load_update_metrics(State *s);
int authkeys_load_set_path(State *s, const char *path);
int authkeys_load_watch_local(State *s);
void authkeys_load_on_fact(void *userdata, const char *name, struct json_object *value);

/* authkeys-get.c */
uint64_t authkeys_get_updated_usec(const State *s);
void authkeys_get_check_staleness(State *s);
int authkeys_get_methods_add(State *s);
