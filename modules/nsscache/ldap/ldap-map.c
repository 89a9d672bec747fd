/* LDAP entries to passwd, shadow, group, sshkey and netgroup entries, as nsscache's
 * ldap source transforms them (PasswdUpdateGetter.Transform() and its
 * siblings), each then validated by the mapper as every source's are. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dupset.h"
#include "ldap-map.h"
#include "mapper-internal.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strv.h"

/* ---- entries ------------------------------------------------------------ */

#define ARENA_CHUNK (256 * 1024)

struct LdapArenaChunk {
        LdapArenaChunk *next;
        size_t used, size;
        max_align_t data[];
};

/* @n bytes, aligned for a pointer, from @e's arena; a large request gets a
 * chunk of its own behind the current one, which keeps its room. */
static void *arena_alloc(LdapEntries *e, size_t n) {
        LdapArenaChunk *c = e->arena;
        size_t at;

        n = (n + sizeof(void *) - 1) & ~(sizeof(void *) - 1);
        if (!c || c->size - c->used < n) {
                size_t size = n > ARENA_CHUNK / 4 ? n : ARENA_CHUNK;
                LdapArenaChunk *nc = malloc(sizeof(*nc) + size);

                if (!nc)
                        return NULL;
                *nc = (LdapArenaChunk){ .size = size };
                if (c && size != ARENA_CHUNK) {
                        nc->next = c->next;
                        c->next = nc;
                } else {
                        nc->next = c;
                        e->arena = nc;
                }
                c = nc;
        }
        at = c->used;
        c->used += n;
        return (char *) c->data + at;
}

static char *arena_strndup(LdapEntries *e, const char *s, size_t len) {
        char *p = arena_alloc(e, len + 1);

        if (p) {
                memcpy(p, s, len);
                p[len] = 0;
        }
        return p;
}

void ldap_entries_done(LdapEntries *e) {
        for (size_t i = 0; i < e->n; i++)
                free(e->entries[i].attrs);
        free(e->entries);
        while (e->arena) {
                LdapArenaChunk *c = e->arena;

                e->arena = c->next;
                free(c);
        }
        *e = (LdapEntries){};
}

int ldap_entries_push(LdapEntries *e, const char *dn, LdapEntry **ret) {
        if (e->n == e->cap) {
                size_t cap = e->cap ? e->cap * 2 : 64;
                LdapEntry *n = reallocarray(e->entries, cap, sizeof(*n));
                if (!n)
                        return -ENOMEM;
                e->entries = n;
                e->cap = cap;
        }
        dn = dn ?: "";
        e->entries[e->n] = (LdapEntry){ .dn = arena_strndup(e, dn, strlen(dn)) };
        if (!e->entries[e->n].dn)
                return -ENOMEM;
        e->bytes += strlen(e->entries[e->n].dn) + sizeof(LdapEntry);
        *ret = e->entries + e->n++;
        return 0;
}

const LdapAttr *ldap_entry_get(const LdapEntry *en, const char *name) {
        for (size_t i = 0; i < en->n_attrs; i++)
                if (strcasecmp(en->attrs[i].name, name) == 0)
                        return en->attrs + i;
        return NULL;
}

/* The attributes nsscache asks for: each entry of a search names some of
 * them, and shares these strings instead of holding a copy of each name. */
static const char *const known_attrs[] = {
        "uid",
        "uidNumber",
        "gidNumber",
        "gecos",
        "cn",
        "homeDirectory",
        "loginShell",
        "fullName",
        "modifyTimestamp",
        "sAMAccountName",
        "objectSid",
        "displayName",
        "unixHomeDirectory",
        "pwdLastSet",
        "whenChanged",
        "memberUid",
        "member",
        "shadowLastChange",
        "shadowMin",
        "shadowMax",
        "shadowWarning",
        "shadowInactive",
        "shadowExpire",
        "shadowFlag",
        "userPassword",
        "sshPublicKey",
        "memberNisNetgroup",
        "nisNetgroupTriple",
        "automountInformation",
};

static const char *known_name(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(known_attrs); i++)
                if (strcmp(known_attrs[i], name) == 0)
                        return known_attrs[i];
        return NULL;
}

/* Room for one more value of @a: arrays from the arena, doubled (the old
 * ones stay there): most attributes hold one value, memberUid may hold
 * 100,000. */
