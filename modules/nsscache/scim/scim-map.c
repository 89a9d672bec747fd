/* SCIM Users and Groups into passwd, shadow, group and sshkey entries,
 * through the mapper (mapper.h), which decides who gets a name and an id.
 *
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
 * Nothing here logs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "attr-path.h"
#include "dupset.h"
#include "mapper-internal.h"
#include "scim-map.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strbuf.h"
#include "util/strv.h"

static int reject(Mapper *m, MapRejectReason reason, NssMapType map, json_object *name, int64_t id) {
        return mapper_reject_name(
                m, reason, map,
                name && json_object_is_type(name, json_type_string) ? json_object_get_string(name) : NULL,
                id);
}

/* ---- attributes ------------------------------------------------------------- */

json_object *scim_map_extract(json_object *o, const char *path) {
        return attr_path_extract(o, path);
}

/* @path of @o through the mapper's cache: @path must be the config's or a literal. */
static json_object *attr(Mapper *m, json_object *o, const char *path) {
        return attr_paths_get(m->paths, o, path);
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
        if (id <= 0 || id < min || id > MAP_ID_MAX)
                return ID_RANGE;
        return ID_OK;
}

static const MapRejectReason id_reject[] = {
        [ID_MISSING] = MAP_REJECT_NO_ID,
        [ID_BAD] = MAP_REJECT_BAD_ID,
        [ID_RANGE] = MAP_REJECT_ID_RANGE,
};

/* gecos is cosmetic: forbidden characters become spaces, bytes that are not
 * UTF-8 become '?', long values are cut at a UTF-8 boundary, instead of
 * rejecting the account. */
