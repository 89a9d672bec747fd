/* Every source's entries into validated passwd, shadow, group, sshkey and
 * netgroup entries, handed to a sink.
 *
 * The data comes from a remote directory or files that other people
 * administer, so every value is treated as hostile: a name that is not a
 * POSIX portable name, an id that is 0 or inside the system range, a home
 * directory with "..", or any ':' ',' newline or NUL that would split a
 * line of a cache file, drops that entry and leaves a reject record.  One
 * bad value never fails a run: it costs its entry (or its key, or its
 * member) and nothing else.
 *
 * Nobody gets an account that is not theirs:
 *  - names and ids of the node's own accounts (its passwd and group files,
 *    read at the start of every run) and a built-in list of system names
 *    and ids are never published (local-account);
 *  - when two entries claim one name or id, the one already published with
 *    that same name and id (the caches on disk at the start of the run)
 *    keeps them, wherever it comes in the source's order; when neither
 *    is, both are rejected, since the source cannot say which is right.
 *    An entry accepted earlier in the run and displaced later is cut out of
 *    the rendered maps by mapper_finish().
 *
 * The SCIM source maps its Resources through the helpers of
 * mapper-internal.h (scim/scim-map.c); the file sources hand the mapper
 * the entries they parsed (mapper_add_entry(), below).
 *
 * Names and ids are de-duplicated through compact hash sets (dupset.h):
 * 100k users map in linear time and a few MB.  Nothing here logs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dupset.h"
#include "mapper-internal.h"
#include "modutil/colon-file.h"
#include "modutil/reserved-accounts.h"
#include "scim/attr-path.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strv.h"

#define MEMBERS_CAP_MIN 16

/* A user's passwd, shadow and sshkey entries, or a group's group entry. */
uint64_t *mapper_claim_at(Claim *c, NssMapType t) {
        if (c->netgroup)
                return t == NSS_MAP_NETGROUP ? c->at : NULL;
        if (c->group)
                return t == NSS_MAP_GROUP ? c->at : NULL;
        switch (t) {
        case NSS_MAP_PASSWD:
                return c->at;
        case NSS_MAP_SHADOW:
                return c->at + 1;
        case NSS_MAP_SSHKEY:
                return c->at + 2;
        default:
                return NULL;
        }
}

/* ---- mapper ---------------------------------------------------------------- */

int mapper_new(const NsscacheConf *c, const MapSink *sink, Mapper **ret) {
        Mapper *m;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->conf = c;
        m->sink = *sink;
        if (dupset_new(&m->user_names) < 0 || dupset_new(&m->uids) < 0 || dupset_new(&m->group_names) < 0 ||
            dupset_new(&m->gids) < 0 || dupset_new(&m->members) < 0 || dupset_new(&m->netgroup_names) < 0 ||
            dupset_new(&m->local_user_names) < 0 || dupset_new(&m->local_uids) < 0 ||
            dupset_new(&m->local_group_names) < 0 || dupset_new(&m->local_gids) < 0 ||
            dupset_new(&m->published_users) < 0 || dupset_new(&m->published_groups) < 0 ||
            attr_paths_new(&m->paths) < 0) {
                mapper_free(m);
                return -ENOMEM;
        }
        *ret = m;
        return 0;
}

Mapper *mapper_free(Mapper *m) {
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->rejects.n_records; i++)
                free(m->rejects.records[i].name);
        free(m->rejects.records);
        dupset_free(m->user_names);
        dupset_free(m->uids);
        dupset_free(m->group_names);
        dupset_free(m->gids);
        dupset_free(m->members);
        dupset_free(m->netgroup_names);
        dupset_free(m->local_user_names);
        dupset_free(m->local_uids);
        dupset_free(m->local_group_names);
        dupset_free(m->local_gids);
        dupset_free(m->published_users);
        dupset_free(m->published_groups);
        free(m->claims);
        attr_paths_free(m->paths);
        free(m);
        return NULL;
}

static int at_cmp(const void *a, const void *b) {
        const uint64_t *x = a, *y = b;

        return *x < *y ? -1 : *x > *y;
}

/* Where in map @t displaced entries are, in order. */
static int removed_at(const Mapper *m, NssMapType t, uint64_t **ret, size_t *ret_n) {
        uint64_t *v;
        size_t n = 0;

        v = calloc(m->n_removed, sizeof(uint64_t));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_claims; i++) {
                const uint64_t *at = mapper_claim_at(m->claims + i, t);

                if (m->claims[i].removed && at && *at != MAP_AT_NONE)
                        v[n++] = *at;
        }
        qsort(v, n, sizeof(uint64_t), at_cmp);
        *ret = v;
        *ret_n = n;
        return 0;
}

