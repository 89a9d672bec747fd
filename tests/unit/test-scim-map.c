/* SCIM pages to maps: the seed's attribute layout, every reject reason,
 * and hostile pages (wrong types, huge strings, deep nesting). */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "modules/nsscache/scim/scim-map.h"
#include "modules/nsscache/scim/scim-page.h"
#include "../lib/scim-collect.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strv.h"
#include "../lib/check-run.h"
#include "../lib/nsscache-seed.h"

/* The maps of users and groups, which every source writes (netgroup follows them). */
#define USER_MAPS (NSS_MAP_SSHKEY + 1)

#define CW SEED_CW
/* The start of a user resource with a name and id, for the cases about its other attributes. */
#define USER_5000 "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":5000,"

static const char conf_text[] =
        "[DEFAULT]\n"
        "maps=passwd,shadow,group,sshkey\n"
        "scim_base_url=https://scim.example/v2\n" SEED_OTHER_MAPS "[passwd]\n"
        "scim_default_shell=/bin/bash\n"
        "scim_path_home_directory=" CW "/sunkPreferredHomeDirectory\n" SEED_PASSWD_PATHS;

static NsscacheConf *conf(const char *extra_passwd) {
        NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL, *t = NULL;

        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        ck_assert_int_ge(asprintf(&t, "%s%s", conf_text, extra_passwd ?: ""), 0);
        ck_assert_msg(nsscache_conf_parse_ini(c, t, strlen(t), "t", &err) == 0, "%s", err);
        ck_assert_msg(nsscache_conf_finalize(c, &err) == 0, "%s", err);
        return c;
}

static char *page_of(const char *resources) {
        char *s = NULL;
        ck_assert_int_ge(asprintf(&s,
                                  "{\"schemas\":[\"urn:ietf:params:scim:api:messages:2.0:ListResponse\"],"
                                  "\"totalResults\":1000,\"startIndex\":1,\"itemsPerPage\":100,"
                                  "\"Resources\":[%s]}",
                                  resources),
                         0);
        return s;
}

static char *user(const char *name, const char *uid, const char *extra) {
        char *s = NULL;
        ck_assert_int_ge(asprintf(&s,
                                  "{\"userName\":\"ignored@example.com\",\"" CW "\":{"
                                  "\"sunkPosixUsername\":%s,\"sunkPosixUserId\":%s%s}}",
                                  name, uid, extra ?: ""),
                         0);
        return s;
}

/* @n resources (malloc'ed, freed here) joined with commas. */
static char *join_free(size_t n, ...) {
        char *s = strdup(""), *t;
        va_list ap;

        va_start(ap, n);
        for (size_t i = 0; i < n; i++) {
                char *r = va_arg(ap, char *);

                ck_assert_int_ge(asprintf(&t, "%s%s%s", s, i ? "," : "", r), 0);
                free(s);
                free(r);
                s = t;
        }
        va_end(ap);
        return s;
}

/* Files the next run() loads: the node's own accounts, the published maps. */
static const char *local_passwd, *local_group, *published_passwd, *published_group;

/* A temporary directory for one test's files, removed by tmp_dir_done(). */
typedef struct TmpDir {
        char path[64];
        char files[4][96];
        size_t n;
} TmpDir;

static void tmp_dir_init(TmpDir *d) {
        *d = (TmpDir){ .path = "/tmp/test-scim-map-XXXXXX" };
        ck_assert_msg(mkdtemp(d->path), "mkdtemp: %m");
}

static void tmp_dir_done(TmpDir *d) {
        _cleanup_free_ char *cmd = NULL;

        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", d->path), 0);
        ck_assert_int_eq(system(cmd), 0);
}

/* @d/@name with @text; the path lives as long as @d. */
static const char *tmp_file(TmpDir *d, const char *name, const char *text) {
        char *path = d->files[d->n++];
        FILE *f;

        ck_assert_uint_le(d->n, ELEMENTSOF(d->files));
        ck_assert_uint_lt(strlen(d->path) + 1 + strlen(name), sizeof(d->files[0]));
        stpcpy(stpcpy(stpcpy(path, d->path), "/"), name);
        f = fopen(path, "we");
        ck_assert_msg(f, "%s: %m", path);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
        return path;
}

/* Maps one users page (and optionally a groups page) with config @c. */
static void run(NsscacheConf *c, const char *users, const char *groups, NssMaps *maps, MapRejects *rej) {
        ScimCollect col = {};
        MapSink sink = scim_collect_sink(&col);
        _cleanup_(mapper_freep) Mapper *m = NULL;
        _cleanup_free_ char *err = NULL;
        ScimPage p = { 0 };

        ck_assert_int_eq(mapper_new(c, &sink, &m), 0);
        ck_assert_int_eq(mapper_load_local(m, local_passwd, local_group), 0);
        ck_assert_int_eq(mapper_load_published(m, published_passwd, published_group), 0);
        if (users) {
                _cleanup_free_ char *b = page_of(users);
                ck_assert_msg(scim_page_parse(b, strlen(b), 0, &p, &err) == 0, "%s", err);
                ck_assert_int_eq(scim_map_add_users(m, p.resources), 0);
                scim_page_done(&p);
        }
        if (groups) {
                _cleanup_free_ char *b = page_of(groups);
                ck_assert_msg(scim_page_parse(b, strlen(b), 0, &p, &err) == 0, "%s", err);
                ck_assert_int_eq(scim_map_add_groups(m, p.resources), 0);
                scim_page_done(&p);
        }
        ck_assert_int_eq(mapper_finish(m), 0);
        scim_collect_take(&col, maps);
        *rej = *mapper_rejects(m);
        /* records are owned by the mapper; keep counts only */
        rej->records = NULL;
        rej->n_records = 0;
}

