/* nsscache.conf parsing: the seed file, precedence, escapes, and every way
 * the parser refuses input. */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modules/nsscache/nsscache-conf.h"
#include "modules/nsscache/nsscache-refresh.h"
#include "util/cleanup.h"
#include "../lib/check-run.h"

/* The maps of users and groups, which every source writes (netgroup follows them). */
#define USER_MAPS (NSS_MAP_SSHKEY + 1)

#define CW "urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser"

static const char seed[] = "[DEFAULT]\n"
                           "cache=files\n"
                           "files_cache_filename_suffix=cache\n"
                           "files_dir=/etc/nsscache\n"
                           "maps=passwd,shadow,group,sshkey\n"
                           "scim_base_url=https://platform.example/api/organizations/org/scim/v2\n"
                           "scim_groups_endpoint=Groups\n"
                           "scim_groups_parameters=excludeInactiveUsers=true\n"
                           "scim_users_endpoint=Users\n"
                           "scim_users_parameters=attributes=" CW "\n"
                           "source=scim\n"
                           "timestamp_dir=/var/lib/nsscache\n"
                           "[group]\n"
                           "scim_path_gid=sunkPosixGroupId\n"
                           "scim_path_groupname=sunkPosixGroupName\n"
                           "scim_path_username=members/sunkPosixUsername\n"
                           "[passwd]\n"
                           "scim_default_shell=/bin/bash\n"
                           "scim_override_home_directory=/mnt/home/%%u\n"
                           "scim_path_gid=" CW "/sunkPosixGroupId\n"
                           "scim_path_home_directory=" CW "/sunkPreferredHomeDirectory\n"
                           "scim_path_login_shell=" CW "/sunkLoginShell\n"
                           "scim_path_uid=" CW "/sunkPosixUserId\n"
                           "scim_path_username=" CW "/sunkPosixUsername\n"
                           "[shadow]\n"
                           "scim_path_username=" CW "/sunkPosixUsername\n"
                           "[sshkey]\n"
                           "scim_path_ssh_keys=" CW "/sunkSshKeys\n"
                           "scim_path_username=" CW "/sunkPosixUsername\n";

static int parse(const char *text, NsscacheConf **ret, char **ret_error) {
        NsscacheConf *c = NULL;
        int r;

        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        r = nsscache_conf_parse_ini(c, text, strlen(text), "test.conf", ret_error);
        if (r >= 0)
                r = nsscache_conf_finalize(c, ret_error);
        if (r < 0)
                c = nsscache_conf_free(c);
        *ret = c;
        return r;
}

START_TEST(test_seed) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL;

        ck_assert_msg(parse(seed, &c, &err) == 0, "%s", err);
        ck_assert_str_eq(c->base_url, "https://platform.example/api/organizations/org/scim/v2");
        ck_assert_str_eq(c->users_parameters, "attributes=" CW);
        ck_assert_str_eq(c->groups_parameters, "excludeInactiveUsers=true");
        ck_assert_str_eq(c->files_dir, "/etc/nsscache");
        ck_assert_str_eq(c->files_cache_filename_suffix, "cache");
        ck_assert_str_eq(c->map[NSS_MAP_PASSWD].override_home_directory, "/mnt/home/%u");
        ck_assert_str_eq(c->map[NSS_MAP_PASSWD].path_uid, CW "/sunkPosixUserId");
        ck_assert_str_eq(c->map[NSS_MAP_GROUP].path_username, "members/sunkPosixUsername");
        ck_assert_str_eq(c->map[NSS_MAP_GROUP].path_groupname, "sunkPosixGroupName");
        ck_assert_str_eq(c->map[NSS_MAP_SSHKEY].path_ssh_keys, CW "/sunkSshKeys");
        ck_assert_ptr_null(c->map[NSS_MAP_SHADOW].path_uid);
        for (int i = 0; i < USER_MAPS; i++)
                ck_assert(c->map_enabled[i]);
        ck_assert(!c->map_enabled[NSS_MAP_NETGROUP]);
        ck_assert(c->tls_verify);
        ck_assert_int_eq(c->page_size, 100);
        ck_assert_int_eq(c->min_uid, 1000);
        ck_assert_int_eq(c->max_shrink_pct, 50);
}
END_TEST

