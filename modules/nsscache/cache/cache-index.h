/* libnss-cache index files (.ixname, .ixuid, .ixgid) for a rendered map.  Non-logging. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nss-maps.h"
#include "util/strbuf.h"

typedef struct CacheIndexSpec {
        const char *suffix; /* appended to the data file's name: ".ixname" */
        unsigned field;     /* colon-separated field of each line that is the key */
} CacheIndexSpec;

/**
 * cache_index_specs() - the indexes nsscache writes for map @t.
 * passwd: name, uid; group: name, gid; shadow and sshkey: name.
 * Return: how many, with the table in *ret (static, read-only).
 */
size_t cache_index_specs(NssMapType t, const CacheIndexSpec **ret);

/**
 * cache_index_build() - build the index over field @field of rendered data.
 * @data, @len: the map exactly as it will be written
 * @field:      0 for the name, 2 for the uid or gid
 *
 * One record per line of @data: the key, NUL, the line's BYTE offset in
 * decimal, NUL, NUL padding, '\n'; all records have the same width; records
 * are sorted by strcmp() of the key.  If a key repeats, the last line wins,
 * as in nsscache.  Empty @data gives an empty index.
 *
 * Return: 0 with the malloc'ed index in *ret (NULL when empty) and *ret_len,
 * -EINVAL if a line lacks the field or holds a NUL, -ENOMEM.
 */
int cache_index_build(const char *data, size_t len, unsigned field, char **ret, size_t *ret_len);

/* cache_index_build() for data that arrives in pieces (a file read in
 * chunks): memory holds the keys and a record per line, never the data. */
typedef struct CacheIndexBuilder {
        unsigned field;
        StrBuf keys; /* every line's key, back to back */
        struct IndexRecord *recs;
        size_t n, cap;
        uint64_t pos;        /* offset of the next byte fed */
        uint64_t line_start; /* of the line being fed */
        size_t key_start;    /* its key's start in keys */
        unsigned colons;     /* ':' seen in it so far */
        bool in_line, key_done;
} CacheIndexBuilder;

void cache_index_builder_init(CacheIndexBuilder *b, unsigned field);
void cache_index_builder_done(CacheIndexBuilder *b);

/** cache_index_feed() - the next @n bytes of the data.  Return: 0, -EINVAL (a NUL, or a line without the
 * field), -ENOMEM. */
int cache_index_feed(CacheIndexBuilder *b, const char *p, size_t n);

/**
 * cache_index_finish() - after the last byte: the index, appended to @out
 * and, if @fd >= 0, written to @fd a chunk at a time (leaving @out empty).
 * Return: 0 with its length in *ret_len (0: no lines, nothing written),
 * -EINVAL, -ENOMEM, or a write error.
 */
int cache_index_finish(CacheIndexBuilder *b, int fd, StrBuf *out, uint64_t *ret_len);

/**
 * cache_index_lookup() - find @key the way libnss-cache does (bsearch, strcmp).
 * Return: 1 and the offset in *ret_offset, 0 if absent, -EINVAL if @index is malformed.
 */
int cache_index_lookup(const char *index, size_t len, const char *key, uint64_t *ret_offset);
