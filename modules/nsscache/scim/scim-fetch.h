/* Fetching SCIM Users and Groups with libcurl, page by page.
 *
 * One ScimFetch holds one curl easy handle for a run, so every page reuses
 * the same connection.  Each page is parsed as it arrives and handed to a
 * callback; nothing but the current page's body is buffered.  Runs on a
 * worker thread; never logs; the token is never put anywhere but the
 * Authorization header and is wiped when the handle is freed.
 * The host must have called curl_global_init() once.
 */
#pragma once

#include <stdint.h>

#include "nsscache-conf.h"
#include "scim-map.h"
#include "scim-page.h"
#include "fetch-record.h"
#include "fetch-stats.h"
#include "sunkd/module.h"

#define SCIM_PAGE_BODY_MAX (64u * 1024 * 1024)
#define SCIM_PAGES_MAX 100000
#define SCIM_RESOURCES_MAX 5000000
#define SCIM_RETRY_DELAY_MAX_USEC (30 * SUNKD_USEC_PER_SEC)

typedef enum ScimEndpoint {
        SCIM_ENDPOINT_USERS,
        SCIM_ENDPOINT_GROUPS,
        _SCIM_ENDPOINT_MAX,
        SCIM_ENDPOINT_SERVICE_PROVIDER_CONFIG = _SCIM_ENDPOINT_MAX, /* not a listing */
} ScimEndpoint;

/* Server misbehaviour a run survived; the caller logs each once per run. */
typedef enum ScimFetchNote {
        SCIM_NOTE_REPEATED_PAGE = 1u << 0,  /* a page brought no id not seen before: stopped there */
        SCIM_NOTE_TOTAL_EXCEEDED = 1u << 1, /* more Resources came than the first totalResults */
        SCIM_NOTE_TOTAL_SHORT = 1u << 2, /* fewer came than totalResults (entries dropped between pages) */
        SCIM_NOTE_SPC_INVALID =
                1u << 3, /* /ServiceProviderConfig answered 200 with a body that does not parse */
        SCIM_NOTE_CURSOR_REQUIRED = 1u
                                    << 4, /* an index request was answered with a nextCursor: followed it */
} ScimFetchNote;

/** scim_fetch_note_to_string() - a sentence for one ScimFetchNote bit, or NULL. */
const char *scim_fetch_note_to_string(ScimFetchNote n);

typedef struct ScimFetch ScimFetch;

/* Called for every page; a negative return stops the fetch with that error. */
typedef int (*scim_fetch_page_fn)(void *userdata, const ScimPage *page);

/** scim_fetch_new() - a handle for @c (borrowed, must outlive it) and @token (copied). */
int scim_fetch_new(const NsscacheConf *c, const char *token, ScimFetch **ret);
ScimFetch *scim_fetch_free(ScimFetch *f);
static inline void scim_fetch_freep(ScimFetch **f) {
        if (*f)
                *f = scim_fetch_free(*f);
}

/**
 * scim_fetch_url() - "<base>/<endpoint>?<encoded parameters>" without the
 * pagination parameters.  Each k=v of scim_*_parameters is split at the
 * first '=' and both halves are percent-encoded.  The ServiceProviderConfig
 * URL has no parameters.
 */
int scim_fetch_url(const NsscacheConf *c, ScimEndpoint e, char **ret);

/**
 * scim_fetch_paging() - decide how this handle pages (the pagination
 * setting): with auto, one GET of /ServiceProviderConfig, and cursors if
 * it advertises pagination.cursor.  Any answer but a usable 200 (a 404
 * from a server that predates it, a transport error the listing will
 * report itself) means index pagination; but 401 and 403 fail at once,
 * as the listing would.
 * Return: 0, -EACCES, -ECANCELED, -ENOMEM; *ret_error says why.
 */
int scim_fetch_paging(ScimFetch *f, const sunkd_cancel *cancel, char **ret_error);

/**
 * scim_fetch_all() - fetch every page of @e and call @fn for each.
 * count=page_size is always sent.  By index: startIndex starts at 1 and
 * advances by the number of Resources actually received; the fetch ends at
 * totalResults, at an empty page, or at a page that brings no resource id
 * not seen before (a server ignoring startIndex).  By cursor (RFC 9865, or
 * with auto when the first index request is answered with a nextCursor):
 * the first request sends an empty cursor, each next one the nextCursor
 * received; the fetch ends at a page without nextCursor, at an empty page,
 * or at a page of repeats; totalResults may be absent, and then
 * max_total_results bounds the run.  A first totalResults above
 * max_total_results fails before the second request; the pages of a run are
 * capped from the first page's totalResults and size (plus a margin for
 * growth during the run) and by SCIM_PAGES_MAX.  Connection errors, timeouts, 429 and 5xx are retried
 * (scim_retry_max times, backoff scim_retry_delay * 2^n); other HTTP errors
 * and unparsable pages fail at once.
 * Return: 0; -EACCES (401/403), -ETIMEDOUT, -ECONNREFUSED, -EHOSTUNREACH,
 * -EBADMSG (bad page), -EFBIG (page body over the cap), -E2BIG (too many
 * pages or resources), -EPROTO (other HTTP status), -ECANCELED; *ret_error
 * says what happened (it never contains the token).
 */
int scim_fetch_all(ScimFetch *f, ScimEndpoint e, const sunkd_cancel *cancel, scim_fetch_page_fn fn,
                   void *userdata, char **ret_error);

const NsscacheFetchStats *scim_fetch_stats(const ScimFetch *f);

/**
 * scim_fetch_run() - one whole refresh: token, Users once (for passwd,
 * shadow and sshkey), Groups once (for group), mapped into @m as pages
 * arrive.  On success @m holds the maps and the rejects.
 * @record (optional, empty) gets every request whose answer the run used,
 * with the answer's digest, for scim_fetch_replay().
 * *ret_stats (optional) is filled on success and failure.
 */
int scim_fetch_run(const NsscacheConf *c, Mapper *m, FetchRecord *record, const sunkd_cancel *cancel,
                   NsscacheFetchStats *ret_stats, char **ret_error);

/**
 * scim_fetch_replay() - send the requests of @rec again, in order, and tell
 * whether each answer has the recorded status and digest (*ret_same).  It
 * stops at the first that does not: from there the run would have asked
 * for other pages.  Nothing is parsed.  A listing request is retried and
 * fails as scim_fetch_all() would, since the recorded run made the same
 * request at that point.  *ret_stats (optional) counts the requests, bytes
 * and time of the replay only.
 * Return: 0, or as scim_fetch_all().
 */
int scim_fetch_replay(const NsscacheConf *c, const FetchRecord *rec, const sunkd_cancel *cancel,
                      NsscacheFetchStats *ret_stats, bool *ret_same, char **ret_error);
