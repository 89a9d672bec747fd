/* The http source: fetch, keep a copy of what was applied, map (http-source.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "digest.h"
#include "http-source.h"
#include "fleet/manifest.h"
#include "fleet/map-delta.h"
#include "http-automount.h"
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
static const NssMapType fetch_order[] = { NSS_MAP_PASSWD, NSS_MAP_SHADOW,   NSS_MAP_SSHKEY,
                                          NSS_MAP_GROUP,  NSS_MAP_NETGROUP, NSS_MAP_AUTOMOUNT };
_Static_assert(ELEMENTSOF(fetch_order) == _NSS_MAP_MAX, "every map is fetched");

#define GENERATION_FILE "manifest-generation"
#define MANIFEST_COPY "manifest"

void http_source_run_done(HttpSourceRun *run) {
        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                http_body_done(run->fetched + t);
                free(run->url[t]);
                free(run->delta[t].file);
                free(run->delta_url[t]);
        }
        http_body_done(&run->manifest);
        for (size_t i = 0; i < run->n_am; i++) {
                http_body_done(run->am_fetched + i);
                free(run->am_url[i]);
                free(run->am_file[i]);
        }
        free(run->am_fetched);
        free(run->am_url);
        free(run->am_file);
        run->am_fetched = NULL;
        run->am_url = run->am_file = NULL;
        run->n_am = 0;
}

static char *copy_path(const CacheOptions *opts, const char *name) {
        char *p;

        if (!opts->state_dir || asprintf(&p, "%s/http-%s", opts->state_dir, name) < 0)
                return NULL;
        return p;
}

/* The copy of @name applied last, if it is of @url (NULL: of any): its validators and body. */
static int copy_load(const NsscacheConf *c, const CacheOptions *opts, const char *name, const char *url,
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
        if (len < strlen(COPY_MAGIC "url ") ||
            memcmp(text, COPY_MAGIC "url ", strlen(COPY_MAGIC "url ")) != 0)
                return -ENOENT;
        if (url) {
                if (asprintf(&want, COPY_MAGIC "url %s\n", url) < 0)
                        return -ENOMEM;
                if (len < strlen(want) || memcmp(text, want, strlen(want)) != 0)
                        return -ENOENT;
                p = text + strlen(want);
        } else if (!(p = memchr(text, '\n', len)) ||
                   !(p = memchr(p + 1, '\n', len - (size_t) (p + 1 - text))))
                return -ENOENT;
        else
                p++;
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

void http_source_save(const NsscacheConf *c, const CacheOptions *opts, const HttpSourceRun *run) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (c->map_enabled[t] && run->fetched[t].data && !run->fetched[t].not_modified)
                        copy_save(opts, nss_map_to_string(t), run->url[t], run->fetched + t);
        for (size_t i = 0; i < run->n_am; i++)
                if (run->am_fetched[i].data && !run->am_fetched[i].not_modified)
                        copy_save(opts, run->am_file[i], run->am_url[i], run->am_fetched + i);
        if (!c->manifest_url)
                return;
        if (run->manifest.data && !run->manifest.not_modified)
                copy_save(opts, MANIFEST_COPY, c->manifest_url, &run->manifest);
        generation_save(opts, run->generation);
}

static int on_entry(void *userdata, NssMapType t, const void *entry) {
        return mapper_add_entry(userdata, t, entry);
}

static int on_bad(void *userdata, NssMapType t, size_t line, const char *name) {
        return mapper_reject_line(userdata, t, name);
}

/* @name from @url: the answer, or on a 304 the copy asked about. */
static int fetch_conditional(const NsscacheConf *c, const CacheOptions *opts, HttpFetch *f, const char *name,
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

        return EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) == 1 &&
               CRYPTO_memcmp(md, want, sizeof(md)) == 0;
}

/* @copy brought to map @t by the delta the manifest names, if it is the
 * delta's base; the result must be the map the manifest signs.  Any other
 * outcome but -ENOMEM and -ECANCELED leaves *@ret empty: fetch it whole. */
