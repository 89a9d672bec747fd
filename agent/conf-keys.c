/* Table-driven config conversion.
 *
 * A module declares { key, type, offsetof(field), flags, min, max } rows and
 * this file does the rest, so that the error text for a bad duration reads
 * the same in every module and always carries a position.  Strings and lists
 * are heap copies owned by the caller's struct (conf_keys_clear frees them);
 * a MAP row hands out a borrowed pointer to the subtree, valid while the
 * tree lives (during init/check/reload).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf-keys.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"
#include "util/secret-file.h"
#include "util/spell.h"
#include "util/strv.h"
#include "util/time-util.h"
#include "util/trusted-path.h"

const char *const conf_host_keys[] = { "enabled", "required", "allow", NULL };

static const char *const type_names[] = {
        [SUNKD_CFG_STRING] = "a string",
        [SUNKD_CFG_INT] = "an integer",
        [SUNKD_CFG_BOOL] = "a boolean",
        [SUNKD_CFG_DURATION] = "a duration (e.g. 30s, 15m, 1h)",
        [SUNKD_CFG_SIZE] = "a size (e.g. 64K, 1M)",
        [SUNKD_CFG_PATH] = "an absolute path",
        [SUNKD_CFG_LIST] = "a list of strings",
        [SUNKD_CFG_MAP] = "a mapping",
        [SUNKD_CFG_SEQUENCE] = "a list",
        [SUNKD_CFG_SECRET] = "a string or file:/path",
};

int conf_parse_bool(const char *s, bool *ret) {
        static const struct {
                const char *word;
                bool value;
        } words[] = {
                { "true", true },   { "yes", true }, { "on", true },   { "1", true },
                { "false", false }, { "no", false }, { "off", false }, { "0", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (strcasecmp(s, words[i].word) == 0) {
                        *ret = words[i].value;
                        return 0;
                }
        return -EINVAL;
}

#define fail(n, ret_error, ...)                                                                             \
        ({                                                                                                  \
                if (ret_error)                                                                              \
                        *(ret_error) = conf_node_error((n), __VA_ARGS__);                                   \
                -EINVAL;                                                                                    \
        })

static int want_scalar(const ConfNode *n, const sunkd_cfg_key *k, char **ret_error) {
        if (n->type != CONF_SCALAR)
                return fail(n, ret_error, "expected %s", type_names[k->type]);
        return 0;
}

static int set_int(const ConfNode *n, const sunkd_cfg_key *k, void *dst, char **ret_error) {
        char *end;
        long long v;

        errno = 0;
        v = strtoll(n->value, &end, 10);
        if (isempty(n->value) || *end || errno)
                return fail(n, ret_error, "'%s' is not an integer", n->value);
        if (k->max > k->min && (v < k->min || v > k->max)) {
                _cleanup_free_ char *range = NULL;
                if (asprintf(&range, "%s is out of range [%" PRId64 ", %" PRId64 "]", n->value, k->min,
                             k->max) < 0)
                        return -ENOMEM;
                return fail(n, ret_error, "%s", range);
        }
        *(int64_t *) dst = v;
        return 0;
}

static int set_units(const ConfNode *n, const sunkd_cfg_key *k, void *dst, char **ret_error) {
        uint64_t v;
        int r;

        if (n->value[0] == '-')
                return fail(n, ret_error, "'%s' is negative", n->value);
        r = k->type == SUNKD_CFG_DURATION ? parse_duration(n->value, &v) : parse_size(n->value, &v);
        if (r < 0)
                return k->type == SUNKD_CFG_DURATION
                               ? fail(n, ret_error, "'%s' is not a duration (use e.g. 30s, 15m, 1h)",
                                      n->value)
                               : fail(n, ret_error, "'%s' is not a size (use e.g. 512, 64K, 1M)", n->value);
        if (k->max > 0 && v > (uint64_t) k->max)
                return fail(n, ret_error, "'%s' is larger than allowed", n->value);
        if (k->min > 0 && v < (uint64_t) k->min)
                return fail(n, ret_error, "'%s' is smaller than allowed", n->value);
        *(uint64_t *) dst = v;
        return 0;
}

static bool path_is_safe(const char *p) {
        size_t len = strlen(p);
        return p[0] == '/' && !strstr(p, "/../") && !(len >= 3 && streq(p + len - 3, "/.."));
}

static int set_string(const ConfNode *n, const sunkd_cfg_key *k, void *dst, char **ret_error) {
        char *s;

        if (k->type == SUNKD_CFG_PATH && !path_is_safe(n->value))
                return fail(n, ret_error, "'%s' is not an absolute path without '..'", n->value);
        s = strdup(n->value);
        if (!s)
                return -ENOMEM;
        free(*(char **) dst);
        *(char **) dst = s;
        return 0;
}

/* Drops trailing newlines (files end with one, YAML block scalars too) and
 * refuses what would not survive as a C string. */