START_TEST(test_seed_layout) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c =
                conf("[DEFAULT]\nscim_override_home_directory=/mnt/home/%%u\n");
        NssMaps maps = { 0 };
        MapRejects rej;
        _cleanup_free_ char *u1 =
                user("\"alice\"", "5001",
                     ",\"sunkPosixGroupId\":\"6000\",\"sunkLoginShell\":\"/bin/zsh\","
                     "\"sunkPreferredHomeDirectory\":\"/home/alice\","
                     "\"sunkSshKeys\":[\"ssh-ed25519 AAAAC3 alice@x\",\"  \",\" ssh-rsa AAAAB3 a2 \\n\"]");
        _cleanup_free_ char *u2 = user("\"bob\"", "\"5002\"", NULL);
        _cleanup_free_ char *users = NULL;

        ck_assert_int_ge(asprintf(&users, "%s,%s", u1, u2), 0);
        run(c, users,
            "{\"displayName\":\"Research "
            "Team\",\"sunkPosixGroupName\":\"research\",\"sunkPosixGroupId\":6000,"
            "\"members\":[{\"value\":\"1\",\"sunkPosixUsername\":\"alice\"},{\"sunkPosixUsername\":\"bob\"},"
            "{\"sunkPosixUsername\":\"alice\"}]}",
            &maps, &rej);
        ck_assert_int_eq(rej.total, 0);
        ck_assert_int_eq(maps.n_passwd, 2);
        ck_assert_str_eq(maps.passwd[0].name, "alice");
        ck_assert_int_eq(maps.passwd[0].uid, 5001);
        ck_assert_int_eq(maps.passwd[0].gid, 6000);
        ck_assert_str_eq(maps.passwd[0].dir, "/mnt/home/alice");
        ck_assert_str_eq(maps.passwd[0].shell, "/bin/zsh");
        ck_assert_str_eq(maps.passwd[0].passwd, "x");
        ck_assert_int_eq(maps.passwd[1].uid, 5002);
        ck_assert_int_eq(maps.passwd[1].gid, 5002);
        ck_assert_str_eq(maps.passwd[1].shell, "/bin/bash");
        ck_assert_int_eq(maps.n_shadow, 2);
        ck_assert_str_eq(maps.shadow[1].name, "bob");
        ck_assert_str_eq(maps.shadow[1].passwd, "*");
        ck_assert_int_eq(maps.shadow[1].max, -1);
        ck_assert_int_eq(maps.n_sshkey, 2);
        ck_assert_str_eq(maps.sshkey[0].keys[0], "ssh-ed25519 AAAAC3 alice@x");
        ck_assert_str_eq(maps.sshkey[0].keys[1], "ssh-rsa AAAAB3 a2");
        ck_assert_ptr_null(maps.sshkey[0].keys[2]);
        /* bob has no keys: an entry all the same, as nsscache makes one */
        ck_assert_str_eq(maps.sshkey[1].name, "bob");
        ck_assert_ptr_null(maps.sshkey[1].keys[0]);
        ck_assert_int_eq(maps.n_group, 1);
        ck_assert_str_eq(maps.group[0].name, "research");
        ck_assert_int_eq(maps.group[0].gid, 6000);
        ck_assert_str_eq(maps.group[0].members[0], "alice");
        ck_assert_str_eq(maps.group[0].members[1], "bob");
        ck_assert_ptr_null(maps.group[0].members[2]);
        nss_maps_done(&maps);
}
END_TEST

START_TEST(test_home_fallback_and_gecos) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = conf(NULL);
        NssMaps maps = { 0 };
        MapRejects rej;
        _cleanup_free_ char *u1 = NULL, *u2 = NULL, *users = NULL;

        u1 = user("\"carol\"", "5003",
                  ",\"sunkPreferredHomeDirectory\":\"/home/carol\"}"
                  ",\"name\":{\"formatted\":\"Carol: Doe, Jr.\\n\"},\"x\":{\"y\":1");
        u2 = user("\"dave\"", "5004", "},\"name\":{\"givenName\":\"Dave\",\"familyName\":\"Roe\"},\"x\":{");
        ck_assert_int_ge(asprintf(&users, "%s,%s", u1, u2), 0);
        run(c, users, NULL, &maps, &rej);
        ck_assert_int_eq(rej.total, 0);
        ck_assert_int_eq(maps.n_passwd, 2);
        ck_assert_str_eq(maps.passwd[0].dir, "/home/carol");
        ck_assert_str_eq(maps.passwd[0].gecos, "Carol  Doe  Jr. ");
        ck_assert_str_eq(maps.passwd[1].dir, "/home/dave");
        ck_assert_str_eq(maps.passwd[1].gecos, "Dave Roe");
        nss_maps_done(&maps);
}
END_TEST

static const struct {
        const char *resource;
        MapRejectReason reason;
} user_rejects[] = {
        { "42", MAP_REJECT_NOT_OBJECT },
        { "[]", MAP_REJECT_NOT_OBJECT },
        { "{\"" CW "\":{\"sunkPosixUserId\":5000}}", MAP_REJECT_NO_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":null,\"sunkPosixUserId\":5000}}", MAP_REJECT_NO_NAME },
        { "{\"" CW "\":\"flat\"}", MAP_REJECT_NO_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":7,\"sunkPosixUserId\":5000}}", MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"-rf\",\"sunkPosixUserId\":5000}}", MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"a:b\",\"sunkPosixUserId\":5000}}", MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"a b\",\"sunkPosixUserId\":5000}}", MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"a\\nb\",\"sunkPosixUserId\":5000}}", MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"a\\u0000b\",\"sunkPosixUserId\":5000}}",
          MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"\",\"sunkPosixUserId\":5000}}", MAP_REJECT_BAD_NAME },
        { "{\"" CW
          "\":{\"sunkPosixUsername\":\"abcdefghijklmnopqrstuvwxyz0123456\",\"sunkPosixUserId\":5000}}",
          MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"j\\u00f6rg\",\"sunkPosixUserId\":5000}}",
          MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\".\",\"sunkPosixUserId\":5000}}", MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"..\",\"sunkPosixUserId\":5000}}", MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"...\",\"sunkPosixUserId\":5000}}", MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"5000\",\"sunkPosixUserId\":5000}}", MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"a/b\",\"sunkPosixUserId\":5000}}", MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"a\xff"
          "b\",\"sunkPosixUserId\":5000}}",
          MAP_REJECT_BAD_NAME },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"root\",\"sunkPosixUserId\":5000}}",
          MAP_REJECT_LOCAL_ACCOUNT },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"sshd\",\"sunkPosixUserId\":5000}}",
          MAP_REJECT_LOCAL_ACCOUNT },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"daemon\",\"sunkPosixUserId\":5000}}",
          MAP_REJECT_LOCAL_ACCOUNT },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"systemd-network\",\"sunkPosixUserId\":5000}}",
          MAP_REJECT_LOCAL_ACCOUNT },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"_apt\",\"sunkPosixUserId\":5000}}",
          MAP_REJECT_LOCAL_ACCOUNT },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"docker\",\"sunkPosixUserId\":5000}}",
          MAP_REJECT_LOCAL_ACCOUNT },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":65534}}", MAP_REJECT_LOCAL_ACCOUNT },
        { USER_5000 "\"sunkPosixGroupId\":65534}}", MAP_REJECT_LOCAL_ACCOUNT },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\"}}", MAP_REJECT_NO_ID },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":\"12a\"}}", MAP_REJECT_BAD_ID },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":\"-5000\"}}", MAP_REJECT_BAD_ID },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":\"+5000\"}}", MAP_REJECT_BAD_ID },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":\" 5000\"}}", MAP_REJECT_BAD_ID },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":5000.0}}", MAP_REJECT_BAD_ID },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":true}}", MAP_REJECT_BAD_ID },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":[5000]}}", MAP_REJECT_BAD_ID },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":\"\"}}", MAP_REJECT_BAD_ID },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":0}}", MAP_REJECT_ID_RANGE },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":\"0\"}}", MAP_REJECT_ID_RANGE },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":-1}}", MAP_REJECT_ID_RANGE },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":999}}", MAP_REJECT_ID_RANGE },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":2147483648}}", MAP_REJECT_ID_RANGE },
        { "{\"" CW "\":{\"sunkPosixUsername\":\"u\",\"sunkPosixUserId\":99999999999999999999999}}",
          MAP_REJECT_ID_RANGE },
        { USER_5000 "\"sunkPosixGroupId\":0}}", MAP_REJECT_ID_RANGE },
        { USER_5000 "\"sunkPosixGroupId\":\"x\"}}", MAP_REJECT_BAD_ID },
        { USER_5000 "\"sunkPreferredHomeDirectory\":\"home/u\"}}", MAP_REJECT_BAD_HOME },
        { USER_5000 "\"sunkPreferredHomeDirectory\":\"/home/../root\"}}", MAP_REJECT_BAD_HOME },
        { USER_5000 "\"sunkPreferredHomeDirectory\":\"/home/u:x\"}}", MAP_REJECT_BAD_HOME },
        { USER_5000 "\"sunkPreferredHomeDirectory\":\"/home/u\\n\"}}", MAP_REJECT_BAD_HOME },
        { USER_5000 "\"sunkPreferredHomeDirectory\":{\"a\":1}}}", MAP_REJECT_BAD_HOME },
        { USER_5000 "\"sunkLoginShell\":\"bash\"}}", MAP_REJECT_BAD_SHELL },
        { USER_5000 "\"sunkLoginShell\":\"/bin/sh,x\"}}", MAP_REJECT_BAD_SHELL },
        { USER_5000 "\"sunkLoginShell\":5}}", MAP_REJECT_BAD_SHELL },
        /* a path is used as it is: bytes that are not UTF-8 are refused, not repaired */
        { USER_5000 "\"sunkPreferredHomeDirectory\":\"/home/\xe9\"}}", MAP_REJECT_BAD_HOME },
        { USER_5000 "\"sunkLoginShell\":\"/bin/\xc0\xafsh\"}}", MAP_REJECT_BAD_SHELL },
        { USER_5000 "\"sunkLoginShell\":[\"/bin/sh\"]}}", MAP_REJECT_BAD_SHELL },
};

