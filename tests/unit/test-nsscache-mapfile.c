/* The http source's parts without a server: map file lines read as
 * strictly as they are written, their entries validated as SCIM ones,
 * bzip2 bodies, and the nsscache.conf keys of source = http. */
#include <bzlib.h>
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "modules/nsscache/files/http-fetch.h"
#include "modules/nsscache/files/map-file.h"
#include "modules/nsscache/nsscache-conf.h"
#include "modules/nsscache/ldap/ldap-map.h"
#include "modules/nsscache/mapper-internal.h"
#include "modules/nsscache/mapper.h"
#include "tests/lib/scim-collect.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "../lib/check-run.h"

typedef struct Count {
        size_t good, bad;
} Count;

static int count_entry(void *userdata, NssMapType t, const void *entry) {
        ((Count *) userdata)->good++;
        return 0;
}

static int count_bad(void *userdata, NssMapType t, size_t line, const char *name) {
        ((Count *) userdata)->bad++;
        return 0;
}

static const struct {
        NssMapType t;
        const char *line;
        bool good;
} lines[] = {
        { NSS_MAP_PASSWD, "alice:x:2001:2001:Alice A:/home/alice:/bin/bash", true },
        { NSS_MAP_PASSWD, "alice:x:2001:2001::/home/alice:/bin/bash", true },
        { NSS_MAP_PASSWD, "alice:x:02001:2001::/home/alice:/bin/bash", false }, /* leading zero */
        { NSS_MAP_PASSWD, "alice:x:+2001:2001::/home/alice:/bin/bash", false },
        { NSS_MAP_PASSWD, "alice:x:4294967296:2001::/home/alice:/bin/bash", false },
        { NSS_MAP_PASSWD, "alice::2001:2001::/home/alice:/bin/bash", false },     /* no password field */
        { NSS_MAP_PASSWD, "alice:$6$h:2001:2001::/home/alice:/bin/bash", false }, /* a hash in passwd */
        { NSS_MAP_PASSWD, "alice:x:2001:2001::/home/alice", false },              /* six fields */
        { NSS_MAP_PASSWD, "alice:x:2001:2001::/home/alice:/bin/bash:x", false },  /* eight */
        { NSS_MAP_PASSWD, "alice:x:2001:2001::/home/alice:/bin/bash\r",
          true }, /* the mapper refuses the CR */
        { NSS_MAP_PASSWD, "# comment", false },
        { NSS_MAP_PASSWD, "", false },
        { NSS_MAP_SHADOW, "alice:*:::::::", true },
        { NSS_MAP_SHADOW, "alice:$6$salt$hash:19000:0::7:::", false }, /* 0 is written empty */
        { NSS_MAP_SHADOW, "alice:$6$salt$hash:19000:1:99999:7:::", true },
        { NSS_MAP_SHADOW, "alice::::::::", false }, /* empty password */
        { NSS_MAP_SHADOW, "alice:*:-1::::::", false },
        { NSS_MAP_GROUP, "team:x:3001:alice,bob", true },
        { NSS_MAP_GROUP, "team:x:3001:", true },
        { NSS_MAP_GROUP, "team:x:3001:alice,,bob", false },
        { NSS_MAP_GROUP, "team:x:3001:alice,", false },
        { NSS_MAP_GROUP, "team:*:3001:alice", false },
        { NSS_MAP_SSHKEY, "alice:", true },
        { NSS_MAP_SSHKEY, "alice:['ssh-ed25519 AAAA a@b']", true },
        { NSS_MAP_SSHKEY, "alice:['ssh-ed25519 AAAA a@b', 'ssh-rsa BBBB c']", true },
        { NSS_MAP_SSHKEY, "alice:[\"it's\"]", true },
        { NSS_MAP_SSHKEY, "alice:['a\xc3\xa9']", true },           /* printable: as it is */
        { NSS_MAP_SSHKEY, "alice:['a\\xe9']", false },             /* repr() writes it raw */
        { NSS_MAP_SSHKEY, "alice:['a\\x85']", true },              /* not printable: escaped */
        { NSS_MAP_SSHKEY, "alice:[]", false },                     /* written "alice:" */
        { NSS_MAP_SSHKEY, "alice:[\"ssh-ed25519 AAAA\"]", false }, /* repr() quotes with ' */
        { NSS_MAP_SSHKEY, "alice:['a','b']", false },
        { NSS_MAP_SSHKEY, "alice:['a\\x00b']", false },
        { NSS_MAP_SSHKEY, "alice:['a\\ud800']", false },
        { NSS_MAP_SSHKEY, "alice:['a", false },
        { NSS_MAP_SSHKEY, "alice:ssh-ed25519 AAAA", false },
        { NSS_MAP_SSHKEY, "alice:['a'] ", false },
        { NSS_MAP_NETGROUP, "admins (,bob,) (h,alice,example.com) ops", true },
        { NSS_MAP_NETGROUP, "empty", true },
        { NSS_MAP_NETGROUP, "empty ", false },       /* written "empty" */
        { NSS_MAP_NETGROUP, "two  blanks", false },  /* one blank apart */
        { NSS_MAP_NETGROUP, "tab\t(a,b,c)", false }, /* blanks, not tabs */
        { NSS_MAP_NETGROUP, " (a,b,c)", false },     /* no name */
        { NSS_MAP_NETGROUP, "ng (a, b,c)", true },   /* the mapper drops the parts */
};