static int apply_listed_delta(HttpFetch *f, NssMapType t, const HttpSourceRun *run, const HttpBody *copy,
                              const sunkd_cancel *cancel, size_t max, HttpBody *ret, bool *ret_tried) {
        const ManifestDelta *d = run->delta + t;
        _cleanup_(http_body_done) HttpBody delta = {};
        _cleanup_free_ char *why = NULL, *map = NULL;
        size_t len;
        int r;

        *ret_tried = false;
        if (!d->present || !copy->data || copy->len != d->from_size ||
            !sha256_is(copy->data, copy->len, d->from))
                return 0;
        *ret_tried = true;
        r = http_fetch_get(f, run->delta_url[t], NULL, d->sha256, cancel, &delta, &why);
        if (r == -ENOMEM || r == -ECANCELED)
                return r;
        if (r < 0 || delta.len != d->size)
                return 0;
        r = map_delta_apply(copy->data, copy->len, delta.data, delta.len, max, &map, &len, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || len != run->size[t] || !sha256_is(map, len, run->sha256[t]))
                return 0;
        ret->data = TAKE_PTR(map);
        ret->len = len;
        ret->validators.last_modified = -1;
        return 0;
}

/* Map @t as the manifest names it: the copy applied last if it has the
 * digest, else by the delta from that copy, else the file, which must have
 * it (a content-addressed file needs no validators). */
static int fetch_listed(const NsscacheConf *c, const CacheOptions *opts, HttpFetch *f, NssMapType t,
                        HttpSourceRun *run, NsscacheFetchStats *stats, const sunkd_cancel *cancel,
                        HttpBody *ret, char **ret_error) {
        _cleanup_(http_body_done) HttpBody copy = { .validators = { .last_modified = -1 } };
        bool tried;
        int r;

        r = copy_load(c, opts, nss_map_to_string(t), NULL, &copy);
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && copy.len == run->size[t] && sha256_is(copy.data, copy.len, run->sha256[t])) {
                *ret = copy;
                copy = (HttpBody){};
                ret->not_modified = true;
                return 0;
        }
        r = apply_listed_delta(f, t, run, &copy, cancel, (size_t) c->http_max_size, ret, &tried);
        if (r < 0)
                return r;
        if (ret->data) {
                stats->deltas++;
                return 0;
        }
        if (tried)
                stats->delta_misses++;
        r = http_fetch_get(f, run->url[t], NULL, run->sha256[t], cancel, ret, ret_error);
        if (r < 0)
                return r;
        if (ret->len != run->size[t]) {
                http_body_done(ret);
                return errmsg_set(ret_error, -EBADMSG, "%s: %zu bytes, the manifest says %" PRIu64,
                                  run->url[t], ret->len, run->size[t]);
        }
        return 0;
}

/* Each map's URL: beside the manifest, named by it. */
static int listed_urls(const NsscacheConf *c, Manifest *m, HttpSourceRun *run, char **ret_error) {
        const char *slash = strrchr(c->manifest_url, '/');
        int base = slash ? (int) (slash + 1 - c->manifest_url) : 0;

        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                if (!c->map_enabled[t])
                        continue;
                if (!m->map[t].present)
                        return errmsg_set(ret_error, -EBADMSG, "%s: the manifest has no %s map",
                                          c->manifest_url, nss_map_to_string(t));
                if (asprintf(&run->url[t], "%.*s%s", base, c->manifest_url, m->map[t].file) < 0) {
                        run->url[t] = NULL;
                        return -ENOMEM;
                }
                if (m->map[t].delta.present) {
                        run->delta[t] = m->map[t].delta;
                        m->map[t].delta = (ManifestDelta){};
                        if (asprintf(&run->delta_url[t], "%.*s%s", base, c->manifest_url,
                                     run->delta[t].file) < 0) {
                                run->delta_url[t] = NULL;
                                return -ENOMEM;
                        }
                }
                run->want[t] = true;
                run->size[t] = m->map[t].size;
                memcpy(run->sha256[t], m->map[t].sha256, HTTP_SHA256_LEN);
        }
        return 0;
}

