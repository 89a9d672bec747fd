#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health-genconf.h"
#include "util/text-escape.h"

int health_genconf_add(HealthGenconf *g, const char *fmt, ...) {
        char *e = NULL;
        va_list ap;
        int n;

        if (g->oom)
                return -ENOMEM;
        if (g->n == g->cap) {
                size_t cap = g->cap ? g->cap * 2 : 16;
                char **p = reallocarray(g->entries, cap, sizeof(*p));

                if (!p)
                        goto oom;
                g->entries = p;
                g->cap = cap;
        }
        va_start(ap, fmt);
        n = vasprintf(&e, fmt, ap);
        va_end(ap);
        if (n < 0)
                goto oom;
        g->entries[g->n++] = e;
        return 0;
oom:
        g->oom = true;
        return -ENOMEM;
}

const char *health_genconf_quote(const char *s, char *buf, size_t size) {
        size_t w = 0;

        if (!text_escape_utf8_valid(s, strlen(s)))
                return NULL;
        for (const unsigned char *p = (const unsigned char *) s;; p++) {
                char esc[8];
                size_t n;

                if (!*p)
                        break;
                if (*p == '"' || *p == '\\')
                        n = (size_t) snprintf(esc, sizeof(esc), "\\%c", *p);
                else if (*p < 0x20 || *p == 0x7f)
                        n = (size_t) snprintf(esc, sizeof(esc), "\\x%02x", *p);
                else
                        n = (size_t) snprintf(esc, sizeof(esc), "%c", *p);
                if (w + n + 3 > size)
                        return NULL;
                memcpy(buf + 1 + w, esc, n);
                w += n;
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
        *g = (HealthGenconf){};
}
