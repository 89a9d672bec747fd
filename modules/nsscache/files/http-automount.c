/* The automount map from nsscache's http source (its
 * GetAutomountMasterMap() and GetAutomountMap()): auto.master at
 * http_automount_base_url, then each map a line of it names, at its
 * location resolved against that URL, all in nsscache's automount file
 * format ("key [options] location", blank-separated; blank lines and
 * comments skipped).  Non-logging. */
#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dupset.h"
#include "http-automount.h"
#include "mapper-internal.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"

/* The maps auto.master may name: a request each. */
#define HTTP_AUTOMOUNT_MAPS_MAX 1000
#define FIELDS_MAX 3

/* Room for one more element of @size at index @n of *@a (grown one at a time: a few hundred at most). */
static bool grow(void *a, size_t n, size_t size) {
        void *g = reallocarray(*(void **) a, n + 1, size);

        if (!g)
                return false;
        *(void **) a = g;
        return true;
}

static void curl_url_cleanupp(CURLU **u) {
        curl_url_cleanup(*u);
}

int http_automount_resolve(const char *base, const char *rel, char **ret) {
        _cleanup_(curl_url_cleanupp) CURLU *u = curl_url();
        _cleanup_free_ char *scheme = NULL;
        char *url = NULL;

        if (!u)
                return -ENOMEM;
        if (curl_url_set(u, CURLUPART_URL, base, 0) != CURLUE_OK ||
            curl_url_set(u, CURLUPART_URL, rel, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
            (!streq(scheme, "http") && !streq(scheme, "https")) ||
            curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK)
                return -EINVAL;
        *ret = strdup(url);
        curl_free(url);
        return *ret ? 0 : -ENOMEM;
}

/* The blank-separated fields of @line (split in place, as Python's split()):
 * their count, FIELDS_MAX + 1 for more. */
static size_t fields(char *line, char *f[static FIELDS_MAX]) {
        size_t n = 0;

        for (char *p = line + strspn(line, " \t\r"); *p; p += strspn(p, " \t\r")) {
                char *e = p + strcspn(p, " \t\r");

                if (n == FIELDS_MAX)
                        return FIELDS_MAX + 1;
                f[n++] = p;
                if (*e)
                        *e++ = 0;
                p = e;
        }
        return n;
}

/* Calls @fn for each line of @data that is not blank or a comment, in a copy. */
static int each_line(const char *data, size_t len, int (*fn)(char *line, void *ud), void *ud) {
        for (size_t pos = 0; pos < len;) {
                const char *nl = memchr(data + pos, '\n', len - pos);
                size_t n = (nl ? (size_t) (nl - data) : len) - pos;
                _cleanup_free_ char *line = strndup(data + pos, n);
                int r;

                if (!line)
                        return -ENOMEM;
                pos += n + 1;
                if (n == 0 || line[0] == '#')
                        continue;
                if (memchr(data + pos - n - 1, 0, n)) {
                        r = fn(NULL, ud); /* a NUL: a bad line */
                        if (r < 0)
                                return r;
                        continue;
                }
                r = fn(line, ud);
                if (r < 0)
                        return r;
        }
        return 0;
}

typedef struct Fetching {
        const NsscacheConf *c;
        HttpSourceRun *run;
        http_automount_fetch_fn fetch;
        void *userdata;
        char **ret_error;
} Fetching;

static int fetch_line(char *line, void *ud) {
        Fetching *x = ud;
        HttpSourceRun *run = x->run;
        _cleanup_free_ char *file = NULL, *url = NULL;
        char *f[FIELDS_MAX];
        size_t k;
        int r;

        if (!line || fields(line, f) != 2 || mapper_automount_file(f[0], &file) < 0 ||
            http_automount_resolve(x->c->http_url[NSS_MAP_AUTOMOUNT], f[1], &url) < 0)
                return 0; /* rejected when mapped */
        for (k = 0; k < run->n_am; k++)
                if (streq(run->am_file[k], file))
                        return 0;
        if (run->n_am >= HTTP_AUTOMOUNT_MAPS_MAX)
                return errmsg_set(x->ret_error, -EFBIG, "%s: auto.master names more than %d maps",
                                  run->url[NSS_MAP_AUTOMOUNT], HTTP_AUTOMOUNT_MAPS_MAX);
        if (!grow(&run->am_fetched, run->n_am, sizeof(HttpBody)) ||
            !grow(&run->am_url, run->n_am, sizeof(char *)) ||
            !grow(&run->am_file, run->n_am, sizeof(char *)))
                return -ENOMEM;
        run->am_fetched[k] = (HttpBody){ .validators = { .last_modified = -1 } };
        run->am_url[k] = TAKE_PTR(url);
        run->am_file[k] = TAKE_PTR(file);
        run->n_am++;
        r = x->fetch(x->userdata, run->am_file[k], run->am_url[k], run->am_fetched + k);
        return r;
}

int http_automount_fetch(const NsscacheConf *c, HttpSourceRun *run, http_automount_fetch_fn fetch,
                         void *userdata, char **ret_error) {
        const HttpBody *master = run->fetched + NSS_MAP_AUTOMOUNT;
        Fetching x = { c, run, fetch, userdata, ret_error };
        int r;

        r = http_automount_resolve(c->http_url[NSS_MAP_AUTOMOUNT], NSS_AUTOMOUNT_MASTER,
                                   &run->url[NSS_MAP_AUTOMOUNT]);
        if (r < 0)
                return r == -ENOMEM
                               ? r
                               : errmsg_set(ret_error, -EINVAL, "%s: cannot resolve auto.master against it",
                                            c->http_url[NSS_MAP_AUTOMOUNT]);
        r = fetch(userdata, NSS_MAP_AUTOMOUNT_COPY, run->url[NSS_MAP_AUTOMOUNT],
                  run->fetched + NSS_MAP_AUTOMOUNT);
        if (r < 0)
                return r;
        return each_line(master->data, master->len, fetch_line, &x);
}

/* ---- mapping -------------------------------------------------------------- */

typedef struct Lines {
        Mapper *m;
        NssAutomount *a;
        char **keys;
        size_t n;
} Lines;

static void lines_done(Lines *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->a[i].key);
                free(l->a[i].options);
                free(l->a[i].location);
        }
        free(l->a);
        free(l->keys);
        *l = (Lines){};
}

