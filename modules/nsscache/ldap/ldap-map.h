/* LDAP entries, as a search returned them, to the mapper's entries
 * (mapper.h), as nsscache's ldap source maps them (its
 * nss_cache/sources/ldapsource.py): RFC 2307 (posixAccount, shadowAccount,
 * posixGroup with memberUid), RFC 2307bis (member DNs, nested groups
 * flattened with ldap_nested_groups), Active Directory (sAMAccountName,
 * ids from the RID of objectSid, unixHomeDirectory, pwdLastSet) and
 * sshPublicKey.  An entry nsscache would fail the whole run on (a missing
 * uid, a uidNumber that is not a number) is rejected alone.  Pure: no
 * network, no logging; the fuzz target drives it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "digest.h"
#include "mapper.h"

/* A value larger than this marks its entry oversized: rejected whole. */
#define LDAP_VALUE_MAX (64 * 1024)
/* What one run may hold of a directory, all maps together. */
#define LDAP_FETCH_BYTES_MAX (UINT64_C(1) << 30)

typedef struct LdapAttr {
        const char *name; /* one of known_attrs (ldap-map.c), or in the arena */
        char **vals;      /* each NUL-terminated after its length */
        size_t *lens;
        uint32_t n, cap; /* a run holds at most LDAP_FETCH_BYTES_MAX */
} LdapAttr;

typedef struct LdapEntry {
        char *dn;
        LdapAttr *attrs;
        size_t n_attrs;
        bool oversized; /* a value above LDAP_VALUE_MAX was left out */
} LdapEntry;

/* Where a search's dns, values and value arrays live: a directory of 100,000
 * users is some 4 million small strings, which one allocation each would
 * double in size.  Freed whole with the entries. */
typedef struct LdapArenaChunk LdapArenaChunk;

typedef struct LdapEntries {
        LdapEntry *entries;
        size_t n, cap;
        uint64_t bytes;
        LdapArenaChunk *arena;
} LdapEntries;

/* One map auto.master names, as its search (one level under @dn) gave it. */
typedef struct LdapAutomountMap {
        char *dn;
        LdapEntries e;
} LdapAutomountMap;

/** ldap_entries_done() - free what @e holds. */
void ldap_entries_done(LdapEntries *e);

/** ldap_entries_push() - a new empty entry of @dn at the end of @e, in *@ret.  Return: 0 or -ENOMEM. */
int ldap_entries_push(LdapEntries *e, const char *dn, LdapEntry **ret);

/**
 * ldap_entry_add_value() - append a value (@len bytes, copied into @e's arena)
 * of attribute @name to @en, an entry of @e.  Return: 0 or -ENOMEM.
 */
int ldap_entry_add_value(LdapEntries *e, LdapEntry *en, const char *name, const void *val, size_t len);

/** ldap_entry_get() - the attribute @name of @en (case-insensitive), or NULL. */
const LdapAttr *ldap_entry_get(const LdapEntry *en, const char *name);

/** ldap_map_attrs() - the attributes nsscache asks for map @t (NULL-terminated, static). */
const char *const *ldap_map_attrs(const NsscacheConf *c, NssMapType t);

/** ldap_map_add() - every entry of @e, searched for map @t, into @m.  Return: 0 or -ENOMEM. */
int ldap_map_add(Mapper *m, const NsscacheConf *c, NssMapType t, const LdapEntries *e);

/**
 * ldap_automount_location() - the base DN of the map an auto.master entry's
 * automountInformation names, as nsscache reads it: "ldap" first, then the
 * third ':'-separated field up to a blank (ldap:HOST:DN [OPTIONS]).
 * Return: 0, -EINVAL if there is none, -ENOMEM.
 */
int ldap_automount_location(const char *info, char **ret_dn);

/**
 * ldap_map_automount() - the automount map as nsscache's ldap source and
 * files cache make it: @master's entries (the one-level search of the
 * auto.master map) and the @n maps they name (@maps, by base DN), their
 * files named after the mount points, auto.master's lines naming them in
 * files_dir.  Return: 0 or -ENOMEM.
 */
int ldap_map_automount(Mapper *m, const NsscacheConf *c, const LdapEntries *master,
                       const LdapAutomountMap *maps, size_t n);

/** ldap_entries_digest() - feed @e to @d, so that two results digest alike only when equal. */
int ldap_entries_digest(const LdapEntries *e, Digest *d);

/** ldap_sid_rid() - the last sub-authority of a binary objectSid (or one written "S-1-..."). Return: 0 or
 * -EINVAL. */
int ldap_sid_rid(const char *sid, size_t len, int64_t *ret);
