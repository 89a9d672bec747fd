/* A conditional, bounded GET of one file into memory (see http-fetch.h).
 *
 * If-Modified-Since is sent as a header of our own rather than through
 * CURLOPT_TIMECONDITION: with the latter, libcurl drops the body of a 200
 * whose Last-Modified is not newer than the time asked about, and an
 * empty passwd map is the last thing a run should see.  bzip2 is not
 * offered in Accept-Encoding (libcurl cannot decode that coding and would
 * fail the transfer); a file that is itself bzip2 is recognised by its
 * magic, as nsscache recognises it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <bzlib.h>
#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "curl-common.h"
#include "http-fetch.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"

/* libcurl may be handed a compressed body a little larger than what it decodes to. */
#define HTTP_WIRE_MARGIN (64 * 1024)

struct HttpFetch {
        HttpFetchOptions o;
        CURL *curl;
        const sunkd_cancel *cancel;
        /* the answer being received */
        char *body;
        size_t len, cap;
        bool too_big;
        char etag[HTTP_ETAG_MAX + 1];
        bool etag_bad;
        HttpFetchStats stats;
};

void http_validators_init(HttpValidators *v) {
        *v = (HttpValidators){ .last_modified = -1 };
}

void http_validators_done(HttpValidators *v) {
        free(v->etag);
        http_validators_init(v);
}

int http_validators_copy(HttpValidators *dst, const HttpValidators *src) {
        char *e = src->etag ? strdup(src->etag) : NULL;

        if (src->etag && !e)
                return -ENOMEM;
        free(dst->etag);
        dst->etag = e;
        dst->last_modified = src->last_modified;
        return 0;
}

void http_body_done(HttpBody *b) {
        free(b->data);
        http_validators_done(&b->validators);
        *b = (HttpBody){ .validators = { .last_modified = -1 } };
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userdata) {
        HttpFetch *f = userdata;
        size_t n = size * nmemb;

        if (n > f->o.max_size - f->len) {
                f->too_big = true;
                return 0;
        }
        if (f->len + n + 1 > f->cap) {
                size_t cap = MIN(MAX(f->cap * 2, f->len + n + 1), f->o.max_size + 1);
                char *b = realloc(f->body, cap);

                if (!b)
                        return 0;
                f->body = b;
                f->cap = cap;
        }
        memcpy(f->body + f->len, data, n);
        f->len += n;
        f->body[f->len] = 0;
        return n;
}

/* An entity tag is echoed into the next request: printable ASCII, bounded. */
static bool etag_valid(const char *s, size_t n) {
        if (n == 0 || n > HTTP_ETAG_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] < 0x21 || s[i] > 0x7e)
                        return false;
        return true;
}

/* Picks the ETag out of the answer's headers; a new answer (a retry, a
 * 1xx) starts with a status line and forgets the last one's. */
static size_t header_cb(char *data, size_t size, size_t nmemb, void *userdata) {
        HttpFetch *f = userdata;
        size_t n = size * nmemb, b = 5, e = n;

        if (n >= 5 && strncasecmp(data, "HTTP/", 5) == 0) {
                f->etag[0] = 0;
                f->etag_bad = false;
        }
        if (n < 5 || strncasecmp(data, "etag:", 5) != 0)
                return n;
        while (b < e && (data[b] == ' ' || data[b] == '\t'))
                b++;
        while (e > b && strchr(" \t\r\n", data[e - 1]))
                e--;
        f->etag_bad = !etag_valid(data + b, e - b);
        if (!f->etag_bad) {
                memcpy(f->etag, data + b, e - b);
                f->etag[e - b] = 0;
        }
        return n;
}

static int xferinfo_cb(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
        HttpFetch *f = userdata;

        return sunkd_cancelled(f->cancel) ? 1 : 0;
}

HttpFetch *http_fetch_free(HttpFetch *f) {
        if (!f)
                return NULL;
        if (f->curl)
                curl_easy_cleanup(f->curl);
        free(f->body);
        free(f);
        return NULL;
}

