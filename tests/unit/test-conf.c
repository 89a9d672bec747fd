/* sunkd.yaml parsing: values, defaults and, above all, where errors are. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <syslog.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf-keys.h"
#include "conf.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strv.h"
#include "../lib/check-run.h"

static int parse(const char *yaml, Config **ret, char **ret_error) {
        *ret_error = NULL;
        return config_parse("sunkd.yaml", yaml, strlen(yaml), ret, ret_error);
}

/* Parses @yaml expecting failure with @error exactly. */
static void expect_error(const char *yaml, const char *error) {
        Config *c = NULL;
        char *e = NULL;
        int r = parse(yaml, &c, &e);

        ck_assert_msg(r < 0, "expected failure for:\n%s", yaml);
        ck_assert_ptr_null(c);
        ck_assert_ptr_nonnull(e);
        ck_assert_msg(strcmp(e, error) == 0, "got error '%s', expected '%s'", e, error);
        free(e);
}

/* A section is the same when it says the same, wherever it sits in the file. */
START_TEST(test_module_same) {
        Config *a = NULL, *b = NULL, *c = NULL;
        char *e = NULL;

        ck_assert_int_eq(parse("modules:\n  m:\n    k: v\n    l: [1, 2]\n    x: {y: z}\n", &a, &e), 0);
        /* Moved down by a comment and another module, flow style, allow added. */
        ck_assert_int_eq(
                parse("log_level: info\n# moved\nmodules:\n  n: {}\n  m:\n    allow: [root]\n"
                      "    required: false\n    k: v\n    l:\n      - 1\n      - 2\n    x:\n      y: z\n",
                      &b, &e),
                0);
        ck_assert(config_module_same(config_find_module(a, "m"), config_find_module(b, "m")));
        ck_assert(conf_node_equal(config_find_module(a, "m")->cfg, config_find_module(a, "m")->cfg, NULL));
        /* The host keys count when not skipped. */
        ck_assert(!conf_node_equal(config_find_module(a, "m")->cfg, config_find_module(b, "m")->cfg, NULL));
        /* A value, a quoted "1" for a plain 1, an order of keys: each a change. */
        ck_assert_int_eq(parse("modules:\n  m:\n    k: w\n    l: [1, 2]\n    x: {y: z}\n", &c, &e), 0);
        ck_assert(!config_module_same(config_find_module(a, "m"), config_find_module(c, "m")));
        config_free(c);
        ck_assert_int_eq(parse("modules:\n  m:\n    k: v\n    l: ['1', 2]\n    x: {y: z}\n", &c, &e), 0);
        ck_assert(!config_module_same(config_find_module(a, "m"), config_find_module(c, "m")));
        config_free(c);
        ck_assert_int_eq(parse("modules:\n  m:\n    l: [1, 2]\n    k: v\n    x: {y: z}\n", &c, &e), 0);
        ck_assert(!config_module_same(config_find_module(a, "m"), config_find_module(c, "m")));
        config_free(c);
        ck_assert_int_eq(
                parse("modules:\n  m:\n    k: v\n    l: [1, 2]\n    x: {y: z}\n    extra: 1\n", &c, &e), 0);
        ck_assert(!config_module_same(config_find_module(a, "m"), config_find_module(c, "m")));
        ck_assert(!config_module_same(config_find_module(c, "m"), config_find_module(a, "m")));
        config_free(c);
        ck_assert_int_eq(parse("modules:\n  m:\n    k: v\n    l: [1, 2]\n    x: [y, z]\n", &c, &e), 0);
        ck_assert(!config_module_same(config_find_module(a, "m"), config_find_module(c, "m")));
        config_free(c);
        config_free(a);
        config_free(b);
}
END_TEST