START_TEST(test_precedence_and_escapes) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL;
        const char *t = "; comment\n"
                        "[DEFAULT]\n"
                        "  # indented comment\n"
                        "SOURCE : \"scim\"\n"
                        "maps = passwd , group\n"
                        "base = https://h.example\n"
                        "scim_base_url = %(base)s/scim/v2\n"
                        "scim_path_gid = 'gidAttr'\r\n"
                        "scim_path_uid = uidAttr\n"
                        "scim_default_shell = /bin/sh\n"
                        "scim_timeout = 2.5\n"
                        "scim_verify_ssl = False\n"
                        "scim_shadow_default_max = 99999\n"
                        "[group]\n"
                        "scim_path_gid = groupGid\n"
                        "[passwd]\n"
                        "scim_override_home_directory = /home/100%%/%%u\n";

        /* "base" is not a known key: interpolation sources are keys too. */
        ck_assert_int_eq(parse(t, &c, &err), -EINVAL);
        ck_assert_msg(strstr(err, "test.conf:6: key 'base'"), "%s", err);
        free(err);
        err = NULL;

        t = "[DEFAULT]\n"
            "SOURCE : \"scim\"\n"
            "maps = passwd , group\n"
            "scim_users_endpoint = Users\n"
            "scim_base_url = https://h.example/%(scim_users_endpoint)s/v2\n"
            "scim_path_gid = 'gidAttr'\r\n"
            "scim_path_uid = uidAttr\n"
            "scim_default_shell = /bin/sh\n"
            "scim_timeout = 2.5\n"
            "scim_verify_ssl = False\n"
            "scim_shadow_default_max = 99999\n"
            "[group]\n"
            "scim_path_gid = groupGid\n"
            "[passwd]\n"
            "scim_override_home_directory = /home/100%%/%%u\n";
        ck_assert_msg(parse(t, &c, &err) == 0, "%s", err);
        ck_assert_str_eq(c->base_url, "https://h.example/Users/v2");
        ck_assert_str_eq(c->map[NSS_MAP_PASSWD].path_gid, "gidAttr");
        ck_assert_str_eq(c->map[NSS_MAP_GROUP].path_gid, "groupGid");
        ck_assert_str_eq(c->map[NSS_MAP_SHADOW].default_shell, "/bin/sh");
        ck_assert_str_eq(c->map[NSS_MAP_PASSWD].override_home_directory, "/home/100%/%u");
        ck_assert_int_eq(c->timeout_usec, 2500000);
        ck_assert(!c->tls_verify);
        ck_assert_int_eq(c->map[NSS_MAP_SHADOW].shadow_max, 99999);
        ck_assert_int_eq(c->map[NSS_MAP_SHADOW].shadow_min, -1);
        ck_assert(c->map_enabled[NSS_MAP_PASSWD] && c->map_enabled[NSS_MAP_GROUP]);
        ck_assert(!c->map_enabled[NSS_MAP_SHADOW] && !c->map_enabled[NSS_MAP_SSHKEY]);
}
END_TEST