static int secret_finish(const ConfNode *n, char *buf, size_t len, size_t max, const char *what,
                         char **ret_error) {
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
                buf[--len] = '\0';
        if (len == 0)
                return fail(n, ret_error, "%s is empty", what);
        if (memchr(buf, '\0', len))
                return fail(n, ret_error, "%s contains a NUL byte", what);
        if (len > max)
                return fail(n, ret_error, "%s is longer than %zu bytes", what, max);
        return 0;
}

/* The rules are secret_file_read()'s, shared with nsscache's token_file; a
 * located message here. */
static int secret_read_file(const ConfNode *n, const char *path, size_t max, char **ret, char **ret_error) {
        _cleanup_free_ char *msg = NULL;
        int r;

        if (!path_is_safe(path))
                return fail(n, ret_error, "'file:%s': the path must be absolute, without '..'", path);
        r = secret_file_read(path, max, ret, &msg);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return fail(n, ret_error, "file %s", msg ?: strerror(-r));
        return 0;
}

static bool startswith_file(const char *s) {
        return strncmp(s, CONF_SECRET_FILE_PREFIX, strlen(CONF_SECRET_FILE_PREFIX)) == 0;
}

static int set_secret(const ConfNode *n, const sunkd_cfg_key *k, void *dst, char **ret_error) {
        size_t max = k->max > 0 ? (size_t) MIN((uint64_t) k->max, CONF_SECRET_LIMIT) : CONF_SECRET_MAX;
        _cleanup_erase_ char *s = NULL;
        int r;

        if (startswith_file(n->value))
                r = secret_read_file(n, n->value + strlen(CONF_SECRET_FILE_PREFIX), max, &s, ret_error);
        else {
                s = strdup(n->value);
                r = s ? secret_finish(n, s, strlen(s), max, "the value", ret_error) : -ENOMEM;
        }
        if (r < 0)
                return r;
        erase_and_free(*(char **) dst);
        *(char **) dst = TAKE_PTR(s);
        return 0;
}

static int set_list(const ConfNode *n, const sunkd_cfg_key *k, void *dst, char **ret_error) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        if (n->type != CONF_SEQUENCE)
                return fail(n, ret_error, "expected %s", type_names[k->type]);
        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n->n_children; i++) {
                const ConfNode *c = n->children[i];
                if (c->type != CONF_SCALAR)
                        return fail(c, ret_error, "list item is not a string");
                r = strv_extend(&l, c->value);
                if (r < 0)
                        return r;
        }
        strv_free(*(char ***) dst);
        *(char ***) dst = TAKE_PTR(l);
        return 0;
}