/* A file that is part of the configuration: the same text naming a changed file is a change. */
START_TEST(test_module_same_files) {
        char dir[] = "/tmp/test-conf-files-XXXXXX", *path = NULL, *yaml = NULL, *e = NULL;
        struct Out {
                char *file;
        } o1 = {}, o2 = {}, o3 = {};
        const sunkd_cfg_key reads[] = { { "file", SUNKD_CFG_PATH, 0, SUNKD_CFG_RELOAD_FILE, 0, 0 } };
        const sunkd_cfg_key plain[] = { { "file", SUNKD_CFG_PATH, 0, 0, 0, 0 } };
        Config *a = NULL, *b = NULL, *c = NULL;
        FILE *f;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_ge(asprintf(&path, "%s/x.conf", dir), 0);
        ck_assert_ptr_nonnull(f = fopen(path, "w"));
        fputs("one\n", f);
        fclose(f);
        ck_assert_int_ge(asprintf(&yaml, "modules:\n  m:\n    file: %s\n", path), 0);
        ck_assert_int_eq(parse(yaml, &a, &e), 0);
        ck_assert_int_eq(parse(yaml, &b, &e), 0);
        ck_assert_int_eq(parse(yaml, &c, &e), 0);
        ck_assert_int_eq(conf_keys_parse(config_find_module(a, "m")->cfg, reads, 1, &o1, &e), 0);
        ck_assert_int_eq(conf_keys_parse(config_find_module(b, "m")->cfg, reads, 1, &o2, &e), 0);
        ck_assert(config_module_same(config_find_module(a, "m"), config_find_module(b, "m")));
        /* Parsed as a file on one side only: not known to be the same. */
        ck_assert(!config_module_same(config_find_module(a, "m"), config_find_module(c, "m")));
        ck_assert_ptr_nonnull(f = fopen(path, "a"));
        fputs("two\n", f);
        fclose(f);
        ck_assert_int_eq(conf_keys_parse(config_find_module(c, "m")->cfg, reads, 1, &o3, &e), 0);
        ck_assert(!config_module_same(config_find_module(a, "m"), config_find_module(c, "m")));
        ck_assert(config_module_same(config_find_module(c, "m"), config_find_module(c, "m")));
        config_free(b);
        /* Without the flag the file is the module's business. */
        ck_assert_int_eq(parse(yaml, &b, &e), 0);
        conf_keys_clear(plain, 1, &o2);
        ck_assert_int_eq(conf_keys_parse(config_find_module(b, "m")->cfg, plain, 1, &o2, &e), 0);
        config_free(a);
        ck_assert_int_eq(parse(yaml, &a, &e), 0);
        ck_assert(config_module_same(config_find_module(a, "m"), config_find_module(b, "m")));
        conf_keys_clear(plain, 1, &o1);
        conf_keys_clear(plain, 1, &o2);
        conf_keys_clear(plain, 1, &o3);
        config_free(a);
        config_free(b);
        config_free(c);
        unlink(path);
        rmdir(dir);
        free(path);
        free(yaml);
}
END_TEST

START_TEST(test_full) {
        const char *yaml = "socket: /tmp/x/io.sunkd\n"
                           "socket_mode: \"0660\"\n"
                           "state_dir: /var/lib/sunkd\n"
                           "module_dir: /usr/lib/sunkd\n"
                           "log_level: debug\n"
                           "metrics_textfile: /var/lib/node_exporter/sunkd.prom\n"
                           "idle_timeout: 5s\n"
                           "max_request_size: 32K\n"
                           "modules:\n"
                           "  nsscache:\n"
                           "    interval: 15m\n"
                           "    required: true\n"
                           "  gres:\n"
                           "    enabled: false\n"
                           "  authkeys:\n"
                           "    allow: [root, \"@root\"]\n";
        Config *c = NULL;
        char *e = NULL;

        ck_assert_int_eq(parse(yaml, &c, &e), 0);
        ck_assert_str_eq(c->socket, "/tmp/x/io.sunkd");
        ck_assert_uint_eq(c->socket_mode, 0660);
        ck_assert_int_eq(c->log_level, LOG_DEBUG);
        ck_assert_uint_eq(c->idle_timeout_usec, 5 * USEC_PER_SEC);
        ck_assert_uint_eq(c->max_request, 32768);
        ck_assert_uint_eq(c->n_modules, 3);
        ck_assert_str_eq(c->modules[0].name, "nsscache");
        ck_assert(c->modules[0].enabled);
        ck_assert(c->modules[0].required);
        ck_assert(!c->modules[1].enabled);
        ck_assert_uint_eq(strv_length(c->modules[2].allow), 2);
        ck_assert_str_eq(c->modules[2].allow[1], "@root");
        /* Resolved with the file, not later on the loop. */
        ck_assert_uint_eq(c->modules[2].n_allow_uids, 1);
        ck_assert_uint_eq(c->modules[2].allow_uids[0], 0);
        ck_assert_uint_eq(c->modules[2].n_allow_gids, 1);
        ck_assert_uint_eq(c->modules[2].allow_gids[0], 0);
        ck_assert_ptr_nonnull(conf_node_get(c->modules[0].cfg, "interval"));
        config_free(c);
}
END_TEST