int http_fetch_new(const HttpFetchOptions *o, HttpFetch **ret) {
        _cleanup_(http_fetch_freep) HttpFetch *f = NULL;
        CURLcode cr = CURLE_OK;

        if (o->attempts < 1 || o->max_size == 0 || o->max_size > SIZE_MAX - HTTP_WIRE_MARGIN - 1)
                return -EINVAL;
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->o = *o;
        f->curl = curl_easy_init();
        if (!f->curl)
                return -ENOMEM;
#define SET(opt, val)                                                                                       \
        do {                                                                                                \
                if (cr == CURLE_OK)                                                                         \
                        cr = curl_easy_setopt(f->curl, opt, val);                                           \
        } while (0)
        cr = curl_transport_setup(f->curl, &(CurlTransport){ .timeout_usec = o->timeout_usec,
                                                             .tls_verify = o->tls_verify,
                                                             .ca_file = o->ca_file,
                                                             .proxy = o->proxy });
        SET(CURLOPT_ACCEPT_ENCODING, "gzip");
        SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) (o->max_size + HTTP_WIRE_MARGIN));
        SET(CURLOPT_FILETIME, 1L);
        SET(CURLOPT_WRITEFUNCTION, write_cb);
        SET(CURLOPT_WRITEDATA, f);
        SET(CURLOPT_HEADERFUNCTION, header_cb);
        SET(CURLOPT_HEADERDATA, f);
        SET(CURLOPT_NOPROGRESS, 0L);
        SET(CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
        SET(CURLOPT_XFERINFODATA, f);
        if (o->aws_sigv4) {
                SET(CURLOPT_AWS_SIGV4, o->aws_sigv4);
                SET(CURLOPT_USERPWD, o->userpwd);
        }
#undef SET
        if (cr != CURLE_OK)
                return cr == CURLE_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
        *ret = TAKE_PTR(f);
        return 0;
}

const HttpFetchStats *http_fetch_stats(const HttpFetch *f) {
        return &f->stats;
}

bool http_is_bzip2(const char *p, size_t len) {
        static const char block[] = "\x31\x41\x59\x26\x53\x59", end[] = "\x17\x72\x45\x38\x50\x90";

        return len >= 10 && memcmp(p, "BZh", 3) == 0 && p[3] >= '1' && p[3] <= '9' &&
               (memcmp(p + 4, block, 6) == 0 || memcmp(p + 4, end, 6) == 0);
}

int http_bzip2_decode(const char *in, size_t len, size_t max, char **ret, size_t *ret_len) {
        bz_stream s = {};
        _cleanup_free_ char *out = NULL;
        size_t cap = MIN(MAX(len * 4, (size_t) 4096), max) + 1, n = 0;
        int r;

        if (len > UINT_MAX)
                return -EFBIG;
        out = malloc(cap);
        if (!out || BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK)
                return -ENOMEM;
        s.next_in = (char *) in;
        s.avail_in = (unsigned) len;
        for (;;) {
                if (n + 1 >= cap) {
                        char *b;

                        if (cap > max) {
                                BZ2_bzDecompressEnd(&s);
                                return -EFBIG;
                        }
                        cap = MIN(cap * 2, max + 2);
                        b = realloc(out, cap);
                        if (!b) {
                                BZ2_bzDecompressEnd(&s);
                                return -ENOMEM;
                        }
                        out = b;
                }
                s.next_out = out + n;
                s.avail_out = (unsigned) MIN(cap - n - 1, (size_t) UINT_MAX);
                r = BZ2_bzDecompress(&s);
                n = (size_t) (s.next_out - out);
                if (r == BZ_STREAM_END)
                        break;
                /* input used up before the end of the stream: cut short */
                if (r != BZ_OK || (s.avail_in == 0 && s.avail_out > 0)) {
                        BZ2_bzDecompressEnd(&s);
                        return r == BZ_MEM_ERROR ? -ENOMEM : -EBADMSG;
                }
        }
        BZ2_bzDecompressEnd(&s);
        /* a second stream or trailing bytes: not one file */
        if (s.avail_in > 0)
                return -EBADMSG;
        if (n > max)
                return -EFBIG;
        out[n] = 0;
        *ret = TAKE_PTR(out);
        *ret_len = n;
        return 0;
}

