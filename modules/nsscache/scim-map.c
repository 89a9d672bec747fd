/* SCIM Users and Groups into passwd, shadow, group and sshkey entries.
 *
 * The data comes from a remote directory that other people administer, so
 * every value is treated as hostile: a name that is not a POSIX portable
 * name, an id that is 0 or inside the system range, a home directory with
 * "..", or any ':' ',' newline or NUL that would split a line of a cache
 * file, drops that entry and leaves a reject record.  The first entry to
 * claim a name or an id wins and later claimants are rejected, so one bad
 * record cannot take over an existing account.
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
#include "scim-map.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strbuf.h"
#include "util/strv.h"

#define MEMBERS_CAP_MIN 16

static const char *const reject_table[_SCIM_REJECT_MAX] = {
        [SCIM_REJECT_NOT_OBJECT] = "not-an-object",
        [SCIM_REJECT_NO_NAME] = "missing-name",
        [SCIM_REJECT_BAD_NAME] = "invalid-name",
        [SCIM_REJECT_NO_ID] = "missing-id",
        [SCIM_REJECT_BAD_ID] = "invalid-id",
        [SCIM_REJECT_ID_RANGE] = "id-out-of-range",
        [SCIM_REJECT_BAD_HOME] = "invalid-home",
        [SCIM_REJECT_BAD_SHELL] = "invalid-shell",
        [SCIM_REJECT_DUP_NAME] = "duplicate-name",
        [SCIM_REJECT_DUP_ID] = "duplicate-id",
        [SCIM_REJECT_BAD_MEMBER] = "invalid-member",
        [SCIM_REJECT_BAD_SSHKEY] = "invalid-sshkey",
        [SCIM_REJECT_NAME_MISMATCH] = "name-mismatch",
        [SCIM_REJECT_TOO_MANY] = "too-many-values",
};

const char *scim_reject_reason_to_string(ScimRejectReason r) {
        if ((int) r < 0 || r >= _SCIM_REJECT_MAX)
                return NULL;
        return reject_table[r];
}

struct ScimMapper {
        const ScimConfig *conf;
        bool formatted;                 /* entries go to `text`, not to `maps` */
        NssMaps maps;
        size_t cap[_NSS_MAP_MAX];
        CacheFormatted text[_NSS_MAP_MAX];
        ScimRejects rejects;
        DupSet *user_names, *uids, *group_names, *gids;
        DupSet *members; /* of the group being mapped */
};

/* ---- pages ----------------------------------------------------------------- */

void scim_map_page_done(ScimPage *p) {
        if (!p)
                return;
        json_object_put(p->root);
        *p = (ScimPage) { .start_index = -1, .items_per_page = -1 };
}

static int page_error(char **ret_error, const char *what, const char *detail) {
        if (ret_error) {
                free(*ret_error);
                if (asprintf(ret_error, "%s%s", what, detail) < 0)
                        *ret_error = NULL;
        }
        return -EBADMSG;
}

static bool get_count(json_object *root, const char *key, int64_t *ret) {
        json_object *v;

        if (!json_object_object_get_ex(root, key, &v) || !json_object_is_type(v, json_type_int))
                return false;
        *ret = json_object_get_int64(v);
        return true;
}

int scim_map_page_parse(const char *buf, size_t len, ScimPage *ret, char **ret_error) {
        json_tokener *tok;
        json_object *root, *res = NULL;
        enum json_tokener_error jerr;
        ScimPage p = { .start_index = -1, .items_per_page = -1 };
        size_t end;

        if (len > INT32_MAX)
                return page_error(ret_error, "", "body too large");
        tok = json_tokener_new_ex(SCIM_JSON_DEPTH_MAX);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        root = json_tokener_parse_ex(tok, buf, (int) len);
        jerr = json_tokener_get_error(tok);
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        if (jerr == json_tokener_continue) {
                json_object_put(root);
                return page_error(ret_error, "", "truncated JSON");
        }
        if (!root || jerr != json_tokener_success) {
                json_object_put(root);
                return page_error(ret_error, "invalid JSON: ", json_tokener_error_desc(jerr));
        }
        for (; end < len; end++)
                if (!strchr(" \t\r\n", buf[end])) {
                        json_object_put(root);
                        return page_error(ret_error, "", "trailing data after the JSON value");
                }
        p.root = root;
        if (!json_object_is_type(root, json_type_object)) {
                scim_map_page_done(&p);
                return page_error(ret_error, "", "not a JSON object");
        }
        if (!get_count(root, "totalResults", &p.total_results) || p.total_results < 0) {
                scim_map_page_done(&p);
                return page_error(ret_error, "", "missing or invalid totalResults");
        }
        (void) get_count(root, "startIndex", &p.start_index);
        (void) get_count(root, "itemsPerPage", &p.items_per_page);
        if (json_object_object_get_ex(root, "Resources", &res) &&
            !json_object_is_type(res, json_type_null)) {
                if (!json_object_is_type(res, json_type_array)) {
                        scim_map_page_done(&p);
                        return page_error(ret_error, "", "Resources is not an array");
                }
                p.resources = res;
                p.n_resources = json_object_array_length(res);
        }
        *ret = p;
        return 0;
}