static int set_value(const ConfNode *n, const sunkd_cfg_key *k, void *out, char **ret_error) {
        void *dst = (char *) out + k->offset;
        bool b;
        int r;

        if (k->type == SUNKD_CFG_LIST)
                return set_list(n, k, dst, ret_error);
        if (k->type == SUNKD_CFG_MAP || k->type == SUNKD_CFG_SEQUENCE) {
                if (n->type != (k->type == SUNKD_CFG_MAP ? CONF_MAP : CONF_SEQUENCE))
                        return fail(n, ret_error, "expected %s", type_names[k->type]);
                *(const ConfNode **) dst = n;
                return 0;
        }
        r = want_scalar(n, k, ret_error);
        if (r < 0)
                return r;

        switch (k->type) {
        case SUNKD_CFG_STRING:
        case SUNKD_CFG_PATH:
                return set_string(n, k, dst, ret_error);
        case SUNKD_CFG_SECRET:
                return set_secret(n, k, dst, ret_error);
        case SUNKD_CFG_INT:
                return set_int(n, k, dst, ret_error);
        case SUNKD_CFG_DURATION:
        case SUNKD_CFG_SIZE:
                return set_units(n, k, dst, ret_error);
        case SUNKD_CFG_BOOL:
                if (conf_parse_bool(n->value, &b) < 0)
                        return fail(n, ret_error, "'%s' is not a boolean (true or false)", n->value);
                *(bool *) dst = b;
                return 0;
        default:
                return fail(n, ret_error, "unsupported key type");
        }
}

static const sunkd_cfg_key *find_key(const sunkd_cfg_key *keys, size_t n_keys, const char *name) {
        for (size_t i = 0; i < n_keys; i++)
                if (streq(keys[i].key, name))
                        return &keys[i];
        return NULL;
}

/* "unknown key", and the known one it is a slip for, if there is one. */
static int unknown_key(const ConfNode *map, const ConfNode *n, const sunkd_cfg_key *keys, size_t n_keys,
                       char **ret_error) {
        _cleanup_free_ const char **names = calloc(n_keys + ELEMENTSOF(conf_host_keys), sizeof(char *));
        const char *near;
        size_t k = 0;

        if (!names)
                return -ENOMEM;
        for (size_t i = 0; i < n_keys; i++)
                names[k++] = keys[i].key;
        for (size_t i = 0; map->module_section && conf_host_keys[i]; i++)
                names[k++] = conf_host_keys[i];
        near = spell_nearest(n->key, names, k);
        if (near)
                return fail(n, ret_error, "unknown key; did you mean '%s'?", near);
        return fail(n, ret_error, "unknown key");
}

/* One entry of @map; the error, if any, in *ret_error. */
static int parse_entry(const ConfNode *map, const ConfNode *n, const sunkd_cfg_key *keys, size_t n_keys,
                       void *out, char **ret_error) {
        const sunkd_cfg_key *k = find_key(keys, n_keys, n->key);
        int r;

        if (!k) {
                /* enabled/required/allow belong to the module section
                 * itself, not to its sub-sections. */
                if (map->module_section && strv_contains((char *const *) conf_host_keys, n->key))
                        return 0;
                return unknown_key(map, n, keys, n_keys, ret_error);
        }
        /* "key:" with nothing after it leaves the default in place. */
        if (n->type == CONF_SCALAR && n->plain &&
            (isempty(n->value) || streq(n->value, "~") || streq(n->value, "null"))) {
                if (k->flags & SUNKD_CFG_REQUIRED)
                        return fail(n, ret_error, "a value is required");
                return 0;
        }
        r = set_value(n, k, out, ret_error);
        if (r < 0)
                return r;
        /* A reload compares these files too (config_module_same()). */
        if (k->type == SUNKD_CFG_SECRET && startswith_file(n->value))
                conf_node_note_file(n, n->value + strlen(CONF_SECRET_FILE_PREFIX));
        else if (k->type == SUNKD_CFG_PATH && (k->flags & SUNKD_CFG_RELOAD_FILE))
                conf_node_note_file(n, n->value);
        return 0;
}