START_TEST(test_allow_unknown) {
        Config *c = NULL;
        char *e = NULL;

        ck_assert_int_eq(parse("modules:\n  m:\n    allow: [no-such-user-sunkd]\n", &c, &e), -EINVAL);
        ck_assert_msg(strstr(e, ":3:") && strstr(e, "no such user 'no-such-user-sunkd'"), "%s", e);
        free(e);
        e = NULL;
        ck_assert_int_eq(parse("modules:\n  m:\n    allow: [\"@no-such-group-sunkd\"]\n", &c, &e), -EINVAL);
        ck_assert_msg(strstr(e, "no such group 'no-such-group-sunkd'"), "%s", e);
        free(e);
        e = NULL;
        /* A disabled module's list is not looked up. */
        ck_assert_int_eq(
                parse("modules:\n  m:\n    enabled: false\n    allow: [no-such-user-sunkd]\n", &c, &e), 0);
        config_free(c);
}
END_TEST

START_TEST(test_defaults) {
        Config *c = NULL;
        char *e = NULL;

        ck_assert_int_eq(parse("", &c, &e), 0);
        ck_assert_str_eq(c->socket, "/run/sunkd/io.sunkd");
        ck_assert_uint_eq(c->socket_mode, 0666);
        ck_assert_int_eq(c->max_connections, 256);
        ck_assert_uint_eq(c->max_request, 65536);
        ck_assert_uint_eq(c->n_modules, 0);
        ck_assert_int_eq(c->max_connections_per_uid, 32);
        ck_assert_int_eq(c->max_calls_per_uid, 16);
        ck_assert_int_eq(c->reserved_connections, 16);
        ck_assert_uint_eq(c->request_timeout_usec, 10 * USEC_PER_SEC);
        config_free(c);

        /* The default reservation shrinks to fit a small max_connections. */
        ck_assert_int_eq(parse("max_connections: 8\n", &c, &e), 0);
        ck_assert_int_eq(c->reserved_connections, 2);
        config_free(c);
        ck_assert_int_eq(parse("max_connections: 1\n", &c, &e), 0);
        ck_assert_int_eq(c->reserved_connections, 0);
        config_free(c);
}
END_TEST