static int attr_grow(LdapEntries *e, LdapAttr *a) {
        size_t cap = a->cap ? (size_t) a->cap * 2 : 1;
        char **vals;
        size_t *lens;

        if (cap > UINT32_MAX)
                return -ENOMEM;
        vals = arena_alloc(e, cap * sizeof(*vals));
        lens = vals ? arena_alloc(e, cap * sizeof(*lens)) : NULL;
        if (!lens)
                return -ENOMEM;
        if (a->n > 0) {
                memcpy(vals, a->vals, a->n * sizeof(*vals));
                memcpy(lens, a->lens, a->n * sizeof(*lens));
        }
        a->vals = vals;
        a->lens = lens;
        a->cap = (uint32_t) cap;
        return 0;
}

int ldap_entry_add_value(LdapEntries *e, LdapEntry *en, const char *name, const void *val, size_t len) {
        LdapAttr *a = (LdapAttr *) ldap_entry_get(en, name);
        char *copy;

        if (!a) {
                LdapAttr *n = reallocarray(en->attrs, en->n_attrs + 1, sizeof(*n));
                if (!n)
                        return -ENOMEM;
                en->attrs = n;
                a = en->attrs + en->n_attrs;
                *a = (LdapAttr){ .name = known_name(name) };
                if (!a->name) {
                        a->name = arena_strndup(e, name, strlen(name));
                        if (!a->name)
                                return -ENOMEM;
                }
                en->n_attrs++;
        }
        if (a->n == a->cap && attr_grow(e, a) < 0)
                return -ENOMEM;
        copy = arena_strndup(e, val, len);
        if (!copy)
                return -ENOMEM;
        a->vals[a->n] = copy;
        a->lens[a->n++] = len;
        return 0;
}

int ldap_entries_digest(const LdapEntries *e, Digest *d) {
        int r = 0;

        /* lengths before contents: no two results feed the same bytes */
        for (size_t i = 0; i < e->n && r >= 0; i++) {
                const LdapEntry *en = e->entries + i;
                uint64_t n = strlen(en->dn);

                r = digest_feed(d, &n, sizeof(n));
                if (r >= 0)
                        r = digest_feed(d, en->dn, n);
                n = en->n_attrs | (uint64_t) en->oversized << 63;
                if (r >= 0)
                        r = digest_feed(d, &n, sizeof(n));
                for (size_t j = 0; j < en->n_attrs && r >= 0; j++) {
                        const LdapAttr *a = en->attrs + j;

                        n = strlen(a->name);
                        r = digest_feed(d, &n, sizeof(n));
                        if (r >= 0)
                                r = digest_feed(d, a->name, n);
                        n = a->n;
                        if (r >= 0)
                                r = digest_feed(d, &n, sizeof(n));
                        for (size_t k = 0; k < a->n && r >= 0; k++) {
                                n = a->lens[k];
                                r = digest_feed(d, &n, sizeof(n));
                                if (r >= 0)
                                        r = digest_feed(d, a->vals[k], n);
                        }
                }
        }
        return r;
}

/* ---- what nsscache asks for ----------------------------------------------- */

