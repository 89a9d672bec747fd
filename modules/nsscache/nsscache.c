/* nsscache: users, groups and SSH keys from SCIM 2.0 into libnss-cache maps.
 *
 * Two jobs.  nsscache.refresh: `prepare` (on the loop) takes a reference to
 * the current config and decides whether this run is forced; `work` (on a
 * worker thread) reads the token, fetches Users once and Groups once, maps
 * and validates them, and publishes all enabled maps or none; `done` (on
 * the loop) records the outcome in status and metrics and logs rejects.
 * The config is reference-counted so a reload during a run swaps the config
 * for the next run without pulling it from under the running one.
 *
 * nsscache.export, a producer's (export_dir): the published maps into
 * export_dir and, with export_s3_url, up to the bucket.  Triggered by each
 * refresh that published, and run every interval (at most
 * export_resign_interval) so that an unchanged export is signed again when
 * due.  Its own job, so that a full disk or a bucket that refuses costs the
 * nodes their update but never the producer's own maps: the refresh goes on
 * publishing while the export fails and backs off.
 *
 * Forcing one run past the guards (empty map, min_entries, max_shrink_pct):
 * create the file <state_dir>/nsscache/force-next-run, then
 * `sunkctl run nsscache.refresh`.  The file is removed after the run that
 * used it succeeded.  Whoever can write the state directory can therefore
 * empty passwd: the host refuses one another uid controls, and nsscache.conf
 * must pass trusted_path_check() too.
 *
 * The state directory also holds the publish journal: init finishes a
 * publish a crash interrupted before the first run, so READY never comes
 * with maps from two runs.  Each run finishes a pending one first; while
 * that fails (a rename refused) the run fetches nothing, since nothing it
 * fetched could be published.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "cache/cache-publish.h"
#include "fleet/map-export.h"
#include "fleet/s3-export.h"
#include "nsscache-conf.h"
#include "nsscache-refresh.h"
#include "nsscache-source.h"
#include "scim/scim-fetch.h"
#include "mapper.h"
#include "sunkd/module.h"
#include "util/cleanup.h"
#include "util/strv.h"

#define FORCE_FILE "force-next-run"
#define REJECTS_LOGGED_MAX 10
#define REFRESH_TIMEOUT_MIN_USEC (10 * 60 * SUNKD_USEC_PER_SEC)

typedef struct ConfRef {
        NsscacheConf *conf;
        unsigned n_ref;
        /* What the last run of this config that changed nothing saw (refresh-memo.h);
         * only the refresh's worker touches it, and runs of the job never overlap. */
        RefreshMemo *memo;
} ConfRef;

typedef struct Input {
        ConfRef *ref;
        bool force;
} Input;

typedef struct Result {
        NsscacheFetchStats stats;
        MapRejects rejects; /* counts only; records are logged from `records` */
        MapReject records[REJECTS_LOGGED_MAX];
        size_t n_records;
        CacheReport report;
        bool published;
        bool cancelled;
        bool recovered;     /* an interrupted publish was finished before the run */
        int recover_result; /* and how that went; its message in recover_error */
        char *recover_error;
        char *error;
} Result;

typedef struct ExportInput {
        ConfRef *ref;
        CacheReport report; /* the entries of the maps published last */
        bool skip;          /* nothing to export (yet): no export_dir, no publish */
} ExportInput;

typedef struct ExportResult {
        uint64_t generation; /* the manifest written, 0: none needed */
        uint64_t uploaded;   /* objects PUT to export_s3_url */
        bool upload_failed;  /* export_s3_url: error is the upload's */
        char *error;
} ExportResult;

typedef struct Metrics {
        sunkd_metric *entries, *rejected, *requests, *bytes, *duration, *last_success, *changed;
        sunkd_metric *export_last_success, *export_failures, *uploaded;
} Metrics;

typedef struct State {
        sunkd_ctx *ctx;
        ConfRef *conf;
        sunkd_job *job;
        sunkd_job *export_job; /* NULL until a config has export_dir */
        Metrics m;
        const char *state_dir;
        char *force_path;
        /* What status shows. */
        uint64_t last_success_usec;
        uint64_t last_run_usec;
        int last_result;
        char *last_error;
        size_t entries[_NSS_MAP_MAX];
        uint64_t rejects[_MAP_REJECT_MAX];
        NsscacheFetchStats last_stats;
        int64_t source_modified; /* http: the oldest Last-Modified of the files published last, -1: unknown
                                  */
        uint64_t export_generation; /* the last manifest exported */
        uint64_t export_runs;
        uint64_t export_last_success_usec;
        int export_last_result;
        char *export_last_error;
        uint64_t manifest_generation; /* manifest_url: the generation published last */
        uint64_t runs;
        char **logged_rejects; /* the last run's rejects, already logged */
} State;

