#include <errno.h>
#include <string.h>

#include "scim-sink.h"
#include "util/macro.h"
#include "util/strbuf.h"

static int formatted_add(void *data, NssMapType t, const void *entry, ScimSpan *ret) {
        CacheFormatted *f = (CacheFormatted *) data + t;
        size_t mark = f->buf.len;
        int r;

        r = cache_formatted_try_add(f, entry);
        if (r < 0)
                return r;
        *ret = (ScimSpan) { mark, (uint32_t) (f->buf.len - mark) };
        return 0;
}

/* Every map's line starts with the entry's name and a colon. */
static const char *formatted_name(void *data, NssMapType t, ScimSpan at, char buf[static SCIM_NAME_MAX + 1]) {
        const CacheFormatted *f = (const CacheFormatted *) data + t;
        const char *line = f->buf.data + at.pos, *colon;

        colon = memchr(line, ':', MIN((size_t) at.len, (size_t) SCIM_NAME_MAX + 1));
        if (!colon)
                return NULL;
        memcpy(buf, line, (size_t) (colon - line));
        buf[colon - line] = 0;
        return buf;
}

static int formatted_cut(void *data, NssMapType t, const ScimSpan *at, size_t n) {
        CacheFormatted *f = (CacheFormatted *) data + t;
        StrBuf *b = &f->buf;
        size_t out = 0, in = 0;

        if (n == 0)
                return 0;
        for (size_t k = 0; k < n; k++) {
                memmove(b->data + out, b->data + in, at[k].pos - in);
                out += at[k].pos - in;
                in = at[k].pos + at[k].len;
        }
        memmove(b->data + out, b->data + in, b->len - in);
        strbuf_truncate(b, out + b->len - in);
        f->entries -= n;
        return 0;
}

ScimSink scim_sink_formatted(CacheFormatted text[static _NSS_MAP_MAX]) {
        return (ScimSink) { formatted_add, formatted_name, formatted_cut, text };
}