const char *const *ldap_map_attrs(const NsscacheConf *c, NssMapType t) {
        static const char *const passwd[] = { "uid",        "uidNumber", "gidNumber",
                                              "gecos",      "cn",        "homeDirectory",
                                              "loginShell", "fullName",  "modifyTimestamp",
                                              NULL };
        static const char *const passwd_ad[] = { "sAMAccountName",    "objectSid",  "displayName",
                                                 "unixHomeDirectory", "pwdLastSet", "loginShell",
                                                 "whenChanged",       NULL };
        static const char *const group[] = {
                "cn", "gidNumber", "memberUid", "uid", "modifyTimestamp", NULL
        };
        static const char *const group_bis[] = {
                "cn", "gidNumber", "member", "uid", "modifyTimestamp", NULL
        };
        static const char *const group_ad[] = { "sAMAccountName", "member", "objectSid", "whenChanged",
                                                NULL };
        static const char *const shadow[] = { "uid",
                                              "shadowLastChange",
                                              "shadowMin",
                                              "shadowMax",
                                              "shadowWarning",
                                              "shadowInactive",
                                              "shadowExpire",
                                              "shadowFlag",
                                              "userPassword",
                                              "modifyTimestamp",
                                              NULL };
        static const char *const shadow_ad[] = { "uid",
                                                 "shadowLastChange",
                                                 "shadowMin",
                                                 "shadowMax",
                                                 "shadowWarning",
                                                 "shadowInactive",
                                                 "shadowExpire",
                                                 "shadowFlag",
                                                 "userPassword",
                                                 "sAMAccountName",
                                                 "pwdLastSet",
                                                 "whenChanged",
                                                 NULL };
        static const char *const sshkey[] = { "uid", "sshPublicKey", "modifyTimestamp", NULL };
        static const char *const sshkey_ad[] = { "uid", "sshPublicKey", "whenChanged", NULL };
        static const char *const netgroup[] = { "cn", "memberNisNetgroup", "nisNetgroupTriple",
                                                "modifyTimestamp", NULL };
        static const char *const netgroup_ad[] = { "cn", "memberNisNetgroup", "nisNetgroupTriple",
                                                   "whenChanged", NULL };
        static const char *const automount[] = { "cn", "automountInformation", "modifyTimestamp", NULL };
        static const char *const automount_ad[] = { "cn", "automountInformation", "whenChanged", NULL };

        switch (t) {
        case NSS_MAP_PASSWD:
                return c->ldap_ad ? passwd_ad : passwd;
        case NSS_MAP_SHADOW:
                return c->ldap_ad ? shadow_ad : shadow;
        case NSS_MAP_GROUP:
                return c->ldap_ad ? group_ad : c->ldap_rfc2307bis ? group_bis : group;
        case NSS_MAP_SSHKEY:
                return c->ldap_ad ? sshkey_ad : sshkey;
        case NSS_MAP_NETGROUP:
                return c->ldap_ad ? netgroup_ad : netgroup;
        case NSS_MAP_AUTOMOUNT:
                return c->ldap_ad ? automount_ad : automount;
        default:
                return NULL;
        }
}

/* ---- values --------------------------------------------------------------- */

/* The first value of @name, or NULL. */
static const char *first(const LdapEntry *en, const char *name) {
        const LdapAttr *a = ldap_entry_get(en, name);

        return a && a->n > 0 ? a->vals[0] : NULL;
}

/* A decimal integer as Python's int() takes one from a directory: an
 * optional sign, digits.  Return: 0, or -EINVAL. */
static int parse_int64(const char *s, int64_t *ret) {
        bool neg = false;
        uint64_t v = 0;

        if (!s)
                return -EINVAL;
        if (*s == '-' || *s == '+')
                neg = *s++ == '-';
        if (!*s)
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9' || v > (UINT64_C(1) << 62) / 10)
                        return -EINVAL;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        *ret = neg ? -(int64_t) v : (int64_t) v;
        return 0;
}