static ConfRef *conf_ref_unref(ConfRef *r) {
        if (r && --r->n_ref == 0) {
                refresh_memo_free(r->memo);
                nsscache_conf_free(r->conf);
                free(r);
        }
        return NULL;
}

static int conf_ref_new(NsscacheConf *conf, ConfRef **ret) {
        ConfRef *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        r->conf = conf;
        r->n_ref = 1;
        *ret = r;
        return 0;
}

static uint64_t realtime_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * SUNKD_USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

/* Parses the section; on failure logs the located error and returns it. */
static int load_conf(sunkd_ctx *c, const sunkd_cfg *cfg, NsscacheConf **ret) {
        _cleanup_free_ char *error = NULL;
        NsscacheConf *conf = NULL;
        int r;

        r = nsscache_conf_new(&conf);
        if (r < 0)
                return sunkd_log_error_errno(c, r, "Failed to allocate the configuration: %m");
        r = nsscache_conf_apply_cfg(conf, c->api, cfg, &error);
        if (r < 0) {
                nsscache_conf_free(conf);
                return sunkd_log_error_errno(c, r, "%s", error ?: "invalid configuration");
        }
        if (!conf->tls_verify && conf->ldap_tls_require_cert)
                sunkd_log_warning(
                        c, "TLS certificate verification is disabled (ldap_tls_require_cert: %s): %s.",
                        conf->ldap_tls_require_cert, nsscache_source(conf)->tls_unverified);
        else if (!conf->tls_verify)
                sunkd_log_warning(c, "TLS certificate verification is disabled (tls_verify: false): %s.",
                                  nsscache_source(conf)->tls_unverified);
        *ret = conf;
        return 0;
}

static int refresh_prepare(void *state, void **ret_input) {
        State *s = state;
        Input *in = calloc(1, sizeof(*in));

        if (!in)
                return -ENOMEM;
        in->ref = s->conf;
        in->ref->n_ref++;
        in->force = access(s->force_path, F_OK) == 0;
        *ret_input = in;
        return 0;
}

static void copy_rejects(void *userdata, const MapRejects *rj) {
        Result *res = userdata;

        memcpy(res->rejects.count, rj->count, sizeof(rj->count));
        res->rejects.total = rj->total;
        for (size_t i = 0; i < rj->n_records && res->n_records < REJECTS_LOGGED_MAX; i++) {
                res->records[res->n_records] = rj->records[i];
                res->records[res->n_records].name = rj->records[i].name ? strdup(rj->records[i].name) : NULL;
                res->n_records++;
        }
}

/* Finishing an interrupted publish failed and its journal stays (a
 * malformed one is discarded, and the run goes on). */
static bool recovery_blocked(const Result *res) {
        return res->recover_result < 0 && res->recover_result != -EBADMSG;
}

static int refresh_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        Input *in = input;
        const NsscacheConf *c = in->ref->conf;
        CacheOptions opts;
        Result *res;
        int r;

        res = calloc(1, sizeof(*res));
        if (!res)
                return -ENOMEM;
        *ret_result = res;

        nsscache_refresh_options(c, in->force, &opts);
        opts.state_dir = ((State *) state)->state_dir;
        /* First, so lookups see one run's maps even when this fetch fails.  While
         * it cannot be finished nothing can be published: no fetch for nothing. */
        res->recover_result = cache_publish_recover(opts.state_dir, &res->recovered, &res->recover_error);
        if (recovery_blocked(res)) {
                res->error = res->recover_error ? strdup(res->recover_error) : NULL;
                return res->recover_result;
        }
        r = nsscache_refresh_run(c, &opts, &in->ref->memo, cancel, copy_rejects, res, &res->stats,
                                 &res->report, &res->error);
        /* The run's pages and maps are freed: give the heap back to the system. */
        (void) malloc_trim(0);
        if (r >= 0)
                res->published = true;
        res->cancelled = r == -ECANCELED && sunkd_cancelled(cancel);
        return r;
}

static void result_free(Result *res) {
        if (!res)
                return;
        for (size_t i = 0; i < res->n_records; i++)
                free(res->records[i].name);
        free(res->recover_error);
        free(res->error);
        free(res);
}

