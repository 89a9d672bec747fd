/* The checks across keys of one NsscacheConf, once both files are read:
 * the source and what it needs, the URLs as libcurl will parse them, the
 * maps and the directories written, and the token, signing key and S3
 * credentials read as a run reads them.  A fault names its key, which
 * nsscache_conf_check_located() finds in sunkd.yaml or nsscache.conf.
 * Nothing here logs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <curl/curl.h>

#include "fleet/manifest.h"
#include "fleet/map-export.h"
#include "nsscache-conf-internal.h"
#include "nsscache-source.h"
#include "files/s3-auth.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"
#include "util/trusted-path.h"

static inline void curl_url_cleanupp(CURLU **u) {
        curl_url_cleanup(*u);
}

static inline void curl_freep(char **p) {
        curl_free(*p);
}

/* Loopback as curl will connect to it: curl_url() has already turned
 * 2130706433, 0x7f000001 and 127.1 into dotted quads.  "localhost." and other
 * names with a trailing dot are not loopback: they may go to DNS. */
static bool url_host_is_loopback(const char *host);

/* ldap://, ldaps:// or ldapi://, as nsscache and libldap take them. */
static bool ldap_uri_scheme_ok(const char *uri) {
        return strncmp(uri, "ldap://", 7) == 0 || strncmp(uri, "ldaps://", 8) == 0 ||
               strncmp(uri, "ldapi://", 8) == 0;
}

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

static _printf_(5, 6) int fault(ConfFault *f, int map, const char *key, char **ret_error, const char *fmt,
                                ...) {
        va_list ap;

        f->map = map;
        f->key = key;
        if (ret_error) {
                free(*ret_error);
                va_start(ap, fmt);
                if (vasprintf(ret_error, fmt, ap) < 0)
                        *ret_error = NULL;
                va_end(ap);
        }
        return -EINVAL;
}

static bool path_is_etc(const char *dir) {
        _cleanup_free_ char *real = realpath(dir, NULL);

        return streq(real ?: dir, "/etc") || streq(dir, "/etc/");
}

