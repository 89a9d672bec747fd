/* SCIM Users and Groups into passwd, shadow, group and sshkey entries.
 *
 * The data comes from a remote directory that other people administer, so
 * every value is treated as hostile: a name that is not a POSIX portable
 * name, an id that is 0 or inside the system range, a home directory with
 * "..", or any ':' ',' newline or NUL that would split a line of a cache
 * file, drops that entry and leaves a reject record.  One bad value never
 * fails a run: it costs its entry (or its key, or its member) and nothing
 * else.
 *
 * Nobody gets an account that is not theirs:
 *  - names and ids of the node's own accounts (its passwd and group files,
 *    read at the start of every run) and a built-in list of system names
 *    and ids are never published (local-account);
 *  - when two entries claim one name or id, the one already published with
 *    that same name and id (the caches on disk at the start of the run)
 *    keeps them, wherever it comes in the directory's order; when neither
 *    is, both are rejected, since the directory cannot say which is right.
 *    An entry accepted earlier in the run and displaced later is cut out of
 *    the rendered maps when they are taken (scim_map_take*()).
 *
 * Attribute paths are nsscache's: '/' separates steps and a step is a key of
 * the current object, so a URN step such as
 * "urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser"
 * (which contains ':' and '.') is one step.  For group members the first
 * step names the array and the rest applies to each element
 * ("members/sunkPosixUsername"); a path without '/' is read from each
 * element of "members", and string elements are names themselves.
 *
 * Users are validated once with the passwd settings.  shadow and sshkey
 * entries are made only for users that passed, and only under the same
 * name, so a record that fails passwd validation (uid 0, say) can never
 * place an ssh key under a name that resolves to another account.
 *
 * Names and ids are de-duplicated through compact hash sets (dupset.h):
 * 100k users map in linear time and a few MB.  Nothing here logs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "dupset.h"
#include "attr-path.h"
#include "scim-map.h"
#include "util/cleanup.h"
#include "modutil/colon-file.h"
#include "util/macro.h"
#include "modutil/reserved-accounts.h"
#include "util/strbuf.h"
#include "util/strv.h"

#define MEMBERS_CAP_MIN 16

/* One accepted user or group; user_names/uids (group_names/gids) map to
 * its index in `claims`.  32 bytes: 100k users cost 3.2 MB of them. */
typedef struct Claim {
        uint64_t at[3]; /* where its entries went (MAP_AT_NONE: nowhere), see claim_at() */
        uint32_t id;
        bool group;
        bool removed; /* displaced by a later entry: cut out when taken */
} Claim;

