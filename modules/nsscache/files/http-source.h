/* nsscache's `http` source: each map's file from a web server, in the
 * files-cache format, through the same mapper as SCIM entries.
 *
 * A copy of each file a publish applied is kept in the state directory
 * (http-MAP: the URL, Last-Modified, ETag and the decoded body), so the
 * next run asks with If-Modified-Since and If-None-Match, and a 304 maps
 * that copy again: local accounts and incumbents are checked against the
 * node as it is now, not as it was.  Copies are written only after the
 * publish that used them succeeded.  Runs on a worker; non-logging.
 */
#pragma once

#include "cache/cache-publish.h"
#include "http-fetch.h"
#include "fleet/manifest.h"
#include "nsscache-conf.h"
#include "scim/scim-fetch.h"
#include "mapper.h"
#include "fetch-record.h"
#include "fetch-stats.h"

typedef struct HttpSourceRun {
        HttpBody fetched[_NSS_MAP_MAX]; /* the answers of this run (a 304 holds the copy it confirmed) */
        char *url[_NSS_MAP_MAX];        /* where each map came from */
        /* manifest_url: the manifest's answer, its generation and what it promised of each map */
        HttpBody manifest;
        uint64_t generation;
        bool want[_NSS_MAP_MAX];
        uint8_t sha256[_NSS_MAP_MAX][HTTP_SHA256_LEN];
        uint64_t size[_NSS_MAP_MAX];
        ManifestDelta delta[_NSS_MAP_MAX]; /* what the manifest offers instead of the whole map */
        char *delta_url[_NSS_MAP_MAX];
        /* automount: the maps auto.master names (fetched[] and url[] hold auto.master) */
        HttpBody *am_fetched;
        char **am_url;
        char **am_file; /* auto.NAME: the file it is written to, and its copy's name */
        size_t n_am;
} HttpSourceRun;

void http_source_run_done(HttpSourceRun *run);

/**
 * http_source_fetch() - fetch every enabled map into @run (passwd first).
 * *@stats gets the requests, 304s, bytes and time, and in source_modified
 * the oldest Last-Modified of the files used.
 * With manifest_url the manifest comes first: its signature must verify
 * with manifest_public_key, its generation must not be lower than the one
 * applied last (kept in the state directory as manifest-generation), and
 * each map is the file it names, of its size and SHA-256; a map whose
 * applied copy has that digest is not fetched at all, and one whose copy
 * is the map a delta the manifest names was made from gets only the delta
 * (the whole map when the result is not the map the manifest signs).
 * Return: 0, or what http_fetch_get() returned; a manifest that does not
 * verify -EPERM, an older generation -ESTALE.
 */
int http_source_fetch(const NsscacheConf *c, const CacheOptions *opts, const sunkd_cancel *cancel,
                      HttpSourceRun *run, NsscacheFetchStats *stats, char **ret_error);

/**
 * http_source_map() - map each file of @run into @m, passwd first (shadow
 * and sshkey entries are checked against it).
 * Return: 0, or what map_file_parse() returned: a map file whose last line
 * is cut short fails the run (-EBADMSG, *ret_error names its URL).
 */
int http_source_map(const NsscacheConf *c, const HttpSourceRun *run, Mapper *m, char **ret_error);

/**
 * http_source_record() - each map of @run (its URL and a digest of its
 * body under @rec's key) into @rec, for a memo (refresh-memo.h).
 * Return: 0 or -ENOMEM.
 */
int http_source_record(const NsscacheConf *c, const HttpSourceRun *run, FetchRecord *rec);

/** http_source_same() - whether @run holds what @rec recorded, map for map. */
bool http_source_same(const NsscacheConf *c, const HttpSourceRun *run, const FetchRecord *rec);

/**
 * http_source_save() - after a successful publish, keep what it applied as
 * the copies the next run asks about.  A copy that cannot be written is
 * removed (the next run then fetches that file in full).
 */
void http_source_save(const NsscacheConf *c, const CacheOptions *opts, const HttpSourceRun *run);