int ldap_sid_rid(const char *sid, size_t len, int64_t *ret) {
        const unsigned char *p = (const unsigned char *) sid;
        size_t subs;

        if (len >= 3 && memcmp(sid, "S-1", 3) == 0) {
                const char *dash = strrchr(sid, '-');
                return strlen(sid) == len ? parse_int64(dash + 1, ret) : -EINVAL;
        }
        if (len < 8)
                return -EINVAL;
        subs = p[1];
        if (subs == 0 || len < 8 + 4 * subs)
                return -EINVAL;
        p += 8 + 4 * (subs - 1);
        *ret = (int64_t) ((uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
                          (uint32_t) p[3] << 24);
        return 0;
}

/* An id as nsscache takes it: the RID of objectSid with ldap_ad, else @attr. */
static int entry_id(const NsscacheConf *c, const LdapEntry *en, const char *attr, int64_t *ret) {
        if (c->ldap_ad) {
                const LdapAttr *a = ldap_entry_get(en, "objectSid");
                return a && a->n > 0 ? ldap_sid_rid(a->vals[0], a->lens[0], ret) : -EINVAL;
        }
        return parse_int64(first(en, attr), ret);
}

static int reject(Mapper *m, MapRejectReason why, NssMapType t, const char *name, int64_t id) {
        return mapper_reject_name(m, why, t, name, id);
}

/* The id as the mapper takes one: out of range ids are its to reject. */
static uint32_t id32(int64_t v) {
        return v < 0 || v > UINT32_MAX ? 0 : (uint32_t) v;
}

/* ---- the maps ------------------------------------------------------------- */

static int map_passwd(Mapper *m, const NsscacheConf *c, const LdapEntry *en) {
        _cleanup_free_ char *gecos = NULL;
        const char *name, *g, *dir, *shell;
        int64_t uid, gid;

        name = first(en, c->ldap_ad ? "sAMAccountName" : "uid");
        if (!name)
                return reject(m, MAP_REJECT_NO_NAME, NSS_MAP_PASSWD, NULL, -1);
        if (en->oversized)
                return reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_PASSWD, name, -1);
        if (c->ldap_ad) {
                if (!ldap_entry_get(en, "objectSid"))
                        return reject(m, MAP_REJECT_NO_ID, NSS_MAP_PASSWD, name, -1);
        } else if (!ldap_entry_get(en, "uidNumber") || !ldap_entry_get(en, "gidNumber"))
                return reject(m, MAP_REJECT_NO_ID, NSS_MAP_PASSWD, name, -1);
        if (entry_id(c, en, "uidNumber", &uid) < 0 || entry_id(c, en, "gidNumber", &gid) < 0)
                return reject(m, MAP_REJECT_BAD_ID, NSS_MAP_PASSWD, name, -1);
        if (c->ldap_ad)
                g = first(en, "displayName") ?: "";
        else if (!(g = first(en, "gecos")) && !(g = first(en, "cn")) && !(g = first(en, "fullName")))
                /* nsscache: "Neither gecos nor cn found" */
                return reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_PASSWD, name, uid);
        gecos = strdup(g);
        if (!gecos)
                return -ENOMEM;
        /* gecos.replace("\n", "") */
        for (char *s = gecos, *d = gecos;; s++)
                if (*s != '\n' && !(*d++ = *s))
                        break;
        dir = (c->ldap_ad ? first(en, "unixHomeDirectory") : NULL) ?: first(en, "homeDirectory") ?: "";
        shell = first(en, "loginShell") ?: "";
        return mapper_add_entry(m, NSS_MAP_PASSWD,
                                &(NssPasswd){ .name = (char *) name,
                                              .passwd = (char *) "x",
                                              .uid = id32(uid),
                                              .gid = id32(gid),
                                              .gecos = gecos,
                                              .dir = (char *) dir,
                                              .shell = (char *) shell });
}

/* A shadow field: -1 (empty) when absent; a value that is not a number rejects the entry. */
static int shadow_field(const LdapEntry *en, const char *attr, int64_t *ret) {
        const char *v = first(en, attr);

        *ret = -1;
        return v ? parse_int64(v, ret) : 0;
}

static int map_shadow(Mapper *m, const NsscacheConf *c, const LdapEntry *en) {
        static const char *const attrs[] = { "shadowMin",      "shadowMax",    "shadowWarning",
                                             "shadowInactive", "shadowExpire", "shadowFlag" };
        NssShadow s = { .passwd = (char *) "*" };
        int64_t *fields[] = { &s.min, &s.max, &s.warn, &s.inact, &s.expire, &s.flag };
        const char *pw;

        s.name = (char *) first(en, c->ldap_ad ? "sAMAccountName" : "uid");
        if (!s.name)
                return reject(m, MAP_REJECT_NO_NAME, NSS_MAP_SHADOW, NULL, -1);
        if (en->oversized)
                return reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_SHADOW, s.name, -1);
        if (c->ldap_ad) {
                int64_t t;
                const char *v = first(en, "pwdLastSet");
                if (!v)
                        return reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_SHADOW, s.name, -1);
                if (parse_int64(v, &t) < 0)
                        return reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_SHADOW, s.name, -1);
                /* int((int(pwdLastSet) / 10000000 - 11644473600) / 86400) */
                s.lstchg = (int64_t) trunc(((double) t / 10000000.0 - 11644473600.0) / 86400.0);
        } else if (shadow_field(en, "shadowLastChange", &s.lstchg) < 0)
                return reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_SHADOW, s.name, -1);
        for (size_t i = 0; i < ELEMENTSOF(attrs); i++)
                if (shadow_field(en, attrs[i], fields[i]) < 0)
                        return reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_SHADOW, s.name, -1);
        if (s.flag < 0)
                s.flag = 0;
        pw = first(en, "userPassword");
        if (pw && strncasecmp(pw, "{crypt}", 7) == 0)
                s.passwd = (char *) pw + 7;
        return mapper_add_entry(m, NSS_MAP_SHADOW, &s);
}

