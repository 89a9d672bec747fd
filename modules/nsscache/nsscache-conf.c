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
 * by key.  Nothing here logs.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <curl/curl.h>

#include "ini.h"
#include "manifest.h"
#include "map-export.h"
#include "nsscache-conf.h"
#include "s3-auth.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/secret-file.h"
#include "util/strv.h"
#include "util/time-util.h"
#include "util/trusted-path.h"

static inline void curl_url_cleanupp(CURLU **u) {
        curl_url_cleanup(*u);
}

static inline void curl_freep(char **p) {
        curl_free(*p);
}

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

#define GCS_HINT                                                                                            \
        "nsscache's gcs source is not supported: use source = s3 with s3_endpoint = "                       \
        "https://storage.googleapis.com, s3_bucket and s3_*_object, and an HMAC key of the bucket's "       \
        "service "                                                                                          \
        "account in s3_credentials_file"

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
        [NSS_MAP_PASSWD] = "passwd", [NSS_MAP_SHADOW] = "shadow", [NSS_MAP_GROUP] = "group",
        [NSS_MAP_SSHKEY] = "sshkey", [_NSS_MAP_MAX] = "DEFAULT",
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

static _printf_(2, 0) int set_errorv(char **ret_error, const char *fmt, va_list ap) {
        if (ret_error) {
                free(*ret_error);
                if (vasprintf(ret_error, fmt, ap) < 0)
                        *ret_error = NULL;
        }
        return -EINVAL;
}

static _printf_(2, 3) int set_error(char **ret_error, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = set_errorv(ret_error, fmt, ap);
        va_end(ap);
        return r;
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
        c->timeout_usec = SCIM_TIMEOUT_DEFAULT_USEC;
        c->retry_max = SCIM_RETRY_MAX_DEFAULT;
        c->retry_delay_usec = SCIM_RETRY_DELAY_DEFAULT_USEC;
        c->page_size = SCIM_PAGE_SIZE_DEFAULT;
        c->http_retry_max = HTTP_RETRY_MAX_DEFAULT;
        c->http_retry_delay_usec = HTTP_RETRY_DELAY_DEFAULT_USEC;
        c->http_max_size = HTTP_MAX_SIZE_DEFAULT;
        c->max_total_results = SCIM_MAX_TOTAL_RESULTS_DEFAULT;
        c->min_uid = SCIM_MIN_ID_DEFAULT;
        c->min_gid = SCIM_MIN_ID_DEFAULT;
        c->max_shrink_pct = SCIM_MAX_SHRINK_PCT_DEFAULT;
        c->interval_usec = 15 * 60 * SUNKD_USEC_PER_SEC;
        c->splay_usec = 60 * SUNKD_USEC_PER_SEC;
        c->export_resign_usec = EXPORT_RESIGN_DEFAULT_USEC;
        c->manifest_max_age_usec = MANIFEST_MAX_AGE_UNSET;
        *ret = TAKE_PTR(c);
        return 0;
}

/* ---- value parsing --------------------------------------------------- */