/* A user's passwd, shadow and sshkey entries, or a group's group entry. */
static uint64_t *claim_at(Claim *c, NssMapType t) {
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

/* The value of a name or id whose claimant was rejected: free again. */
#define CLAIM_NONE UINT32_MAX

struct ScimMapper {
        const NsscacheConf *conf;
        MapSink sink; /* where accepted entries go */
        MapRejects rejects;
        DupSet *user_names, *uids, *group_names, *gids;
        DupSet *members; /* of the group being mapped */
        /* The node's own accounts; the system ones every node refuses are in modutil/reserved-accounts.h. */
        DupSet *local_user_names, *local_uids, *local_group_names, *local_gids;
        /* name + NUL + id of each entry in the published passwd / group map */
        DupSet *published_users, *published_groups;
        Claim *claims;
        size_t n_claims, cap_claims;
        size_t n_removed;
        AttrPaths *paths; /* the config's attribute paths, split and hashed once */
};

/* ---- mapper ---------------------------------------------------------------- */

int scim_map_new(const NsscacheConf *c, const MapSink *sink, ScimMapper **ret) {
        ScimMapper *m;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->conf = c;
        m->sink = *sink;
        if (dupset_new(&m->user_names) < 0 || dupset_new(&m->uids) < 0 || dupset_new(&m->group_names) < 0 ||
            dupset_new(&m->gids) < 0 || dupset_new(&m->members) < 0 ||
            dupset_new(&m->local_user_names) < 0 || dupset_new(&m->local_uids) < 0 ||
            dupset_new(&m->local_group_names) < 0 || dupset_new(&m->local_gids) < 0 ||
            dupset_new(&m->published_users) < 0 || dupset_new(&m->published_groups) < 0 ||
            attr_paths_new(&m->paths) < 0) {
                scim_map_free(m);
                return -ENOMEM;
        }
        *ret = m;
        return 0;
}

ScimMapper *scim_map_free(ScimMapper *m) {
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
static int removed_at(const ScimMapper *m, NssMapType t, uint64_t **ret, size_t *ret_n) {
        uint64_t *v;
        size_t n = 0;

        v = calloc(m->n_removed, sizeof(uint64_t));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_claims; i++) {
                const uint64_t *at = claim_at(m->claims + i, t);

                if (m->claims[i].removed && at && *at != MAP_AT_NONE)
                        v[n++] = *at;
        }
        qsort(v, n, sizeof(uint64_t), at_cmp);
        *ret = v;
        *ret_n = n;
        return 0;
}

int scim_map_finish(ScimMapper *m) {
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

const MapRejects *scim_map_rejects(const ScimMapper *m) {
        return &m->rejects;
}

/* Counts a reject and keeps a record with a printable, bounded copy of
 * @name (untrusted text, for log lines). */
static int reject_name(ScimMapper *m, MapRejectReason reason, NssMapType map, const char *name, int64_t id) {
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

static int reject(ScimMapper *m, MapRejectReason reason, NssMapType map, json_object *name, int64_t id) {
        return reject_name(m, reason, map,
                           name && json_object_is_type(name, json_type_string) ? json_object_get_string(name)
                                                                               : NULL,
                           id);
}

static int grow(void **array, size_t *cap, size_t n, size_t size) {
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
static int emit(ScimMapper *m, NssMapType t, const void *entry, uint64_t *ret_at) {
        return m->sink.add(m->sink.data, t, entry, ret_at);
}

/* ---- attributes ------------------------------------------------------------- */

json_object *scim_map_extract(json_object *o, const char *path) {
        return attr_path_extract(o, path);
}

/* @path of @o through the mapper's cache: @path must be the config's or a literal. */
static json_object *attr(ScimMapper *m, json_object *o, const char *path) {
        return attr_paths_get(m->paths, o, path);
}

/* A name every tool takes as it is: POSIX portable filename characters, not
 * starting with '-' (an option), not only dots ("." and ".." as a home or a
 * path component) and not only digits (chown, id and friends take those as
 * an id).  Non-ASCII names are refused: useradd, sshd's AllowUsers patterns
 * and many scripts do not handle them alike. */
static bool name_valid(const char *s) {
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

static bool name_reserved(const DupSet *local, const char *name) {
        size_t n = strlen(name);

        return reserved_account_name(name, n) || dupset_contains(local, name, n);
}

static bool id_reserved(const DupSet *local, uint32_t id) {
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

int scim_map_load_local(ScimMapper *m, const char *passwd, const char *group) {
        int r = colon_file_read(passwd, local_line, &(ColonSets){ m->local_user_names, m->local_uids });

        if (r < 0)
                return r;
        return colon_file_read(group, local_line, &(ColonSets){ m->local_group_names, m->local_gids });
}

int scim_map_load_published(ScimMapper *m, const char *passwd, const char *group) {
        int r = colon_file_read(passwd, published_line, m->published_users);

        if (r < 0)
                return r;
        return colon_file_read(group, published_line, m->published_groups);
}

static bool published(const ScimMapper *m, bool group, const char *name, uint32_t id) {
        char key[MAP_NAME_MAX + 5];

        if (dupset_size(group ? m->published_groups : m->published_users) == 0)
                return false;
        return dupset_contains(group ? m->published_groups : m->published_users, key,
                               published_key(key, name, strlen(name), id));
}

/* ---- claims: who gets a name and an id ------------------------------------- */

/* The name of an accepted entry, from the first map it went to. */
static const char *claim_name(const ScimMapper *m, const Claim *c, char buf[static MAP_NAME_MAX + 1]) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                const uint64_t *at = claim_at((Claim *) c, t);

                if (at && *at != MAP_AT_NONE)
                        return m->sink.name(m->sink.data, t, *at, buf);
        }
        return NULL;
}

/* An entry accepted earlier loses its name and id to a later one. */
static int displace(ScimMapper *m, bool group, uint32_t i, MapRejectReason reason) {
        Claim *c = m->claims + i;
        char buf[MAP_NAME_MAX + 1];

        if (c->removed)
                return 0;
        c->removed = true;
        m->n_removed++;
        return reject_name(m, reason, group ? NSS_MAP_GROUP : NSS_MAP_PASSWD, claim_name(m, c, buf), c->id);
}

/* Whether claim @c is the published entry of its name and id. */
static bool claim_published(const ScimMapper *m, bool group, const Claim *c) {
        char buf[MAP_NAME_MAX + 1];
        const char *name = claim_name(m, c, buf);

        return name && published(m, group, name, c->id);
}

/**
 * claim() - may a new entry have @name and @id?
 * Yes if nobody claimed either.  If someone did, the entry published with
 * this very name and id wins: a newcomer that is it displaces the earlier
 * claimants, a newcomer that is not is rejected.  Between entries of which
 * none is published, all are rejected.  *ret_claim is set when the answer
 * is yes; the rejects are recorded here.  One lookup per key when nobody
 * claimed it before: the common case costs two.
 */
static int claim(ScimMapper *m, bool group, const char *name, uint32_t id, bool *ret_ok,
                 uint32_t *ret_claim) {
        DupSet *names = group ? m->group_names : m->user_names, *ids = group ? m->gids : m->uids;
        NssMapType map = group ? NSS_MAP_GROUP : NSS_MAP_PASSWD;
        uint32_t next, ni = CLAIM_NONE, ii = CLAIM_NONE;
        MapRejectReason lost = _MAP_REJECT_MAX;
        int rn, ri, r;

        *ret_ok = false;
        if (m->n_claims >= CLAIM_NONE)
                return -ENOMEM;
        r = grow((void **) &m->claims, &m->cap_claims, m->n_claims, sizeof(Claim));
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
                return reject_name(m, lost, map, name, id);
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

/* No ':' ',' or control characters (newline, NUL: json-c strings may carry
 * NUL), and valid UTF-8: a path is used as it is, never repaired. */
static bool field_clean(json_object *v, const char *s) {
        size_t n = strlen(s);

        if ((size_t) json_object_get_string_len(v) != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] == ':' || s[i] == ',' || (unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                        return false;
        return cache_format_utf8_valid(s);
}

static bool path_valid(const char *s, bool forbid_dotdot) {
        const char *d;

        if (s[0] != '/' || strlen(s) > SCIM_FIELD_MAX)
                return false;
        if (forbid_dotdot)
                for (d = s; (d = strstr(d, "..")); d += 2)
                        if (d[-1] == '/' && (d[2] == '/' || d[2] == 0))
                                return false;
        return true;
}

typedef enum IdResult { ID_OK, ID_MISSING, ID_BAD, ID_RANGE } IdResult;

static IdResult parse_id(json_object *v, int64_t min, int64_t *ret) {
        int64_t id = 0;

        if (!v)
                return ID_MISSING;
        if (json_object_is_type(v, json_type_int)) {
                id = json_object_get_int64(v);
                /* json-c clamps larger literals to INT64_MAX: out of range either way */
        } else if (json_object_is_type(v, json_type_string)) {
                const char *s = json_object_get_string(v);
                size_t n = strlen(s);

                if (n == 0 || n > 12 || (size_t) json_object_get_string_len(v) != n)
                        return ID_BAD;
                for (size_t i = 0; i < n; i++) {
                        if (s[i] < '0' || s[i] > '9')
                                return ID_BAD;
                        id = id * 10 + (s[i] - '0');
                }
        } else
                return ID_BAD;
        *ret = id;
        if (id <= 0 || id < min || id > SCIM_ID_MAX)
                return ID_RANGE;
        return ID_OK;
}

static const MapRejectReason id_reject[] = {
        [ID_MISSING] = MAP_REJECT_NO_ID,
        [ID_BAD] = MAP_REJECT_BAD_ID,
        [ID_RANGE] = MAP_REJECT_ID_RANGE,
};

/* Names reaching the sets are valid, so at most MAP_NAME_MAX bytes. */
static int set_add(DupSet *set, const char *name) {
        int r = dupset_add(set, name, strlen(name));
        return r < 0 ? r : 0;
}

static bool set_has(DupSet *set, const char *name) {
        return dupset_contains(set, name, strlen(name));
}

/* gecos is cosmetic: forbidden characters become spaces, bytes that are not
 * UTF-8 become '?', long values are cut at a UTF-8 boundary, instead of
 * rejecting the account. */
static char *gecos_from(ScimMapper *m, json_object *user, const char *path) {
        json_object *v = NULL, *name;
        _cleanup_free_ char *joined = NULL;
        const char *s = NULL;
        size_t n;
        char *t;

        if (path)
                v = attr(m, user, path);
        else {
                name = attr(m, user, "name");
                v = attr(m, name, "formatted");
                if (!v || !json_object_is_type(v, json_type_string)) {
                        json_object *g = attr(m, name, "givenName"), *f = attr(m, name, "familyName");
                        if (g && f && json_object_is_type(g, json_type_string) &&
                            json_object_is_type(f, json_type_string)) {
                                if (asprintf(&joined, "%s %s", json_object_get_string(g),
                                             json_object_get_string(f)) < 0)
                                        return NULL;
                                s = joined;
                        } else
                                v = attr(m, user, "displayName");
                }
        }
        if (!s)
                s = v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
        n = strlen(s);
        if (n > SCIM_GECOS_MAX) {
                n = SCIM_GECOS_MAX;
                while (n > 0 && ((unsigned char) s[n] & 0xc0) == 0x80)
                        n--;
        }
        t = strndup(s, n);
        if (!t)
                return NULL;
        for (size_t i = 0; i < n;) {
                int k = (unsigned char) t[i] < 0x80 ? 1 : cache_format_utf8_len(t + i);

                if (k < 0) { /* a stray byte: '?' as a decoder's replacement would be */
                        t[i++] = '?';
                        continue;
                }
                if (t[i] == ':' || t[i] == ',' || (unsigned char) t[i] < 0x20 || t[i] == 0x7f)
                        t[i] = ' ';
                i += (size_t) k;
        }
        return t;
}

static char *home_from_override(const char *tmpl, const char *name) {
        StrBuf b = {};

        for (const char *p = tmpl; *p; p++) {
                if (p[0] == '%' && p[1] == 'u') {
                        strbuf_puts(&b, name);
                        p++;
                } else
                        strbuf_putc(&b, *p);
        }
        return strbuf_steal(&b, NULL);
}

/* A string attribute: NULL when missing; *bad when present with the wrong type. */
static const char *string_at(ScimMapper *m, json_object *o, const char *path, json_object **ret_v,
                             bool *bad) {
        json_object *v = attr(m, o, path);

        *ret_v = v;
        *bad = false;
        if (!v)
                return NULL;
        if (!json_object_is_type(v, json_type_string)) {
                *bad = true;
                return NULL;
        }
        return json_object_get_string(v);
}

/* One authorized_keys line: no control characters (a newline would add a
 * line to authorized_keys), valid UTF-8, bounded.  Commas are fine: options
 * such as from="10.0.0.0/8,192.168.0.0/16" carry them. */
static bool sshkey_valid(const char *b, const char *e) {
        if ((size_t) (e - b) > SCIM_SSHKEY_MAX)
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

/* The user's keys, each trimmed; a key that is not a string or not valid is
 * dropped and counted, the others kept. */
static int collect_sshkeys(ScimMapper *m, json_object *user, json_object *jname, char ***ret) {
        json_object *v = attr(m, user, m->conf->map[NSS_MAP_SSHKEY].path_ssh_keys);
        _cleanup_strv_free_ char **keys = NULL;
        bool array = json_object_is_type(v, json_type_array);
        size_t n = !v ? 0 : array ? json_object_array_length(v) : 1, count = 0;
        int r;

        for (size_t i = 0; i < n; i++) {
                json_object *k = array ? json_object_array_get_idx(v, i) : v;
                const char *s, *b, *e;

                if (!k || !json_object_is_type(k, json_type_string)) {
                        r = reject(m, MAP_REJECT_BAD_SSHKEY, NSS_MAP_SSHKEY, jname, -1);
                        if (r < 0)
                                return r;
                        continue;
                }
                s = json_object_get_string(k);
                for (b = s; *b == ' ' || *b == '\t' || *b == '\n' || *b == '\r'; b++)
                        ;
                for (e = b + strlen(b); e > b && strchr(" \t\r\n", e[-1]); e--)
                        ;
                if ((size_t) json_object_get_string_len(k) != strlen(s) || !sshkey_valid(b, e)) {
                        r = reject(m, MAP_REJECT_BAD_SSHKEY, NSS_MAP_SSHKEY, jname, -1);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (e == b)
                        continue;
                if (count >= SCIM_SSHKEYS_PER_USER_MAX) {
                        r = reject(m, MAP_REJECT_TOO_MANY, NSS_MAP_SSHKEY, jname, -1);
                        if (r < 0)
                                return r;
                        break;
                }
                r = strv_push(&keys, strndup(b, (size_t) (e - b)));
                if (r < 0)
                        return r;
                count++;
        }
        *ret = TAKE_PTR(keys);
        return 0;
}

/* Emits one entry of map @t for claim @i; an entry the format cannot hold is
 * rejected on its own. */
static int emit_named(ScimMapper *m, NssMapType t, const void *entry, uint32_t i, const char *name) {
        int r = emit(m, t, entry, claim_at(m->claims + i, t));

        if (r == -EINVAL || r == -EILSEQ)
                return reject_name(m, MAP_REJECT_BAD_ENTRY, t, name, m->claims[i].id);
        return r;
}

static int emit_for(ScimMapper *m, NssMapType t, const void *entry, uint32_t i, json_object *jname) {
        return emit_named(m, t, entry, i,
                          jname && json_object_is_type(jname, json_type_string)
                                  ? json_object_get_string(jname)
                                  : NULL);
}

/* As nsscache's SCIM source, every user gets an sshkey entry, "name:" when
 * it has no keys. */
static int add_sshkeys(ScimMapper *m, json_object *user, const char *name, json_object *jname, uint32_t i) {
        _cleanup_strv_free_ char **keys = NULL;
        int r = collect_sshkeys(m, user, jname, &keys);

        if (r < 0)
                return r;
        return emit_for(m, NSS_MAP_SSHKEY, &(NssSshkey){ .name = (char *) name, .keys = keys }, i, jname);
}

/* shadow and sshkey may name the user through their own path; it must agree. */
static int derived_name_ok(ScimMapper *m, NssMapType t, json_object *user, const char *name,
                           json_object *jname, bool *ok) {
        const char *path = m->conf->map[t].path_username ?: "userName";
        json_object *v;
        bool bad;
        const char *s = string_at(m, user, path, &v, &bad);

        *ok = s && streq(s, name);
        if (!*ok)
                return reject(m, MAP_REJECT_NAME_MISMATCH, t, v ?: jname, -1);
        return 0;
}

#define ENTERPRISE_USER "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"

/* A path attribute from the configured path, else the enterprise extension:
 * NULL when both are missing or empty (nsscache falls back then too);
 * *bad when one is not a string or not clean. */
static const char *path_attr(ScimMapper *m, json_object *user, const char *path, const char *enterprise,
                             bool *bad) {
        const char *paths[] = { path, enterprise };
        json_object *v;

        *bad = false;
        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                const char *s = paths[i] ? string_at(m, user, paths[i], &v, bad) : NULL;

                if (*bad || (s && *s && !field_clean(v, s))) {
                        *bad = true;
                        return NULL;
                }
                if (s && *s)
                        return s;
        }
        return NULL;
}

/* The home directory: the override, the attribute, or /home/NAME. */
static int user_home(ScimMapper *m, json_object *user, const char *name, char **ret) {
        const ScimMapConf *pc = &m->conf->map[NSS_MAP_PASSWD];
        _cleanup_free_ char *dir = NULL;
        const char *s;
        bool bad;

        if (!isempty(pc->override_home_directory))
                dir = home_from_override(pc->override_home_directory, name);
        else {
                s = path_attr(m, user, pc->path_home_directory, ENTERPRISE_USER "/homeDirectory", &bad);
                if (bad)
                        return -EINVAL;
                if (s)
                        dir = strdup(s);
                else if (asprintf(&dir, "/home/%s", name) < 0)
                        dir = NULL;
        }
        if (!dir)
                return -ENOMEM;
        if (!path_valid(dir, true) || strpbrk(dir, ":,\n"))
                return -EINVAL;
        *ret = TAKE_PTR(dir);
        return 0;
}

/* The login shell: the attribute, the enterprise loginShell, or the default. */
static int user_shell(ScimMapper *m, json_object *user, const char **ret) {
        const ScimMapConf *pc = &m->conf->map[NSS_MAP_PASSWD];
        bool bad;
        const char *s = path_attr(m, user, pc->path_login_shell, ENTERPRISE_USER "/loginShell", &bad);

        if (bad || (s && !path_valid(s, true)))
                return -EINVAL;
        *ret = s ?: pc->default_shell ?: SCIM_DEFAULT_SHELL;
        return 0;
}

/* Parses uid and gid; a missing gid is the uid (the user's private group). */
static int user_ids(ScimMapper *m, json_object *user, json_object *jname, int64_t *uid, int64_t *gid,
                    bool *ok) {
        const ScimMapConf *pc = &m->conf->map[NSS_MAP_PASSWD];
        json_object *v = pc->path_gid ? attr(m, user, pc->path_gid) : NULL;
        IdResult ir = parse_id(attr(m, user, pc->path_uid), m->conf->min_uid, uid);

        *ok = false;
        if (ir != ID_OK)
                return reject(m, id_reject[ir], NSS_MAP_PASSWD, jname, ir == ID_RANGE ? *uid : -1);
        *gid = *uid;
        if (v) {
                ir = parse_id(v, m->conf->min_gid, gid);
                if (ir != ID_OK)
                        return reject(m, id_reject[ir], NSS_MAP_PASSWD, jname, ir == ID_RANGE ? *gid : -1);
        }
        *ok = true;
        return 0;
}

/* shadow and sshkey entries, for a user passwd accepted. */
static int user_derived(ScimMapper *m, json_object *user, const char *name, json_object *jname, uint32_t i) {
        const NsscacheConf *c = m->conf;
        const ScimMapConf *sc = &c->map[NSS_MAP_SHADOW];
        bool ok;
        int r;

        if (c->map_enabled[NSS_MAP_SHADOW]) {
                r = derived_name_ok(m, NSS_MAP_SHADOW, user, name, jname, &ok);
                if (r >= 0 && ok)
                        r = emit_for(m, NSS_MAP_SHADOW,
                                     &(NssShadow){
                                             .name = (char *) name,
                                             .passwd = (char *) "*",
                                             .lstchg = sc->shadow_lstchg,
                                             .min = sc->shadow_min,
                                             .max = sc->shadow_max,
                                             .warn = sc->shadow_warn,
                                             .inact = sc->shadow_inact,
                                             .expire = sc->shadow_expire,
                                             .flag = sc->shadow_flag,
                                     },
                                     i, jname);
                if (r < 0)
                        return r;
        }
        if (c->map_enabled[NSS_MAP_SSHKEY]) {
                r = derived_name_ok(m, NSS_MAP_SSHKEY, user, name, jname, &ok);
                if (r >= 0 && ok)
                        r = add_sshkeys(m, user, name, jname, i);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int map_user(ScimMapper *m, json_object *user) {
        const ScimMapConf *pc = &m->conf->map[NSS_MAP_PASSWD];
        _cleanup_free_ char *dir = NULL, *gecos = NULL;
        const char *name, *shell;
        json_object *jname;
        int64_t uid = -1, gid = -1;
        uint32_t i;
        bool bad, ok;
        int r;

        if (!json_object_is_type(user, json_type_object))
                return reject(m, MAP_REJECT_NOT_OBJECT, NSS_MAP_PASSWD, NULL, -1);

        name = string_at(m, user, pc->path_username ?: "userName", &jname, &bad);
        if (!name)
                return reject(m, bad ? MAP_REJECT_BAD_NAME : MAP_REJECT_NO_NAME, NSS_MAP_PASSWD, NULL, -1);
        if (!name_valid(name) || (size_t) json_object_get_string_len(jname) != strlen(name))
                return reject(m, MAP_REJECT_BAD_NAME, NSS_MAP_PASSWD, jname, -1);
        r = user_ids(m, user, jname, &uid, &gid, &ok);
        if (r < 0 || !ok)
                return r;
        /* The primary group counts too: a gid of a local group would hand out its files. */
        if (name_reserved(m->local_user_names, name) || id_reserved(m->local_uids, (uint32_t) uid) ||
            id_reserved(m->local_gids, (uint32_t) gid))
                return reject(m, MAP_REJECT_LOCAL_ACCOUNT, NSS_MAP_PASSWD, jname, uid);

        r = user_home(m, user, name, &dir);
        if (r == -EINVAL)
                return reject(m, MAP_REJECT_BAD_HOME, NSS_MAP_PASSWD, jname, uid);
        if (r < 0)
                return r;
        r = user_shell(m, user, &shell);
        if (r < 0)
                return reject(m, MAP_REJECT_BAD_SHELL, NSS_MAP_PASSWD, jname, uid);
        gecos = gecos_from(m, user, pc->path_gecos);
        if (!gecos)
                return -ENOMEM;

        r = claim(m, false, name, (uint32_t) uid, &ok, &i);
        if (r < 0 || !ok)
                return r;
        if (m->conf->map_enabled[NSS_MAP_PASSWD]) {
                r = emit_for(m, NSS_MAP_PASSWD,
                             &(NssPasswd){
                                     .name = (char *) name,
                                     .passwd = (char *) "x",
                                     .uid = (uint32_t) uid,
                                     .gid = (uint32_t) gid,
                                     .gecos = gecos,
                                     .dir = dir,
                                     .shell = (char *) shell,
                             },
                             i, jname);
                if (r < 0)
                        return r;
                if (*claim_at(m->claims + i, NSS_MAP_PASSWD) == MAP_AT_NONE) {
                        /* refused by the format: the name and uid stay taken, nothing else is published */
                        m->claims[i].removed = true;
                        m->n_removed++;
                        return 0;
                }
        }
        return user_derived(m, user, name, jname, i);
}

int scim_map_add_users(ScimMapper *m, json_object *resources) {
        size_t n;
        int r;

        if (!resources)
                return 0;
        n = json_object_array_length(resources);
        for (size_t i = 0; i < n; i++) {
                r = map_user(m, json_object_array_get_idx(resources, i));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Slots allocated for a member vector of @n slots (NULL included): it grows
 * by doubling, so a group of a million members is not quadratic. */
static size_t members_cap(size_t n) {
        size_t c = MEMBERS_CAP_MIN;

        while (c < n)
                c *= 2;
        return c;
}

static int push_member(char ***members, size_t *n, const char *s) {
        char *d = strdup(s);

        if (!d)
                return -ENOMEM;
        if (members_cap(*n + 2) != members_cap(*n + 1)) {
                char **v = reallocarray(*members, members_cap(*n + 2), sizeof(char *));

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

static int add_member(ScimMapper *m, char ***members, size_t *n, DupSet *set, json_object *jgroup,
                      json_object *v) {
        const char *s;

        if (!v || !json_object_is_type(v, json_type_string) || !name_valid(s = json_object_get_string(v)) ||
            (size_t) json_object_get_string_len(v) != strlen(s))
                return reject(m, MAP_REJECT_BAD_MEMBER, NSS_MAP_GROUP, v ?: jgroup, -1);
        /* a SCIM group may not pull a system account into itself */
        if (name_reserved(m->local_user_names, s))
                return reject(m, MAP_REJECT_LOCAL_ACCOUNT, NSS_MAP_GROUP, v, -1);
        if (set_has(set, s))
                return 0;
        if (*n >= SCIM_MEMBERS_MAX)
                return reject(m, MAP_REJECT_TOO_MANY, NSS_MAP_GROUP, jgroup, -1);
        if (set_add(set, s) < 0)
                return -ENOMEM;
        return push_member(members, n, s);
}

static int group_members(ScimMapper *m, json_object *group, json_object *jgroup, char ***ret) {
        const char *path = m->conf->map[NSS_MAP_GROUP].path_username ?: "userName";
        const char *slash = strchr(path, '/');
        _cleanup_free_ char *array_key = NULL;
        _cleanup_strv_free_ char **members = NULL;
        json_object *arr;
        size_t n = 0, len;
        int r = 0;

        array_key = slash ? strndup(path, (size_t) (slash - path)) : strdup("members");
        if (!array_key)
                return -ENOMEM;
        members = calloc(members_cap(1), sizeof(char *));
        if (!members)
                return -ENOMEM;
        arr = scim_map_extract(group, array_key);
        if (arr && !json_object_is_type(arr, json_type_array))
                r = reject(m, MAP_REJECT_BAD_MEMBER, NSS_MAP_GROUP, jgroup, -1);
        if (!arr || !json_object_is_type(arr, json_type_array)) {
                *ret = TAKE_PTR(members);
                return r;
        }
        dupset_clear(m->members);
        len = json_object_array_length(arr);
        for (size_t i = 0; i < len && r >= 0; i++) {
                json_object *e = json_object_array_get_idx(arr, i);

                if (json_object_is_type(e, json_type_object))
                        r = add_member(m, &members, &n, m->members, jgroup,
                                       attr(m, e, slash ? slash + 1 : path));
                else if (!slash && json_object_is_type(e, json_type_string))
                        r = add_member(m, &members, &n, m->members, jgroup, e);
                else
                        r = reject(m, MAP_REJECT_BAD_MEMBER, NSS_MAP_GROUP, jgroup, -1);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(members);
        return 0;
}

static int map_group(ScimMapper *m, json_object *group) {
        const ScimMapConf *gc = &m->conf->map[NSS_MAP_GROUP];
        _cleanup_strv_free_ char **members = NULL;
        json_object *jname;
        const char *name;
        int64_t gid = -1;
        IdResult ir;
        uint32_t i;
        bool bad, ok;
        int r;

        if (!json_object_is_type(group, json_type_object))
                return reject(m, MAP_REJECT_NOT_OBJECT, NSS_MAP_GROUP, NULL, -1);
        name = string_at(m, group, gc->path_groupname ?: "displayName", &jname, &bad);
        if (!name)
                return reject(m, bad ? MAP_REJECT_BAD_NAME : MAP_REJECT_NO_NAME, NSS_MAP_GROUP, NULL, -1);
        if (!name_valid(name) || (size_t) json_object_get_string_len(jname) != strlen(name))
                return reject(m, MAP_REJECT_BAD_NAME, NSS_MAP_GROUP, jname, -1);
        ir = parse_id(attr(m, group, gc->path_gid), m->conf->min_gid, &gid);
        if (ir != ID_OK)
                return reject(m, id_reject[ir], NSS_MAP_GROUP, jname, ir == ID_RANGE ? gid : -1);
        if (name_reserved(m->local_group_names, name) || id_reserved(m->local_gids, (uint32_t) gid))
                return reject(m, MAP_REJECT_LOCAL_ACCOUNT, NSS_MAP_GROUP, jname, gid);
        r = group_members(m, group, jname, &members);
        if (r < 0)
                return r;
        r = claim(m, true, name, (uint32_t) gid, &ok, &i);
        if (r < 0 || !ok)
                return r;
        r = emit_for(m, NSS_MAP_GROUP,
                     &(NssGroup){
                             .name = (char *) name,
                             .passwd = (char *) "x",
                             .gid = (uint32_t) gid,
                             .members = members,
                     },
                     i, jname);
        if (r >= 0 && *claim_at(m->claims + i, NSS_MAP_GROUP) == MAP_AT_NONE) {
                m->claims[i].removed = true;
                m->n_removed++;
        }
        return r;
}

int scim_map_add_groups(ScimMapper *m, json_object *resources) {
        size_t n;
        int r;

        if (!resources || !m->conf->map_enabled[NSS_MAP_GROUP])
                return 0;
        n = json_object_array_length(resources);
        for (size_t i = 0; i < n; i++) {
                r = map_group(m, json_object_array_get_idx(resources, i));
                if (r < 0)
                        return r;
        }
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
        return id > 0 && id >= min && id <= SCIM_ID_MAX;
}

/* Marks claim @i displaced when the format refused its entry of map @t. */
static void drop_unwritten(ScimMapper *m, NssMapType t, uint32_t i) {
        if (*claim_at(m->claims + i, t) == MAP_AT_NONE && !m->claims[i].removed) {
                m->claims[i].removed = true;
                m->n_removed++;
        }
}

static int file_user(ScimMapper *m, const NssPasswd *e) {
        const char *name = e->name;
        uint32_t i;
        bool ok;
        int r;

        if (!name_valid(name))
                return reject_name(m, MAP_REJECT_BAD_NAME, NSS_MAP_PASSWD, name, -1);
        if (!id_in_range(e->uid, m->conf->min_uid))
                return reject_name(m, MAP_REJECT_ID_RANGE, NSS_MAP_PASSWD, name, e->uid);
        if (!id_in_range(e->gid, m->conf->min_gid))
                return reject_name(m, MAP_REJECT_ID_RANGE, NSS_MAP_PASSWD, name, e->gid);
        if (name_reserved(m->local_user_names, name) || id_reserved(m->local_uids, e->uid) ||
            id_reserved(m->local_gids, e->gid))
                return reject_name(m, MAP_REJECT_LOCAL_ACCOUNT, NSS_MAP_PASSWD, name, e->uid);
        if (!e->dir || !text_clean(e->dir) || !path_valid(e->dir, true))
                return reject_name(m, MAP_REJECT_BAD_HOME, NSS_MAP_PASSWD, name, e->uid);
        if (!e->shell || !text_clean(e->shell) || !path_valid(e->shell, true))
                return reject_name(m, MAP_REJECT_BAD_SHELL, NSS_MAP_PASSWD, name, e->uid);
        if (e->gecos && (strlen(e->gecos) > SCIM_GECOS_MAX || !text_clean(e->gecos)))
                return reject_name(m, MAP_REJECT_BAD_ENTRY, NSS_MAP_PASSWD, name, e->uid);
        r = claim(m, false, name, e->uid, &ok, &i);
        if (r < 0 || !ok)
                return r;
        r = emit_named(m, NSS_MAP_PASSWD, e, i, name);
        if (r >= 0)
                drop_unwritten(m, NSS_MAP_PASSWD, i);
        return r;
}

/* The claim of the user a shadow or sshkey entry belongs to: its passwd
 * entry, accepted earlier in this run and still standing. */
static int file_owner(ScimMapper *m, NssMapType t, const char *name, bool *ret_ok, uint32_t *ret) {
        uint32_t i = CLAIM_NONE;

        *ret_ok = false;
        if (!name_valid(name))
                return reject_name(m, MAP_REJECT_BAD_NAME, t, name, -1);
        if (name_reserved(m->local_user_names, name))
                return reject_name(m, MAP_REJECT_LOCAL_ACCOUNT, t, name, -1);
        if (!dupset_get(m->user_names, name, strlen(name), &i) || i == CLAIM_NONE || m->claims[i].removed ||
            m->claims[i].group || *claim_at(m->claims + i, NSS_MAP_PASSWD) == MAP_AT_NONE)
                return reject_name(m, MAP_REJECT_NAME_MISMATCH, t, name, -1);
        if (*claim_at(m->claims + i, t) != MAP_AT_NONE)
                return reject_name(m, MAP_REJECT_DUP_NAME, t, name, m->claims[i].id);
        *ret_ok = true;
        *ret = i;
        return 0;
}

static int file_shadow(ScimMapper *m, const NssShadow *e) {
        uint32_t i;
        bool ok;
        int r = file_owner(m, NSS_MAP_SHADOW, e->name, &ok, &i);

        if (r < 0 || !ok)
                return r;
        return emit_named(m, NSS_MAP_SHADOW, e, i, e->name);
}

/* The keys sunkd would have written: each one valid as collect_sshkeys()
 * leaves it (trimmed, not empty), at most SCIM_SSHKEYS_PER_USER_MAX. */
static int file_sshkeys(ScimMapper *m, const NssSshkey *e, char ***ret) {
        _cleanup_strv_free_ char **keys = NULL;
        size_t count = 0;
        int r;

        for (size_t j = 0; e->keys && e->keys[j]; j++) {
                const char *k = e->keys[j];
                size_t n = strlen(k);

                if (n == 0 || strchr(" \t", k[0]) || strchr(" \t", k[n - 1]) || !sshkey_valid(k, k + n)) {
                        r = reject_name(m, MAP_REJECT_BAD_SSHKEY, NSS_MAP_SSHKEY, e->name, -1);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (count >= SCIM_SSHKEYS_PER_USER_MAX) {
                        r = reject_name(m, MAP_REJECT_TOO_MANY, NSS_MAP_SSHKEY, e->name, -1);
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

static int file_sshkey(ScimMapper *m, const NssSshkey *e) {
        _cleanup_strv_free_ char **keys = NULL;
        uint32_t i;
        bool ok;
        int r = file_owner(m, NSS_MAP_SSHKEY, e->name, &ok, &i);

        if (r < 0 || !ok)
                return r;
        r = file_sshkeys(m, e, &keys);
        if (r < 0)
                return r;
        return emit_named(m, NSS_MAP_SSHKEY, &(NssSshkey){ .name = e->name, .keys = keys }, i, e->name);
}

/* A member as add_member() takes one: valid, not a local account, once. */
static int file_member(ScimMapper *m, const NssGroup *e, const char *s, char ***members, size_t *n) {
        if (!name_valid(s))
                return reject_name(m, MAP_REJECT_BAD_MEMBER, NSS_MAP_GROUP, e->name, -1);
        if (name_reserved(m->local_user_names, s))
                return reject_name(m, MAP_REJECT_LOCAL_ACCOUNT, NSS_MAP_GROUP, s, -1);
        if (set_has(m->members, s))
                return 0;
        if (*n >= SCIM_MEMBERS_MAX)
                return reject_name(m, MAP_REJECT_TOO_MANY, NSS_MAP_GROUP, e->name, -1);
        if (set_add(m->members, s) < 0)
                return -ENOMEM;
        return push_member(members, n, s);
}

static int file_group(ScimMapper *m, const NssGroup *e) {
        _cleanup_strv_free_ char **members = NULL;
        size_t n = 0;
        uint32_t i;
        bool ok;
        int r = 0;

        if (!name_valid(e->name))
                return reject_name(m, MAP_REJECT_BAD_NAME, NSS_MAP_GROUP, e->name, -1);
        if (!id_in_range(e->gid, m->conf->min_gid))
                return reject_name(m, MAP_REJECT_ID_RANGE, NSS_MAP_GROUP, e->name, e->gid);
        if (name_reserved(m->local_group_names, e->name) || id_reserved(m->local_gids, e->gid))
                return reject_name(m, MAP_REJECT_LOCAL_ACCOUNT, NSS_MAP_GROUP, e->name, e->gid);
        members = calloc(members_cap(1), sizeof(char *));
        if (!members)
                return -ENOMEM;
        dupset_clear(m->members);
        for (size_t j = 0; e->members && e->members[j] && r >= 0; j++)
                r = file_member(m, e, e->members[j], &members, &n);
        if (r < 0)
                return r;
        r = claim(m, true, e->name, e->gid, &ok, &i);
        if (r < 0 || !ok)
                return r;
        r = emit_named(
                m, NSS_MAP_GROUP,
                &(NssGroup){ .name = e->name, .passwd = e->passwd, .gid = e->gid, .members = members }, i,
                e->name);
        if (r >= 0)
                drop_unwritten(m, NSS_MAP_GROUP, i);
        return r;
}

int scim_map_add_entry(ScimMapper *m, NssMapType t, const void *entry) {
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
        default:
                return -EINVAL;
        }
}

int scim_map_reject_line(ScimMapper *m, NssMapType t, const char *name) {
        return reject_name(m, MAP_REJECT_BAD_LINE, t, name, -1);
}
