/* nsscache's s3 JSON records into map entries (s3-object.h). */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "s3-object.h"
#include "scim/scim-page.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/errloc.h"
#include "util/macro.h"
#include "util/strv.h"

#define NAME_MAX_LEN 256

/* The attributes nsscache reads of each map; anything else is a typo or not nsscache's. */
static const char *const attributes[_NSS_MAP_MAX][8] = {
        [NSS_MAP_PASSWD] = { "uid", "gid", "comment", "home", "shell", "passwd" },
        [NSS_MAP_SHADOW] = { "passwd", "lstchg", "min", "max", "warn", "inact", "expire" },
        [NSS_MAP_GROUP] = { "gid", "members", "passwd" },
        [NSS_MAP_SSHKEY] = { "sshPublicKey" },
};

static bool attribute_known(NssMapType t, const char *k) {
        for (size_t i = 0; i < ELEMENTSOF(attributes[t]) && attributes[t][i]; i++)
                if (streq(attributes[t][i], k))
                        return true;
        return false;
}

/* An integer as nsscache's int() takes it: a JSON integer, or a string of digits. */
static bool get_int(json_object *v, int64_t lo, int64_t hi, int64_t *ret) {
        int64_t n;

        if (json_object_is_type(v, json_type_int)) {
                errno = 0;
                n = json_object_get_int64(v);
                if (errno != 0)
                        return false;
        } else if (json_object_is_type(v, json_type_string)) {
                const char *s = json_object_get_string(v);
                char *end;

                if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 18)
                        return false;
                n = strtoll(s, &end, 10);
        } else
                return false;
        if (n < lo || n > hi)
                return false;
        *ret = n;
        return true;
}

/* The string attribute @k of @v, @def when absent; NULL if not a string. */
static const char *get_str(json_object *v, const char *k, const char *def, bool *ok) {
        json_object *a;

        if (!json_object_object_get_ex(v, k, &a))
                return def;
        if (!json_object_is_type(a, json_type_string)) {
                *ok = false;
                return NULL;
        }
        return json_object_get_string(a);
}

static int record_passwd(const char *name, json_object *v, map_file_entry_fn on_entry, void *userdata,
                         bool *ok) {
        _cleanup_free_ char *home = NULL;
        json_object *a;
        int64_t uid = -1, gid = -1;
        const char *pw, *gecos, *dir, *shell;

        if (!json_object_object_get_ex(v, "uid", &a) || !get_int(a, 0, UINT32_MAX, &uid) ||
            !json_object_object_get_ex(v, "gid", &a) || !get_int(a, 0, UINT32_MAX, &gid))
                return *ok = false, 0;
        if (asprintf(&home, "/home/%s", name) < 0)
                return -ENOMEM;
        pw = get_str(v, "passwd", "x", ok);
        gecos = get_str(v, "comment", "", ok);
        dir = get_str(v, "home", home, ok);
        shell = get_str(v, "shell", "/bin/bash", ok);
        if (!*ok || !streq(pw, "x"))
                return *ok = false, 0;
        return on_entry(userdata, NSS_MAP_PASSWD,
                        &(NssPasswd){ .name = (char *) name,
                                      .passwd = (char *) pw,
                                      .uid = (uint32_t) uid,
                                      .gid = (uint32_t) gid,
                                      .gecos = (char *) gecos,
                                      .dir = (char *) dir,
                                      .shell = (char *) shell });
}

static int record_shadow(const char *name, json_object *v, map_file_entry_fn on_entry, void *userdata,
                         bool *ok) {
        static const char *const fields[] = { "lstchg", "min", "max", "warn", "inact", "expire" };
        int64_t n[ELEMENTSOF(fields)];
        const char *pw = get_str(v, "passwd", "*", ok);
        json_object *a;

        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                n[i] = -1;
                if (json_object_object_get_ex(v, fields[i], &a) && !get_int(a, 0, INT32_MAX, &n[i]))
                        *ok = false;
        }
        if (!*ok || !*pw)
                return *ok = false, 0;
        return on_entry(userdata, NSS_MAP_SHADOW,
                        &(NssShadow){ .name = (char *) name,
                                      .passwd = (char *) pw,
                                      .lstchg = n[0],
                                      .min = n[1],
                                      .max = n[2],
                                      .warn = n[3],
                                      .inact = n[4],
                                      .expire = n[5],
                                      .flag = -1 });
}

