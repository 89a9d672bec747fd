/* A growable byte buffer for building text.
 *
 * Appends never fail at the call site: an allocation failure sets the
 * sticky `oom` flag and later appends do nothing, so a renderer checks once
 * at the end (as with open_memstream's error state) but without stdio's
 * per-call locking and format parsing.  The bytes are NUL-terminated
 * whenever `data` is not NULL (the NUL is not counted).  Non-logging.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct StrBuf {
        char *data;
        size_t len, cap;
        bool oom;
} StrBuf;

/** strbuf_reserve() - room for @n more bytes and a NUL.  Return: false (and oom) on failure. */
bool strbuf_reserve(StrBuf *b, size_t n);

void strbuf_done(StrBuf *b); /* frees the bytes, leaves *b zeroed */

/** strbuf_steal() - the bytes (malloc'ed, NUL-terminated, never NULL unless oom) and their length. */
char *strbuf_steal(StrBuf *b, size_t *ret_len);

static inline void strbuf_append(StrBuf *b, const void *p, size_t n) {
        if (b->cap - b->len <= n && !strbuf_reserve(b, n))
                return;
        memcpy(b->data + b->len, p, n);
        b->len += n;
        b->data[b->len] = 0;
}

static inline void strbuf_puts(StrBuf *b, const char *s) {
        strbuf_append(b, s, strlen(s));
}

static inline void strbuf_putc(StrBuf *b, char c) {
        strbuf_append(b, &c, 1);
}

/** strbuf_put_u64() / strbuf_put_i64() - decimal, as printf's %PRIu64 / %PRIi64. */
void strbuf_put_u64(StrBuf *b, uint64_t v);
void strbuf_put_i64(StrBuf *b, int64_t v);

/** strbuf_truncate() - drop everything past @len bytes. */
void strbuf_truncate(StrBuf *b, size_t len);
