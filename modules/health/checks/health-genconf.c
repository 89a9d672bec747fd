#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health-genconf.h"
#include "util/macro.h"
#include "util/text-escape.h"

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
        for (size_t i = 0; i < g->n_notes; i++)
                free(g->notes[i]);
        free(g->notes);
        *g = (HealthGenconf){};
}