static bool has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

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

        if (has_control(v))
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
static const char *ini_name(const char *yaml) {
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
static unsigned ini_origin(const NsscacheConf *c, const char *section, const char *key) {
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
        if (streq(s, "DEFAULT") || (int) nss_map_from_string(s) >= 0)
                return NULL;
        return "unknown section (expected DEFAULT, passwd, shadow, group or sshkey)";
}

static int ini_apply_entry(NsscacheConf *c, const IniFile *f, const IniEntry *e, char **ret_error) {
        const NsscacheKey *k;
        _cleanup_erase_ char *v = NULL;
        bool is_default = streq(e->section, "DEFAULT");
        int r;

        k = ini_key_find(e->key);
        if (!k && streq(e->key, "http_proxy"))
                return ini_error(
                        ret_error, f->fname, e->line, e->key,
                        "nsscache ignores this key: its http source reads the proxy from 'http_http_proxy'");
        if (!k && strncmp(e->key, "gcs_", 4) == 0)
                return ini_error(ret_error, f->fname, e->line, e->key, "%s", GCS_HINT);
        if (!k)
                return ini_error(ret_error, f->fname, e->line, e->key, "unknown or unsupported key");
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
        if ((k->flags & KEY_SAME) && !streq(v, "scim") && !streq(v, "http") && !streq(v, "s3"))
                return ini_error(ret_error, f->fname, e->line, e->key,
                                 "only 'scim', 'http' and 's3' are supported, not '%s'", v);
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
        int r;

        r = ini_read(&f, text, len, section_check, ret_error);
        if (r < 0)
                return r;
        r = strdup_to(&c->ini_file, f.fname);
        if (r < 0)
                return r;
        /* [DEFAULT] first, then the map sections override it. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < f.n; i++) {
                        if (streq(f.entries[i].section, "DEFAULT") != (pass == 0))
                                continue;
                        r = ini_apply_entry(c, &f, &f.entries[i], ret_error);
                        if (r < 0)
                                return r;
                }
        return 0;
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
                r = fileio_read(path, SCIM_CONF_FILE_MAX, ret_text, ret_len);
        if (r == -EFBIG)
                return set_error(ret_error, "'%s' is larger than %d bytes", path, SCIM_CONF_FILE_MAX);
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

static int conf_check_located(NsscacheConf *c, const sunkd_host_api *api, const sunkd_cfg *cfg,
                              char **ret_error);

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

int nsscache_conf_apply_cfg(NsscacheConf *c, const sunkd_host_api *api, const sunkd_cfg *cfg,
                            char **ret_error) {
        sunkd_cfg_key k[N_YAML_KEYS_MAX];
        size_t n = yaml_keys(false, k);
        YamlConf *y;
        int r;

        y = calloc(1, sizeof(*y));
        if (!y)
                return -ENOMEM;
        for (size_t i = 0; i < _NSS_MAP_MAX; i++)
                map_conf_init(&y->c.map[i]);
        r = api->cfg_parse(cfg, k, n, y, ret_error);
        if (r < 0)
                goto out;
        if (y->c.nsscache_conf) {
                r = ini_load(c, y->c.nsscache_conf, api, api->cfg_get(cfg, "nsscache_conf"), ret_error);
                if (r < 0)
                        goto out;
        }
        for (size_t i = 0; i < n; i++)
                if (api->cfg_get(cfg, k[i].key))
                        yaml_move(&k[i], c, &y->c);
        /* DEFAULT first, then each map's own section. */
        if (y->maps_cfg[_NSS_MAP_MAX])
                for (size_t m = 0; m < _NSS_MAP_MAX && r >= 0; m++)
                        r = yaml_apply_map(&c->map[m], api, y->maps_cfg[_NSS_MAP_MAX], ret_error);
        for (size_t m = 0; m < _NSS_MAP_MAX && r >= 0; m++)
                if (y->maps_cfg[m])
                        r = yaml_apply_map(&c->map[m], api, y->maps_cfg[m], ret_error);
        if (r >= 0)
                r = conf_check_located(c, api, cfg, ret_error);
out:
        for (size_t i = 0; i < _NSS_MAP_MAX; i++)
                map_conf_done(&y->c.map[i]);
        api->cfg_clear(k, n, y);
        free(y);
        return r;
}

/* ---- finalize ------------------------------------------------------------ */

/* Loopback as curl will connect to it: curl_url() has already turned
 * 2130706433, 0x7f000001 and 127.1 into dotted quads.  "localhost." and other
 * names with a trailing dot are not loopback: they may go to DNS. */
static bool url_host_is_loopback(const char *host) {
        struct in6_addr a6;
        struct in_addr a4;
        char buf[INET6_ADDRSTRLEN + 2];
        size_t n = strlen(host);

        if (strcasecmp(host, "localhost") == 0)
                return true;
        if (inet_pton(AF_INET, host, &a4) == 1)
                return (ntohl(a4.s_addr) >> 24) == 127;
        if (n < 3 || n - 2 >= sizeof(buf) || host[0] != '[' || host[n - 1] != ']')
                return false;
        memcpy(buf, host + 1, n - 2);
        buf[n - 2] = 0;
        return inet_pton(AF_INET6, buf, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* Whether the part of @url between "://" and the next '/' holds an '@': a
 * user name, even where libcurl cannot parse the rest. */
static bool url_authority_has_at(const char *url) {
        const char *a = strstr(url, "://");

        return a && memchr(a + 3, '@', strcspn(a + 3, "/"));
}

/* The URL as libcurl parses it, since that is what it will connect to: a
 * string test is fooled by "http://127.0.0.1:x@evil/".  Userinfo is refused
 * outright: credentials belong in the token, not in a URL that gets logged.
 * Return: NULL if acceptable, else why not. */
static const char *base_url_refusal(const char *url) {
        static const CURLUPart userinfo[] = { CURLUPART_USER, CURLUPART_PASSWORD, CURLUPART_OPTIONS };
        _cleanup_(curl_url_cleanupp) CURLU *u = curl_url();
        _cleanup_(curl_freep) char *scheme = NULL, *host = NULL;

        if (!u)
                return "out of memory";
        /* A placeholder left in, such as the example's "<platform-host>", is
         * refused here, not at the first fetch: --check-config, a start or a
         * reload must not call valid a file whose every run can only fail.
         * Userinfo is checked first, as it is the graver fault. */
        if (strpbrk(url, "<>") || curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_BAD_HOSTNAME)
                return url_authority_has_at(url)
                               ? "must not contain a user name or password (put the token in "
                                 "scim_auth_token or token_file)"
                               : "is a placeholder or its host cannot be parsed: write the SCIM server's "
                                 "URL";
        if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
                return "must be https:// (not a valid URL)";
        for (size_t i = 0; i < ELEMENTSOF(userinfo); i++) {
                _cleanup_(curl_freep) char *v = NULL;

                if (curl_url_get(u, userinfo[i], &v, 0) == CURLUE_OK)
                        return "must not contain a user name or password (put the token in "
                               "scim_auth_token or token_file)";
        }
        if (streq(scheme, "https"))
                return NULL;
        if (!streq(scheme, "http"))
                return "must be https://";
        if (!url_host_is_loopback(host))
                return "plain http:// is only accepted for 127.0.0.0/8, [::1] or localhost (the "
                       "bearer token would travel in clear text)";
        return NULL;
}

static bool params_name_reserved(const char *params) {
        static const char *const reserved[] = { "count", "startindex", "cursor" };
        _cleanup_free_ char *copy = NULL;
        char *save = NULL;

        if (!params || !(copy = strdup(params)))
                return false;
        for (char *t = strtok_r(copy, "&", &save); t; t = strtok_r(NULL, "&", &save)) {
                size_t n = strcspn(t, "=");
                for (size_t i = 0; i < ELEMENTSOF(reserved); i++)
                        if (strlen(reserved[i]) == n && strncasecmp(t, reserved[i], n) == 0)
                                return true;
        }
        return false;
}

/* Which key a cross-key check failed on, so the caller can say where that
 * key was written (a YAML line, or the nsscache.conf it came from). */
typedef struct ConfFault {
        int map; /* NssMapType of a per-map key, -1 for a top-level one */
        const char *key;
} ConfFault;

static _printf_(5, 6) int fault(ConfFault *f, int map, const char *key, char **ret_error, const char *fmt,
                                ...) {
        va_list ap;
        int r;

        f->map = map;
        f->key = key;
        va_start(ap, fmt);
        r = set_errorv(ret_error, fmt, ap);
        va_end(ap);
        return r;
}

static bool path_is_etc(const char *dir) {
        _cleanup_free_ char *real = realpath(dir, NULL);

        return streq(real ?: dir, "/etc") || streq(dir, "/etc/");
}

static const char *const http_url_keys[_NSS_MAP_MAX] = {
        [NSS_MAP_PASSWD] = "http_passwd_url",
        [NSS_MAP_SHADOW] = "http_shadow_url",
        [NSS_MAP_GROUP] = "http_group_url",
        [NSS_MAP_SSHKEY] = "http_sshkey_url",
};

/* A map file's URL as libcurl parses it: http or https (nsscache takes no
 * other), no user name or password (URLs are logged), no placeholder.
 * Return: NULL if acceptable, else why not. */
static const char *http_url_refusal(const char *url) {
        static const CURLUPart userinfo[] = { CURLUPART_USER, CURLUPART_PASSWORD, CURLUPART_OPTIONS };
        _cleanup_(curl_url_cleanupp) CURLU *u = curl_url();
        _cleanup_(curl_freep) char *scheme = NULL, *host = NULL;

        if (!u)
                return "out of memory";
        if (has_control(url) || strchr(url, ' '))
                return "must be a URL without spaces";
        if (url_authority_has_at(url))
                return "must not contain a user name or password (URLs are logged)";
        if (strpbrk(url, "<>") || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
                return "is a placeholder or not a valid URL: write the map file's URL";
        for (size_t i = 0; i < ELEMENTSOF(userinfo); i++) {
                _cleanup_(curl_freep) char *v = NULL;

                if (curl_url_get(u, userinfo[i], &v, 0) == CURLUE_OK)
                        return "must not contain a user name or password (URLs are logged)";
        }
        if (!streq(scheme, "https") && !streq(scheme, "http"))
                return "must be http:// or https://";
        return NULL;
}

/* What both sources check: the maps, where they are written, the schedule. */
static int conf_check_common(NsscacheConf *c, ConfFault *f, char **ret_error) {
        if (!c->maps || !c->maps[0])
                return fault(f, -1, "maps", ret_error, "key 'maps': no maps configured");
        memset(c->map_enabled, 0, sizeof(c->map_enabled));
        for (char **m = c->maps; *m; m++) {
                NssMapType t = nss_map_from_string(*m);
                if ((int) t < 0)
                        return fault(f, -1, "maps", ret_error,
                                     "key 'maps': map '%s' is not supported (passwd, shadow, "
                                     "group, sshkey)",
                                     *m);
                c->map_enabled[t] = true;
        }
        if (isempty(c->files_cache_filename_suffix) && c->files_dir && path_is_etc(c->files_dir))
                return fault(f, -1, "files_cache_filename_suffix", ret_error,
                             "key 'files_cache_filename_suffix': must not be empty when "
                             "files_dir is /etc (the caches would replace /etc/passwd and "
                             "/etc/group)");
        if (c->page_size < 1 || c->page_size > 10000)
                return fault(f, -1, "page_size", ret_error, "key 'page_size': must be in [1, 10000]");
        if (streq_ptr(c->pagination, "auto"))
                c->paging = SCIM_PAGING_AUTO;
        else if (streq_ptr(c->pagination, "index"))
                c->paging = SCIM_PAGING_INDEX;
        else if (streq_ptr(c->pagination, "cursor"))
                c->paging = SCIM_PAGING_CURSOR;
        else
                return fault(f, -1, "pagination", ret_error,
                             "key 'pagination': must be auto, index or cursor");
        if (c->min_uid < 1 || c->min_gid < 1)
                return fault(f, -1, c->min_uid < 1 ? "min_uid" : "min_gid", ret_error,
                             "key '%s': must be at least 1", c->min_uid < 1 ? "min_uid" : "min_gid");
        /* The refresh is what makes sunkd ready: it must run on its own. */
        if (c->interval_usec < SUNKD_USEC_PER_SEC)
                return fault(f, -1, "interval", ret_error,
                             "key 'interval': must be at least 1s (the caches are refreshed periodically)");
        if (c->timeout_usec < SUNKD_USEC_PER_MSEC * 100)
                return fault(f, -1, "timeout", ret_error, "key 'timeout': must be at least 100ms");
        return 0;
}

/* manifest_url: the manifest names the files, signed by the key given here. */
static int conf_check_manifest(const NsscacheConf *c, ConfFault *f, char **ret_error) {
        EVP_PKEY *pub[MANIFEST_KEYS_MAX];
        const char *why;
        size_t bad;
        int r;

        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (c->http_url[t])
                        return fault(f, -1, http_url_keys[t], ret_error,
                                     "key '%s': not with manifest_url (the manifest names each map's file)",
                                     http_url_keys[t]);
        if (isempty(c->manifest_url))
                return fault(f, -1, "manifest_public_key", ret_error,
                             "key 'manifest_public_key': read only with manifest_url");
        if ((why = http_url_refusal(c->manifest_url)))
                return fault(f, -1, "manifest_url", ret_error, "key 'manifest_url': %s", why);
        if (isempty(c->manifest_public_key))
                return fault(f, -1, "manifest_url", ret_error,
                             "key 'manifest_url': needs manifest_public_key (an unsigned manifest is never "
                             "used)");
        r = manifest_keys_public(c->manifest_public_key, pub, &bad);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && bad > 0)
                return fault(f, -1, "manifest_public_key", ret_error,
                             "key 'manifest_public_key': key %zu: not the base64 of an Ed25519 public key "
                             "(the line between the armour of 'openssl pkey -pubout')",
                             bad);
        if (r < 0)
                return fault(f, -1, "manifest_public_key", ret_error,
                             "key 'manifest_public_key': one to %d keys, separated by blanks or commas",
                             MANIFEST_KEYS_MAX);
        manifest_keys_free(pub, (size_t) r);
        if (c->map_enabled[NSS_MAP_SHADOW] || c->map_enabled[NSS_MAP_SSHKEY]) {
                if (!c->map_enabled[NSS_MAP_PASSWD])
                        return fault(f, -1, "maps", ret_error,
                                     "key 'maps': shadow and sshkey need passwd with source = http (their "
                                     "entries "
                                     "are only taken for users its file holds)");
        }
        return 0;
}

/* export_dir and export_signing_key: both or neither. */
static int conf_check_export(const NsscacheConf *c, ConfFault *f, char **ret_error) {
        if (c->export_dir && !c->export_signing_key)
                return fault(
                        f, -1, "export_dir", ret_error,
                        "key 'export_dir': needs export_signing_key (nodes use a signed manifest only)");
        if (c->export_signing_key && !c->export_dir)
                return fault(f, -1, "export_signing_key", ret_error,
                             "key 'export_signing_key': read only with export_dir");
        return 0;
}

static const char *const s3_object_keys[_NSS_MAP_MAX] = {
        [NSS_MAP_PASSWD] = "s3_passwd_object",
        [NSS_MAP_SHADOW] = "s3_shadow_object",
        [NSS_MAP_GROUP] = "s3_group_object",
        [NSS_MAP_SSHKEY] = "s3_sshkey_object",
};

/* What S3 keys say on their own, and that those of the source go with it. */
static int conf_check_s3(const NsscacheConf *c, ConfFault *f, char **ret_error) {
        const char *why;

        if (!nsscache_conf_is_s3(c)) {
                if (c->s3_bucket)
                        return fault(f, -1, "s3_bucket", ret_error,
                                     "key 's3_bucket': read only with source = s3");
                for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                        if (c->s3_object[t])
                                return fault(f, -1, s3_object_keys[t], ret_error,
                                             "key '%s': read only with source = s3", s3_object_keys[t]);
        }
        if (!nsscache_conf_uses_s3(c)) {
                const char *k = c->s3_endpoint           ? "s3_endpoint"
                                : c->s3_region           ? "s3_region"
                                : c->s3_credentials_file ? "s3_credentials_file"
                                                         : NULL;
                if (k)
                        return fault(f, -1, k, ret_error,
                                     "key '%s': read only with source = s3 or export_s3_url", k);
        }
        if (c->export_s3_url && !c->export_dir)
                return fault(f, -1, "export_s3_url", ret_error,
                             "key 'export_s3_url': needs export_dir (what is uploaded is what it holds)");
        if (c->export_s3_url && (why = http_url_refusal(c->export_s3_url)))
                return fault(f, -1, "export_s3_url", ret_error, "key 'export_s3_url': %s", why);
        if (c->s3_endpoint && (why = http_url_refusal(c->s3_endpoint)))
                return fault(f, -1, "s3_endpoint", ret_error, "key 's3_endpoint': %s", why);
        if (c->s3_endpoint && strpbrk(c->s3_endpoint, "?#"))
                return fault(f, -1, "s3_endpoint", ret_error,
                             "key 's3_endpoint': must not have a query or fragment");
        if (c->s3_region && !s3_region_valid(c->s3_region))
                return fault(
                        f, -1, "s3_region", ret_error,
                        "key 's3_region': lowercase letters, digits and '-' (e.g. us-east-1), at most %d",
                        S3_REGION_MAX);
        return 0;
}

/* source = s3: a bucket and an object for every map, or a manifest_url in a bucket. */
static int conf_check_s3_source(const NsscacheConf *c, ConfFault *f, char **ret_error) {
        if (c->base_url)
                return fault(f, -1, "scim_base_url", ret_error,
                             "key 'scim_base_url': read only with source = scim");
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (c->http_url[t])
                        return fault(f, -1, http_url_keys[t], ret_error,
                                     "key '%s': read only with source = http", http_url_keys[t]);
        if (c->http_max_size < 1024 || c->http_max_size > HTTP_MAX_SIZE_MAX)
                return fault(f, -1, "http_max_size", ret_error, "key 'http_max_size': must be in [1K, 1G]");
        if (c->manifest_url || c->manifest_public_key) {
                if (c->s3_bucket)
                        return fault(f, -1, "s3_bucket", ret_error,
                                     "key 's3_bucket': not with manifest_url (the manifest names each map's "
                                     "file)");
                return conf_check_manifest(c, f, ret_error);
        }
        if (isempty(c->s3_bucket))
                return fault(f, -1, "s3_bucket", ret_error, "key 's3_bucket': required with source = s3");
        if (!s3_bucket_valid(c->s3_bucket))
                return fault(f, -1, "s3_bucket", ret_error,
                             "key 's3_bucket': not a bucket name (3 to 222 of a-z, 0-9, '.', '_', '-')");
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                if (c->map_enabled[t] && isempty(c->s3_object[t]))
                        return fault(f, -1, s3_object_keys[t], ret_error,
                                     "key '%s': required for the %s map", s3_object_keys[t],
                                     nss_map_to_string(t));
                if (c->map_enabled[t] && !s3_object_valid(c->s3_object[t]))
                        return fault(f, -1, s3_object_keys[t], ret_error,
                                     "key '%s': not an object key (1 to 1024 bytes, no control character, "
                                     "no leading '/')",
                                     s3_object_keys[t]);
        }
        if ((c->map_enabled[NSS_MAP_SHADOW] || c->map_enabled[NSS_MAP_SSHKEY]) &&
            !c->map_enabled[NSS_MAP_PASSWD])
                return fault(f, -1, "maps", ret_error,
                             "key 'maps': shadow and sshkey need passwd with source = s3 (their entries are "
                             "only taken for users its object holds)");
        return 0;
}

/* source = http: a URL for every map, shadow and sshkey only beside passwd. */
static int conf_check_http(const NsscacheConf *c, ConfFault *f, char **ret_error) {
        const char *why;

        if (c->base_url)
                return fault(f, -1, "scim_base_url", ret_error,
                             "key 'scim_base_url': read only with source = scim");
        if (c->http_proxy && (has_control(c->http_proxy) || strchr(c->http_proxy, ' ')))
                return fault(f, -1, "http_proxy", ret_error,
                             "key 'http_proxy': must be a URL without spaces");
        if (c->http_max_size < 1024 || c->http_max_size > HTTP_MAX_SIZE_MAX)
                return fault(f, -1, "http_max_size", ret_error, "key 'http_max_size': must be in [1K, 1G]");
        if (c->http_retry_max < 1 || c->http_retry_max > 10)
                return fault(f, -1, "http_retry_max", ret_error, "key 'http_retry_max': must be in [1, 10]");
        if (c->manifest_url || c->manifest_public_key)
                return conf_check_manifest(c, f, ret_error);
        if (c->manifest_max_age_usec != MANIFEST_MAX_AGE_UNSET)
                return fault(f, -1, "manifest_max_age", ret_error,
                             "key 'manifest_max_age': read only with manifest_url");
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                if (!c->map_enabled[t])
                        continue;
                if (isempty(c->http_url[t]))
                        return fault(f, -1, http_url_keys[t], ret_error, "key '%s': required for the %s map",
                                     http_url_keys[t], nss_map_to_string(t));
                if ((why = http_url_refusal(c->http_url[t])))
                        return fault(f, -1, http_url_keys[t], ret_error, "key '%s': %s", http_url_keys[t],
                                     why);
        }
        if ((c->map_enabled[NSS_MAP_SHADOW] || c->map_enabled[NSS_MAP_SSHKEY]) &&
            !c->map_enabled[NSS_MAP_PASSWD])
                return fault(
                        f, -1, "maps", ret_error,
                        "key 'maps': shadow and sshkey need passwd with source = http (their entries are "
                        "only taken for users its file holds)");
        return 0;
}

static int conf_check(NsscacheConf *c, ConfFault *f, char **ret_error) {
        static const struct {
                NssMapType map;
                size_t offset;
                const char *key;
        } required[] = {
                { NSS_MAP_PASSWD, offsetof(ScimMapConf, path_uid), "scim_path_uid" },
                { NSS_MAP_GROUP, offsetof(ScimMapConf, path_gid), "scim_path_gid" },
                { NSS_MAP_SSHKEY, offsetof(ScimMapConf, path_ssh_keys), "scim_path_ssh_keys" },
        };
        static const char *const endpoint_keys[] = { "scim_users_endpoint", "scim_groups_endpoint" };
        const char *endpoints[] = { c->users_endpoint, c->groups_endpoint };
        const char *params[] = { c->users_parameters, c->groups_parameters };
        const char *why;
        static const char *const param_keys[] = { "scim_users_parameters", "scim_groups_parameters" };
        int r;

        if (streq_ptr(c->source, "gcs"))
                return fault(f, -1, "source", ret_error, "key 'source': %s", GCS_HINT);
        if (!streq_ptr(c->source, "scim") && !streq_ptr(c->source, "http") && !streq_ptr(c->source, "s3"))
                return fault(f, -1, "source", ret_error,
                             "key 'source': only 'scim', 'http' and 's3' are supported");
        if (!streq_ptr(c->cache, "files"))
                return fault(f, -1, "cache", ret_error, "key 'cache': only 'files' is supported");
        r = conf_check_export(c, f, ret_error);
        if (r >= 0)
                r = conf_check_s3(c, f, ret_error);
        if (r < 0)
                return r;
        if (nsscache_conf_is_s3(c)) {
                r = conf_check_common(c, f, ret_error);
                return r < 0 ? r : conf_check_s3_source(c, f, ret_error);
        }
        if (nsscache_conf_is_http(c)) {
                r = conf_check_common(c, f, ret_error);
                return r < 0 ? r : conf_check_http(c, f, ret_error);
        }
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (c->http_url[t])
                        return fault(f, -1, http_url_keys[t], ret_error,
                                     "key '%s': read only with source = http", http_url_keys[t]);
        if (c->manifest_url || c->manifest_public_key ||
            c->manifest_max_age_usec != MANIFEST_MAX_AGE_UNSET) {
                const char *k = c->manifest_url          ? "manifest_url"
                                : c->manifest_public_key ? "manifest_public_key"
                                                         : "manifest_max_age";

                return fault(f, -1, k, ret_error, "key '%s': read only with source = http or s3", k);
        }
        if (isempty(c->base_url))
                return fault(f, -1, "scim_base_url", ret_error, "key 'scim_base_url': required");
        if (has_control(c->base_url) || strchr(c->base_url, ' ') || strchr(c->base_url, '?') ||
            strchr(c->base_url, '#'))
                return fault(f, -1, "scim_base_url", ret_error,
                             "key 'scim_base_url': must be a URL without spaces, query or "
                             "fragment");
        if ((why = base_url_refusal(c->base_url)))
                return fault(f, -1, "scim_base_url", ret_error, "key 'scim_base_url': %s", why);
        for (size_t i = 0; i < ELEMENTSOF(endpoints); i++) {
                if (isempty(endpoints[i]) || has_control(endpoints[i]) || strpbrk(endpoints[i], " ?#"))
                        return fault(f, -1, endpoint_keys[i], ret_error,
                                     "key '%s': must be a non-empty path segment", endpoint_keys[i]);
                if (params[i] && has_control(params[i]))
                        return fault(f, -1, param_keys[i], ret_error, "key '%s': control character in value",
                                     param_keys[i]);
                if (params_name_reserved(params[i]))
                        return fault(f, -1, param_keys[i], ret_error,
                                     "key '%s': must not set count, startIndex or cursor "
                                     "(pagination is sunkd's)",
                                     param_keys[i]);
        }
        r = conf_check_common(c, f, ret_error);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(required); i++)
                if (c->map_enabled[required[i].map] &&
                    isempty(*(char **) ((uint8_t *) &c->map[required[i].map] + required[i].offset)))
                        return fault(f, (int) required[i].map, required[i].key, ret_error,
                                     "[%s] key '%s': required for the %s map",
                                     nss_map_to_string(required[i].map), required[i].key,
                                     nss_map_to_string(required[i].map));
        /* shadow and sshkey entries are only emitted for users passwd accepted */
        if ((c->map_enabled[NSS_MAP_SHADOW] || c->map_enabled[NSS_MAP_SSHKEY]) &&
            isempty(c->map[NSS_MAP_PASSWD].path_uid))
                return fault(f, NSS_MAP_PASSWD, "scim_path_uid", ret_error,
                             "[passwd] key 'scim_path_uid': required (shadow and sshkey "
                             "entries are only made for users with a valid uid)");
        for (size_t i = 0; i < _NSS_MAP_MAX; i++) {
                const char *o = c->map[i].override_home_directory;
                if (o && *o && (o[0] != '/' || has_control(o)))
                        return fault(f, (int) i, "scim_override_home_directory", ret_error,
                                     "[%s] key 'scim_override_home_directory': must be "
                                     "absolute",
                                     nss_map_to_string((NssMapType) i));
        }
        return 0;
}