START_TEST(test_user_reject) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = conf(NULL);
        NssMaps maps = { 0 };
        MapRejects rej;

        run(c, user_rejects[_i].resource, NULL, &maps, &rej);
        ck_assert_msg(rej.count[user_rejects[_i].reason] == 1 && rej.total == 1,
                      "case %d: want %s, got total %" PRIu64, _i,
                      map_reject_reason_to_string(user_rejects[_i].reason), rej.total);
        ck_assert_int_eq(maps.n_passwd + maps.n_shadow + maps.n_sshkey, 0);
        nss_maps_done(&maps);
}
END_TEST

static const struct {
        const char *resource;
        MapRejectReason reason;
        size_t members; /* of the group when it is published anyway */
} group_rejects[] = {
        { "7", MAP_REJECT_NOT_OBJECT, 0 },
        { "{\"sunkPosixGroupName\":7,\"sunkPosixGroupId\":7000}", MAP_REJECT_BAD_NAME, 0 },
        { "{\"sunkPosixGroupName\":[\"g\"],\"sunkPosixGroupId\":7000}", MAP_REJECT_BAD_NAME, 0 },
        { "{\"sunkPosixGroupName\":\"g\\u0000x\",\"sunkPosixGroupId\":7000}", MAP_REJECT_BAD_NAME, 0 },
        { "{\"sunkPosixGroupName\":\"g\\nx\",\"sunkPosixGroupId\":7000}", MAP_REJECT_BAD_NAME, 0 },
        { "{\"sunkPosixGroupName\":\"..\",\"sunkPosixGroupId\":7000}", MAP_REJECT_BAD_NAME, 0 },
        { "{\"sunkPosixGroupName\":\"g\xe9\",\"sunkPosixGroupId\":7000}", MAP_REJECT_BAD_NAME, 0 },
        { "{\"sunkPosixGroupName\":\"g\",\"sunkPosixGroupId\":{}}", MAP_REJECT_BAD_ID, 0 },
        { "{\"sunkPosixGroupName\":\"g\",\"sunkPosixGroupId\":1e9}", MAP_REJECT_BAD_ID, 0 },
        { "{\"sunkPosixGroupName\":\"g\",\"sunkPosixGroupId\":65535}", MAP_REJECT_LOCAL_ACCOUNT, 0 },
        { "{\"sunkPosixGroupName\":\"systemd-journal\",\"sunkPosixGroupId\":7000}", MAP_REJECT_LOCAL_ACCOUNT,
          0 },
        { "{\"sunkPosixGroupName\":\"docker\",\"sunkPosixGroupId\":7000}", MAP_REJECT_LOCAL_ACCOUNT, 0 },
        /* a bad member costs that member only */
        { "{\"sunkPosixGroupName\":\"g\",\"sunkPosixGroupId\":7000,\"members\":\"ok\"}",
          MAP_REJECT_BAD_MEMBER, 0 },
        { "{\"sunkPosixGroupName\":\"g\",\"sunkPosixGroupId\":7000,\"members\":[{\"sunkPosixUsername\":"
          "\"ok\"},"
          "{\"sunkPosixUsername\":\"n\\u0000ul\"}]}",
          MAP_REJECT_BAD_MEMBER, 1 },
        { "{\"sunkPosixGroupName\":\"g\",\"sunkPosixGroupId\":7000,\"members\":[{\"sunkPosixUsername\":"
          "\"ok\"},"
          "{\"sunkPosixUsername\":[\"x\"]}]}",
          MAP_REJECT_BAD_MEMBER, 1 },
        { "{\"sunkPosixGroupName\":\"g\",\"sunkPosixGroupId\":7000,\"members\":[{\"sunkPosixUsername\":"
          "\"ok\"},"
          "{\"sunkPosixUsername\":\"a,b\"}]}",
          MAP_REJECT_BAD_MEMBER, 1 },
        { "{\"sunkPosixGroupName\":\"g\",\"sunkPosixGroupId\":7000,\"members\":[{\"sunkPosixUsername\":"
          "\"ok\"},"
          "{\"sunkPosixUsername\":\"_apt\"}]}",
          MAP_REJECT_LOCAL_ACCOUNT, 1 },
};

