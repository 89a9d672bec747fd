/* What a refresh asked its source and a digest of each answer it used:
 * the SCIM server's pages, or the http and s3 sources' files.
 *
 * Each request of a run follows from the answers before it (the next
 * startIndex or cursor comes from the page just read), and the maps follow
 * from the answers and the files the run read.  So the same requests,
 * answered in the same order with bodies of the same digest (digest.h,
 * under the record's own key), show the same directory as the recorded
 * run: an unchanged directory can be told without parsing it
 * (scim_fetch_replay()).  Non-logging.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "digest.h"

/* What a record may hold: a 1M-user directory paged by 100 is 10,000
 * requests of about 250 bytes.  A larger record (a server handing out
 * kilobyte cursors one resource at a time) is dropped and marked broken:
 * those runs are simply not replayed, and the memory is not held between
 * runs. */
#define FETCH_RECORD_BYTES_MAX (8u * 1024 * 1024)

typedef struct FetchRequest {
        char *url;
        char *what;   /* the name errors give it */
        long status;  /* the HTTP status used; 0: the transfer failed */
        bool listing; /* a page of a listing (else /ServiceProviderConfig): see scim_fetch_replay() */
        uint8_t digest[DIGEST_LEN]; /* of the body as decoded */
} FetchRequest;

typedef struct FetchRecord {
        uint8_t key[DIGEST_KEY_LEN]; /* the digests', drawn by fetch_record_init() */
        FetchRequest *requests;
        size_t n, cap;
        size_t bytes; /* held, counted against FETCH_RECORD_BYTES_MAX */
        bool broken;  /* an answer could not be digested, or the record grew too large: it shows nothing */
} FetchRecord;

/** fetch_record_init() - an empty record with a fresh key. */
void fetch_record_init(FetchRecord *r);

/** fetch_record_add() - append a request (@url and @what are copied); past
 * FETCH_RECORD_BYTES_MAX, empty @r and mark it broken instead (later adds
 * are ignored).  Return: 0 or -ENOMEM. */
int fetch_record_add(FetchRecord *r, const char *url, const char *what, long status, bool listing,
                     const uint8_t digest[static DIGEST_LEN]);

/** fetch_record_done() - free what @r holds; it is empty afterwards. */
void fetch_record_done(FetchRecord *r);
