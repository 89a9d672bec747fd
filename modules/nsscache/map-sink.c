#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map-sink.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strbuf.h"

/* The bytes of @s[0..@n) before the first of @stop; @n if none. */
static size_t strcspn_n(const char *s, size_t n, const char *stop) {
        for (size_t i = 0; i < n; i++)
                if (strchr(stop, s[i]))
                        return i;
        return n;
}

static int formatted_add(void *data, NssMapType t, const void *entry, uint64_t *ret_at) {
        CacheFormatted *f = (CacheFormatted *) data + t;
        uint64_t at = cache_formatted_size(f);
        int r;

        r = cache_formatted_try_add(f, entry);
        if (r < 0)
                return r;
        *ret_at = at;
        return 0;
}

/* Every map's line starts with the entry's name and a colon; a netgroup's
 * with its name and a blank, or the newline. */
static const char *formatted_name(void *data, NssMapType t, uint64_t at, char buf[static MAP_NAME_MAX + 1]) {
        CacheFormatted *f = (CacheFormatted *) data + t;
        char line[MAP_NAME_MAX + 1];
        size_t end;
        ssize_t n;

        n = cache_formatted_read(f, at, line, sizeof(line));
        if (n <= 0)
                return NULL;
        end = strcspn_n(line, (size_t) n,
                        t == NSS_MAP_NETGROUP    ? " \n"
                        : t == NSS_MAP_AUTOMOUNT ? "\t"
                                                 : ":");
        if (end == (size_t) n)
                return NULL;
        memcpy(buf, line, end);
        buf[end] = 0;
        return buf;
}

/* The length of the line at @at, its newline included. */
static int line_len(CacheFormatted *f, uint64_t at, uint32_t *ret) {
        char chunk[512];
        uint64_t pos = at;

        for (;;) {
                ssize_t n = cache_formatted_read(f, pos, chunk, sizeof(chunk));
                const char *nl;

                if (n <= 0)
                        return n < 0 ? (int) n : -EINVAL;
                nl = memchr(chunk, '\n', (size_t) n);
                if (nl) {
                        pos += (uint64_t) (nl - chunk) + 1;
                        break;
                }
                pos += (uint64_t) n;
        }
        if (pos - at > UINT32_MAX)
                return -E2BIG;
        *ret = (uint32_t) (pos - at);
        return 0;
}

static int formatted_cut(void *data, NssMapType t, const uint64_t *at, size_t n) {
        CacheFormatted *f = (CacheFormatted *) data + t;
        _cleanup_free_ CacheSpan *spans = NULL;
        int r;

        if (n == 0)
                return 0;
        spans = calloc(n, sizeof(CacheSpan));
        if (!spans)
                return -ENOMEM;
        for (size_t k = 0; k < n; k++) {
                spans[k].pos = at[k];
                r = line_len(f, at[k], &spans[k].len);
                if (r < 0)
                        return r;
        }
        return cache_formatted_cut(f, spans, n);
}

MapSink map_sink_formatted(CacheFormatted text[static _NSS_MAP_MAX]) {
        return (MapSink){ formatted_add, formatted_name, formatted_cut, text };
}
