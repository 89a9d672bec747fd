/* nsscache.conf and the YAML section, into one NsscacheConf.
 *
 * Sites already run nsscache with a SCIM source, so sunkd reads their
 * nsscache.conf unchanged and means the same thing by it: Python's
 * ConfigParser with BasicInterpolation ("%%" is "%", "%(key)s" is another
 * key of the same section or [DEFAULT]), option names folded to lower case,
 * duplicate sections or options refused, values with matching surrounding
 * quotes stripped (nsscache's FixValue), and for each map the [DEFAULT]
 * value overridden by the map's own section.  What nsscache would silently
 * ignore (a typo, a key of another source, an unknown section) is an error
 * here, because a misspelt scim_path_uid would otherwise publish wrong ids.
 *
 * The file is parsed in two passes: first into (section, key, value, line)
 * entries, so interpolation and the DEFAULT-before-section order do not
 * depend on where lines sit; then each entry is applied through one key
 * table.  Keys that only make sense once per run (the URL, the token, the
 * maps) must sit in [DEFAULT]: sunkd fetches Users once for passwd, shadow
 * and sshkey, so they cannot differ per map.
 *
 * The YAML side uses the host's cfg_parse with the same field offsets, into
 * a scratch config, and then moves only the keys the section really names
 * over the INI/default values, so "YAML overrides nsscache.conf" holds key
 * by key.  The checks across keys are nsscache-conf-check.c's.  Nothing
 * here logs.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"
#include "nsscache-conf-internal.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/secret-file.h"
#include "util/spell.h"
#include "util/strv.h"
#include "util/time-util.h"
#include "util/trusted-path.h"

/* Every key once, for both files: its name in nsscache.conf and in sunkd.yaml
 * (NULL where that file does not take it: nsscache.conf keeps nsscache's
 * names, sunkd.yaml adds sunkd's own settings), its type, and its field in
 * NsscacheConf, or with KEY_MAP in each map's ScimMapConf ([DEFAULT] or a map
 * section; DEFAULT: or passwd: ... in YAML).  The YAML tables the host parses
 * are derived from it (yaml_keys()). */
typedef enum KeyFlags {
        KEY_MAP = 1 << 0,   /* per map */
        KEY_EMPTY = 1 << 1, /* nsscache.conf: an empty value is -1 (unset), as nsscache's shadow defaults */
        KEY_SAME = 1 << 2,  /* nsscache.conf: in a map section only with the value [DEFAULT] gave it */
} KeyFlags;

typedef struct NsscacheKey {
        const char *ini, *yaml;
        sunkd_cfg_type type;
        unsigned flags;
        size_t offset;
        int64_t min, max;  /* INT range; SECRET: the longest */
        const char *fixed; /* nsscache.conf accepts only this value */
} NsscacheKey;

#define K(i, y, t, f)                                                                                       \
        { i, y, t, 0, offsetof(NsscacheConf, f), 0, 0, NULL }
#define KI(i, y, f, lo, hi)                                                                                 \
        { i, y, SUNKD_CFG_INT, 0, offsetof(NsscacheConf, f), lo, hi, NULL }
#define KF(i, f, v)                                                                                         \
        { i, i, SUNKD_CFG_STRING, 0, offsetof(NsscacheConf, f), 0, 0, v }
#define KM(k, t, f)                                                                                         \
        { k, k, t, KEY_MAP, offsetof(ScimMapConf, f), 0, 0, NULL }
#define KS(k, f)                                                                                            \
        { k, k, SUNKD_CFG_INT, KEY_MAP | KEY_EMPTY, offsetof(ScimMapConf, f), -1, INT32_MAX, NULL }