static int map_sshkey(Mapper *m, const NsscacheConf *c, const LdapEntry *en) {
        const LdapAttr *a = ldap_entry_get(en, "sshPublicKey");
        _cleanup_free_ char **keys = NULL;
        const char *name = first(en, "uid");

        if (!name)
                return reject(m, MAP_REJECT_NO_NAME, NSS_MAP_SSHKEY, NULL, -1);
        if (en->oversized)
                return reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_SSHKEY, name, -1);
        keys = calloc((a ? a->n : 0) + 1, sizeof(char *));
        if (!keys)
                return -ENOMEM;
        for (size_t i = 0; a && i < a->n; i++)
                keys[i] = a->vals[i];
        return mapper_add_entry(m, NSS_MAP_SSHKEY, &(NssSshkey){ .name = (char *) name, .keys = keys });
}

/* ---- netgroups ------------------------------------------------------------ */

static int str_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* As NetgroupUpdateGetter.Transform(): the name is the first cn; the
 * members, memberNisNetgroup's and nisNetgroupTriple's values together,
 * once each, sorted (Python's order of str, which is strcmp()'s of
 * UTF-8).  A value holding a NUL is dropped alone. */
static int map_netgroup(Mapper *m, const LdapEntry *en) {
        static const char *const attrs[] = { "memberNisNetgroup", "nisNetgroupTriple" };
        _cleanup_free_ char **entries = NULL;
        const LdapAttr *cn = ldap_entry_get(en, "cn");
        const char *name = cn && cn->n > 0 ? cn->vals[0] : NULL;
        size_t n = 0, k = 0;
        int r;

        if (!name)
                return reject(m, MAP_REJECT_NO_NAME, NSS_MAP_NETGROUP, NULL, -1);
        if (en->oversized || strlen(name) != cn->lens[0])
                return reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_NETGROUP, name, -1);
        for (size_t i = 0; i < ELEMENTSOF(attrs); i++) {
                const LdapAttr *a = ldap_entry_get(en, attrs[i]);

                n += a ? a->n : 0;
        }
        entries = calloc(n + 1, sizeof(char *));
        if (!entries)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(attrs); i++) {
                const LdapAttr *a = ldap_entry_get(en, attrs[i]);

                for (size_t j = 0; a && j < a->n; j++) {
                        if (strlen(a->vals[j]) != a->lens[j]) {
                                r = reject(m, MAP_REJECT_BAD_MEMBER, NSS_MAP_NETGROUP, name, -1);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        entries[k++] = a->vals[j];
                }
        }
        qsort(entries, k, sizeof(char *), str_cmp);
        n = 0;
        for (size_t i = 0; i < k; i++)
                if (n == 0 || strcmp(entries[n - 1], entries[i]) != 0)
                        entries[n++] = entries[i];
        entries[n] = NULL;
        return mapper_add_entry(m, NSS_MAP_NETGROUP,
                                &(NssNetgroup){ .name = (char *) name, .entries = entries });
}

/* ---- automount -------------------------------------------------------------- */

int ldap_automount_location(const char *info, char **ret_dn) {
        const char *c1, *c2;
        size_t n;

        if (!info || strncmp(info, "ldap", 4) != 0 || !(c1 = strchr(info, ':')) ||
            !(c2 = strchr(c1 + 1, ':')))
                return -EINVAL;
        n = strcspn(c2 + 1, ": ");
        if (n == 0)
                return -EINVAL;
        *ret_dn = strndup(c2 + 1, n);
        return *ret_dn ? 0 : -ENOMEM;
}

/* The first value of @name, if it holds no NUL. */
static const char *first_clean(const LdapEntry *en, const char *name) {
        const LdapAttr *a = ldap_entry_get(en, name);

        return a && a->n > 0 && strlen(a->vals[0]) == a->lens[0] ? a->vals[0] : NULL;
}