int mapper_finish(Mapper *m) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX && m->n_removed > 0; t++) {
                _cleanup_free_ uint64_t *v = NULL;
                size_t n = 0;
                int r;

                r = removed_at(m, t, &v, &n);
                if (r >= 0 && n > 0)
                        r = m->sink.cut(m->sink.data, t, v, n);
                if (r < 0)
                        return r;
        }
        m->n_removed = 0;
        for (size_t i = 0; i < m->n_claims; i++)
                m->claims[i].removed = false;
        return 0;
}

const MapRejects *mapper_rejects(const Mapper *m) {
        return &m->rejects;
}

/* Counts a reject and keeps a record with a printable, bounded copy of
 * @name (untrusted text, for log lines). */
int mapper_reject_name(Mapper *m, MapRejectReason reason, NssMapType map, const char *name, int64_t id) {
        MapRejects *r = &m->rejects;
        char *copy = NULL;

        r->count[reason]++;
        r->total++;
        if (r->n_records >= MAP_REJECT_RECORDS_MAX)
                return 0;
        if (!r->records) {
                r->records = calloc(MAP_REJECT_RECORDS_MAX, sizeof(MapReject));
                if (!r->records)
                        return -ENOMEM;
        }
        if (name) {
                copy = strndup(name, 64);
                if (!copy)
                        return -ENOMEM;
                for (char *p = copy; *p; p++)
                        if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7f)
                                *p = '?';
        }
        r->records[r->n_records++] = (MapReject){ .reason = reason, .map = map, .name = copy, .id = id };
        return 0;
}

int mapper_grow(void **array, size_t *cap, size_t n, size_t size) {
        void *a;
        size_t c;

        if (n < *cap)
                return 0;
        c = *cap ? *cap * 2 : 64;
        a = reallocarray(*array, c, size);
        if (!a)
                return -ENOMEM;
        *array = a;
        *cap = c;
        return 0;
}

/* Hands one accepted entry whose strings are borrowed to the sink, and
 * says where it went.  Return: 0, -ENOMEM, or -EINVAL/-EILSEQ for an entry
 * the cache format cannot hold (nothing is added: the caller rejects it). */
int mapper_emit(Mapper *m, NssMapType t, const void *entry, uint64_t *ret_at) {
        return m->sink.add(m->sink.data, t, entry, ret_at);
}

/* A name every tool takes as it is: POSIX portable filename characters, not
 * starting with '-' (an option), not only dots ("." and ".." as a home or a
 * path component) and not only digits (chown, id and friends take those as
 * an id).  Non-ASCII names are refused: useradd, sshd's AllowUsers patterns
 * and many scripts do not handle them alike. */
bool mapper_name_valid(const char *s) {
        size_t n = strlen(s), dots = 0, digits = 0;

        if (n == 0 || n > MAP_NAME_MAX || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++) {
                if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-", s[i]))
                        return false;
                dots += s[i] == '.';
                digits += s[i] >= '0' && s[i] <= '9';
        }
        return dots < n && digits < n;
}

/* ---- the node's own accounts and the published maps ----------------------- */

bool mapper_name_reserved(const DupSet *local, const char *name) {
        size_t n = strlen(name);

        return reserved_account_name(name, n) || dupset_contains(local, name, n);
}

bool mapper_id_reserved(const DupSet *local, uint32_t id) {
        return reserved_account_id(id) || dupset_contains_id(local, id);
}

/* The sets one colon_file_read() fills. */
typedef struct ColonSets {
        DupSet *names, *ids;
} ColonSets;

/* A name longer than any valid one cannot collide, but its id still can. */
static int local_line(const char *name, size_t len, int64_t id, void *userdata) {
        ColonSets *sets = userdata;

        if ((len <= MAP_NAME_MAX && dupset_add(sets->names, name, len) < 0) ||
            (id >= 0 && dupset_add_id(sets->ids, (uint32_t) id) < 0))
                return -ENOMEM;
        return 0;
}

/* name, NUL, id: the key of a published entry. */
static size_t published_key(char buf[static MAP_NAME_MAX + 5], const char *name, size_t len, uint32_t id) {
        memcpy(buf, name, len);
        buf[len] = 0;
        memcpy(buf + len + 1, &id, sizeof(id));
        return len + 1 + sizeof(id);
}