static const struct {
        const char *text;
        const char *error;
} bad[] = {
        { "[DEFAULT]\nscim_base_url=https://"
          "x\nscim_path_uid=a\nscim_path_gid=b\nscim_path_ssh_keys=c\nbogus=1\n",
          "test.conf:6: key 'bogus': unknown" },
        { "[DEFAULT]\nsource=consul\n", "test.conf:2: key 'source': only 'scim', 'ldap'" },
        { "[DEFAULT]\nsource=ldap\n", "key 'ldap_uri': required with source = ldap" },
        { "[DEFAULT]\nsource=ldap\nldap_use_sasl=1\n",
          "test.conf:3: key 'ldap_use_sasl': SASL binds are not supported" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldap://127.0.0.1\nldap_uidregex=x\n",
          "test.conf:4: key 'ldap_uidregex': not supported" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldap://127.0.0.1\n[passwd]\nldap_uri=ldap://other\n",
          "test.conf:5: key 'ldap_uri': must be set in [DEFAULT]" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=http://x\nldap_base=dc=x\nldap_filter=(uid=*)\n",
          "key 'ldap_uri': must be one ldap://" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldap://<server>\nldap_base=dc=x\nldap_filter=(uid=*)\n",
          "key 'ldap_uri': must be one ldap://" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldap://x\nldap_base=dc=x\nmaps=passwd\n",
          "[passwd] key 'ldap_filter': required for the passwd map" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldap://x\nldap_base=dc=x\nldap_filter=uid=*\nmaps=passwd\n",
          "[passwd] key 'ldap_filter': must be an LDAP filter" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldap://x\nldap_base=dc=x\nldap_filter=(uid=*)\nmaps=passwd\n"
          "ldap_scope=deep\n",
          "[passwd] key 'ldap_scope': must be base, one or sub" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldap://x\nldap_base=dc=x\nldap_filter=(uid=*)\nmaps=passwd\n"
          "ldap_tls_require_cert=sometimes\n",
          "key 'ldap_tls_require_cert': must be never" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldap://ldap.example\nldap_base=dc=x\nldap_filter=(uid=*)\n"
          "maps=passwd\nldap_bind_dn=cn=r\nldap_bind_password=pw\n",
          "key 'ldap_bind_password': the password would cross the network in clear text" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldaps://x\nldap_base=dc=x\nldap_filter=(uid=*)\nmaps=passwd\n"
          "ldap_tls_starttls=1\n",
          "key 'ldap_tls_starttls': only with an ldap:// URI" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldaps://x\nldap_base=dc=x\nldap_filter=(uid=*)\nmaps=shadow\n",
          "shadow and sshkey need passwd with source = ldap" },
        { "[DEFAULT]\nldap_uri=ldaps://x\nscim_base_url=https://x\n",
          "key 'ldap_uri': read only with source = ldap" },
        { "[DEFAULT]\nsource=s3\ns3_bucket=b\nmaps=netgroup\n",
          "key 'maps': nsscache's s3 source has no netgroup map" },
        { "[DEFAULT]\nsource=http\nhttp_passwd_url=https://x/p\nmaps=passwd, netgroup\n",
          "key 'http_netgroup_url': required for the netgroup map" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldaps://x\nldap_base=dc=x\nldap_filter=(cn=*)\nmaps=netgroup\n"
          "[netgroup]\nfiles_cache_filename_suffix = x/../../passwd\n",
          "[netgroup] key 'files_cache_filename_suffix': must not hold a '/'" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldaps://x\nldap_base=dc=x\nldap_filter=(cn=*)\nmaps=passwd\n"
          "[passwd]\nfiles_cache_filename_suffix =\n",
          "test.conf:8: key 'files_cache_filename_suffix': must be set in [DEFAULT]" },
        { "[DEFAULT]\ncache=nssdb\n", "test.conf:2: key 'cache': only 'files'" },
        { "[passwd]\nscim_base_url=https://x\n",
          "test.conf:2: key 'scim_base_url': must be set in [DEFAULT]" },
        { "[hosts]\n", "test.conf:1: section 'hosts': unknown section" },
        { "[DEFAULT]\nscim_base_url=https://x\nmaps=automount\n", "SCIM has no automount maps" },
        { "[DEFAULT]\nsource=http\nhttp_passwd_url=https://x/p\nmaps=passwd, automount\n",
          "key 'http_automount_base_url': required for the automount map" },
        { "[suffix]\nprefix = /home\nsuffix = /export\n",
          "test.conf:2: key 'prefix': not supported: nsscache's [suffix] rewrites automount locations" },
        { "[suffix]\nbogus = 1\n", "test.conf:2: key 'bogus': unknown" },
        { "[DEFAULT]\nfiles_local_automount_master = yes\n",
          "test.conf:2: key 'files_local_automount_master': only 'no' is supported" },
        { "[DEFAULT]\nsource=http\nhttp_automount_base_url=file:///etc/\nmaps=automount\n",
          "key 'http_automount_base_url': is a placeholder or not a valid URL" },
        { "[DEFAULT]\nsource=ldap\nldap_uri=ldaps://x\nldap_filter=(cn=*)\nmaps=automount\n",
          "[automount] key 'ldap_base': required for the automount map" },
        { "[DEFAULT]\nscim_timout=5\n",
          "test.conf:2: key 'scim_timout': unknown or unsupported key; did you "
          "mean 'scim_timeout'?" },
        { "[DEFAULT]\nfrobnicate=5\n", "key 'frobnicate': unknown or unsupported key" },
        { "[DEFAULT]\nsource=http\nmaps=passwd\n",
          "key 'source': http reads the maps from manifest_url (a producer's signed manifest) or from one "
          "http_<map>_url a map" },
        { "[passwd]\n[group]\n[passwd]\n", "test.conf:3: section 'passwd': duplicate" },
        { "[DEFAULT]\nmaps=passwd\nMAPS=group\n", "test.conf:3: key 'maps': duplicate" },
        { "maps=passwd\n", "test.conf:1: key 'maps': outside of any section" },
        { "[DEFAULT]\njunk line\n", "test.conf:2: expected 'key = value'" },
        { "[DEFAULT]\nmaps=passwd\n  ,group\n", "test.conf:3: continuation" },
        { "[DEFAULT\n", "test.conf:1: malformed section header" },
        { "[passwd]\nscim_override_home_directory=/mnt/home/%u\n",
          "test.conf:2: key 'scim_override_home_directory': '%' must be followed" },
        { "[passwd]\nscim_path_uid=%(nothere)s\n", "interpolation references unknown key 'nothere'" },
        { "[passwd]\nscim_path_uid=%(scim_path_uid)s\n", "nested too deeply" },
        { "[DEFAULT]\nscim_timeout=soon\n", "test.conf:2: key 'scim_timeout': expected seconds" },
        { "[DEFAULT]\nscim_verify_ssl=maybe\n", "key 'scim_verify_ssl': expected a boolean" },
        { "[DEFAULT]\nscim_retry_max=99\n", "key 'scim_retry_max': expected an integer" },
        { "[DEFAULT]\nfiles_dir=relative/dir\n", "key 'files_dir': must be an absolute path" },
        { "[DEFAULT]\nfiles_dir=/etc/../root\n", "key 'files_dir': must be an absolute path" },
        { "[shadow]\nscim_shadow_default_max=-5\n", "key 'scim_shadow_default_max'" },
        { "[DEFAULT]\nscim_path_uid=a\n", "key 'scim_base_url': required" },
        { "[DEFAULT]\nscim_base_url=http://scim.example/"
          "v2\nscim_path_uid=a\nscim_path_gid=a\nscim_path_ssh_keys=a\n",
          "plain http:// is only accepted" },
        { "[DEFAULT]\nscim_base_url=ftp://x\n", "must be https://" },
        { "[DEFAULT]\nscim_base_url=https://x\nmaps=passwd\n", "[passwd] key 'scim_path_uid': required" },
        { "[DEFAULT]\nscim_base_url=https://x\nmaps=group\n", "[group] key 'scim_path_gid': required" },
        { "[DEFAULT]\nscim_base_url=https://x\nmaps=hosts\n", "map 'hosts' is not supported" },
        { "[DEFAULT]\nscim_base_url=https://x\nmaps=netgroup\n", "SCIM has no netgroups" },
        { "[DEFAULT]\nscim_base_url=https://x\nmaps=\n", "no maps configured" },
        { "[DEFAULT]\nscim_base_url=https://"
          "x\nmaps=group\nscim_path_gid=g\nscim_groups_parameters=a=b&count=5\n",
          "must not set count, startIndex or cursor" },
        { "[DEFAULT]\nscim_base_url=https://"
          "x\nmaps=group\nscim_path_gid=g\nscim_groups_parameters=Cursor=abc\n",
          "must not set count, startIndex or cursor" },
        { "[DEFAULT]\nscim_base_url=https://x\nmaps=group\nscim_path_gid=g\nscim_groups_endpoint=a b\n",
          "key 'scim_groups_endpoint'" },
        { "[DEFAULT]\nscim_base_url=https://x\nmaps=group\nscim_path_gid=g\nfiles_dir=/etc\n"
          "files_cache_filename_suffix=\n",
          "key 'files_cache_filename_suffix': must not be empty when files_dir is /etc" },
        { "[DEFAULT]\nscim_base_url=https://x\nmaps=group\nscim_path_gid=g\nfiles_dir=/etc\n"
          "files_cache_filename_suffix=''\n",
          "key 'files_cache_filename_suffix': must not be empty" },
};