/* The directories the caches and their timestamps are written in: whoever
 * controls one can swap passwd.  Apart from conf_check(), which looks at the
 * text only; the state directory is the host's to check.  files_dir and
 * timestamp_dir are created by the publish; export_dir, the web server's
 * document root or what is uploaded, is not: one that is not there is a
 * typo every export would fail on. */
static int conf_check_written(const NsscacheConf *c, ConfFault *f, char **ret_error) {
        const struct {
                const char *key, *path;
                bool exists;
        } dirs[] = {
                { "files_dir", c->files_dir, false },
                { "timestamp_dir", c->timestamp_dir, false },
                { "export_dir", c->export_dir, true },
        };

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_free_ char *msg = NULL;
                struct stat st;
                int r;

                if (!dirs[i].path)
                        continue;
                r = trusted_path_check(dirs[i].path, "to write", TRUSTED_PATH_WRITTEN, &msg);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return fault(f, -1, dirs[i].key, ret_error, "key '%s': %s", dirs[i].key,
                                     msg ?: strerror(-r));
                if (!dirs[i].exists)
                        continue;
                r = stat(dirs[i].path, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
                if (r < 0)
                        return fault(f, -1, dirs[i].key, ret_error,
                                     "key '%s': '%s': %s (sunkd does not create it)", dirs[i].key,
                                     dirs[i].path, strerror(-r));
        }
        return 0;
}

