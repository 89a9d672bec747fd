#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health-genconf.h"
#include "util/macro.h"
#include "util/text-escape.h"

static int append(HealthGenconf *g, char ***v, size_t *n, size_t *cap, const char *fmt, va_list ap)
        _printf_(5, 0);
static int append(HealthGenconf *g, char ***v, size_t *n, size_t *cap, const char *fmt, va_list ap) {
        char *e = NULL;

        if (g->oom)
                return -ENOMEM;
        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 16;
                char **p = reallocarray(*v, c, sizeof(*p));

                if (!p)
                        goto oom;
                *v = p;
                *cap = c;
        }
        if (vasprintf(&e, fmt, ap) < 0)
                goto oom;
        (*v)[(*n)++] = e;
        return 0;
oom:
        g->oom = true;
        return -ENOMEM;
}

int health_genconf_add(HealthGenconf *g, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = append(g, &g->entries, &g->n, &g->cap, fmt, ap);
        va_end(ap);
        return r;
}

int health_genconf_note(HealthGenconf *g, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = append(g, &g->notes, &g->n_notes, &g->cap_notes, fmt, ap);
        va_end(ap);
        return r;
}

/* Whether an entry of @g is named @name: each starts "{name: <name>,". */
static bool name_taken(const HealthGenconf *g, const char *name) {
        size_t n = strlen(name);

        for (size_t i = 0; i < g->n; i++)
                if (strncmp(g->entries[i], "{name: ", 7) == 0 && strncmp(g->entries[i] + 7, name, n) == 0 &&
                    g->entries[i][7 + n] == ',')
                        return true;
        return false;
}

const char *health_genconf_name(const HealthGenconf *g, const char *type, const char *what,
                                char buf[static HEALTH_GENCONF_NAME_MAX + 1]) {
        size_t w = 0, base;
        bool dash = true; /* no '-' first or twice */

        (void) snprintf(buf, HEALTH_GENCONF_NAME_MAX + 1, "%s%s", type, what ? "-" : "");
        w = base = strlen(buf);
        for (const unsigned char *p = (const unsigned char *) (what ?: "");
             *p && w < HEALTH_GENCONF_NAME_MAX; p++) {
                bool word = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                            (*p >= '0' && *p <= '9') || *p == '_';

                if (word || !dash)
                        buf[w++] = word ? (char) *p : *p == '/' || *p == '-' || *p == '.' ? '-' : '_';
                dash = !word && (*p == '/' || *p == '-' || *p == '.');
        }
        while (w > base && buf[w - 1] == '-')
                w--;
        if (w == base && what)
                w += (size_t) snprintf(buf + w, HEALTH_GENCONF_NAME_MAX + 1 - w, "%s", "root");
        buf[MIN(w, (size_t) HEALTH_GENCONF_NAME_MAX)] = 0;
        w = strlen(buf);
        for (unsigned k = 2; name_taken(g, buf) && k < 100000; k++) {
                char tail[8];
                size_t t = (size_t) snprintf(tail, sizeof(tail), "-%u", k);

                w = MIN(w, (size_t) HEALTH_GENCONF_NAME_MAX - t);
                buf[w] = 0;
                strcat(buf, tail);
        }
        return buf;
}

/* The code point of the UTF-8 sequence at @p (valid, as checked before),
 * and its length in *ret_len. */
static uint32_t utf8_decode(const unsigned char *p, size_t *ret_len) {
        if (p[0] < 0x80) {
                *ret_len = 1;
                return p[0];
        }
        if (p[0] < 0xE0) {
                *ret_len = 2;
                return (uint32_t) (p[0] & 0x1F) << 6 | (p[1] & 0x3F);
        }
        if (p[0] < 0xF0) {
                *ret_len = 3;
                return (uint32_t) (p[0] & 0x0F) << 12 | (uint32_t) (p[1] & 0x3F) << 6 | (p[2] & 0x3F);
        }
        *ret_len = 4;
        return (uint32_t) (p[0] & 0x07) << 18 | (uint32_t) (p[1] & 0x3F) << 12 |
               (uint32_t) (p[2] & 0x3F) << 6 | (p[3] & 0x3F);
}

/* What YAML holds only as an escape: what is not c-printable (C0 and C1
 * controls, DEL, the byte order mark, the two non-characters at the end of
 * the BMP) and the line breaks YAML 1.1 folds to a space in a quoted
 * scalar (NEL, U+2028, U+2029). */
static bool yaml_escaped(uint32_t cp) {
        return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
               cp == 0xfeff || cp == 0xfffe || cp == 0xffff;
}

const char *health_genconf_quote(const char *s, char *buf, size_t size) {
        size_t w = 0;

        if (!text_escape_utf8_valid(s, strlen(s)))
                return NULL;
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                char esc[8];
                size_t n, len;
                uint32_t cp = utf8_decode(p, &len);

                if (cp == '"' || cp == '\\')
                        n = (size_t) snprintf(esc, sizeof(esc), "\\%c", (char) cp);
                else if (yaml_escaped(cp) && cp < 0x100)
                        n = (size_t) snprintf(esc, sizeof(esc), "\\x%02x", cp);
                else if (yaml_escaped(cp))
                        n = (size_t) snprintf(esc, sizeof(esc), "\\u%04x", cp);
                else {
                        memcpy(esc, p, len);
                        n = len;
                }
                if (w + n + 3 > size)
                        return NULL;
                memcpy(buf + 1 + w, esc, n);
                w += n;
                p += len;
        }
        if (size < 3)
                return NULL;
        buf[0] = '"';
        buf[w + 1] = '"';
        buf[w + 2] = 0;
        return buf;
}

void health_genconf_clear(HealthGenconf *g) {
        for (size_t i = 0; i < g->n; i++)
                free(g->entries[i]);
        free(g->entries);
        for (size_t i = 0; i < g->n_notes; i++)
                free(g->notes[i]);
        free(g->notes);
        *g = (HealthGenconf){};
}