START_TEST(test_errors_located) {
        expect_error("socket: /run/x\nbogus: 1\n", "sunkd.yaml:2:1: key 'bogus': unknown key");
        expect_error("idle_timeout: -5s\n", "sunkd.yaml:1:1: key 'idle_timeout': '-5s' is negative");
        expect_error("idle_timeout: soon\n",
                     "sunkd.yaml:1:1: key 'idle_timeout': 'soon' is not a duration (use e.g. 30s, 15m, 1h)");
        expect_error("max_connections: lots\n",
                     "sunkd.yaml:1:1: key 'max_connections': 'lots' is not an integer");
        expect_error("max_connections: 0\n",
                     "sunkd.yaml:1:1: key 'max_connections': 0 is out of range [1, 65536]");
        expect_error("max_connections: 8\nreserved_connections: 8\n",
                     "sunkd.yaml:2:1: key 'reserved_connections': 8 must be less than max_connections (8)");
        expect_error("reserved_connections: 99999999999999999999\n",
                     "sunkd.yaml:1:1: key 'reserved_connections': '99999999999999999999' is not an integer");
        expect_error("max_connections_per_uid: 0\n",
                     "sunkd.yaml:1:1: key 'max_connections_per_uid': 0 is out of range [1, 65536]");
        expect_error("max_calls_per_uid: -1\n",
                     "sunkd.yaml:1:1: key 'max_calls_per_uid': -1 is out of range [1, 65536]");
        expect_error(
                "request_timeout: soon\n",
                "sunkd.yaml:1:1: key 'request_timeout': 'soon' is not a duration (use e.g. 30s, 15m, 1h)");
        expect_error("request_timeout: [1s]\n",
                     "sunkd.yaml:1:1: key 'request_timeout': expected a duration (e.g. 30s, 15m, 1h)");
        expect_error("socket: relative/path\n",
                     "sunkd.yaml:1:1: key 'socket': 'relative/path' is not an absolute path without '..'");
        expect_error("socket: /run/../etc/x\n",
                     "sunkd.yaml:1:1: key 'socket': '/run/../etc/x' is not an absolute path without '..'");
        expect_error("socket: [a, b]\n", "sunkd.yaml:1:1: key 'socket': expected an absolute path");
        expect_error(
                "log_level: loud\n",
                "sunkd.yaml:1:1: key 'log_level': 'loud' is not one of err, warning, notice, info, debug");
        expect_error("socket_mode: \"0999\"\n",
                     "sunkd.yaml:1:1: key 'socket_mode': '0999' is not an octal mode like 0660");
        expect_error("modules:\n  nsscache:\n    enabled: maybe\n",
                     "sunkd.yaml:3:5: key 'enabled': 'maybe' is not a boolean (true or false)");
        expect_error("modules:\n  nsscache: 5\n",
                     "sunkd.yaml:2:3: key 'nsscache': a module section must be a mapping");
        expect_error("modules:\n  ../evil:\n    enabled: true\n",
                     "sunkd.yaml:2:3: key '../evil': not a valid module name");
        expect_error("socket: /a\nsocket: /b\n", "sunkd.yaml:2:1: key 'socket': duplicate key");
        expect_error("- a\n- b\n", "sunkd.yaml:1:1: the top level must be a mapping of keys");
        expect_error("a: &x 1\nb: *x\n", "sunkd.yaml:2:4: aliases are not supported");
        expect_error("a: 1\n---\nb: 2\n", "sunkd.yaml:2:1: only one YAML document is allowed");
}
END_TEST

START_TEST(test_yaml_syntax) {
        Config *c = NULL;
        char *e = NULL;

        /* A tab used as indentation is a YAML error with a position. */
        ck_assert_int_lt(parse("modules:\n\tnsscache: {}\n", &c, &e), 0);
        ck_assert_ptr_nonnull(e);
        ck_assert_msg(strncmp(e, "sunkd.yaml:2:", 13) == 0, "error '%s' lacks the position", e);
        free(e);
        ck_assert_int_lt(parse("a: [1, 2\n", &c, &e), 0);
        ck_assert_msg(strncmp(e, "sunkd.yaml:", 11) == 0, "error '%s' lacks the file", e);
        free(e);
        ck_assert_int_lt(parse("a: \"\\x00\"\n", &c, &e), 0);
        free(e);
}
END_TEST

START_TEST(test_hostile) {
        Config *c = NULL;
        char *e = NULL;
        size_t n = 200 * 2 + 16;
        char *deep = malloc(n);

        /* Deep nesting stops at the depth limit. */
        size_t k = 0;
        k += (size_t) sprintf(deep, "a: ");
        for (int i = 0; i < 200; i++)
                deep[k++] = '[';
        for (int i = 0; i < 200; i++)
                deep[k++] = ']';
        deep[k] = '\0';
        ck_assert_int_lt(parse(deep, &c, &e), 0);
        ck_assert_ptr_nonnull(strstr(e, "nested deeper than"));
        free(e);
        free(deep);

        /* An oversized file is refused before parsing. */
        size_t big = CONF_FILE_MAX + 1;
        char *huge = malloc(big + 1);
        memset(huge, '#', big);
        huge[big] = '\0';
        ck_assert_int_eq(config_parse("big.yaml", huge, big, &c, &e), -EFBIG);
        free(e);
        free(huge);

        /* Non-UTF-8 input is a reader error. */
        ck_assert_int_lt(parse("a: \xff\xfe\n", &c, &e), 0);
        free(e);
}
END_TEST

typedef struct ModConf {
        char *url;
        int64_t count;
        bool flag;
        uint64_t interval;
        uint64_t size;
        char **list;
        const ConfNode *sub;
} ModConf;

