/* Where a Mapper's accepted entries go: its one output.
 *
 * The mapper decides who gets a name and an id; a sink holds what it
 * accepted.  An entry accepted early can be displaced by a later, rightful
 * claimant (the incumbent of the published map), so a sink says where each
 * entry went and can cut entries out again when the mapping is finished.
 * The refresh renders each entry at once into the cache files' text
 * (map_sink_formatted()); tests and tools may collect them as NssMaps.
 * Non-logging.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cache/cache-format.h"
#include "cache/nss-maps.h"

#define MAP_NAME_MAX 32

/* Where one accepted entry went in one map: the byte offset of its line of
 * rendered text, or an array index.  MAP_AT_NONE: nothing there. */
#define MAP_AT_NONE UINT64_MAX

typedef struct MapSink {
        /* One accepted entry of map @t, its strings borrowed.  -EINVAL or
         * -EILSEQ: the cache format cannot hold it, nothing was added (the
         * mapper rejects that entry); -ENOMEM. */
        int (*add)(void *data, NssMapType t, const void *entry, uint64_t *ret_at);
        /* The name of the entry at @at, or NULL. */
        const char *(*name)(void *data, NssMapType t, uint64_t at, char buf[static MAP_NAME_MAX + 1]);
        /* Removes the @n entries of map @t at @at, given in the order they were added. */
        int (*cut)(void *data, NssMapType t, const uint64_t *at, size_t n);
        void *data;
} MapSink;

/** map_sink_formatted() - render into @text[t] (initialised by the caller, one per map). */
MapSink map_sink_formatted(CacheFormatted text[static _NSS_MAP_MAX]);
