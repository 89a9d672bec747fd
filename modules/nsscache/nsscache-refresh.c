/* Fetch, map and render as pages arrive, then publish all maps or none. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsscache-refresh.h"
#include "nsscache-source.h"
#include "refresh-memo.h"
#include "util/cleanup.h"

void nsscache_refresh_options(const NsscacheConf *c, bool force, CacheOptions *o) {
        cache_options_init(o);
        o->dir = c->files_dir;
        o->suffix = c->files_cache_filename_suffix;
        o->timestamp_dir = c->timestamp_dir;
        o->max_shrink_pct = (unsigned) c->max_shrink_pct;
        o->force = force;
        for (int t = 0; t < _NSS_MAP_MAX; t++) {
                o->enabled[t] = c->map_enabled[t];
                o->min_entries[t] = (size_t) c->min_entries;
                o->map_suffix[t] = c->map[t].files_suffix;
        }
}

static void formatted_donep(CacheFormatted (*text)[_NSS_MAP_MAX]) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                cache_formatted_done(*text + t);
}

/* The node's own accounts and the maps published now, read at the start of
 * every run: a run never publishes what it could not check against them. */
static int load_host_files(const NsscacheConf *c, const CacheOptions *opts, Mapper *m, char **ret_error) {
        _cleanup_free_ char *passwd = cache_publish_path(opts, NSS_MAP_PASSWD),
                            *group = cache_publish_path(opts, NSS_MAP_GROUP);
        int r;

        if (!passwd || !group)
                return -ENOMEM;
        r = mapper_load_local(m, c->local_passwd, c->local_group);
        if (r < 0) {
                if (ret_error && asprintf(ret_error, "reading the local accounts (%s, %s): %s",
                                          c->local_passwd, c->local_group, strerror(-r)) < 0)
                        *ret_error = NULL;
                return r;
        }
        r = mapper_load_published(m, passwd, group);
        if (r < 0 && ret_error &&
            asprintf(ret_error, "reading the published maps (%s, %s): %s", passwd, group, strerror(-r)) < 0)
                *ret_error = NULL;
        return r;
}

/* Opens a temp file beside each enabled map for its text. */
static int spill_maps(const CacheOptions *opts, CacheFormatted text[static _NSS_MAP_MAX], char **ret_error) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                int r;

                if (!opts->enabled[t])
                        continue;
                r = cache_publish_spill(opts, text + t);
                if (r < 0) {
                        _cleanup_free_ char *path = cache_publish_path(opts, t);

                        if (ret_error &&
                            asprintf(ret_error, "%s: cannot create a temporary file beside it: %s",
                                     path ?: opts->dir, strerror(-r)) < 0)
                                *ret_error = NULL;
                        return r;
                }
        }
        return 0;
}

/* What a full run leaves for the next one: a memo if it changed nothing
 * while the files it read stayed as they were (@files_stat, taken before
 * it read them).  NULL otherwise, or when a digest cannot be taken. */
static RefreshMemo *memo_new(const NsscacheConf *c, const CacheOptions *opts, const uint8_t *files_stat,
                             FetchRecord *record, MapRejects *rejects, const NsscacheFetchStats *stats,
                             const CacheReport *report) {
        _cleanup_(refresh_memo_freep) RefreshMemo *m = NULL;

        if (opts->force || report->n_changed > 0 || record->broken || !(m = calloc(1, sizeof(*m))))
                return NULL;
        if (refresh_files_digest(c, opts, record->key, false, m->files_stat) < 0 ||
            memcmp(m->files_stat, files_stat, DIGEST_LEN) != 0 ||
            refresh_files_digest(c, opts, record->key, true, m->files) < 0)
                return NULL;
        m->record = *record;
        *record = (FetchRecord){};
        m->rejects = *rejects;
        *rejects = (MapRejects){};
        m->stats = *stats;
        m->report = *report;
        return TAKE_PTR(m);
}

/* Map what @source fetched into @run (or fetch it as it is mapped) and
 * publish that; with @memo, record the run and leave a memo if it changed
 * nothing.  *@stats: the fetch's. */
static int refresh_full(const NsscacheConf *c, const CacheOptions *opts, RefreshMemo **memo,
                        const NsscacheSource *source, void *run, const sunkd_cancel *cancel,
                        nsscache_rejects_fn on_rejects, void *userdata, NsscacheFetchStats *stats,
                        CacheReport *ret_report, char **ret_error) {
        _cleanup_(formatted_donep) CacheFormatted text[_NSS_MAP_MAX];
        _cleanup_(mapper_freep) Mapper *m = NULL;
        _cleanup_(fetch_record_done) FetchRecord record;
        _cleanup_(refresh_rejects_done) MapRejects rejects = {};
        uint8_t files_stat[DIGEST_LEN];
        CacheReport report = {};
        MapSink sink;
        int r;

        /* Each entry is rendered as it is accepted, into a temp file beside
         * its map: a refresh holds a chunk of each map, never the maps or
         * every entry's strings. */
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                cache_formatted_init(text + t, t);
        fetch_record_init(&record);
        r = spill_maps(opts, text, ret_error);
        if (r < 0)
                return r;
        /* taken before the files are read: a memo needs them unchanged until the publish */
        if (memo && refresh_files_digest(c, opts, record.key, false, files_stat) < 0)
                memo = NULL;
        sink = map_sink_formatted(text);
        r = mapper_new(c, &sink, &m);
        if (r < 0)
                return r;
        r = load_host_files(c, opts, m, ret_error);
        if (r < 0)
                return r;
        r = source->map(c, run, m, memo ? &record : NULL, cancel, stats, ret_error);
        if (r < 0)
                return r;
        r = mapper_finish(m);
        if (r < 0)
                return r;
        if (on_rejects)
                on_rejects(userdata, mapper_rejects(m));
        if (memo && refresh_rejects_copy(&rejects, mapper_rejects(m)) < 0)
                memo = NULL;
        m = mapper_free(m);
        if (sunkd_cancelled(cancel))
                return -ECANCELED;
        r = cache_publish_formatted(opts, text, &report, ret_error);
        if (ret_report)
                *ret_report = report;
        if (r >= 0 && source->save)
                source->save(c, opts, run);
        if (r >= 0 && memo)
                *memo = memo_new(c, opts, files_stat, &record, &rejects, stats, &report);
        return r;
}