static const NsscacheKey keys[] = {
        K(NULL, "nsscache_conf", SUNKD_CFG_PATH, nsscache_conf),
        { "source", "source", SUNKD_CFG_STRING, KEY_SAME, offsetof(NsscacheConf, source), 0, 0, NULL },
        KF("cache", cache, "files"),
        K("maps", "maps", SUNKD_CFG_LIST, maps),
        K("files_dir", "files_dir", SUNKD_CFG_PATH, files_dir),
        K("files_cache_filename_suffix", "files_cache_filename_suffix", SUNKD_CFG_STRING,
          files_cache_filename_suffix),
        K("timestamp_dir", "timestamp_dir", SUNKD_CFG_PATH, timestamp_dir),
        K("lockfile", NULL, SUNKD_CFG_PATH, lockfile),
        K("scim_base_url", "scim_base_url", SUNKD_CFG_STRING, base_url),
        K("scim_users_endpoint", "scim_users_endpoint", SUNKD_CFG_STRING, users_endpoint),
        K("scim_groups_endpoint", "scim_groups_endpoint", SUNKD_CFG_STRING, groups_endpoint),
        K("scim_users_parameters", "scim_users_parameters", SUNKD_CFG_STRING, users_parameters),
        K("scim_groups_parameters", "scim_groups_parameters", SUNKD_CFG_STRING, groups_parameters),
        { "scim_auth_token", "scim_auth_token", SUNKD_CFG_SECRET, 0, offsetof(NsscacheConf, auth_token), 0,
          SCIM_TOKEN_MAX, NULL },
        K("scim_timeout", "timeout", SUNKD_CFG_DURATION, timeout_usec),
        K("scim_verify_ssl", "tls_verify", SUNKD_CFG_BOOL, tls_verify),
        KI("scim_retry_max", "scim_retry_max", retry_max, 0, 10),
        K("scim_retry_delay", "scim_retry_delay", SUNKD_CFG_DURATION, retry_delay_usec),
        K("http_passwd_url", "http_passwd_url", SUNKD_CFG_STRING, http_url[NSS_MAP_PASSWD]),
        K("http_shadow_url", "http_shadow_url", SUNKD_CFG_STRING, http_url[NSS_MAP_SHADOW]),
        K("http_group_url", "http_group_url", SUNKD_CFG_STRING, http_url[NSS_MAP_GROUP]),
        K("http_sshkey_url", "http_sshkey_url", SUNKD_CFG_STRING, http_url[NSS_MAP_SSHKEY]),
        K("http_netgroup_url", "http_netgroup_url", SUNKD_CFG_STRING, http_url[NSS_MAP_NETGROUP]),
        K("http_automount_base_url", "http_automount_base_url", SUNKD_CFG_STRING,
          http_url[NSS_MAP_AUTOMOUNT]),
        /* nsscache strips the source's "http_" from its keys and then reads "http_proxy" */
        K("http_http_proxy", "http_proxy", SUNKD_CFG_STRING, http_proxy),
        KI("http_retry_max", "http_retry_max", http_retry_max, 1, 10),
        K("http_retry_delay", "http_retry_delay", SUNKD_CFG_DURATION, http_retry_delay_usec),
        K(NULL, "http_max_size", SUNKD_CFG_SIZE, http_max_size),
        K(NULL, "manifest_url", SUNKD_CFG_STRING, manifest_url),
        K(NULL, "manifest_public_key", SUNKD_CFG_STRING, manifest_public_key),
        K(NULL, "manifest_max_age", SUNKD_CFG_DURATION, manifest_max_age_usec),
        K(NULL, "export_dir", SUNKD_CFG_PATH, export_dir),
        K(NULL, "export_resign_interval", SUNKD_CFG_DURATION, export_resign_usec),
        K(NULL, "export_signing_key", SUNKD_CFG_PATH, export_signing_key),
        K(NULL, "export_s3_url", SUNKD_CFG_STRING, export_s3_url),
        K("s3_bucket", "s3_bucket", SUNKD_CFG_STRING, s3_bucket),
        K("s3_passwd_object", "s3_passwd_object", SUNKD_CFG_STRING, s3_object[NSS_MAP_PASSWD]),
        K("s3_shadow_object", "s3_shadow_object", SUNKD_CFG_STRING, s3_object[NSS_MAP_SHADOW]),
        K("s3_group_object", "s3_group_object", SUNKD_CFG_STRING, s3_object[NSS_MAP_GROUP]),
        K("s3_sshkey_object", "s3_sshkey_object", SUNKD_CFG_STRING, s3_object[NSS_MAP_SSHKEY]),
        K(NULL, "s3_endpoint", SUNKD_CFG_STRING, s3_endpoint),
        K(NULL, "s3_region", SUNKD_CFG_STRING, s3_region),
        K(NULL, "s3_credentials_file", SUNKD_CFG_PATH, s3_credentials_file),
        K("ldap_uri", "ldap_uri", SUNKD_CFG_STRING, ldap_uri),
        K("ldap_bind_dn", "ldap_bind_dn", SUNKD_CFG_STRING, ldap_bind_dn),
        { "ldap_bind_password", "ldap_bind_password", SUNKD_CFG_SECRET, 0,
          offsetof(NsscacheConf, ldap_bind_password), 0, SCIM_TOKEN_MAX, NULL },
        K(NULL, "ldap_bind_password_file", SUNKD_CFG_PATH, ldap_bind_password_file),
        KI("ldap_timelimit", "ldap_timelimit", ldap_timelimit, -1, 86400),
        KI("ldap_retry_max", "ldap_retry_max", ldap_retry_max, 1, 10),
        K("ldap_retry_delay", "ldap_retry_delay", SUNKD_CFG_DURATION, ldap_retry_delay_usec),
        K("ldap_tls_require_cert", "ldap_tls_require_cert", SUNKD_CFG_STRING, ldap_tls_require_cert),
        K("ldap_tls_starttls", "ldap_tls_starttls", SUNKD_CFG_BOOL, ldap_tls_starttls),
        K("ldap_tls_cacertfile", "ldap_tls_cacertfile", SUNKD_CFG_PATH, ldap_tls_cacertfile),
        K("ldap_tls_cacertdir", "ldap_tls_cacertdir", SUNKD_CFG_PATH, ldap_tls_cacertdir),
        K("ldap_tls_certfile", "ldap_tls_certfile", SUNKD_CFG_PATH, ldap_tls_certfile),
        K("ldap_tls_keyfile", "ldap_tls_keyfile", SUNKD_CFG_PATH, ldap_tls_keyfile),
        K("ldap_rfc2307bis", "ldap_rfc2307bis", SUNKD_CFG_BOOL, ldap_rfc2307bis),
        K("ldap_ad", "ldap_ad", SUNKD_CFG_BOOL, ldap_ad),
        KM("ldap_base", SUNKD_CFG_STRING, ldap_base),
        KM("ldap_filter", SUNKD_CFG_STRING, ldap_filter),
        KM("ldap_scope", SUNKD_CFG_STRING, ldap_scope),
        KM("ldap_nested_groups", SUNKD_CFG_BOOL, ldap_nested_groups),
        K(NULL, "token_file", SUNKD_CFG_PATH, token_file),
        K("http_tls_cacertfile", "ca_file", SUNKD_CFG_PATH, ca_file),
        KI(NULL, "page_size", page_size, 1, 10000),
        KI(NULL, "min_uid", min_uid, 1, INT32_MAX),
        KI(NULL, "min_gid", min_gid, 1, INT32_MAX),
        KI(NULL, "min_entries", min_entries, 0, INT32_MAX),
        KI(NULL, "max_shrink_pct", max_shrink_pct, 0, 100),
        K(NULL, "local_passwd", SUNKD_CFG_PATH, local_passwd),
        K(NULL, "local_group", SUNKD_CFG_PATH, local_group),
        KI(NULL, "max_total_results", max_total_results, 1, SCIM_MAX_TOTAL_RESULTS_MAX),
        K(NULL, "pagination", SUNKD_CFG_STRING, pagination),
        K(NULL, "interval", SUNKD_CFG_DURATION, interval_usec),
        K(NULL, "splay", SUNKD_CFG_DURATION, splay_usec),
        KM("scim_path_username", SUNKD_CFG_STRING, path_username),
        KM("scim_path_uid", SUNKD_CFG_STRING, path_uid),
        KM("scim_path_gid", SUNKD_CFG_STRING, path_gid),
        KM("scim_path_gecos", SUNKD_CFG_STRING, path_gecos),
        KM("scim_path_home_directory", SUNKD_CFG_STRING, path_home_directory),
        KM("scim_path_login_shell", SUNKD_CFG_STRING, path_login_shell),
        KM("scim_path_ssh_keys", SUNKD_CFG_STRING, path_ssh_keys),
        KM("scim_path_groupname", SUNKD_CFG_STRING, path_groupname),
        KM("scim_default_shell", SUNKD_CFG_PATH, default_shell),
        KM("scim_override_home_directory", SUNKD_CFG_STRING, override_home_directory),
        KS("scim_shadow_default_lstchg", shadow_lstchg),
        KS("scim_shadow_default_min", shadow_min),
        KS("scim_shadow_default_max", shadow_max),
        KS("scim_shadow_default_warn", shadow_warn),
        KS("scim_shadow_default_inact", shadow_inact),
        KS("scim_shadow_default_expire", shadow_expire),
        KS("scim_shadow_default_flag", shadow_flag),
};

