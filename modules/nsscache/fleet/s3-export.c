/* export_dir uploaded to a bucket, manifest last (s3-export.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "curl-common.h"
#include "manifest.h"
#include "map-export.h"
#include "files/s3-auth.h"
#include "s3-export.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/fileio.h"
#include "util/macro.h"

typedef struct Uploader {
        const NsscacheConf *c;
        CURL *curl;
        S3Auth auth;
        const sunkd_cancel *cancel;
} Uploader;

static void uploader_done(Uploader *u) {
        if (u->curl)
                curl_easy_cleanup(u->curl);
        s3_auth_done(&u->auth);
}

static size_t discard_cb(char *data, size_t size, size_t nmemb, void *userdata) {
        (void) data;
        (void) userdata;
        return size * nmemb;
}

static int xfer_cb(void *userdata, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d) {
        (void) a, (void) b, (void) c, (void) d;
        return sunkd_cancelled(userdata) ? 1 : 0;
}

/* The handle reset for one request to @url: signed, bounded, answers discarded. */
static CURLcode request_setup(Uploader *u, const char *url) {
        const NsscacheConf *c = u->c;
        CURLcode cr = CURLE_OK;

        curl_easy_reset(u->curl); /* keeps the connection */
#define SET(opt, val)                                                                                       \
        do {                                                                                                \
                if (cr == CURLE_OK)                                                                         \
                        cr = curl_easy_setopt(u->curl, opt, val);                                           \
        } while (0)
        cr = curl_transport_setup(u->curl, &(CurlTransport){ .timeout_usec = c->timeout_usec,
                                                             .tls_verify = c->tls_verify,
                                                             .ca_file = c->ca_file,
                                                             .proxy = c->http_proxy });
        SET(CURLOPT_URL, url);
        SET(CURLOPT_AWS_SIGV4, u->auth.sigv4);
        SET(CURLOPT_USERPWD, u->auth.userpwd);
        SET(CURLOPT_WRITEFUNCTION, discard_cb);
        SET(CURLOPT_NOPROGRESS, 0L);
        SET(CURLOPT_XFERINFOFUNCTION, xfer_cb);
        SET(CURLOPT_XFERINFODATA, (void *) u->cancel);
#undef SET
        return cr;
}

/* @extra, the SHA-256 of the payload @data (libcurl before 8.0 does not send it)
 * and the session token as headers, in *ret. */
static int headers_build(const Uploader *u, const char *extra, const char *data, size_t len,
                         struct curl_slist **ret) {
        _cleanup_erase_ char *token = NULL;
        struct curl_slist *l = NULL, *n;
        uint8_t md[MANIFEST_SHA256_LEN];
        char hex[2 * MANIFEST_SHA256_LEN + 1], line[128];
        unsigned mdlen = 0;

        if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1)
                return -ENOMEM;
        manifest_sha256_hex(md, hex);
        (void) snprintf(line, sizeof(line), "x-amz-content-sha256: %s", hex);
        if (!(l = curl_slist_append(l, line)))
                return -ENOMEM;
        if (extra) {
                if (!(n = curl_slist_append(l, extra))) {
                        curl_slist_free_all(l);
                        return -ENOMEM;
                }
                l = n;
        }
        if (u->auth.token) {
                if (asprintf(&token, "x-amz-security-token: %s", u->auth.token) < 0 ||
                    !(n = curl_slist_append(l, token))) {
                        curl_slist_free_all(l);
                        return -ENOMEM;
                }
                l = n;
        }
        *ret = l;
        return 0;
}