/* ---- mapper ---------------------------------------------------------------- */

static int mapper_new(const ScimConfig *c, bool formatted, ScimMapper **ret) {
        ScimMapper *m;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->conf = c;
        m->formatted = formatted;
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                cache_formatted_init(m->text + t, t);
        if (dupset_new(&m->user_names) < 0 || dupset_new(&m->uids) < 0 ||
            dupset_new(&m->group_names) < 0 || dupset_new(&m->gids) < 0 ||
            dupset_new(&m->members) < 0) {
                scim_map_free(m);
                return -ENOMEM;
        }
        *ret = m;
        return 0;
}

int scim_map_new(const ScimConfig *c, ScimMapper **ret) {
        return mapper_new(c, false, ret);
}

int scim_map_new_formatted(const ScimConfig *c, ScimMapper **ret) {
        return mapper_new(c, true, ret);
}

ScimMapper *scim_map_free(ScimMapper *m) {
        if (!m)
                return NULL;
        nss_maps_done(&m->maps);
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                cache_formatted_done(m->text + t);
        for (size_t i = 0; i < m->rejects.n_records; i++)
                free(m->rejects.records[i].name);
        free(m->rejects.records);
        dupset_free(m->user_names);
        dupset_free(m->uids);
        dupset_free(m->group_names);
        dupset_free(m->gids);
        dupset_free(m->members);
        free(m);
        return NULL;
}

void scim_map_take(ScimMapper *m, NssMaps *ret) {
        *ret = m->maps;
        memset(&m->maps, 0, sizeof(m->maps));
        memset(m->cap, 0, sizeof(m->cap));
}

void scim_map_take_formatted(ScimMapper *m, CacheFormatted ret[static _NSS_MAP_MAX]) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                ret[t] = m->text[t];
                cache_formatted_init(m->text + t, t);
        }
}

const ScimRejects *scim_map_rejects(const ScimMapper *m) {
        return &m->rejects;
}

/* A printable, bounded copy of untrusted text, for log lines. */
static char *printable_copy(json_object *v) {
        const char *s;
        char *t;
        size_t n;

        if (!v || !json_object_is_type(v, json_type_string))
                return NULL;
        s = json_object_get_string(v);
        n = MIN(strlen(s), (size_t) 64);
        t = strndup(s, n);
        if (!t)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) t[i] < 0x20 || (unsigned char) t[i] >= 0x7f)
                        t[i] = '?';
        return t;
}

