/* Index files for libnss-cache.
 *
 * libnss-cache (nss_cache.c, _nss_cache_bsearch2) mmaps FILE.ixname (or
 * .ixuid/.ixgid), takes the width of the first line as the width of every
 * record, and bsearch()es the records with strcmp(lookup_key, record): the
 * key ends at the first NUL.  It then sscanf()s the decimal offset after that
 * NUL, fseek()s the data file there and parses one line; if that line is not
 * the entry asked for, it falls back to a linear scan.  Records therefore
 * must all have the same width in BYTES and be sorted by unsigned byte order.
 *
 * nsscache (files.py, WriteIndex) writes each record as
 * '%s\0%s\0%s\n' % (key, offset, '\0' * (maxkey + maxoffset - len(key) - len(offset)))
 * with Python's len() of str, i.e. in characters, and the offsets it records
 * are character counts too.  With a non-ASCII gecos or name that makes the
 * offsets point past the line they name and the records unequal in width,
 * which bsearch cannot cope with.  We count bytes everywhere; for ASCII data
 * the output is identical to nsscache's.
 *
 * uid and gid keys are the decimal text, sorted as text ("1000" < "999"),
 * because libnss-cache looks them up with snprintf("%d") and strcmp.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "cache-index.h"

static const CacheIndexSpec specs_passwd[] = { { ".ixname", 0 }, { ".ixuid", 2 } };
static const CacheIndexSpec specs_group[] = { { ".ixname", 0 }, { ".ixgid", 2 } };
static const CacheIndexSpec specs_name[] = { { ".ixname", 0 } };

static const struct {
        const CacheIndexSpec *specs;
        size_t n;
} index_table[_NSS_MAP_MAX] = {
        [NSS_MAP_PASSWD] = { specs_passwd, ELEMENTSOF(specs_passwd) },
        [NSS_MAP_SHADOW] = { specs_name, ELEMENTSOF(specs_name) },
        [NSS_MAP_GROUP] = { specs_group, ELEMENTSOF(specs_group) },
        [NSS_MAP_SSHKEY] = { specs_name, ELEMENTSOF(specs_name) },
};

size_t cache_index_specs(NssMapType t, const CacheIndexSpec **ret) {
        if ((int) t < 0 || t >= _NSS_MAP_MAX) {
                *ret = NULL;
                return 0;
        }
        *ret = index_table[t].specs;
        return index_table[t].n;
}

typedef struct IndexRecord {
        uint64_t offset;
        uint32_t key_off, key_len; /* in the builder's keys */
} IndexRecord;

void cache_index_builder_init(CacheIndexBuilder *b, unsigned field) {
        *b = (CacheIndexBuilder){ .field = field };
}

void cache_index_builder_done(CacheIndexBuilder *b) {
        strbuf_done(&b->keys);
        free(b->recs);
        cache_index_builder_init(b, b->field);
}

/* The current line's key is complete: it runs from key_start to the end of keys. */
static int add_record(CacheIndexBuilder *b) {
        if (b->keys.oom)
                return -ENOMEM;
        if (b->keys.len > UINT32_MAX)
                return -E2BIG;
        if (b->n >= b->cap) {
                size_t cap = b->cap ? b->cap * 2 : 1024;
                IndexRecord *r = reallocarray(b->recs, cap, sizeof(IndexRecord));

                if (!r)
                        return -ENOMEM;
                b->recs = r;
                b->cap = cap;
        }
        b->recs[b->n++] = (IndexRecord){ b->line_start, (uint32_t) b->key_start,
                                         (uint32_t) (b->keys.len - b->key_start) };
        b->key_done = true;
        return 0;
}

/* Up to the end of the key field of the line being fed, from @p[*i]. */
static int feed_key(CacheIndexBuilder *b, const char *p, size_t n, size_t *i) {
        size_t j = *i;
        int r;

        while (j < n && p[j] != ':' && p[j] != '\n')
                j++;
        if (b->colons == b->field)
                strbuf_append(&b->keys, p + *i, j - *i);
        *i = j;
        if (j == n)
                return 0;
        *i = j + 1;
        if (b->colons == b->field) {
                r = add_record(b);
                if (r < 0)
                        return r;
        } else if (p[j] == ':')
                b->colons++;
        else
                return -EINVAL; /* the line ends before the field */
        if (p[j] == '\n')
                b->in_line = false;
        return 0;
}

int cache_index_feed(CacheIndexBuilder *b, const char *p, size_t n) {
        int r;

        if (n > 0 && memchr(p, '\0', n))
                return -EINVAL;
        for (size_t i = 0; i < n;) {
                if (!b->in_line) {
                        b->in_line = true;
                        b->key_done = false;
                        b->colons = 0;
                        b->line_start = b->pos + i;
                        b->key_start = b->keys.len;
                }
                if (!b->key_done) {
                        r = feed_key(b, p, n, &i);
                        if (r < 0)
                                return r;
                } else {
                        const char *nl = memchr(p + i, '\n', n - i);

                        i = nl ? (size_t) (nl - p) + 1 : n;
                        b->in_line = !nl;
                }
        }
        b->pos += n;
        return 0;
}