static void log_reject(State *s, const MapReject *rj) {
        const char *map = nss_map_to_string(rj->map) ?: "?";

        if (rj->id >= 0)
                sunkd_log_warning(s->ctx, "Rejected %s entry '%s' (id %lld): %s.", map,
                                  rj->name ?: "(no name)", (long long) rj->id,
                                  map_reject_reason_to_string(rj->reason));
        else
                sunkd_log_warning(s->ctx, "Rejected %s entry '%s': %s.", map, rj->name ?: "(no name)",
                                  map_reject_reason_to_string(rj->reason));
}

/* Each rejected entry is logged once: a directory with a bad entry would
 * otherwise repeat the same warning every interval.  An entry rejected
 * again in the next run stays quiet; one that is fixed and breaks again is
 * logged again. */
static void log_rejects(State *s, const Result *res) {
        _cleanup_strv_free_ char **seen = NULL;
        size_t repeated = 0;

        for (size_t i = 0; i < res->n_records; i++) {
                const MapReject *rj = &res->records[i];
                char *key = NULL;

                if (asprintf(&key, "%d/%s/%lld/%d", (int) rj->map, rj->name ?: "", (long long) rj->id,
                             (int) rj->reason) < 0 ||
                    strv_push(&seen, key) < 0) {
                        log_reject(s, rj);
                        continue;
                }
                if (strv_contains(s->logged_rejects, key))
                        repeated++;
                else
                        log_reject(s, rj);
        }
        if (repeated > 0)
                sunkd_log_info(
                        s->ctx,
                        "%zu entries rejected as in the previous run (logged then; see sunkctl status).",
                        repeated);
        if (res->rejects.total > res->n_records)
                sunkd_log_warning(s->ctx, "... and %llu more rejected entries (see sunkctl status).",
                                  (unsigned long long) (res->rejects.total - res->n_records));
        strv_free(s->logged_rejects);
        s->logged_rejects = TAKE_PTR(seen);
}

static void update_metrics(State *s, const Result *res) {
        const sunkd_host_api *api = s->ctx->api;

        (void) api->metric_add_value(s->m.requests, (double) res->stats.requests, NULL);
        (void) api->metric_add_value(s->m.bytes, (double) res->stats.bytes, NULL);
        (void) api->metric_set(s->m.duration, (double) res->stats.duration_usec / 1e6, NULL);
        for (int i = 0; i < _MAP_REJECT_MAX; i++)
                if (res->rejects.count[i] > 0)
                        (void) api->metric_add_value(s->m.rejected, (double) res->rejects.count[i],
                                                     (const char *[]){ map_reject_reason_to_string(i) });
        if (!res->published)
                return;
        (void) api->metric_set(s->m.last_success, (double) realtime_usec() / 1e6, NULL);
        for (int t = 0; t < _NSS_MAP_MAX; t++) {
                if (!res->report.map[t].enabled)
                        continue;
                (void) api->metric_set(s->m.entries, (double) res->report.map[t].entries,
                                       (const char *[]){ nss_map_to_string(t) });
                if (res->report.map[t].changed)
                        (void) api->metric_add_value(s->m.changed, 1,
                                                     (const char *[]){ nss_map_to_string(t) });
        }
}

static void record_outcome(State *s, int r, const Input *in, const Result *res) {
        s->runs++;
        s->last_run_usec = realtime_usec();
        s->last_result = r;
        free(s->last_error);
        s->last_error = res && res->error ? strdup(res->error) : r < 0 ? strdup(strerror(-r)) : NULL;
        if (!res)
                return;
        s->last_stats = res->stats;
        memcpy(s->rejects, res->rejects.count, sizeof(s->rejects));
        if (!res->published)
                return;
        s->last_success_usec = s->last_run_usec;
        s->source_modified = res->stats.source_modified;
        s->manifest_generation = res->stats.manifest_generation;
        for (int t = 0; t < _NSS_MAP_MAX; t++)
                s->entries[t] = res->report.map[t].entries;
        if (in->force && unlink(s->force_path) == 0)
                sunkd_log_notice(s->ctx, "Forced run done; removed '%s'.", s->force_path);
}

/* Other modules (authkeys) learn where the sshkey map is, and when it was
 * last known good, from the fact nsscache.sshkey_cache: {"path": P} at
 * start and after each reload, with "updated_usec" (CLOCK_REALTIME) after
 * each successful run.  Withdrawn when the sshkey map is not enabled. */