static const sunkd_cfg_key mod_keys[] = {
        { "url", SUNKD_CFG_STRING, offsetof(ModConf, url), SUNKD_CFG_REQUIRED, 0, 0 },
        { "count", SUNKD_CFG_INT, offsetof(ModConf, count), 0, 1, 10 },
        { "flag", SUNKD_CFG_BOOL, offsetof(ModConf, flag), 0, 0, 0 },
        { "interval", SUNKD_CFG_DURATION, offsetof(ModConf, interval), 0, 0, 0 },
        { "size", SUNKD_CFG_SIZE, offsetof(ModConf, size), 0, 0, 1024 },
        { "list", SUNKD_CFG_LIST, offsetof(ModConf, list), 0, 0, 0 },
        { "sub", SUNKD_CFG_MAP, offsetof(ModConf, sub), 0, 0, 0 },
};

/* Parses @yaml as a module's section (where the host keys are skipped) or,
 * with @sub, as a mapping inside it (where they are unknown). */
static int parse_keys(const char *yaml, bool sub, ModConf *mc, char **e) {
        ConfTree *t = NULL;
        int r;

        *e = NULL;
        r = conf_tree_parse("m.yaml", yaml, strlen(yaml), &t, e);
        ck_assert_int_eq(r, 0);
        t->root->module_section = !sub;
        *mc = (ModConf){};
        r = conf_keys_parse(t->root, mod_keys, ELEMENTSOF(mod_keys), mc, e);
        if (r >= 0)
                ck_assert(mc->sub == NULL || mc->sub->type == CONF_MAP);
        conf_keys_clear(mod_keys, ELEMENTSOF(mod_keys), mc);
        conf_tree_free(t);
        return r;
}

static int parse_mod(const char *yaml, ModConf *mc, char **e) {
        return parse_keys(yaml, false, mc, e);
}

START_TEST(test_key_table) {
        ModConf mc;
        char *e;

        ck_assert_int_eq(
                parse_mod("url: x\ncount: 3\nflag: yes\ninterval: 1m\nsize: 1K\nlist: [a, b]\nsub: {k: v}\n"
                          "enabled: true\nrequired: false\n",
                          &mc, &e),
                0);
        ck_assert_int_eq(parse_keys("url: x\nenabled: true\n", true, &mc, &e), -EINVAL);
        ck_assert_str_eq(e, "m.yaml:2:1: key 'enabled': unknown key");
        free(e);
        ck_assert_int_eq(parse_mod("count: 3\n", &mc, &e), -EINVAL);
        ck_assert_str_eq(e, "m.yaml:1:1: key 'url': required but missing");
        free(e);
        ck_assert_int_eq(parse_mod("url: x\ncount: 11\n", &mc, &e), -EINVAL);
        ck_assert_str_eq(e, "m.yaml:2:1: key 'count': 11 is out of range [1, 10]");
        free(e);
        ck_assert_int_eq(parse_mod("url: x\nsize: 2K\n", &mc, &e), -EINVAL);
        ck_assert_str_eq(e, "m.yaml:2:1: key 'size': '2K' is larger than allowed");
        free(e);
        ck_assert_int_eq(parse_mod("url: x\nlist: [a, [b]]\n", &mc, &e), -EINVAL);
        ck_assert_str_eq(e, "m.yaml:2:11: list item is not a string");
        free(e);
        ck_assert_int_eq(parse_mod("url: x\nsub: 1\n", &mc, &e), -EINVAL);
        ck_assert_str_eq(e, "m.yaml:2:1: key 'sub': expected a mapping");
        free(e);
        ck_assert_int_eq(parse_mod("url:\n", &mc, &e), -EINVAL);
        ck_assert_str_eq(e, "m.yaml:1:1: key 'url': a value is required");
        free(e);
}
END_TEST

typedef struct SecretConf {
        char *token;
        char *small;
} SecretConf;

static const sunkd_cfg_key secret_keys[] = {
        { "token", SUNKD_CFG_SECRET, offsetof(SecretConf, token), 0, 0, 0 },
        { "small", SUNKD_CFG_SECRET, offsetof(SecretConf, small), 0, 0, 8 },
};