static int published_line(const char *name, size_t len, int64_t id, void *userdata) {
        DupSet *set = userdata;
        char key[MAP_NAME_MAX + 5];

        if (id < 0 || len > MAP_NAME_MAX)
                return 0;
        return dupset_add(set, key, published_key(key, name, len, (uint32_t) id)) < 0 ? -ENOMEM : 0;
}

int mapper_load_local(Mapper *m, const char *passwd, const char *group) {
        int r = colon_file_read(passwd, local_line, &(ColonSets){ m->local_user_names, m->local_uids });

        if (r < 0)
                return r;
        return colon_file_read(group, local_line, &(ColonSets){ m->local_group_names, m->local_gids });
}

int mapper_load_published(Mapper *m, const char *passwd, const char *group) {
        int r = colon_file_read(passwd, published_line, m->published_users);

        if (r < 0)
                return r;
        return colon_file_read(group, published_line, m->published_groups);
}

static bool published(const Mapper *m, bool group, const char *name, uint32_t id) {
        char key[MAP_NAME_MAX + 5];

        if (dupset_size(group ? m->published_groups : m->published_users) == 0)
                return false;
        return dupset_contains(group ? m->published_groups : m->published_users, key,
                               published_key(key, name, strlen(name), id));
}

/* ---- claims: who gets a name and an id ------------------------------------- */

/* The name of an accepted entry, from the first map it went to. */
static const char *claim_name(const Mapper *m, const Claim *c, char buf[static MAP_NAME_MAX + 1]) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                const uint64_t *at = mapper_claim_at((Claim *) c, t);

                if (at && *at != MAP_AT_NONE)
                        return m->sink.name(m->sink.data, t, *at, buf);
        }
        return NULL;
}

/* An entry accepted earlier loses its name and id to a later one. */
static int displace(Mapper *m, bool group, uint32_t i, MapRejectReason reason) {
        Claim *c = m->claims + i;
        char buf[MAP_NAME_MAX + 1];

        if (c->removed)
                return 0;
        c->removed = true;
        m->n_removed++;
        return mapper_reject_name(m, reason, group ? NSS_MAP_GROUP : NSS_MAP_PASSWD, claim_name(m, c, buf),
                                  c->id);
}

/* Whether claim @c is the published entry of its name and id. */
static bool claim_published(const Mapper *m, bool group, const Claim *c) {
        char buf[MAP_NAME_MAX + 1];
        const char *name = claim_name(m, c, buf);

        return name && published(m, group, name, c->id);
}

/**
 * mapper_claim() - may a new entry have @name and @id?
 * Yes if nobody claimed either.  If someone did, the entry published with
 * this very name and id wins: a newcomer that is it displaces the earlier
 * claimants, a newcomer that is not is rejected.  Between entries of which
 * none is published, all are rejected.  *ret_claim is set when the answer
 * is yes; the rejects are recorded here.  One lookup per key when nobody
 * claimed it before: the common case costs two.
 */
int mapper_claim(Mapper *m, bool group, const char *name, uint32_t id, bool *ret_ok, uint32_t *ret_claim) {
        DupSet *names = group ? m->group_names : m->user_names, *ids = group ? m->gids : m->uids;
        NssMapType map = group ? NSS_MAP_GROUP : NSS_MAP_PASSWD;
        uint32_t next, ni = CLAIM_NONE, ii = CLAIM_NONE;
        MapRejectReason lost = _MAP_REJECT_MAX;
        int rn, ri, r;

        *ret_ok = false;
        if (m->n_claims >= CLAIM_NONE)
                return -ENOMEM;
        r = mapper_grow((void **) &m->claims, &m->cap_claims, m->n_claims, sizeof(Claim));
        if (r < 0)
                return r;
        next = (uint32_t) m->n_claims;
        rn = dupset_get_or_add(names, name, strlen(name), next, &ni);
        if (rn < 0)
                return rn;
        ri = dupset_get_or_add_id(ids, id, next, &ii);
        if (ri < 0)
                return ri;

        if (ni != CLAIM_NONE || ii != CLAIM_NONE) {
                bool inc = published(m, group, name, id);

                if (ni != CLAIM_NONE && claim_published(m, group, m->claims + ni))
                        lost = MAP_REJECT_DUP_NAME;
                else if (ii != CLAIM_NONE && claim_published(m, group, m->claims + ii))
                        lost = MAP_REJECT_DUP_ID;
                else {
                        if ((ni != CLAIM_NONE && (r = displace(m, group, ni, MAP_REJECT_DUP_NAME)) < 0) ||
                            (ii != CLAIM_NONE && (r = displace(m, group, ii, MAP_REJECT_DUP_ID)) < 0))
                                return r;
                        if (!inc)
                                lost = ni != CLAIM_NONE ? MAP_REJECT_DUP_NAME : MAP_REJECT_DUP_ID;
                }
        }
        if (lost != _MAP_REJECT_MAX) {
                /* keys this entry added are free again; those it found keep their claimant */
                if ((rn == 1 && dupset_put(names, name, strlen(name), CLAIM_NONE) < 0) ||
                    (ri == 1 && dupset_put_id(ids, id, CLAIM_NONE) < 0))
                        return -ENOMEM;
                return mapper_reject_name(m, lost, map, name, id);
        }
        /* keys it found (free, or held by an entry displaced just now) are its own now */
        if ((rn == 0 && dupset_put(names, name, strlen(name), next) < 0) ||
            (ri == 0 && dupset_put_id(ids, id, next) < 0))
                return -ENOMEM;
        m->claims[m->n_claims++] =
                (Claim){ .at = { MAP_AT_NONE, MAP_AT_NONE, MAP_AT_NONE }, .id = id, .group = group };
        *ret_ok = true;
        *ret_claim = next;
        return 0;
}

