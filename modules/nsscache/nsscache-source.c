/* One row per source: scim, http and s3, each a name, a few facts and the
 * functions that differ.  The rows adapt each source's own functions
 * (scim-fetch.h, http-source.h, nsscache-conf-check.c) to one shape. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files/http-source.h"
#include "ldap/ldap-fetch.h"
#include "nsscache-conf-internal.h"
#include "nsscache-source.h"
#include "util/cleanup.h"
#include "util/macro.h"

/* ---- scim: fetched as it is mapped ------------------------------------------ */

static const char *scim_describe(const NsscacheConf *c) {
        return c->base_url ?: "";
}

static void scim_how(const NsscacheFetchStats *s, char *buf, size_t size) {
        (void) snprintf(buf, size, "paged by %s", s->cursor ? "cursor" : "index");
}

static int scim_same(const NsscacheConf *c, void *run, const FetchRecord *rec, const sunkd_cancel *cancel,
                     NsscacheFetchStats *stats, bool *ret_same, char **ret_error) {
        int r = scim_fetch_replay(c, rec, cancel, stats, ret_same, ret_error);

        if (r >= 0 && *ret_same && sunkd_cancelled(cancel))
                return -ECANCELED;
        return r;
}

static int scim_map(const NsscacheConf *c, void *run, Mapper *m, FetchRecord *rec,
                    const sunkd_cancel *cancel, NsscacheFetchStats *stats, char **ret_error) {
        NsscacheFetchStats before = *stats;
        int r;

        *stats = (NsscacheFetchStats){};
        r = scim_fetch_run(c, m, rec, cancel, stats, ret_error);
        /* the requests of a replay that found a change were sent too */
        stats->requests += before.requests;
        stats->retries += before.retries;
        stats->bytes += before.bytes;
        stats->duration_usec += before.duration_usec;
        return r;
}

/* ---- http and s3: files fetched whole, then mapped -------------------------- */

static const char *http_describe(const NsscacheConf *c) {
        if (c->manifest_url)
                return c->manifest_url;
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (c->map_enabled[t] && c->http_url[t])
                        return c->http_url[t];
        return "";
}

static const char *s3_describe(const NsscacheConf *c) {
        return c->manifest_url ?: c->s3_bucket ?: "";
}

static void files_how(const NsscacheFetchStats *s, char *buf, size_t size) {
        if (s->deltas + s->delta_misses > 0)
                (void) snprintf(buf, size, "%llu answered 304 Not Modified, %llu map(s) by delta%s",
                                (unsigned long long) s->not_modified, (unsigned long long) s->deltas,
                                s->delta_misses ? ", some deltas did not apply" : "");
        else
                (void) snprintf(buf, size, "%llu answered 304 Not Modified",
                                (unsigned long long) s->not_modified);
}

static int files_fetch(const NsscacheConf *c, const CacheOptions *opts, const sunkd_cancel *cancel,
                       void **ret_run, NsscacheFetchStats *stats, char **ret_error) {
        HttpSourceRun *run = calloc(1, sizeof(*run));

        *ret_run = run;
        if (!run)
                return -ENOMEM;
        return http_source_fetch(c, opts, cancel, run, stats, ret_error);
}

static int files_same(const NsscacheConf *c, void *run, const FetchRecord *rec, const sunkd_cancel *cancel,
                      NsscacheFetchStats *stats, bool *ret_same, char **ret_error) {
        *ret_same = http_source_same(c, run, rec);
        return 0;
}

static int files_map(const NsscacheConf *c, void *run, Mapper *m, FetchRecord *rec,
                     const sunkd_cancel *cancel, NsscacheFetchStats *stats, char **ret_error) {
        int r = http_source_map(c, run, m, ret_error);

        /* a record that could not be made shows nothing: no memo is left */
        if (r >= 0 && rec && http_source_record(c, run, rec) < 0)
                rec->broken = true;
        return r;
}

static void files_save(const NsscacheConf *c, const CacheOptions *opts, void *run) {
        http_source_save(c, opts, run);
}

static void files_done(void *run) {
        http_source_run_done(run);
        free(run);
}

/* ---- ldap: every map's search fetched whole, then mapped -------------------- */

static const char *ldap_describe(const NsscacheConf *c) {
        return c->ldap_uri ?: "";
}

static void ldap_how(const NsscacheFetchStats *s, char *buf, size_t size) {
        (void) snprintf(buf, size, "%llu entries in %llu page(s)", (unsigned long long) s->resources,
                        (unsigned long long) s->pages);
}

static int ldap_src_fetch(const NsscacheConf *c, const CacheOptions *opts, const sunkd_cancel *cancel,
                          void **ret_run, NsscacheFetchStats *stats, char **ret_error) {
        LdapRun *run = calloc(1, sizeof(*run));

        *ret_run = run;
        if (!run)
                return -ENOMEM;
        return ldap_fetch(c, cancel, run, stats, ret_error);
}

