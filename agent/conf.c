/* The top level of sunkd.yaml.
 *
 * Parsed in full before anything is applied, so a SIGHUP with a broken file
 * changes nothing: the caller swaps the whole Config or keeps the old one.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "conf-keys.h"
#include "conf.h"
#include "log.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"
#include "util/strv.h"
#include "util/trusted-path.h"

static const sunkd_cfg_key top_keys[] = {
        { "socket", SUNKD_CFG_PATH, offsetof(Config, socket), SUNKD_CFG_WRITE_PATH, 0, 0 },
        { "socket_mode", SUNKD_CFG_STRING, offsetof(Config, socket_mode_str), 0, 0, 0 },
        { "socket_group", SUNKD_CFG_STRING, offsetof(Config, socket_group), 0, 0, 0 },
        { "state_dir", SUNKD_CFG_PATH, offsetof(Config, state_dir), SUNKD_CFG_WRITE_PATH, 0, 0 },
        { "module_dir", SUNKD_CFG_PATH, offsetof(Config, module_dir), 0, 0, 0 },
        { "log_level", SUNKD_CFG_STRING, offsetof(Config, log_level_str), 0, 0, 0 },
        { "metrics_textfile", SUNKD_CFG_PATH, offsetof(Config, metrics_textfile), SUNKD_CFG_WRITE_PATH, 0,
          0 },
        { "max_connections", SUNKD_CFG_INT, offsetof(Config, max_connections), 0, 1, 65536 },
        { "max_request_size", SUNKD_CFG_SIZE, offsetof(Config, max_request), 0, 256, 16 << 20 },
        { "idle_timeout", SUNKD_CFG_DURATION, offsetof(Config, idle_timeout_usec), 0, 1000, 0 },
        { "max_connections_per_uid", SUNKD_CFG_INT, offsetof(Config, max_connections_per_uid), 0, 1, 65536 },
        { "max_calls_per_uid", SUNKD_CFG_INT, offsetof(Config, max_calls_per_uid), 0, 1, 65536 },
        { "reserved_connections", SUNKD_CFG_INT, offsetof(Config, reserved_connections), 0, 1, 65535 },
        { "request_timeout", SUNKD_CFG_DURATION, offsetof(Config, request_timeout_usec), 0, 1000, 0 },
        { "shutdown_timeout", SUNKD_CFG_DURATION, offsetof(Config, shutdown_timeout_usec), 0, 0, 0 },
        { "workers", SUNKD_CFG_INT, offsetof(Config, workers), 0, 1, 64 },
        { "modules", SUNKD_CFG_MAP, offsetof(Config, modules_node), 0, 0, 0 }, /* then parse_modules() */
};

static const sunkd_cfg_key module_keys[] = {
        { "enabled", SUNKD_CFG_BOOL, offsetof(ConfModule, enabled), 0, 0, 0 },
        { "required", SUNKD_CFG_BOOL, offsetof(ConfModule, required), 0, 0, 0 },
        { "allow", SUNKD_CFG_LIST, offsetof(ConfModule, allow), 0, 0, 0 },
};