static int record_cmp(const void *a, const void *b, void *keys) {
        const IndexRecord *x = a, *y = b;
        const char *k = keys;
        int c = memcmp(k + x->key_off, k + y->key_off, MIN(x->key_len, y->key_len));

        if (c != 0)
                return c;
        if (x->key_len != y->key_len)
                return x->key_len < y->key_len ? -1 : 1;
        /* Equal keys keep file order, so "last wins" below picks the later line. */
        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static size_t decimal_len(uint64_t v) {
        size_t n = 1;

        while (v >= 10) {
                v /= 10;
                n++;
        }
        return n;
}

/* Sorted, one record per key (the last line of a repeated key wins). */
static void sort_records(CacheIndexBuilder *b) {
        size_t u = 0;

        qsort_r(b->recs, b->n, sizeof(IndexRecord), record_cmp, b->keys.data);
        for (size_t i = 0; i < b->n; i++) {
                const IndexRecord *x = b->recs + i, *y = x + 1;

                if (i + 1 < b->n && x->key_len == y->key_len &&
                    memcmp(b->keys.data + x->key_off, b->keys.data + y->key_off, x->key_len) == 0)
                        continue;
                b->recs[u++] = *x;
        }
        b->n = u;
}

static int flush_out(int fd, StrBuf *out) {
        int r;

        if (out->oom)
                return -ENOMEM;
        if (fd < 0 || out->len == 0)
                return 0;
        r = fileio_write_all(fd, out->data, out->len);
        strbuf_truncate(out, 0);
        return r;
}

int cache_index_finish(CacheIndexBuilder *b, int fd, StrBuf *out, uint64_t *ret_len) {
        _cleanup_free_ char *rec = NULL;
        size_t max_key = 0, max_off = 0, width;
        int r;

        if (b->in_line && !b->key_done) {
                if (b->colons != b->field)
                        return -EINVAL; /* the last line ends before the field */
                r = add_record(b);
                if (r < 0)
                        return r;
        }
        b->in_line = false;
        *ret_len = 0;
        if (b->n == 0)
                return 0;
        sort_records(b);
        for (size_t i = 0; i < b->n; i++) {
                max_key = MAX(max_key, (size_t) b->recs[i].key_len);
                max_off = MAX(max_off, decimal_len(b->recs[i].offset));
        }
        width = max_key + max_off + 3;
        if (b->n > UINT64_MAX / width)
                return -E2BIG;
        rec = malloc(width);
        if (!rec)
                return -ENOMEM;
        for (size_t i = 0; i < b->n; i++) {
                const IndexRecord *x = b->recs + i;
                char *p = rec;

                memset(rec, 0, width); /* the padding */
                memcpy(p, b->keys.data + x->key_off, x->key_len);
                p += x->key_len + 1;
                (void) sprintf(p, "%" PRIu64, x->offset); /* room: max_off + NUL */
                rec[width - 1] = '\n';
                strbuf_append(out, rec, width);
                if (out->len >= 64 * 1024 && (r = flush_out(fd, out)) < 0)
                        return r;
        }
        r = flush_out(fd, out);
        if (r < 0)
                return r;
        *ret_len = (uint64_t) b->n * width;
        return 0;
}

int cache_index_build(const char *data, size_t len, unsigned field, char **ret, size_t *ret_len) {
        _cleanup_(cache_index_builder_done) CacheIndexBuilder b = { .field = field };
        StrBuf out = {};
        uint64_t n;
        int r;

        if (!data && len > 0)
                return -EINVAL;
        r = cache_index_feed(&b, data ?: "", len);
        if (r >= 0)
                r = cache_index_finish(&b, -1, &out, &n);
        if (r < 0 || n == 0) {
                strbuf_done(&out);
                *ret = NULL;
                *ret_len = 0;
                return r;
        }
        *ret = strbuf_steal(&out, ret_len);
        return *ret ? 0 : -ENOMEM;
}

int cache_index_lookup(const char *index, size_t len, const char *key, uint64_t *ret_offset) {
        const char *nl;
        size_t width, lo = 0, hi;

        if (len == 0)
                return 0;
        nl = memchr(index, '\n', len);
        if (!nl)
                return -EINVAL;
        width = (size_t) (nl - index) + 1;
        if (len % width != 0)
                return -EINVAL;

        hi = len / width;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const char *rec = index + mid * width;
                const char *knul = memchr(rec, '\0', width);
                int c;

                if (!knul)
                        return -EINVAL;
                c = strcmp(key, rec);
                if (c < 0)
                        hi = mid;
                else if (c > 0)
                        lo = mid + 1;
                else {
                        char *end;
                        unsigned long long v;

                        if (knul + 1 >= rec + width || knul[1] < '0' || knul[1] > '9')
                                return -EINVAL;
                        errno = 0;
                        v = strtoull(knul + 1, &end, 10);
                        if (errno != 0 || *end != '\0')
                                return -EINVAL;
                        *ret_offset = v;
                        return 1;
                }
        }
        return 0;
}
