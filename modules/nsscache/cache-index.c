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

typedef struct Record {
        const char *key;
        size_t key_len;
        uint64_t offset;
} Record;

static int record_cmp(const void *a, const void *b) {
        const Record *x = a, *y = b;
        int c = memcmp(x->key, y->key, MIN(x->key_len, y->key_len));

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

int cache_index_build(const char *data, size_t len, unsigned field, char **ret, size_t *ret_len) {
        _cleanup_free_ Record *recs = NULL;
        _cleanup_free_ char *out = NULL;
        size_t n = 0, alloc = 0, max_key = 0, max_off = 0, width, u = 0;

        if (!data && len > 0)
                return -EINVAL;
        if (memchr(data ?: "", '\0', len))
                return -EINVAL;

        for (size_t pos = 0; pos < len;) {
                const char *line = data + pos, *nl = memchr(line, '\n', len - pos);
                size_t line_len = nl ? (size_t) (nl - line) : len - pos;
                const char *k = line, *end = line + line_len;

                for (unsigned i = 0; i < field; i++) {
                        k = memchr(k, ':', (size_t) (end - k));
                        if (!k)
                                return -EINVAL;
                        k++;
                }
                const char *kend = memchr(k, ':', (size_t) (end - k));
                if (!kend)
                        kend = end;

                if (n >= alloc) {
                        size_t na = alloc ? alloc * 2 : 64;
                        Record *p = reallocarray(recs, na, sizeof(Record));
                        if (!p)
                                return -ENOMEM;
                        recs = p;
                        alloc = na;
                }
                recs[n++] = (Record) { k, (size_t) (kend - k), pos };
                pos += line_len + 1;
        }

        if (n == 0) {
                *ret = NULL;
                *ret_len = 0;
                return 0;
        }

        qsort(recs, n, sizeof(Record), record_cmp);
        for (size_t i = 0; i < n; i++) {
                if (i + 1 < n && recs[i].key_len == recs[i + 1].key_len &&
                    memcmp(recs[i].key, recs[i + 1].key, recs[i].key_len) == 0)
                        continue; /* a later line has the same key */
                recs[u++] = recs[i];
        }
        n = u;

        for (size_t i = 0; i < n; i++) {
                max_key = MAX(max_key, recs[i].key_len);
                max_off = MAX(max_off, decimal_len(recs[i].offset));
        }
        width = max_key + max_off + 3;
        if (n > SIZE_MAX / width)
                return -ENOMEM;

        out = calloc(n, width); /* the padding is the zero fill */
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                char *p = out + i * width;

                memcpy(p, recs[i].key, recs[i].key_len);
                p += recs[i].key_len + 1;
                p += sprintf(p, "%" PRIu64, recs[i].offset); /* room: max_off + NUL */
                out[(i + 1) * width - 1] = '\n';
        }

        *ret = TAKE_PTR(out);
        *ret_len = n * width;
        return 0;
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