static const char *const http_url_keys[_NSS_MAP_MAX] = {
        [NSS_MAP_PASSWD] = "http_passwd_url",     [NSS_MAP_SHADOW] = "http_shadow_url",
        [NSS_MAP_GROUP] = "http_group_url",       [NSS_MAP_SSHKEY] = "http_sshkey_url",
        [NSS_MAP_NETGROUP] = "http_netgroup_url", [NSS_MAP_AUTOMOUNT] = "http_automount_base_url",
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
        if (nsscache_conf_has_control(url) || strchr(url, ' '))
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
                                     "group, sshkey, netgroup, automount)",
                                     *m);
                c->map_enabled[t] = true;
        }
        if (c->files_cache_filename_suffix && strpbrk(c->files_cache_filename_suffix, "/\n"))
                return fault(
                        f, -1, "files_cache_filename_suffix", ret_error,
                        "key 'files_cache_filename_suffix': must not hold a '/' or a newline (it ends a "
                        "file name in files_dir)");
        for (NssMapType t = NSS_MAP_NETGROUP; t <= NSS_MAP_AUTOMOUNT; t++)
                if (c->map[t].files_suffix && strpbrk(c->map[t].files_suffix, "/\n"))
                        return fault(
                                f, (int) t, "files_cache_filename_suffix", ret_error,
                                "[%s] key 'files_cache_filename_suffix': must not hold a '/' or a newline "
                                "(it ends a file name in files_dir)",
                                nss_map_to_string(t));
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
        if (c->export_dir && c->map_enabled[NSS_MAP_AUTOMOUNT])
                return fault(
                        f, -1, "export_dir", ret_error,
                        "key 'export_dir': not with the automount map (a manifest names one file a map; "
                        "the automount map is auto.master and the files it names)");
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
static int conf_check_s3_keys(const NsscacheConf *c, ConfFault *f, char **ret_error) {
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

/* For the sources that are neither: no key only scim or http reads. */
static int conf_check_no_scim_http(const NsscacheConf *c, ConfFault *f, char **ret_error) {
        if (c->base_url)
                return fault(f, -1, "scim_base_url", ret_error,
                             "key 'scim_base_url': read only with source = scim");
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (c->http_url[t])
                        return fault(f, -1, http_url_keys[t], ret_error,
                                     "key '%s': read only with source = http", http_url_keys[t]);
        return 0;
}

/* source = s3: what every source checks, then a bucket and an object for
 * every map, or a manifest_url in a bucket. */
int nsscache_conf_check_s3(NsscacheConf *c, ConfFault *f, char **ret_error) {
        int r = conf_check_common(c, f, ret_error);

        if (r < 0)
                return r;
        r = conf_check_no_scim_http(c, f, ret_error);
        if (r < 0)
                return r;
        if (c->http_max_size < 1024 || c->http_max_size > HTTP_MAX_SIZE_MAX)
                return fault(f, -1, "http_max_size", ret_error, "key 'http_max_size': must be in [1K, 1G]");
        if (c->manifest_url || c->manifest_public_key) {
                if (c->s3_bucket)
                        return fault(f, -1, "s3_bucket", ret_error,
                                     "key 's3_bucket': not with manifest_url (the manifest names each map's "
                                     "file)");
                return conf_check_manifest(c, f, ret_error);
        }
        if (c->map_enabled[NSS_MAP_NETGROUP] || c->map_enabled[NSS_MAP_AUTOMOUNT])
                return fault(
                        f, -1, "maps", ret_error,
                        "key 'maps': nsscache's s3 source has no %s map (it reads passwd, group, shadow and "
                        "sshkey objects); use source = %s",
                        c->map_enabled[NSS_MAP_NETGROUP] ? "netgroup" : "automount",
                        c->map_enabled[NSS_MAP_NETGROUP] ? "http with http_netgroup_url, or ldap" : "ldap");
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

/* Whether any map has its own URL. */
static bool http_url_any(const NsscacheConf *c) {
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (!isempty(c->http_url[t]))
                        return true;
        return false;
}

/* source = http: what every source checks, then a URL for every map, shadow
 * and sshkey only beside passwd. */
int nsscache_conf_check_http(NsscacheConf *c, ConfFault *f, char **ret_error) {
        const char *why;
        int r = conf_check_common(c, f, ret_error);

        if (r < 0)
                return r;

        if (c->map_enabled[NSS_MAP_AUTOMOUNT] && (c->manifest_url || c->manifest_public_key))
                return fault(
                        f, -1, "maps", ret_error,
                        "key 'maps': the automount map is not in a producer's manifest (it is auto.master "
                        "and the files it names): read it with http_automount_base_url");
        if (c->base_url)
                return fault(f, -1, "scim_base_url", ret_error,
                             "key 'scim_base_url': read only with source = scim");
        if (c->http_proxy && (nsscache_conf_has_control(c->http_proxy) || strchr(c->http_proxy, ' ')))
                return fault(f, -1, "http_proxy", ret_error,
                             "key 'http_proxy': must be a URL without spaces");
        if (c->http_max_size < 1024 || c->http_max_size > HTTP_MAX_SIZE_MAX)
                return fault(f, -1, "http_max_size", ret_error, "key 'http_max_size': must be in [1K, 1G]");
        if (c->http_retry_max < 1 || c->http_retry_max > 10)
                return fault(f, -1, "http_retry_max", ret_error, "key 'http_retry_max': must be in [1, 10]");
        if (isempty(c->manifest_url) && !http_url_any(c))
                return fault(f, -1, "source", ret_error,
                             "key 'source': http reads the maps from manifest_url (a producer's signed "
                             "manifest) or from one http_<map>_url a map (http_passwd_url, "
                             "http_group_url, ...): neither is set");
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

/* source = scim: no key of the file sources, a base URL libcurl takes as
 * it is meant, endpoints and parameters that leave paging to sunkd, what
 * every source checks, and the attribute paths each enabled map needs. */
int nsscache_conf_check_scim(NsscacheConf *c, ConfFault *f, char **ret_error) {
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
        if (nsscache_conf_has_control(c->base_url) || strchr(c->base_url, ' ') || strchr(c->base_url, '?') ||
            strchr(c->base_url, '#'))
                return fault(f, -1, "scim_base_url", ret_error,
                             "key 'scim_base_url': must be a URL without spaces, query or "
                             "fragment");
        if ((why = base_url_refusal(c->base_url)))
                return fault(f, -1, "scim_base_url", ret_error, "key 'scim_base_url': %s", why);
        for (size_t i = 0; i < ELEMENTSOF(endpoints); i++) {
                if (isempty(endpoints[i]) || nsscache_conf_has_control(endpoints[i]) ||
                    strpbrk(endpoints[i], " ?#"))
                        return fault(f, -1, endpoint_keys[i], ret_error,
                                     "key '%s': must be a non-empty path segment", endpoint_keys[i]);
                if (params[i] && nsscache_conf_has_control(params[i]))
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
        if (c->map_enabled[NSS_MAP_NETGROUP] || c->map_enabled[NSS_MAP_AUTOMOUNT])
                return fault(f, -1, "maps", ret_error,
                             "key 'maps': SCIM has no %s; the %s map comes from source = %s",
                             c->map_enabled[NSS_MAP_NETGROUP] ? "netgroups" : "automount maps",
                             c->map_enabled[NSS_MAP_NETGROUP] ? "netgroup" : "automount",
                             c->map_enabled[NSS_MAP_NETGROUP] ? "ldap or http" : "ldap");
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
                if (o && *o && (o[0] != '/' || nsscache_conf_has_control(o)))
                        return fault(f, (int) i, "scim_override_home_directory", ret_error,
                                     "[%s] key 'scim_override_home_directory': must be "
                                     "absolute",
                                     nss_map_to_string((NssMapType) i));
        }
        return 0;
}

/* Whether @uri's host is a loopback address or a local socket: a password
 * sent over plain ldap:// to it does not cross the network. */
static bool ldap_uri_local(const char *uri) {
        _cleanup_free_ char *host = NULL;
        const char *h, *end;

        if (strncmp(uri, "ldapi://", 8) == 0)
                return true;
        if (strncmp(uri, "ldap://", 7) != 0)
                return false;
        h = uri + 7;
        end = h + strcspn(h, "/");
        if (*h == '[') {
                const char *close = memchr(h, ']', (size_t) (end - h));
                if (!close)
                        return false;
                host = strndup(h, (size_t) (close - h + 1));
        } else
                host = strndup(h, strcspn(h, ":/"));
        return host && *host && url_host_is_loopback(host);
}

/* source = ldap: a URI libldap takes, nsscache's values, a base and a
 * filter for every map, a password that does not cross the network in
 * clear text. */
int nsscache_conf_check_ldap(NsscacheConf *c, ConfFault *f, char **ret_error) {
        static const char *const require[] = { "never", "hard", "demand", "allow", "try" };
        static const char *const scopes[] = { "base", "one", "onelevel", "sub", "subtree" };
        bool ok = false;
        int r = conf_check_common(c, f, ret_error);

        if (r < 0)
                return r;
        r = conf_check_no_scim_http(c, f, ret_error);
        if (r < 0)
                return r;
        if (c->manifest_url || c->s3_bucket)
                return fault(f, -1, c->manifest_url ? "manifest_url" : "s3_bucket", ret_error,
                             "key '%s': not with source = ldap",
                             c->manifest_url ? "manifest_url" : "s3_bucket");
        if (isempty(c->ldap_uri))
                return fault(f, -1, "ldap_uri", ret_error, "key 'ldap_uri': required with source = ldap");
        if (nsscache_conf_has_control(c->ldap_uri) || strpbrk(c->ldap_uri, "<> ") ||
            !ldap_uri_scheme_ok(c->ldap_uri))
                return fault(
                        f, -1, "ldap_uri", ret_error,
                        "key 'ldap_uri': must be one ldap://, ldaps:// or ldapi:// URL (no placeholder)");
        if (c->ldap_tls_require_cert) {
                for (size_t i = 0; i < ELEMENTSOF(require); i++)
                        ok = ok || streq(c->ldap_tls_require_cert, require[i]);
                if (!ok)
                        return fault(
                                f, -1, "ldap_tls_require_cert", ret_error,
                                "key 'ldap_tls_require_cert': must be never, hard, demand, allow or try");
                /* allow, try and never take a certificate that does not verify: warned about */
                if (!streq(c->ldap_tls_require_cert, "demand") && !streq(c->ldap_tls_require_cert, "hard"))
                        c->tls_verify = false;
        }
        if (c->ldap_tls_starttls && strncmp(c->ldap_uri, "ldap://", 7) != 0)
                return fault(f, -1, "ldap_tls_starttls", ret_error,
                             "key 'ldap_tls_starttls': only with an ldap:// URI");
        if (!!c->ldap_tls_certfile != !!c->ldap_tls_keyfile)
                return fault(f, -1, c->ldap_tls_certfile ? "ldap_tls_keyfile" : "ldap_tls_certfile",
                             ret_error,
                             "key 'ldap_tls_certfile': needs ldap_tls_keyfile, and the other way round");
        if ((c->ldap_bind_password || c->ldap_bind_password_file) && !c->ldap_tls_starttls &&
            !ldap_uri_local(c->ldap_uri) && strncmp(c->ldap_uri, "ldaps://", 8) != 0)
                return fault(f, -1,
                             c->ldap_bind_password_file ? "ldap_bind_password_file" : "ldap_bind_password",
                             ret_error,
                             "key '%s': the password would cross the network in clear text: use ldaps:// or "
                             "ldap_tls_starttls = 1 (plain ldap:// only to a loopback address)",
                             c->ldap_bind_password_file ? "ldap_bind_password_file" : "ldap_bind_password");
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                const ScimMapConf *m = c->map + t;

                if (!c->map_enabled[t])
                        continue;
                if (t != NSS_MAP_GROUP && m->ldap_nested_groups)
                        return fault(f, (int) t, "ldap_nested_groups", ret_error,
                                     "[%s] key 'ldap_nested_groups': read only for the group map",
                                     nss_map_to_string(t));
                /* automount: nsscache searches auto.master and its maps with filters of its own */
                if (t == NSS_MAP_AUTOMOUNT && isempty(m->ldap_base))
                        return fault(
                                f, (int) t, "ldap_base", ret_error,
                                "[automount] key 'ldap_base': required for the automount map (where the "
                                "automountMap ou=auto.master is searched)");
                if (t == NSS_MAP_AUTOMOUNT)
                        continue;
                if (isempty(m->ldap_base) || isempty(m->ldap_filter))
                        return fault(
                                f, (int) t, isempty(m->ldap_base) ? "ldap_base" : "ldap_filter", ret_error,
                                "[%s] key '%s': required for the %s map", nss_map_to_string(t),
                                isempty(m->ldap_base) ? "ldap_base" : "ldap_filter", nss_map_to_string(t));
                if (m->ldap_filter[0] != '(')
                        return fault(f, (int) t, "ldap_filter", ret_error,
                                     "[%s] key 'ldap_filter': must be an LDAP filter in parentheses",
                                     nss_map_to_string(t));
                ok = !m->ldap_scope;
                for (size_t i = 0; !ok && i < ELEMENTSOF(scopes); i++)
                        ok = streq(m->ldap_scope, scopes[i]);
                if (!ok)
                        return fault(f, (int) t, "ldap_scope", ret_error,
                                     "[%s] key 'ldap_scope': must be base, one or sub",
                                     nss_map_to_string(t));
        }
        if ((c->map_enabled[NSS_MAP_SHADOW] || c->map_enabled[NSS_MAP_SSHKEY]) &&
            !c->map_enabled[NSS_MAP_PASSWD])
                return fault(
                        f, -1, "maps", ret_error,
                        "key 'maps': shadow and sshkey need passwd with source = ldap (their entries are "
                        "only taken for users its search found)");
        return 0;
}

static int conf_check(NsscacheConf *c, ConfFault *f, char **ret_error) {
        const NsscacheSource *source;
        int r;

        if (streq_ptr(c->source, "gcs"))
                return fault(f, -1, "source", ret_error, "key 'source': %s", GCS_HINT);
        source = nsscache_source_find(c->source);
        if (!source)
                return fault(f, -1, "source", ret_error,
                             "key 'source': only 'scim', 'ldap', 'http' and 's3' are supported");
        if (!streq(source->name, "ldap") && (c->ldap_uri || c->ldap_bind_password_file))
                return fault(f, -1, c->ldap_uri ? "ldap_uri" : "ldap_bind_password_file", ret_error,
                             "key '%s': read only with source = ldap",
                             c->ldap_uri ? "ldap_uri" : "ldap_bind_password_file");
        if (!streq_ptr(c->cache, "files"))
                return fault(f, -1, "cache", ret_error, "key 'cache': only 'files' is supported");
        r = conf_check_export(c, f, ret_error);
        if (r >= 0)
                r = conf_check_s3_keys(c, f, ret_error);
        if (r < 0)
                return r;
        return source->check(c, f, ret_error);
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

bool nsscache_conf_is_s3(const NsscacheConf *c) {
        return streq_ptr(c->source, "s3");
}

bool nsscache_conf_uses_s3(const NsscacheConf *c) {
        return nsscache_conf_is_s3(c) || c->export_s3_url;
}

int nsscache_conf_finalize(NsscacheConf *c, char **ret_error) {
        ConfFault f = { -1, NULL };

        return conf_check(c, &f, ret_error);
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

        r = nsscache_conf_token_read(c, &token, &msg, &key);
        if (r >= 0 || r == -ENOMEM)
                return r;
        if (key)
                return fault(f, -1, key, ret_error, "key '%s': %s", key, msg ?: strerror(-r));
        return fault(f, -1, NULL, ret_error, "%s", msg ?: strerror(-r));
}

/* Every run would fail on the bind password file: read it as a run does. */
static int conf_check_ldap_password(const NsscacheConf *c, ConfFault *f, char **ret_error) {
        _cleanup_erase_ char *pw = NULL;
        _cleanup_free_ char *msg = NULL;
        int r;

        if (!c->ldap_bind_password_file)
                return 0;
        r = nsscache_conf_ldap_password(c, &pw, &msg);
        if (r >= 0 || r == -ENOMEM)
                return r;
        return fault(f, -1, "ldap_bind_password_file", ret_error, "%s", msg ?: strerror(-r));
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
int nsscache_conf_check_located(NsscacheConf *c, const sunkd_host_api *api, const sunkd_cfg *cfg,
                                char **ret_error) {
        _cleanup_free_ char *where = NULL;
        ConfFault f = { -1, NULL };
        const sunkd_cfg *node = cfg, *k = NULL;
        char *msg;
        int r;

        r = conf_check(c, &f, ret_error);
        if (r >= 0)
                r = conf_check_written(c, &f, ret_error);
        /* the file sources send no token, as nsscache's */
        if (r >= 0 && nsscache_source(c)->token)
                r = conf_check_token(c, &f, ret_error);
        if (r >= 0 && streq_ptr(c->source, "ldap"))
                r = conf_check_ldap_password(c, &f, ret_error);
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
                unsigned line = nsscache_conf_ini_origin(
                        c, f.map >= 0 ? nss_map_to_string((NssMapType) f.map) : "DEFAULT",
                        nsscache_conf_ini_name(f.key));
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