Config *config_free(Config *c) {
        if (!c)
                return NULL;
        conf_keys_clear(top_keys, ELEMENTSOF(top_keys), c);
        for (size_t i = 0; i < c->n_modules; i++) {
                free(c->modules[i].name);
                strv_free(c->modules[i].allow);
                free(c->modules[i].allow_uids);
                free(c->modules[i].allow_gids);
        }
        free(c->modules);
        conf_tree_free(c->tree);
        free(c);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(Config *, config_free);

static int set_defaults(Config *c) {
        c->socket = strdup(SUNKD_SOCKET_DEFAULT);
        c->state_dir = strdup(SUNKD_STATE_DIR_DEFAULT);
        c->module_dir = strdup(SUNKD_MODULE_DIR);
        if (!c->socket || !c->state_dir || !c->module_dir)
                return -ENOMEM;
        c->socket_mode = 0666;
        c->socket_gid = (gid_t) -1;
        c->log_level = LOG_INFO;
        c->max_connections = 256;
        c->max_request = 64 * 1024;
        c->idle_timeout_usec = 30 * USEC_PER_SEC;
        c->max_connections_per_uid = 32;
        c->max_calls_per_uid = 16;
        c->reserved_connections = 16;
        c->request_timeout_usec = 10 * USEC_PER_SEC;
        c->shutdown_timeout_usec = 10 * USEC_PER_SEC;
        c->workers = 4;
        return 0;
}

/* Resolved with the file, so --check-config names a user or group that
 * does not exist, and the daemon never runs NSS on its loop.  Errors are
 * added to *ret_error (errloc_join()); only -ENOMEM stops. */
static int resolve_allow(const ConfNode *n, ConfModule *m, char **ret_error, int *first) {
        const ConfNode *where = conf_node_get(n, "allow");
        size_t k = strv_length(m->allow);

        m->allow_uids = calloc(k ?: 1, sizeof(uid_t));
        m->allow_gids = calloc(k ?: 1, sizeof(gid_t));
        if (!m->allow_uids || !m->allow_gids)
                return -ENOMEM;
        for (char **p = m->allow; p && *p; p++) {
                if ((*p)[0] == '@') {
                        struct group *g = getgrnam(*p + 1);
                        if (!g) {
                                if (errloc_join(ret_error, first, -EINVAL,
                                                conf_node_error(where, "no such group '%s'", *p + 1)) ==
                                    -ENOMEM)
                                        return -ENOMEM;
                                continue;
                        }
                        m->allow_gids[m->n_allow_gids++] = g->gr_gid;
                } else {
                        struct passwd *pw = getpwnam(*p);
                        if (!pw) {
                                if (errloc_join(ret_error, first, -EINVAL,
                                                conf_node_error(where, "no such user '%s'", *p)) == -ENOMEM)
                                        return -ENOMEM;
                                continue;
                        }
                        m->allow_uids[m->n_allow_uids++] = pw->pw_uid;
                }
        }
        return 0;
}

/* Only the host's keys are looked at here; the rest waits for the module.
 * Errors are added to *ret_error; -ENOMEM stops, a return of 1 says the
 * section is not one a module could be given. */
static int parse_module(ConfNode *n, ConfModule *m, char **ret_error, int *first) {
        m->enabled = true;
        if (n->type != CONF_MAP)
                return errloc_join(ret_error, first, -EINVAL,
                                   conf_node_error(n, "a module section must be a mapping")) == -ENOMEM
                               ? -ENOMEM
                               : 1;
        if (strlen(n->key) > 64 ||
            strspn(n->key, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(n->key))
                return errloc_join(ret_error, first, -EINVAL,
                                   conf_node_error(n, "not a valid module name")) == -ENOMEM
                               ? -ENOMEM
                               : 1;
        n->module_section = true;
        for (size_t i = 0; i < ELEMENTSOF(module_keys); i++) {
                const ConfNode *v = conf_node_get(n, module_keys[i].key);
                ConfNode fake;
                char *e = NULL;
                int r;

                if (!v)
                        continue;
                /* Parse one row at a time so module keys are not "unknown". */
                fake = (ConfNode){ .type = CONF_MAP,
                                   .file = n->file,
                                   .line = n->line,
                                   .column = n->column,
                                   .children = (ConfNode **) &v,
                                   .n_children = 1 };
                r = conf_keys_parse(&fake, &module_keys[i], 1, m, &e);
                if (errloc_join(ret_error, first, r, e) == -ENOMEM)
                        return -ENOMEM;
        }
        m->name = strdup(n->key);
        m->cfg = n;
        if (!m->name)
                return -ENOMEM;
        return m->enabled ? resolve_allow(n, m, ret_error, first) : 0;
}

static int parse_modules(Config *c, const ConfNode *mods, char **ret_error, int *first) {
        int r;

        if (mods->type == CONF_SCALAR && mods->plain && isempty(mods->value))
                return 0;
        if (mods->type != CONF_MAP)
                return errloc_join(ret_error, first, -EINVAL,
                                   conf_node_error(mods, "expected a mapping of module sections"));
        c->modules = calloc(mods->n_children ?: 1, sizeof(ConfModule));
        if (!c->modules)
                return -ENOMEM;
        for (size_t i = 0; i < mods->n_children; i++) {
                ConfModule *m = &c->modules[c->n_modules];

                r = parse_module(mods->children[i], m, ret_error, first);
                if (r < 0)
                        return r;
                if (r > 0) { /* not a section: nothing of it to keep */
                        free(m->name);
                        strv_free(m->allow);
                        *m = (ConfModule){};
                        continue;
                }
                c->n_modules++;
        }
        return 0;
}

/* The reserved slots must leave some for everybody else; the default
 * shrinks to a quarter of a small max_connections instead of failing. */
static char *parse_reserved(Config *c) {
        const ConfNode *n = conf_node_get(c->tree->root, "reserved_connections");

        if (c->reserved_connections < c->max_connections)
                return NULL;
        if (!n) {
                c->reserved_connections = c->max_connections / 4;
                return NULL;
        }
        return conf_node_error(n, "%" PRIi64 " must be less than max_connections (%" PRIi64 ")",
                               c->reserved_connections, c->max_connections);
}

static char *parse_socket_mode(Config *c) {
        char *end;
        unsigned long m;

        if (!c->socket_mode_str)
                return NULL;
        m = strtoul(c->socket_mode_str, &end, 8);
        if (isempty(c->socket_mode_str) || *end || m > 0777)
                return conf_node_error(conf_node_get(c->tree->root, "socket_mode"),
                                       "'%s' is not an octal mode like 0660", c->socket_mode_str);
        c->socket_mode = (mode_t) m;
        return NULL;
}

static char *parse_socket_group(Config *c) {
        struct group *g;

        if (!c->socket_group)
                return NULL;
        /* Resolved here so --check-config catches a group that does not exist. */
        g = getgrnam(c->socket_group);
        if (!g)
                return conf_node_error(conf_node_get(c->tree->root, "socket_group"), "no such group '%s'",
                                       c->socket_group);
        c->socket_gid = g->gr_gid;
        return NULL;
}

static char *parse_log_level(Config *c) {
        int l;

        if (!c->log_level_str)
                return NULL;
        l = log_level_from_string(c->log_level_str);
        if (l < 0)
                return conf_node_error(conf_node_get(c->tree->root, "log_level"),
                                       "'%s' is not one of err, warning, notice, info, debug",
                                       c->log_level_str);
        c->log_level = l;
        return NULL;
}

/* Each returns its error, or NULL. */
static char *(*const derived[])(Config *c) = {
        parse_socket_mode,
        parse_socket_group,
        parse_log_level,
        parse_reserved,
};

/* Whether the value of @key was refused: it is in the file, and not what
 * came of it. */
static bool key_refused(const Config *c, const char *key, const char *value) {
        const ConfNode *n = conf_node_get(c->tree->root, key);

        return n && n->type == CONF_SCALAR && !isempty(n->value) && !streq_ptr(n->value, value);
}

/* Takes @tree over, success or not.  Every error of the file is reported,
 * one line each; with *ret_partial, a file with errors in its values still
 * hands back what could be made of it (defaults where a value was refused),
 * for the module sections to be checked in the same round. */
static int config_from_tree(ConfTree *tree, Config **ret, char **ret_error, bool *ret_partial) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *all = NULL;
        char *e = NULL;
        int first = 0, r;

        c = calloc(1, sizeof(*c));
        if (!c) {
                conf_tree_free(tree);
                return -ENOMEM;
        }
        c->tree = tree;
        r = set_defaults(c);
        if (r < 0)
                return r;
        r = conf_keys_parse(c->tree->root, top_keys, ELEMENTSOF(top_keys), c, &e);
        if (errloc_join(&all, &first, r, e) == -ENOMEM)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(derived); i++) {
                e = derived[i](c);
                if (e && errloc_join(&all, &first, -EINVAL, e) == -ENOMEM)
                        return -ENOMEM;
        }
        if (c->modules_node) {
                r = parse_modules(c, c->modules_node, &all, &first);
                if (r == -ENOMEM)
                        return r;
        }
        if (first < 0) {
                if (ret_error)
                        *ret_error = TAKE_PTR(all);
                /* where modules are found and what they are given must be right */
                if (ret_partial && !key_refused(c, "module_dir", c->module_dir) &&
                    !key_refused(c, "state_dir", c->state_dir) && !key_refused(c, "modules", NULL)) {
                        *ret_partial = true;
                        *ret = TAKE_PTR(c);
                }
                return first;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

int config_parse(const char *file, const char *data, size_t len, Config **ret, char **ret_error) {
        ConfTree *tree = NULL;
        int r;

        r = conf_tree_parse(file, data, len, &tree, ret_error);
        if (r < 0)
                return r;
        return config_from_tree(tree, ret, ret_error, NULL);
}

static int config_load_full(const char *path, Config **ret, char **ret_error, bool *ret_partial) {
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_free_ char *all = NULL;
        ConfTree *tree = NULL;
        bool partial = false;
        char *e = NULL;
        int first = 0, r;

        /* Whoever can change the file names the modules sunkd runs as root
         * and every path it writes. */
        r = trusted_path_check(path, "config file", 0, ret_error);
        if (r < 0)
                return r;
        r = conf_tree_load(path, &tree, ret_error);
        if (r < 0)
                return r;
        r = config_from_tree(tree, &c, &e, &partial);
        if (errloc_join(&all, &first, r, e) == -ENOMEM)
                return -ENOMEM;
        if (!c)
                goto fail;
        /* Here, not in config_parse(): the file system's answer, not the text's. */
        e = NULL;
        r = conf_keys_check_written(c->tree->root, top_keys, ELEMENTSOF(top_keys), c, &e);
        if (errloc_join(&all, &first, r, e) == -ENOMEM)
                return -ENOMEM;
        if (first == 0) {
                *ret = TAKE_PTR(c);
                return 0;
        }
        if (ret_partial && (partial || r < 0)) {
                *ret_partial = true;
                *ret = TAKE_PTR(c);
        }
fail:
        if (ret_error)
                *ret_error = TAKE_PTR(all);
        return first;
}

int config_load(const char *path, Config **ret, char **ret_error) {
        return config_load_full(path, ret, ret_error, NULL);
}

int config_load_partial(const char *path, Config **ret, char **ret_error) {
        return config_load_full(path, ret, ret_error, &(bool){ false });
}

const ConfModule *config_find_module(const Config *c, const char *name) {
        for (size_t i = 0; c && i < c->n_modules; i++)
                if (streq(c->modules[i].name, name))
                        return &c->modules[i];
        return NULL;
}

bool config_module_same(const ConfModule *a, const ConfModule *b) {
        static const char *const host_keys[] = { "enabled", "required", "allow", NULL };

        return conf_node_equal(a->cfg, b->cfg, host_keys);
}