START_TEST(test_group_reject) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = conf(NULL);
        NssMaps maps = { 0 };
        MapRejects rej;

        run(c, NULL, group_rejects[_i].resource, &maps, &rej);
        ck_assert_msg(rej.count[group_rejects[_i].reason] == 1 && rej.total == 1,
                      "case %d: want %s, got total %" PRIu64, _i,
                      map_reject_reason_to_string(group_rejects[_i].reason), rej.total);
        if (group_rejects[_i].reason == MAP_REJECT_BAD_MEMBER || group_rejects[_i].members > 0) {
                ck_assert_int_eq(maps.n_group, 1);
                ck_assert_uint_eq(strv_length(maps.group[0].members), group_rejects[_i].members);
        } else
                ck_assert_int_eq(maps.n_group, 0);
        nss_maps_done(&maps);
}
END_TEST

START_TEST(test_duplicates) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = conf(NULL);
        NssMaps maps = { 0 };
        MapRejects rej;
        _cleanup_free_ char *a = user("\"a\"", "5000", ",\"sunkSshKeys\":\"ssh-ed25519 AAAA a\"");
        _cleanup_free_ char *b = user("\"a\"", "5001", ",\"sunkSshKeys\":\"ssh-ed25519 AAAA evil\"");
        _cleanup_free_ char *d = user("\"d\"", "5000", NULL);
        _cleanup_free_ char *users = NULL;

        ck_assert_int_ge(asprintf(&users, "%s,%s,%s", a, b, d), 0);
        run(c, users,
            "{\"sunkPosixGroupName\":\"g\",\"sunkPosixGroupId\":7000},"
            "{\"sunkPosixGroupName\":\"g\",\"sunkPosixGroupId\":7001},"
            "{\"sunkPosixGroupName\":\"h\",\"sunkPosixGroupId\":7000},"
            "{\"sunkPosixGroupName\":\"i\",\"sunkPosixGroupId\":7002,\"members\":"
            "[{\"sunkPosixUsername\":\"ok\"},{\"sunkPosixUsername\":\"bad:name\"},\"str\",7,{\"other\":1}]},"
            "{\"sunkPosixGroupName\":\"j\",\"sunkPosixGroupId\":999},"
            "{\"sunkPosixGroupName\":\"k k\",\"sunkPosixGroupId\":7005},"
            "{\"sunkPosixGroupId\":7006},"
            "{\"sunkPosixGroupName\":\"l\"},"
            "{\"sunkPosixGroupName\":\"m\",\"sunkPosixGroupId\":7007,\"members\":{\"x\":1}}",
            &maps, &rej);
        /* Nothing is published: neither "a" is the incumbent, so both lose the
         * name, and "d" claims the uid of the first "a". */
        ck_assert_int_eq(maps.n_passwd, 0);
        ck_assert_int_eq(maps.n_shadow, 0);
        ck_assert_int_eq(maps.n_sshkey, 0);
        ck_assert_int_eq(rej.count[MAP_REJECT_DUP_NAME], 4);
        ck_assert_int_eq(rej.count[MAP_REJECT_DUP_ID], 2);
        ck_assert_int_eq(rej.count[MAP_REJECT_BAD_MEMBER], 5);
        ck_assert_int_eq(rej.count[MAP_REJECT_ID_RANGE], 1);
        ck_assert_int_eq(rej.count[MAP_REJECT_BAD_NAME], 1);
        ck_assert_int_eq(rej.count[MAP_REJECT_NO_NAME], 1);
        ck_assert_int_eq(rej.count[MAP_REJECT_NO_ID], 1);
        ck_assert_int_eq(maps.n_group, 2);
        ck_assert_str_eq(maps.group[0].name, "i");
        ck_assert_str_eq(maps.group[0].members[0], "ok");
        ck_assert_ptr_null(maps.group[0].members[1]);
        ck_assert_str_eq(maps.group[1].name, "m");
        ck_assert_ptr_null(maps.group[1].members[0]);
        nss_maps_done(&maps);
}
END_TEST

START_TEST(test_sshkeys_and_mismatch) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL, *t = NULL, *users = NULL, *big = NULL, *u = NULL;
        NssMaps maps = { 0 };
        MapRejects rej;

        /* sshkey names users through userName: it differs for "x" */
        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        ck_assert_int_ge(asprintf(&t, "%s[DEFAULT]\n", conf_text), 0);
        ck_assert_int_eq(nsscache_conf_parse_ini(c, conf_text, strlen(conf_text), "t", &err), 0);
        free(c->map[NSS_MAP_SSHKEY].path_username);
        c->map[NSS_MAP_SSHKEY].path_username = strdup("userName");
        ck_assert_int_eq(nsscache_conf_finalize(c, &err), 0);

        big = malloc(MAP_SSHKEY_MAX + 16);
        memset(big, 'A', MAP_SSHKEY_MAX + 8);
        big[MAP_SSHKEY_MAX + 8] = 0;
        u = user("\"y\"", "5001", "},\"userName\":\"y\",\"x\":{\"sunkSshKeys\":1");
        ck_assert_int_ge(asprintf(&users,
                                  "{\"userName\":\"root\",\"" CW "\":{\"sunkPosixUsername\":\"x\","
                                  "\"sunkPosixUserId\":5000,\"sunkSshKeys\":[\"ssh-ed25519 AAAA\"]}},"
                                  "{\"userName\":\"z\",\"" CW "\":{\"sunkPosixUsername\":\"z\","
                                  "\"sunkPosixUserId\":5002,\"sunkSshKeys\":[\"ok 1\",\"bad,comma\","
                                  "\"bad\\u0001ctl\",7,\"%s\",\"ok 2\"]}},%s",
                                  big, u),
                         0);
        run(c, users, NULL, &maps, &rej);
        ck_assert_int_eq(maps.n_passwd, 3);
        ck_assert_int_eq(rej.count[MAP_REJECT_NAME_MISMATCH], 1);
        ck_assert_int_eq(rej.count[MAP_REJECT_BAD_SSHKEY], 3);
        ck_assert_int_eq(maps.n_sshkey, 2);
        ck_assert_str_eq(maps.sshkey[0].name, "z");
        ck_assert_str_eq(maps.sshkey[0].keys[0], "ok 1");
        ck_assert_str_eq(maps.sshkey[0].keys[1], "bad,comma"); /* commas are fine in a key line */
        ck_assert_str_eq(maps.sshkey[0].keys[2], "ok 2");
        ck_assert_ptr_null(maps.sshkey[0].keys[3]);
        ck_assert_str_eq(maps.sshkey[1].name, "y");
        ck_assert_ptr_null(maps.sshkey[1].keys[0]);
        nss_maps_done(&maps);
}
END_TEST