bool mapper_path_valid(const char *s, bool forbid_dotdot) {
        const char *d;

        if (s[0] != '/' || strlen(s) > MAP_FIELD_MAX)
                return false;
        if (forbid_dotdot)
                for (d = s; (d = strstr(d, "..")); d += 2)
                        if (d[-1] == '/' && (d[2] == '/' || d[2] == 0))
                                return false;
        return true;
}

/* Names reaching the sets are valid, so at most MAP_NAME_MAX bytes. */
int mapper_set_add(DupSet *set, const char *name) {
        int r = dupset_add(set, name, strlen(name));
        return r < 0 ? r : 0;
}

bool mapper_set_has(DupSet *set, const char *name) {
        return dupset_contains(set, name, strlen(name));
}

/* One authorized_keys line: no control characters (a newline would add a
 * line to authorized_keys), valid UTF-8, bounded.  Commas are fine: options
 * such as from="10.0.0.0/8,192.168.0.0/16" carry them. */
bool mapper_sshkey_valid(const char *b, const char *e) {
        if ((size_t) (e - b) > MAP_SSHKEY_MAX)
                return false;
        for (const char *p = b; p < e;) {
                unsigned char c = (unsigned char) *p;
                int k;

                if (c < 0x20 || c == 0x7f)
                        return false;
                if (c < 0x80) {
                        p++;
                        continue;
                }
                k = cache_format_utf8_len(p);
                if (k < 0 || p + k > e)
                        return false;
                p += k;
        }
        return true;
}

/* Emits one entry of map @t for claim @i; an entry the format cannot hold is
 * rejected on its own. */
int mapper_emit_named(Mapper *m, NssMapType t, const void *entry, uint32_t i, const char *name) {
        int r = mapper_emit(m, t, entry, mapper_claim_at(m->claims + i, t));

        if (r == -EINVAL || r == -EILSEQ)
                return mapper_reject_name(m, MAP_REJECT_BAD_ENTRY, t, name, m->claims[i].id);
        return r;
}

/* Slots allocated for a member vector of @n slots (NULL included): it grows
 * by doubling, so a group of a million members is not quadratic. */
size_t mapper_members_cap(size_t n) {
        size_t c = MEMBERS_CAP_MIN;

        while (c < n)
                c *= 2;
        return c;
}

int mapper_push_member(char ***members, size_t *n, const char *s) {
        char *d = strdup(s);

        if (!d)
                return -ENOMEM;
        if (mapper_members_cap(*n + 2) != mapper_members_cap(*n + 1)) {
                char **v = reallocarray(*members, mapper_members_cap(*n + 2), sizeof(char *));

                if (!v) {
                        free(d);
                        return -ENOMEM;
                }
                *members = v;
        }
        (*members)[(*n)++] = d;
        (*members)[*n] = NULL;
        return 0;
}

/* ---- entries read from map files ------------------------------------------- */

/* What sunkd writes in a home, shell or gecos: no ':' ',' or control
 * characters, valid UTF-8. */
static bool text_clean(const char *s) {
        for (const char *p = s; *p; p++)
                if (*p == ':' || *p == ',' || (unsigned char) *p < 0x20 || *p == 0x7f)
                        return false;
        return cache_format_utf8_valid(s);
}