/* A manifest signed longer ago than manifest_max_age: a server that was
 * taken over could otherwise hold nodes at the last directory it saw. */
static int check_age(const NsscacheConf *c, const Manifest *m, char **ret_error) {
        int64_t now = (int64_t) time(NULL), max = (int64_t) nsscache_conf_manifest_max_age(c);

        if (max <= 0 || m->time >= now - max)
                return 0;
        return errmsg_set(ret_error, -ESTALE,
                          "%s: generation %" PRIu64 " was signed %" PRId64
                          " s ago, longer than manifest_max_age "
                          "(%" PRId64 " s); refused (is the producer exporting?)",
                          c->manifest_url, m->generation, now - m->time, max);
}

/* The manifest: fetched, verified, not older than the one applied. */
static int fetch_manifest(const NsscacheConf *c, const CacheOptions *opts, HttpFetch *f,
                          const sunkd_cancel *cancel, HttpSourceRun *run, char **ret_error) {
        _cleanup_(manifest_done) Manifest m = {};
        _cleanup_free_ char *why = NULL;
        EVP_PKEY *keys[MANIFEST_KEYS_MAX];
        uint64_t applied;
        size_t bad;
        int r, n;

        n = manifest_keys_public(c->manifest_public_key, keys, &bad);
        if (n < 0)
                return errmsg_set(ret_error, n, "manifest_public_key: not Ed25519 public keys");
        r = fetch_conditional(c, opts, f, MANIFEST_COPY, c->manifest_url, cancel, &run->manifest, ret_error);
        if (r >= 0)
                r = manifest_verify_keys(run->manifest.data, run->manifest.len, keys, (size_t) n, &m, &why);
        manifest_keys_free(keys, (size_t) n);
        if (r < 0 && why)
                return errmsg_set(ret_error, r, "%s: %s", c->manifest_url, why);
        if (r < 0)
                return r;
        r = check_age(c, &m, ret_error);
        if (r < 0)
                return r;
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

typedef struct AutomountFetch {
        const NsscacheConf *c;
        const CacheOptions *opts;
        HttpFetch *f;
        const sunkd_cancel *cancel;
        char **ret_error;
} AutomountFetch;

static int automount_fetch_one(void *userdata, const char *name, const char *url, HttpBody *ret) {
        AutomountFetch *x = userdata;

        return fetch_conditional(x->c, x->opts, x->f, name, url, x->cancel, ret, x->ret_error);
}

/* Map @t as the source has it. */
static int fetch_one(const NsscacheConf *c, const CacheOptions *opts, HttpFetch *f, NssMapType t,
                     const S3Auth *s3, HttpSourceRun *run, NsscacheFetchStats *stats,
                     const sunkd_cancel *cancel, char **ret_error) {
        if (c->manifest_url)
                return fetch_listed(c, opts, f, t, run, stats, cancel, run->fetched + t, ret_error);
        if (t == NSS_MAP_AUTOMOUNT)
                return http_automount_fetch(c, run, automount_fetch_one,
                                            &(AutomountFetch){ c, opts, f, cancel, ret_error }, ret_error);
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
static int http_source_sign(const NsscacheConf *c, S3Auth *s3, HttpFetchOptions *o, char **ret_error) {
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
            asprintf(&msg,
                     "%s (S3 refused the request: check the credentials, s3_region and the bucket's policy)",
                     *ret_error) >= 0) {
                free(*ret_error);
                *ret_error = msg;
        }
}

int http_source_fetch(const NsscacheConf *c, const CacheOptions *opts, const sunkd_cancel *cancel,
                      HttpSourceRun *run, NsscacheFetchStats *stats, char **ret_error) {
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
                int64_t lm;

                if (!c->map_enabled[t])
                        continue;
                r = fetch_one(c, opts, f, t, &s3, run, stats, cancel, ret_error);
                if (r < 0)
                        break;
                lm = run->fetched[t].validators.last_modified;
                if (lm >= 0 && (stats->source_modified < 0 || lm < stats->source_modified))
                        stats->source_modified = lm;
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

int http_source_map(const NsscacheConf *c, const HttpSourceRun *run, Mapper *m, char **ret_error) {
        for (size_t i = 0; i < ELEMENTSOF(fetch_order); i++) {
                NssMapType t = fetch_order[i];
                const HttpBody *b = run->fetched + t;
                char *msg;
                int r;

                if (!c->map_enabled[t])
                        continue;
                if (t == NSS_MAP_AUTOMOUNT) {
                        r = http_automount_map(c, run, m);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = (nsscache_conf_is_s3(c) && !c->manifest_url ? s3_object_parse : map_file_parse)(
                        t, b->data, b->len, on_entry, on_bad, m, ret_error);
                if (r == -EBADMSG && ret_error && *ret_error &&
                    asprintf(&msg, "%s: %s", run->url[t], *ret_error) >= 0) {
                        free(*ret_error);
                        *ret_error = msg;
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The keyed digest of each map's body, in fetch order. */
static int body_digest(const uint8_t key[static DIGEST_KEY_LEN], const HttpBody *b,
                       uint8_t ret[static DIGEST_LEN]) {
        _cleanup_(digest_freep) Digest *md = NULL;
        int r;

        if ((r = digest_new(key, &md)) < 0 || (r = digest_begin(md)) < 0 ||
            (r = digest_feed(md, b->data, b->len)) < 0)
                return r;
        return digest_end(md, ret);
}

int http_source_record(const NsscacheConf *c, const HttpSourceRun *run, FetchRecord *rec) {
        for (size_t i = 0; i < ELEMENTSOF(fetch_order); i++) {
                NssMapType t = fetch_order[i];
                uint8_t d[DIGEST_LEN];
                int r;

                if (!c->map_enabled[t])
                        continue;
                if ((r = body_digest(rec->key, run->fetched + t, d)) < 0 ||
                    (r = fetch_record_add(rec, run->url[t], nss_map_to_string(t), 200, false, d)) < 0)
                        return r;
        }
        for (size_t i = 0; c->map_enabled[NSS_MAP_AUTOMOUNT] && i < run->n_am; i++) {
                uint8_t d[DIGEST_LEN];
                int r;

                if ((r = body_digest(rec->key, run->am_fetched + i, d)) < 0 ||
                    (r = fetch_record_add(rec, run->am_url[i], run->am_file[i], 200, false, d)) < 0)
                        return r;
        }
        return 0;
}

bool http_source_same(const NsscacheConf *c, const HttpSourceRun *run, const FetchRecord *rec) {
        size_t k = 0;

        if (rec->broken)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(fetch_order); i++) {
                NssMapType t = fetch_order[i];
                uint8_t d[DIGEST_LEN];

                if (!c->map_enabled[t])
                        continue;
                if (k >= rec->n || strcmp(rec->requests[k].url, run->url[t]) != 0 ||
                    body_digest(rec->key, run->fetched + t, d) < 0 ||
                    memcmp(d, rec->requests[k].digest, DIGEST_LEN) != 0)
                        return false;
                k++;
        }
        for (size_t i = 0; c->map_enabled[NSS_MAP_AUTOMOUNT] && i < run->n_am; i++) {
                uint8_t d[DIGEST_LEN];

                if (k >= rec->n || strcmp(rec->requests[k].url, run->am_url[i]) != 0 ||
                    body_digest(rec->key, run->am_fetched + i, d) < 0 ||
                    memcmp(d, rec->requests[k].digest, DIGEST_LEN) != 0)
                        return false;
                k++;
        }
        return k == rec->n;
}