/* @s split at '\n', empty parts dropped. */
static int split_lines(const char *s, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;

        for (const char *p = s; *p;) {
                size_t n = strcspn(p, "\n");

                if (n > 0) {
                        _cleanup_free_ char *part = strndup(p, n);

                        if (!part || strv_extend(&l, part) < 0)
                                return -ENOMEM;
                }
                p += n + (p[n] == '\n');
        }
        if (!l && !(l = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

static int record_group(const char *name, json_object *v, map_file_entry_fn on_entry, void *userdata,
                        bool *ok) {
        _cleanup_strv_free_ char **members = NULL;
        const char *pw = get_str(v, "passwd", "x", ok), *m = get_str(v, "members", "", ok);
        json_object *a;
        int64_t gid = -1;
        int r;

        if (!json_object_object_get_ex(v, "gid", &a) || !get_int(a, 0, UINT32_MAX, &gid) || !*ok ||
            !streq(pw, "x"))
                return *ok = false, 0;
        r = split_lines(m, &members);
        if (r < 0)
                return r;
        return on_entry(userdata, NSS_MAP_GROUP,
                        &(NssGroup){ .name = (char *) name,
                                     .passwd = (char *) pw,
                                     .gid = (uint32_t) gid,
                                     .members = members });
}

static int record_sshkey(const char *name, json_object *v, map_file_entry_fn on_entry, void *userdata,
                         bool *ok) {
        _cleanup_strv_free_ char **keys = NULL;
        const char *k = get_str(v, "sshPublicKey", "", ok);
        int r;

        if (!*ok)
                return 0;
        r = split_lines(k, &keys);
        if (r < 0)
                return r;
        return on_entry(userdata, NSS_MAP_SSHKEY, &(NssSshkey){ .name = (char *) name, .keys = keys });
}

static int record(NssMapType t, json_object *rec, size_t i, map_file_entry_fn on_entry,
                  map_file_bad_fn on_bad, void *userdata) {
        json_object *key = NULL, *value = NULL;
        const char *name = NULL;
        bool ok = true;
        int r = 0;

        if (json_object_is_type(rec, json_type_object) && json_object_object_get_ex(rec, "Key", &key) &&
            json_object_is_type(key, json_type_string))
                name = json_object_get_string(key);
        if (!name || !*name || strlen(name) > NAME_MAX_LEN || json_object_object_length(rec) != 2 ||
            !json_object_object_get_ex(rec, "Value", &value) ||
            !json_object_is_type(value, json_type_object))
                return on_bad(userdata, t, i, name && strlen(name) <= NAME_MAX_LEN ? name : NULL);
        json_object_object_foreach(value, k, unused) {
                (void) unused;
                if (!attribute_known(t, k))
                        return on_bad(userdata, t, i, name);
        }
        switch (t) {
        case NSS_MAP_PASSWD:
                r = record_passwd(name, value, on_entry, userdata, &ok);
                break;
        case NSS_MAP_SHADOW:
                r = record_shadow(name, value, on_entry, userdata, &ok);
                break;
        case NSS_MAP_GROUP:
                r = record_group(name, value, on_entry, userdata, &ok);
                break;
        case NSS_MAP_SSHKEY:
                r = record_sshkey(name, value, on_entry, userdata, &ok);
                break;
        default:
                return -EINVAL;
        }
        if (r < 0)
                return r;
        return ok ? 0 : on_bad(userdata, t, i, name);
}

static size_t skip_space(const char *data, size_t len, size_t pos) {
        while (pos < len && strchr(" \t\r\n", data[pos]) && data[pos])
                pos++;
        return pos;
}

/* Where the JSON value at @pos ends: past its closing bracket or quote, or
 * at the character after a number or literal.  Only the extent: json-c
 * judges the value itself. */
static size_t value_end(const char *data, size_t len, size_t pos) {
        size_t depth = 0;
        bool in_string = false;

        for (size_t i = pos; i < len; i++) {
                char ch = data[i];

                if (in_string) {
                        if (ch == '\\')
                                i++;
                        else if (ch == '"') {
                                in_string = false;
                                if (depth == 0)
                                        return i + 1;
                        }
                } else if (ch == '"')
                        in_string = true;
                else if (ch == '{' || ch == '[')
                        depth++;
                else if (ch == '}' || ch == ']') {
                        if (depth == 0)
                                return i;
                        if (--depth == 0)
                                return i + 1;
                } else if (depth == 0 && (ch == ',' || ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'))
                        return i;
        }
        return len;
}

/* One record of the array, from @pos to where it ends (*ret_end), parsed
 * alone and its tree freed again by the caller: a tree of the whole object
 * would cost about 50 times its bytes.  NULL in *ret for the JSON null. */
static int element_parse(json_tokener *tok, const char *data, size_t len, size_t pos, json_object **ret,
                         size_t *ret_end, char **ret_error) {
        enum json_tokener_error jerr;
        size_t end = value_end(data, len, pos);
        json_object *v;

        if (end == pos)
                return errmsg_set(ret_error, -EBADMSG, "invalid JSON: a record expected at byte %zu", pos);
        json_tokener_reset(tok);
        v = json_tokener_parse_ex(tok, data + pos, (int) (end - pos));
        /* a number or literal is complete only once something follows it */
        if (!v && json_tokener_get_error(tok) == json_tokener_continue)
                v = json_tokener_parse_ex(tok, " ", 1);
        jerr = json_tokener_get_error(tok);
        json_tokener_reset(tok); /* drops what a truncated record left on its stack */
        if (jerr == json_tokener_continue) {
                json_object_put(v);
                return errmsg_set(ret_error, -EBADMSG, "truncated JSON");
        }
        if (jerr != json_tokener_success) {
                json_object_put(v);
                return errmsg_set(ret_error, -EBADMSG, "invalid JSON: %s", json_tokener_error_desc(jerr));
        }
        *ret = v;
        *ret_end = end;
        return 0;
}

/* The array walked record by record: the peak is the body and one record's
 * tree, as a SCIM page's is, not the tree of the whole object. */
static int records_parse(NssMapType t, const char *data, size_t len, map_file_entry_fn on_entry,
                         map_file_bad_fn on_bad, void *userdata, char **ret_error) {
        _cleanup_tokener_ json_tokener *tok = NULL;
        size_t pos, i = 0;
        int r;

        if (len > INT32_MAX)
                return errmsg_set(ret_error, -EBADMSG, "body too large");
        pos = skip_space(data, len, 0);
        if (pos >= len)
                return errmsg_set(ret_error, -EBADMSG, "truncated JSON");
        if (data[pos] != '[')
                return errmsg_set(ret_error, -EBADMSG, "not a JSON array of {\"Key\", \"Value\"} records");
        /* the array is one level of the nesting allowed */
        tok = json_tokener_new_ex(SCIM_JSON_DEPTH_MAX - 1);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        pos = skip_space(data, len, pos + 1);
        if (pos < len && data[pos] == ']')
                pos++;
        else
                for (;;) {
                        json_object *rec = NULL;
                        size_t end = pos;

                        r = element_parse(tok, data, len, pos, &rec, &end, ret_error);
                        if (r < 0)
                                return r;
                        r = record(t, rec, ++i, on_entry, on_bad, userdata);
                        json_object_put(rec);
                        if (r < 0)
                                return r;
                        pos = skip_space(data, len, end);
                        if (pos >= len)
                                return errmsg_set(ret_error, -EBADMSG, "truncated JSON");
                        if (data[pos++] == ']')
                                break;
                        if (data[pos - 1] != ',')
                                return errmsg_set(ret_error, -EBADMSG,
                                                  "invalid JSON: ',' or ']' expected after record %zu", i);
                        pos = skip_space(data, len, pos);
                }
        if (skip_space(data, len, pos) < len)
                return errmsg_set(ret_error, -EBADMSG, "trailing data after the JSON value");
        return 0;
}

int s3_object_parse(NssMapType t, const char *data, size_t len, map_file_entry_fn on_entry,
                    map_file_bad_fn on_bad, void *userdata, char **ret_error) {
        _cleanup_free_ char *why = NULL;
        int r;

        r = records_parse(t, data, len, on_entry, on_bad, userdata, &why);
        if (why)
                return errmsg_set(ret_error, r, "%s: %s", nss_map_to_string(t), why);
        return r;
}