static bool id_in_range(uint32_t id, int64_t min) {
        return id > 0 && id >= min && id <= MAP_ID_MAX;
}

/* Marks claim @i displaced when the format refused its entry of map @t. */
static void drop_unwritten(Mapper *m, NssMapType t, uint32_t i) {
        if (*mapper_claim_at(m->claims + i, t) == MAP_AT_NONE && !m->claims[i].removed) {
                m->claims[i].removed = true;
                m->n_removed++;
        }
}

static int file_user(Mapper *m, const NssPasswd *e) {
        const char *name = e->name;
        uint32_t i;
        bool ok;
        int r;

        if (!mapper_name_valid(name))
                return mapper_reject_name(m, MAP_REJECT_BAD_NAME, NSS_MAP_PASSWD, name, -1);
        if (!id_in_range(e->uid, m->conf->min_uid))
                return mapper_reject_name(m, MAP_REJECT_ID_RANGE, NSS_MAP_PASSWD, name, e->uid);
        if (!id_in_range(e->gid, m->conf->min_gid))
                return mapper_reject_name(m, MAP_REJECT_ID_RANGE, NSS_MAP_PASSWD, name, e->gid);
        if (mapper_name_reserved(m->local_user_names, name) || mapper_id_reserved(m->local_uids, e->uid) ||
            mapper_id_reserved(m->local_gids, e->gid))
                return mapper_reject_name(m, MAP_REJECT_LOCAL_ACCOUNT, NSS_MAP_PASSWD, name, e->uid);
        if (!e->dir || !text_clean(e->dir) || !mapper_path_valid(e->dir, true))
                return mapper_reject_name(m, MAP_REJECT_BAD_HOME, NSS_MAP_PASSWD, name, e->uid);
        if (!e->shell || !text_clean(e->shell) || !mapper_path_valid(e->shell, true))
                return mapper_reject_name(m, MAP_REJECT_BAD_SHELL, NSS_MAP_PASSWD, name, e->uid);
        if (e->gecos && (strlen(e->gecos) > MAP_GECOS_MAX || !text_clean(e->gecos)))
                return mapper_reject_name(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_PASSWD, name, e->uid);
        r = mapper_claim(m, false, name, e->uid, &ok, &i);
        if (r < 0 || !ok)
                return r;
        r = mapper_emit_named(m, NSS_MAP_PASSWD, e, i, name);
        if (r >= 0)
                drop_unwritten(m, NSS_MAP_PASSWD, i);
        return r;
}

/* The claim of the user a shadow or sshkey entry belongs to: its passwd
 * entry, accepted earlier in this run and still standing. */
static int file_owner(Mapper *m, NssMapType t, const char *name, bool *ret_ok, uint32_t *ret) {
        uint32_t i = CLAIM_NONE;

        *ret_ok = false;
        if (!mapper_name_valid(name))
                return mapper_reject_name(m, MAP_REJECT_BAD_NAME, t, name, -1);
        if (mapper_name_reserved(m->local_user_names, name))
                return mapper_reject_name(m, MAP_REJECT_LOCAL_ACCOUNT, t, name, -1);
        if (!dupset_get(m->user_names, name, strlen(name), &i) || i == CLAIM_NONE || m->claims[i].removed ||
            m->claims[i].group || *mapper_claim_at(m->claims + i, NSS_MAP_PASSWD) == MAP_AT_NONE)
                return mapper_reject_name(m, MAP_REJECT_NAME_MISMATCH, t, name, -1);
        if (*mapper_claim_at(m->claims + i, t) != MAP_AT_NONE)
                return mapper_reject_name(m, MAP_REJECT_DUP_NAME, t, name, m->claims[i].id);
        *ret_ok = true;
        *ret = i;
        return 0;
}

static int file_shadow(Mapper *m, const NssShadow *e) {
        uint32_t i;
        bool ok;
        int r = file_owner(m, NSS_MAP_SHADOW, e->name, &ok, &i);

        if (r < 0 || !ok)
                return r;
        return mapper_emit_named(m, NSS_MAP_SHADOW, e, i, e->name);
}

/* The keys sunkd would have written: each one valid as collect_sshkeys()
 * leaves it (trimmed, not empty), at most MAP_SSHKEYS_PER_USER_MAX. */
