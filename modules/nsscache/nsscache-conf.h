/* nsscache module configuration: nsscache.conf (INI) and the sunkd.yaml section.
 *
 * Both sources fill one NsscacheConf.  The INI side reads a file exactly the way
 * nsscache's ConfigParser does ([DEFAULT] first, then the map's own section
 * overrides; "%%" is a literal percent, "%(key)s" interpolates; surrounding
 * quotes are stripped), but refuses keys and sections it does not implement.
 * The YAML side goes through the host's key tables and overrides what the
 * INI file set.  Non-logging: errors come back as "file:line: key 'x': reason".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/nss-maps.h"
#include "sunkd/module.h"

#define SCIM_PAGE_SIZE_DEFAULT 100
#define NSSCACHE_MIN_ID_DEFAULT 1000
#define NSSCACHE_MAX_SHRINK_PCT_DEFAULT 50
#define SCIM_MAX_TOTAL_RESULTS_DEFAULT 1000000
#define SCIM_MAX_TOTAL_RESULTS_MAX 5000000
#define NSSCACHE_TIMEOUT_DEFAULT_USEC (60 * SUNKD_USEC_PER_SEC)
#define SCIM_RETRY_MAX_DEFAULT 3
#define SCIM_RETRY_DELAY_DEFAULT_USEC (1 * SUNKD_USEC_PER_SEC)
#define SCIM_DEFAULT_SHELL "/bin/bash"
#define HTTP_RETRY_MAX_DEFAULT 3
#define HTTP_RETRY_DELAY_DEFAULT_USEC (5 * SUNKD_USEC_PER_SEC)
#define HTTP_MAX_SIZE_DEFAULT (UINT64_C(256) << 20)
#define HTTP_MAX_SIZE_MAX (UINT64_C(1) << 30)
#define MANIFEST_MAX_AGE_UNSET UINT64_MAX
#define MANIFEST_MAX_AGE_DEFAULT_USEC (UINT64_C(7) * 24 * 3600 * SUNKD_USEC_PER_SEC)
#define EXPORT_RESIGN_DEFAULT_USEC (UINT64_C(24) * 3600 * SUNKD_USEC_PER_SEC)
#define NSSCACHE_CONF_FILE_MAX (1024 * 1024)
#define SCIM_TOKEN_MAX (16 * 1024)
#define SCIM_AUTH_TOKEN_ENV "NSSCACHE_SCIM_AUTH_TOKEN"
#define LDAP_BIND_PASSWORD_ENV "NSSCACHE_LDAP_BIND_PASSWORD"
#define LDAP_RETRY_MAX_DEFAULT 3
#define LDAP_RETRY_DELAY_DEFAULT_USEC (5 * SUNKD_USEC_PER_SEC)
#define LDAP_PAGE_SIZE_DEFAULT 1000 /* nsscache's: Active Directory's MaxPageSize */

/* How the fetcher pages through a listing (pagination:). */
typedef enum ScimPaging {
        SCIM_PAGING_AUTO, /* cursors where /ServiceProviderConfig advertises them or the server requires them
                           */
        SCIM_PAGING_INDEX,  /* startIndex and count only (RFC 7644) */
        SCIM_PAGING_CURSOR, /* cursor and count (RFC 9865), without asking first */
} ScimPaging;

/* Settings nsscache keeps per map (scim_path_*, shells, home, shadow fields). */
typedef struct ScimMapConf {
        char *path_username;
        char *path_uid;
        char *path_gid;
        char *path_gecos;
        char *path_home_directory;
        char *path_login_shell;
        char *path_ssh_keys;
        char *path_groupname;
        char *default_shell;
        char *override_home_directory; /* "%u" is the user name */
        /* shadow(5) numeric fields, -1 = empty */
        int64_t shadow_lstchg, shadow_min, shadow_max, shadow_warn, shadow_inact, shadow_expire, shadow_flag;
        /* nsscache's ldap source: where and what each map searches */
        char *ldap_base;
        char *ldap_filter;
        char *ldap_scope; /* base, one (onelevel), sub (subtree) */
        bool ldap_nested_groups;
        /* files_cache_filename_suffix of [netgroup] or [automount]; NULL: [DEFAULT]'s */
        char *files_suffix;
} ScimMapConf;

