#include <errno.h>
#include <string.h>

#include "scim-sink.h"
#include "util/macro.h"
#include "util/strbuf.h"

static int formatted_add(void *data, NssMapType t, const void *entry, ScimSpan *ret) {
        CacheFormatted *f = (CacheFormatted *) data + t;
        uint64_t mark = cache_formatted_size(f);
        int r;

        r = cache_formatted_try_add(f, entry);
        if (r < 0)
                return r;
        *ret = (ScimSpan) { mark, (uint32_t) (cache_formatted_size(f) - mark) };
        return 0;
}

/* Every map's line starts with the entry's name and a colon. */
static const char *formatted_name(void *data, NssMapType t, ScimSpan at, char buf[static SCIM_NAME_MAX + 1]) {
        CacheFormatted *f = (CacheFormatted *) data + t;
        char line[SCIM_NAME_MAX + 1];
        const char *colon;
        ssize_t n;

        n = cache_formatted_read(f, at.pos, line, MIN((size_t) at.len, sizeof(line)));
        if (n <= 0)
                return NULL;
        colon = memchr(line, ':', (size_t) n);
        if (!colon)
                return NULL;
        memcpy(buf, line, (size_t) (colon - line));
        buf[colon - line] = 0;
        return buf;
}

static int formatted_cut(void *data, NssMapType t, const ScimSpan *at, size_t n) {
        return cache_formatted_cut((CacheFormatted *) data + t, at, n);
}

ScimSink scim_sink_formatted(CacheFormatted text[static _NSS_MAP_MAX]) {
        return (ScimSink) { formatted_add, formatted_name, formatted_cut, text };
}
