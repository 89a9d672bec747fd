/* What nsscache-conf-keys.c (the key table and its readers) and
 * nsscache-conf-check.c (the checks across keys) share, and no one else. */
#pragma once

#include <stdbool.h>

#include "nsscache-conf.h"
#include "nsscache-source.h"

#define GCS_HINT                                                                                            \
        "nsscache's gcs source is not supported: use source = s3 with s3_endpoint = "                       \
        "https://storage.googleapis.com, s3_bucket and s3_*_object, and an HMAC key of the bucket's "       \
        "service "                                                                                          \
        "account in s3_credentials_file"

/* Whether @s holds a C0 control character or DEL. */
static inline bool nsscache_conf_has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/** nsscache_conf_ini_name() - the nsscache.conf name of a key a check names by its sunkd.yaml name. */
const char *nsscache_conf_ini_name(const char *yaml);

/** nsscache_conf_ini_origin() - the line of ini_file where @key was set for @section (or in [DEFAULT]); 0 if
 * not. */
unsigned nsscache_conf_ini_origin(const NsscacheConf *c, const char *section, const char *key);

/**
 * nsscache_conf_token_read() - the token as each run takes it, and in
 * *@ret_key the key it came from (NULL: the environment, or none), which
 * the callers name before an error.
 */
int nsscache_conf_token_read(const NsscacheConf *c, char **ret_token, char **ret_error,
                             const char **ret_key);

/**
 * nsscache_conf_check_located() - nsscache_conf_finalize()'s checks, the
 * directories written, the token, signing key and S3 credentials; an error
 * is prefixed with where its key was written (sunkd.yaml, nsscache.conf, or
 * the section @cfg).
 */
int nsscache_conf_check_located(NsscacheConf *c, const sunkd_host_api *api, const sunkd_cfg *cfg,
                                char **ret_error);

/* Which key a cross-key check failed on, so the caller can say where that
 * key was written (a YAML line, or the nsscache.conf it came from). */
struct ConfFault {
        int map; /* NssMapType of a per-map key, -1 for a top-level one */
        const char *key;
};

/** nsscache_conf_check_scim(), _http(), _s3() - the rows' check (nsscache-source.h): one source's keys. */
int nsscache_conf_check_scim(NsscacheConf *c, ConfFault *f, char **ret_error);
int nsscache_conf_check_http(NsscacheConf *c, ConfFault *f, char **ret_error);
int nsscache_conf_check_s3(NsscacheConf *c, ConfFault *f, char **ret_error);
int nsscache_conf_check_ldap(NsscacheConf *c, ConfFault *f, char **ret_error);