static void automount_free(NssAutomount *a) {
        free(a->key);
        free(a->options);
        free(a->location);
        *a = (NssAutomount){};
}

/* One entry of an automount map as AutomountUpdateGetter.Transform() reads
 * it: the first cn is the key; an automountInformation starting "ldap" is
 * the location whole, else options and location one blank apart (nsscache
 * fails the run on fewer fields and drops a third: both rejected here).
 * Return: 0, -EINVAL (rejected and counted), -ENOMEM. */
static int automount_entry(Mapper *m, const LdapEntry *en, NssAutomount *ret) {
        const char *key = first_clean(en, "cn"), *info = first_clean(en, "automountInformation"), *blank;
        int r;

        *ret = (NssAutomount){};
        if (!key)
                return (r = reject(m, MAP_REJECT_NO_NAME, NSS_MAP_AUTOMOUNT, NULL, -1)) < 0 ? r : -EINVAL;
        if (!info || en->oversized)
                return (r = reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_AUTOMOUNT, key, -1)) < 0 ? r : -EINVAL;
        if (strncmp(info, "ldap", 4) == 0)
                *ret = (NssAutomount){ .key = strdup(key), .location = strdup(info) };
        else {
                blank = strchr(info, ' ');
                if (!blank || blank == info || !blank[1] || strchr(blank + 1, ' '))
                        return (r = reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_AUTOMOUNT, key, -1)) < 0
                                       ? r
                                       : -EINVAL;
                *ret = (NssAutomount){ .key = strdup(key),
                                       .options = strndup(info, (size_t) (blank - info)),
                                       .location = strdup(blank + 1) };
                if (!ret->options) {
                        automount_free(ret);
                        return -ENOMEM;
                }
        }
        if (!ret->key || !ret->location) {
                automount_free(ret);
                return -ENOMEM;
        }
        return 0;
}

static void automount_done(NssAutomount *a, size_t n) {
        for (size_t i = 0; a && i < n; i++)
                automount_free(a + i);
        free(a);
}

/* The entries of one map (@e) into @file, a key two entries hold rejected
 * for both.  *@ret_n: how many went to the mapper. */
static int automount_map(Mapper *m, const char *file, const LdapEntries *e, size_t *ret_n) {
        NssAutomount *a = calloc(e->n + 1, sizeof(NssAutomount));
        _cleanup_free_ char **keys = calloc(e->n + 1, sizeof(char *));
        _cleanup_free_ bool *bad = calloc(e->n + 1, sizeof(bool));
        size_t n = 0;
        int r = 0;

        if (!a || !keys || !bad) {
                free(a);
                return -ENOMEM;
        }
        for (size_t i = 0; r >= 0 && i < e->n; i++) {
                r = automount_entry(m, e->entries + i, a + i);
                if (r == -EINVAL)
                        r = 0;
                keys[i] = a[i].key;
        }
        if (r >= 0)
                r = dupset_mark_contested(keys, e->n, bad);
        for (size_t i = 0; r >= 0 && i < e->n; i++) {
                if (!a[i].key)
                        continue;
                if (bad[i]) {
                        r = reject(m, MAP_REJECT_DUP_NAME, NSS_MAP_AUTOMOUNT, a[i].key, -1);
                        continue;
                }
                a[i].map = (char *) file;
                r = mapper_add_entry(m, NSS_MAP_AUTOMOUNT, a + i);
                a[i].map = NULL;
                n++;
        }
        automount_done(a, e->n);
        *ret_n = n;
        return r;
}

