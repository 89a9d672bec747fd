/* Fetch, map and render as pages arrive, then publish all maps or none. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsscache-refresh.h"
#include "util/cleanup.h"

void nsscache_refresh_options(const ScimConfig *c, bool force, CacheOptions *o) {
        cache_options_init(o);
        o->dir = c->files_dir;
        o->suffix = c->files_cache_filename_suffix;
        o->timestamp_dir = c->timestamp_dir;
        o->max_shrink_pct = (unsigned) c->max_shrink_pct;
        o->force = force;
        for (int t = 0; t < _NSS_MAP_MAX; t++) {
                o->enabled[t] = c->map_enabled[t];
                o->min_entries[t] = (size_t) c->min_entries;
        }
}

static void formatted_donep(CacheFormatted (*text)[_NSS_MAP_MAX]) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                cache_formatted_done(*text + t);
}

/* The node's own accounts and the maps published now, read at the start of
 * every run: a run never publishes what it could not check against them. */
static int load_host_files(const ScimConfig *c, const CacheOptions *opts, ScimMapper *m, char **ret_error) {
        _cleanup_free_ char *passwd = cache_publish_path(opts, NSS_MAP_PASSWD),
                            *group = cache_publish_path(opts, NSS_MAP_GROUP);
        int r;

        if (!passwd || !group)
                return -ENOMEM;
        r = scim_map_load_local(m, c->local_passwd, c->local_group);
        if (r < 0) {
                if (ret_error && asprintf(ret_error, "reading the local accounts (%s, %s): %s", c->local_passwd,
                                          c->local_group, strerror(-r)) < 0)
                        *ret_error = NULL;
                return r;
        }
        r = scim_map_load_published(m, passwd, group);
        if (r < 0 && ret_error && asprintf(ret_error, "reading the published maps (%s, %s): %s", passwd, group,
                                           strerror(-r)) < 0)
                *ret_error = NULL;
        return r;
}

int nsscache_refresh_run(const ScimConfig *c, const CacheOptions *opts, const sunkd_cancel *cancel,
                         nsscache_rejects_fn on_rejects, void *userdata, ScimFetchStats *ret_stats,
                         CacheReport *ret_report, char **ret_error) {
        _cleanup_(formatted_donep) CacheFormatted text[_NSS_MAP_MAX];
        _cleanup_(scim_map_freep) ScimMapper *m = NULL;
        ScimSink sink;
        int r;

        /* Each entry is rendered as it is accepted, into a temp file beside
         * its map: a refresh holds a chunk of each map, never the maps or
         * every entry's strings. */
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                cache_formatted_init(text + t, t);
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                if (!opts->enabled[t])
                        continue;
                r = cache_publish_spill(opts, text + t);
                if (r < 0) {
                        _cleanup_free_ char *path = cache_publish_path(opts, t);

                        if (ret_error && asprintf(ret_error, "%s: cannot create a temporary file beside it: %s",
                                                  path ?: opts->dir, strerror(-r)) < 0)
                                *ret_error = NULL;
                        return r;
                }
        }
        sink = scim_sink_formatted(text);
        r = scim_map_new(c, &sink, &m);
        if (r < 0)
                return r;
        r = load_host_files(c, opts, m, ret_error);
        if (r < 0)
                return r;
        r = scim_fetch_run(c, m, cancel, ret_stats, ret_error);
        if (r < 0)
                return r;
        r = scim_map_finish(m);
        if (r < 0)
                return r;
        if (on_rejects)
                on_rejects(userdata, scim_map_rejects(m));
        m = scim_map_free(m);
        if (sunkd_cancelled(cancel))
                return -ECANCELED;
        return cache_publish_formatted(opts, text, ret_report, ret_error);
}