/* nsscache's scim_timeout and scim_retry_delay are float seconds; units are accepted too. */
static const struct {
        const char *value;
        uint64_t usec; /* 0: refused */
} durations[] = {
        { "60", 60000000 },   { "2.5", 2500000 },
        { "0.25", 250000 },   { "500ms", 500000 },
        { "1.5m", 90000000 }, { "1h30m", 5400000000 },
        { "5 s", 5000000 },   { "0", 0 },
        { "0.01", 0 },        { "-1", 0 },
        { "1e3", 0 },         { ".5", 0 },
        { "soon", 0 },        { "99999999999999999999", 0 },
};

/* nsscache's own example: netgroups from a base of their own, written
 * without a suffix where glibc's files module reads them; its no-op
 * [suffix] section and files_local_automount_master = no are taken. */
START_TEST(test_netgroup) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL;
        CacheOptions o;
        _cleanup_free_ char *ng = NULL, *pw = NULL;
        const char *t = "[DEFAULT]\n"
                        "source = ldap\n"
                        "maps = passwd, group, shadow, netgroup\n"
                        "files_dir = /tmp\n"
                        "ldap_uri = ldaps://ldap.example\n"
                        "ldap_base = ou=people,dc=example,dc=com\n"
                        "ldap_filter = (objectclass=posixAccount)\n"
                        "[netgroup]\n"
                        "ldap_base = ou=netgroup,dc=example,dc=com\n"
                        "ldap_filter = (objectclass=nisNetgroup)\n"
                        "files_cache_filename_suffix =\n"
                        "files_local_automount_master = no\n"
                        "[suffix]\n"
                        "prefix = \"\"\n"
                        "suffix = \"\"\n";

        ck_assert_msg(parse(t, &c, &err) == 0, "%s", err);
        ck_assert(c->map_enabled[NSS_MAP_NETGROUP] && !c->map_enabled[NSS_MAP_SSHKEY]);
        ck_assert_str_eq(c->map[NSS_MAP_NETGROUP].ldap_base, "ou=netgroup,dc=example,dc=com");
        ck_assert_str_eq(c->map[NSS_MAP_NETGROUP].ldap_filter, "(objectclass=nisNetgroup)");
        ck_assert_str_eq(c->map[NSS_MAP_NETGROUP].files_suffix, "");
        ck_assert_ptr_null(c->map[NSS_MAP_PASSWD].files_suffix);
        nsscache_refresh_options(c, false, &o);
        ng = cache_publish_path(&o, NSS_MAP_NETGROUP);
        pw = cache_publish_path(&o, NSS_MAP_PASSWD);
        ck_assert_str_eq(ng, "/tmp/netgroup");
        ck_assert_str_eq(pw, "/tmp/passwd.cache");
}
END_TEST