START_TEST(test_page_parse) {
        static const struct {
                const char *body;
                const char *error;
        } bad[] = {
                { "", "truncated" },
                { "{\"totalResults\":1,\"Resources\":[{\"a\":", "truncated" },
                { "garbage", "invalid JSON" },
                { "[1,2]", "not a JSON object" },
                { "{}", "totalResults" },
                { "{\"totalResults\":\"5\"}", "totalResults" },
                { "{\"totalResults\":-1}", "totalResults" },
                { "{\"totalResults\":1,\"Resources\":{}}", "Resources is not an array" },
                { "{\"totalResults\":1} x", "invalid JSON" },
                { "{\"totalResults\":1,}", "invalid JSON" },
        };
        _cleanup_free_ char *err = NULL, *deep = NULL;
        ScimPage p = { 0 };
        size_t depth = 10000;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_assert_msg(scim_page_parse(bad[i].body, strlen(bad[i].body), 0, &p, &err) == -EBADMSG,
                              "case %zu accepted", i);
                ck_assert_msg(strstr(err, bad[i].error), "case %zu: %s", i, err);
        }

        deep = malloc(2 * depth + 64);
        strcpy(deep, "{\"totalResults\":1,\"Resources\":");
        for (size_t i = 0; i < depth; i++)
                strcat(deep + strlen(deep) - 0, "[");
        ck_assert_int_eq(scim_page_parse(deep, strlen(deep), 0, &p, &err), -EBADMSG);
        ck_assert_msg(strstr(err, "invalid JSON"), "%s", err);

        ck_assert_int_eq(scim_page_parse("{\"totalResults\":0} \r\n", 21, 0, &p, &err), 0);
        ck_assert_ptr_null(p.resources);
        ck_assert_int_eq(p.start_index, -1);
        scim_page_done(&p);
        {
                const char *b = "{\"totalResults\":3,\"startIndex\":2,\"itemsPerPage\":1,"
                                "\"Resources\":[{}]}\n";
                ck_assert_int_eq(scim_page_parse(b, strlen(b), 0, &p, &err), 0);
        }
        ck_assert_int_eq(p.total_results, 3);
        ck_assert_int_eq(p.start_index, 2);
        ck_assert_int_eq(p.items_per_page, 1);
        ck_assert_int_eq(p.n_resources, 1);
        scim_page_done(&p);
}
END_TEST

START_TEST(test_huge_strings) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = conf(NULL);
        _cleanup_free_ char *name = NULL, *home = NULL, *users = NULL, *u1 = NULL, *u2 = NULL;
        size_t n = 4 * 1024 * 1024;
        NssMaps maps = { 0 };
        MapRejects rej;

        name = malloc(n + 3);
        name[0] = '"';
        memset(name + 1, 'a', n);
        strcpy(name + n + 1, "\"");
        home = malloc(n + 64);
        strcpy(home, ",\"sunkPreferredHomeDirectory\":\"/");
        memset(home + strlen(home), 'h', n);
        strcpy(home + strlen(",\"sunkPreferredHomeDirectory\":\"/") + n, "\"");
        u1 = user(name, "5000", NULL);
        u2 = user("\"ok\"", "5001", home);
        ck_assert_int_ge(asprintf(&users, "%s,%s", u1, u2), 0);
        run(c, users, NULL, &maps, &rej);
        ck_assert_int_eq(rej.count[MAP_REJECT_BAD_NAME], 1);
        ck_assert_int_eq(rej.count[MAP_REJECT_BAD_HOME], 1);
        ck_assert_int_eq(maps.n_passwd, 0);
        nss_maps_done(&maps);
}
END_TEST

START_TEST(test_reject_records_capped) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = conf(NULL);
        ScimCollect col = {};
        MapSink sink = scim_collect_sink(&col);
        _cleanup_(mapper_freep) Mapper *m = NULL;
        json_object *arr = json_object_new_array();

        for (int i = 0; i < 1000; i++)
                json_object_array_add(arr, json_object_new_int(i));
        ck_assert_int_eq(mapper_new(c, &sink, &m), 0);
        ck_assert_int_eq(scim_map_add_users(m, arr), 0);
        ck_assert_int_eq(mapper_rejects(m)->count[MAP_REJECT_NOT_OBJECT], 1000);
        ck_assert_int_eq(mapper_rejects(m)->n_records, MAP_REJECT_RECORDS_MAX);
        json_object_put(arr);
        for (int r = 0; r < _MAP_REJECT_MAX; r++)
                ck_assert_ptr_nonnull(map_reject_reason_to_string((MapRejectReason) r));
        ck_assert_ptr_null(map_reject_reason_to_string(_MAP_REJECT_MAX));
}
END_TEST

/* Maps @users and @groups with a collecting mapper and a rendering one;
 * with @dir, the rendering one spills each map to a file there, writing
 * after every entry. */
static void map_both(NsscacheConf *c, const char *users, const char *groups, const char *dir, NssMaps *maps,
                     CacheFormatted text[static _NSS_MAP_MAX]) {
        ScimCollect col = {};
        MapSink collect = scim_collect_sink(&col), render = map_sink_formatted(text);
        _cleanup_(mapper_freep) Mapper *a = NULL, *b = NULL;
        _cleanup_free_ char *err = NULL, *ub = page_of(users), *gb = page_of(groups);
        ScimPage p = { 0 };

        for (NssMapType t = 0; t < USER_MAPS; t++) {
                char *path;
                int fd;

                cache_formatted_init(text + t, t);
                if (!dir)
                        continue;
                ck_assert_int_ge(asprintf(&path, "%s/map.XXXXXX", dir), 0);
                fd = mkstemp(path);
                ck_assert_int_ge(fd, 0);
                cache_formatted_spill(text + t, fd, path);
                text[t].chunk = 1;
        }
        ck_assert_int_eq(mapper_new(c, &collect, &a), 0);
        ck_assert_int_eq(mapper_new(c, &render, &b), 0);
        ck_assert_msg(scim_page_parse(ub, strlen(ub), 0, &p, &err) == 0, "%s", err);
        ck_assert_int_eq(scim_map_add_users(a, p.resources), 0);
        ck_assert_int_eq(scim_map_add_users(b, p.resources), 0);
        scim_page_done(&p);
        ck_assert_msg(scim_page_parse(gb, strlen(gb), 0, &p, &err) == 0, "%s", err);
        ck_assert_int_eq(scim_map_add_groups(a, p.resources), 0);
        ck_assert_int_eq(scim_map_add_groups(b, p.resources), 0);
        scim_page_done(&p);
        ck_assert_int_eq(mapper_finish(a), 0);
        ck_assert_int_eq(mapper_finish(b), 0);
        /* the same rejects, with the names displaced entries had in either sink */
        ck_assert_int_eq(mapper_rejects(a)->total, mapper_rejects(b)->total);
        ck_assert_uint_eq(mapper_rejects(a)->n_records, mapper_rejects(b)->n_records);
        for (size_t i = 0; i < mapper_rejects(a)->n_records; i++) {
                const MapReject *x = mapper_rejects(a)->records + i, *y = mapper_rejects(b)->records + i;

                ck_assert_int_eq(x->reason, y->reason);
                ck_assert_str_eq(x->name ?: "(null)", y->name ?: "(null)");
        }
        scim_collect_take(&col, maps);
}

