/* Rendering NssMaps as nsscache's `files` cache writes them.  Non-logging. */
#pragma once

#include <stddef.h>
#include <stdio.h>

#include "nss-maps.h"

/**
 * cache_format_render() - render map @t of @m, byte for byte as nsscache would.
 * @m:           the maps; entries are written in array order (nsscache keeps source order)
 * @t:           which map
 * @ret_buf:     the bytes, malloc'ed and NUL-terminated (the NUL is not counted)
 * @ret_len:     their length
 * @ret_entries: number of lines written (an sshkey entry without keys writes none)
 * @ret_error:   on -EINVAL/-EILSEQ, "MAP entry N 'NAME': field F: reason" (malloc'ed)
 *
 * Fields that would break the colon/newline format (a ':' or '\n' in a
 * field, a ',' in a group member, an empty name or member) are refused
 * rather than written.  NULL password fields take nsscache's defaults ("x",
 * shadow "!!"); other NULL strings are empty.
 *
 * Return: 0, -EINVAL or -EILSEQ (invalid UTF-8 in an ssh key) with
 * *ret_error set, or -ENOMEM.
 */
int cache_format_render(const NssMaps *m, NssMapType t, char **ret_buf, size_t *ret_len,
                        size_t *ret_entries, char **ret_error);

/**
 * cache_format_pyrepr() - write Python 3's repr() of the UTF-8 string @s to @f.
 * Return: 0, -EILSEQ if @s is not valid UTF-8, -EIO if @f failed.
 */
int cache_format_pyrepr(FILE *f, const char *s);

/**
 * cache_format_pylist() - write Python 3's repr() of a list of strings @l.
 * Return: as cache_format_pyrepr().
 */
int cache_format_pylist(FILE *f, char *const *l);