static void publish_sshkey_fact(State *s) {
        const NsscacheConf *conf = s->conf->conf;
        _cleanup_free_ char *path = NULL;
        CacheOptions opts;
        json_object *v = NULL;
        int r;

        if (conf->map_enabled[NSS_MAP_SSHKEY]) {
                nsscache_refresh_options(conf, false, &opts);
                path = cache_publish_path(&opts, NSS_MAP_SSHKEY);
                v = path ? json_object_new_object() : NULL;
                if (!v || json_object_object_add(v, "path", json_object_new_string(path)) < 0 ||
                    (s->last_success_usec &&
                     json_object_object_add(v, "updated_usec",
                                            json_object_new_int64((int64_t) s->last_success_usec)) < 0)) {
                        json_object_put(v);
                        sunkd_log_error_errno(s->ctx, -ENOMEM,
                                              "Failed to publish the sshkey cache's path: %m");
                        return;
                }
        }
        r = s->ctx->api->fact_publish(s->ctx, "nsscache.sshkey_cache", v);
        if (r < 0)
                sunkd_log_warning_errno(s->ctx, r, "Failed to publish the sshkey cache's path: %m");
}

static void log_recovery(State *s, const Result *res) {
        const char *dir = s->conf->conf->files_dir;

        if (res->recover_result == -EBADMSG)
                sunkd_log_warning(s->ctx, "%s.", res->recover_error ?: "malformed publish journal");
        else if (res->recover_result < 0)
                sunkd_log_error_errno(
                        s->ctx, res->recover_result,
                        "Failed to finish the interrupted publish into '%s'; until it is, the maps "
                        "may be from two runs and nothing new is fetched: %s",
                        dir, res->recover_error ?: strerror(-res->recover_result));
        else if (res->recovered)
                sunkd_log_notice(s->ctx, "Finished the publish into '%s' that was interrupted.", dir);
}

static int refresh_done(void *state, int r, void *input, void *result) {
        State *s = state;
        Input *in = input;
        Result *res = result;

        if (res)
                log_recovery(s, res);
        if (res)
                log_rejects(s, res);
        for (unsigned bit = 1; res && bit; bit <<= 1)
                if (res->stats.notes & bit)
                        sunkd_log_warning(s->ctx, "SCIM server: %s.", scim_fetch_note_to_string(bit));
        if (r >= 0 && res && res->published) {
                char how[128];

                nsscache_source(in->ref->conf)->how(&res->stats, how, sizeof(how));
                sunkd_log_info(
                        s->ctx,
                        "Refreshed: %zu users, %zu groups, %zu sshkey entries; %zu map(s) changed, "
                        "%llu requests (%s) in %llu ms%s.",
                        res->report.map[NSS_MAP_PASSWD].entries, res->report.map[NSS_MAP_GROUP].entries,
                        res->report.map[NSS_MAP_SSHKEY].entries, res->report.n_changed,
                        (unsigned long long) res->stats.requests, how,
                        (unsigned long long) res->stats.duration_usec / 1000,
                        res->stats.replayed ? "; every answer and file as in the last run, not mapped again"
                                            : "");
                if (res->report.stale_removed > 0)
                        sunkd_log_notice(s->ctx,
                                         "Removed %u temporary file(s) an interrupted publish left in '%s'.",
                                         res->report.stale_removed, s->conf->conf->files_dir);
                if (res->report.timestamp_error < 0)
                        sunkd_log_warning_errno(s->ctx, res->report.timestamp_error,
                                                "Failed to write the timestamp files, ignoring: %m");
        } else if (r == -ECANCELED && (!res || res->cancelled))
                sunkd_log_notice(s->ctx, "Refresh cancelled; the existing caches are unchanged.");
        else if (r == CACHE_PUBLISH_REFUSED)
                sunkd_log_error(s->ctx,
                                "Refusing to publish: %s. The existing caches are unchanged; to accept "
                                "this once, create '%s' and run 'sunkctl run nsscache.refresh'.",
                                res && res->error ? res->error : "guard", s->force_path);
        else if (r < 0 && res && recovery_blocked(res))
                ; /* log_recovery() said why */
        else if (r < 0 && res && res->report.journal_pending)
                sunkd_log_error_errno(s->ctx, r,
                                      "Refresh failed while putting the maps in place; the next run "
                                      "or start finishes it from the journal: %s",
                                      res->error ?: strerror(-r));
        else if (r < 0)
                sunkd_log_error_errno(s->ctx, r, "Refresh failed, the existing caches are unchanged: %s",
                                      res && res->error ? res->error : strerror(-r));
        if (res && res->error && r < 0)
                (void) s->ctx->api->job_set_message(s->job, res->error);
        if (res)
                update_metrics(s, res);
        record_outcome(s, r, in, res);
        if (r >= 0 && res && res->published)
                publish_sshkey_fact(s);
        if (r >= 0 && res && res->published && s->export_job && s->conf->conf->export_dir) {
                int k = s->ctx->api->job_trigger(s->export_job, "a refresh that published");
                if (k < 0)
                        sunkd_log_warning_errno(s->ctx, k,
                                                "Failed to start the export now, it runs when due: %m");
        }
        result_free(res);
        if (in)
                conf_ref_unref(in->ref);
        free(in);
        return r;
}