typedef struct NsscacheConf {
        /* nsscache [DEFAULT] */
        char *source; /* "scim", "ldap", "http" or "s3" */
        char *cache;  /* must be "files" */
        char **maps;
        char *files_dir;
        char *files_cache_filename_suffix;
        char *timestamp_dir;
        char *lockfile; /* accepted for compatibility, unused */
        char *base_url;
        char *users_endpoint;
        char *groups_endpoint;
        char *users_parameters;
        char *groups_parameters;
        char *auth_token; /* secret: wiped on free */
        int64_t retry_max;
        uint64_t retry_delay_usec;

        /* nsscache's http source (http_*), sunkd's http_max_size */
        char *http_url[_NSS_MAP_MAX];
        char *http_proxy;
        int64_t http_retry_max; /* requests per file at most, as nsscache counts them */
        uint64_t http_retry_delay_usec;
        uint64_t http_max_size;    /* bytes of one decoded file at most */
        char *manifest_url;        /* the maps named by a signed manifest (map-export.h) */
        char *manifest_public_key; /* base64 of its Ed25519 SubjectPublicKeyInfo; up to 4, blank-separated */
        uint64_t manifest_max_age_usec; /* a manifest signed longer ago is refused; 0: no limit;
                                         * MANIFEST_MAX_AGE_UNSET: not set, the default */

        /* nsscache's s3 source (s3_bucket, s3_*_object), sunkd's endpoint,
         * region and credentials (s3-auth.h) */
        char *s3_bucket;
        char *s3_object[_NSS_MAP_MAX];
        char *s3_endpoint;         /* NULL: https://s3.REGION.amazonaws.com */
        char *s3_region;           /* NULL: AWS_REGION, AWS_DEFAULT_REGION, else us-east-1 */
        char *s3_credentials_file; /* AWS shared credentials INI; NULL: the AWS_* environment */
        /* the producer: what a publish leaves for nodes (map-export.h) */
        char *export_dir;
        char *export_signing_key;    /* Ed25519 private key, PEM */
        uint64_t export_resign_usec; /* an unchanged export is signed again after this long; 0: never */
        char *export_s3_url;         /* endpoint/bucket[/prefix] export_dir is uploaded to (s3-export.h) */

        /* nsscache's ldap source (ldap_*), sunkd's ldap_bind_password_file */
        char *ldap_uri;
        char *ldap_bind_dn;
        char *ldap_bind_password; /* secret: wiped on free */
        char *ldap_bind_password_file;
        int64_t ldap_timelimit; /* seconds the server may spend on a search; -1 or 0: none */
        int64_t ldap_retry_max;
        uint64_t ldap_retry_delay_usec;
        char *ldap_tls_require_cert; /* never, hard, demand, allow, try */
        bool ldap_tls_starttls;
        char *ldap_tls_cacertfile;
        char *ldap_tls_cacertdir;
        char *ldap_tls_certfile;
        char *ldap_tls_keyfile;
        bool ldap_rfc2307bis;
        bool ldap_ad;

        /* sunkd's own */
        char *nsscache_conf;
        char *token_file;
        char *ca_file;
        bool tls_verify;
        uint64_t timeout_usec;
        int64_t page_size;
        int64_t min_uid;
        int64_t min_gid;
        int64_t min_entries;
        int64_t max_shrink_pct;
        char *local_passwd; /* the node's own accounts, never published from SCIM */
        char *local_group;
        int64_t max_total_results; /* a larger totalResults fails the run before page 2 */
        char *pagination;          /* auto, index or cursor: parsed into paging */
        ScimPaging paging;
        uint64_t interval_usec;
        uint64_t splay_usec;

        /* "section/key=line" for each key read from nsscache.conf (ini_file),
         * so a cross-key error can point at the line. */
        char *ini_file;
        char **ini_origins;

        /* Filled by nsscache_conf_finalize(). */
        bool map_enabled[_NSS_MAP_MAX];
        ScimMapConf map[_NSS_MAP_MAX];
} NsscacheConf;

/** nsscache_conf_manifest_max_age() - manifest_max_age as it applies (the default when not set), in seconds.
 */
uint64_t nsscache_conf_manifest_max_age(const NsscacheConf *c);

