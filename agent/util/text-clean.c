/* Cleaning outside text for one line of a reason or a log. */
#include <string.h>

#include "text-clean.h"

/* The length of the valid UTF-8 sequence of two bytes or more at @p (of @n
 * bytes), or 0. */
static size_t utf8_seq(const unsigned char *p, size_t n) {
        size_t k;

        if (*p < 0xc2 || *p > 0xf4)
                return 0;
        k = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
        if (k > n)
                return 0;
        for (size_t i = 1; i < k; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        return k;
}

void text_append_clean_n(char *out, size_t size, size_t *len, const char *s, size_t n) {
        const unsigned char *p = (const unsigned char *) (s ?: ""), *end = p + (s ? n : 0);

        if (size == 0)
                return;
        while (p < end && *len + 1 < size) {
                size_t k = utf8_seq(p, (size_t) (end - p));

                if (k > 1) {
                        if (*len + k + 1 > size)
                                break;
                        memcpy(out + *len, p, k);
                        *len += k;
                        p += k;
                        continue;
                }
                out[(*len)++] = *p >= 0x20 && *p < 0x7f ? (char) *p : '?';
                p++;
        }
        out[*len] = '\0';
}

void text_append_clean(char *out, size_t size, size_t *len, const char *s) {
        text_append_clean_n(out, size, len, s, s ? strlen(s) : 0);
}
