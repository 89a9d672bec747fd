/* Located error messages: "file:line:column: key 'k': reason", the one shape
 * every config reader in sunkd reports in (YAML, nsscache.conf, module
 * sections), built in one place.  Non-logging. */
#pragma once

#include <stdarg.h>

#include "util/macro.h"

/**
 * errloc_format() - "<file>:<line>:<column>: key '<key>': <message>", malloc'd.
 * A @column of 0 leaves ":<column>" out (line-oriented files), a @line of 0
 * leaves the line out too, and a NULL @key leaves "key '...': " out.
 * Return: the string, or NULL when out of memory.
 */
char *errloc_format(const char *file, unsigned line, unsigned column, const char *key, const char *fmt, ...)
        _printf_(5, 6);
char *errloc_formatv(const char *file, unsigned line, unsigned column, const char *key, const char *fmt,
                     va_list ap) _printf_(5, 0);

/**
 * errloc_set() - put errloc_format() into *@ret_error (when @ret_error is not
 * NULL; NULL on OOM) and return -EINVAL, for `return errloc_set(...)` in a
 * parser.
 */
int errloc_set(char **ret_error, const char *file, unsigned line, unsigned column, const char *key,
               const char *fmt, ...) _printf_(6, 7);

/**
 * errmsg_set() - a message without a location into *@ret_error (when not
 * NULL), replacing what was there; NULL there when out of memory.
 * Return: @r, for `return errmsg_set(ret_error, -EBADMSG, ...)`.
 */
int errmsg_set(char **ret_error, int r, const char *fmt, ...) _printf_(3, 4);

/**
 * errloc_join() - a reader that goes on past an error keeps them all: for
 * @r < 0, add @line (taken, may be NULL) to *@all, a line each, and keep in
 * *@first (0 to start with) the first such @r; @r >= 0 adds nothing.
 * Return: @r, or -ENOMEM (then *@all is freed and the reader stops).
 */
int errloc_join(char **all, int *first, int r, char *line);