START_TEST(test_durations) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *text = NULL, *err = NULL;
        int r;

        ck_assert_int_ge(asprintf(&text, "[DEFAULT]\nscim_timeout = %s\n%s", durations[_i].value,
                                  seed + strlen("[DEFAULT]\n")),
                         0);
        r = parse(text, &c, &err);
        if (durations[_i].usec == 0) { /* unparsable, or below the 100 ms floor */
                ck_assert_msg(r < 0, "'%s' accepted", durations[_i].value);
                ck_assert_ptr_nonnull(strstr(err, "timeout'"));
                return;
        }
        ck_assert_msg(r >= 0, "'%s': %s", durations[_i].value, err);
        ck_assert_uint_eq(c->timeout_usec, durations[_i].usec);
}
END_TEST

START_TEST(test_bad) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL;

        ck_assert_int_lt(parse(bad[_i].text, &c, &err), 0);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(strstr(err, bad[_i].error), "case %d: got '%s', want '%s'", _i, err, bad[_i].error);
}
END_TEST

/* One round names every bad key of the file, each at its line. */
START_TEST(test_every_error) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL;
        const char text[] = "[DEFAULT]\nscim_timeout=soon\nscim_verify_ssl=maybe\nscim_timout=5\n"
                            "[passwd]\nscim_base_url=https://x\n";

        ck_assert_int_lt(parse(text, &c, &err), 0);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(strstr(err, "test.conf:2: key 'scim_timeout': expected seconds"), "%s", err);
        ck_assert_msg(strstr(err, "test.conf:3: key 'scim_verify_ssl': expected a boolean"), "%s", err);
        ck_assert_msg(strstr(err, "test.conf:4: key 'scim_timout': unknown or unsupported key; did you mean "
                                  "'scim_timeout'?"),
                      "%s", err);
        ck_assert_msg(strstr(err, "test.conf:6: key 'scim_base_url': must be set in [DEFAULT]"), "%s", err);
}
END_TEST