static int reject(ScimMapper *m, ScimRejectReason reason, NssMapType map, json_object *name,
                  int64_t id) {
        ScimRejects *r = &m->rejects;

        r->count[reason]++;
        r->total++;
        if (r->n_records >= SCIM_REJECT_RECORDS_MAX)
                return 0;
        if (!r->records) {
                r->records = calloc(SCIM_REJECT_RECORDS_MAX, sizeof(ScimReject));
                if (!r->records)
                        return -ENOMEM;
        }
        r->records[r->n_records++] = (ScimReject) {
                .reason = reason,
                .map = map,
                .name = printable_copy(name),
                .id = id,
        };
        return 0;
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

/* One step of a path: a key of @o, copied out only when it is long. */
static json_object *extract_step(json_object *o, const char *step, size_t n) {
        _cleanup_free_ char *heap = NULL;
        char buf[256];
        const char *key = buf;
        json_object *v;

        if (n < sizeof(buf)) {
                memcpy(buf, step, n);
                buf[n] = 0;
        } else {
                key = heap = strndup(step, n);
                if (!heap)
                        return NULL;
        }
        if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
                return NULL;
        return v;
}

/* ---- entries: copied into NssMaps, or rendered at once ---------------------- */

static int copy_passwd(ScimMapper *m, const void *entry) {
        const NssPasswd *e = entry;
        NssPasswd *p;
        int r;

        r = grow((void **) &m->maps.passwd, &m->cap[NSS_MAP_PASSWD], m->maps.n_passwd, sizeof(NssPasswd));
        if (r < 0)
                return r;
        p = m->maps.passwd + m->maps.n_passwd++;
        *p = (NssPasswd) {
                .name = strdup(e->name),
                .passwd = strdup(e->passwd),
                .uid = e->uid,
                .gid = e->gid,
                .gecos = strdup(e->gecos),
                .dir = strdup(e->dir),
                .shell = strdup(e->shell),
        };
        return p->name && p->passwd && p->gecos && p->dir && p->shell ? 0 : -ENOMEM;
}

static int copy_shadow(ScimMapper *m, const void *entry) {
        const NssShadow *e = entry;
        NssShadow *p;
        int r;

        r = grow((void **) &m->maps.shadow, &m->cap[NSS_MAP_SHADOW], m->maps.n_shadow, sizeof(NssShadow));
        if (r < 0)
                return r;
        p = m->maps.shadow + m->maps.n_shadow++;
        *p = *e;
        p->name = strdup(e->name);
        p->passwd = strdup(e->passwd);
        return p->name && p->passwd ? 0 : -ENOMEM;
}

static int copy_group(ScimMapper *m, const void *entry) {
        const NssGroup *e = entry;
        NssGroup *p;
        int r;

        r = grow((void **) &m->maps.group, &m->cap[NSS_MAP_GROUP], m->maps.n_group, sizeof(NssGroup));
        if (r < 0)
                return r;
        p = m->maps.group + m->maps.n_group++;
        *p = (NssGroup) {
                .name = strdup(e->name),
                .passwd = strdup(e->passwd),
                .gid = e->gid,
                .members = strv_copy(e->members),
        };
        return p->name && p->passwd && p->members ? 0 : -ENOMEM;
}

static int copy_sshkey(ScimMapper *m, const void *entry) {
        const NssSshkey *e = entry;
        NssSshkey *p;
        int r;

        r = grow((void **) &m->maps.sshkey, &m->cap[NSS_MAP_SSHKEY], m->maps.n_sshkey, sizeof(NssSshkey));
        if (r < 0)
                return r;
        p = m->maps.sshkey + m->maps.n_sshkey++;
        *p = (NssSshkey) { .name = strdup(e->name), .keys = strv_copy(e->keys) };
        return p->name && p->keys ? 0 : -ENOMEM;
}

static int (*const copy_entry[_NSS_MAP_MAX])(ScimMapper *m, const void *entry) = {
        [NSS_MAP_PASSWD] = copy_passwd,
        [NSS_MAP_SHADOW] = copy_shadow,
        [NSS_MAP_GROUP] = copy_group,
        [NSS_MAP_SSHKEY] = copy_sshkey,
};

/* Hands on one accepted entry whose strings are borrowed. */
static int emit(ScimMapper *m, NssMapType t, const void *entry) {
        if (m->formatted)
                return cache_formatted_add(m->text + t, entry);
        return copy_entry[t](m, entry);
}

/* ---- attributes ------------------------------------------------------------- */

json_object *scim_map_extract(json_object *o, const char *path) {
        const char *p = path;

        if (!path || !*path)
                return NULL;
        for (;;) {
                const char *e = strchr(p, '/');
                size_t n = e ? (size_t) (e - p) : strlen(p);
                json_object *v;

                if (!json_object_is_type(o, json_type_object))
                        return NULL;
                v = extract_step(o, p, n);
                if (!v)
                        return NULL;
                if (!e)
                        return v;
                o = v;
                p = e + 1;
        }
}

static bool name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > SCIM_NAME_MAX || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-",
                            s[i]))
                        return false;
        return true;
}

/* No ':' ',' or control characters (newline, NUL: json-c strings may carry NUL). */
static bool field_clean(json_object *v, const char *s) {
        size_t n = strlen(s);

        if ((size_t) json_object_get_string_len(v) != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] == ':' || s[i] == ',' || (unsigned char) s[i] < 0x20 || s[i] == 0x7f)
                        return false;
        return true;
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

