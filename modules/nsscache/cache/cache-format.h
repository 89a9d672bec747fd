/* Rendering NssMaps as nsscache's `files` cache writes them.  Non-logging. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "nss-maps.h"
#include "util/strbuf.h"

/**
 * cache_format_render() - render map @t of @m, byte for byte as nsscache would.
 * @m:           the maps; entries are written in array order (nsscache keeps source order)
 * @t:           which map
 * @ret_buf:     the bytes, malloc'ed and NUL-terminated (the NUL is not counted)
 * @ret_len:     their length
 * @ret_entries: number of lines written (one per entry; an sshkey entry without keys is "name:")
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
int cache_format_render(const NssMaps *m, NssMapType t, char **ret_buf, size_t *ret_len, size_t *ret_entries,
                        char **ret_error);

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

/* One map rendered entry by entry, by a caller that never holds the whole
 * NssMaps: the bytes, line count and error are exactly what
 * cache_format_render() gives for the same entries in the same order.
 * Spilled to a file (cache_formatted_spill()), the bytes go there in
 * chunks of CACHE_FORMATTED_CHUNK, so a map of any size costs one chunk of
 * memory; positions (cache_formatted_size()) count from the file's start. */
typedef struct CacheFormatted {
        NssMapType type;
        StrBuf buf;       /* the map's bytes so far, or those after `spilled` */
        size_t entries;   /* lines written */
        size_t offered;   /* entries offered, the N of "MAP entry N" */
        int error;        /* 0, or -EINVAL/-EILSEQ of the first entry that failed, or a write error */
        char *error_text; /* its message; NULL for a write error (the publisher names the file) */
        int fd;           /* -1, or the file the bytes are spilled to */
        char *path;       /* its name, removed by cache_formatted_done() unless taken */
        uint64_t spilled; /* bytes written to fd */
        size_t chunk;     /* bytes buffered before they are written (CACHE_FORMATTED_CHUNK) */
        uint64_t max;     /* a map larger than this fails with -EFBIG (CACHE_FORMATTED_MAX; 0: none) */
} CacheFormatted;

#define CACHE_FORMATTED_CHUNK (64u * 1024)
/* 100k users with two keys each make a 21 MB sshkey map: 1 GiB is ample,
 * and bounds what a hostile directory can write under files_dir. */
#define CACHE_FORMATTED_MAX (UINT64_C(1) << 30)

void cache_formatted_init(CacheFormatted *f, NssMapType t);

/** cache_formatted_spill() - write @f's bytes to @fd (a new, empty file
 * named @path) from now on; @f owns both.  Call before adding entries. */
void cache_formatted_spill(CacheFormatted *f, int fd, char *path);

/** cache_formatted_size() - the map's length so far, in the file and the buffer. */
static inline uint64_t cache_formatted_size(const CacheFormatted *f) {
        return f->spilled + f->buf.len;
}

/** cache_formatted_flush() - write what the buffer holds to the file (if spilled).  Return: 0 or f->error.
 */
int cache_formatted_flush(CacheFormatted *f);

/** cache_formatted_read() - up to @len bytes at @pos, from the file or the buffer.  Return: the count or
 * negative errno. */
ssize_t cache_formatted_read(CacheFormatted *f, uint64_t pos, void *buf, size_t len);

/* A byte range of a map. */
typedef struct CacheSpan {
        uint64_t pos;
        uint32_t len;
} CacheSpan;

/**
 * cache_formatted_cut() - remove the @n byte ranges @at (ascending, not
 * overlapping, one whole line each) and the @n lines they hold.
 * Return: 0, or a negative errno (also recorded in f->error).
 */
int cache_formatted_cut(CacheFormatted *f, const CacheSpan *at, size_t n);

/**
 * cache_formatted_add() - render one entry (an NssPasswd, NssShadow,
 * NssGroup or NssSshkey, as f->type says) at the end of @f.
 * An entry that cannot be rendered sets f->error and f->error_text, and
 * every later entry is ignored: the map is refused when it is published.
 * Return: 0, or -ENOMEM.
 */
int cache_formatted_add(CacheFormatted *f, const void *entry);

/**
 * cache_formatted_try_add() - cache_formatted_add() for an entry that may be
 * refused on its own: one that cannot be rendered leaves @f as it was (no
 * error recorded, so later entries still go in) and its error is returned.
 * Return: 0, -EINVAL, -EILSEQ or -ENOMEM.
 */
int cache_formatted_try_add(CacheFormatted *f, const void *entry);

/* The longest name of an automount map's file (auto.NAME), suffix aside. */
#define CACHE_AUTOMOUNT_FILE_MAX 200

/** cache_format_automount_file_ok() - whether @name is a file of the automount map: "auto." and 1 to 195 of
 * A-Z a-z 0-9 . _ - (no '/': it stays in files_dir). */
bool cache_format_automount_file_ok(const char *name);

/** cache_format_check() - whether an entry of map @t would render.  Return: as above. */
int cache_format_check(NssMapType t, const void *entry);

/** cache_format_utf8_len() - bytes of the UTF-8 sequence at @s (1 for ASCII), or -EILSEQ. */
int cache_format_utf8_len(const char *s);

/** cache_format_utf8_valid() - whether @s is valid UTF-8 (no overlongs, surrogates, > U+10FFFF). */
bool cache_format_utf8_valid(const char *s);

void cache_formatted_done(CacheFormatted *f); /* frees, closes and removes the file, keeps the type */