static int file_sshkeys(Mapper *m, const NssSshkey *e, char ***ret) {
        _cleanup_strv_free_ char **keys = NULL;
        size_t count = 0;
        int r;

        for (size_t j = 0; e->keys && e->keys[j]; j++) {
                const char *k = e->keys[j];
                size_t n = strlen(k);

                if (n == 0 || strchr(" \t", k[0]) || strchr(" \t", k[n - 1]) ||
                    !mapper_sshkey_valid(k, k + n)) {
                        r = mapper_reject_name(m, MAP_REJECT_BAD_SSHKEY, NSS_MAP_SSHKEY, e->name, -1);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (count >= MAP_SSHKEYS_PER_USER_MAX) {
                        r = mapper_reject_name(m, MAP_REJECT_TOO_MANY, NSS_MAP_SSHKEY, e->name, -1);
                        if (r < 0)
                                return r;
                        break;
                }
                r = strv_push(&keys, strdup(k));
                if (r < 0)
                        return r;
                count++;
        }
        *ret = TAKE_PTR(keys);
        return 0;
}

static int file_sshkey(Mapper *m, const NssSshkey *e) {
        _cleanup_strv_free_ char **keys = NULL;
        uint32_t i;
        bool ok;
        int r = file_owner(m, NSS_MAP_SSHKEY, e->name, &ok, &i);

        if (r < 0 || !ok)
                return r;
        r = file_sshkeys(m, e, &keys);
        if (r < 0)
                return r;
        return mapper_emit_named(m, NSS_MAP_SSHKEY, &(NssSshkey){ .name = e->name, .keys = keys }, i,
                                 e->name);
}

/* A member as add_member() takes one: valid, not a local account, once. */
static int file_member(Mapper *m, const NssGroup *e, const char *s, char ***members, size_t *n) {
        if (!mapper_name_valid(s))
                return mapper_reject_name(m, MAP_REJECT_BAD_MEMBER, NSS_MAP_GROUP, e->name, -1);
        if (mapper_name_reserved(m->local_user_names, s))
                return mapper_reject_name(m, MAP_REJECT_LOCAL_ACCOUNT, NSS_MAP_GROUP, s, -1);
        if (mapper_set_has(m->members, s))
                return 0;
        if (*n >= MAP_MEMBERS_MAX)
                return mapper_reject_name(m, MAP_REJECT_TOO_MANY, NSS_MAP_GROUP, e->name, -1);
        if (mapper_set_add(m->members, s) < 0)
                return -ENOMEM;
        return mapper_push_member(members, n, s);
}

static int file_group(Mapper *m, const NssGroup *e) {
        _cleanup_strv_free_ char **members = NULL;
        size_t n = 0;
        uint32_t i;
        bool ok;
        int r = 0;

        if (!mapper_name_valid(e->name))
                return mapper_reject_name(m, MAP_REJECT_BAD_NAME, NSS_MAP_GROUP, e->name, -1);
        if (!id_in_range(e->gid, m->conf->min_gid))
                return mapper_reject_name(m, MAP_REJECT_ID_RANGE, NSS_MAP_GROUP, e->name, e->gid);
        if (mapper_name_reserved(m->local_group_names, e->name) || mapper_id_reserved(m->local_gids, e->gid))
                return mapper_reject_name(m, MAP_REJECT_LOCAL_ACCOUNT, NSS_MAP_GROUP, e->name, e->gid);
        members = calloc(mapper_members_cap(1), sizeof(char *));
        if (!members)
                return -ENOMEM;
        dupset_clear(m->members);
        for (size_t j = 0; e->members && e->members[j] && r >= 0; j++)
                r = file_member(m, e, e->members[j], &members, &n);
        if (r < 0)
                return r;
        r = mapper_claim(m, true, e->name, e->gid, &ok, &i);
        if (r < 0 || !ok)
                return r;
        r = mapper_emit_named(
                m, NSS_MAP_GROUP,
                &(NssGroup){ .name = e->name, .passwd = e->passwd, .gid = e->gid, .members = members }, i,
                e->name);
        if (r >= 0)
                drop_unwritten(m, NSS_MAP_GROUP, i);
        return r;
}

/* ---- netgroups --------------------------------------------------------------- */

/* A netgroup's name, or a member naming another: portable characters (no
 * blank, which separates the fields of netgroup(5), no parenthesis or
 * comma, which make triples), not an option, not only dots. */
bool mapper_netgroup_name_valid(const char *s) {
        size_t n = strlen(s), dots = 0;

        if (n == 0 || n > MAP_NAME_MAX || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++) {
                if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-", s[i]))
                        return false;
                dots += s[i] == '.';
        }
        return dots < n;
}

/* One field of a triple: empty (any), or printable ASCII that neither ends
 * the field (',' ')'), opens another '(' nor splits the line (a blank). */
static bool triple_field_valid(const char *b, const char *e) {
        if ((size_t) (e - b) > MAP_FIELD_MAX)
                return false;
        for (const char *p = b; p < e; p++)
                if ((unsigned char) *p <= 0x20 || (unsigned char) *p >= 0x7f || strchr("(),", *p))
                        return false;
        return true;
}

/* "(host,user,domain)", each field as triple_field_valid() takes it. */
bool mapper_netgroup_triple_valid(const char *s) {
        size_t n = strlen(s);
        const char *c1, *c2;

        if (n < 4 || s[0] != '(' || s[n - 1] != ')')
                return false;
        c1 = memchr(s + 1, ',', n - 2);
        c2 = c1 ? memchr(c1 + 1, ',', (size_t) (s + n - 1 - (c1 + 1))) : NULL;
        return c2 && triple_field_valid(s + 1, c1) && triple_field_valid(c1 + 1, c2) &&
               triple_field_valid(c2 + 1, s + n - 1);
}

/* A netgroup's name is its own only when no other entry claims it: two
 * entries of one name are both rejected (there is no id that could tell
 * the published one), and so is every later one. */
static int netgroup_claim(Mapper *m, const char *name, bool *ret_ok, uint32_t *ret_claim) {
        uint32_t next, i = CLAIM_NONE;
        int r;

        *ret_ok = false;
        if (m->n_claims >= CLAIM_NONE)
                return -ENOMEM;
        r = mapper_grow((void **) &m->claims, &m->cap_claims, m->n_claims, sizeof(Claim));
        if (r < 0)
                return r;
        next = (uint32_t) m->n_claims;
        r = dupset_get_or_add(m->netgroup_names, name, strlen(name), next, &i);
        if (r < 0)
                return r;
        if (r == 0) { /* claimed before: by an entry, now displaced, or contested already */
                if (i != CLAIM_NONE && !m->claims[i].removed) {
                        m->claims[i].removed = true;
                        m->n_removed++;
                        r = mapper_reject_name(m, MAP_REJECT_DUP_NAME, NSS_MAP_NETGROUP, name, -1);
                        if (r < 0)
                                return r;
                }
                if (dupset_put(m->netgroup_names, name, strlen(name), CLAIM_NONE) < 0)
                        return -ENOMEM;
                return mapper_reject_name(m, MAP_REJECT_DUP_NAME, NSS_MAP_NETGROUP, name, -1);
        }
        m->claims[m->n_claims++] =
                (Claim){ .at = { MAP_AT_NONE, MAP_AT_NONE, MAP_AT_NONE }, .netgroup = true };
        *ret_ok = true;
        *ret_claim = next;
        return 0;
}

/* A netgroup: a valid name, claimed by no other entry; each member a triple
 * or a netgroup's name (an invalid one is dropped alone, bad-member), at
 * most MAP_MEMBERS_MAX, in the order given. */
static int file_netgroup(Mapper *m, const NssNetgroup *e) {
        _cleanup_strv_free_ char **entries = NULL;
        size_t n = 0;
        uint32_t i;
        bool ok;
        int r = 0;

        if (!e->name)
                return mapper_reject_name(m, MAP_REJECT_NO_NAME, NSS_MAP_NETGROUP, NULL, -1);
        if (!mapper_netgroup_name_valid(e->name))
                return mapper_reject_name(m, MAP_REJECT_BAD_NAME, NSS_MAP_NETGROUP, e->name, -1);
        entries = calloc(mapper_members_cap(1), sizeof(char *));
        if (!entries)
                return -ENOMEM;
        for (size_t j = 0; e->entries && e->entries[j] && r >= 0; j++) {
                const char *v = e->entries[j];

                if (v[0] == '(' ? !mapper_netgroup_triple_valid(v) : !mapper_netgroup_name_valid(v))
                        r = mapper_reject_name(m, MAP_REJECT_BAD_MEMBER, NSS_MAP_NETGROUP, e->name, -1);
                else if (n >= MAP_MEMBERS_MAX) {
                        r = mapper_reject_name(m, MAP_REJECT_TOO_MANY, NSS_MAP_NETGROUP, e->name, -1);
                        break;
                } else
                        r = mapper_push_member(&entries, &n, v);
        }
        if (r < 0)
                return r;
        r = netgroup_claim(m, e->name, &ok, &i);
        if (r < 0 || !ok)
                return r;
        r = mapper_emit_named(m, NSS_MAP_NETGROUP, &(NssNetgroup){ .name = e->name, .entries = entries }, i,
                              e->name);
        if (r >= 0)
                drop_unwritten(m, NSS_MAP_NETGROUP, i);
        return r;
}

/* ---- automount ---------------------------------------------------------------- */

/* Printable ASCII without a blank (autofs splits its lines at blanks), at most @max bytes. */
static bool automount_text_ok(const char *s, size_t max) {
        size_t n = s ? strlen(s) : 0;

        if (n == 0 || n > max)
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) s[i] <= 0x20 || (unsigned char) s[i] >= 0x7f)
                        return false;
        return true;
}