/* One line of a map: "key location" or "key options location". */
static int map_line(char *line, void *ud) {
        Lines *l = ud;
        char *f[FIELDS_MAX];
        size_t n = line ? fields(line, f) : 0;

        if (n < 2 || n > 3)
                return mapper_reject_line(l->m, NSS_MAP_AUTOMOUNT, n > 0 ? f[0] : NULL);
        if (!grow(&l->a, l->n, sizeof(NssAutomount)) || !grow(&l->keys, l->n, sizeof(char *)))
                return -ENOMEM;
        l->a[l->n] = (NssAutomount){ .key = strdup(f[0]),
                                     .options = n == 3 ? strdup(f[1]) : NULL,
                                     .location = strdup(f[n - 1]) };
        l->keys[l->n] = l->a[l->n].key;
        l->n++;
        return l->a[l->n - 1].key && l->a[l->n - 1].location && (n == 2 || l->a[l->n - 1].options) ? 0
                                                                                                   : -ENOMEM;
}

/* The lines of one map into @file; a key held twice is rejected for both. */
static int map_one(Mapper *m, const char *file, const HttpBody *b, size_t *ret_n) {
        _cleanup_(lines_done) Lines l = { .m = m };
        _cleanup_free_ bool *bad = NULL;
        size_t n = 0;
        int r;

        r = each_line(b->data, b->len, map_line, &l);
        if (r < 0)
                return r;
        bad = calloc(l.n + 1, sizeof(bool));
        if (!bad)
                return -ENOMEM;
        r = dupset_mark_contested(l.keys, l.n, bad);
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                if (bad[i]) {
                        r = mapper_reject_name(m, MAP_REJECT_DUP_NAME, NSS_MAP_AUTOMOUNT, l.a[i].key, -1);
                        continue;
                }
                l.a[i].map = (char *) file;
                r = mapper_add_entry(m, NSS_MAP_AUTOMOUNT, l.a + i);
                l.a[i].map = NULL;
                n++;
        }
        *ret_n = n;
        return r;
}

int http_automount_map(const NsscacheConf *c, const HttpSourceRun *run, Mapper *m) {
        const HttpBody *master = run->fetched + NSS_MAP_AUTOMOUNT;
        _cleanup_(lines_done) Lines l = { .m = m };
        _cleanup_free_ char **files = NULL;
        _cleanup_free_ bool *bad = NULL;
        int r;

        r = each_line(master->data, master->len, map_line, &l);
        if (r < 0)
                return r;
        files = calloc(l.n + 1, sizeof(char *));
        bad = calloc(l.n + 1, sizeof(bool));
        if (!files || !bad)
                return -ENOMEM;
        /* auto.master: "mountpoint location", the location a map's file beside it */
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                if (l.a[i].options) {
                        r = mapper_reject_line(m, NSS_MAP_AUTOMOUNT, l.a[i].key);
                        l.keys[i] = NULL;
                } else if ((r = mapper_automount_file(l.a[i].key, files + i)) == -EINVAL) {
                        r = mapper_reject_name(m, MAP_REJECT_BAD_NAME, NSS_MAP_AUTOMOUNT, l.a[i].key, -1);
                        l.keys[i] = NULL;
                }
        }
        if (r >= 0)
                r = dupset_mark_contested(l.keys, l.n, bad);
        if (r >= 0)
                r = dupset_mark_contested(files, l.n, bad);
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                _cleanup_free_ char *url = NULL;
                size_t k = run->n_am, given = 0;

                if (!l.keys[i])
                        continue;
                if (bad[i]) {
                        r = mapper_reject_name(m, MAP_REJECT_DUP_NAME, NSS_MAP_AUTOMOUNT, l.a[i].key, -1);
                        continue;
                }
                r = http_automount_resolve(c->http_url[NSS_MAP_AUTOMOUNT], l.a[i].location, &url);
                if (r == -ENOMEM)
                        break;
                for (k = 0; r >= 0 && k < run->n_am; k++)
                        if (streq(run->am_file[k], files[i]) && streq(run->am_url[k], url))
                                break;
                if (r >= 0 && k < run->n_am)
                        r = map_one(m, files[i], run->am_fetched + k, &given);
                if (r == -EINVAL || (r >= 0 && given == 0)) { /* no http(s) map there, or an empty one */
                        r = mapper_reject_name(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_AUTOMOUNT, l.a[i].key, -1);
                        continue;
                }
                if (r >= 0)
                        r = mapper_add_automount_master(m, c, l.a[i].key, files[i]);
        }
        for (size_t i = 0; i < l.n; i++)
                free(files[i]);
        return r;
}
