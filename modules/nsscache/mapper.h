/* Every source's entries into validated passwd, shadow, group and sshkey
 * entries: a Mapper takes them as they come (the SCIM source's Resources
 * page by page through scim/scim-map.h, the file sources' parsed lines
 * through mapper_add_entry()), decides who gets a name and an id, and
 * hands every entry it accepts to its sink (map-sink.h), so memory holds
 * what the sink keeps, never the whole source.  Every entry that is
 * dropped leaves a reject record (map-reject.h); the caller decides how
 * loudly to log.  Non-logging.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/cache-format.h"
#include "cache/nss-maps.h"
#include "map-reject.h"
#include "map-sink.h"
#include "nsscache-conf.h"

#define MAP_FIELD_MAX 4096
#define MAP_GECOS_MAX 255
#define MAP_SSHKEY_MAX (16 * 1024)
#define MAP_SSHKEYS_PER_USER_MAX 100
#define MAP_MEMBERS_MAX 1000000
#define MAP_ID_MAX INT32_MAX

typedef struct Mapper Mapper;

/** mapper_new() - a mapper for @c (borrowed) whose entries go to @sink (copied). */
int mapper_new(const NsscacheConf *c, const MapSink *sink, Mapper **ret);
Mapper *mapper_free(Mapper *m);
static inline void mapper_freep(Mapper **m) {
        if (*m)
                *m = mapper_free(*m);
}

/**
 * mapper_add_entry() - one entry of map @t read from a map file (an
 * NssPasswd, NssShadow, NssGroup or NssSshkey), validated as a SCIM
 * entry is: a valid name, ids in range, no local or reserved account, the
 * same claims on names and ids; a home, shell or gecos sunkd would not
 * have written rejects it.  A shadow or sshkey entry needs the passwd
 * entry of its name accepted earlier in the run (name-mismatch
 * otherwise), so passwd must be added first; a second one of a name is a
 * duplicate-name.  Members and keys that are not valid are dropped alone.
 * Return: 0, or -ENOMEM.
 */
int mapper_add_entry(Mapper *m, NssMapType t, const void *entry);

/** mapper_reject_line() - count a line of map @t that does not parse; @name: its first field, or NULL. */
int mapper_reject_line(Mapper *m, NssMapType t, const char *name);

/**
 * mapper_load_local() - the node's own accounts: no SCIM user may have a
 * name or uid of @passwd (or a gid of @group as its primary group), no SCIM
 * group a name or gid of @group, and no SCIM group may list a user of
 * @passwd as a member.  A built-in list of system names ("root", "sshd",
 * "sudo", "docker", "systemd-*", "_*", ...) and the ids 0, 65534 and 65535
 * are refused in any case.  Call before adding entries, off the event loop.
 * A missing file counts as empty; NULL or "" skips it.
 * Return: 0, or a negative errno from reading.
 */
int mapper_load_local(Mapper *m, const char *passwd, const char *group);

/**
 * mapper_load_published() - the passwd and group maps now published: an
 * entry with a name and id found together there keeps them against every
 * other entry claiming either, wherever it comes in the directory's order.
 * Two entries claiming a name or an id of which neither is published are
 * both rejected.  Missing files (the first run) are empty.
 * Return: 0, or a negative errno from reading.
 */
int mapper_load_published(Mapper *m, const char *passwd, const char *group);

/**
 * mapper_finish() - after the last page: cut the entries that later
 * claimants displaced out of the sink, which then holds the maps.
 * Return: 0, or the sink's error.
 */
int mapper_finish(Mapper *m);
const MapRejects *mapper_rejects(const Mapper *m);