bool nsscache_conf_is_http(const NsscacheConf *c) {
        return streq_ptr(c->source, "http") || nsscache_conf_is_s3(c);
}

bool nsscache_conf_is_s3(const NsscacheConf *c) {
        return streq_ptr(c->source, "s3");
}

bool nsscache_conf_uses_s3(const NsscacheConf *c) {
        return nsscache_conf_is_s3(c) || c->export_s3_url;
}

const char *nsscache_conf_source_name(const NsscacheConf *c) {
        if (!nsscache_conf_is_http(c))
                return c->base_url ?: "";
        if (c->manifest_url)
                return c->manifest_url;
        if (nsscache_conf_is_s3(c))
                return c->s3_bucket ?: "";
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (c->map_enabled[t] && c->http_url[t])
                        return c->http_url[t];
        return "";
}

int nsscache_conf_finalize(NsscacheConf *c, char **ret_error) {
        ConfFault f = { -1, NULL };

        return conf_check(c, &f, ret_error);
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
static int token_load(const NsscacheConf *c, char **ret_token, char **ret_error, const char **ret_key) {
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
        r = token_load(c, ret_token, &msg, &key);
        if (r >= 0 || r == -ENOMEM)
                return r;
        if (streq_ptr(key, "token_file"))
                return errmsg_set(ret_error, r, "token_file %s", msg ?: strerror(-r));
        if (key)
                return errmsg_set(ret_error, r, "%s: %s", key, msg ?: strerror(-r));
        return errmsg_set(ret_error, r, "%s", msg ?: strerror(-r));
}

/* Every run would fail for want of a token: the config is refused instead,
 * the token read here as each run reads it and wiped.  The error is located
 * at token_file or scim_auth_token where the token comes from one, else at
 * the section. */
static int conf_check_token(const NsscacheConf *c, ConfFault *f, char **ret_error) {
        _cleanup_erase_ char *token = NULL;
        _cleanup_free_ char *msg = NULL;
        const char *key;
        int r;

        r = token_load(c, &token, &msg, &key);
        if (r >= 0 || r == -ENOMEM)
                return r;
        if (key)
                return fault(f, -1, key, ret_error, "key '%s': %s", key, msg ?: strerror(-r));
        return fault(f, -1, NULL, ret_error, "%s", msg ?: strerror(-r));
}

/* Every export would fail for want of the key: read it as an export does. */
static int conf_check_signing_key(const NsscacheConf *c, ConfFault *f, char **ret_error) {
        _cleanup_(evp_pkey_freep) EVP_PKEY *key = NULL;
        _cleanup_free_ char *msg = NULL;
        int r;

        if (!c->export_signing_key)
                return 0;
        r = map_export_key_load(c->export_signing_key, &key, &msg);
        if (r >= 0 || r == -ENOMEM)
                return r;
        return fault(f, -1, "export_signing_key", ret_error, "key 'export_signing_key': %s",
                     msg ?: strerror(-r));
}

/* Every run would fail for want of S3 credentials: read them as a run does. */
static int conf_check_s3_credentials(const NsscacheConf *c, ConfFault *f, char **ret_error) {
        _cleanup_(s3_auth_done) S3Auth a = {};
        _cleanup_free_ char *msg = NULL;
        const char *key;
        int r;

        if (!nsscache_conf_uses_s3(c))
                return 0;
        r = s3_auth_load(c, &a, &key, &msg);
        if (r >= 0 || r == -ENOMEM)
                return r;
        if (key)
                return fault(f, -1, key, ret_error, "key '%s': %s", key, msg ?: strerror(-r));
        return fault(f, -1, NULL, ret_error, "%s", msg ?: strerror(-r));
}

/* Prefixes a cross-key error with where the key was written: its YAML
 * position, else the nsscache.conf it was read from, else the section. */
static int conf_check_located(NsscacheConf *c, const sunkd_host_api *api, const sunkd_cfg *cfg,
                              char **ret_error) {
        _cleanup_free_ char *where = NULL;
        ConfFault f = { -1, NULL };
        const sunkd_cfg *node = cfg, *k = NULL;
        char *msg;
        int r;

        r = conf_check(c, &f, ret_error);
        if (r >= 0)
                r = conf_check_written(c, &f, ret_error);
        /* the http source sends no token, as nsscache's */
        if (r >= 0 && !nsscache_conf_is_http(c))
                r = conf_check_token(c, &f, ret_error);
        if (r >= 0)
                r = conf_check_signing_key(c, &f, ret_error);
        if (r >= 0)
                r = conf_check_s3_credentials(c, &f, ret_error);
        if (r >= 0 || !ret_error || !*ret_error)
                return r;
        if (f.map >= 0)
                node = api->cfg_get(cfg, nss_map_to_string((NssMapType) f.map));
        if (node && f.key)
                k = api->cfg_get(node, f.key);
        if (!k && f.map >= 0 && (node = api->cfg_get(cfg, "DEFAULT")))
                k = api->cfg_get(node, f.key);
        /* A fault of no key (no token at all) is the section's. */
        if (!k && f.key && c->nsscache_conf) {
                unsigned line = ini_origin(c, f.map >= 0 ? nss_map_to_string((NssMapType) f.map) : "DEFAULT",
                                           ini_name(f.key));
                msg = errloc_format(line > 0 && c->ini_file ? c->ini_file : c->nsscache_conf, line, 0, NULL,
                                    "%s", *ret_error);
                if (msg) {
                        free(*ret_error);
                        *ret_error = msg;
                }
                return r;
        }
        if (api->cfg_where(k ?: cfg, &where) < 0)
                where = NULL;
        if (where && asprintf(&msg, "%s: %s", where, *ret_error) >= 0) {
                free(*ret_error);
                *ret_error = msg;
        }
        return r;
}
