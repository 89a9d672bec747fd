/* Python repr() escapes and UTF-8 (py-escape.h). */
#include <errno.h>

#include "util/macro.h"
#include "modutil/py-escape.h"

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int py_escape_decode(const char *s, size_t len, uint32_t *ret_cp, size_t *ret_len) {
        /* the character after the backslash, what it stands for, how many hex digits follow */
        static const struct {
                char c, value;
                int hex;
        } escapes[] = {
                { '\\', '\\', 0 }, { '\'', '\'', 0 }, { '"', '"', 0 }, { 't', '\t', 0 }, { 'n', '\n', 0 },
                { 'r', '\r', 0 },  { 'x', 0, 2 },     { 'u', 0, 4 },   { 'U', 0, 8 },
        };
        uint32_t cp = 0;

        if (len == 0)
                return -EINVAL;
        for (size_t e = 0; e < ELEMENTSOF(escapes); e++) {
                if (s[0] != escapes[e].c)
                        continue;
                if (len - 1 < (size_t) escapes[e].hex)
                        return -EINVAL;
                for (int k = 1; k <= escapes[e].hex; k++) {
                        int v = hex_digit(s[k]);

                        if (v < 0)
                                return -EINVAL;
                        cp = cp << 4 | (uint32_t) v;
                }
                if (escapes[e].hex == 0)
                        cp = (unsigned char) escapes[e].value;
                if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                        return -EINVAL;
                *ret_cp = cp;
                *ret_len = 1 + (size_t) escapes[e].hex;
                return 0;
        }
        return -EINVAL;
}

size_t utf8_encode(uint32_t cp, char *out) {
        if (cp < 0x80) {
                out[0] = (char) cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char) (0xC0 | cp >> 6);
                out[1] = (char) (0x80 | (cp & 0x3F));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char) (0xE0 | cp >> 12);
                out[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
                out[2] = (char) (0x80 | (cp & 0x3F));
                return 3;
        }
        out[0] = (char) (0xF0 | cp >> 18);
        out[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char) (0x80 | (cp & 0x3F));
        return 4;
}
