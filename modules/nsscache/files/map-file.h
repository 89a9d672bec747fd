/* Reading a map in nsscache's `files` cache format, as strictly as
 * cache-format.c writes it.
 *
 * A line is taken only if rendering the entry it parses to gives that very
 * line back: no comment or blank line, no leading zero, no "0" where
 * sunkd writes an empty shadow field, the sshkey list exactly as Python's
 * repr() spells it, "x" as the passwd and group password, a shadow
 * password that is not empty.  Any other line is handed to @bad and
 * skipped; the rest go on.  A file whose last line has no newline was cut
 * short and is refused as a whole.  Non-logging.
 */
#pragma once

#include <stddef.h>

#include "cache/nss-maps.h"

/* Called for each line that parses; the entry's strings live until it returns. */
typedef int (*map_file_entry_fn)(void *userdata, NssMapType t, const void *entry);
/* Called for each line that does not; @name is its first field (may be NULL). */
typedef int (*map_file_bad_fn)(void *userdata, NssMapType t, size_t line, const char *name);

/**
 * map_file_parse() - the lines of map @t in @data (@len bytes).
 * Return: 0; -EBADMSG (the last line has no newline) with *ret_error
 * "MAP: line N: ..."; -ENOMEM; or what a callback returned.
 */
int map_file_parse(NssMapType t, const char *data, size_t len, map_file_entry_fn on_entry,
                   map_file_bad_fn on_bad, void *userdata, char **ret_error);
