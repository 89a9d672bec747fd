/* What the mapper (mapper.c) shares with the SCIM source's mapping
 * (scim/scim-map.c), and no one else: the mapper's state, the claims on
 * names and ids, and the checks every entry goes through. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dupset.h"
#include "mapper.h"

typedef struct AttrPaths AttrPaths;

/* One accepted user or group; user_names/uids (group_names/gids) map to
 * its index in `claims`.  32 bytes: 100k users cost 3.2 MB of them. */
typedef struct Claim {
        uint64_t at[3]; /* where its entries went (MAP_AT_NONE: nowhere), see mapper_claim_at() */
        uint32_t id;
        bool group;
        bool netgroup; /* a netgroup's entry: at[0] */
        bool removed;  /* displaced by a later entry: cut out when taken */
} Claim;

/* The value of a name or id whose claimant was rejected: free again. */
#define CLAIM_NONE UINT32_MAX

struct Mapper {
        const NsscacheConf *conf;
        MapSink sink; /* where accepted entries go */
        MapRejects rejects;
        DupSet *user_names, *uids, *group_names, *gids;
        DupSet *members;        /* of the group being mapped */
        DupSet *netgroup_names; /* to its claim; CLAIM_NONE: contested, nobody's */
        /* The node's own accounts; the system ones every node refuses are in modutil/reserved-accounts.h. */
        DupSet *local_user_names, *local_uids, *local_group_names, *local_gids;
        /* name + NUL + id of each entry in the published passwd / group map */
        DupSet *published_users, *published_groups;
        Claim *claims;
        size_t n_claims, cap_claims;
        size_t n_removed;
        AttrPaths *paths; /* the SCIM source's attribute paths, split and hashed once */
};

/* Where claim @c's entry of map @t went (a user's passwd, shadow and sshkey, a group's group); NULL: none of
 * that map. */
uint64_t *mapper_claim_at(Claim *c, NssMapType t);
/* One accepted entry (strings borrowed) to the sink; -EINVAL/-EILSEQ: the cache format cannot hold it. */
int mapper_emit(Mapper *m, NssMapType t, const void *entry, uint64_t *ret_at);
/* Room for one more element of @size in *@array. */
int mapper_grow(void **array, size_t *cap, size_t n, size_t size);
/* A POSIX portable name every tool takes as it is. */
bool mapper_name_valid(const char *s);
/* A netgroup's name (or a member naming one): portable, no blank, parenthesis or comma. */
bool mapper_netgroup_name_valid(const char *s);
/* A netgroup member "(host,user,domain)" whose fields hold no blank, parenthesis or comma. */
bool mapper_netgroup_triple_valid(const char *s);
/* The file nsscache names a mount point's map (auto.NAME), malloc'ed; -EINVAL for a mount point that is not
 * absolute, portable and free of "." and "..". */
int mapper_automount_file(const char *mountpoint, char **ret);
/* auto.master's line for mount point @key: its map, @file (of mapper_automount_file()), in the files
 * cache's directory with the automount map's suffix. */
int mapper_add_automount_master(Mapper *m, const NsscacheConf *c, char *key, const char *file);
/* A name of the node's own accounts (@local) or a reserved one. */
bool mapper_name_reserved(const DupSet *local, const char *name);
/* An id of the node's own accounts (@local) or a reserved one. */
bool mapper_id_reserved(const DupSet *local, uint32_t id);
/* May a new entry have @name and @id (*@ret_ok, its claim in *@ret_claim); the rejects are recorded. */
int mapper_claim(Mapper *m, bool group, const char *name, uint32_t id, bool *ret_ok, uint32_t *ret_claim);
/* An absolute path of at most MAP_FIELD_MAX, without a ".." component with @forbid_dotdot. */
bool mapper_path_valid(const char *s, bool forbid_dotdot);
/* @name into @set. */
int mapper_set_add(DupSet *set, const char *name);
/* Whether @set holds @name. */
bool mapper_set_has(DupSet *set, const char *name);
/* Whether [@b, @e) is an SSH public key line sunkd writes. */
bool mapper_sshkey_valid(const char *b, const char *e);
/* Emit() for claim @i, named @name in a reject. */
int mapper_emit_named(Mapper *m, NssMapType t, const void *entry, uint32_t i, const char *name);
/* The room for @n members. */
size_t mapper_members_cap(size_t n);
/* A copy of @s as the *@n-th member. */
int mapper_push_member(char ***members, size_t *n, const char *s);
/* Counts a reject and keeps a record with a printable, bounded copy of @name. */
int mapper_reject_name(Mapper *m, MapRejectReason reason, NssMapType map, const char *name, int64_t id);