/* Whether the files a refresh reads are as @memo found them: by stat()
 * first (nothing read), then by what they hold. */
static bool memo_files_same(const NsscacheConf *c, const CacheOptions *opts, const RefreshMemo *memo,
                            bool contents) {
        uint8_t d[DIGEST_LEN];

        return refresh_files_digest(c, opts, memo->record.key, contents, d) >= 0 &&
               memcmp(d, contents ? memo->files : memo->files_stat, sizeof(d)) == 0;
}

/* The sources' answers were @memo's and the files are as it found them:
 * publish what an unchanged run publishes (timestamps). */
static int replay_finish(const CacheOptions *opts, const RefreshMemo *memo, nsscache_rejects_fn on_rejects,
                         void *userdata, NsscacheFetchStats *stats, CacheReport *ret_report,
                         char **ret_error) {
        int r = cache_publish_unchanged(opts, &memo->report, ret_report, ret_error);

        if (r < 0)
                return r;
        if (on_rejects)
                on_rejects(userdata, &memo->rejects);
        stats->pages = memo->stats.pages;
        stats->resources = memo->stats.resources;
        stats->cursor = memo->stats.cursor;
        stats->notes = memo->stats.notes;
        stats->replayed = true;
        return 0;
}

static bool replay_possible(const NsscacheConf *c, const CacheOptions *opts, const RefreshMemo *memo) {
        return !opts->force && !(opts->state_dir && cache_publish_pending(opts->state_dir) != 0) &&
               memo_files_same(c, opts, memo, false);
}

/* Whether the source answers as @memo recorded (its requests replayed, or
 * the files fetched into @run compared) and the files are as it found
 * them; if so (*ret_same), does what a publish that changes nothing does.
 * *ret_stats counts the requests replayed. */
static int refresh_replay(const NsscacheConf *c, const CacheOptions *opts, const RefreshMemo *memo,
                          const NsscacheSource *source, void *run, const sunkd_cancel *cancel,
                          nsscache_rejects_fn on_rejects, void *userdata, NsscacheFetchStats *ret_stats,
                          CacheReport *ret_report, bool *ret_same, char **ret_error) {
        bool same = false;
        int r;

        *ret_same = false;
        if (!replay_possible(c, opts, memo))
                return 0;
        r = source->same(c, run, &memo->record, cancel, ret_stats, &same, ret_error);
        if (r < 0 || !same)
                return r;
        /* the answers are the same; the files decide, by what they hold now */
        if (!memo_files_same(c, opts, memo, true))
                return 0;
        r = replay_finish(opts, memo, on_rejects, userdata, ret_stats, ret_report, ret_error);
        *ret_same = r >= 0;
        return r;
}

static void source_run_done(const NsscacheSource *source, void *run) {
        if (run && source->done)
                source->done(run);
}

/* Fetch what the source fetches first (the file sources, conditionally,
 * as always), then map only when the source answers otherwise than the
 * memo's run recorded, or the node's files differ. */
int nsscache_refresh_run(const NsscacheConf *c, const CacheOptions *opts, RefreshMemo **memo,
                         const sunkd_cancel *cancel, nsscache_rejects_fn on_rejects, void *userdata,
                         NsscacheFetchStats *ret_stats, CacheReport *ret_report, char **ret_error) {
        const NsscacheSource *source = nsscache_source(c);
        NsscacheFetchStats stats = {};
        void *run = NULL;
        bool same = false;
        int r = 0;

        if (source->fetch)
                r = source->fetch(c, opts, cancel, &run, &stats, ret_error);
        if (r >= 0 && memo && *memo) {
                r = refresh_replay(c, opts, *memo, source, run, cancel, on_rejects, userdata, &stats,
                                   ret_report, &same, ret_error);
                if (r >= 0 && same && source->save)
                        source->save(c, opts, run);
                if (r < 0 || same)
                        goto out;
        }
        if (memo)
                *memo = refresh_memo_free(*memo);
        if (r >= 0)
                r = refresh_full(c, opts, memo, source, run, cancel, on_rejects, userdata, &stats,
                                 ret_report, ret_error);
out:
        source_run_done(source, run);
        if (ret_stats)
                *ret_stats = stats;
        return r;
}
