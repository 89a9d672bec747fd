/* The escapes Python's repr() writes in a str, as nsscache's sshkey map
 * holds them: \\ \' \" \t \n \r, \xHH, \uHHHH and \UHHHHHHHH.
 * Non-logging. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/**
 * py_escape_decode() - the escape at @s (just past its backslash; at most
 * @len bytes are read): its code point in *@ret_cp and how many bytes it
 * took in *@ret_len.
 * Return: 0; -EINVAL for an escape repr() does not write, hex digits cut
 * short, a surrogate or a code point past U+10FFFF.
 */
int py_escape_decode(const char *s, size_t len, uint32_t *ret_cp, size_t *ret_len);

/** utf8_encode() - @cp (at most U+10FFFF) as UTF-8 into @out (room for
 * the 1 to 4 bytes it takes); how many bytes. */
size_t utf8_encode(uint32_t cp, char *out);