static char *gecos_from(Mapper *m, json_object *user, const char *path) {
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
        if (n > MAP_GECOS_MAX) {
                n = MAP_GECOS_MAX;
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
static const char *string_at(Mapper *m, json_object *o, const char *path, json_object **ret_v, bool *bad) {
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

/* The user's keys, each trimmed; a key that is not a string or not valid is
 * dropped and counted, the others kept. */
static int collect_sshkeys(Mapper *m, json_object *user, json_object *jname, char ***ret) {
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
                if ((size_t) json_object_get_string_len(k) != strlen(s) || !mapper_sshkey_valid(b, e)) {
                        r = reject(m, MAP_REJECT_BAD_SSHKEY, NSS_MAP_SSHKEY, jname, -1);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (e == b)
                        continue;
                if (count >= MAP_SSHKEYS_PER_USER_MAX) {
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

static int emit_for(Mapper *m, NssMapType t, const void *entry, uint32_t i, json_object *jname) {
        return mapper_emit_named(m, t, entry, i,
                                 jname && json_object_is_type(jname, json_type_string)
                                         ? json_object_get_string(jname)
                                         : NULL);
}

/* As nsscache's SCIM source, every user gets an sshkey entry, "name:" when
 * it has no keys. */
static int add_sshkeys(Mapper *m, json_object *user, const char *name, json_object *jname, uint32_t i) {
        _cleanup_strv_free_ char **keys = NULL;
        int r = collect_sshkeys(m, user, jname, &keys);

        if (r < 0)
                return r;
        return emit_for(m, NSS_MAP_SSHKEY, &(NssSshkey){ .name = (char *) name, .keys = keys }, i, jname);
}

/* shadow and sshkey may name the user through their own path; it must agree. */
static int derived_name_ok(Mapper *m, NssMapType t, json_object *user, const char *name, json_object *jname,
                           bool *ok) {
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
static const char *path_attr(Mapper *m, json_object *user, const char *path, const char *enterprise,
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
static int user_home(Mapper *m, json_object *user, const char *name, char **ret) {
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
        if (!mapper_path_valid(dir, true) || strpbrk(dir, ":,\n"))
                return -EINVAL;
        *ret = TAKE_PTR(dir);
        return 0;
}

/* The login shell: the attribute, the enterprise loginShell, or the default. */
static int user_shell(Mapper *m, json_object *user, const char **ret) {
        const ScimMapConf *pc = &m->conf->map[NSS_MAP_PASSWD];
        bool bad;
        const char *s = path_attr(m, user, pc->path_login_shell, ENTERPRISE_USER "/loginShell", &bad);

        if (bad || (s && !mapper_path_valid(s, true)))
                return -EINVAL;
        *ret = s ?: pc->default_shell ?: SCIM_DEFAULT_SHELL;
        return 0;
}

/* Parses uid and gid; a missing gid is the uid (the user's private group). */
static int user_ids(Mapper *m, json_object *user, json_object *jname, int64_t *uid, int64_t *gid, bool *ok) {
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
static int user_derived(Mapper *m, json_object *user, const char *name, json_object *jname, uint32_t i) {
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

static int map_user(Mapper *m, json_object *user) {
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
        if (!mapper_name_valid(name) || (size_t) json_object_get_string_len(jname) != strlen(name))
                return reject(m, MAP_REJECT_BAD_NAME, NSS_MAP_PASSWD, jname, -1);
        r = user_ids(m, user, jname, &uid, &gid, &ok);
        if (r < 0 || !ok)
                return r;
        /* The primary group counts too: a gid of a local group would hand out its files. */
        if (mapper_name_reserved(m->local_user_names, name) ||
            mapper_id_reserved(m->local_uids, (uint32_t) uid) ||
            mapper_id_reserved(m->local_gids, (uint32_t) gid))
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

        r = mapper_claim(m, false, name, (uint32_t) uid, &ok, &i);
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
                if (*mapper_claim_at(m->claims + i, NSS_MAP_PASSWD) == MAP_AT_NONE) {
                        /* refused by the format: the name and uid stay taken, nothing else is published */
                        m->claims[i].removed = true;
                        m->n_removed++;
                        return 0;
                }
        }
        return user_derived(m, user, name, jname, i);
}

int scim_map_add_users(Mapper *m, json_object *resources) {
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

static int add_member(Mapper *m, char ***members, size_t *n, DupSet *set, json_object *jgroup,
                      json_object *v) {
        const char *s;

        if (!v || !json_object_is_type(v, json_type_string) ||
            !mapper_name_valid(s = json_object_get_string(v)) ||
            (size_t) json_object_get_string_len(v) != strlen(s))
                return reject(m, MAP_REJECT_BAD_MEMBER, NSS_MAP_GROUP, v ?: jgroup, -1);
        /* a SCIM group may not pull a system account into itself */
        if (mapper_name_reserved(m->local_user_names, s))
                return reject(m, MAP_REJECT_LOCAL_ACCOUNT, NSS_MAP_GROUP, v, -1);
        if (mapper_set_has(set, s))
                return 0;
        if (*n >= MAP_MEMBERS_MAX)
                return reject(m, MAP_REJECT_TOO_MANY, NSS_MAP_GROUP, jgroup, -1);
        if (mapper_set_add(set, s) < 0)
                return -ENOMEM;
        return mapper_push_member(members, n, s);
}

static int group_members(Mapper *m, json_object *group, json_object *jgroup, char ***ret) {
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
        members = calloc(mapper_members_cap(1), sizeof(char *));
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

static int map_group(Mapper *m, json_object *group) {
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
        if (!mapper_name_valid(name) || (size_t) json_object_get_string_len(jname) != strlen(name))
                return reject(m, MAP_REJECT_BAD_NAME, NSS_MAP_GROUP, jname, -1);
        ir = parse_id(attr(m, group, gc->path_gid), m->conf->min_gid, &gid);
        if (ir != ID_OK)
                return reject(m, id_reject[ir], NSS_MAP_GROUP, jname, ir == ID_RANGE ? gid : -1);
        if (mapper_name_reserved(m->local_group_names, name) ||
            mapper_id_reserved(m->local_gids, (uint32_t) gid))
                return reject(m, MAP_REJECT_LOCAL_ACCOUNT, NSS_MAP_GROUP, jname, gid);
        r = group_members(m, group, jname, &members);
        if (r < 0)
                return r;
        r = mapper_claim(m, true, name, (uint32_t) gid, &ok, &i);
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
        if (r >= 0 && *mapper_claim_at(m->claims + i, NSS_MAP_GROUP) == MAP_AT_NONE) {
                m->claims[i].removed = true;
                m->n_removed++;
        }
        return r;
}

int scim_map_add_groups(Mapper *m, json_object *resources) {
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
