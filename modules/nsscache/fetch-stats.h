/* What one refresh's fetch did, whatever the source: the requests and
 * bytes, and what only some sources have to say (pages and cursors of a
 * SCIM listing, 304s, manifest and deltas of the file sources), for the
 * log, the status and the metrics. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct NsscacheFetchStats {
        uint64_t requests; /* HTTP requests sent, retries included */
        uint64_t retries;
        uint64_t pages;     /* pages accepted */
        uint64_t resources; /* Resources received */
        uint64_t bytes;     /* decoded body bytes */
        uint64_t duration_usec;
        uint64_t not_modified;   /* http source: files answered 304 */
        int64_t source_modified; /* http source: the oldest Last-Modified of the files used, -1: unknown */
        uint64_t manifest_generation; /* manifest_url: the generation of the manifest used, 0: none */
        uint64_t deltas;              /* manifest_url: maps brought up to date by a delta */
        uint64_t delta_misses;        /* and deltas that did not give the signed map (then fetched whole) */
        bool cursor;                  /* a listing was paged by cursor (RFC 9865) */
        bool replayed;  /* every answer was as in the last run: nothing was parsed (refresh-memo.h) */
        unsigned notes; /* ScimFetchNote bits (scim/scim-fetch.h) */
} NsscacheFetchStats;