/* A mount point of auto.master, as nsscache names its map's file after it
 * (its files cache: the leading slashes off, the others '_', after
 * "auto."): absolute, components of A-Z a-z 0-9 . _ - one slash apart, none
 * "." or "..", short enough for the file name. */
int mapper_automount_file(const char *mountpoint, char **ret) {
        size_t n = mountpoint ? strlen(mountpoint) : 0;
        const char *p;
        char *f;

        if (n < 2 || mountpoint[0] != '/' || n + 5 > CACHE_AUTOMOUNT_FILE_MAX + 1)
                return -EINVAL;
        for (p = mountpoint + 1; *p;) {
                size_t k = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");

                if (k == 0 || (k == 1 && p[0] == '.') || (k == 2 && p[0] == '.' && p[1] == '.') ||
                    (p[k] && (p[k] != '/' || !p[k + 1])))
                        return -EINVAL;
                p += k + (p[k] == '/');
        }
        if (streq(mountpoint, "/master")) /* auto.master itself */
                return -EINVAL;
        if (asprintf(&f, "auto.%s", mountpoint + 1) < 0)
                return -ENOMEM;
        for (char *c = f; *c; c++)
                if (*c == '/')
                        *c = '_';
        *ret = f;
        return 0;
}

/* A line of an automount map: in auto.master a mount point (a file name
 * after it) and a location; elsewhere a key, options and a location, each
 * printable without blanks.  No claims: the source's mapping has taken a
 * key that two entries hold from both already. */