/* All of @f's bytes, from its file and its buffer. */
static char *formatted_bytes(CacheFormatted *f, size_t *ret_len) {
        size_t len = (size_t) cache_formatted_size(f);
        char *buf = malloc(len + 1);

        ck_assert_ptr_nonnull(buf);
        ck_assert_int_eq(cache_formatted_read(f, 0, buf, len), (ssize_t) len);
        if (f->fd >= 0) {
                ck_assert_int_eq(cache_formatted_flush(f), 0);
                ck_assert_uint_eq(f->buf.len, 0);
                ck_assert_int_eq(pread(f->fd, buf, len + 1, 0), (ssize_t) len); /* and nothing past it */
        }
        *ret_len = len;
        return buf;
}

/* Rendering as entries are accepted gives what rendering the collected maps
 * gives: the same bytes, lines and, for an entry that cannot be rendered,
 * the same error. */
START_TEST(test_formatted_matches_maps) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = conf(NULL);
        static const char *const keys[] = {
                "[\"ssh-ed25519 AAAA it's\",\"ssh-rsa AAAA \\\"q\\\" \\\\ \\u00e9\\u200b\"]",
                "[\"ssh-ed25519 AAAA bad \xff\"]",
        };

        _cleanup_(tmp_dir_done) TmpDir d;

        tmp_dir_init(&d);
        for (size_t k = 0; k < 2 * ELEMENTSOF(keys); k++) {
                _cleanup_free_ char *extra = NULL, *u0 = NULL, *u1 = NULL, *u2 = NULL, *u3 = NULL,
                                    *users = NULL;
                CacheFormatted text[_NSS_MAP_MAX];
                NssMaps maps = { 0 };

                ck_assert_int_ge(asprintf(&extra, ",\"sunkSshKeys\":%s,\"sunkLoginShell\":\"/bin/zsh\"",
                                          keys[k % ELEMENTSOF(keys)]),
                                 0);
                u0 = user("\"dave\"", "5000", extra);
                u1 = user("\"alice\"", "5001", extra);
                u2 = user("\"alice\"", "5002", NULL);
                u3 = user("\"b\\u00f6b\"", "5003", NULL);
                ck_assert_int_ge(asprintf(&users,
                                          "%s,%s,%s,%s,{\"userName\":\"carol\",\"name\":{\"givenName\":"
                                          "\"Car\\u00f6l\",\"familyName\":\"X:Y\"},\"" CW
                                          "\":{\"sunkPosixUsername\":"
                                          "\"carol\",\"sunkPosixUserId\":5004}}",
                                          u0, u1, u2, u3),
                                 0);
                map_both(c, users,
                         "{\"sunkPosixGroupName\":\"g\",\"sunkPosixGroupId\":7000,\"members\":"
                         "[{\"sunkPosixUsername\":\"alice\"},{\"sunkPosixUsername\":\"carol\"},"
                         "{\"sunkPosixUsername\":\"alice\"}]},{\"sunkPosixGroupName\":\"h\","
                         "\"sunkPosixGroupId\":7001}",
                         k < ELEMENTSOF(keys) ? NULL : d.path, &maps, text);
                for (NssMapType t = 0; t < USER_MAPS; t++) {
                        _cleanup_free_ char *buf = NULL, *err = NULL, *got = NULL;
                        size_t got_len;
                        size_t len = 0, n = 0;
                        int r = cache_format_render(&maps, t, &buf, &len, &n, &err);

                        ck_assert_int_eq(text[t].error, r);
                        if (r < 0) {
                                ck_assert_str_eq(text[t].error_text, err);
                                continue;
                        }
                        ck_assert_uint_eq(text[t].entries, n);
                        got = formatted_bytes(text + t, &got_len);
                        ck_assert_uint_eq(got_len, len);
                        ck_assert_mem_eq(got, buf, len);
                }
                /* a key that is not UTF-8 is dropped alone: the map is still written */
                ck_assert_int_eq(text[NSS_MAP_SSHKEY].error, 0);
                ck_assert_uint_eq(text[NSS_MAP_SSHKEY].entries, 2);
                ck_assert_str_eq(maps.sshkey[0].name, "dave");
                if (k % ELEMENTSOF(keys) == 0)
                        ck_assert_str_eq(maps.sshkey[0].keys[1], "ssh-rsa AAAA \"q\" \\ \u00e9\u200b");
                else
                        ck_assert_ptr_null(maps.sshkey[0].keys[0]);
                ck_assert_uint_eq(text[NSS_MAP_GROUP].entries, 2);
                /* both alices lose (neither is published; their lines are cut out), b\u00f6b is rejected */
                ck_assert_uint_eq(maps.n_passwd, 2);
                ck_assert_str_eq(maps.passwd[0].name, "dave");
                ck_assert_str_eq(maps.passwd[1].name, "carol");
                ck_assert_uint_eq(text[NSS_MAP_PASSWD].entries, 2);
                ck_assert_uint_eq(maps.n_group, 2);
                for (NssMapType t = 0; t < USER_MAPS; t++)
                        cache_formatted_done(text + t);
                nss_maps_done(&maps);
        }
}
END_TEST

/* The node's own accounts: names and ids from its passwd and group files,
 * read when the run starts, are never handed to a SCIM entry; a SCIM group
 * never lists a local account as a member. */