#undef K
#undef KI
#undef KF
#undef KM
#undef KS

/* The YAML section: top-level keys into the config, the map sub-sections
 * kept as nodes and parsed into each ScimMapConf afterwards. */
typedef struct YamlConf {
        NsscacheConf c;
        const sunkd_cfg *maps_cfg[_NSS_MAP_MAX + 1]; /* last one is DEFAULT */
} YamlConf;

/* Offsets into YamlConf are offsets into its NsscacheConf. */
_Static_assert(offsetof(YamlConf, c) == 0, "YamlConf.c must come first");

static const char *const yaml_map_sections[_NSS_MAP_MAX + 1] = {
        [NSS_MAP_PASSWD] = "passwd", [NSS_MAP_SHADOW] = "shadow",     [NSS_MAP_GROUP] = "group",
        [NSS_MAP_SSHKEY] = "sshkey", [NSS_MAP_NETGROUP] = "netgroup", [NSS_MAP_AUTOMOUNT] = "automount",
        [_NSS_MAP_MAX] = "DEFAULT",
};

#define N_YAML_KEYS_MAX (ELEMENTSOF(keys) + _NSS_MAP_MAX + 1)

/* The host's key table for the top level (@map false: with the map
 * sub-sections) or for one map sub-section. */
static size_t yaml_keys(bool map, sunkd_cfg_key ret[static N_YAML_KEYS_MAX]) {
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (keys[i].yaml && !!(keys[i].flags & KEY_MAP) == map)
                        /* A reload re-reads a changed nsscache.conf, even with sunkd.yaml unchanged. */
                        ret[n++] = (sunkd_cfg_key){
                                keys[i].yaml,
                                keys[i].type,
                                keys[i].offset,
                                keys[i].offset == offsetof(NsscacheConf, nsscache_conf) && !map ? SUNKD_CFG_RELOAD_FILE : 0,
                                keys[i].min,
                                keys[i].max
                        };
        if (!map)
                for (size_t m = 0; m <= _NSS_MAP_MAX; m++)
                        ret[n++] = (sunkd_cfg_key){
                                yaml_map_sections[m], SUNKD_CFG_MAP, offsetof(YamlConf, maps_cfg[m]), 0, 0, 0
                        };
        return n;
}

static void map_conf_done(ScimMapConf *m) {
        free(m->path_username);
        free(m->path_uid);
        free(m->path_gid);
        free(m->path_gecos);
        free(m->path_home_directory);
        free(m->path_login_shell);
        free(m->path_ssh_keys);
        free(m->path_groupname);
        free(m->default_shell);
        free(m->override_home_directory);
        free(m->ldap_base);
        free(m->ldap_filter);
        free(m->ldap_scope);
        free(m->files_suffix);
        memset(m, 0, sizeof(*m));
}

static void map_conf_init(ScimMapConf *m) {
        *m = (ScimMapConf){
                .shadow_lstchg = -1,
                .shadow_min = -1,
                .shadow_max = -1,
                .shadow_warn = -1,
                .shadow_inact = -1,
                .shadow_expire = -1,
                .shadow_flag = -1,
        };
}

NsscacheConf *nsscache_conf_free(NsscacheConf *c) {
        if (!c)
                return NULL;
        free(c->source);
        free(c->cache);
        strv_free(c->maps);
        strv_free(c->ini_origins);
        free(c->ini_file);
        free(c->files_dir);
        free(c->files_cache_filename_suffix);
        free(c->timestamp_dir);
        free(c->lockfile);
        free(c->base_url);
        free(c->users_endpoint);
        free(c->groups_endpoint);
        free(c->users_parameters);
        free(c->groups_parameters);
        erase_and_free(c->auth_token);
        free(c->ldap_uri);
        free(c->ldap_bind_dn);
        erase_and_free(c->ldap_bind_password);
        free(c->ldap_bind_password_file);
        free(c->ldap_tls_require_cert);
        free(c->ldap_tls_cacertfile);
        free(c->ldap_tls_cacertdir);
        free(c->ldap_tls_certfile);
        free(c->ldap_tls_keyfile);
        free(c->nsscache_conf);
        free(c->token_file);
        free(c->ca_file);
        free(c->local_passwd);
        free(c->local_group);
        free(c->pagination);
        free(c->http_proxy);
        free(c->manifest_url);
        free(c->manifest_public_key);
        free(c->export_dir);
        free(c->export_signing_key);
        free(c->export_s3_url);
        free(c->s3_bucket);
        free(c->s3_endpoint);
        free(c->s3_region);
        free(c->s3_credentials_file);
        for (size_t i = 0; i < _NSS_MAP_MAX; i++) {
                map_conf_done(&c->map[i]);
                free(c->http_url[i]);
                free(c->s3_object[i]);
        }
        free(c);
        return NULL;
}

