/* NULL-terminated string vectors.  Non-logging. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

char **strv_free(char **l);
size_t strv_length(char *const *l);
/** strv_push() - append @s (taken over) to *l.  On failure @s is freed. */
int strv_push(char ***l, char *s);
int strv_extend(char ***l, const char *s);
/** strv_extendf() - append a formatted string to *l. */
int strv_extendf(char ***l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool strv_contains(char *const *l, const char *s);
char **strv_copy(char *const *l);

static inline void strv_freep(char ***l) {
        strv_free(*l);
}
#define _cleanup_strv_free_ __attribute__((cleanup(strv_freep)))