/** nsscache_conf_new() - a config holding every default.  Return: 0 or -ENOMEM. */
int nsscache_conf_new(NsscacheConf **ret);
NsscacheConf *nsscache_conf_free(NsscacheConf *c);
static inline void nsscache_conf_freep(NsscacheConf **c) {
        if (*c)
                *c = nsscache_conf_free(*c);
}

/**
 * nsscache_conf_parse_ini() - apply nsscache.conf text to @c.
 * @fname: used only in error messages.
 * Return: 0; -EINVAL with "fname:line: key 'x': reason" in *ret_error for
 * syntax errors, unknown or misplaced keys, unknown sections, bad values.
 */
int nsscache_conf_parse_ini(NsscacheConf *c, const char *text, size_t len, const char *fname,
                            char **ret_error);
/**
 * nsscache_conf_load_ini() - read @path (at most NSSCACHE_CONF_FILE_MAX) and parse it.
 * Return: as nsscache_conf_parse_ini(); for a file that is not trusted the
 * error of trusted_path_check(); for one that cannot be read its -errno with
 * "cannot read 'PATH': reason".
 */
int nsscache_conf_load_ini(NsscacheConf *c, const char *path, char **ret_error);

/**
 * nsscache_conf_apply_cfg() - apply the module's sunkd.yaml section.
 * If it names `nsscache_conf`, that file (at most NSSCACHE_CONF_FILE_MAX) is
 * read first and every key the YAML section sets then overrides it; a file
 * that cannot be read or is not trusted is an error located at that key.
 * The per-map settings live in sub-sections `passwd:`, `shadow:`, `group:`,
 * `sshkey:`, `netgroup:`, `automount:` (and a `DEFAULT:` sub-section for all
 * maps) with the INI key names.
 * Checks what nsscache_conf_finalize() checks, that the directories written
 * are trusted, and then that a token can be read as a run reads it (the
 * token is wiped again); errors are located at the line that set the key,
 * in sunkd.yaml or nsscache.conf, or at the section.
 */
int nsscache_conf_apply_cfg(NsscacheConf *c, const sunkd_host_api *api, const sunkd_cfg *cfg,
                            char **ret_error);

/**
 * nsscache_conf_finalize() - check cross-key rules and fill map_enabled.
 * source must be scim, cache files; scim_base_url is required, must not be
 * a placeholder ('<', '>', a host libcurl cannot parse), and plain http is
 * accepted only for loopback hosts; passwd needs scim_path_uid,
 * group scim_path_gid, sshkey scim_path_ssh_keys; parameters may not carry
 * count or startIndex (the fetcher owns those).
 */
int nsscache_conf_finalize(NsscacheConf *c, char **ret_error);

/** nsscache_conf_is_s3() - whether they come from nsscache's s3 source (signed requests). */
bool nsscache_conf_is_s3(const NsscacheConf *c);
/** nsscache_conf_uses_s3() - whether anything is signed for S3: source = s3 or export_s3_url. */
bool nsscache_conf_uses_s3(const NsscacheConf *c);

/**
 * nsscache_conf_load_token() - the bearer token for this run.
 * token_file (re-read every call; refused unless owned by the caller's
 * euid or root and not group/world accessible) wins over the
 * NSSCACHE_SCIM_AUTH_TOKEN environment variable, which wins over
 * scim_auth_token.  Surrounding whitespace is dropped; control characters
 * are refused.  The caller wipes it with erase_and_free().
 * Return: 0, -ENOKEY if no token is configured, -EPERM for a bad file mode,
 * other negative errno; *ret_error says why.
 */
int nsscache_conf_load_token(const NsscacheConf *c, char **ret_token, char **ret_error);

/**
 * nsscache_conf_ldap_password() - the bind password for this run:
 * ldap_bind_password_file (re-read every call, the rules of token_file)
 * wins over NSSCACHE_LDAP_BIND_PASSWORD, which wins over
 * ldap_bind_password; NULL in *@ret when none is set (an anonymous or
 * unauthenticated bind).  The caller wipes it with erase_and_free().
 * Return: 0, or a negative errno with *ret_error naming the key.
 */
int nsscache_conf_ldap_password(const NsscacheConf *c, char **ret, char **ret_error);
