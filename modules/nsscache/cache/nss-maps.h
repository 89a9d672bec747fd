/* The maps of a refresh, in memory, validated.
 *
 * An NssMaps holds the entries of one fetch of Users and one of Groups; the
 * cache writer renders and publishes all of it or none of it.  (The refresh
 * job itself renders each entry as it is mapped and never holds them all:
 * see CacheFormatted; the entry types are the same.)  Entries own their
 * strings.  Numeric shadow fields use -1 for "empty", as in shadow(5).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct NssPasswd {
        char *name;
        char *passwd; /* "x" */
        uint32_t uid;
        uint32_t gid;
        char *gecos;
        char *dir;
        char *shell;
} NssPasswd;

typedef struct NssShadow {
        char *name;
        char *passwd; /* "*" or "!!": SCIM never carries hashes */
        int64_t lstchg, min, max, warn, inact, expire;
        int64_t flag;
} NssShadow;

typedef struct NssGroup {
        char *name;
        char *passwd; /* "x" */
        uint32_t gid;
        char **members; /* NULL-terminated, may be empty */
} NssGroup;

typedef struct NssSshkey {
        char *name;
        char **keys; /* NULL-terminated, one authorized_keys line each */
} NssSshkey;

/* netgroup(5): a name and its members, each a (host,user,domain) triple or
 * the name of another netgroup, written in this order, blank-separated. */
typedef struct NssNetgroup {
        char *name;
        char **entries; /* NULL-terminated, may be empty */
} NssNetgroup;

/* One line of an automount map (autofs(5), nsscache's automount map):
 * "key [options] location" in the map file @map ("auto.home"), or with
 * @map NULL a line of auto.master, "mountpoint location", whose location
 * names the file of another map.  All the files of the map are published
 * together, auto.master last in the journal's order. */
typedef struct NssAutomount {
        char *map;      /* NULL: auto.master */
        char *key;      /* a mount point in auto.master, else the key ("*" too) */
        char *options;  /* NULL: none */
        char *location; /* auto.master: the map's file; else what autofs mounts */
} NssAutomount;

#define NSS_AUTOMOUNT_MASTER "auto.master"

typedef enum NssMapType {
        NSS_MAP_PASSWD,
        NSS_MAP_SHADOW,
        NSS_MAP_GROUP,
        NSS_MAP_SSHKEY,
        NSS_MAP_NETGROUP,
        NSS_MAP_AUTOMOUNT,
        _NSS_MAP_MAX,
} NssMapType;

typedef struct NssMaps {
        NssPasswd *passwd;
        size_t n_passwd;
        NssShadow *shadow;
        size_t n_shadow;
        NssGroup *group;
        size_t n_group;
        NssSshkey *sshkey;
        size_t n_sshkey;
        NssNetgroup *netgroup;
        size_t n_netgroup;
        NssAutomount *automount;
        size_t n_automount;
} NssMaps;

const char *nss_map_to_string(NssMapType t);
NssMapType nss_map_from_string(const char *s); /* -1 if unknown */
size_t nss_maps_count(const NssMaps *m, NssMapType t);
void nss_maps_done(NssMaps *m); /* frees the contents, leaves *m zeroed */
