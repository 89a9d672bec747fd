/* One refresh, start to end: what the nsscache.refresh job runs on its
 * worker thread, and what bench-nsscache measures.  Non-logging. */
#pragma once

#include <stdbool.h>

#include "cache/cache-publish.h"
#include "nsscache-conf.h"
#include "refresh-memo.h"
#include "scim/scim-fetch.h"
#include "mapper.h"

/** nsscache_refresh_options() - the cache writer's options for config @c. */
void nsscache_refresh_options(const NsscacheConf *c, bool force, CacheOptions *ret);

typedef void (*nsscache_rejects_fn)(void *userdata, const MapRejects *rejects);

/**
 * nsscache_refresh_run() - fetch and map with @c, then publish with @opts.
 * Each entry is rendered as it is accepted, so the run holds one page of
 * JSON and the text of the maps, not every entry's strings.
 * @memo (optional; *@memo NULL at first, then owned by the caller between
 * runs of one config): a run that changes nothing leaves a RefreshMemo
 * there, and the next run first replays its requests: when every answer
 * and every file it read is unchanged, it does only what a publish that
 * changes nothing does (timestamps), its stats say `replayed` and its
 * report and rejects are the memo's.  Otherwise the memo is dropped and
 * the run is done in full.  The http source fetches as always (with its
 * validators) and skips the mapping when every file is the one the memo's
 * run mapped.  A forced run is always done in full.
 * @on_rejects (optional) sees the rejects once the fetch has succeeded.
 * *ret_stats is filled on success and failure; *ret_report and *ret_error
 * as cache_publish() fills them.
 * Return: 0, or what scim_fetch_run() or cache_publish_formatted() returned,
 * or -ECANCELED.
 */
int nsscache_refresh_run(const NsscacheConf *c, const CacheOptions *opts, RefreshMemo **memo,
                         const sunkd_cancel *cancel, nsscache_rejects_fn on_rejects, void *userdata,
                         NsscacheFetchStats *ret_stats, CacheReport *ret_report, char **ret_error);