START_TEST(test_lines) {
        _cleanup_free_ char *text = NULL, *err = NULL;
        Count c = {};
        int r;

        ck_assert_int_ge(asprintf(&text, "%s\n", lines[_i].line), 0);
        r = map_file_parse(lines[_i].t, text, strlen(text), count_entry, count_bad, &c, &err);
        ck_assert_int_eq(r, 0);
        ck_assert_msg(c.good == (lines[_i].good ? 1 : 0) && c.bad == (lines[_i].good ? 0 : 1), "%s: %s",
                      lines[_i].line, lines[_i].good ? "refused" : "accepted");
}
END_TEST

START_TEST(test_nul_and_cut_short) {
        static const char nul[] =
                "alice:x:2001:2001::/home/alice:/bin/bash\nbob:x:2002:2002::/h\0me/bob:/bin/sh\n";
        static const char cut[] =
                "alice:x:2001:2001::/home/alice:/bin/bash\nbob:x:2002:2002::/home/bob:/bin/s";
        _cleanup_free_ char *err = NULL;
        Count c = {};

        ck_assert_int_eq(
                map_file_parse(NSS_MAP_PASSWD, nul, sizeof(nul) - 1, count_entry, count_bad, &c, &err), 0);
        ck_assert_uint_eq(c.good, 1);
        ck_assert_uint_eq(c.bad, 1);
        c = (Count){};
        ck_assert_int_eq(
                map_file_parse(NSS_MAP_PASSWD, cut, sizeof(cut) - 1, count_entry, count_bad, &c, &err),
                -EBADMSG);
        ck_assert_str_eq(err, "passwd: line 2: no newline at the end: the file was cut short");
        ck_assert_uint_eq(c.good + c.bad, 0);
}
END_TEST

/* A million-member group line is parsed in linear time (a quadratic list would not finish). */
START_TEST(test_huge_group) {
        size_t n = 1000000, len;
        char *text = malloc(16 + n * 2 + 2), *p = text;
        Count c = {};

        ck_assert_ptr_nonnull(text);
        p += sprintf(p, "big:x:3001:");
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, i ? ",a" : "a");
        *p++ = '\n';
        len = (size_t) (p - text);
        ck_assert_int_eq(map_file_parse(NSS_MAP_GROUP, text, len, count_entry, count_bad, &c, NULL), 0);
        ck_assert_uint_eq(c.good, 1);
        free(text);
}
END_TEST

