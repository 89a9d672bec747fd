/* Text from outside (a script's output, a check's detail) made fit for one
 * line of a reason or a log: text_escape() with TEXT_ESCAPE_LINE (whole
 * UTF-8 sequences and printable ASCII kept, every other byte and the
 * backslash as "\xNN"; see text-escape.h). */
#pragma once

#include <stddef.h>

/**
 * text_append_clean() - append @s (NULL = "") to @out, of @size bytes and
 * holding *@len, cleaned; stops before @out is full, never inside an escape
 * or a UTF-8 sequence, and keeps @out NUL-terminated.
 */
void text_append_clean(char *out, size_t size, size_t *len, const char *s);

/** text_append_clean_n() - text_append_clean() of the first @n bytes of @s. */
void text_append_clean_n(char *out, size_t size, size_t *len, const char *s, size_t n);
