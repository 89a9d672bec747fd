/* The sources a refresh reads the maps from (the `source` key), one row
 * each: scim (a SCIM 2.0 directory, paged, mapped as its pages arrive), and
 * http and s3 (map files fetched whole with their validators, then mapped).
 * A row says how a refresh fetches, tells an unchanged source and maps
 * what it fetched, and what the configuration of that source needs; the
 * refresh, the checks and the module look the source up here and branch on
 * its name nowhere else.  Non-logging.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cache/cache-publish.h"
#include "fetch-record.h"
#include "fetch-stats.h"
#include "nsscache-conf.h"
#include "scim/scim-fetch.h"
#include "mapper.h"
#include "sunkd/module.h"

/* Which key a cross-key check failed on (nsscache-conf-internal.h). */
typedef struct ConfFault ConfFault;

typedef struct NsscacheSource {
        const char *name; /* the value of `source` */
        bool files;       /* the maps come as files over HTTP: validators, 304s, a manifest, deltas */
        bool token;       /* a run sends the bearer token: the configuration is refused without one */
        const char *tls_unverified; /* what tls_verify: false gives away, for the warning */

        /* The keys of this source and what it needs of the others (nsscache-conf-check.c). */
        int (*check)(NsscacheConf *c, ConfFault *f, char **ret_error);
        /* What the maps come from, for logs and status: the SCIM base URL, the manifest, a file. */
        const char *(*describe)(const NsscacheConf *c);
        /* How the last fetch went, for the log of a publish ("paged by cursor"). */
        void (*how)(const NsscacheFetchStats *s, char *buf, size_t size);

        /* fetch: what a run fetches before anything is decided, into *@ret_run
         * (set also on failure; released by done()).  NULL: the source is
         * fetched as it is mapped. */
        int (*fetch)(const NsscacheConf *c, const CacheOptions *opts, const sunkd_cancel *cancel,
                     void **ret_run, NsscacheFetchStats *stats, char **ret_error);
        /* same: whether the source answers now as @rec recorded (*@ret_same),
         * so the run need not map: the replay of a memo (refresh-memo.h). */
        int (*same)(const NsscacheConf *c, void *run, const FetchRecord *rec, const sunkd_cancel *cancel,
                    NsscacheFetchStats *stats, bool *ret_same, char **ret_error);
        /* map: the source's entries into @m; with @rec (optional, empty) what
         * they were made from, for same() on the next run. */
        int (*map)(const NsscacheConf *c, void *run, Mapper *m, FetchRecord *rec, const sunkd_cancel *cancel,
                   NsscacheFetchStats *stats, char **ret_error);
        /* save (optional): after a publish, what the run applied, for the next run's fetch. */
        void (*save)(const NsscacheConf *c, const CacheOptions *opts, void *run);
        void (*done)(void *run);
} NsscacheSource;

/** nsscache_source_find() - the source named @name, or NULL. */
const NsscacheSource *nsscache_source_find(const char *name);

/**
 * nsscache_source() - the source of @c.  A config nsscache_conf_finalize()
 * accepted names one; any other reads as scim's, the default.
 */
const NsscacheSource *nsscache_source(const NsscacheConf *c);
