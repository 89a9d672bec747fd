/* S3 credentials, region and object URLs (s3-auth.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"
#include "s3-auth.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"
#include "util/secret-file.h"
#include "util/strbuf.h"

#define ENV_KEY_ID "AWS_ACCESS_KEY_ID"
#define ENV_SECRET "AWS_SECRET_ACCESS_KEY"
#define ENV_TOKEN "AWS_SESSION_TOKEN"

void s3_auth_done(S3Auth *a) {
        free(a->sigv4);
        erase_and_free(a->userpwd);
        erase_and_free(a->token);
        free(a->region);
        *a = (S3Auth){};
}

bool s3_region_valid(const char *region) {
        size_t n = strlen(region);

        return n > 0 && n <= S3_REGION_MAX && strspn(region, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

bool s3_bucket_valid(const char *bucket) {
        size_t n = strlen(bucket);

        return n >= 3 && n <= 222 && strspn(bucket, "abcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

bool s3_object_valid(const char *object) {
        size_t n = strlen(object);

        if (n == 0 || n > 1024 || object[0] == '/')
                return false;
        for (const char *p = object; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return false;
        return true;
}

/* A key id is [A-Z0-9] on AWS; none may hold the ':' that ends it in userpwd. */
static bool key_id_valid(const char *s) {
        size_t n = strlen(s);

        return n > 0 && n <= 128 &&
               strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

static bool secret_valid(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if ((unsigned char) *s <= 0x20 || *s == 0x7f)
                        return false;
        return true;
}

typedef struct Creds {
        char *key_id, *secret, *token; /* in the file's buffer */
} Creds;

/* One "key = value" line of [default]; other keys (region, output) are the CLI's. */
static int creds_line(Creds *cr, char *line, const char *path, unsigned n, char **ret_error) {
        char *eq = strchr(line, '='), *k, *v;

        if (!eq)
                return errmsg_set(ret_error, -EBADMSG, "'%s': line %u: expected 'key = value'", path, n);
        *eq = 0;
        k = ini_strip(line);
        v = ini_strip(eq + 1);
        if (streq(k, "aws_access_key_id"))
                cr->key_id = v;
        else if (streq(k, "aws_secret_access_key"))
                cr->secret = v;
        else if (streq(k, "aws_session_token"))
                cr->token = v;
        return 0;
}

/* The [default] profile of the AWS shared credentials file text @buf. */
static int creds_parse(char *buf, const char *path, Creds *ret, char **ret_error) {
        bool in_default = false;
        unsigned n = 0;

        /* line by line, blank ones counted: errors name the line an editor shows */
        for (char *line = buf, *next; line; line = next) {
                char *l;
                int r;

                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                l = ini_strip(line);
                n++;
                if (!*l || *l == '#' || *l == ';')
                        continue;
                if (*l == '[') {
                        char *e = strchr(l, ']');

                        if (!e || e[1])
                                return errmsg_set(ret_error, -EBADMSG, "'%s': line %u: bad section header",
                                                  path, n);
                        *e = 0;
                        in_default = streq(ini_strip(l + 1), "default");
                        continue;
                }
                if (!in_default)
                        continue;
                r = creds_line(ret, l, path, n, ret_error);
                if (r < 0)
                        return r;
        }
        if (!ret->key_id || !ret->secret)
                return errmsg_set(ret_error, -EBADMSG,
                                  "'%s': [default] needs aws_access_key_id and aws_secret_access_key", path);
        return 0;
}

static int auth_set(S3Auth *a, const Creds *cr, const char *where, char **ret_error) {
        if (!key_id_valid(cr->key_id))
                return errmsg_set(ret_error, -EBADMSG, "%s: aws_access_key_id: must be letters and digits",
                                  where);
        if (!secret_valid(cr->secret) || (cr->token && !secret_valid(cr->token)))
                return errmsg_set(ret_error, -EBADMSG,
                                  "%s: %s: empty, or a space or control character in it", where,
                                  secret_valid(cr->secret) ? "aws_session_token" : "aws_secret_access_key");
        if (asprintf(&a->userpwd, "%s:%s", cr->key_id, cr->secret) < 0) {
                a->userpwd = NULL;
                return -ENOMEM;
        }
        if (cr->token && *cr->token && !(a->token = strdup(cr->token)))
                return -ENOMEM;
        return 0;
}

static int auth_from_file(S3Auth *a, const char *path, char **ret_error) {
        _cleanup_erase_ char *buf = NULL;
        Creds cr = {};
        char *where;
        int r;

        r = secret_file_read(path, S3_CREDENTIALS_MAX, &buf, ret_error);
        if (r < 0)
                return r == -ENODATA ? -EBADMSG : r;
        r = creds_parse(buf, path, &cr, ret_error);
        if (r < 0)
                return r;
        if (asprintf(&where, "'%s'", path) < 0)
                return -ENOMEM;
        r = auth_set(a, &cr, where, ret_error);
        free(where);
        return r;
}

static int auth_from_env(S3Auth *a, char **ret_error) {
        const char *id = secure_getenv(ENV_KEY_ID), *secret = secure_getenv(ENV_SECRET),
                   *token = secure_getenv(ENV_TOKEN);
        Creds cr = { (char *) id, (char *) secret, (char *) token };

        if (isempty(id) || isempty(secret))
                return errmsg_set(ret_error, -ENOKEY,
                                  "no S3 credentials: set s3_credentials_file, or %s and %s", ENV_KEY_ID,
                                  ENV_SECRET);
        return auth_set(a, &cr, "the environment", ret_error);
}

static const char *region_of(const NsscacheConf *c) {
        const char *r;

        if (c->s3_region)
                return c->s3_region;
        if (!isempty(r = secure_getenv("AWS_REGION")))
                return r;
        if (!isempty(r = secure_getenv("AWS_DEFAULT_REGION")))
                return r;
        return S3_REGION_DEFAULT;
}

int s3_auth_load(const NsscacheConf *c, S3Auth *ret, const char **ret_key, char **ret_error) {
        _cleanup_(s3_auth_done) S3Auth a = {};
        const char *region = region_of(c);
        int r;

        *ret_key = c->s3_region ? "s3_region" : NULL;
        if (!s3_region_valid(region))
                return errmsg_set(
                        ret_error, -EINVAL,
                        "S3 region '%s' is not valid (lowercase letters, digits and '-', e.g. us-east-1)",
                        region);
        *ret_key = c->s3_credentials_file ? "s3_credentials_file" : NULL;
        r = c->s3_credentials_file ? auth_from_file(&a, c->s3_credentials_file, ret_error)
                                   : auth_from_env(&a, ret_error);
        if (r < 0)
                return r;
        if (!(a.region = strdup(region)) || asprintf(&a.sigv4, "aws:amz:%s:s3", region) < 0) {
                a.sigv4 = NULL;
                return -ENOMEM;
        }
        *ret = a;
        a = (S3Auth){};
        return 0;
}

void s3_auth_apply(const S3Auth *a, HttpFetchOptions *o) {
        o->aws_sigv4 = a->sigv4;
        o->userpwd = a->userpwd;
        o->security_token = a->token;
}

int s3_join(const char *base, const char *name, char **ret) {
        size_t n = strlen(base);

        while (n > 0 && base[n - 1] == '/')
                n--;
        return asprintf(ret, "%.*s/%s", (int) n, base, name) < 0 ? -ENOMEM : 0;
}

int s3_object_url(const NsscacheConf *c, const char *region, const char *object, char **ret) {
        _cleanup_free_ char *endpoint = NULL, *bucket = NULL;
        StrBuf s = {};
        size_t len;

        if (c->s3_endpoint)
                endpoint = strdup(c->s3_endpoint);
        else if (asprintf(&endpoint, "https://s3.%s.amazonaws.com", region) < 0)
                endpoint = NULL;
        if (!endpoint || s3_join(endpoint, c->s3_bucket, &bucket) < 0)
                return -ENOMEM;
        strbuf_puts(&s, bucket);
        strbuf_putc(&s, '/');
        for (const char *p = object; *p; p++) {
                if (isalnum((unsigned char) *p) || strchr("-._~/", *p))
                        strbuf_putc(&s, *p);
                else {
                        char hex[4];

                        (void) snprintf(hex, sizeof(hex), "%%%02X", (unsigned char) *p);
                        strbuf_puts(&s, hex);
                }
        }
        *ret = strbuf_steal(&s, &len);
        return *ret ? 0 : -ENOMEM;
}