START_TEST(test_local_accounts) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = conf(NULL);
        _cleanup_free_ char *users = NULL;
        NssMaps maps = { 0 };
        MapRejects rej;
        TmpDir d;

        tmp_dir_init(&d);
        local_passwd = tmp_file(&d, "passwd",
                                "# comment\nroot:x:0:0:root:/root:/bin/bash\n"
                                "ubuntu:x:1000:1000::/home/ubuntu:/bin/bash\n"
                                "+nis\nops:x:5100:5100::/home/ops:/bin/sh\nbroken-no-id\n"
                                "a-local-name-longer-than-32-bytes:x:5200:5200::/:/bin/sh\n"
                                "odd:x:12a:1::/:/bin/sh");
        local_group = tmp_file(&d, "group", "root:x:0:\nubuntu:x:1000:\ngpu:x:7000:ops\n");
        users = join_free(8, user("\"x4\"", "5200", NULL), user("\"ubuntu\"", "9000", NULL),
                          user("\"x1\"", "1000", NULL), user("\"ops\"", "9001", NULL),
                          user("\"x2\"", "5100", NULL), user("\"x3\"", "9002", ",\"sunkPosixGroupId\":7000"),
                          user("\"odd\"", "9003", NULL), user("\"fine\"", "9004", NULL));
        run(c, users,
            "{\"sunkPosixGroupName\":\"gpu\",\"sunkPosixGroupId\":7100},"
            "{\"sunkPosixGroupName\":\"g1\",\"sunkPosixGroupId\":7000},"
            "{\"sunkPosixGroupName\":\"sudo\",\"sunkPosixGroupId\":7101},"
            "{\"sunkPosixGroupName\":\"wheel\",\"sunkPosixGroupId\":7102},"
            "{\"sunkPosixGroupName\":\"nogroup\",\"sunkPosixGroupId\":7103},"
            "{\"sunkPosixGroupName\":\"g2\",\"sunkPosixGroupId\":65534},"
            "{\"sunkPosixGroupName\":\"team\",\"sunkPosixGroupId\":7200,\"members\":[{\"sunkPosixUsername\":"
            "\"fine\"},"
            "{\"sunkPosixUsername\":\"root\"},{\"sunkPosixUsername\":\"ops\"},{\"sunkPosixUsername\":"
            "\"sshd\"},"
            "{\"sunkPosixUsername\":\"systemd-timesync\"}]}",
            &maps, &rej);
        local_passwd = local_group = NULL;
        tmp_dir_done(&d);
        /* uid 5200, ubuntu, uid 1000, ops, uid 5100, primary gid 7000, odd; 6 groups; 4 members */
        ck_assert_int_eq(rej.count[MAP_REJECT_LOCAL_ACCOUNT], 7 + 6 + 4);
        ck_assert_int_eq(rej.total, 17);
        ck_assert_int_eq(maps.n_passwd, 1);
        ck_assert_str_eq(maps.passwd[0].name, "fine");
        ck_assert_int_eq(maps.n_shadow, 1);
        ck_assert_int_eq(maps.n_sshkey, 1);
        ck_assert_int_eq(maps.n_group, 1);
        ck_assert_str_eq(maps.group[0].name, "team");
        ck_assert_str_eq(maps.group[0].members[0], "fine");
        ck_assert_ptr_null(maps.group[0].members[1]);
        nss_maps_done(&maps);
}
END_TEST

/* An unreadable local file fails the run rather than publish unchecked entries. */
START_TEST(test_local_unreadable) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = conf(NULL);
        ScimCollect col = {};
        MapSink sink = scim_collect_sink(&col);
        _cleanup_(mapper_freep) Mapper *m = NULL;

        ck_assert_int_eq(mapper_new(c, &sink, &m), 0);
        ck_assert_int_eq(mapper_load_local(m, "/nonexistent/passwd", NULL), 0);
        ck_assert_int_lt(mapper_load_local(m, "/proc/self/mem", NULL), 0);
        ck_assert_int_eq(mapper_load_published(m, "/nonexistent/passwd.cache", ""), 0);
}
END_TEST

/* A newcomer served before the real user cannot take the name, the uid or
 * the keys of an account already published, in either order; of two
 * claimants of which neither is published, neither wins. */
START_TEST(test_takeover) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = conf(NULL);
        _cleanup_free_ char *users = NULL;
        NssMaps maps = { 0 };
        MapRejects rej;
        TmpDir d;

        tmp_dir_init(&d);
        published_passwd = tmp_file(&d, "passwd.cache",
                                    "alice:x:5000:5000::/home/alice:/bin/bash\n"
                                    "bob:x:5001:5001::/home/bob:/bin/bash\n");
        published_group = tmp_file(&d, "group.cache", "research:x:7000:alice\n");
        users = join_free(10, user("\"alice\"", "6666", ",\"sunkSshKeys\":[\"ssh-ed25519 AAAA evil\"]"),
                          user("\"mallory\"", "5001", ",\"sunkSshKeys\":[\"ssh-ed25519 AAAA evil\"]"),
                          user("\"alice\"", "5000", ",\"sunkSshKeys\":[\"ssh-ed25519 AAAA alice\"]"),
                          user("\"bob\"", "5001", ",\"sunkSshKeys\":[\"ssh-ed25519 AAAA bob\"]"),
                          user("\"alice\"", "5000", ",\"sunkSshKeys\":[\"ssh-ed25519 AAAA again\"]"),
                          /* rejected: the uid it brought is free again for frank */
                          user("\"alice\"", "6001", NULL), user("\"frank\"", "6001", NULL),
                          user("\"carol\"", "5002", NULL), user("\"carol\"", "5003", NULL),
                          user("\"dave\"", "5002", NULL));
        run(c, users,
            "{\"sunkPosixGroupName\":\"research\",\"sunkPosixGroupId\":7666,\"members\":[{"
            "\"sunkPosixUsername\":\"mallory\"}]},"
            "{\"sunkPosixGroupName\":\"evil\",\"sunkPosixGroupId\":7000,\"members\":[{\"sunkPosixUsername\":"
            "\"mallory\"}]},"
            "{\"sunkPosixGroupName\":\"research\",\"sunkPosixGroupId\":7000,\"members\":[{"
            "\"sunkPosixUsername\":\"alice\"}]},"
            "{\"sunkPosixGroupName\":\"new\",\"sunkPosixGroupId\":7001},"
            "{\"sunkPosixGroupName\":\"new\",\"sunkPosixGroupId\":7002}",
            &maps, &rej);
        published_passwd = published_group = NULL;
        tmp_dir_done(&d);
        ck_assert_int_eq(maps.n_passwd, 3);
        ck_assert_str_eq(maps.passwd[0].name, "alice");
        ck_assert_int_eq(maps.passwd[0].uid, 5000);
        ck_assert_str_eq(maps.passwd[1].name, "bob");
        ck_assert_int_eq(maps.passwd[1].uid, 5001);
        ck_assert_str_eq(maps.passwd[2].name, "frank");
        ck_assert_int_eq(maps.passwd[2].uid, 6001);
        ck_assert_int_eq(maps.n_shadow, 3);
        ck_assert_int_eq(maps.n_sshkey, 3);
        ck_assert_str_eq(maps.sshkey[0].name, "alice");
        ck_assert_str_eq(maps.sshkey[0].keys[0], "ssh-ed25519 AAAA alice");
        ck_assert_ptr_null(maps.sshkey[0].keys[1]);
        ck_assert_str_eq(maps.sshkey[1].keys[0], "ssh-ed25519 AAAA bob");
        /* alice 6666 and mallory displaced, alice 5000 again and alice 6001, both carols and dave
         * rejected; groups: research 7666 and evil displaced, both "new" rejected */
        ck_assert_int_eq(rej.count[MAP_REJECT_DUP_NAME] + rej.count[MAP_REJECT_DUP_ID], 7 + 4);
        ck_assert_int_eq(maps.n_group, 1);
        ck_assert_str_eq(maps.group[0].name, "research");
        ck_assert_int_eq(maps.group[0].gid, 7000);
        ck_assert_str_eq(maps.group[0].members[0], "alice");
        nss_maps_done(&maps);
}
END_TEST