/* What S3 needs beside libcurl's signature, which covers these x-amz- headers too:
 * the payload's SHA-256 (libcurl before 8.0 does not send it; a GET's is the empty
 * body's) and the session token. */
static int s3_headers(const HttpFetchOptions *o, struct curl_slist **l) {
        _cleanup_erase_ char *token = NULL;
        struct curl_slist *n;

        if (!o->aws_sigv4)
                return 0;
        if (!(n = curl_slist_append(*l, "x-amz-content-sha256: " HTTP_SHA256_EMPTY)))
                return -ENOMEM;
        *l = n;
        if (!o->security_token)
                return 0;
        if (asprintf(&token, "x-amz-security-token: %s", o->security_token) < 0)
                return -ENOMEM;
        if (!(n = curl_slist_append(*l, token)))
                return -ENOMEM;
        *l = n;
        return 0;
}

/* The conditional headers for @since and S3's, in *ret (owned by the caller). */
static int conditional_headers(const HttpFetchOptions *o, const HttpValidators *since,
                               struct curl_slist **ret) {
        bool etag = since && since->etag && etag_valid(since->etag, strlen(since->etag));
        struct curl_slist *l = NULL, *n;
        char line[HTTP_ETAG_MAX + 64];

        if (s3_headers(o, &l) < 0)
                goto oom;
        if (etag) {
                (void) snprintf(line, sizeof(line), "If-None-Match: %s", since->etag);
                if (!(n = curl_slist_append(l, line)))
                        goto oom;
                l = n;
        }
        /* S3 gives every object an ETag, which names its bytes; Last-Modified has
         * one-second resolution, and an object written twice in one second would
         * look unchanged to a server that lets If-Modified-Since win (s3rver) */
        if (since && since->last_modified >= 0 && !(o->aws_sigv4 && etag)) {
                time_t t = (time_t) since->last_modified;
                struct tm tm;

                if (!gmtime_r(&t, &tm) ||
                    strftime(line, sizeof(line), "If-Modified-Since: %a, %d %b %Y %H:%M:%S GMT", &tm) == 0)
                        goto done;
                if (!(n = curl_slist_append(l, line)))
                        goto oom;
                l = n;
        }
done:
        *ret = l;
        return 0;
oom:
        curl_slist_free_all(l);
        return -ENOMEM;
}

/* One request; *ret_status is the HTTP status of a transfer that completed. */
static CURLcode perform(HttpFetch *f, long *ret_status) {
        CURLcode cr;

        f->len = 0;
        f->too_big = false;
        f->etag[0] = 0;
        f->etag_bad = false;
        f->stats.requests++;
        cr = curl_easy_perform(f->curl);
        f->stats.bytes += f->len;
        *ret_status = 0;
        if (cr == CURLE_OK)
                (void) curl_easy_getinfo(f->curl, CURLINFO_RESPONSE_CODE, ret_status);
        return cr;
}

/* Performs with retries.  Return: 0 with *ret_status 200 or 304, or an error. */
static int perform_retrying(HttpFetch *f, const char *url, long *ret_status, char **ret_error) {
        uint64_t delay = f->o.retry_delay_usec;
        int r = -EIO;

        for (int64_t attempt = 0; attempt < f->o.attempts; attempt++) {
                long status;
                CURLcode cr;

                if (attempt > 0) {
                        f->stats.retries++;
                        if (curl_backoff_sleep(f->cancel, delay) < 0)
                                return errmsg_set(ret_error, -ECANCELED, "%s: cancelled", url);
                        delay = MIN(delay * 2, HTTP_RETRY_DELAY_MAX_USEC);
                }
                cr = perform(f, &status);
                if (f->too_big || cr == CURLE_FILESIZE_EXCEEDED)
                        return errmsg_set(ret_error, -EFBIG, "%s: larger than %zu bytes", url,
                                          (size_t) f->o.max_size);
                if (cr != CURLE_OK) {
                        r = errmsg_set(ret_error, curl_to_errno(cr), "%s: %s", url, curl_easy_strerror(cr));
                        if (r == -ECANCELED || !curl_transient(cr))
                                return r;
                        continue;
                }
                if (status == 200 || status == 304) {
                        *ret_status = status;
                        return 0;
                }
                r = errmsg_set(ret_error, -EPROTO, "%s: HTTP %ld", url, status);
                if (status != 429 && (status < 500 || status > 599))
                        return r;
        }
        return r;
}