/* ---- entries through the mapper ---------------------------------------- */

static NsscacheConf *http_conf(void) {
        static const char text[] =
                "[DEFAULT]\nsource = http\ncache = files\nmaps = passwd, shadow, group, sshkey, netgroup\n"
                "files_dir = /tmp\ntimestamp_dir = /tmp\n"
                "http_passwd_url = http://127.0.0.1/passwd\nhttp_shadow_url = http://127.0.0.1/shadow\n"
                "http_group_url = http://127.0.0.1/group\nhttp_sshkey_url = http://127.0.0.1/sshkey\n"
                "http_netgroup_url = http://127.0.0.1/netgroup\n";
        NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL;

        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        ck_assert_int_eq(nsscache_conf_parse_ini(c, text, strlen(text), "test.conf", &err), 0);
        ck_assert_msg(nsscache_conf_finalize(c, &err) == 0, "%s", err);
        return c;
}

typedef struct Mapped {
        Mapper *m;
} Mapped;

static int map_entry(void *userdata, NssMapType t, const void *entry) {
        return mapper_add_entry(userdata, t, entry);
}

static int map_bad(void *userdata, NssMapType t, size_t line, const char *name) {
        return mapper_reject_line(userdata, t, name);
}

static void map_text(Mapper *m, NssMapType t, const char *text) {
        ck_assert_int_eq(map_file_parse(t, text, strlen(text), map_entry, map_bad, m, NULL), 0);
}

START_TEST(test_mapper) {
        NsscacheConf *c = http_conf();
        ScimCollect col = {};
        MapSink sink = scim_collect_sink(&col);
        Mapper *m = NULL;
        const MapRejects *rj;
        NssMaps maps = {};

        ck_assert_int_eq(mapper_new(c, &sink, &m), 0);
        ck_assert_int_eq(mapper_load_local(m, NULL, NULL), 0);
        map_text(m, NSS_MAP_PASSWD,
                 "alice:x:2001:2001:Alice:/home/alice:/bin/bash\n"
                 "toor:x:0:0::/root:/bin/bash\n"                 /* uid 0 */
                 "sshd:x:2002:2002::/run/sshd:/bin/sh\n"         /* reserved name */
                 "bob:x:2003:65534::/home/bob:/bin/sh\n"         /* reserved gid */
                 "carol:x:2004:2004::/home/carol/../x:/bin/sh\n" /* .. */
                 "dave:x:2005:2005::home/dave:/bin/sh\n"         /* relative */
                 "erin:x:2006:2006:a,b:/home/erin:/bin/sh\n"     /* a comma sunkd would not write */
                 "9999:x:2007:2007::/home/n:/bin/sh\n"           /* all digits */
                 "frank:x:2008:2008::/home/frank:/bin/sh\r\n");  /* a CR in the shell */
        map_text(m, NSS_MAP_SHADOW, "alice:*:::::::\nalice:*:::::::\nnobody:*:::::::\nghost:*:::::::\n");
        map_text(m, NSS_MAP_SSHKEY,
                 "alice:['ssh-ed25519 AAAA a', ' padded', 'ctl\\x01']\nroot:['ssh-ed25519 AAAA evil']\n");
        map_text(m, NSS_MAP_GROUP,
                 "team:x:3001:alice,root,bad name,alice\nsudo:x:3002:alice\nlow:x:10:alice\n");
        ck_assert_int_eq(mapper_finish(m), 0);
        rj = mapper_rejects(m);
        ck_assert_uint_eq(rj->count[MAP_REJECT_ID_RANGE], 2); /* toor, low */
        ck_assert_uint_eq(rj->count[MAP_REJECT_LOCAL_ACCOUNT],
                          6); /* sshd, bob, nobody, root key, root member, sudo */
        ck_assert_uint_eq(rj->count[MAP_REJECT_BAD_HOME], 2);      /* carol, dave */
        ck_assert_uint_eq(rj->count[MAP_REJECT_BAD_ENTRY], 1);     /* erin */
        ck_assert_uint_eq(rj->count[MAP_REJECT_BAD_SHELL], 1);     /* frank */
        ck_assert_uint_eq(rj->count[MAP_REJECT_BAD_NAME], 1);      /* 9999 */
        ck_assert_uint_eq(rj->count[MAP_REJECT_DUP_NAME], 1);      /* the second alice shadow */
        ck_assert_uint_eq(rj->count[MAP_REJECT_NAME_MISMATCH], 1); /* ghost: no passwd entry */
        ck_assert_uint_eq(rj->count[MAP_REJECT_BAD_SSHKEY], 2);    /* padded, control */
        ck_assert_uint_eq(rj->count[MAP_REJECT_BAD_MEMBER], 1);    /* "bad name" */
        scim_collect_take(&col, &maps);
        ck_assert_uint_eq(maps.n_passwd, 1);
        ck_assert_str_eq(maps.passwd[0].name, "alice");
        ck_assert_uint_eq(maps.n_shadow, 1);
        ck_assert_uint_eq(maps.n_sshkey, 1);
        ck_assert_str_eq(maps.sshkey[0].keys[0], "ssh-ed25519 AAAA a");
        ck_assert_ptr_null(maps.sshkey[0].keys[1]);
        ck_assert_uint_eq(maps.n_group, 1);
        ck_assert_str_eq(maps.group[0].members[0], "alice");
        ck_assert_ptr_null(maps.group[0].members[1]);
        nss_maps_done(&maps);
        mapper_free(m);
        scim_collect_done(&col);
        nsscache_conf_free(c);
}
END_TEST

