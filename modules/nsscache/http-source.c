/* The http source: fetch, keep a copy of what was applied, map (http-source.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "http-source.h"
#include "manifest.h"
#include "map-file.h"
#include "s3-auth.h"
#include "s3-object.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/strbuf.h"

#define COPY_MAGIC "sunkd-http-copy 1\n"
#define COPY_HEADER_MAX 4096

/* passwd before shadow and sshkey: their entries need its claims. */
static const NssMapType fetch_order[] = { NSS_MAP_PASSWD, NSS_MAP_SHADOW, NSS_MAP_SSHKEY, NSS_MAP_GROUP };

#define GENERATION_FILE "manifest-generation"
#define MANIFEST_COPY "manifest"

void http_source_run_done(HttpSourceRun *run) {
        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                http_body_done(run->fetched + t);
                free(run->url[t]);
        }
        http_body_done(&run->manifest);
}

static char *copy_path(const CacheOptions *opts, const char *name) {
        char *p;

        if (!opts->state_dir || asprintf(&p, "%s/http-%s", opts->state_dir, name) < 0)
                return NULL;
        return p;
}

/* The copy of @name applied last, if it is of @url: its validators and body. */
static int copy_load(const ScimConfig *c, const CacheOptions *opts, const char *name, const char *url,
                     HttpBody *ret) {
        _cleanup_free_ char *path = copy_path(opts, name), *text = NULL, *want = NULL;
        char etag[HTTP_ETAG_MAX + 1] = "";
        int64_t lm = -1;
        size_t len = 0, head;
        const char *p, *end;

        if (!path)
                return -ENOENT;
        if (fileio_read(path, c->http_max_size + COPY_HEADER_MAX, &text, &len) < 0)
                return -ENOENT;
        if (asprintf(&want, COPY_MAGIC "url %s\n", url) < 0)
                return -ENOMEM;
        if (len < strlen(want) || memcmp(text, want, strlen(want)) != 0)
                return -ENOENT;
        p = text + strlen(want);
        end = memmem(p, len - (size_t) (p - text), "\n\n", 2);
        if (!end || sscanf(p, "last-modified %" SCNd64 "\n", &lm) != 1)
                return -ENOENT;
        p = strchr(p, '\n') + 1;
        if (p < end && sscanf(p, "etag %256s", etag) != 1)
                return -ENOENT;
        head = (size_t) (end + 2 - text);
        ret->len = len - head;
        ret->data = malloc(ret->len + 1);
        if (!ret->data)
                return -ENOMEM;
        memcpy(ret->data, text + head, ret->len);
        ret->data[ret->len] = 0;
        ret->validators.last_modified = lm;
        if (etag[0] && !(ret->validators.etag = strdup(etag)))
                return -ENOMEM;
        return 0;
}

static void copy_save(const CacheOptions *opts, const char *name, const char *url, const HttpBody *b) {
        _cleanup_free_ char *path = copy_path(opts, name);
        _cleanup_free_ char *data = NULL;
        StrBuf s = {};
        size_t len = 0;

        if (!path)
                return;
        strbuf_puts(&s, COPY_MAGIC "url ");
        strbuf_puts(&s, url);
        strbuf_puts(&s, "\nlast-modified ");
        strbuf_put_i64(&s, b->validators.last_modified);
        strbuf_putc(&s, '\n');
        if (b->validators.etag) {
                strbuf_puts(&s, "etag ");
                strbuf_puts(&s, b->validators.etag);
                strbuf_putc(&s, '\n');
        }
        strbuf_putc(&s, '\n');
        strbuf_append(&s, b->data, b->len);
        data = strbuf_steal(&s, &len);
        /* the shadow map's hashes are in it: root's alone */
        if (!data || fileio_write_atomic(path, data, len, 0600, geteuid(), getegid()) < 0)
                (void) unlink(path);
}

/* The generation applied last; 0 before the first. */
static int generation_load(const CacheOptions *opts, uint64_t *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t len;
        int n, r;

        *ret = 0;
        if (!opts->state_dir || asprintf(&path, "%s/%s", opts->state_dir, GENERATION_FILE) < 0)
                return -ENOMEM;
        r = fileio_read(path, 64, &text, &len);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (sscanf(text, "%" SCNu64 "%n", ret, &n) != 1 || text[n + strspn(text + n, "\n")] != 0)
                return -EBADMSG;
        return 0;
}

static void generation_save(const CacheOptions *opts, uint64_t g) {
        _cleanup_free_ char *path = NULL;
        char buf[32];
        int n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", g);

        if (opts->state_dir && asprintf(&path, "%s/%s", opts->state_dir, GENERATION_FILE) >= 0)
                (void) fileio_write_atomic(path, buf, (size_t) n, 0644, geteuid(), getegid());
}

