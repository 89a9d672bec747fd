/* SCIM pagination over one reused libcurl handle.
 *
 * Why it is shaped this way: a 100k-user directory is 1000 pages at the
 * default count=100, so the connection (and its TLS session) is kept for the
 * whole run, bodies are asked for compressed, and HTTP/2 is used where the
 * server offers it.  Servers differ in how they honour `count`: some cap it,
 * some ignore it.  So `count` is always sent, but startIndex advances by the
 * number of Resources that actually came back, and the loop ends at
 * totalResults or at the first empty page.  A server that answers a
 * different startIndex than asked is refused rather than risk a silent gap.
 * The request for the next page goes out as soon as the current one is
 * parsed (its startIndex is known then) and before it is mapped, so the
 * server's time and ours overlap: one connection, one request in flight.
 *
 * Failure policy: transport errors, timeouts, 429 and 5xx are transient and
 * retried a bounded number of times with exponential backoff; 4xx are not
 * (a 401 will not fix itself and retrying only hammers the server); a body
 * that does not parse fails the run at once.  Every page is bounded
 * (SCIM_PAGE_BODY_MAX), as are the page and resource counts.  The cancel
 * flag is polled from curl's progress callback and during backoff, so a
 * timed-out job stops within a fraction of a second.
 *
 * A server can also answer every request with the same page (it ignores
 * startIndex and leaves it out) while claiming millions of results: that once
 * drew 50,001 requests in one run.  So a run stops at the first page that
 * brings no resource id it has not seen, refuses a first totalResults beyond
 * max_total_results before asking again, and may send only as many requests
 * as the first page's totalResults and size call for, plus a margin for
 * entries added during the run.
 *
 * Where the server advertises RFC 9865 cursors in /ServiceProviderConfig,
 * they are used instead: a cursor names a position in the server's own
 * ordering, so entries added or removed between two pages neither shift
 * the rest nor hide one.  A cursor is echoed into the next URL, so it is
 * held to RFC 9865's alphabet and a length; the page, resource and
 * repeated-page bounds above hold for cursors too.
 *
 * The bearer token is copied into the header list only; the list's strings
 * are wiped before they are freed, and curl's verbose output stays off.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "dupset.h"
#include "curl-common.h"
#include "scim-fetch.h"
#include "fetch-record.h"
#include "scim-spc.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/rand-util.h"
#include "util/siphash.h"

struct ScimFetch {
        const NsscacheConf *conf;
        CURLM *multi; /* drives the one easy handle, so a request can be in flight while a page is mapped */
        CURL *curl;
        bool in_flight;
        bool cursor; /* page by cursor from the first request (scim_fetch_paging()) */
        struct curl_slist *headers;
        char *body;
        size_t body_len, body_cap;
        bool body_too_big;
        /* each answer's digest, taken as it arrives, and the run's requests (optional) */
        Digest *md;
        uint8_t digest[DIGEST_LEN];
        json_tokener *tok; /* one for every page of the run */
        bool digest_ok;
        FetchRecord *record;
        const sunkd_cancel *cancel;
        NsscacheFetchStats stats;
};

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userdata) {
        ScimFetch *f = userdata;
        size_t n = size * nmemb;

        if (n > SCIM_PAGE_BODY_MAX - f->body_len) {
                f->body_too_big = true;
                return 0;
        }
        if (f->body_len + n + 1 > f->body_cap) {
                size_t cap = MAX(f->body_cap * 2, f->body_len + n + 1);
                char *b;

                cap = MIN(cap, (size_t) SCIM_PAGE_BODY_MAX + 1);
                b = realloc(f->body, cap);
                if (!b)
                        return 0;
                f->body = b;
                f->body_cap = cap;
        }
        if (f->digest_ok && digest_feed(f->md, data, n) < 0)
                f->digest_ok = false;
        memcpy(f->body + f->body_len, data, n);
        f->body_len += n;
        f->body[f->body_len] = 0;
        return n;
}

static int xferinfo_cb(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
        ScimFetch *f = userdata;

        return sunkd_cancelled(f->cancel) ? 1 : 0;
}

static void headers_wipe_free(struct curl_slist *l) {
        for (struct curl_slist *i = l; i; i = i->next)
                explicit_bzero(i->data, strlen(i->data));
        curl_slist_free_all(l);
}