/* Netgroups: a name that is not portable or that two entries claim costs
 * the entry (every claimant's); a member that is neither a triple of three
 * clean fields nor a netgroup's name costs itself. */
START_TEST(test_mapper_netgroup) {
        NsscacheConf *c = http_conf();
        ScimCollect col = {};
        MapSink sink = scim_collect_sink(&col);
        Mapper *m = NULL;
        const MapRejects *rj;
        NssMaps maps = {};

        ck_assert_int_eq(mapper_new(c, &sink, &m), 0);
        ck_assert_int_eq(mapper_load_local(m, NULL, NULL), 0);
        map_text(m, NSS_MAP_NETGROUP,
                 "admins (,bob,) (h1,alice,example.com) ops\n"
                 "dup (a,,)\n"
                 "ops (-,-,) (x,y) (a,b,c,d) ((a,b,c) (a,b,c)) (a,b\x01,c) ../up -opt (*.example.com,,)\n"
                 "-rf (a,b,c)\n"
                 "..\n"
                 "dup (b,,)\n"
                 "name/slash (a,b,c)\n"
                 "empty\n"
                 "dup (c,,)\n");
        ck_assert_int_eq(mapper_finish(m), 0);
        rj = mapper_rejects(m);
        ck_assert_uint_eq(rj->count[MAP_REJECT_BAD_NAME], 3);   /* -rf, .., name/slash */
        ck_assert_uint_eq(rj->count[MAP_REJECT_DUP_NAME], 3);   /* every dup */
        ck_assert_uint_eq(rj->count[MAP_REJECT_BAD_MEMBER], 7); /* all but the first and last of ops */
        scim_collect_take(&col, &maps);
        ck_assert_uint_eq(maps.n_netgroup, 3);
        ck_assert_str_eq(maps.netgroup[0].name, "admins");
        ck_assert_str_eq(maps.netgroup[0].entries[2], "ops");
        ck_assert_str_eq(maps.netgroup[1].name, "ops");
        ck_assert_str_eq(maps.netgroup[1].entries[0], "(-,-,)");
        ck_assert_str_eq(maps.netgroup[1].entries[1], "(*.example.com,,)");
        ck_assert_ptr_null(maps.netgroup[1].entries[2]);
        ck_assert_str_eq(maps.netgroup[2].name, "empty");
        ck_assert_ptr_null(maps.netgroup[2].entries[0]);
        nss_maps_done(&maps);
        mapper_free(m);
        scim_collect_done(&col);
        nsscache_conf_free(c);
}
END_TEST

