/* SCIM 2.0 Resources to validated passwd, shadow, group and sshkey entries.
 *
 * A ScimMapper takes the Resources of each page (scim-page.h) as it
 * arrives and hands every entry it accepts to its sink (map-sink.h), so
 * memory holds one page of JSON plus what the sink keeps, never the whole
 * directory as JSON.  Every entry that is dropped leaves a reject record;
 * the caller decides how loudly to log.  Non-logging.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/cache-format.h"
#include "map-reject.h"
#include "cache/nss-maps.h"
#include "nsscache-conf.h"
#include "map-sink.h"

struct json_object;

#define SCIM_FIELD_MAX 4096
#define SCIM_GECOS_MAX 255
#define SCIM_SSHKEY_MAX (16 * 1024)
#define SCIM_SSHKEYS_PER_USER_MAX 100
#define SCIM_MEMBERS_MAX 1000000
#define SCIM_ID_MAX INT32_MAX

typedef struct ScimMapper ScimMapper;

/** scim_map_new() - a mapper for @c (borrowed) whose entries go to @sink (copied). */
int scim_map_new(const NsscacheConf *c, const MapSink *sink, ScimMapper **ret);
ScimMapper *scim_map_free(ScimMapper *m);
static inline void scim_map_freep(ScimMapper **m) {
        if (*m)
                *m = scim_map_free(*m);
}

/**
 * scim_map_add_users() / scim_map_add_groups() - map one page of Resources.
 * @resources: a JSON array (elements of other types become rejects).
 * Users feed passwd, shadow and sshkey (whichever are enabled); shadow and
 * sshkey entries exist only for users passwd validation accepted.
 * Return: 0, or -ENOMEM.  Bad entries are never errors: they are rejects.
 */
int scim_map_add_users(ScimMapper *m, struct json_object *resources);
int scim_map_add_groups(ScimMapper *m, struct json_object *resources);

/**
 * scim_map_add_entry() - one entry of map @t read from a map file (an
 * NssPasswd, NssShadow, NssGroup or NssSshkey), validated as a SCIM
 * entry is: a valid name, ids in range, no local or reserved account, the
 * same claims on names and ids; a home, shell or gecos sunkd would not
 * have written rejects it.  A shadow or sshkey entry needs the passwd
 * entry of its name accepted earlier in the run (name-mismatch
 * otherwise), so passwd must be added first; a second one of a name is a
 * duplicate-name.  Members and keys that are not valid are dropped alone.
 * Return: 0, or -ENOMEM.
 */
int scim_map_add_entry(ScimMapper *m, NssMapType t, const void *entry);

/** scim_map_reject_line() - count a line of map @t that does not parse; @name: its first field, or NULL. */
int scim_map_reject_line(ScimMapper *m, NssMapType t, const char *name);

/**
 * scim_map_load_local() - the node's own accounts: no SCIM user may have a
 * name or uid of @passwd (or a gid of @group as its primary group), no SCIM
 * group a name or gid of @group, and no SCIM group may list a user of
 * @passwd as a member.  A built-in list of system names ("root", "sshd",
 * "sudo", "docker", "systemd-*", "_*", ...) and the ids 0, 65534 and 65535
 * are refused in any case.  Call before adding entries, off the event loop.
 * A missing file counts as empty; NULL or "" skips it.
 * Return: 0, or a negative errno from reading.
 */
int scim_map_load_local(ScimMapper *m, const char *passwd, const char *group);

/**
 * scim_map_load_published() - the passwd and group maps now published: an
 * entry with a name and id found together there keeps them against every
 * other entry claiming either, wherever it comes in the directory's order.
 * Two entries claiming a name or an id of which neither is published are
 * both rejected.  Missing files (the first run) are empty.
 * Return: 0, or a negative errno from reading.
 */
int scim_map_load_published(ScimMapper *m, const char *passwd, const char *group);

/**
 * scim_map_finish() - after the last page: cut the entries that later
 * claimants displaced out of the sink, which then holds the maps.
 * Return: 0, or the sink's error.
 */
int scim_map_finish(ScimMapper *m);
const MapRejects *scim_map_rejects(const ScimMapper *m);

/**
 * scim_map_extract() - follow a slash-separated path ("urn:...:User/attr")
 * through nested objects.  Return: the value (borrowed) or NULL if a step is
 * missing, null or not an object.
 */
struct json_object *scim_map_extract(struct json_object *o, const char *path);
