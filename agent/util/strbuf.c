/* Growable text buffer; see strbuf.h. */
#include <stdlib.h>

#include "strbuf.h"

#define STRBUF_MIN 256

bool strbuf_reserve(StrBuf *b, size_t n) {
        size_t cap;
        char *d;

        if (b->oom)
                return false;
        if (b->cap - b->len > n)
                return true;
        if (n > SIZE_MAX / 2 - b->len) {
                b->oom = true;
                return false;
        }
        cap = b->cap ? b->cap : STRBUF_MIN;
        while (cap - b->len <= n)
                cap *= 2;
        d = realloc(b->data, cap);
        if (!d) {
                b->oom = true;
                return false;
        }
        b->data = d;
        b->cap = cap;
        return true;
}

void strbuf_done(StrBuf *b) {
        free(b->data);
        *b = (StrBuf){};
}

char *strbuf_steal(StrBuf *b, size_t *ret_len) {
        char *d;

        if (b->oom || !strbuf_reserve(b, 0)) {
                strbuf_done(b);
                return NULL;
        }
        d = b->data;
        d[b->len] = 0;
        if (ret_len)
                *ret_len = b->len;
        *b = (StrBuf){};
        return d;
}

void strbuf_put_u64(StrBuf *b, uint64_t v) {
        char buf[20];
        size_t i = sizeof(buf);

        do {
                buf[--i] = (char) ('0' + v % 10);
                v /= 10;
        } while (v > 0);
        strbuf_append(b, buf + i, sizeof(buf) - i);
}

void strbuf_put_i64(StrBuf *b, int64_t v) {
        if (v < 0) {
                strbuf_putc(b, '-');
                strbuf_put_u64(b, -(uint64_t) v);
        } else
                strbuf_put_u64(b, (uint64_t) v);
}

void strbuf_truncate(StrBuf *b, size_t len) {
        if (len < b->len) {
                b->len = len;
                b->data[len] = 0;
        }
}