static int strdup_to(char **dst, const char *s) {
        char *t = strdup(s);

        if (!t)
                return -ENOMEM;
        free(*dst);
        *dst = t;
        return 0;
}

uint64_t nsscache_conf_manifest_max_age(const NsscacheConf *c) {
        return (c->manifest_max_age_usec == MANIFEST_MAX_AGE_UNSET ? MANIFEST_MAX_AGE_DEFAULT_USEC
                                                                   : c->manifest_max_age_usec) /
               SUNKD_USEC_PER_SEC;
}

int nsscache_conf_new(NsscacheConf **ret) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        static const char *const default_maps[] = { "passwd", "shadow", "group", "sshkey" };

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < _NSS_MAP_MAX; i++)
                map_conf_init(&c->map[i]);
        if (strdup_to(&c->source, "scim") < 0 || strdup_to(&c->cache, "files") < 0 ||
            strdup_to(&c->files_dir, "/etc") < 0 ||
            strdup_to(&c->files_cache_filename_suffix, "cache") < 0 ||
            strdup_to(&c->timestamp_dir, "/var/lib/nsscache") < 0 ||
            strdup_to(&c->users_endpoint, "Users") < 0 || strdup_to(&c->groups_endpoint, "Groups") < 0 ||
            strdup_to(&c->local_passwd, "/etc/passwd") < 0 || strdup_to(&c->local_group, "/etc/group") < 0 ||
            strdup_to(&c->pagination, "auto") < 0)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(default_maps); i++)
                if (strv_extend(&c->maps, default_maps[i]) < 0)
                        return -ENOMEM;
        c->tls_verify = true;
        c->timeout_usec = NSSCACHE_TIMEOUT_DEFAULT_USEC;
        c->retry_max = SCIM_RETRY_MAX_DEFAULT;
        c->retry_delay_usec = SCIM_RETRY_DELAY_DEFAULT_USEC;
        c->page_size = SCIM_PAGE_SIZE_DEFAULT;
        c->http_retry_max = HTTP_RETRY_MAX_DEFAULT;
        c->http_retry_delay_usec = HTTP_RETRY_DELAY_DEFAULT_USEC;
        c->http_max_size = HTTP_MAX_SIZE_DEFAULT;
        c->max_total_results = SCIM_MAX_TOTAL_RESULTS_DEFAULT;
        c->min_uid = NSSCACHE_MIN_ID_DEFAULT;
        c->min_gid = NSSCACHE_MIN_ID_DEFAULT;
        c->max_shrink_pct = NSSCACHE_MAX_SHRINK_PCT_DEFAULT;
        c->interval_usec = 15 * 60 * SUNKD_USEC_PER_SEC;
        c->splay_usec = 60 * SUNKD_USEC_PER_SEC;
        c->export_resign_usec = EXPORT_RESIGN_DEFAULT_USEC;
        c->ldap_timelimit = -1;
        c->ldap_retry_max = LDAP_RETRY_MAX_DEFAULT;
        c->ldap_retry_delay_usec = LDAP_RETRY_DELAY_DEFAULT_USEC;
        c->manifest_max_age_usec = MANIFEST_MAX_AGE_UNSET;
        *ret = TAKE_PTR(c);
        return 0;
}
/* ---- value parsing --------------------------------------------------- */

