/* One file over HTTP(S) into memory: conditional, bounded, checked.
 *
 * What nsscache's `http` source does for each map, and what any source
 * that fetches whole files needs (a manifest and the files it names): a
 * GET with If-Modified-Since and If-None-Match from the copy applied
 * last, so an unchanged file costs one request and a 304; gzip
 * Content-Encoding decoded by libcurl; a bzip2 body detected by its magic
 * and decompressed, as nsscache does; every byte counted against a cap
 * before it is kept, after decoding too (a small compressed body must not
 * become a large one); optionally the decoded body's SHA-256 compared
 * with an expected one.  One HttpFetch keeps one libcurl handle, so the
 * files of a run share a connection.  Runs on a worker thread and blocks
 * there; never logs.  The host must have called curl_global_init() once.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sunkd/module.h"

#define HTTP_SHA256_LEN 32
#define HTTP_SHA256_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define HTTP_ETAG_MAX 256
#define HTTP_RETRY_DELAY_MAX_USEC (30 * SUNKD_USEC_PER_SEC)

/* What identifies a copy of a file to its server. */
typedef struct HttpValidators {
        int64_t last_modified; /* Last-Modified, seconds since the epoch; -1: none */
        char *etag;            /* the ETag as sent, quotes and W/ included; NULL: none */
} HttpValidators;

void http_validators_init(HttpValidators *v);
void http_validators_done(HttpValidators *v);
/** http_validators_copy() - @dst (initialised) gets a copy of @src.  Return: 0 or -ENOMEM. */
int http_validators_copy(HttpValidators *dst, const HttpValidators *src);

typedef struct HttpFetchOptions {
        const char *proxy;   /* NULL: libcurl's default (the environment's) */
        const char *ca_file; /* NULL: the system's CAs */
        bool tls_verify;
        uint64_t timeout_usec;     /* per request */
        uint64_t max_size;         /* decoded body bytes at most */
        int64_t attempts;          /* requests per file at most, at least 1 */
        uint64_t retry_delay_usec; /* before the second attempt, doubled after each (at most 30 s) */
        /* S3 (s3-auth.h): libcurl signs every request with SigV4 ("aws:amz:REGION:s3") as
         * userpwd ("KEYID:SECRET"), and security_token goes along as x-amz-security-token */
        const char *aws_sigv4;
        const char *userpwd;
        const char *security_token;
} HttpFetchOptions;

typedef struct HttpFetchStats {
        uint64_t requests; /* retries included */
        uint64_t retries;
        uint64_t not_modified; /* answers 304 */
        uint64_t bytes;        /* body bytes received, as decoded by libcurl */
        uint64_t duration_usec;
} HttpFetchStats;

/* One answer. */
typedef struct HttpBody {
        bool not_modified; /* 304: data is NULL */
        char *data;        /* the decoded body, NUL-terminated (the NUL not counted) */
        size_t len;
        bool bzip2;                /* it came bzip2-compressed */
        HttpValidators validators; /* this answer's */
} HttpBody;

void http_body_done(HttpBody *b);

typedef struct HttpFetch HttpFetch;

/** http_fetch_new() - a handle with @o (copied; the strings must outlive it).  Return: 0, -ENOMEM, -EINVAL.
 */
int http_fetch_new(const HttpFetchOptions *o, HttpFetch **ret);
HttpFetch *http_fetch_free(HttpFetch *f);
static inline void http_fetch_freep(HttpFetch **f) {
        if (*f)
                *f = http_fetch_free(*f);
}

/**
 * http_fetch_get() - GET @url into *@ret.
 * @since (optional): the validators of the copy the caller holds; sent as
 *   If-None-Match and If-Modified-Since, and a 304 comes back as
 *   not_modified.
 * @sha256 (optional): the decoded body must have this digest.
 * Connection errors, timeouts, a body cut short, 429 and 5xx are tried
 * again (attempts, retry_delay_usec); other answers but 200 and 304 are
 * not.  Nothing of a failed answer is kept.
 * Return: 0; -EFBIG (over max_size, before or after decoding), -EBADMSG
 * (a bzip2 body that does not decompress, a digest that differs), -EPROTO
 * (another HTTP status), -ETIMEDOUT, -ECONNREFUSED, -EHOSTUNREACH, -EIO,
 * -EPERM (TLS verification), -ECANCELED; *ret_error says which URL and why.
 */
int http_fetch_get(HttpFetch *f, const char *url, const HttpValidators *since, const uint8_t *sha256,
                   const sunkd_cancel *cancel, HttpBody *ret, char **ret_error);

const HttpFetchStats *http_fetch_stats(const HttpFetch *f);

/**
 * http_bzip2_decode() - the bzip2 stream @in, decompressed, at most @max
 * bytes.  Return: 0, -EBADMSG, -EFBIG, -ENOMEM.
 */
int http_bzip2_decode(const char *in, size_t len, size_t max, char **ret, size_t *ret_len);

/** http_is_bzip2() - whether @p starts as a bzip2 stream does ("BZh" 1-9, then a block or the end). */
bool http_is_bzip2(const char *p, size_t len);