void http_source_save(const ScimConfig *c, const CacheOptions *opts, const HttpSourceRun *run) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (c->map_enabled[t] && run->fetched[t].data && !run->fetched[t].not_modified)
                        copy_save(opts, nss_map_to_string(t), run->url[t], run->fetched + t);
        if (!c->manifest_url)
                return;
        if (run->manifest.data && !run->manifest.not_modified)
                copy_save(opts, MANIFEST_COPY, c->manifest_url, &run->manifest);
        generation_save(opts, run->generation);
}

static int on_entry(void *userdata, NssMapType t, const void *entry) {
        return scim_map_add_entry(userdata, t, entry);
}

static int on_bad(void *userdata, NssMapType t, size_t line, const char *name) {
        return scim_map_reject_line(userdata, t, name);
}

/* @name from @url: the answer, or on a 304 the copy asked about. */
static int fetch_conditional(const ScimConfig *c, const CacheOptions *opts, HttpFetch *f, const char *name,
                             const char *url, const sunkd_cancel *cancel, HttpBody *ret, char **ret_error) {
        _cleanup_(http_body_done) HttpBody copy = { .validators = { .last_modified = -1 } };
        bool have_copy;
        int r;

        r = copy_load(c, opts, name, url, &copy);
        if (r == -ENOMEM)
                return r;
        have_copy = r >= 0 && (copy.validators.last_modified >= 0 || copy.validators.etag);
        r = http_fetch_get(f, url, have_copy ? &copy.validators : NULL, NULL, cancel, ret, ret_error);
        if (r < 0)
                return r;
        if (ret->not_modified) {
                ret->data = TAKE_PTR(copy.data);
                ret->len = copy.len;
        }
        return 0;
}

static bool sha256_is(const char *data, size_t len, const uint8_t want[static HTTP_SHA256_LEN]) {
        uint8_t md[HTTP_SHA256_LEN];
        unsigned n;

        return EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) == 1 && CRYPTO_memcmp(md, want, sizeof(md)) == 0;
}

/* Map @t as the manifest names it: the copy applied last if it has the
 * digest, else the file, which must have it (a content-addressed file
 * needs no validators). */
static int fetch_listed(const ScimConfig *c, const CacheOptions *opts, HttpFetch *f, NssMapType t,
                        const HttpSourceRun *run, const sunkd_cancel *cancel, HttpBody *ret, char **ret_error) {
        _cleanup_(http_body_done) HttpBody copy = { .validators = { .last_modified = -1 } };
        int r;

        r = copy_load(c, opts, nss_map_to_string(t), run->url[t], &copy);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && copy.len == run->size[t] && sha256_is(copy.data, copy.len, run->sha256[t])) {
                *ret = copy;
                copy = (HttpBody) {};
                ret->not_modified = true;
                return 0;
        }
        r = http_fetch_get(f, run->url[t], NULL, run->sha256[t], cancel, ret, ret_error);
        if (r < 0)
                return r;
        if (ret->len != run->size[t]) {
                http_body_done(ret);
                return errmsg_set(ret_error, -EBADMSG, "%s: %zu bytes, the manifest says %" PRIu64, run->url[t],
                                  ret->len, run->size[t]);
        }
        return 0;
}

/* Each map's URL: beside the manifest, named by it. */
static int listed_urls(const ScimConfig *c, const Manifest *m, HttpSourceRun *run, char **ret_error) {
        const char *slash = strrchr(c->manifest_url, '/');
        int base = slash ? (int) (slash + 1 - c->manifest_url) : 0;

        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                if (!c->map_enabled[t])
                        continue;
                if (!m->map[t].present)
                        return errmsg_set(ret_error, -EBADMSG, "%s: the manifest has no %s map", c->manifest_url,
                                          nss_map_to_string(t));
                if (asprintf(&run->url[t], "%.*s%s", base, c->manifest_url, m->map[t].file) < 0) {
                        run->url[t] = NULL;
                        return -ENOMEM;
                }
                run->want[t] = true;
                run->size[t] = m->map[t].size;
                memcpy(run->sha256[t], m->map[t].sha256, HTTP_SHA256_LEN);
        }
        return 0;
}

/* The manifest: fetched, verified, not older than the one applied. */
static int fetch_manifest(const ScimConfig *c, const CacheOptions *opts, HttpFetch *f, const sunkd_cancel *cancel,
                          HttpSourceRun *run, char **ret_error) {
        _cleanup_(evp_pkey_freep) EVP_PKEY *key = NULL;
        _cleanup_(manifest_done) Manifest m = {};
        _cleanup_free_ char *why = NULL;
        uint64_t applied;
        int r;

        r = manifest_key_public(c->manifest_public_key, &key);
        if (r < 0)
                return errmsg_set(ret_error, r, "manifest_public_key: not an Ed25519 public key");
        r = fetch_conditional(c, opts, f, MANIFEST_COPY, c->manifest_url, cancel, &run->manifest, ret_error);
        if (r < 0)
                return r;
        r = manifest_verify(run->manifest.data, run->manifest.len, key, &m, &why);
        if (r < 0)
                return errmsg_set(ret_error, r, "%s: %s", c->manifest_url, why ?: strerror(-r));
        r = generation_load(opts, &applied);
        if (r < 0)
                return errmsg_set(ret_error, r, "%s/%s: %s", opts->state_dir, GENERATION_FILE, strerror(-r));
        if (m.generation < applied)
                return errmsg_set(ret_error, -ESTALE,
                                  "%s: generation %" PRIu64 " is older than %" PRIu64
                                  ", the one applied (an old manifest served again); refused",
                                  c->manifest_url, m.generation, applied);
        run->generation = m.generation;
        return listed_urls(c, &m, run, ret_error);
}

