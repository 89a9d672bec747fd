/* Why a source's entry, key, member or line was dropped: one reason each,
 * counted per reason, the first few kept with a name and an id for the
 * logs.  Every source's mapping leaves them (mapper.h). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "cache/nss-maps.h"

#define MAP_REJECT_RECORDS_MAX 256

typedef enum MapRejectReason {
        MAP_REJECT_NOT_OBJECT,    /* a Resources element that is not an object */
        MAP_REJECT_NO_NAME,       /* name attribute missing or null */
        MAP_REJECT_BAD_NAME,      /* not a POSIX portable name, or not a string */
        MAP_REJECT_NO_ID,         /* uid (or group gid) missing */
        MAP_REJECT_BAD_ID,        /* not an integer or decimal string */
        MAP_REJECT_ID_RANGE,      /* 0, below min_uid/min_gid or above 2^31-1 */
        MAP_REJECT_BAD_HOME,      /* not absolute, "..", forbidden character, too long */
        MAP_REJECT_BAD_SHELL,     /* not absolute, forbidden character, too long */
        MAP_REJECT_DUP_NAME,      /* name claimed by another entry (see mapper_load_published()) */
        MAP_REJECT_DUP_ID,        /* uid/gid claimed by another entry */
        MAP_REJECT_BAD_MEMBER,    /* one group member dropped */
        MAP_REJECT_BAD_SSHKEY,    /* one key dropped */
        MAP_REJECT_NAME_MISMATCH, /* shadow/sshkey name differs from the passwd name */
        MAP_REJECT_TOO_MANY,      /* members or keys beyond the cap dropped */
        MAP_REJECT_LOCAL_ACCOUNT, /* name or id of the node's own accounts or a reserved one */
        MAP_REJECT_BAD_ENTRY,     /* an entry the cache format cannot hold */
        MAP_REJECT_BAD_LINE,      /* a map file's line sunkd would not have written */
        _MAP_REJECT_MAX,
} MapRejectReason;

typedef struct MapReject {
        MapRejectReason reason;
        NssMapType map;
        char *name; /* printable, truncated copy for logs; may be NULL */
        int64_t id; /* -1 if unknown */
} MapReject;

typedef struct MapRejects {
        uint64_t count[_MAP_REJECT_MAX];
        uint64_t total;
        MapReject *records; /* the first MAP_REJECT_RECORDS_MAX */
        size_t n_records;
} MapRejects;

const char *map_reject_reason_to_string(MapRejectReason r);