ScimFetch *scim_fetch_free(ScimFetch *f) {
        if (!f)
                return NULL;
        if (f->in_flight)
                (void) curl_multi_remove_handle(f->multi, f->curl);
        if (f->curl)
                curl_easy_cleanup(f->curl);
        if (f->multi)
                curl_multi_cleanup(f->multi);
        headers_wipe_free(f->headers);
        digest_free(f->md);
        if (f->tok)
                json_tokener_free(f->tok);
        free(f->body);
        free(f);
        return NULL;
}

int scim_fetch_new(const NsscacheConf *c, const char *token, ScimFetch **ret) {
        _cleanup_(scim_fetch_freep) ScimFetch *f = NULL;
        _cleanup_erase_ char *auth = NULL;
        struct curl_slist *l;
        CURLcode cr = CURLE_OK;

        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->conf = c;
        f->curl = curl_easy_init();
        f->multi = curl_multi_init();
        f->tok = scim_json_tokener_new();
        if (!f->curl || !f->multi || !f->tok)
                return -ENOMEM;
        if (asprintf(&auth, "Authorization: Bearer %s", token) < 0)
                return -ENOMEM;
        l = curl_slist_append(NULL, auth);
        if (!l)
                return -ENOMEM;
        f->headers = l;
        if (!(l = curl_slist_append(f->headers, "Accept: application/scim+json, application/json")))
                return -ENOMEM;
        f->headers = l;

#define SET(opt, val)                                                                                       \
        do {                                                                                                \
                if (cr == CURLE_OK)                                                                         \
                        cr = curl_easy_setopt(f->curl, opt, val);                                           \
        } while (0)
        cr = curl_transport_setup(f->curl, &(CurlTransport){ .timeout_usec = c->timeout_usec,
                                                             .tls_verify = c->tls_verify,
                                                             .ca_file = c->ca_file });
        SET(CURLOPT_HTTPHEADER, f->headers);
        SET(CURLOPT_ACCEPT_ENCODING, "");
        SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) SCIM_PAGE_BODY_MAX);
        SET(CURLOPT_WRITEFUNCTION, write_cb);
        SET(CURLOPT_WRITEDATA, f);
        SET(CURLOPT_NOPROGRESS, 0L);
        SET(CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
        SET(CURLOPT_XFERINFODATA, f);
        if (cr != CURLE_OK)
                return -EINVAL;
        /* HTTP/2 over TLS when libcurl has it; plain HTTP/1.1 otherwise. */
        if (curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_HTTP2)
                (void) curl_easy_setopt(f->curl, CURLOPT_HTTP_VERSION, (long) CURL_HTTP_VERSION_2TLS);
#undef SET
        *ret = TAKE_PTR(f);
        return 0;
}

const NsscacheFetchStats *scim_fetch_stats(const ScimFetch *f) {
        return &f->stats;
}

static int append_encoded(FILE *out, CURL *curl, const char *s, size_t n) {
        char *e = curl_easy_escape(curl, s, (int) n);

        if (!e)
                return -ENOMEM;
        fputs(e, out);
        curl_free(e);
        return 0;
}

int scim_fetch_url(const NsscacheConf *c, ScimEndpoint e, char **ret) {
        const char *endpoint = e == SCIM_ENDPOINT_USERS    ? c->users_endpoint
                               : e == SCIM_ENDPOINT_GROUPS ? c->groups_endpoint
                                                           : "ServiceProviderConfig";
        const char *params = e == SCIM_ENDPOINT_USERS    ? c->users_parameters
                             : e == SCIM_ENDPOINT_GROUPS ? c->groups_parameters
                                                         : NULL;
        _cleanup_free_ char *url = NULL;
        size_t len = 0, blen = strlen(c->base_url);
        bool first = true;
        CURL *curl;
        FILE *out;
        int r = 0;

        curl = curl_easy_init();
        if (!curl)
                return -ENOMEM;
        out = open_memstream(&url, &len);
        if (!out) {
                curl_easy_cleanup(curl);
                return -ENOMEM;
        }
        while (blen > 0 && c->base_url[blen - 1] == '/')
                blen--;
        fwrite(c->base_url, 1, blen, out);
        fputc('/', out);
        fputs(endpoint, out);
        for (const char *p = params ?: ""; *p && r >= 0;) {
                size_t n = strcspn(p, "&");
                const char *eq = memchr(p, '=', n);

                if (n > 0) {
                        fputc(first ? '?' : '&', out);
                        first = false;
                        r = append_encoded(out, curl, p, eq ? (size_t) (eq - p) : n);
                        fputc('=', out);
                        if (eq && r >= 0)
                                r = append_encoded(out, curl, eq + 1, n - (size_t) (eq - p) - 1);
                }
                p += n;
                if (*p == '&')
                        p++;
        }
        curl_easy_cleanup(curl);
        if (fclose(out) != 0 || r < 0)
                return r < 0 ? r : -ENOMEM;
        *ret = TAKE_PTR(url);
        return 0;
}

