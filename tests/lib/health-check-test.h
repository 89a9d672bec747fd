/* What the health check tests share: a check of a type loaded from YAML
 * keys as the module loads one (defaults, the daemon's key-table parser,
 * validate), run against a root, and the asserts on its result. */
#pragma once

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf-keys.h"
#include "conf-tree.h"
#include "util/cleanup.h"
#include "util/macro.h"

#include "../../modules/health/checks/health-check.h"

typedef struct Loaded {
        const HealthCheckType *type;
        void *conf;
} Loaded;

/* A check of @type from the YAML keys @body besides name and type. */
static inline int load(const char *type, const char *body, Loaded *ret, char **ret_error) {
        _cleanup_free_ char *yaml = NULL;
        ConfTree *tree = NULL;
        int r;

        *ret_error = NULL;
        ret->type = health_check_type_find(type);
        ck_assert_msg(ret->type, "no check type '%s'", type);
        ck_assert_int_ge(asprintf(&yaml, "name: t\ntype: %s\n%s", type, body), 0);
        ck_assert_int_eq(conf_tree_parse("checks.yaml", yaml, strlen(yaml), &tree, ret_error), 0);
        ret->conf = calloc(1, ret->type->conf_size);
        ck_assert_ptr_nonnull(ret->conf);
        if (ret->type->defaults)
                ret->type->defaults(ret->conf);
        r = conf_keys_parse(tree->root, ret->type->keys, ret->type->n_keys, ret->conf, ret_error);
        conf_tree_free(tree);
        if (r >= 0 && ret->type->validate)
                r = ret->type->validate(ret->conf, ret_error);
        return r;
}

static inline void unload(Loaded *l) {
        if (l->type->release)
                l->type->release(l->conf);
        conf_keys_clear(l->type->keys, l->type->n_keys, l->conf);
        free(l->conf);
}

/* The result of a check loaded from @body, run against @root_dir; one
 * printable line of detail, always. */
static inline HealthResult run_in(const char *root_dir, const char *type, const char *body) {
        HealthEnv env = { .root = root_dir };
        HealthResult res = { .status = 99 };
        _cleanup_free_ char *e = NULL;
        Loaded l;

        ck_assert_msg(load(type, body, &l, &e) == 0, "%s: %s", body, e);
        ck_assert_int_eq(l.type->run(l.conf, &env, &res), 0);
        unload(&l);
        ck_assert_msg(strlen(res.detail) > 0, "%s: no detail", body);
        for (const char *p = res.detail; *p; p++)
                ck_assert_msg((unsigned char) *p >= 0x20 && *p != 0x7f, "control byte in '%s'", res.detail);
        return res;
}

#define assert_result(res, st, cd, part)                                                                    \
        do {                                                                                                \
                HealthResult _r_ = (res);                                                                   \
                ck_assert_msg(_r_.status == (st) && streq(_r_.code, (cd)) && strstr(_r_.detail, (part)),    \
                              "want %d %s '%s', got %d %s '%s'", (st), (cd), (part), _r_.status, _r_.code,  \
                              _r_.detail);                                                                  \
        } while (0)

/* @entry, one check as sunkd.yaml holds it (of @type, NULL: the type it
 * names), read through the YAML parser and the type's keys, then run
 * against @root_dir: it must be accepted and pass.  Its path, if @path is
 * not NULL, must come back as it is on the node. */
static inline void assert_entry_passes(const char *root_dir, const char *type, const char *entry,
                                       const char *path) {
        _cleanup_free_ char *e = NULL;
        HealthEnv env = { .root = root_dir };
        HealthResult res = {};
        ConfTree *tree = NULL;
        const HealthCheckType *t;
        void *conf;

        ck_assert_msg(conf_tree_parse("genconf.yaml", entry, strlen(entry), &tree, &e) == 0, "%s: %s", entry,
                      e);
        t = health_check_type_find(type ?: conf_node_get(tree->root, "type")->value);
        ck_assert_ptr_nonnull(t);
        conf = calloc(1, t->conf_size);
        ck_assert_ptr_nonnull(conf);
        if (t->defaults)
                t->defaults(conf);
        ck_assert_msg(conf_keys_parse(tree->root, t->keys, t->n_keys, conf, &e) == 0, "%s: %s", entry, e);
        conf_tree_free(tree);
        ck_assert_msg(!t->validate || t->validate(conf, &e) == 0, "%s: %s", entry, e);
        if (path)
                ck_assert_str_eq(*(char **) ((char *) conf + sizeof(HealthCheckCommon)), path);
        ck_assert_int_eq(t->run(conf, &env, &res), 0);
        ck_assert_msg(res.status == HEALTH_PASS, "%s: %d %s %s", entry, res.status, res.code, res.detail);
        if (t->release)
                t->release(conf);
        conf_keys_clear(t->keys, t->n_keys, conf);
        free(conf);
}

/* assert_result() of the test's own run(@type, @body), a check run against
 * its root. */
#define assert_run(type, body, st, cd, part) assert_result(run((type), (body)), (st), (cd), (part))

/* The message a config is refused with. */
static inline char *refused(const char *type, const char *body) {
        char *e = NULL;
        Loaded l;
        int r;

        r = load(type, body, &l, &e);
        unload(&l);
        ck_assert_msg(r == -EINVAL, "%s: accepted (%d)", body, r);
        ck_assert_ptr_nonnull(e);
        return e;
}

#define assert_refused(type, body, part)                                                                    \
        do {                                                                                                \
                _cleanup_free_ char *_e_ = refused((type), (body));                                         \
                ck_assert_msg(strstr(_e_, (part)), "want '%s' in '%s'", (part), _e_);                       \
        } while (0)