START_TEST(test_hostile) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL, *big = NULL;
        const char nul[] = "[DEFAULT]\nmaps=pa\0sswd\n";
        size_t n = 2 * 1024 * 1024;

        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        ck_assert_int_eq(nsscache_conf_parse_ini(c, nul, sizeof(nul) - 1, "t", &err), -EINVAL);
        ck_assert(strstr(err, "NUL"));
        free(err);
        err = NULL;

        /* a huge value: refused by the value cap, no crash */
        big = malloc(n + 64);
        strcpy(big, "[DEFAULT]\nscim_base_url=");
        memset(big + strlen(big), 'a', n);
        big[24 + n] = 0;
        ck_assert_int_eq(nsscache_conf_parse_ini(c, big, strlen(big), "t", &err), -EINVAL);
        ck_assert_msg(strstr(err, "too long"), "%s", err);
        free(err);
        err = NULL;

        /* many keys */
        {
                _cleanup_free_ char *t = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&t, &len);
                fputs("[DEFAULT]\n", f);
                for (int i = 0; i < 1000; i++)
                        fprintf(f, "k%d=v\n", i);
                fclose(f);
                ck_assert_int_eq(nsscache_conf_parse_ini(c, t, len, "t", &err), -EINVAL);
                ck_assert_msg(strstr(err, "too many keys"), "%s", err);
        }
}
END_TEST