/* One request; *ret_status its HTTP status. */
static int perform(Uploader *u, const char *url, struct curl_slist *headers, long *ret_status,
                   char **ret_error) {
        CURLcode cr;

        cr = curl_easy_setopt(u->curl, CURLOPT_HTTPHEADER, headers);
        if (cr == CURLE_OK)
                cr = curl_easy_perform(u->curl);
        if (cr == CURLE_ABORTED_BY_CALLBACK)
                return errmsg_set(ret_error, -ECANCELED, "%s: cancelled", url);
        if (cr != CURLE_OK)
                return errmsg_set(ret_error, cr == CURLE_OUT_OF_MEMORY ? -ENOMEM : -EIO, "%s: %s", url,
                                  curl_easy_strerror(cr));
        (void) curl_easy_getinfo(u->curl, CURLINFO_RESPONSE_CODE, ret_status);
        return 0;
}

/* Whether the object at @url is there already. */
static int object_exists(Uploader *u, const char *url, bool *ret, char **ret_error) {
        struct curl_slist *h = NULL;
        long status = 0;
        int r;

        if (request_setup(u, url) != CURLE_OK || curl_easy_setopt(u->curl, CURLOPT_NOBODY, 1L) != CURLE_OK ||
            headers_build(u, NULL, "", 0, &h) < 0)
                return -ENOMEM;
        r = perform(u, url, h, &status, ret_error);
        curl_slist_free_all(h);
        if (r < 0)
                return r;
        if (status != 200 && status != 404)
                return errmsg_set(ret_error, -EPROTO, "%s: HEAD answered HTTP %ld", url, status);
        *ret = status == 200;
        return 0;
}

/* PUT @data at @url.  The body is given as POST fields so that libcurl signs its SHA-256. */
static int object_put(Uploader *u, const char *url, const char *data, size_t len, char **ret_error) {
        struct curl_slist *h = NULL, *n;
        long status = 0;
        int r;

        if (request_setup(u, url) != CURLE_OK ||
            curl_easy_setopt(u->curl, CURLOPT_CUSTOMREQUEST, "PUT") != CURLE_OK ||
            curl_easy_setopt(u->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) len) != CURLE_OK ||
            curl_easy_setopt(u->curl, CURLOPT_POSTFIELDS, data) != CURLE_OK ||
            headers_build(u, "Content-Type: application/octet-stream", data, len, &h) < 0)
                return -ENOMEM;
        if (!(n = curl_slist_append(h, "Expect:"))) {
                curl_slist_free_all(h);
                return -ENOMEM;
        }
        h = n;
        r = perform(u, url, h, &status, ret_error);
        curl_slist_free_all(h);
        if (r < 0)
                return r;
        if (status != 200)
                return errmsg_set(
                        ret_error, -EPROTO, "%s: PUT answered HTTP %ld%s", url, status,
                        status == 403 ? " (check the credentials, s3_region and the bucket's policy)" : "");
        return 0;
}

/* export_dir/@name to the bucket, unless it is there. */
static int upload_file(Uploader *u, const char *name, uint64_t *uploaded, char **ret_error) {
        _cleanup_free_ char *url = NULL, *path = NULL, *data = NULL;
        size_t len = 0;
        bool there = false;
        int r;

        if (s3_join(u->c->export_s3_url, name, &url) < 0 || s3_join(u->c->export_dir, name, &path) < 0)
                return -ENOMEM;
        r = object_exists(u, url, &there, ret_error);
        if (r < 0 || there)
                return r;
        r = fileio_read(path, u->c->http_max_size, &data, &len);
        if (r < 0)
                return errmsg_set(ret_error, r, "cannot read '%s': %s", path, strerror(-r));
        r = object_put(u, url, data, len, ret_error);
        if (r >= 0)
                (*uploaded)++;
        return r;
}

/* The manifest uploaded last, as kept in the state directory; NULL: none. */
static char *copy_path(const CacheOptions *opts) {
        char *p;

        if (!opts->state_dir || asprintf(&p, "%s/%s", opts->state_dir, S3_EXPORT_COPY) < 0)
                return NULL;
        return p;
}