/* auto.master's mount points name files in files_dir as nsscache names them
 * (auto. and the path without its first slash, '_' for the others), and
 * never one outside it; its ldap locations give the map's base. */
START_TEST(test_automount_names) {
        static const struct {
                const char *mountpoint, *file;
        } names[] = {
                { "/home", "auto.home" },
                { "/usr/local", "auto.usr_local" },
                { "/mnt/a.b-c_d", "auto.mnt_a.b-c_d" },
                { "/", NULL },
                { "/../etc", NULL },
                { "/a/..", NULL },
                { "/a/./b", NULL },
                { "/a//b", NULL },
                { "/a/", NULL },
                { "home", NULL },
                { "/a b", NULL },
                { "/a\nb", NULL },
                { "", NULL },
                { "/master", NULL }, /* auto.master's own file */
        };
        static const struct {
                const char *info, *dn;
        } locations[] = {
                { "ldap:host:ou=auto.home,dc=x -rw,intr", "ou=auto.home,dc=x" },
                { "ldap:host:ou=auto.home,dc=x", "ou=auto.home,dc=x" },
                { "ldap::ou=a,dc=x", "ou=a,dc=x" },
                { "ldap:host:ou=a,dc=x:more", "ou=a,dc=x" },
                { "ldap:ou=auto.home,dc=x", NULL }, /* nsscache fails the run on it */
                { "ldap://host/ou=a", NULL },
                { "ldap:host:", NULL },
                { "-rw nfs:/x", NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                _cleanup_free_ char *f = NULL;
                int r = mapper_automount_file(names[i].mountpoint, &f);

                if (names[i].file) {
                        ck_assert_int_eq(r, 0);
                        ck_assert_str_eq(f, names[i].file);
                } else
                        ck_assert_msg(r == -EINVAL, "'%s' accepted", names[i].mountpoint);
        }
        for (size_t i = 0; i < ELEMENTSOF(locations); i++) {
                _cleanup_free_ char *dn = NULL;
                int r = ldap_automount_location(locations[i].info, &dn);

                if (locations[i].dn) {
                        ck_assert_int_eq(r, 0);
                        ck_assert_str_eq(dn, locations[i].dn);
                } else
                        ck_assert_msg(r == -EINVAL, "'%s' accepted", locations[i].info);
        }
}
END_TEST

/* ---- bzip2 --------------------------------------------------------------- */

START_TEST(test_bzip2) {
        char plain[5000], packed[6000];
        unsigned packed_len = sizeof(packed);
        _cleanup_free_ char *out = NULL;
        size_t out_len = 0;

        memset(plain, 'a', sizeof(plain));
        ck_assert_int_eq(BZ2_bzBuffToBuffCompress(packed, &packed_len, plain, sizeof(plain), 9, 0, 0),
                         BZ_OK);
        ck_assert(http_is_bzip2(packed, packed_len));
        ck_assert(!http_is_bzip2("BZh9 not really", 15));
        ck_assert_int_eq(http_bzip2_decode(packed, packed_len, sizeof(plain), &out, &out_len), 0);
        ck_assert_uint_eq(out_len, sizeof(plain));
        ck_assert(memcmp(out, plain, sizeof(plain)) == 0);
        free(out);
        out = NULL;
        ck_assert_int_eq(http_bzip2_decode(packed, packed_len, sizeof(plain) - 1, &out, &out_len), -EFBIG);
        ck_assert_int_eq(http_bzip2_decode(packed, packed_len - 4, sizeof(plain), &out, &out_len), -EBADMSG);
        ck_assert_ptr_null(out);
}
END_TEST

/* ---- nsscache.conf --------------------------------------------------------- */

static const struct {
        const char *extra;
        const char *error; /* NULL: accepted */
} confs[] = {
        { "", NULL },
        { "http_http_proxy = http://proxy.example:3128\nhttp_tls_cacertfile = /etc/ssl/ca.pem\n", NULL },
        { "http_proxy = http://proxy.example:3128\n", "reads the proxy from 'http_http_proxy'" },
        { "http_retry_max = 0\n", "http_retry_max" },
        { "scim_base_url = https://scim.example/v2\n", "key 'scim_base_url': read only with source = scim" },
        { "[passwd]\nsource = scim\n", "every map must have the one set in [DEFAULT]" },
        { "[passwd]\nsource = http\n", NULL },
};

START_TEST(test_conf) {
        _cleanup_free_ char *text = NULL, *err = NULL;
        NsscacheConf *c = NULL;
        int r;

        ck_assert_int_ge(
                asprintf(&text,
                         "[DEFAULT]\nsource = http\ncache = files\nmaps = passwd, group\nfiles_dir = /tmp\n"
                         "timestamp_dir = /tmp\nhttp_passwd_url = https://maps.example/passwd\n"
                         "http_group_url = https://maps.example/group\n%s",
                         confs[_i].extra),
                0);
        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        r = nsscache_conf_parse_ini(c, text, strlen(text), "test.conf", &err);
        if (r >= 0)
                r = nsscache_conf_finalize(c, &err);
        if (!confs[_i].error)
                ck_assert_msg(r == 0, "%s: %s", confs[_i].extra, err);
        else
                ck_assert_msg(r < 0 && err && strstr(err, confs[_i].error), "%s: got '%s'", confs[_i].extra,
                              err ?: "accepted");
        nsscache_conf_free(c);
}
END_TEST

static const struct {
        const char *text;
        const char *error;
} finalize_bad[] = {
        { "maps = passwd, group\nhttp_passwd_url = https://maps.example/passwd\n",
          "key 'http_group_url': required" },
        { "maps = shadow\nhttp_shadow_url = https://maps.example/shadow\n",
          "shadow and sshkey need passwd" },
        { "maps = passwd\nhttp_passwd_url = ftp://maps.example/passwd\n", "must be http:// or https://" },
        { "maps = passwd\nhttp_passwd_url = https://u:p@maps.example/passwd\n", "user name or password" },
        { "maps = passwd\nhttp_passwd_url = https://<producer>/passwd\n", "placeholder" },
};

START_TEST(test_conf_finalize) {
        _cleanup_free_ char *text = NULL, *err = NULL;
        NsscacheConf *c = NULL;

        ck_assert_int_ge(asprintf(&text, "[DEFAULT]\nsource = http\ncache = files\nfiles_dir = /tmp\n%s",
                                  finalize_bad[_i].text),
                         0);
        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        ck_assert_int_eq(nsscache_conf_parse_ini(c, text, strlen(text), "test.conf", &err), 0);
        ck_assert_int_eq(nsscache_conf_finalize(c, &err), -EINVAL);
        ck_assert_msg(strstr(err, finalize_bad[_i].error), "got '%s', want '%s'", err,
                      finalize_bad[_i].error);
        nsscache_conf_free(c);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("nsscache-mapfile");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_loop_test(tc, test_lines, 0, sizeof(lines) / sizeof(lines[0]));
        tcase_add_test(tc, test_nul_and_cut_short);
        tcase_add_test(tc, test_huge_group);
        tcase_add_test(tc, test_mapper);
        tcase_add_test(tc, test_mapper_netgroup);
        tcase_add_test(tc, test_automount_names);
        tcase_add_test(tc, test_bzip2);
        tcase_add_loop_test(tc, test_conf, 0, sizeof(confs) / sizeof(confs[0]));
        tcase_add_loop_test(tc, test_conf_finalize, 0, sizeof(finalize_bad) / sizeof(finalize_bad[0]));
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