static char secret_dir[] = "/tmp/test-conf-secret-XXXXXX";

/* Writes @len bytes of @data to <secret_dir>/@name with @mode; returns the path. */
static char *secret_file(const char *name, const char *data, size_t len, mode_t mode) {
        char *path;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/%s", secret_dir, name), 0);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, len, f), len);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(chmod(path, mode), 0);
        return path;
}

/* Parses "<key>: <value>" through secret_keys; the error, if any, in *e. */
static int parse_secret(const char *key, const char *value, SecretConf *sc, char **e) {
        _cleanup_free_ char *yaml = NULL;
        ConfTree *t = NULL;
        int r;

        *e = NULL;
        ck_assert_int_ge(asprintf(&yaml, "%s: %s\n", key, value), 0);
        ck_assert_msg(conf_tree_parse("s.yaml", yaml, strlen(yaml), &t, e) == 0, "%s: %s", yaml, *e);
        *sc = (SecretConf){};
        r = conf_keys_parse(t->root, secret_keys, ELEMENTSOF(secret_keys), sc, e);
        conf_tree_free(t);
        return r;
}

/* Fails @value with an error that starts with @prefix and never shows @secret. */
static void expect_secret_error(const char *key, const char *value, const char *prefix, const char *secret) {
        SecretConf sc;
        char *e;

        ck_assert_int_lt(parse_secret(key, value, &sc, &e), 0);
        ck_assert_ptr_nonnull(e);
        ck_assert_msg(strncmp(e, prefix, strlen(prefix)) == 0, "got '%s', expected '%s...'", e, prefix);
        if (secret)
                ck_assert_msg(!strstr(e, secret), "'%s' shows the secret", e);
        ck_assert_ptr_null(sc.token);
        ck_assert_ptr_null(sc.small);
        free(e);
}

static char *expect_secret(const char *key, const char *value) {
        SecretConf sc;
        char *e, *v;

        ck_assert_msg(parse_secret(key, value, &sc, &e) == 0, "'%s' failed: %s", value, e);
        v = strdup(streq(key, "token") ? sc.token : sc.small);
        conf_keys_clear(secret_keys, ELEMENTSOF(secret_keys), &sc);
        ck_assert_ptr_null(sc.token);
        return v;
}

