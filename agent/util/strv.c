/* String vectors: the shape config lists and argv/envp take. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strv.h"

char **strv_free(char **l) {
        if (l) {
                for (char **p = l; *p; p++)
                        free(*p);
                free(l);
        }
        return NULL;
}

size_t strv_length(char *const *l) {
        size_t n = 0;

        while (l && l[n])
                n++;
        return n;
}

int strv_push(char ***l, char *s) {
        size_t n = strv_length(*l);
        char **c;

        if (!s)
                return -ENOMEM;
        c = realloc(*l, (n + 2) * sizeof(char *));
        if (!c) {
                free(s);
                return -ENOMEM;
        }
        c[n] = s;
        c[n + 1] = NULL;
        *l = c;
        return 0;
}

int strv_extend(char ***l, const char *s) {
        return strv_push(l, strdup(s));
}

int strv_extendf(char ***l, const char *fmt, ...) {
        char *s;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        return strv_push(l, s);
}

bool strv_contains(char *const *l, const char *s) {
        for (size_t i = 0; l && l[i]; i++)
                if (strcmp(l[i], s) == 0)
                        return true;
        return false;
}

char **strv_copy(char *const *l) {
        char **c = calloc(strv_length(l) + 1, sizeof(char *));

        if (!c)
                return NULL;
        for (size_t i = 0; l && l[i]; i++)
                if (!(c[i] = strdup(l[i])))
                        return strv_free(c);
        return c;
}