/* Sends the GET for @url and returns without waiting for the answer. */
static int page_begin(ScimFetch *f, const char *url) {
        int running;

        f->body_len = 0;
        f->body_too_big = false;
        f->digest_ok = f->md && digest_begin(f->md) >= 0;
        if (curl_easy_setopt(f->curl, CURLOPT_URL, url) != CURLE_OK ||
            curl_multi_add_handle(f->multi, f->curl) != CURLM_OK)
                return -ENOMEM;
        f->in_flight = true;
        f->stats.requests++;
        /* Connect and send now, so the server works while the caller maps. */
        if (curl_multi_perform(f->multi, &running) != CURLM_OK)
                return -EIO;
        return 0;
}

/* Forgets a request still in flight (the run ended early). */
static void page_abort(ScimFetch *f) {
        if (f->in_flight)
                (void) curl_multi_remove_handle(f->multi, f->curl);
        f->in_flight = false;
}

/* Waits for the request page_begin() sent; the transfer's own result. */
static CURLcode page_wait(ScimFetch *f) {
        CURLcode cr = CURLE_OK;
        bool done = false;

        while (!done) {
                CURLMsg *msg;
                int running, left;

                if (curl_multi_perform(f->multi, &running) != CURLM_OK) {
                        cr = CURLE_OUT_OF_MEMORY;
                        break;
                }
                while ((msg = curl_multi_info_read(f->multi, &left)))
                        if (msg->msg == CURLMSG_DONE && msg->easy_handle == f->curl) {
                                cr = msg->data.result;
                                done = true;
                        }
                if (!done && running == 0) {
                        cr = CURLE_GOT_NOTHING;
                        break;
                }
                /* curl's own timeouts bound this; the short poll keeps cancel prompt */
                if (!done && curl_multi_poll(f->multi, NULL, 0, 100, NULL) != CURLM_OK) {
                        cr = CURLE_OUT_OF_MEMORY;
                        break;
                }
        }
        page_abort(f);
        if (f->digest_ok && digest_end(f->md, f->digest) < 0)
                f->digest_ok = false;
        f->stats.bytes += f->body_len;
        return cr;
}

/* Notes the answer just received in the run's record, if one is kept.  An
 * answer without a digest leaves the record unusable, not the run failed. */
static int record_answer(ScimFetch *f, const char *url, const char *what, long status, bool listing) {
        if (!f->record)
                return 0;
        if (!f->digest_ok) {
                f->record->broken = true;
                return 0;
        }
        return fetch_record_add(f->record, url, what, status, listing, f->digest);
}

/* The wait a 429 or 503 asks for (Retry-After, seconds or an HTTP-date,
 * which curl turns into seconds), if longer than @delay.  A wait longer than
 * a request may take fails the run instead: the job's own schedule retries
 * later, and a cancel must not sit behind an hour-long sleep. */
static int retry_after(ScimFetch *f, long status, const char *what, uint64_t *delay, char **ret_error) {
        curl_off_t secs = 0;

        if ((status != 429 && status != 503) ||
            curl_easy_getinfo(f->curl, CURLINFO_RETRY_AFTER, &secs) != CURLE_OK || secs <= 0)
                return 0;
        if ((uint64_t) secs > f->conf->timeout_usec / SUNKD_USEC_PER_SEC) {
                (void) errmsg_set(ret_error, 0,
                                  "%s: HTTP %ld, the server asks to retry after %" CURL_FORMAT_CURL_OFF_T
                                  " s, longer than the timeout",
                                  what, status, secs);
                return -EPROTO;
        }
        *delay = MAX(*delay, (uint64_t) secs * SUNKD_USEC_PER_SEC);
        return 0;
}

/* The scimType of an error body (RFC 7644 3.12, RFC 9865 2.1: expiredCursor,
 * invalidCursor, invalidCount, ...), if it is a short word; "" otherwise.
 * Nothing else of the body is repeated: it is the server's text. */