static const ScimRejectReason id_reject[] = {
        [ID_MISSING] = SCIM_REJECT_NO_ID,
        [ID_BAD] = SCIM_REJECT_BAD_ID,
        [ID_RANGE] = SCIM_REJECT_ID_RANGE,
};

/* Names reaching the sets are valid, so at most SCIM_NAME_MAX bytes. */
static int set_add(DupSet *set, const char *name) {
        int r = dupset_add(set, name, strlen(name));
        return r < 0 ? r : 0;
}

static bool set_has(DupSet *set, const char *name) {
        return dupset_contains(set, name, strlen(name));
}

/* gecos is cosmetic: forbidden characters become spaces, long values are cut
 * at a UTF-8 boundary instead of rejecting the account. */
static char *gecos_from(json_object *user, const char *path) {
        json_object *v = NULL, *name;
        _cleanup_free_ char *joined = NULL;
        const char *s = NULL;
        size_t n;
        char *t;

        if (path)
                v = scim_map_extract(user, path);
        else {
                name = scim_map_extract(user, "name");
                v = scim_map_extract(name, "formatted");
                if (!v || !json_object_is_type(v, json_type_string)) {
                        json_object *g = scim_map_extract(name, "givenName"),
                                    *f = scim_map_extract(name, "familyName");
                        if (g && f && json_object_is_type(g, json_type_string) &&
                            json_object_is_type(f, json_type_string)) {
                                if (asprintf(&joined, "%s %s", json_object_get_string(g),
                                             json_object_get_string(f)) < 0)
                                        return NULL;
                                s = joined;
                        } else
                                v = scim_map_extract(user, "displayName");
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
        for (size_t i = 0; i < n; i++)
                if (t[i] == ':' || t[i] == ',' || (unsigned char) t[i] < 0x20 || t[i] == 0x7f)
                        t[i] = ' ';
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
static const char *string_at(json_object *o, const char *path, json_object **ret_v, bool *bad) {
        json_object *v = scim_map_extract(o, path);

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

static int add_sshkeys(ScimMapper *m, json_object *user, const char *name, json_object *jname) {
        const ScimMapConf *mc = &m->conf->map[NSS_MAP_SSHKEY];
        json_object *v = scim_map_extract(user, mc->path_ssh_keys);
        _cleanup_strv_free_ char **keys = NULL;
        size_t n, count = 0;
        int r;

        if (!v)
                return 0;
        n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
        for (size_t i = 0; i < n; i++) {
                json_object *k = json_object_is_type(v, json_type_array) ?
                        json_object_array_get_idx(v, i) : v;
                const char *s, *b, *e;
                bool ok = true;

                if (!k || !json_object_is_type(k, json_type_string)) {
                        r = reject(m, SCIM_REJECT_BAD_SSHKEY, NSS_MAP_SSHKEY, jname, -1);
                        if (r < 0)
                                return r;
                        continue;
                }
                s = json_object_get_string(k);
                if ((size_t) json_object_get_string_len(k) != strlen(s))
                        ok = false;
                for (b = s; *b == ' ' || *b == '\t' || *b == '\n' || *b == '\r'; b++)
                        ;
                for (e = b + strlen(b); e > b && strchr(" \t\r\n", e[-1]); e--)
                        ;
                if (e == b && ok)
                        continue;
                if ((size_t) (e - b) > SCIM_SSHKEY_MAX)
                        ok = false;
                for (const char *p = b; ok && p < e; p++)
                        if ((unsigned char) *p < 0x20 || *p == 0x7f || *p == ',')
                                ok = false;
                if (!ok) {
                        r = reject(m, SCIM_REJECT_BAD_SSHKEY, NSS_MAP_SSHKEY, jname, -1);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (count >= SCIM_SSHKEYS_PER_USER_MAX) {
                        r = reject(m, SCIM_REJECT_TOO_MANY, NSS_MAP_SSHKEY, jname, -1);
                        if (r < 0)
                                return r;
                        break;
                }
                r = strv_push(&keys, strndup(b, (size_t) (e - b)));
                if (r < 0)
                        return r;
                count++;
        }
        if (!keys)
                return 0;
        return emit(m, NSS_MAP_SSHKEY, &(NssSshkey) { .name = (char *) name, .keys = keys });
}

/* shadow and sshkey may name the user through their own path; it must agree. */
static int derived_name_ok(ScimMapper *m, NssMapType t, json_object *user, const char *name,
                           json_object *jname, bool *ok) {
        const char *path = m->conf->map[t].path_username ?: "userName";
        json_object *v;
        bool bad;
        const char *s = string_at(user, path, &v, &bad);

        *ok = s && streq(s, name);
        if (!*ok)
                return reject(m, SCIM_REJECT_NAME_MISMATCH, t, v ?: jname, -1);
        return 0;
}

static int map_user(ScimMapper *m, json_object *user) {
        const ScimConfig *c = m->conf;
        const ScimMapConf *pc = &c->map[NSS_MAP_PASSWD];
        _cleanup_free_ char *dir = NULL, *gecos = NULL;
        const char *name, *shell = NULL, *s;
        json_object *jname, *v;
        int64_t uid = -1, gid = -1;
        IdResult ir;
        bool bad, ok;
        int r;

        if (!json_object_is_type(user, json_type_object))
                return reject(m, SCIM_REJECT_NOT_OBJECT, NSS_MAP_PASSWD, NULL, -1);

        name = string_at(user, pc->path_username ?: "userName", &jname, &bad);
        if (!name)
                return reject(m, bad ? SCIM_REJECT_BAD_NAME : SCIM_REJECT_NO_NAME, NSS_MAP_PASSWD,
                              NULL, -1);
        if (!name_valid(name) || (size_t) json_object_get_string_len(jname) != strlen(name))
                return reject(m, SCIM_REJECT_BAD_NAME, NSS_MAP_PASSWD, jname, -1);

        ir = parse_id(scim_map_extract(user, pc->path_uid), c->min_uid, &uid);
        if (ir != ID_OK)
                return reject(m, id_reject[ir], NSS_MAP_PASSWD, jname, ir == ID_RANGE ? uid : -1);
        v = pc->path_gid ? scim_map_extract(user, pc->path_gid) : NULL;
        if (!v)
                gid = uid; /* nsscache: no gid means the user's private group */
        else {
                ir = parse_id(v, c->min_gid, &gid);
                if (ir != ID_OK)
                        return reject(m, id_reject[ir], NSS_MAP_PASSWD, jname,
                                      ir == ID_RANGE ? gid : -1);
        }

        if (!isempty(pc->override_home_directory)) {
                dir = home_from_override(pc->override_home_directory, name);
                if (!dir)
                        return -ENOMEM;
        } else {
                s = pc->path_home_directory ? string_at(user, pc->path_home_directory, &v, &bad) : NULL;
                if (!s && !bad)
                        s = string_at(user, "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User/homeDirectory",
                                      &v, &bad);
                if (bad || (s && !field_clean(v, s)))
                        return reject(m, SCIM_REJECT_BAD_HOME, NSS_MAP_PASSWD, jname, uid);
                if (s)
                        dir = strdup(s);
                else if (asprintf(&dir, "/home/%s", name) < 0)
                        dir = NULL;
                if (!dir)
                        return -ENOMEM;
        }
        if (!path_valid(dir, true) || strpbrk(dir, ":,\n"))
                return reject(m, SCIM_REJECT_BAD_HOME, NSS_MAP_PASSWD, jname, uid);

        s = pc->path_login_shell ? string_at(user, pc->path_login_shell, &v, &bad) : NULL;
        if (bad || (s && (!field_clean(v, s) || !path_valid(s, true))))
                return reject(m, SCIM_REJECT_BAD_SHELL, NSS_MAP_PASSWD, jname, uid);
        shell = s && *s ? s : (pc->default_shell ?: SCIM_DEFAULT_SHELL);

        if (set_has(m->user_names, name))
                return reject(m, SCIM_REJECT_DUP_NAME, NSS_MAP_PASSWD, jname, uid);
        if (dupset_contains_id(m->uids, (uint32_t) uid))
                return reject(m, SCIM_REJECT_DUP_ID, NSS_MAP_PASSWD, jname, uid);
        if (set_add(m->user_names, name) < 0 || dupset_add_id(m->uids, (uint32_t) uid) < 0)
                return -ENOMEM;

        if (c->map_enabled[NSS_MAP_PASSWD]) {
                gecos = gecos_from(user, pc->path_gecos);
                if (!gecos)
                        return -ENOMEM;
                r = emit(m, NSS_MAP_PASSWD, &(NssPasswd) {
                        .name = (char *) name,
                        .passwd = (char *) "x",
                        .uid = (uint32_t) uid,
                        .gid = (uint32_t) gid,
                        .gecos = gecos,
                        .dir = dir,
                        .shell = (char *) shell,
                });
                if (r < 0)
                        return r;
        }

        if (c->map_enabled[NSS_MAP_SHADOW]) {
                const ScimMapConf *sc = &c->map[NSS_MAP_SHADOW];

                r = derived_name_ok(m, NSS_MAP_SHADOW, user, name, jname, &ok);
                if (r < 0)
                        return r;
                if (ok) {
                        r = emit(m, NSS_MAP_SHADOW, &(NssShadow) {
                                .name = (char *) name,
                                .passwd = (char *) "*",
                                .lstchg = sc->shadow_lstchg,
                                .min = sc->shadow_min,
                                .max = sc->shadow_max,
                                .warn = sc->shadow_warn,
                                .inact = sc->shadow_inact,
                                .expire = sc->shadow_expire,
                                .flag = sc->shadow_flag,
                        });
                        if (r < 0)
                                return r;
                }
        }

        if (c->map_enabled[NSS_MAP_SSHKEY]) {
                r = derived_name_ok(m, NSS_MAP_SSHKEY, user, name, jname, &ok);
                if (r < 0)
                        return r;
                if (ok) {
                        r = add_sshkeys(m, user, name, jname);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
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

static int add_member(ScimMapper *m, char ***members, size_t *n, DupSet *set,
                      json_object *jgroup, json_object *v) {
        const char *s;

        if (!v || !json_object_is_type(v, json_type_string) ||
            !name_valid(s = json_object_get_string(v)) ||
            (size_t) json_object_get_string_len(v) != strlen(s))
                return reject(m, SCIM_REJECT_BAD_MEMBER, NSS_MAP_GROUP, v ?: jgroup, -1);
        if (set_has(set, s))
                return 0;
        if (*n >= SCIM_MEMBERS_MAX)
                return reject(m, SCIM_REJECT_TOO_MANY, NSS_MAP_GROUP, jgroup, -1);
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
                r = reject(m, SCIM_REJECT_BAD_MEMBER, NSS_MAP_GROUP, jgroup, -1);
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
                                       scim_map_extract(e, slash ? slash + 1 : path));
                else if (!slash && json_object_is_type(e, json_type_string))
                        r = add_member(m, &members, &n, m->members, jgroup, e);
                else
                        r = reject(m, SCIM_REJECT_BAD_MEMBER, NSS_MAP_GROUP, jgroup, -1);
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
        bool bad;
        int r;

        if (!json_object_is_type(group, json_type_object))
                return reject(m, SCIM_REJECT_NOT_OBJECT, NSS_MAP_GROUP, NULL, -1);
        name = string_at(group, gc->path_groupname ?: "displayName", &jname, &bad);
        if (!name)
                return reject(m, bad ? SCIM_REJECT_BAD_NAME : SCIM_REJECT_NO_NAME, NSS_MAP_GROUP,
                              NULL, -1);
        if (!name_valid(name) || (size_t) json_object_get_string_len(jname) != strlen(name))
                return reject(m, SCIM_REJECT_BAD_NAME, NSS_MAP_GROUP, jname, -1);
        ir = parse_id(scim_map_extract(group, gc->path_gid), m->conf->min_gid, &gid);
        if (ir != ID_OK)
                return reject(m, id_reject[ir], NSS_MAP_GROUP, jname, ir == ID_RANGE ? gid : -1);
        if (set_has(m->group_names, name))
                return reject(m, SCIM_REJECT_DUP_NAME, NSS_MAP_GROUP, jname, gid);
        if (dupset_contains_id(m->gids, (uint32_t) gid))
                return reject(m, SCIM_REJECT_DUP_ID, NSS_MAP_GROUP, jname, gid);
        r = group_members(m, group, jname, &members);
        if (r < 0)
                return r;
        if (set_add(m->group_names, name) < 0 || dupset_add_id(m->gids, (uint32_t) gid) < 0)
                return -ENOMEM;
        return emit(m, NSS_MAP_GROUP, &(NssGroup) {
                .name = (char *) name,
                .passwd = (char *) "x",
                .gid = (uint32_t) gid,
                .members = members,
        });
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