START_TEST(test_secret) {
        _cleanup_free_ char *good = NULL, *crlf = NULL, *group = NULL, *other = NULL, *empty = NULL,
                            *nul = NULL, *link = NULL, *big = NULL, *eight = NULL, *nine = NULL, *v = NULL,
                            *where = NULL;
        char *huge;

        ck_assert_ptr_nonnull(mkdtemp(secret_dir));
        good = secret_file("good", "s3cr3t-good\n", 12, 0600);
        crlf = secret_file("crlf", "s3cr3t-crlf\r\n\n", 14, 0400);
        group = secret_file("group", "s3cr3t-group\n", 13, 0640);
        other = secret_file("other", "s3cr3t-other", 12, 0604);
        empty = secret_file("empty", "\n", 1, 0600);
        nul = secret_file("nul", "s3cr3t\0tail", 11, 0600);
        eight = secret_file("eight", "12345678\n", 9, 0600);
        nine = secret_file("nine", "s3cr3t-99", 9, 0600);
        huge = calloc(1, CONF_SECRET_MAX + 2);
        memset(huge, 'h', CONF_SECRET_MAX + 1);
        big = secret_file("big", huge, CONF_SECRET_MAX + 1, 0600);
        free(huge);
        ck_assert_int_ge(asprintf(&link, "%s/link", secret_dir), 0);
        /* A Kubernetes Secret volume: the key is a relative symlink into ..data. */
        ck_assert_int_eq(symlink("good", link), 0);

        /* Inline, from files, through a symlink; newlines dropped. */
        v = expect_secret("token", "inline-s3cret");
        ck_assert_str_eq(v, "inline-s3cret");
        free(v);
        ck_assert_int_ge(asprintf(&where, "file:%s", good), 0);
        v = expect_secret("token", where);
        ck_assert_str_eq(v, "s3cr3t-good");
        free(v);
        free(where);
        ck_assert_int_ge(asprintf(&where, "\"file:%s\"", crlf), 0);
        v = expect_secret("token", where);
        ck_assert_str_eq(v, "s3cr3t-crlf");
        free(v);
        free(where);
        ck_assert_int_ge(asprintf(&where, "file:%s", link), 0);
        v = expect_secret("token", where);
        ck_assert_str_eq(v, "s3cr3t-good");
        free(v);
        free(where);
        ck_assert_int_ge(asprintf(&where, "file:%s", eight), 0);
        v = expect_secret("small", where);
        ck_assert_str_eq(v, "12345678");
        free(v);
        free(where);
        v = expect_secret("token", "|\n  block-s3cret\n");
        ck_assert_str_eq(v, "block-s3cret");
        free(v);
        v = NULL;

        /* Refused files: the message names key and file, never the contents. */
        static const struct {
                const char *name, *reason;
        } refused[] = {
                { "group", "refused: must be a regular file owned by root or uid" },
                { "other", "refused: must be a regular file owned by root or uid" },
                { "empty", "is empty" },
                { "nul", "contains a NUL byte" },
                { "big", "is longer than 65536 bytes" },
                { "missing", "No such file or directory" },
                { "", "refused: must be a regular file" }, /* the directory itself */
        };
        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                _cleanup_free_ char *value = NULL, *prefix = NULL;
                ck_assert_int_ge(asprintf(&value, "file:%s/%s", secret_dir, refused[i].name), 0);
                ck_assert_int_ge(asprintf(&prefix, "s.yaml:1:1: key 'token': file '%s/%s': %s", secret_dir,
                                          refused[i].name, refused[i].reason),
                                 0);
                expect_secret_error("token", value, prefix, "s3cr3t");
        }
        ck_assert_int_ge(asprintf(&where, "file:%s", nine), 0);
        expect_secret_error("small", where, "s.yaml:1:1: key 'small': file '", "s3cr3t");
        ck_assert_int_ge(asprintf(&v, "file:%s", nine), 0);
        {
                SecretConf sc;
                char *e;
                ck_assert_int_lt(parse_secret("small", v, &sc, &e), 0);
                ck_assert_msg(strstr(e, "': is longer than 8 bytes"), "%s", e);
                free(e);
        }
        free(v);
        v = NULL;
        free(where);
        where = NULL;
        expect_secret_error("small", "s3cr3t-inline-too-long",
                            "s.yaml:1:1: key 'small': the value is longer than 8 bytes", "s3cr3t");
        expect_secret_error("token", "\"\"", "s.yaml:1:1: key 'token': the value is empty", NULL);
        /* A NUL byte in YAML is refused by the reader already. */
        expect_secret_error("token", "[s3cr3t]", "s.yaml:1:1: key 'token': expected a string or file:/path",
                            "s3cr3t");
        expect_secret_error("token", "file:relative/s3cr3t",
                            "s.yaml:1:1: key 'token': 'file:relative/s3cr3t': the path must be absolute",
                            NULL);
        expect_secret_error("token", "file:/etc/../etc/passwd",
                            "s.yaml:1:1: key 'token': 'file:/etc/../etc/passwd'", NULL);
        expect_secret_error("token", "\"file:\"",
                            "s.yaml:1:1: key 'token': 'file:': the path must be absolute", NULL);
        expect_secret_error("token", "file:/dev/null", "s.yaml:1:1: key 'token': file '/dev/null': refused",
                            NULL);
        /* Another owner, mode 0600: the owner is named as the fault, not the mode. */
        {
                _cleanup_free_ char *owned = secret_file("owned", "s3cr3t-owned\n", 13, 0600), *value = NULL,
                                    *want = NULL;
                ck_assert_msg(geteuid() == 0, "must run as root: the test hands a file to uid 1");
                ck_assert_int_eq(chown(owned, 1, (gid_t) -1), 0);
                ck_assert_int_ge(asprintf(&value, "file:%s", owned), 0);
                ck_assert_int_ge(asprintf(&want,
                                          "s.yaml:1:1: key 'token': file '%s': refused: the owner is wrong: "
                                          "uid 1, not root (chown root '%s')",
                                          owned, owned),
                                 0);
                expect_secret_error("token", value, want, "s3cr3t");
        }
        /* A FIFO must not hang the parse. */
        ck_assert_int_ge(asprintf(&where, "%s/fifo", secret_dir), 0);
        ck_assert_int_eq(mkfifo(where, 0600), 0);
        _cleanup_free_ char *fifo = NULL;
        ck_assert_int_ge(asprintf(&fifo, "file:%s", where), 0);
        expect_secret_error("token", fifo, "s.yaml:1:1: key 'token': file '", NULL);

        _cleanup_free_ char *cmd = NULL;
        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", secret_dir), 0);
        ck_assert_int_eq(system(cmd), 0);
}
END_TEST

