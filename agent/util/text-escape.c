/* The one rule for text from outside (see text-escape.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text-escape.h"

size_t text_escape_utf8_len(const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *) s;
        unsigned char lo = 0x80, hi = 0xbf;
        size_t k;

        if (n == 0)
                return 0;
        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                k = 2;
        else if (p[0] >= 0xe0 && p[0] <= 0xef) {
                k = 3;
                if (p[0] == 0xe0)
                        lo = 0xa0; /* overlong */
                else if (p[0] == 0xed)
                        hi = 0x9f; /* surrogates */
        } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
                k = 4;
                if (p[0] == 0xf0)
                        lo = 0x90; /* overlong */
                else if (p[0] == 0xf4)
                        hi = 0x8f; /* past U+10FFFF */
        } else
                return 0;
        if (k > n || p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < k; i++)
                if (p[i] < 0x80 || p[i] > 0xbf)
                        return 0;
        return k;
}

bool text_escape_utf8_valid(const char *s, size_t n) {
        for (size_t i = 0, k; i < n; i += k)
                if ((k = text_escape_utf8_len(s + i, n - i)) == 0)
                        return false;
        return true;
}

/* How many bytes at @p (of @n) are kept as they are: 0 when the first is
 * escaped. */
static size_t kept(const unsigned char *p, size_t n, unsigned flags) {
        size_t k;

        if (*p < 0x80) {
                if (*p >= 0x20 && *p < 0x7f)
                        return *p == '\\' && (flags & TEXT_ESCAPE_ASCII) ? 0 : 1;
                return (*p == '\n' || *p == '\t') && !(flags & TEXT_ESCAPE_LINE) ? 1 : 0;
        }
        if (flags & TEXT_ESCAPE_ASCII)
                return 0;
        k = text_escape_utf8_len((const char *) p, n);
        /* C1 controls: U+0080..U+009F */
        if (k == 2 && p[0] == 0xc2 && p[1] < 0xa0)
                return 0;
        return k;
}

bool text_escape_needed(const char *s, size_t n, unsigned flags) {
        const unsigned char *p = (const unsigned char *) s;

        for (size_t i = 0, k; i < n; i += k)
                if ((k = kept(p + i, n - i, flags)) == 0)
                        return true;
        return false;
}

size_t text_escape_append(char *out, size_t size, size_t *len, const char *s, size_t n, unsigned flags) {
        static const char hex[] = "0123456789abcdef";
        const unsigned char *p = (const unsigned char *) s;
        size_t i = 0;

        if (size == 0)
                return 0;
        if (*len >= size)
                *len = size - 1;
        while (p && i < n) {
                size_t k = kept(p + i, n - i, flags);

                if (k > 0) {
                        if (*len + k >= size)
                                break;
                        memcpy(out + *len, p + i, k);
                        *len += k;
                        i += k;
                        continue;
                }
                if (*len + 4 >= size)
                        break;
                out[(*len)++] = '\\';
                out[(*len)++] = 'x';
                out[(*len)++] = hex[p[i] >> 4];
                out[(*len)++] = hex[p[i] & 0xf];
                i++;
        }
        out[*len] = '\0';
        return i;
}

char *text_escape(const char *s, size_t n, size_t max, unsigned flags) {
        size_t size, len = 0;
        char *out;

        if (!s)
                n = 0;
        /* no object is larger than PTRDIFF_MAX: more fails as the allocation would */
        size = n <= (PTRDIFF_MAX - 1) / TEXT_ESCAPE_RATIO ? n * TEXT_ESCAPE_RATIO : PTRDIFF_MAX - 1;
        if (max > 0 && size > max)
                size = max;
        out = malloc(size + 1);
        if (!out)
                return NULL;
        (void) text_escape_append(out, size + 1, &len, s, n, flags);
        if (len + 64 < size) {
                char *shrunk = realloc(out, len + 1);
                if (shrunk)
                        out = shrunk;
        }
        return out;
}

char *text_escape_str(const char *s, unsigned flags) {
        return s ? text_escape(s, strlen(s), 0, flags) : NULL;
}

void text_escape_buf(char *buf, size_t size, unsigned flags) {
        size_t n, len = 0;
        char *copy;

        if (size == 0)
                return;
        n = strnlen(buf, size - 1);
        buf[n] = '\0';
        if (!text_escape_needed(buf, n, flags))
                return;
        copy = strndup(buf, n);
        if (!copy) {
                /* Out of memory: cut where the first escape would go, so
                 * what is left is still valid. */
                const unsigned char *p = (const unsigned char *) buf;
                size_t i = 0, k;

                while (i < n && (k = kept(p + i, n - i, flags)) > 0)
                        i += k;
                buf[i] = '\0';
                return;
        }
        (void) text_escape_append(buf, size, &len, copy, n, flags);
        free(copy);
}
