/* The http source: fetch, keep a copy of what was applied, map (http-source.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http-source.h"
#include "map-file.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/strbuf.h"

#define COPY_MAGIC "sunkd-http-copy 1\n"
#define COPY_HEADER_MAX 4096

/* passwd before shadow and sshkey: their entries need its claims. */
static const NssMapType fetch_order[] = { NSS_MAP_PASSWD, NSS_MAP_SHADOW, NSS_MAP_SSHKEY, NSS_MAP_GROUP };

void http_source_run_done(HttpSourceRun *run) {
        for (size_t t = 0; t < _NSS_MAP_MAX; t++)
                http_body_done(run->fetched + t);
}

static char *copy_path(const CacheOptions *opts, NssMapType t) {
        char *p;

        if (!opts->state_dir || asprintf(&p, "%s/http-%s", opts->state_dir, nss_map_to_string(t)) < 0)
                return NULL;
        return p;
}

/* The copy of map @t applied last, if it is of @url: its validators and body. */
static int copy_load(const ScimConfig *c, const CacheOptions *opts, NssMapType t, const char *url, HttpBody *ret) {
        _cleanup_free_ char *path = copy_path(opts, t), *text = NULL, *want = NULL;
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

static void copy_save(const ScimConfig *c, const CacheOptions *opts, NssMapType t, const HttpBody *b) {
        _cleanup_free_ char *path = copy_path(opts, t);
        _cleanup_free_ char *data = NULL;
        StrBuf s = {};
        size_t len = 0;

        if (!path)
                return;
        strbuf_puts(&s, COPY_MAGIC "url ");
        strbuf_puts(&s, c->http_url[t]);
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

void http_source_save(const ScimConfig *c, const CacheOptions *opts, const HttpSourceRun *run) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (c->map_enabled[t] && run->fetched[t].data && !run->fetched[t].not_modified)
                        copy_save(c, opts, t, run->fetched + t);
}

static int on_entry(void *userdata, NssMapType t, const void *entry) {
        return scim_map_add_entry(userdata, t, entry);
}

static int on_bad(void *userdata, NssMapType t, size_t line, const char *name) {
        return scim_map_reject_line(userdata, t, name);
}

/* Map @t: the answer, or on a 304 the copy asked about. */
static int fetch_one(const ScimConfig *c, const CacheOptions *opts, HttpFetch *f, NssMapType t,
                     const sunkd_cancel *cancel, HttpBody *ret, char **ret_error) {
        _cleanup_(http_body_done) HttpBody copy = { .validators = { .last_modified = -1 } };
        bool have_copy;
        int r;

        r = copy_load(c, opts, t, c->http_url[t], &copy);
        if (r == -ENOMEM)
                return r;
        have_copy = r >= 0 && (copy.validators.last_modified >= 0 || copy.validators.etag);
        r = http_fetch_get(f, c->http_url[t], have_copy ? &copy.validators : NULL, NULL, cancel, ret, ret_error);
        if (r < 0)
                return r;
        if (ret->not_modified) {
                ret->data = TAKE_PTR(copy.data);
                ret->len = copy.len;
        }
        return 0;
}

int http_source_fetch(const ScimConfig *c, const CacheOptions *opts, ScimMapper *m, const sunkd_cancel *cancel,
                      HttpSourceRun *run, ScimFetchStats *stats, char **ret_error) {
        _cleanup_(http_fetch_freep) HttpFetch *f = NULL;
        const HttpFetchOptions o = {
                .proxy = c->http_proxy,
                .ca_file = c->ca_file,
                .tls_verify = c->tls_verify,
                .timeout_usec = c->timeout_usec,
                .max_size = c->http_max_size,
                .attempts = c->http_retry_max,
                .retry_delay_usec = c->http_retry_delay_usec,
        };
        int r;

        stats->source_modified = -1;
        r = http_fetch_new(&o, &f);
        for (size_t i = 0; i < ELEMENTSOF(fetch_order) && r >= 0; i++) {
                NssMapType t = fetch_order[i];
                HttpBody *b = run->fetched + t;
                int64_t lm;

                if (!c->map_enabled[t])
                        continue;
                r = fetch_one(c, opts, f, t, cancel, b, ret_error);
                if (r < 0)
                        break;
                lm = b->validators.last_modified;
                if (lm >= 0 && (stats->source_modified < 0 || lm < stats->source_modified))
                        stats->source_modified = lm;
                r = map_file_parse(t, b->data, b->len, on_entry, on_bad, m, ret_error);
                if (r == -EBADMSG && ret_error && *ret_error) {
                        char *msg;

                        if (asprintf(&msg, "%s: %s", c->http_url[t], *ret_error) >= 0) {
                                free(*ret_error);
                                *ret_error = msg;
                        }
                }
        }
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