typedef struct WriteConf {
        char *out;
        char *log;
} WriteConf;

static const sunkd_cfg_key write_keys[] = {
        { "out", SUNKD_CFG_PATH, offsetof(WriteConf, out), SUNKD_CFG_WRITE_PATH, 0, 0 },
        { "log", SUNKD_CFG_PATH, offsetof(WriteConf, log), SUNKD_CFG_WRITE_PATH, 0, 0 },
};

/* SUNKD_CFG_WRITE_PATH: the value written, or the default left in place,
 * checked against the file system; conf_keys_parse() alone never looks. */
START_TEST(test_write_path) {
        char dir[] = "/tmp/test-conf-write-XXXXXX";
        _cleanup_free_ char *yaml = NULL, *want = NULL, *cmd = NULL;
        ConfTree *t = NULL;
        WriteConf wc = {};
        char *e = NULL;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(chmod(dir, 0775), 0); /* group-writable: anyone in the group could swap the file */
        ck_assert_int_ge(asprintf(&yaml, "out: %s/out\n", dir), 0);
        ck_assert_int_eq(conf_tree_parse("w.yaml", yaml, strlen(yaml), &t, &e), 0);
        ck_assert_int_eq(conf_keys_parse(t->root, write_keys, ELEMENTSOF(write_keys), &wc, &e), 0);
        ck_assert_int_eq(conf_keys_check_written(t->root, write_keys, ELEMENTSOF(write_keys), &wc, &e),
                         -EPERM);
        ck_assert_int_ge(asprintf(&want,
                                  "w.yaml:1:1: key 'out': refusing to write '%s/out': '%s' is group- or "
                                  "world-writable (owner uid %u, mode 0775)",
                                  dir, dir, (unsigned) geteuid()),
                         0);
        ck_assert_str_eq(e, want);
        e = mfree(e);
        want = mfree(want);

        /* a default the caller set, for a key the section leaves out */
        conf_keys_clear(write_keys, ELEMENTSOF(write_keys), &wc);
        ck_assert_int_ge(asprintf(&wc.log, "%s/log", dir), 0);
        wc.out = strdup("/nonexistent-dir/out");
        ck_assert_int_eq(conf_keys_check_written(t->root, write_keys, ELEMENTSOF(write_keys), &wc, &e),
                         -EPERM);
        ck_assert_int_ge(
                asprintf(&want, "w.yaml:1:1: key 'log': (the default) refusing to write '%s/log'", dir), 0);
        ck_assert_msg(strncmp(e, want, strlen(want)) == 0, "got '%s'", e);
        e = mfree(e);

        /* once only its owner may write the directory */
        ck_assert_int_eq(chmod(dir, 0755), 0);
        ck_assert_int_eq(conf_keys_check_written(t->root, write_keys, ELEMENTSOF(write_keys), &wc, &e), 0);
        ck_assert_ptr_null(e);
        conf_keys_clear(write_keys, ELEMENTSOF(write_keys), &wc);
        conf_tree_free(t);
        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", dir), 0);
        ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("conf");
        TCase *tc = tcase_create("conf");

        tcase_add_test(tc, test_full);
        tcase_add_test(tc, test_module_same);
        tcase_add_test(tc, test_module_same_files);
        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_allow_unknown);
        tcase_add_test(tc, test_errors_located);
        tcase_add_test(tc, test_yaml_syntax);
        tcase_add_test(tc, test_hostile);
        tcase_add_test(tc, test_key_table);
        tcase_add_test(tc, test_secret);
        tcase_add_test(tc, test_write_path);
        suite_add_tcase(s, tc);
        return check_run(s);
}