/* A refresh may publish while an export reads the maps: the export then
 * says -EAGAIN before it signs, and is tried again on the maps as they are
 * now, so a manifest never names maps of two runs. */
#define EXPORT_TRIES 3

static int export_prepare(void *state, void **ret_input) {
        State *s = state;
        ExportInput *in = calloc(1, sizeof(*in));

        if (!in)
                return -ENOMEM;
        in->ref = s->conf;
        in->ref->n_ref++;
        /* the maps on disk are exported only once a refresh of this process
         * published them: their entries go into the manifest */
        in->skip = !s->conf->conf->export_dir || !s->last_success_usec;
        for (int t = 0; t < _NSS_MAP_MAX; t++)
                in->report.map[t].entries = s->entries[t];
        *ret_input = in;
        return 0;
}

static int export_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        ExportInput *in = input;
        const NsscacheConf *c = in->ref->conf;
        CacheOptions opts;
        ExportResult *res;
        int r = -EAGAIN;

        res = calloc(1, sizeof(*res));
        if (!res)
                return -ENOMEM;
        *ret_result = res;
        if (in->skip)
                return 0;
        nsscache_refresh_options(c, false, &opts);
        opts.state_dir = ((State *) state)->state_dir;
        for (unsigned i = 0; i < EXPORT_TRIES && r == -EAGAIN && !sunkd_cancelled(cancel); i++) {
                res->error = mfree(res->error);
                r = map_export(c, &opts, &in->report, &res->generation, &res->error);
        }
        if (r < 0)
                return r;
        r = s3_export(c, &opts, cancel, &res->uploaded, &res->error);
        res->upload_failed = r < 0;
        return r;
}

static void export_metrics(State *s, int r, const ExportResult *res) {
        const sunkd_host_api *api = s->ctx->api;

        if (res && res->uploaded > 0)
                (void) api->metric_add_value(s->m.uploaded, (double) res->uploaded, NULL);
        if (r < 0)
                (void) api->metric_add_value(s->m.export_failures, 1, NULL);
        else
                (void) api->metric_set(s->m.export_last_success, (double) realtime_usec() / 1e6, NULL);
}

/* The maps were published by the refresh either way: a failed export fails
 * this job alone, which backs off and tries again. */
static void export_log(State *s, int r, const ExportInput *in, const ExportResult *res) {
        const NsscacheConf *c = in->ref->conf;

        if (r < 0) {
                sunkd_log_error_errno(s->ctx, r,
                                      "Published, but failed to export the maps to '%s'; the nodes keep "
                                      "the previous export until a retry succeeds: %s",
                                      res && res->upload_failed ? c->export_s3_url : c->export_dir,
                                      res && res->error ? res->error : strerror(-r));
                return;
        }
        if (res->generation > 0)
                sunkd_log_info(s->ctx, "Exported the maps to '%s' as generation %llu.", c->export_dir,
                               (unsigned long long) res->generation);
        if (res->uploaded > 0)
                sunkd_log_info(s->ctx, "Uploaded %llu objects of export_dir to '%s', the manifest last.",
                               (unsigned long long) res->uploaded, c->export_s3_url);
}

static int export_done(void *state, int r, void *input, void *result) {
        State *s = state;
        ExportInput *in = input;
        ExportResult *res = result;

        if (in && in->skip && r >= 0) {
                (void) s->ctx->api->job_set_message(
                        s->export_job, in->ref->conf->export_dir
                                               ? "nothing to export: no refresh has published yet"
                                               : "nothing to export: no export_dir");
                goto out;
        }
        if (in)
                export_log(s, r, in, res);
        if (r < 0 && res && res->error)
                (void) s->ctx->api->job_set_message(s->export_job, res->error);
        export_metrics(s, r, res);
        s->export_runs++;
        s->export_last_result = r;
        free(s->export_last_error);
        s->export_last_error = r >= 0 ? NULL : strdup(res && res->error ? res->error : strerror(-r));
        if (r >= 0) {
                s->export_last_success_usec = realtime_usec();
                if (res->generation > 0)
                        s->export_generation = res->generation;
        }
out:
        if (res)
                free(res->error);
        free(res);
        if (in)
                conf_ref_unref(in->ref);
        free(in);
        return r;
}