static bool already_uploaded(const NsscacheConf *c, const CacheOptions *opts, const char *text, size_t len) {
        _cleanup_free_ char *path = copy_path(opts), *copy = NULL, *want = NULL;
        size_t n = 0;
        int w;

        if (!path || fileio_read(path, MANIFEST_MAX + 4096, &copy, &n) < 0)
                return false;
        w = asprintf(&want, "%s\n", c->export_s3_url);
        if (w < 0)
                return false;
        return n == (size_t) w + len && memcmp(copy, want, (size_t) w) == 0 &&
               memcmp(copy + w, text, len) == 0;
}

static void uploaded_save(const NsscacheConf *c, const CacheOptions *opts, const char *text, size_t len) {
        _cleanup_free_ char *path = copy_path(opts), *data = NULL;
        int n;

        if (!path || (n = asprintf(&data, "%s\n%.*s", c->export_s3_url, (int) len, text)) < 0)
                return;
        if (fileio_write_atomic(path, data, (size_t) n, 0644, geteuid(), getegid()) < 0)
                (void) unlink(path);
}

/* Every file @m names, then the manifest @text. */
static int upload_all(Uploader *u, const Manifest *m, const char *text, size_t len, uint64_t *uploaded,
                      char **ret_error) {
        _cleanup_free_ char *url = NULL;
        int r;

        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                if (!m->map[t].present)
                        continue;
                r = upload_file(u, m->map[t].file, uploaded, ret_error);
                if (r < 0)
                        return r;
        }
        if (s3_join(u->c->export_s3_url, EXPORT_MANIFEST, &url) < 0)
                return -ENOMEM;
        r = object_put(u, url, text, len, ret_error);
        if (r >= 0)
                (*uploaded)++;
        return r;
}

/* export_dir's manifest, checked with the signing key (it names the files to upload). */
static int manifest_load(const NsscacheConf *c, char **ret_text, size_t *ret_len, Manifest *ret,
                         char **ret_error) {
        _cleanup_(evp_pkey_freep) EVP_PKEY *key = NULL;
        _cleanup_free_ char *path = NULL, *why = NULL;
        int r;

        if (s3_join(c->export_dir, EXPORT_MANIFEST, &path) < 0)
                return -ENOMEM;
        r = fileio_read(path, MANIFEST_MAX, ret_text, ret_len);
        if (r < 0)
                return errmsg_set(ret_error, r, "cannot read '%s': %s", path, strerror(-r));
        r = map_export_key_load(c->export_signing_key, &key, ret_error);
        if (r < 0)
                return r;
        r = manifest_verify(*ret_text, *ret_len, key, ret, &why);
        if (r < 0)
                return errmsg_set(ret_error, r, "'%s': %s", path, why ?: strerror(-r));
        return 0;
}

int s3_export(const NsscacheConf *c, const CacheOptions *opts, const sunkd_cancel *cancel,
              uint64_t *ret_uploaded, char **ret_error) {
        _cleanup_(uploader_done) Uploader u = { .c = c, .cancel = cancel };
        _cleanup_(manifest_done) Manifest m = {};
        _cleanup_free_ char *text = NULL, *why = NULL;
        size_t len = 0;
        const char *key;
        int r;

        *ret_uploaded = 0;
        if (!c->export_s3_url || !c->export_dir)
                return 0;
        r = manifest_load(c, &text, &len, &m, ret_error);
        if (r < 0)
                return r;
        if (already_uploaded(c, opts, text, len))
                return 0;
        r = s3_auth_load(c, &u.auth, &key, &why);
        if (r < 0)
                return errmsg_set(ret_error, r, "%s%s%s", key ?: "", key ? ": " : "", why ?: strerror(-r));
        u.curl = curl_easy_init();
        if (!u.curl)
                return -ENOMEM;
        r = upload_all(&u, &m, text, len, ret_uploaded, ret_error);
        if (r < 0)
                return r;
        uploaded_save(c, opts, text, len);
        return 0;
}