/* The 200 just received into *ret: decoded and checked. */
static int take_body(HttpFetch *f, const char *url, const uint8_t *sha256, HttpBody *ret, char **ret_error) {
        curl_off_t filetime = -1;
        int r;

        if (http_is_bzip2(f->body, f->len)) {
                r = http_bzip2_decode(f->body, f->len, f->o.max_size, &ret->data, &ret->len);
                if (r == -EFBIG)
                        return errmsg_set(ret_error, r, "%s: larger than %zu bytes once decompressed", url,
                                          (size_t) f->o.max_size);
                if (r < 0)
                        return errmsg_set(ret_error, r, "%s: bzip2 body does not decompress: %s", url,
                                          r == -EBADMSG ? "corrupt or cut short" : strerror(-r));
                ret->bzip2 = true;
        } else {
                ret->data = f->body ? TAKE_PTR(f->body) : strdup("");
                if (!ret->data)
                        return -ENOMEM;
                ret->len = f->len;
                f->cap = 0;
        }
        if (sha256) {
                uint8_t md[HTTP_SHA256_LEN];
                unsigned n = 0;

                if (EVP_Digest(ret->data, ret->len, md, &n, EVP_sha256(), NULL) != 1 || n != sizeof(md))
                        return -ENOMEM;
                if (CRYPTO_memcmp(md, sha256, sizeof(md)) != 0)
                        return errmsg_set(ret_error, -EBADMSG,
                                          "%s: SHA-256 of the body differs from the one expected", url);
        }
        if (curl_easy_getinfo(f->curl, CURLINFO_FILETIME_T, &filetime) == CURLE_OK && filetime >= 0)
                ret->validators.last_modified = (int64_t) filetime;
        if (f->etag[0] && !f->etag_bad && !(ret->validators.etag = strdup(f->etag)))
                return -ENOMEM;
        return 0;
}

int http_fetch_get(HttpFetch *f, const char *url, const HttpValidators *since, const uint8_t *sha256,
                   const sunkd_cancel *cancel, HttpBody *ret, char **ret_error) {
        struct curl_slist *headers = NULL;
        uint64_t start = curl_now_usec();
        long status = 0;
        int r;

        *ret = (HttpBody){ .validators = { .last_modified = -1 } };
        f->cancel = cancel;
        r = conditional_headers(&f->o, since, &headers);
        if (r < 0)
                return r;
        if (curl_easy_setopt(f->curl, CURLOPT_URL, url) != CURLE_OK ||
            curl_easy_setopt(f->curl, CURLOPT_HTTPHEADER, headers) != CURLE_OK) {
                curl_slist_free_all(headers);
                return -ENOMEM;
        }
        r = perform_retrying(f, url, &status, ret_error);
        (void) curl_easy_setopt(f->curl, CURLOPT_HTTPHEADER, NULL);
        curl_slist_free_all(headers);
        f->stats.duration_usec += curl_now_usec() - start;
        if (r >= 0 && status == 304 && !since)
                r = errmsg_set(ret_error, -EPROTO, "%s: HTTP 304 to a request that was not conditional",
                               url);
        else if (r >= 0 && status == 304) {
                f->stats.not_modified++;
                ret->not_modified = true;
                /* a 304 may carry the validators again; the copy held stays the same */
                r = since ? http_validators_copy(&ret->validators, since) : 0;
        } else if (r >= 0)
                r = take_body(f, url, sha256, ret, ret_error);
        if (r < 0)
                http_body_done(ret);
        return r;
}
