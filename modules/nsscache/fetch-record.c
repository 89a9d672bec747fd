/* The requests of one refresh, for telling the next one unchanged. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fetch-record.h"
#include "util/macro.h"

/* Frees the requests; the record stays broken. */
static void drop(FetchRecord *r) {
        for (size_t i = 0; i < r->n; i++) {
                free(r->requests[i].url);
                free(r->requests[i].what);
        }
        free(r->requests);
        r->requests = NULL;
        r->n = r->cap = r->bytes = 0;
        r->broken = true;
}

void fetch_record_init(FetchRecord *r) {
        *r = (FetchRecord){};
        digest_key_new(r->key);
}

int fetch_record_add(FetchRecord *r, const char *url, const char *what, long status, bool listing,
                     const uint8_t digest[static DIGEST_LEN]) {
        size_t bytes = sizeof(FetchRequest) + strlen(url) + strlen(what) + 2;
        FetchRequest *q;

        if (r->broken)
                return 0;
        if (bytes > FETCH_RECORD_BYTES_MAX - r->bytes) {
                drop(r);
                return 0;
        }
        if (r->n == r->cap) {
                size_t cap = MAX(r->cap * 2, (size_t) 64);

                q = reallocarray(r->requests, cap, sizeof(*q));
                if (!q)
                        return -ENOMEM;
                r->requests = q;
                r->cap = cap;
        }
        q = r->requests + r->n;
        *q = (FetchRequest){
                .url = strdup(url), .what = strdup(what), .status = status, .listing = listing
        };
        if (!q->url || !q->what) {
                free(q->url);
                free(q->what);
                return -ENOMEM;
        }
        memcpy(q->digest, digest, DIGEST_LEN);
        r->n++;
        r->bytes += bytes;
        return 0;
}

void fetch_record_done(FetchRecord *r) {
        drop(r);
        explicit_bzero(r, sizeof(*r));
}