static int add_metrics(State *s) {
        const sunkd_metric_def defs[] = {
                { { sizeof(sunkd_metric_spec),
                    "nsscache_entries",
                    "Entries in each published map.",
                    SUNKD_METRIC_GAUGE,
                    { "map" } },
                  &s->m.entries },
                { { sizeof(sunkd_metric_spec),
                    "nsscache_rejected_total",
                    "Entries (SCIM resources or map file lines) rejected by validation, by reason.",
                    SUNKD_METRIC_COUNTER,
                    { "reason" } },
                  &s->m.rejected },
                { { sizeof(sunkd_metric_spec),
                    "nsscache_requests_total",
                    "HTTP requests sent to the SCIM server or for the map files.",
                    SUNKD_METRIC_COUNTER,
                    { NULL } },
                  &s->m.requests },
                { { sizeof(sunkd_metric_spec),
                    "nsscache_bytes_total",
                    "Response body bytes received from the SCIM server or for the map files.",
                    SUNKD_METRIC_COUNTER,
                    { NULL } },
                  &s->m.bytes },
                { { sizeof(sunkd_metric_spec),
                    "nsscache_fetch_duration_seconds",
                    "Duration of the last fetch.",
                    SUNKD_METRIC_GAUGE,
                    { NULL } },
                  &s->m.duration },
                { { sizeof(sunkd_metric_spec),
                    "nsscache_last_success_timestamp_seconds",
                    "When the maps were last published.",
                    SUNKD_METRIC_GAUGE,
                    { NULL } },
                  &s->m.last_success },
                { { sizeof(sunkd_metric_spec),
                    "nsscache_map_changes_total",
                    "Times a map's content changed.",
                    SUNKD_METRIC_COUNTER,
                    { "map" } },
                  &s->m.changed },
                { { sizeof(sunkd_metric_spec),
                    "nsscache_export_last_success_timestamp_seconds",
                    "When the export last succeeded.",
                    SUNKD_METRIC_GAUGE,
                    { NULL } },
                  &s->m.export_last_success },
                { { sizeof(sunkd_metric_spec),
                    "nsscache_export_failures_total",
                    "Export runs that failed.",
                    SUNKD_METRIC_COUNTER,
                    { NULL } },
                  &s->m.export_failures },
                { { sizeof(sunkd_metric_spec),
                    "nsscache_uploaded_objects_total",
                    "Objects uploaded to export_s3_url.",
                    SUNKD_METRIC_COUNTER,
                    { NULL } },
                  &s->m.uploaded },
        };

        return sunkd_metrics_add(s->ctx, defs, sizeof(defs) / sizeof(defs[0]));
}

static uint64_t job_timeout(const NsscacheConf *c) {
        uint64_t t = c->timeout_usec * 10;
        return t > REFRESH_TIMEOUT_MIN_USEC ? t : REFRESH_TIMEOUT_MIN_USEC;
}

static void state_free(State *s) {
        if (!s)
                return;
        conf_ref_unref(s->conf);
        free(s->force_path);
        free(s->last_error);
        free(s->export_last_error);
        strv_free(s->logged_rejects);
        free(s);
}

/* The refresh job's timing follows the config: built the same way at init and reload. */
static sunkd_job_spec refresh_spec(const NsscacheConf *conf) {
        return (sunkd_job_spec){
                .size = sizeof(sunkd_job_spec),
                .name = "nsscache.refresh",
                .interval_usec = conf->interval_usec,
                .splay_usec = conf->splay_usec,
                .jitter_pct = 5,
                .backoff_min_usec = 10 * SUNKD_USEC_PER_SEC,
                .backoff_max_usec = conf->interval_usec,
                .timeout_usec = job_timeout(conf),
                .flags = SUNKD_JOB_READY_GATE,
                .prepare = refresh_prepare,
                .work = refresh_work,
                .done = refresh_done,
        };
}

/* The export job checks every interval whether the manifest is due to be
 * signed again (map_export()), and a refresh that published starts it. */