/* Every entry is looked at, past the first error: a fresh node's file is
 * put right in one round, not one key a round. */
int conf_keys_parse(const ConfNode *map, const sunkd_cfg_key *keys, size_t n_keys, void *out,
                    char **ret_error) {
        _cleanup_free_ char *all = NULL;
        int first = 0;

        if (!map)
                return -EINVAL;
        if (map->type != CONF_MAP)
                return fail(map, ret_error, "expected a mapping of keys");

        for (size_t i = 0; i < map->n_children; i++) {
                char *e = NULL;
                int r = parse_entry(map, map->children[i], keys, n_keys, out, &e);

                if (errloc_join(&all, &first, r, e) == -ENOMEM)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n_keys; i++) {
                char *e = NULL;
                int r;

                if (!(keys[i].flags & SUNKD_CFG_REQUIRED) || conf_node_get(map, keys[i].key))
                        continue;
                r = errloc_set(&e, map->file, map->key ? map->key_line : map->line,
                               map->key ? map->key_column : map->column, keys[i].key,
                               "required but missing");
                if (errloc_join(&all, &first, r, e) == -ENOMEM)
                        return -ENOMEM;
        }
        if (first < 0 && ret_error)
                *ret_error = TAKE_PTR(all);
        return first;
}

void conf_keys_clear(const sunkd_cfg_key *keys, size_t n_keys, void *out) {
        for (size_t i = 0; i < n_keys; i++) {
                void *dst = (char *) out + keys[i].offset;

                if (keys[i].type == SUNKD_CFG_SECRET) {
                        erase_and_free(*(char **) dst);
                        *(char **) dst = NULL;
                } else if (keys[i].type == SUNKD_CFG_STRING || keys[i].type == SUNKD_CFG_PATH) {
                        free(*(char **) dst);
                        *(char **) dst = NULL;
                } else if (keys[i].type == SUNKD_CFG_LIST)
                        *(char ***) dst = strv_free(*(char ***) dst);
        }
}

/* A key absent from @map is checked with the default in @out, located at the
 * section. */
static int check_written(const ConfNode *map, const sunkd_cfg_key *k, const char *path, char **ret_error) {
        _cleanup_free_ char *msg = NULL;
        const ConfNode *n = conf_node_get(map, k->key);
        int r;

        r = trusted_path_check(path, "to write", TRUSTED_PATH_WRITTEN, &msg);
        if (r >= 0 || r == -ENOMEM || !ret_error)
                return r;
        if (n)
                *ret_error = conf_node_error(n, "%s", msg ?: strerror(-r));
        else
                *ret_error = errloc_format(map->file, map->key ? map->key_line : map->line,
                                           map->key ? map->key_column : map->column, k->key,
                                           "(the default) %s", msg ?: strerror(-r));
        return r;
}

int conf_keys_check_written(const ConfNode *map, const sunkd_cfg_key *keys, size_t n_keys, const void *out,
                            char **ret_error) {
        _cleanup_free_ char *all = NULL;
        int first = 0;

        for (size_t i = 0; i < n_keys; i++) {
                const ConfNode *n = conf_node_get(map, keys[i].key);
                const char *path;
                char *e = NULL;
                int r;

                if (keys[i].type != SUNKD_CFG_PATH || !(keys[i].flags & SUNKD_CFG_WRITE_PATH))
                        continue;
                path = *(char *const *) ((const char *) out + keys[i].offset);
                if (!path)
                        continue;
                /* a value conf_keys_parse() refused is reported already */
                if (n && n->type == CONF_SCALAR && !isempty(n->value) && !streq(n->value, path))
                        continue;
                r = check_written(map, &keys[i], path, &e);
                if (errloc_join(&all, &first, r, e) == -ENOMEM)
                        return -ENOMEM;
        }
        if (first < 0 && ret_error)
                *ret_error = TAKE_PTR(all);
        return first;
}
