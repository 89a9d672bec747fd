/* What the last refresh that changed nothing saw, so that the next one can
 * tell an unchanged directory without parsing and mapping it again.
 *
 * A refresh's maps follow from the server's answers, the files it reads
 * (the node's accounts, the published maps and their indexes, the files
 * their permissions are copied from) and the config.  After a run that
 * found every map byte-identical to the files while none of those files
 * changed under it, the memo keeps its requests with a digest of each
 * answer (FetchRecord), digests of those files under the record's key, and its report, rejects and
 * fetch statistics.  When the next run's answers and files match, running
 * it in full would find the maps unchanged once more.  A memo belongs to
 * one config: a reload starts without one.  Non-logging.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cache/cache-publish.h"
#include "nsscache-conf.h"
#include "scim/scim-fetch.h"
#include "mapper.h"
#include "fetch-record.h"

typedef struct RefreshMemo {
        FetchRecord record;
        uint8_t files_stat[DIGEST_LEN]; /* their stat(): a first look that reads nothing */
        uint8_t files[DIGEST_LEN];      /* their contents, type, mode and owner */
        CacheReport report;
        NsscacheFetchStats stats;
        MapRejects rejects; /* an owned copy */
} RefreshMemo;

RefreshMemo *refresh_memo_free(RefreshMemo *m);
static inline void refresh_memo_freep(RefreshMemo **m) {
        if (*m)
                *m = refresh_memo_free(*m);
}

/**
 * refresh_files_digest() - a digest under @key of the files a refresh with @c and
 * @opts reads besides the server's answers (cache_publish_inputs() and
 * the local account files).  With @contents: each file's contents, type,
 * mode and owner (of a file only permissions are copied from: type, mode
 * and owner); without: each file's stat() (device, inode, size, times,
 * mode, owner), which any write changes.  A missing file counts as missing.
 * Return: 0, or a negative errno (a file could not be read).
 */
int refresh_files_digest(const NsscacheConf *c, const CacheOptions *opts,
                         const uint8_t key[static DIGEST_KEY_LEN], bool contents,
                         uint8_t ret[static DIGEST_LEN]);

/** refresh_rejects_copy() - a deep copy of @from into @to.  Return: 0 or -ENOMEM. */
int refresh_rejects_copy(MapRejects *to, const MapRejects *from);

/** refresh_rejects_done() - free a copy refresh_rejects_copy() made; empty afterwards. */
void refresh_rejects_done(MapRejects *r);