START_TEST(test_token) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL;
        _cleanup_erase_ char *tok = NULL;
        char path[] = "/tmp/test-nsscache-token-XXXXXX";
        int fd;

        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        unsetenv(SCIM_AUTH_TOKEN_ENV);
        ck_assert_int_eq(nsscache_conf_load_token(c, &tok, &err), -ENOKEY);
        free(err);
        err = NULL;

        c->auth_token = strdup("from-conf");
        ck_assert_int_eq(nsscache_conf_load_token(c, &tok, &err), 0);
        ck_assert_str_eq(tok, "from-conf");
        erase_and_free(TAKE_PTR(tok));

        setenv(SCIM_AUTH_TOKEN_ENV, " from-env\n", 1);
        ck_assert_int_eq(nsscache_conf_load_token(c, &tok, &err), 0);
        ck_assert_str_eq(tok, "from-env");
        erase_and_free(TAKE_PTR(tok));

        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "from-file\n", 10), 10);
        close(fd);
        c->token_file = strdup(path);
        ck_assert_int_eq(chmod(path, 0600), 0);
        ck_assert_int_eq(nsscache_conf_load_token(c, &tok, &err), 0);
        ck_assert_str_eq(tok, "from-file");
        erase_and_free(TAKE_PTR(tok));

        ck_assert_int_eq(chmod(path, 0640), 0);
        ck_assert_int_eq(nsscache_conf_load_token(c, &tok, &err), -EPERM);
        ck_assert(strstr(err, "refused"));
        free(err);
        err = NULL;
        ck_assert_int_eq(chmod(path, 0604), 0);
        ck_assert_int_eq(nsscache_conf_load_token(c, &tok, &err), -EPERM);
        free(err);
        err = NULL;

        /* a Kubernetes Secret volume: token -> ..data/token -> ..2026_x/token */
        {
                char dir[] = "/tmp/test-nsscache-secret-XXXXXX";
                _cleanup_free_ char *ts = NULL, *data = NULL, *link = NULL, *real = NULL;

                ck_assert_ptr_nonnull(mkdtemp(dir));
                ck_assert_int_ge(asprintf(&ts, "%s/..2026_11_23", dir), 0);
                ck_assert_int_ge(asprintf(&data, "%s/..data", dir), 0);
                ck_assert_int_ge(asprintf(&link, "%s/token", dir), 0);
                ck_assert_int_ge(asprintf(&real, "%s/token", ts), 0);
                ck_assert_int_eq(mkdir(ts, 0755), 0);
                fd = open(real, O_WRONLY | O_CREAT | O_EXCL, 0400);
                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(write(fd, "from-secret\n", 12), 12);
                close(fd);
                ck_assert_int_eq(symlink("..2026_11_23", data), 0);
                ck_assert_int_eq(symlink("..data/token", link), 0);
                free(c->token_file);
                c->token_file = strdup(link);
                ck_assert_msg(nsscache_conf_load_token(c, &tok, &err) == 0, "%s", err);
                ck_assert_str_eq(tok, "from-secret");
                erase_and_free(TAKE_PTR(tok));
                /* the mode that counts is the target's (defaultMode 0644 is refused) */
                ck_assert_int_eq(chmod(real, 0644), 0);
                ck_assert_int_eq(nsscache_conf_load_token(c, &tok, &err), -EPERM);
                ck_assert_msg(strstr(err, "refused"), "%s", err);
                free(err);
                err = NULL;
                /* a FIFO is refused at once instead of blocking the run */
                ck_assert_int_eq(unlink(real), 0);
                ck_assert_int_eq(mkfifo(real, 0600), 0);
                ck_assert_int_eq(nsscache_conf_load_token(c, &tok, &err), -EPERM);
                free(err);
                err = NULL;
                unlink(real);
                unlink(link);
                unlink(data);
                rmdir(ts);
                rmdir(dir);
                free(c->token_file);
                c->token_file = strdup(path);
        }

        /* header injection */
        ck_assert_int_eq(chmod(path, 0600), 0);
        fd = open(path, O_WRONLY | O_TRUNC);
        ck_assert_int_eq(write(fd, "abc\r\nX-Evil: 1\n", 15), 15);
        close(fd);
        ck_assert_int_eq(nsscache_conf_load_token(c, &tok, &err), -EINVAL);
        unlink(path);
        unsetenv(SCIM_AUTH_TOKEN_ENV);
}
END_TEST

