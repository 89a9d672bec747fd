/* An INI file as Python's ConfigParser reads nsscache.conf: sections, `key =
 * value` or `key: value`, keys folded to lower case, `#` and `;` comments,
 * [DEFAULT] as the fallback of every section, %(name)s interpolation
 * (BasicInterpolation), then nsscache's stripping of one pair of quotes.
 *
 * What ConfigParser would take and sunkd refuses, each with file and line:
 * continuation lines, duplicate sections and keys, a NUL byte, more than
 * INI_ENTRIES_MAX keys, values past INI_VALUE_MAX once interpolated.
 * Non-logging: errors are returned as messages for the caller to log.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

#define INI_ENTRIES_MAX 512
#define INI_INTERPOLATION_DEPTH 10
#define INI_VALUE_MAX 4096

typedef struct IniEntry {
        char *section; /* as written, "DEFAULT" included */
        char *key;     /* lower case */
        char *value;   /* raw, before interpolation; wiped when freed (it may be a token) */
        unsigned line;
} IniEntry;

typedef struct IniFile {
        IniEntry *entries;
        size_t n;
        const char *fname; /* borrowed: for messages */
} IniFile;

/* Returns NULL for a section the caller accepts, else why not (for the message). */
typedef const char *(*IniSectionCheck)(const char *section);

/**
 * ini_read() - parse @len bytes of @text into @f (whose fname is set).
 * @check: NULL accepts any section.
 * Return: 0, -EINVAL with a located message in *ret_error, or -ENOMEM.
 */
int ini_read(IniFile *f, const char *text, size_t len, IniSectionCheck check, char **ret_error);
void ini_file_done(IniFile *f);

/** ini_lookup() - @key in @section, else in [DEFAULT]; NULL if in neither. */
const IniEntry *ini_lookup(const IniFile *f, const char *section, const char *key);

/**
 * ini_value() - @e's value interpolated, then with one pair of surrounding
 * quotes removed, as nsscache reads it.  Free with erase_and_free().
 */
int ini_value(const IniFile *f, const IniEntry *e, char **ret, char **ret_error);

/** ini_strip() - @s without the blanks ConfigParser strips around names and values (spaces, tabs, a CR); cut
 * in place. */
char *ini_strip(char *s);

/** ini_error() - errloc_format() into *ret_error (replacing it); returns -EINVAL. */
int ini_error(char **ret_error, const char *file, unsigned line, const char *key, const char *fmt, ...)
        _printf_(5, 6);