/* nsscache takes an empty shell or home as missing and falls back (to the
 * enterprise extension, then to the default); a comma in key options is fine. */
START_TEST(test_empty_shell_home) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = conf(NULL);
        _cleanup_free_ char *users = NULL;
        NssMaps maps = { 0 };
        MapRejects rej;

        users = join_free(
                3,
                user("\"a\"", "5000",
                     ",\"sunkLoginShell\":\"\",\"sunkPreferredHomeDirectory\":\"\","
                     "\"sunkSshKeys\":[\"from=\\\"10.0.0.0/8,192.168.0.0/16\\\" ssh-ed25519 AAAA a\"]"),
                user("\"b\"", "5001",
                     ",\"sunkLoginShell\":\"\"},\"urn:ietf:params:scim:schemas:"
                     "extension:enterprise:2.0:User\":{\"loginShell\":\"/bin/zsh\","
                     "\"homeDirectory\":\"/data/b\"},\"x\":{"),
                user("\"c\"", "5002", ",\"sunkPreferredHomeDirectory\":null,\"sunkLoginShell\":null"));
        run(c, users, NULL, &maps, &rej);
        ck_assert_int_eq(rej.total, 0);
        ck_assert_int_eq(maps.n_passwd, 3);
        ck_assert_str_eq(maps.passwd[0].shell, "/bin/bash");
        ck_assert_str_eq(maps.passwd[0].dir, "/home/a");
        ck_assert_str_eq(maps.passwd[1].shell, "/bin/zsh");
        ck_assert_str_eq(maps.passwd[1].dir, "/data/b");
        ck_assert_str_eq(maps.passwd[2].shell, "/bin/bash");
        ck_assert_str_eq(maps.passwd[2].dir, "/home/c");
        ck_assert_str_eq(maps.sshkey[0].keys[0], "from=\"10.0.0.0/8,192.168.0.0/16\" ssh-ed25519 AAAA a");
        nss_maps_done(&maps);
}
END_TEST

/* One record's content costs that record (or that key), never the run:
 * keys of every JSON type, NUL, newline, bytes that are not UTF-8, huge
 * keys; gecos bytes that are not UTF-8 become '?'. */
START_TEST(test_hostile_values) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = conf(NULL);
        _cleanup_free_ char *users = NULL, *big = NULL;
        CacheFormatted text[_NSS_MAP_MAX];
        NssMaps maps = { 0 };

        static const char head[] = ",\"sunkSshKeys\":[\"ok 1\",null,7,true,{},[\"x\"],\"nul\\u0000x\","
                                   "\"nl\\nx\",\"bad \xff\",\"sur \\ud800\",\"";
        size_t h = strlen(head);

        big = malloc(h + MAP_SSHKEY_MAX + 64);
        memcpy(big, head, h);
        memset(big + h, 'K', MAP_SSHKEY_MAX + 1);
        strcpy(big + h + MAP_SSHKEY_MAX + 1, "\",\"ok 2\"]");
        users = join_free(4, user("\"k\"", "5000", big),
                          strdup("{\"name\":{\"formatted\":\"Ren\xe9 \xff\xfe \xc3\xa9t\xc3\"},\"" CW "\":{"
                                 "\"sunkPosixUsername\":\"rene\",\"sunkPosixUserId\":5001}}"),
                          user("\"s\"", "5002", ",\"sunkSshKeys\":\"single ok\""),
                          user("\"t\"", "5003", ",\"sunkSshKeys\":{\"a\":1}"));
        map_both(c, users, "", NULL, &maps, text);
        ck_assert_int_eq(maps.n_passwd, 4);
        ck_assert_str_eq(maps.passwd[1].gecos, "Ren? ?? \xc3\xa9t?");
        ck_assert_str_eq(maps.sshkey[0].keys[0], "ok 1");
        /* json-c decodes a lone surrogate as U+FFFD: valid UTF-8, kept */
        ck_assert_str_eq(maps.sshkey[0].keys[1], "sur \xef\xbf\xbd");
        ck_assert_str_eq(maps.sshkey[0].keys[2], "ok 2");
        ck_assert_ptr_null(maps.sshkey[0].keys[3]);
        ck_assert_ptr_null(maps.sshkey[1].keys[0]);
        ck_assert_str_eq(maps.sshkey[2].keys[0], "single ok");
        ck_assert_ptr_null(maps.sshkey[3].keys[0]);
        for (NssMapType t = 0; t < USER_MAPS; t++) {
                ck_assert_int_eq(text[t].error, 0);
                ck_assert_uint_eq(text[t].entries, t == NSS_MAP_GROUP ? 0 : 4);
                cache_formatted_done(text + t);
        }
        nss_maps_done(&maps);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("scim-map");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_seed_layout);
        tcase_add_test(tc, test_home_fallback_and_gecos);
        tcase_add_loop_test(tc, test_user_reject, 0, sizeof(user_rejects) / sizeof(user_rejects[0]));
        tcase_add_loop_test(tc, test_group_reject, 0, ELEMENTSOF(group_rejects));
        tcase_add_test(tc, test_duplicates);
        tcase_add_test(tc, test_sshkeys_and_mismatch);
        tcase_add_test(tc, test_page_parse);
        tcase_add_test(tc, test_huge_strings);
        tcase_add_test(tc, test_reject_records_capped);
        tcase_add_test(tc, test_formatted_matches_maps);
        tcase_add_test(tc, test_local_accounts);
        tcase_add_test(tc, test_local_unreadable);
        tcase_add_test(tc, test_takeover);
        tcase_add_test(tc, test_empty_shell_home);
        tcase_add_test(tc, test_hostile_values);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