static sunkd_job_spec export_spec(const NsscacheConf *conf) {
        uint64_t every = conf->interval_usec;

        if (conf->export_resign_usec > 0 && conf->export_resign_usec < every)
                every = conf->export_resign_usec;
        return (sunkd_job_spec){
                .size = sizeof(sunkd_job_spec),
                .name = "nsscache.export",
                .interval_usec = every,
                .splay_usec = conf->splay_usec,
                .jitter_pct = 5,
                .backoff_min_usec = 10 * SUNKD_USEC_PER_SEC,
                .backoff_max_usec = every,
                .timeout_usec = job_timeout(conf),
                .prepare = export_prepare,
                .work = export_work,
                .done = export_done,
        };
}

/* The export job comes with the first config that has export_dir; a later
 * one without it keeps the job, whose runs then export nothing. */
static int export_job_sync(State *s, const NsscacheConf *conf) {
        sunkd_job_spec spec = export_spec(conf);

        if (s->export_job)
                return s->ctx->api->job_update(s->export_job, &spec);
        if (!conf->export_dir)
                return 0;
        return s->ctx->api->job_add(s->ctx, &spec, &s->export_job);
}

/* Returns 1 when a crash interrupted a publish: finishing it renames and
 * drains, so it is the refresh's work, on a worker, started at once rather
 * than after the splay, so that lookups soon see one run's maps again.  The
 * host has checked the state directory's owner and mode. */
static int prepare_state_dir(sunkd_ctx *c) {
        const char *dir = c->api->state_dir(c);
        int r;

        r = cache_publish_pending(dir);
        if (r < 0)
                return sunkd_log_error_errno(c, r, "Failed to look for a publish journal in '%s': %m", dir);
        return r;
}

static int nsscache_setup(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state) {
        NsscacheConf *conf = NULL;
        State *s;
        int r, pending;

        r = load_conf(c, cfg, &conf);
        if (r < 0)
                return r;
        pending = prepare_state_dir(c);
        if (pending < 0) {
                nsscache_conf_free(conf);
                return pending;
        }
        s = calloc(1, sizeof(*s));
        if (!s || conf_ref_new(conf, &s->conf) < 0 ||
            asprintf(&s->force_path, "%s/%s", c->api->state_dir(c), FORCE_FILE) < 0) {
                if (s && !s->conf)
                        nsscache_conf_free(conf);
                state_free(s);
                return -ENOMEM;
        }
        s->ctx = c;
        s->state_dir = c->api->state_dir(c);
        s->source_modified = -1;

        sunkd_job_spec spec = refresh_spec(conf);
        r = add_metrics(s);
        if (r >= 0)
                r = c->api->job_add(c, &spec, &s->job);
        if (r >= 0)
                r = export_job_sync(s, conf);
        if (r < 0) {
                state_free(s);
                return sunkd_log_error_errno(c, r, "Failed to set up the refresh job: %m");
        }
        publish_sshkey_fact(s);
        sunkd_log_info(c, "Refreshing from '%s' every %llu s into '%s'.",
                       nsscache_source(conf)->describe(conf),
                       (unsigned long long) (conf->interval_usec / SUNKD_USEC_PER_SEC), conf->files_dir);
        if (pending > 0) {
                sunkd_log_notice(c, "A publish into '%s' was interrupted; refreshing now to finish it.",
                                 conf->files_dir);
                r = c->api->job_trigger(s->job, "finish an interrupted publish");
                if (r < 0)
                        sunkd_log_warning_errno(c, r,
                                                "Failed to start the refresh now, it runs when due: %m");
        }
        *ret_state = s;
        return 0;
}

/* libcurl is this module's to initialise: curl_global_init() is thread-safe
 * since 7.84 and counts its callers, so the core never needs to know. */
static int nsscache_init(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state) {
        int r;

        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return sunkd_log_error_errno(c, -ELIBBAD, "Failed to initialise libcurl.");
        r = nsscache_setup(c, cfg, ret_state);
        if (r < 0)
                curl_global_cleanup();
        return r;
}

static int nsscache_check(sunkd_ctx *c, const sunkd_cfg *cfg) {
        NsscacheConf *conf = NULL;
        int r = load_conf(c, cfg, &conf);

        nsscache_conf_free(conf);
        return r;
}

static int nsscache_reload(void *state, const sunkd_cfg *cfg) {
        State *s = state;
        NsscacheConf *conf = NULL;
        ConfRef *ref;
        int r;

        r = load_conf(s->ctx, cfg, &conf);
        if (r < 0)
                return r;
        if (conf_ref_new(conf, &ref) < 0) {
                nsscache_conf_free(conf);
                return -ENOMEM;
        }
        conf_ref_unref(s->conf);
        s->conf = ref;
        publish_sshkey_fact(s);
        sunkd_job_spec spec = refresh_spec(conf);
        r = s->ctx->api->job_update(s->job, &spec);
        if (r >= 0)
                r = export_job_sync(s, conf);
        return r;
}