/* Each map's search results, digested under @key: what a record holds. */
static int ldap_digests(const NsscacheConf *c, const LdapRun *run, const uint8_t key[static DIGEST_KEY_LEN],
                        NssMapType t, uint8_t ret[static DIGEST_LEN]) {
        _cleanup_(digest_freep) Digest *d = NULL;
        int r = digest_new(key, &d);

        if (r >= 0)
                r = digest_begin(d);
        if (r >= 0)
                r = ldap_entries_digest(run->maps + t, d);
        /* the maps auto.master names: their bases and entries, in the order searched */
        for (size_t i = 0; t == NSS_MAP_AUTOMOUNT && r >= 0 && i < run->n_automount; i++) {
                uint64_t n = strlen(run->automount[i].dn);

                r = digest_feed(d, &n, sizeof(n));
                if (r >= 0)
                        r = digest_feed(d, run->automount[i].dn, n);
                if (r >= 0)
                        r = ldap_entries_digest(&run->automount[i].e, d);
        }
        if (r >= 0)
                r = digest_end(d, ret);
        return r;
}

static int ldap_src_same(const NsscacheConf *c, void *run, const FetchRecord *rec,
                         const sunkd_cancel *cancel, NsscacheFetchStats *stats, bool *ret_same,
                         char **ret_error) {
        size_t i = 0;

        *ret_same = false;
        if (rec->broken)
                return 0;
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                uint8_t d[DIGEST_LEN];

                if (!c->map_enabled[t])
                        continue;
                if (i >= rec->n || !streq(rec->requests[i].what, nss_map_to_string(t)) ||
                    ldap_digests(c, run, rec->key, t, d) < 0 ||
                    memcmp(d, rec->requests[i].digest, DIGEST_LEN))
                        return 0;
                i++;
        }
        *ret_same = i == rec->n;
        return 0;
}

static int ldap_src_map(const NsscacheConf *c, void *run, Mapper *m, FetchRecord *rec,
                        const sunkd_cancel *cancel, NsscacheFetchStats *stats, char **ret_error) {
        LdapRun *l = run;
        int r;

        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                uint8_t d[DIGEST_LEN];

                if (!c->map_enabled[t])
                        continue;
                r = t == NSS_MAP_AUTOMOUNT
                            ? ldap_map_automount(m, c, l->maps + t, l->automount, l->n_automount)
                            : ldap_map_add(m, c, t, l->maps + t);
                if (r < 0)
                        return r;
                if (sunkd_cancelled(cancel))
                        return -ECANCELED;
                /* a record that could not be made shows nothing: no memo is left */
                if (rec && (ldap_digests(c, l, rec->key, t, d) < 0 ||
                            fetch_record_add(rec, c->ldap_uri, nss_map_to_string(t), 0, true, d) < 0))
                        rec->broken = true;
                /* mapped and digested: the next map's entries need not meet these */
                ldap_entries_done(l->maps + t);
        }
        return 0;
}

static void ldap_src_done(void *run) {
        ldap_run_done(run);
        free(run);
}

static const NsscacheSource sources[] = {
        {
                .name = "scim",
                .token = true,
                .tls_unverified =
                        "the SCIM server is not authenticated and the bearer token goes to whoever answers",
                .check = nsscache_conf_check_scim,
                .describe = scim_describe,
                .how = scim_how,
                .same = scim_same,
                .map = scim_map,
        },
        {
                .name = "ldap",
                .tls_unverified =
                        "the LDAP server is not authenticated and the bind password goes to whoever "
                        "answers",
                .check = nsscache_conf_check_ldap,
                .describe = ldap_describe,
                .how = ldap_how,
                .fetch = ldap_src_fetch,
                .same = ldap_src_same,
                .map = ldap_src_map,
                .done = ldap_src_done,
        },
        {
                .name = "http",
                .files = true,
                .tls_unverified = "the server of the map files is not authenticated",
                .check = nsscache_conf_check_http,
                .describe = http_describe,
                .how = files_how,
                .fetch = files_fetch,
                .same = files_same,
                .map = files_map,
                .save = files_save,
                .done = files_done,
        },
        {
                .name = "s3",
                .files = true,
                .tls_unverified = "the server of the map files is not authenticated",
                .check = nsscache_conf_check_s3,
                .describe = s3_describe,
                .how = files_how,
                .fetch = files_fetch,
                .same = files_same,
                .map = files_map,
                .save = files_save,
                .done = files_done,
        },
};

const NsscacheSource *nsscache_source_find(const char *name) {
        for (size_t i = 0; name && i < ELEMENTSOF(sources); i++)
                if (streq(sources[i].name, name))
                        return sources + i;
        return NULL;
}

const NsscacheSource *nsscache_source(const NsscacheConf *c) {
        return nsscache_source_find(c->source) ?: sources;
}