/* The plain-http rule is decided on the host libcurl will connect to. */
static const struct {
        const char *url;
        const char *error; /* NULL: accepted */
} urls[] = {
        { "http://127.0.0.1:x@127.0.0.2/scim", "must not contain a user name" },
        { "http://127.0.0.1@evil.example/scim", "must not contain a user name" },
        { "https://user:pw@scim.example/v2", "must not contain a user name" },
        { "http://@127.0.0.1/v2", "must not contain a user name" },
        { "http://:@127.0.0.1/v2", "must not contain a user name" },
        { "http://127.0.0.1\\@evil.example/v2", "must not contain a user name" },
        { "http://[::1]/v2", NULL },
        { "http://[::1]:8080/v2", NULL },
        { "http://[0:0:0:0:0:0:0:1]/v2", NULL },
        { "http://[::2]/v2", "plain http:// is only accepted" },
        { "http://[fe80::1]/v2", "plain http:// is only accepted" },
        { "http://2130706433/v2", NULL },
        { "http://0x7f000001/v2", NULL },
        { "http://127.1/v2", NULL },
        { "http://127.0.0.2:99/v2", NULL },
        { "http://3232235777/v2", "plain http:// is only accepted" }, /* 192.168.1.1 */
        { "http://0x7f000001.evil.example/v2", "plain http:// is only accepted" },
        { "http://127.0.0.1.evil.example/v2", "plain http:// is only accepted" },
        { "http://localhost.evil.example/v2", "plain http:// is only accepted" },
        { "http://localhost/v2", NULL },
        { "HTTP://LOCALHOST:80/v2", NULL },
        { "Http://127.0.0.1/v2", NULL },
        { "http://localhost./v2", "plain http:// is only accepted" },
        { "http://127.0.0.1./v2", "plain http:// is only accepted" },
        { "http://scim.example/v2", "plain http:// is only accepted" },
        { "HTTPS://SCIM.EXAMPLE/v2", NULL },
        { "https://203.0.113.9:8443/scim/v2", NULL },
        { "https://scim.example./v2", NULL },
        { "ftp://127.0.0.1/v2", "must be https://" },
        { "file:///etc/passwd", "must be https://" },
        { "127.0.0.1/v2", "must be https://" },
        { "http://", "must be https://" },
        { "http://[::1/v2", "must be https://" },
        { "http://<host>/v2", "is a placeholder" },
        { "https://<platform-host>/api/scim/v2", "is a placeholder" },
        { "https://<platform-host>/api/organizations/<organization>/scim/v2", "is a placeholder" },
        { "https://scim.example/api/organizations/<organization>/scim/v2", "is a placeholder" },
        { "https://scim.example/api/organizations/org>/scim/v2", "is a placeholder" },
        { "https://$PLATFORM_HOST/api/scim/v2", "is a placeholder or its host cannot be parsed" },
        { "https://{platform-host}/api/scim/v2", "is a placeholder or its host cannot be parsed" },
        { "https://u@<platform-host>/api/scim/v2", "must not contain a user name" },
        { "https://u@scim.example/<organization>/v2", "must not contain a user name" },
};

START_TEST(test_base_url) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL, *text = NULL;
        int r;

        ck_assert_int_ge(
                asprintf(&text, "[DEFAULT]\nmaps=group\nscim_path_gid=g\nscim_base_url=%s\n", urls[_i].url),
                0);
        r = parse(text, &c, &err);
        if (!urls[_i].error) {
                ck_assert_msg(r == 0, "%s: %s", urls[_i].url, err);
                return;
        }
        ck_assert_msg(r == -EINVAL, "%s: accepted", urls[_i].url);
        ck_assert_msg(strstr(err, urls[_i].error), "%s: got '%s', want '%s'", urls[_i].url, err,
                      urls[_i].error);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("nsscache-conf");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_seed);
        tcase_add_test(tc, test_precedence_and_escapes);
        tcase_add_test(tc, test_netgroup);
        tcase_add_loop_test(tc, test_bad, 0, sizeof(bad) / sizeof(bad[0]));
        tcase_add_loop_test(tc, test_durations, 0, sizeof(durations) / sizeof(durations[0]));
        tcase_add_test(tc, test_every_error);
        tcase_add_test(tc, test_hostile);
        tcase_add_loop_test(tc, test_base_url, 0, sizeof(urls) / sizeof(urls[0]));
        tcase_add_test(tc, test_token);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