static void error_type(const ScimFetch *f, char ret[static 48]) {
        _cleanup_json_ json_object *root = NULL;
        json_object *v;
        const char *t;

        ret[0] = 0;
        if (!f->body || f->body_len == 0 || f->body_len > SCIM_SPC_BODY_MAX)
                return;
        if (scim_json_parse(f->body, f->body_len, &root, NULL) < 0 ||
            !json_object_is_type(root, json_type_object) ||
            !json_object_object_get_ex(root, "scimType", &v) || !json_object_is_type(v, json_type_string))
                return;
        t = json_object_get_string(v);
        if (json_object_get_string_len(v) == 0 || json_object_get_string_len(v) > 32)
                return;
        for (const char *c = t; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
                        return;
        (void) snprintf(ret, 48, " (%s)", t);
}

/* Finishes the GET page_begin() sent, retrying transient failures.  On
 * success the body is in f->body. */
static int get_page(ScimFetch *f, const char *url, const char *what, char **ret_error) {
        uint64_t delay = f->conf->retry_delay_usec, next_delay = 0;
        int r = -EIO;

        for (int64_t attempt = 0; attempt <= f->conf->retry_max; attempt++) {
                long status = 0;
                CURLcode cr;

                if (attempt > 0) {
                        f->stats.retries++;
                        r = curl_backoff_sleep(f->cancel, MAX(delay, next_delay));
                        if (r < 0) {
                                (void) errmsg_set(ret_error, 0, "%s: cancelled", what);
                                return r;
                        }
                        delay = MIN(delay * 2, SCIM_RETRY_DELAY_MAX_USEC);
                        next_delay = 0;
                        r = page_begin(f, url);
                        if (r < 0)
                                return r;
                }
                cr = page_wait(f);
                if (cr != CURLE_OK) {
                        if (f->body_too_big || cr == CURLE_FILESIZE_EXCEEDED) {
                                (void) errmsg_set(ret_error, 0, "%s: response body larger than %u bytes",
                                                  what, SCIM_PAGE_BODY_MAX);
                                return -EFBIG;
                        }
                        r = curl_to_errno(cr);
                        (void) errmsg_set(ret_error, 0, "%s: %s", what, curl_easy_strerror(cr));
                        if (r == -ECANCELED || !curl_transient(cr))
                                return r;
                        continue;
                }
                (void) curl_easy_getinfo(f->curl, CURLINFO_RESPONSE_CODE, &status);
                if (status == 200)
                        return 0;
                if (status == 401 || status == 403) {
                        (void) errmsg_set(ret_error, 0,
                                          "%s: authentication failed (HTTP %ld): check the token", what,
                                          status);
                        return -EACCES;
                }
                {
                        char type[48];

                        error_type(f, type);
                        (void) errmsg_set(ret_error, 0, "%s: HTTP %ld%s", what, status, type);
                }
                r = -EPROTO;
                if (status != 429 && (status < 500 || status > 599))
                        return r;
                r = retry_after(f, status, what, &next_delay, ret_error);
                if (r < 0)
                        return r;
                r = -EPROTO;
        }
        return r;
}

/* One endpoint's pagination state. */
typedef struct FetchRun {
        const char *endpoint;
        bool cursor;         /* paging by cursor */
        int64_t start_index; /* by index: the next page's */
        char *next_cursor;   /* by cursor: the next page's; NULL for the first */
        DupSet *ids;         /* resource ids seen in this run, as keyed hashes (see page_new_ids()) */
        uint64_t id_key[2];
        uint64_t received;  /* Resources received, repeats included */
        uint64_t pages_cap; /* set from the first page */
        int64_t first_total;
        bool repeated; /* the last page brought nothing new */
} FetchRun;

/* The URL and the name used in errors for the next page of @run
 * (@page counts from 0).  An empty cursor asks for the first page by
 * cursor; a cursor is URL-safe (scim_page_parse() checked it). */
static int page_names(const ScimFetch *f, const char *base, const FetchRun *run, uint64_t page,
                      char **ret_url, char **ret_what) {
        char sep = strchr(base, '?') ? '&' : '?';
        int r;

        free(*ret_url);
        free(*ret_what);
        *ret_url = *ret_what = NULL;
        if (run->cursor)
                r = asprintf(ret_url, "%s%ccursor%s%s&count=%" PRId64, base, sep,
                             run->next_cursor ? "=" : "", run->next_cursor ?: "", f->conf->page_size) < 0 ||
                    asprintf(ret_what, "%s page %" PRIu64 " by cursor", run->endpoint, page + 1) < 0;
        else
                r = asprintf(ret_url, "%s%cstartIndex=%" PRId64 "&count=%" PRId64, base, sep,
                             run->start_index, f->conf->page_size) < 0 ||
                    asprintf(ret_what, "%s page at startIndex=%" PRId64, run->endpoint, run->start_index) <
                            0;
        return r ? -ENOMEM : 0;
}

static const char *const note_table[] = {
        "a page brought no resource not seen before (the server ignores startIndex?): stopped there",
        "the server sent more resources than its first totalResults",
        "the server sent fewer resources than its totalResults (entries dropped between pages?)",
        "/ServiceProviderConfig could not be read: paged by index",
        "the server answered an index request with a nextCursor: paged by cursor (RFC 9865)",
};

const char *scim_fetch_note_to_string(ScimFetchNote n) {
        for (size_t i = 0; i < ELEMENTSOF(note_table); i++)
                if (n == 1u << i)
                        return note_table[i];
        return NULL;
}

/* The page answers what was asked and the run stays within its bounds. */
static int page_check(ScimFetch *f, const ScimPage *p, FetchRun *run, const char *what, char **ret_error) {
        if (!run->cursor && p->start_index >= 0 && p->start_index != run->start_index) {
                (void) errmsg_set(ret_error, 0, "%s: server answered startIndex=%" PRId64, what,
                                  p->start_index);
                return -EBADMSG;
        }
        f->stats.pages++;
        f->stats.resources += p->n_resources;
        run->received += p->n_resources;
        if (run->received > SCIM_RESOURCES_MAX) {
                (void) errmsg_set(ret_error, 0, "%s: more than %d resources", run->endpoint,
                                  SCIM_RESOURCES_MAX);
                return -E2BIG;
        }
        return 0;
}

/* The run's page budget, from the first page: totalResults pages of the size
 * the server really sends, plus 10% and two pages for growth meanwhile.  A
 * cursor listing may leave totalResults out: max_total_results stands in. */
static int run_bound(ScimFetch *f, FetchRun *run, const ScimPage *p, char **ret_error) {
        uint64_t per_page, need, total;

        if (p->total_results > f->conf->max_total_results) {
                (void) errmsg_set(ret_error, 0,
                                  "%s: the server reports totalResults=%" PRId64
                                  ", more than max_total_results=%" PRId64,
                                  run->endpoint, p->total_results, f->conf->max_total_results);
                return -E2BIG;
        }
        run->first_total = p->total_results;
        total = (uint64_t) (p->total_results >= 0 ? p->total_results : f->conf->max_total_results);
        per_page = MAX((uint64_t) 1, MIN((uint64_t) f->conf->page_size, (uint64_t) p->n_resources));
        need = (total + per_page - 1) / per_page;
        run->pages_cap = MIN(need + need / 10 + 2, (uint64_t) SCIM_PAGES_MAX);
        return 0;
}

/* How many Resources of @p carry an id this run has not seen.  One without a
 * usable id counts as new: it cannot be told apart, and the page cap still
 * bounds the run.  Ids are kept as 64-bit SipHash values under a key drawn
 * for the run, 12 bytes each whatever the id's length (UUIDs are 36): two
 * ids of 100k collide with odds of 1 in 10^9, the server cannot aim for it
 * without the key, and a collision only ever counts one resource as seen. */
static int page_new_ids(FetchRun *run, const ScimPage *p, size_t *ret) {
        size_t n_new = 0;

        for (size_t i = 0; i < p->n_resources; i++) {
                json_object *o = json_object_array_get_idx(p->resources, i), *id;
                uint64_t h;
                int r;

                if (!json_object_object_get_ex(o, "id", &id) || !json_object_is_type(id, json_type_string)) {
                        n_new++;
                        continue;
                }
                h = siphash13(run->id_key[0], run->id_key[1], (const uint8_t *) json_object_get_string(id),
                              (size_t) json_object_get_string_len(id));
                r = dupset_add(run->ids, &h, sizeof(h));
                if (r < 0)
                        return r;
                n_new += (size_t) r;
        }
        *ret = n_new;
        return 0;
}

/* Whether @p ends the run, and what the server got wrong on the way. */
static int page_is_last(ScimFetch *f, FetchRun *run, const ScimPage *p, uint64_t page, bool *ret,
                        char **ret_error) {
        size_t n_new;
        int r;

        r = page_new_ids(run, p, &n_new);
        if (r < 0)
                return r;
        if (p->n_resources > 0 && n_new == 0) {
                f->stats.notes |= SCIM_NOTE_REPEATED_PAGE;
                run->repeated = true;
                *ret = true;
                return 0;
        }
        if (run->first_total >= 0 && run->received > (uint64_t) run->first_total)
                f->stats.notes |= SCIM_NOTE_TOTAL_EXCEEDED;
        if (run->first_total < 0 && run->received > (uint64_t) f->conf->max_total_results) {
                (void) errmsg_set(ret_error, 0, "%s: more than max_total_results=%" PRId64 " resources",
                                  run->endpoint, f->conf->max_total_results);
                return -E2BIG;
        }
        /* by cursor, only the server knows where the listing ends */
        *ret = p->n_resources == 0 ||
               (run->cursor ? !p->next_cursor : run->received >= (uint64_t) p->total_results);
        /* A first page that ends a cursor listing short of its own
         * totalResults is an index page from a server that ignored the
         * cursor: publishing it would drop everyone after it. */
        if (*ret && run->cursor && page == 0 && p->n_resources > 0 && p->total_results >= 0 &&
            run->received < (uint64_t) p->total_results) {
                (void) errmsg_set(ret_error, 0,
                                  "%s: the server answered a cursor request without nextCursor after %zu of "
                                  "totalResults=%" PRId64
                                  " (it does not page by cursor: set pagination: index)",
                                  run->endpoint, p->n_resources, p->total_results);
                return -EPROTO;
        }
        if (*ret && p->total_results >= 0 && run->received < (uint64_t) p->total_results)
                f->stats.notes |= SCIM_NOTE_TOTAL_SHORT;
        if (!*ret && page + 1 >= run->pages_cap) {
                if (run->first_total >= 0)
                        (void) errmsg_set(ret_error, 0,
                                          "%s: more than %" PRIu64 " pages for totalResults=%" PRId64,
                                          run->endpoint, run->pages_cap, run->first_total);
                else
                        (void) errmsg_set(ret_error, 0,
                                          "%s: more than %" PRIu64 " pages without totalResults",
                                          run->endpoint, run->pages_cap);
                return -E2BIG;
        }
        return 0;
}

/* How the next page is asked for: a cursor page hands over its nextCursor;
 * with auto, an index page answered with one (RFC 9865 2.4: a server may
 * require cursors) switches the listing to cursors. */
static int page_advance(ScimFetch *f, FetchRun *run, const ScimPage *p, uint64_t page) {
        if (!run->cursor && page == 0 && p->next_cursor && f->conf->paging == SCIM_PAGING_AUTO) {
                /* the next listing of the run starts by cursor too */
                run->cursor = f->cursor = true;
                f->stats.notes |= SCIM_NOTE_CURSOR_REQUIRED;
        }
        if (!run->cursor) {
                run->start_index += (int64_t) p->n_resources;
                return 0;
        }
        f->stats.cursor = true;
        run->next_cursor = mfree(run->next_cursor);
        if (!p->next_cursor) /* the last page */
                return 0;
        run->next_cursor = strdup(p->next_cursor);
        return run->next_cursor ? 0 : -ENOMEM;
}

static unsigned page_flags(const ScimFetch *f, const FetchRun *run) {
        if (run->cursor)
                return SCIM_PAGE_CURSOR;
        return f->conf->paging == SCIM_PAGING_INDEX ? SCIM_PAGE_IGNORE_CURSOR : 0;
}

int scim_fetch_all(ScimFetch *f, ScimEndpoint e, const sunkd_cancel *cancel, scim_fetch_page_fn fn,
                   void *userdata, char **ret_error) {
        static const char *const names[_SCIM_ENDPOINT_MAX] = { "Users", "Groups" };
        _cleanup_free_ char *base = NULL, *url = NULL, *what = NULL, *next_url = NULL, *next_what = NULL;
        _cleanup_(dupset_freep) DupSet *ids = NULL;
        FetchRun run = { .endpoint = names[e], .cursor = f->cursor, .start_index = 1 };
        uint64_t start = curl_now_usec();
        int r;

        assert(e < _SCIM_ENDPOINT_MAX);
        f->cancel = cancel;
        r = dupset_new(&ids);
        run.ids = ids;
        run.id_key[0] = random_u64();
        run.id_key[1] = random_u64();
        if (r >= 0)
                r = scim_fetch_url(f->conf, e, &base);
        if (r >= 0)
                r = page_names(f, base, &run, 0, &url, &what);
        if (r >= 0)
                r = page_begin(f, url);
        for (uint64_t page = 0; r >= 0; page++) {
                _cleanup_free_ char *perr = NULL;
                ScimPage p = { 0 };
                bool last = false;

                r = get_page(f, url, what, ret_error);
                if (r >= 0)
                        r = record_answer(f, url, what, 200, true);
                if (r < 0)
                        break;
                r = scim_page_parse_bounded(f->tok, f->body ?: "", f->body_len, f->conf->page_size,
                                            page_flags(f, &run), &p, &perr);
                if (r < 0) {
                        (void) errmsg_set(ret_error, 0, "%s: %s", what, perr ?: "unparsable");
                        break;
                }
                r = page_check(f, &p, &run, what, ret_error);
                if (r >= 0 && page == 0)
                        r = run_bound(f, &run, &p, ret_error);
                if (r >= 0)
                        r = page_advance(f, &run, &p, page);
                if (r >= 0)
                        r = page_is_last(f, &run, &p, page, &last, ret_error);
                /* Ask for the next page before mapping this one: the server
                 * prepares it while the page is mapped.  The tree owns copies
                 * of its strings, so the body buffer is free for the answer. */
                if (r >= 0 && !last) {
                        r = page_names(f, base, &run, page + 1, &next_url, &next_what);
                        if (r >= 0)
                                r = page_begin(f, next_url);
                }
                /* a page of repeats is not mapped: every entry would be a duplicate */
                if (r >= 0 && !run.repeated) {
                        r = fn(userdata, &p);
                        if (r < 0)
                                (void) errmsg_set(ret_error, 0, "%s: %s", what, strerror(-r));
                }
                scim_page_done(&p);
                if (r < 0 || last)
                        break;
                if (sunkd_cancelled(cancel)) {
                        (void) errmsg_set(ret_error, 0, "%s: cancelled", names[e]);
                        r = -ECANCELED;
                }
                free(url);
                free(what);
                url = TAKE_PTR(next_url);
                what = TAKE_PTR(next_what);
        }
        free(run.next_cursor);
        page_abort(f);
        f->stats.duration_usec += curl_now_usec() - start;
        /* the body may hold directory data: do not keep it around */
        if (f->body)
                explicit_bzero(f->body, f->body_cap);
        f->body_len = 0;
        return r;
}

int scim_fetch_paging(ScimFetch *f, const sunkd_cancel *cancel, char **ret_error) {
        _cleanup_free_ char *url = NULL;
        ScimPagination pg;
        long status = 0;
        CURLcode cr;
        int r;

        f->cursor = f->conf->paging == SCIM_PAGING_CURSOR;
        if (f->conf->paging != SCIM_PAGING_AUTO)
                return 0;
        f->cancel = cancel;
        r = scim_fetch_url(f->conf, SCIM_ENDPOINT_SERVICE_PROVIDER_CONFIG, &url);
        if (r >= 0)
                r = page_begin(f, url);
        if (r < 0)
                return r;
        cr = page_wait(f);
        if (cr == CURLE_ABORTED_BY_CALLBACK && sunkd_cancelled(cancel))
                return errmsg_set(ret_error, -ECANCELED, "ServiceProviderConfig: cancelled");
        if (cr != CURLE_OK || curl_easy_getinfo(f->curl, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
                status = 0;
        r = record_answer(f, url, "ServiceProviderConfig", status, false);
        if (r < 0 || status == 0)
                return r;
        /* the listing would be refused the same way: one request is enough */
        if (status == 401 || status == 403)
                return errmsg_set(ret_error, -EACCES,
                                  "ServiceProviderConfig: authentication failed (HTTP %ld): check the token",
                                  status);
        if (status != 200)
                return 0;
        if (scim_spc_parse(f->body ?: "", f->body_len, &pg, NULL) < 0) {
                f->stats.notes |= SCIM_NOTE_SPC_INVALID;
                return 0;
        }
        f->cursor = pg.cursor;
        return 0;
}

static int users_page(void *userdata, const ScimPage *p) {
        return scim_map_add_users(userdata, p->resources);
}

static int groups_page(void *userdata, const ScimPage *p) {
        return scim_map_add_groups(userdata, p->resources);
}

/* A handle with the token read now (it may have been rotated since the
 * last run), digesting answers under @rec's key if there is a record. */
static int fetch_open(const NsscacheConf *c, const FetchRecord *rec, ScimFetch **ret, char **ret_error) {
        _cleanup_(scim_fetch_freep) ScimFetch *f = NULL;
        _cleanup_erase_ char *token = NULL;
        int r;

        r = nsscache_conf_load_token(c, &token, ret_error);
        if (r < 0)
                return r;
        r = scim_fetch_new(c, token, &f);
        if (r < 0)
                return r;
        if (rec) {
                r = digest_new(rec->key, &f->md);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(f);
        return 0;
}

int scim_fetch_run(const NsscacheConf *c, Mapper *m, FetchRecord *record, const sunkd_cancel *cancel,
                   NsscacheFetchStats *ret_stats, char **ret_error) {
        _cleanup_(scim_fetch_freep) ScimFetch *f = NULL;
        int r;

        r = fetch_open(c, record, &f, ret_error);
        if (r < 0)
                return r;
        f->record = record;
        r = scim_fetch_paging(f, cancel, ret_error);
        if (r >= 0 && (c->map_enabled[NSS_MAP_PASSWD] || c->map_enabled[NSS_MAP_SHADOW] ||
                       c->map_enabled[NSS_MAP_SSHKEY]))
                r = scim_fetch_all(f, SCIM_ENDPOINT_USERS, cancel, users_page, m, ret_error);
        if (r >= 0 && c->map_enabled[NSS_MAP_GROUP])
                r = scim_fetch_all(f, SCIM_ENDPOINT_GROUPS, cancel, groups_page, m, ret_error);
        if (ret_stats)
                *ret_stats = f->stats;
        return r < 0 ? r : 0;
}

/* Sends @q again as the recorded run did: a listing page is retried as
 * scim_fetch_all() would, and fails the same way; /ServiceProviderConfig
 * gets one try, and any answer but the recorded one is a difference (the
 * full run then decides, as scim_fetch_paging() does). */
static int replay_one(ScimFetch *f, const FetchRequest *q, bool *ret_same, char **ret_error) {
        long status = 200;
        CURLcode cr;
        int r;

        r = page_begin(f, q->url);
        if (r < 0)
                return r;
        if (q->listing) {
                r = get_page(f, q->url, q->what, ret_error);
                if (r < 0)
                        return r;
        } else {
                cr = page_wait(f);
                if (cr == CURLE_ABORTED_BY_CALLBACK && sunkd_cancelled(f->cancel))
                        return errmsg_set(ret_error, -ECANCELED, "%s: cancelled", q->what);
                if (cr != CURLE_OK ||
                    curl_easy_getinfo(f->curl, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
                        status = 0;
        }
        *ret_same = f->digest_ok && status == q->status && memcmp(f->digest, q->digest, DIGEST_LEN) == 0;
        return 0;
}

int scim_fetch_replay(const NsscacheConf *c, const FetchRecord *rec, const sunkd_cancel *cancel,
                      NsscacheFetchStats *ret_stats, bool *ret_same, char **ret_error) {
        _cleanup_(scim_fetch_freep) ScimFetch *f = NULL;
        uint64_t start = curl_now_usec();
        bool same = !rec->broken && rec->n > 0;
        int r;

        *ret_same = false;
        r = fetch_open(c, rec, &f, ret_error);
        if (r < 0)
                return r;
        f->cancel = cancel;
        for (size_t i = 0; r >= 0 && same && i < rec->n; i++) {
                r = replay_one(f, rec->requests + i, &same, ret_error);
                if (r >= 0 && sunkd_cancelled(cancel))
                        r = errmsg_set(ret_error, -ECANCELED, "%s: cancelled", rec->requests[i].what);
        }
        f->stats.duration_usec = curl_now_usec() - start;
        if (f->body)
                explicit_bzero(f->body, f->body_cap);
        if (ret_stats)
                *ret_stats = f->stats;
        if (r < 0)
                return r;
        *ret_same = same;
        return 0;
}