/* Map @t as the source has it. */
static int fetch_one(const ScimConfig *c, const CacheOptions *opts, HttpFetch *f, NssMapType t,
                     const S3Auth *s3, HttpSourceRun *run, const sunkd_cancel *cancel, char **ret_error) {
        if (c->manifest_url)
                return fetch_listed(c, opts, f, t, run, cancel, run->fetched + t, ret_error);
        if (nsscache_conf_is_s3(c) && s3_object_url(c, s3->region, c->s3_object[t], &run->url[t]) < 0)
                return -ENOMEM;
        if (!nsscache_conf_is_s3(c))
                run->url[t] = strdup(c->http_url[t]);
        if (!run->url[t])
                return -ENOMEM;
        return fetch_conditional(c, opts, f, nss_map_to_string(t), run->url[t], cancel, run->fetched + t,
                                 ret_error);
}

/* source = s3: every request signed with this run's credentials (read anew, like a token). */
static int http_source_sign(const ScimConfig *c, S3Auth *s3, HttpFetchOptions *o, char **ret_error) {
        _cleanup_free_ char *why = NULL;
        const char *key;
        int r;

        if (!nsscache_conf_is_s3(c))
                return 0;
        r = s3_auth_load(c, s3, &key, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return errmsg_set(ret_error, r, "%s%s%s", key ?: "", key ? ": " : "", why ?: strerror(-r));
        s3_auth_apply(s3, o);
        return 0;
}

/* A 403 from S3 is the credentials' or the region's, a 404 the bucket's or the key's. */
static void http_source_s3_hint(char **ret_error) {
        char *msg;

        if (!ret_error || !*ret_error)
                return;
        if (strstr(*ret_error, "HTTP 403") &&
            asprintf(&msg, "%s (S3 refused the request: check the credentials, s3_region and the bucket's policy)",
                     *ret_error) >= 0) {
                free(*ret_error);
                *ret_error = msg;
        }
}

int http_source_fetch(const ScimConfig *c, const CacheOptions *opts, ScimMapper *m, const sunkd_cancel *cancel,
                      HttpSourceRun *run, ScimFetchStats *stats, char **ret_error) {
        _cleanup_(http_fetch_freep) HttpFetch *f = NULL;
        HttpFetchOptions o = {
                .proxy = c->http_proxy,
                .ca_file = c->ca_file,
                .tls_verify = c->tls_verify,
                .timeout_usec = c->timeout_usec,
                .max_size = c->http_max_size,
                .attempts = c->http_retry_max,
                .retry_delay_usec = c->http_retry_delay_usec,
        };
        _cleanup_(s3_auth_done) S3Auth s3 = {};
        int r;

        stats->source_modified = -1;
        r = http_source_sign(c, &s3, &o, ret_error);
        if (r >= 0)
                r = http_fetch_new(&o, &f);
        if (r >= 0 && c->manifest_url)
                r = fetch_manifest(c, opts, f, cancel, run, ret_error);
        stats->manifest_generation = run->generation;
        for (size_t i = 0; i < ELEMENTSOF(fetch_order) && r >= 0; i++) {
                NssMapType t = fetch_order[i];
                HttpBody *b = run->fetched + t;
                int64_t lm;

                if (!c->map_enabled[t])
                        continue;
                r = fetch_one(c, opts, f, t, &s3, run, cancel, ret_error);
                if (r < 0)
                        break;
                lm = b->validators.last_modified;
                if (lm >= 0 && (stats->source_modified < 0 || lm < stats->source_modified))
                        stats->source_modified = lm;
                r = (nsscache_conf_is_s3(c) && !c->manifest_url ? s3_object_parse : map_file_parse)(
                        t, b->data, b->len, on_entry, on_bad, m, ret_error);
                if (r == -EBADMSG && ret_error && *ret_error) {
                        char *msg;

                        if (asprintf(&msg, "%s: %s", run->url[t], *ret_error) >= 0) {
                                free(*ret_error);
                                *ret_error = msg;
                        }
                }
        }
        if (r == -EPROTO && nsscache_conf_is_s3(c))
                http_source_s3_hint(ret_error);
        if (f) {
                const HttpFetchStats *s = http_fetch_stats(f);

                stats->requests = s->requests;
                stats->retries = s->retries;
                stats->not_modified = s->not_modified;
                stats->bytes = s->bytes;
                stats->duration_usec = s->duration_usec;
        }
        return r;
}