int ldap_map_automount(Mapper *m, const NsscacheConf *c, const LdapEntries *master,
                       const LdapAutomountMap *maps, size_t n_maps) {
        NssAutomount *a = calloc(master->n + 1, sizeof(NssAutomount));
        _cleanup_free_ char **keys = calloc(master->n + 1, sizeof(char *));
        _cleanup_free_ char **files = calloc(master->n + 1, sizeof(char *));
        _cleanup_free_ char **dns = calloc(master->n + 1, sizeof(char *));
        _cleanup_free_ bool *bad = calloc(master->n + 1, sizeof(bool));
        int r = 0;

        if (!a || !keys || !files || !dns || !bad) {
                free(a);
                return -ENOMEM;
        }
        /* auto.master: a mount point, and in its location the base of the map mounted there */
        for (size_t i = 0; r >= 0 && i < master->n; i++) {
                r = automount_entry(m, master->entries + i, a + i);
                if (r == -EINVAL) {
                        r = 0;
                        continue;
                }
                if (r >= 0 && (r = ldap_automount_location(a[i].location, dns + i)) == -EINVAL)
                        r = reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_AUTOMOUNT, a[i].key, -1);
                else if (r >= 0 && (r = mapper_automount_file(a[i].key, files + i)) == -EINVAL)
                        r = reject(m, MAP_REJECT_BAD_NAME, NSS_MAP_AUTOMOUNT, a[i].key, -1);
                keys[i] = files[i] && dns[i] ? a[i].key : NULL;
        }
        /* two entries of one mount point, or of two that make one file name, lose it both */
        if (r >= 0)
                r = dupset_mark_contested(keys, master->n, bad);
        if (r >= 0)
                r = dupset_mark_contested(files, master->n, bad);
        for (size_t i = 0; r >= 0 && i < master->n; i++) {
                const LdapAutomountMap *map = NULL;
                size_t given = 0;

                if (!keys[i])
                        continue;
                if (bad[i]) {
                        r = reject(m, MAP_REJECT_DUP_NAME, NSS_MAP_AUTOMOUNT, a[i].key, -1);
                        continue;
                }
                for (size_t k = 0; k < n_maps && !map; k++)
                        if (streq(maps[k].dn, dns[i]))
                                map = maps + k;
                if (map)
                        r = automount_map(m, files[i], &map->e, &given);
                if (r >= 0 && given == 0) { /* a map that is empty or not there: no line names it */
                        r = reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_AUTOMOUNT, a[i].key, -1);
                        continue;
                }
                if (r >= 0)
                        r = mapper_add_automount_master(m, c, a[i].key, files[i]);
        }
        for (size_t i = 0; i < master->n; i++) {
                free(files[i]);
                free(dns[i]);
        }
        automount_done(a, master->n);
        return r;
}

/* ---- groups: members, then nested groups flattened -------------------------- */

typedef struct LdapGroup {
        const char *name;
        int64_t gid;
        bool ok;
        char **members;      /* owned copies: nesting appends to them */
        char **groupmembers; /* the first RDN value of each member DN */
} LdapGroup;

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* member_dn.split(",")[0].split("=")[1] */
static char *rdn_value(const char *dn) {
        const char *eq = strchr(dn, '='), *comma = strchr(dn, ',');
        const char *end;

        if (!eq || (comma && comma < eq))
                return NULL;
        end = strchr(eq + 1, '=');
        if (comma && (!end || comma < end))
                end = comma;
        else if (!end)
                end = eq + 1 + strlen(eq + 1);
        return strndup(eq + 1, (size_t) (end - eq - 1));
}

static int group_read(Mapper *m, const NsscacheConf *c, const LdapEntry *en, LdapGroup *g) {
        const LdapAttr *a;

        /* nsscache: sAMAccountName with ldap_ad; else uid where the group has one, else cn,
         * which every group must have */
        if (c->ldap_ad)
                g->name = first(en, "sAMAccountName");
        else if (ldap_entry_get(en, "cn"))
                g->name = first(en, "uid") ?: first(en, "cn");
        if (!g->name)
                return reject(m, MAP_REJECT_NO_NAME, NSS_MAP_GROUP, NULL, -1);
        if (en->oversized)
                return reject(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_GROUP, g->name, -1);
        if (!c->ldap_ad && !ldap_entry_get(en, "gidNumber"))
                return reject(m, MAP_REJECT_NO_ID, NSS_MAP_GROUP, g->name, -1);
        if (entry_id(c, en, "gidNumber", &g->gid) < 0)
                return reject(m, MAP_REJECT_BAD_ID, NSS_MAP_GROUP, g->name, -1);
        if ((a = ldap_entry_get(en, "memberUid")) && !c->ldap_ad) {
                for (size_t i = 0; i < a->n; i++)
                        if (strv_push(&g->members, strdup(a->vals[i])) < 0)
                                return -ENOMEM;
        } else if ((a = ldap_entry_get(en, "member"))) {
                for (size_t i = 0; i < a->n; i++) {
                        char *v = rdn_value(a->vals[i]);
                        /* nsscache fails the run on a DN without '=': the member is dropped here */
                        if (!v) {
                                if (reject(m, MAP_REJECT_BAD_MEMBER, NSS_MAP_GROUP, g->name, -1) < 0)
                                        return -ENOMEM;
                                continue;
                        }
                        if (strv_push(&g->groupmembers, strdup(v)) < 0 || strv_push(&g->members, v) < 0)
                                return -ENOMEM;
                }
        }
        if (g->members)
                qsort(g->members, strv_length(g->members), sizeof(char *), cmp_str);
        g->ok = true;
        return 0;
}