static int file_automount(Mapper *m, const NssAutomount *e) {
        _cleanup_free_ char *file = NULL;
        const char *key = e->key;
        int r;

        if (e->map ? !automount_text_ok(key, MAP_FIELD_MAX) : mapper_automount_file(key, &file) < 0)
                return mapper_reject_name(m, key ? MAP_REJECT_BAD_NAME : MAP_REJECT_NO_NAME,
                                          NSS_MAP_AUTOMOUNT, key, -1);
        if ((e->map && !cache_format_automount_file_ok(e->map)) ||
            (e->options && !automount_text_ok(e->options, MAP_FIELD_MAX)) ||
            !automount_text_ok(e->location, MAP_FIELD_MAX))
                return mapper_reject_name(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_AUTOMOUNT, key, -1);
        r = mapper_emit(m, NSS_MAP_AUTOMOUNT, e, &(uint64_t){ 0 });
        if (r == -EINVAL || r == -EILSEQ)
                return mapper_reject_name(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_AUTOMOUNT, key, -1);
        return r;
}

int mapper_add_automount_master(Mapper *m, const NsscacheConf *c, char *key, const char *file) {
        const char *suffix = c->map[NSS_MAP_AUTOMOUNT].files_suffix ?: c->files_cache_filename_suffix;
        _cleanup_free_ char *path = NULL;

        if (asprintf(&path, "%s/%s%s%s", c->files_dir, file, isempty(suffix) ? "" : ".", suffix ?: "") < 0)
                return -ENOMEM;
        return mapper_add_entry(m, NSS_MAP_AUTOMOUNT, &(NssAutomount){ .key = key, .location = path });
}

int mapper_add_entry(Mapper *m, NssMapType t, const void *entry) {
        if (!m->conf->map_enabled[t])
                return 0;
        switch (t) {
        case NSS_MAP_PASSWD:
                return file_user(m, entry);
        case NSS_MAP_SHADOW:
                return file_shadow(m, entry);
        case NSS_MAP_GROUP:
                return file_group(m, entry);
        case NSS_MAP_SSHKEY:
                return file_sshkey(m, entry);
        case NSS_MAP_NETGROUP:
                return file_netgroup(m, entry);
        case NSS_MAP_AUTOMOUNT:
                return file_automount(m, entry);
        default:
                return -EINVAL;
        }
}

int mapper_reject_line(Mapper *m, NssMapType t, const char *name) {
        return mapper_reject_name(m, MAP_REJECT_BAD_LINE, t, name, -1);
}