static int parse_int(const char *s, int64_t min, int64_t max, int64_t *ret) {
        int64_t v = 0;
        bool neg = false;

        if (*s == '-') {
                neg = true;
                s++;
        }
        if (!*s)
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                if (v > (INT64_MAX - (*s - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (*s - '0');
        }
        if (neg)
                v = -v;
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

static int parse_bool(const char *s, bool *ret) {
        static const char *const yes[] = { "1", "yes", "true", "on" };
        static const char *const no[] = { "0", "no", "false", "off" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                if (strcasecmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcasecmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

static bool path_is_safe_absolute(const char *p) {
        const char *s;

        if (!p || p[0] != '/')
                return false;
        for (s = p; (s = strstr(s, "..")); s += 2)
                if ((s == p || s[-1] == '/') && (s[2] == '/' || s[2] == 0))
                        return false;
        return true;
}

static int split_list(const char *s, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        const char *p = s;

        while (*p) {
                const char *e = strchr(p, ',');
                size_t n = e ? (size_t) (e - p) : strlen(p);
                const char *b = p, *f = p + n;
                int r;

                while (b < f && isspace((unsigned char) *b))
                        b++;
                while (f > b && isspace((unsigned char) f[-1]))
                        f--;
                if (f > b) {
                        r = strv_push(&l, strndup(b, (size_t) (f - b)));
                        if (r < 0)
                                return r;
                }
                if (!e)
                        break;
                p = e + 1;
        }
        if (!l && !(l = calloc(1, sizeof(char *))))
                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

static const NsscacheKey *ini_key_find(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (keys[i].ini && streq(keys[i].ini, key))
                        return &keys[i];
        return NULL;
}

/* One value of nsscache.conf into its field, as nsscache reads it: lists
 * comma-separated, durations float seconds, the token inline. */
static int ini_store(const NsscacheKey *k, void *base, const char *v, const IniFile *f, const IniEntry *e,
                     char **ret_error) {
        void *dst = (uint8_t *) base + k->offset;
        int64_t i;
        int r;

        if (nsscache_conf_has_control(v))
                return ini_error(ret_error, f->fname, e->line, k->ini, "control character in value");
        switch (k->type) {
        case SUNKD_CFG_PATH:
                if (!path_is_safe_absolute(v))
                        return ini_error(ret_error, f->fname, e->line, k->ini,
                                         "must be an absolute path without '..'");
                return strdup_to(dst, v);
        case SUNKD_CFG_STRING:
                return strdup_to(dst, v);
        case SUNKD_CFG_SECRET: {
                char *t = strdup(v);
                if (!t)
                        return -ENOMEM;
                erase_and_free(*(char **) dst);
                *(char **) dst = t;
                return 0;
        }
        case SUNKD_CFG_LIST: {
                char **l = NULL;
                r = split_list(v, &l);
                if (r < 0)
                        return r;
                strv_free(*(char ***) dst);
                *(char ***) dst = l;
                return 0;
        }
        case SUNKD_CFG_INT:
                if ((k->flags & KEY_EMPTY) && !*v) {
                        *(int64_t *) dst = -1;
                        return 0;
                }
                r = parse_int(v, (k->flags & KEY_EMPTY) ? 0 : k->min, k->max, &i);
                if (r < 0 && (k->flags & KEY_EMPTY))
                        return ini_error(ret_error, f->fname, e->line, k->ini,
                                         "expected empty or a number of days");
                if (r < 0)
                        return ini_error(ret_error, f->fname, e->line, k->ini,
                                         "expected an integer in [%" PRId64 ", %" PRId64 "]", k->min,
                                         k->max);
                *(int64_t *) dst = i;
                return 0;
        case SUNKD_CFG_BOOL:
                if (parse_bool(v, dst) < 0)
                        return ini_error(ret_error, f->fname, e->line, k->ini, "expected a boolean");
                return 0;
        case SUNKD_CFG_DURATION:
                if (parse_duration_fraction(v, dst) < 0)
                        return ini_error(ret_error, f->fname, e->line, k->ini,
                                         "expected seconds or a duration like 30s");
                return 0;
        default:
                return -EINVAL;
        }
}

/* The nsscache.conf name of a key a check names by its sunkd.yaml name ("timeout": "scim_timeout"). */
const char *nsscache_conf_ini_name(const char *yaml) {
        for (size_t i = 0; yaml && i < ELEMENTSOF(keys); i++)
                if (keys[i].yaml && keys[i].ini && streq(keys[i].yaml, yaml))
                        return keys[i].ini;
        return yaml ?: "";
}

static int ini_note_origin(NsscacheConf *c, const char *section, const char *key, unsigned line) {
        _cleanup_free_ char *o = NULL;

        if (asprintf(&o, "%s/%s=%u", section, key, line) < 0)
                return -ENOMEM;
        return strv_push(&c->ini_origins, TAKE_PTR(o));
}

/* The line of ini_file where @key was set for @section (or in [DEFAULT]); 0 if it was not. */
unsigned nsscache_conf_ini_origin(const NsscacheConf *c, const char *section, const char *key) {
        const char *sections[] = { section, "DEFAULT" };
        size_t kl = strlen(key);

        for (size_t i = 0; i < ELEMENTSOF(sections); i++) {
                size_t sl = strlen(sections[i]);
                for (char **o = c->ini_origins; o && *o; o++)
                        if (strncmp(*o, sections[i], sl) == 0 && (*o)[sl] == '/' &&
                            strncmp(*o + sl + 1, key, kl) == 0 && (*o)[sl + 1 + kl] == '=')
                                return (unsigned) strtoul(*o + sl + 2 + kl, NULL, 10);
        }
        return 0;
}

static const char *section_check(const char *s) {
        if (streq(s, "DEFAULT") || streq(s, "suffix") || (int) nss_map_from_string(s) >= 0)
                return NULL;
        return "unknown section (expected DEFAULT, passwd, shadow, group, sshkey, netgroup or automount)";
}

/* A key no row has: the one it is a slip for, when one is near enough. */
static int ini_unknown(const IniFile *f, const IniEntry *e, char **ret_error) {
        const char *names[ELEMENTSOF(keys)], *near;

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                names[i] = keys[i].ini;
        near = spell_nearest(e->key, names, ELEMENTSOF(keys));
        if (near)
                return ini_error(ret_error, f->fname, e->line, e->key,
                                 "unknown or unsupported key; did you mean '%s'?", near);
        return ini_error(ret_error, f->fname, e->line, e->key, "unknown or unsupported key");
}

/* nsscache's ldap keys sunkd does not take, and why: refused at their line
 * rather than read as an unknown key. */
static const struct {
        const char *key, *why;
} ldap_refused[] = {
        { "ldap_use_sasl", "SASL binds are not supported: GSSAPI needs a Kerberos ticket cache that sunkd "
                           "does not keep; bind with ldap_bind_dn and a password file over TLS" },
        { "ldap_sasl_mech", "SASL binds are not supported (see ldap_use_sasl)" },
        { "ldap_sasl_authzid", "SASL binds are not supported (see ldap_use_sasl)" },
        { "ldap_debug", "not supported: sunkd logs each run's errors itself" },
        { "ldap_uidattr", "not supported: names come from uid (sAMAccountName with ldap_ad)" },
        { "ldap_uidregex", "not supported: a name is taken whole or its entry is rejected" },
        { "ldap_groupregex", "not supported: a member is taken whole or dropped" },
        { "ldap_offset", "not supported: ids are published as the directory holds them" },
        { "ldap_use_rid", "not supported: ids come from uidNumber and gidNumber (the RID with ldap_ad)" },
        { "ldap_home_dir", "not supported: homes come from homeDirectory (unixHomeDirectory with ldap_ad)" },
        { "ldap_override_shell", "not supported: shells come from loginShell" },
        { "ldap_rfc2307bis_alt",
          "not supported: uniqueMember needs a search per member; use ldap_rfc2307bis" },
};

static int ini_apply_entry(NsscacheConf *c, const IniFile *f, const IniEntry *e, char **ret_error) {
        const NsscacheKey *k;
        _cleanup_erase_ char *v = NULL;
        bool is_default = streq(e->section, "DEFAULT");
        int r;

        /* nsscache's example has [suffix] with an empty prefix: its files cache
         * then leaves automount locations as they are */
        if (streq(e->section, "suffix")) {
                if (!streq(e->key, "prefix") && !streq(e->key, "suffix"))
                        return ini_unknown(f, e, ret_error);
                r = ini_value(f, e, &v, ret_error);
                if (r < 0)
                        return r;
                if (streq(e->key, "prefix") && !isempty(v))
                        return ini_error(
                                ret_error, f->fname, e->line, e->key,
                                "not supported: nsscache's [suffix] rewrites automount locations by "
                                "regular expression; only an empty prefix (its example's) is taken");
                return 0;
        }
        /* auto.master from the directory's, nsscache's default; a local one is not read */
        if (streq(e->key, "files_local_automount_master")) {
                r = ini_value(f, e, &v, ret_error);
                if (r < 0)
                        return r;
                if (!streq(v, "no"))
                        return ini_error(ret_error, f->fname, e->line, e->key,
                                         "only 'no' is supported: sunkd writes every map the directory's "
                                         "auto.master names, and auto.master itself");
                return 0;
        }
        k = ini_key_find(e->key);
        if (!k && streq(e->key, "http_proxy"))
                return ini_error(
                        ret_error, f->fname, e->line, e->key,
                        "nsscache ignores this key: its http source reads the proxy from 'http_http_proxy'");
        if (!k && strncmp(e->key, "gcs_", 4) == 0)
                return ini_error(ret_error, f->fname, e->line, e->key, "%s", GCS_HINT);
        for (size_t i = 0; !k && i < ELEMENTSOF(ldap_refused); i++)
                if (streq(e->key, ldap_refused[i].key))
                        return ini_error(ret_error, f->fname, e->line, e->key, "%s", ldap_refused[i].why);
        if (!k)
                return ini_unknown(f, e, ret_error);
        /* nsscache's own example writes the netgroup and automount maps where
         * glibc's files module and autofs read them (/etc/netgroup,
         * /etc/auto.master), with an empty suffix in [netgroup] and [automount] */
        if (streq(e->key, "files_cache_filename_suffix") &&
            (streq(e->section, "netgroup") || streq(e->section, "automount"))) {
                ScimMapConf *m = &c->map[nss_map_from_string(e->section)];

                r = ini_value(f, e, &v, ret_error);
                if (r < 0)
                        return r;
                free(m->files_suffix);
                m->files_suffix = strdup(v);
                if (!m->files_suffix)
                        return -ENOMEM;
                return ini_note_origin(c, e->section, e->key, e->line);
        }
        if (!(k->flags & (KEY_MAP | KEY_SAME)) && !k->fixed && !is_default)
                return ini_error(ret_error, f->fname, e->line, e->key,
                                 "must be set in [DEFAULT] (Users are fetched once for all maps)");
        r = ini_value(f, e, &v, ret_error);
        if (r < 0)
                return r;
        if (k->fixed && !streq(v, k->fixed))
                return ini_error(ret_error, f->fname, e->line, e->key, "only '%s' is supported, not '%s'",
                                 k->fixed, v);
        if ((k->flags & KEY_SAME) && streq(v, "gcs"))
                return ini_error(ret_error, f->fname, e->line, e->key, "%s", GCS_HINT);
        if ((k->flags & KEY_SAME) && !nsscache_source_find(v))
                return ini_error(ret_error, f->fname, e->line, e->key,
                                 "only 'scim', 'ldap', 'http' and 's3' are supported, not '%s'", v);
        if ((k->flags & KEY_SAME) && !is_default && !streq_ptr(v, *(char **) ((uint8_t *) c + k->offset)))
                return ini_error(ret_error, f->fname, e->line, e->key,
                                 "every map must have the one set in [DEFAULT] (sunkd reads all maps from "
                                 "one source)");
        if (!(k->flags & KEY_MAP))
                r = ini_store(k, c, v, f, e, ret_error);
        else if (is_default)
                for (size_t i = 0; i < _NSS_MAP_MAX && r >= 0; i++)
                        r = ini_store(k, &c->map[i], v, f, e, ret_error);
        else
                r = ini_store(k, &c->map[nss_map_from_string(e->section)], v, f, e, ret_error);
        if (r < 0)
                return r;
        return ini_note_origin(c, e->section, k->ini, e->line);
}

int nsscache_conf_parse_ini(NsscacheConf *c, const char *text, size_t len, const char *fname,
                            char **ret_error) {
        _cleanup_(ini_file_done) IniFile f = { .fname = fname ?: "nsscache.conf" };
        _cleanup_free_ char *all = NULL;
        int first = 0, r;

        r = ini_read(&f, text, len, section_check, ret_error);
        if (r < 0)
                return r;
        r = strdup_to(&c->ini_file, f.fname);
        if (r < 0)
                return r;
        /* [DEFAULT] first, then the map sections override it; past a bad
         * key to the last, so that one round shows every error of the file. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < f.n; i++) {
                        char *e = NULL;

                        if (streq(f.entries[i].section, "DEFAULT") != (pass == 0))
                                continue;
                        r = ini_apply_entry(c, &f, &f.entries[i], &e);
                        if (errloc_join(&all, &first, r, e) == -ENOMEM)
                                return -ENOMEM;
                }
        if (first < 0 && ret_error)
                *ret_error = TAKE_PTR(all);
        return first;
}

/* nsscache.conf's text.  A file that is missing, unreadable or not trusted is
 * the fault of the key that named it, which the caller locates; the errors
 * name the file only. */
static int ini_file_read(const char *path, char **ret_text, size_t *ret_len, char **ret_error) {
        int r;

        r = trusted_path_check(path, "config file", 0, ret_error);
        if (r == -EPERM || r == -ENOMEM)
                return r;
        if (r >= 0)
                r = fileio_read(path, NSSCACHE_CONF_FILE_MAX, ret_text, ret_len);
        if (r == -EFBIG)
                return errmsg_set(ret_error, -EINVAL, "'%s' is larger than %d bytes", path,
                                  NSSCACHE_CONF_FILE_MAX);
        if (r < 0)
                return errmsg_set(ret_error, r, "cannot read '%s': %s", path, strerror(-r));
        return 0;
}

/* Prefixes *ret_error with where @node is and "key '@key': ". */
static void error_locate(const sunkd_host_api *api, const sunkd_cfg *node, const char *key,
                         char **ret_error) {
        _cleanup_free_ char *where = NULL;
        char *msg;

        if (!ret_error || !*ret_error || !node || api->cfg_where(node, &where) < 0)
                return;
        if (asprintf(&msg, "%s: key '%s': %s", where, key, *ret_error) < 0)
                return;
        free(*ret_error);
        *ret_error = msg;
}

/* @path's syntax errors point into it; the others, when sunkd.yaml names it
 * (@named_by, the nsscache_conf key), at that key. */
static int ini_load(NsscacheConf *c, const char *path, const sunkd_host_api *api, const sunkd_cfg *named_by,
                    char **ret_error) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r;

        r = ini_file_read(path, &text, &len, ret_error);
        if (r < 0) {
                if (named_by)
                        error_locate(api, named_by, "nsscache_conf", ret_error);
                return r;
        }
        r = nsscache_conf_parse_ini(c, text, len, path, ret_error);
        explicit_bzero(text, len);
        return r;
}

int nsscache_conf_load_ini(NsscacheConf *c, const char *path, char **ret_error) {
        return ini_load(c, path, NULL, NULL, ret_error);
}

/* ---- YAML --------------------------------------------------------------- */

static void yaml_move(const sunkd_cfg_key *k, void *dst_base, void *src_base) {
        void *dst = (uint8_t *) dst_base + k->offset, *src = (uint8_t *) src_base + k->offset;

        switch (k->type) {
        case SUNKD_CFG_SECRET:
                erase_and_free(*(char **) dst);
                *(char **) dst = TAKE_PTR(*(char **) src);
                break;
        case SUNKD_CFG_STRING:
        case SUNKD_CFG_PATH:
                free(*(char **) dst);
                *(char **) dst = TAKE_PTR(*(char **) src);
                break;
        case SUNKD_CFG_LIST:
                strv_free(*(char ***) dst);
                *(char ***) dst = TAKE_PTR(*(char ***) src);
                break;
        case SUNKD_CFG_INT:
                *(int64_t *) dst = *(int64_t *) src;
                break;
        case SUNKD_CFG_BOOL:
                *(bool *) dst = *(bool *) src;
                break;
        case SUNKD_CFG_DURATION:
        case SUNKD_CFG_SIZE:
                *(uint64_t *) dst = *(uint64_t *) src;
                break;
        case SUNKD_CFG_MAP:
        case SUNKD_CFG_SEQUENCE:
                break;
        }
}
static int yaml_apply_map(ScimMapConf *dst, const sunkd_host_api *api, const sunkd_cfg *node,
                          char **ret_error) {
        sunkd_cfg_key k[N_YAML_KEYS_MAX];
        size_t n = yaml_keys(true, k);
        ScimMapConf tmp;
        int r;

        map_conf_init(&tmp);
        r = api->cfg_parse(node, k, n, &tmp, ret_error);
        if (r >= 0)
                for (size_t i = 0; i < n; i++)
                        if (api->cfg_get(node, k[i].key))
                                yaml_move(&k[i], dst, &tmp);
        map_conf_done(&tmp);
        return r;
}

/* Every step of the section, past the first that fails, so that one round
 * shows every error of the section and of the file it names, joined in
 * *@all (errloc_join).  Return: -ENOMEM, else 0. */
static int yaml_apply_steps(NsscacheConf *c, const sunkd_host_api *api, const sunkd_cfg *cfg, YamlConf *y,
                            const sunkd_cfg_key *k, size_t n, char **all, int *first) {
        char *e = NULL;
        int r;

        r = api->cfg_parse(cfg, k, n, y, &e);
        if (errloc_join(all, first, r, TAKE_PTR(e)) == -ENOMEM)
                return -ENOMEM;
        if (y->c.nsscache_conf) {
                r = ini_load(c, y->c.nsscache_conf, api, api->cfg_get(cfg, "nsscache_conf"), &e);
                if (errloc_join(all, first, r, TAKE_PTR(e)) == -ENOMEM)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                if (api->cfg_get(cfg, k[i].key))
                        yaml_move(&k[i], c, &y->c);
        /* DEFAULT first, then each map's own section; DEFAULT's errors are
         * said once, not once a map. */
        for (size_t m = 0; m < _NSS_MAP_MAX && y->maps_cfg[_NSS_MAP_MAX]; m++) {
                r = yaml_apply_map(&c->map[m], api, y->maps_cfg[_NSS_MAP_MAX], &e);
                if (m > 0 && r != -ENOMEM)
                        r = 0;
                if (errloc_join(all, first, r, TAKE_PTR(e)) == -ENOMEM)
                        return -ENOMEM;
        }
        for (size_t m = 0; m < _NSS_MAP_MAX; m++) {
                if (!y->maps_cfg[m])
                        continue;
                r = yaml_apply_map(&c->map[m], api, y->maps_cfg[m], &e);
                if (errloc_join(all, first, r, TAKE_PTR(e)) == -ENOMEM)
                        return -ENOMEM;
        }
        return 0;
}

int nsscache_conf_apply_cfg(NsscacheConf *c, const sunkd_host_api *api, const sunkd_cfg *cfg,
                            char **ret_error) {
        sunkd_cfg_key k[N_YAML_KEYS_MAX];
        size_t n = yaml_keys(false, k);
        _cleanup_free_ char *all = NULL;
        int first = 0, r;
        YamlConf *y;

        y = calloc(1, sizeof(*y));
        if (!y)
                return -ENOMEM;
        for (size_t i = 0; i < _NSS_MAP_MAX; i++)
                map_conf_init(&y->c.map[i]);
        r = yaml_apply_steps(c, api, cfg, y, k, n, &all, &first);
        if (r >= 0 && first < 0) {
                r = first;
                if (ret_error)
                        *ret_error = TAKE_PTR(all);
        } else if (r >= 0) /* the checks across keys once each key is good */
                r = nsscache_conf_check_located(c, api, cfg, ret_error);
        for (size_t i = 0; i < _NSS_MAP_MAX; i++)
                map_conf_done(&y->c.map[i]);
        api->cfg_clear(k, n, y);
        free(y);
        return r;
}

/* ---- token --------------------------------------------------------------- */

/* @t without surrounding white space into *ret; @what names where it came
 * from in an error ("PATH: token is empty"), NULL for no name. */
static int token_clean(const char *t, char **ret, char **ret_error, const char *what) {
        size_t b = 0, e = strlen(t);

        while (b < e && isspace((unsigned char) t[b]))
                b++;
        while (e > b && isspace((unsigned char) t[e - 1]))
                e--;
        if (e == b)
                return errmsg_set(ret_error, -ENOKEY, "%s%stoken is empty", what ?: "", what ? ": " : "");
        for (size_t i = b; i < e; i++)
                if ((unsigned char) t[i] < 0x20 || t[i] == 0x7f)
                        return errmsg_set(ret_error, -EINVAL, "%s%scontrol character in token", what ?: "",
                                          what ? ": " : "");
        *ret = strndup(t + b, e - b);
        return *ret ? 0 : -ENOMEM;
}

/* The token as each run takes it, and in *ret_key the key it came from
 * (NULL: the environment, or none), which the callers name before an error:
 * the file's is "'PATH': reason", scim_auth_token's the reason alone. */
int nsscache_conf_token_read(const NsscacheConf *c, char **ret_token, char **ret_error,
                             const char **ret_key) {
        _cleanup_erase_ char *buf = NULL;
        const char *env;
        int r;

        *ret_key = NULL;
        if (c->token_file) {
                *ret_key = "token_file";
                r = secret_file_read(c->token_file, SCIM_TOKEN_MAX, &buf, ret_error);
                if (r < 0)
                        return r == -ENODATA ? -ENOKEY : r;
                return token_clean(buf, ret_token, ret_error, c->token_file);
        }
        env = secure_getenv(SCIM_AUTH_TOKEN_ENV);
        if (env && *env)
                return token_clean(env, ret_token, ret_error, SCIM_AUTH_TOKEN_ENV);
        if (c->auth_token && *c->auth_token) {
                *ret_key = "scim_auth_token";
                return token_clean(c->auth_token, ret_token, ret_error, NULL);
        }
        return errmsg_set(ret_error, -ENOKEY, "no SCIM token: set token_file, %s or scim_auth_token",
                          SCIM_AUTH_TOKEN_ENV);
}

int nsscache_conf_load_token(const NsscacheConf *c, char **ret_token, char **ret_error) {
        _cleanup_free_ char *msg = NULL;
        const char *key;
        int r;

        /* Read at every refresh, not once: a rotated Secret is picked up. */
        r = nsscache_conf_token_read(c, ret_token, &msg, &key);
        if (r >= 0 || r == -ENOMEM)
                return r;
        if (streq_ptr(key, "token_file"))
                return errmsg_set(ret_error, r, "token_file %s", msg ?: strerror(-r));
        if (key)
                return errmsg_set(ret_error, r, "%s: %s", key, msg ?: strerror(-r));
        return errmsg_set(ret_error, r, "%s", msg ?: strerror(-r));
}

int nsscache_conf_ldap_password(const NsscacheConf *c, char **ret, char **ret_error) {
        _cleanup_erase_ char *buf = NULL;
        const char *env;
        char *p;
        int r;

        *ret = NULL;
        if (c->ldap_bind_password_file) {
                _cleanup_free_ char *msg = NULL;
                size_t n;

                r = secret_file_read(c->ldap_bind_password_file, SCIM_TOKEN_MAX, &buf, &msg);
                if (r < 0)
                        return errmsg_set(ret_error, r, "ldap_bind_password_file %s", msg ?: strerror(-r));
                /* a trailing newline is the file's, not the password's */
                n = strlen(buf);
                while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
                        buf[--n] = 0;
                if (nsscache_conf_has_control(buf))
                        return errmsg_set(ret_error, -EINVAL,
                                          "ldap_bind_password_file '%s': control character in the password",
                                          c->ldap_bind_password_file);
                *ret = TAKE_PTR(buf);
                return 0;
        }
        env = secure_getenv(LDAP_BIND_PASSWORD_ENV);
        if (!env || !*env)
                env = c->ldap_bind_password;
        if (!env)
                return 0;
        p = strdup(env);
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}