static LdapGroup *group_find(LdapGroup *gs, size_t n, const char *name) {
        /* the last of a name, as a dict keyed by name keeps it */
        for (size_t i = n; i > 0; i--)
                if (gs[i - 1].ok && streq(gs[i - 1].name, name))
                        return gs + i - 1;
        return NULL;
}

static bool visited_has(char **visited, const char *name) {
        return strv_contains(visited, name);
}

/* nsscache's _expand_members(obj, visited), step for step. */
static int expand_members(LdapGroup *gs, size_t n, LdapGroup *obj, char ***visited, unsigned depth) {
        if (depth > 1000)
                return 0;
        for (char **mn = obj->groupmembers; mn && *mn; mn++) {
                LdapGroup *gm = group_find(gs, n, *mn);
                if (!gm || visited_has(*visited, *mn))
                        continue;
                for (char **u = gm->members; u && *u; u++)
                        if (!strv_contains(obj->members, *u) && strv_push(&obj->members, strdup(*u)) < 0)
                                return -ENOMEM;
                for (char **sn = gm->groupmembers; sn && *sn; sn++) {
                        LdapGroup *sg = group_find(gs, n, *sn);
                        int r;
                        if (!sg || visited_has(*visited, *sn))
                                continue;
                        if (strv_push(visited, strdup(*sn)) < 0)
                                return -ENOMEM;
                        r = expand_members(gs, n, sg, visited, depth + 1);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int map_groups(Mapper *m, const NsscacheConf *c, const LdapEntries *e) {
        LdapGroup *gs = calloc(e->n + 1, sizeof(*gs));
        int r = 0;

        if (!gs)
                return -ENOMEM;
        for (size_t i = 0; i < e->n && r >= 0; i++)
                r = group_read(m, c, e->entries + i, gs + i);
        if (r >= 0 && c->map[NSS_MAP_GROUP].ldap_nested_groups)
                for (size_t i = 0; i < e->n && r >= 0; i++) {
                        char **visited = NULL;
                        if (!gs[i].ok)
                                continue;
                        r = strv_push(&visited, strdup(gs[i].name));
                        if (r >= 0)
                                r = expand_members(gs, e->n, gs + i, &visited, 0);
                        strv_free(visited);
                }
        for (size_t i = 0; i < e->n && r >= 0; i++)
                if (gs[i].ok)
                        r = mapper_add_entry(m, NSS_MAP_GROUP,
                                             &(NssGroup){ .name = (char *) gs[i].name,
                                                          .passwd = (char *) "*",
                                                          .gid = id32(gs[i].gid),
                                                          .members = gs[i].members ?: (char *[]){ NULL } });
        for (size_t i = 0; i < e->n; i++) {
                strv_free(gs[i].members);
                strv_free(gs[i].groupmembers);
        }
        free(gs);
        return r;
}

int ldap_map_add(Mapper *m, const NsscacheConf *c, NssMapType t, const LdapEntries *e) {
        int r = 0;

        if (t == NSS_MAP_GROUP)
                return map_groups(m, c, e);
        for (size_t i = 0; i < e->n && r >= 0; i++)
                switch (t) {
                case NSS_MAP_PASSWD:
                        r = map_passwd(m, c, e->entries + i);
                        break;
                case NSS_MAP_SHADOW:
                        r = map_shadow(m, c, e->entries + i);
                        break;
                case NSS_MAP_SSHKEY:
                        r = map_sshkey(m, c, e->entries + i);
                        break;
                case NSS_MAP_NETGROUP:
                        r = map_netgroup(m, e->entries + i);
                        break;
                default:
                        return -EINVAL;
                }
        return r;
}
