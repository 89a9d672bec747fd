/* Located error messages. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/errloc.h"

char *errloc_formatv(const char *file, unsigned line, unsigned column, const char *key, const char *fmt,
                     va_list ap) {
        _cleanup_free_ char *msg = NULL;
        char pos[2 * DECIMAL_STR_MAX(unsigned) + 3] = "";
        char *s;

        if (vasprintf(&msg, fmt, ap) < 0)
                return NULL;
        if (line > 0 && column > 0)
                snprintf(pos, sizeof(pos), ":%u:%u", line, column);
        else if (line > 0)
                snprintf(pos, sizeof(pos), ":%u", line);
        if (asprintf(&s, "%s%s: %s%s%s%s", file ?: "<input>", pos, key ? "key '" : "", key ?: "",
                     key ? "': " : "", msg) < 0)
                return NULL;
        return s;
}

char *errloc_format(const char *file, unsigned line, unsigned column, const char *key, const char *fmt,
                    ...) {
        va_list ap;
        char *s;

        va_start(ap, fmt);
        s = errloc_formatv(file, line, column, key, fmt, ap);
        va_end(ap);
        return s;
}

int errloc_set(char **ret_error, const char *file, unsigned line, unsigned column, const char *key,
               const char *fmt, ...) {
        va_list ap;

        if (!ret_error)
                return -EINVAL;
        va_start(ap, fmt);
        *ret_error = errloc_formatv(file, line, column, key, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

int errmsg_set(char **ret_error, int r, const char *fmt, ...) {
        va_list ap;

        if (ret_error) {
                free(*ret_error);
                va_start(ap, fmt);
                if (vasprintf(ret_error, fmt, ap) < 0)
                        *ret_error = NULL;
                va_end(ap);
        }
        return r;
}

int errloc_join(char **all, int *first, int r, char *line) {
        char *joined;

        if (r >= 0) {
                free(line);
                return r;
        }
        if (r == -ENOMEM) {
                free(line);
                *all = mfree(*all);
                return -ENOMEM;
        }
        if (*first >= 0)
                *first = r;
        if (!line)
                return r;
        if (!*all) {
                *all = line;
                return r;
        }
        joined = malloc(strlen(*all) + 1 + strlen(line) + 1);
        if (!joined) {
                free(line);
                *all = mfree(*all);
                return -ENOMEM;
        }
        stpcpy(stpcpy(stpcpy(joined, *all), "\n"), line);
        free(line);
        free(*all);
        *all = joined;
        return r;
}