static void nsscache_fini(void *state) {
        state_free(state);
        curl_global_cleanup();
}

static int nsscache_status(void *state, struct json_object *out) {
        State *s = state;
        json_object *entries = json_object_new_object(), *rejects = json_object_new_object();

        if (!entries || !rejects) {
                json_object_put(entries);
                json_object_put(rejects);
                return -ENOMEM;
        }
        json_object_object_add(
                out, "source",
                json_object_new_string(nsscache_source(s->conf->conf)->describe(s->conf->conf)));
        json_object_object_add(out, "runs", json_object_new_int64((int64_t) s->runs));
        if (s->last_success_usec) {
                uint64_t now = realtime_usec();

                json_object_object_add(out, "last_success_usec",
                                       json_object_new_int64((int64_t) s->last_success_usec));
                /* how old the maps are when the source has been failing since */
                json_object_object_add(
                        out, "age_sec",
                        json_object_new_int64(
                                (int64_t) ((now > s->last_success_usec ? now - s->last_success_usec : 0) /
                                           SUNKD_USEC_PER_SEC)));
        }
        if (s->runs)
                json_object_object_add(out, "last_result",
                                       json_object_new_string(s->last_result >= 0 ? "success" : "failure"));
        if (s->last_error)
                json_object_object_add(out, "last_error", json_object_new_string(s->last_error));
        for (int t = 0; t < _NSS_MAP_MAX; t++)
                if (s->conf->conf->map_enabled[t])
                        json_object_object_add(entries, nss_map_to_string(t),
                                               json_object_new_int64((int64_t) s->entries[t]));
        json_object_object_add(out, "entries", entries);
        for (int i = 0; i < _MAP_REJECT_MAX; i++)
                if (s->rejects[i])
                        json_object_object_add(rejects, map_reject_reason_to_string(i),
                                               json_object_new_int64((int64_t) s->rejects[i]));
        json_object_object_add(out, "rejected", rejects);
        json_object_object_add(out, "requests", json_object_new_int64((int64_t) s->last_stats.requests));
        json_object_object_add(out, "pagination",
                               json_object_new_string(s->last_stats.cursor ? "cursor" : "index"));
        json_object_object_add(out, "bytes", json_object_new_int64((int64_t) s->last_stats.bytes));
        json_object_object_add(out, "duration_usec",
                               json_object_new_int64((int64_t) s->last_stats.duration_usec));
        json_object_object_add(out, "replayed", json_object_new_boolean(s->last_stats.replayed));
        if (s->export_generation > 0)
                json_object_object_add(out, "export_generation",
                                       json_object_new_int64((int64_t) s->export_generation));
        if (s->export_runs) {
                json_object_object_add(out, "export_runs", json_object_new_int64((int64_t) s->export_runs));
                json_object_object_add(
                        out, "export_last_result",
                        json_object_new_string(s->export_last_result >= 0 ? "success" : "failure"));
        }
        if (s->export_last_success_usec)
                json_object_object_add(out, "export_last_success_usec",
                                       json_object_new_int64((int64_t) s->export_last_success_usec));
        if (s->export_last_error)
                json_object_object_add(out, "export_last_error",
                                       json_object_new_string(s->export_last_error));
        if (nsscache_source(s->conf->conf)->files && s->runs) {
                json_object_object_add(out, "not_modified",
                                       json_object_new_int64((int64_t) s->last_stats.not_modified));
                if (s->source_modified >= 0)
                        json_object_object_add(out, "source_modified",
                                               json_object_new_int64(s->source_modified));
                if (s->manifest_generation > 0) {
                        json_object_object_add(out, "manifest_generation",
                                               json_object_new_int64((int64_t) s->manifest_generation));
                        json_object_object_add(out, "deltas",
                                               json_object_new_int64((int64_t) s->last_stats.deltas));
                        json_object_object_add(out, "delta_misses",
                                               json_object_new_int64((int64_t) s->last_stats.delta_misses));
                }
        }
        return 0;
}

SUNKD_MODULE_DEFINE(.name = "nsscache", .version = PACKAGE_VERSION, .init = nsscache_init,
                    .check = nsscache_check, .reload = nsscache_reload, .fini = nsscache_fini,
                    .status = nsscache_status);
