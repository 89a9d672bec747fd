#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"
#include "util/strbuf.h"

#include "health-jwt.h"

/* The key's bytes and the size of their buffer, wiped whole before free. */
typedef struct JwtKey {
        unsigned char *bytes;
        size_t len, size;
} JwtKey;

static void jwt_key_wipe(JwtKey *k) {
        if (k->bytes) {
                explicit_bzero(k->bytes, k->size);
                free(k->bytes);
        }
        *k = (JwtKey){};
}

static int key_refuse(const char *path, const struct stat *st, uid_t slurm_uid, char **ret_error) {
        unsigned mode = (unsigned) (st->st_mode & 07777), owner = (unsigned) st->st_uid;

        if (!S_ISREG(st->st_mode))
                return errmsg_set(ret_error, -EPERM, "'%s': refused: the JWT key must be a regular file",
                                  path);
        if (st->st_uid != 0 && (slurm_uid == (uid_t) -1 || st->st_uid != slurm_uid)) {
                if (slurm_uid == (uid_t) -1)
                        return errmsg_set(
                                ret_error, -EPERM,
                                "'%s': refused: the owner is wrong: uid %u, not root (chown root '%s')",
                                path, owner, path);
                return errmsg_set(
                        ret_error, -EPERM,
                        "'%s': refused: the owner is wrong: uid %u, not root or SlurmUser (uid %u) "
                        "(chown root '%s')",
                        path, owner, (unsigned) slurm_uid, path);
        }
        if (st->st_mode & 077)
                return errmsg_set(ret_error, -EPERM,
                                  "'%s': refused: group or others may use it (mode %04o, owner uid %u); "
                                  "it mints a token for any user: chmod 600",
                                  path, mode, owner);
        return 0;
}

/* The key file's bytes, all of them: Slurm hashes the file as it is. */
static int key_read(const char *path, uid_t slurm_uid, JwtKey *key, char **ret_error) {
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 || fstat(fd, &st) < 0)
                return errmsg_set(ret_error, negative_errno(), "'%s': %s", path, strerror(errno));
        r = key_refuse(path, &st, slurm_uid, ret_error);
        if (r < 0)
                return r;
        if (st.st_size > HEALTH_JWT_KEY_MAX)
                return errmsg_set(ret_error, -EFBIG,
                                  "'%s': %" PRIi64 " bytes, more than a JWT key may be (%d)", path,
                                  (int64_t) st.st_size, HEALTH_JWT_KEY_MAX);
        /* a byte more than the file: one that grew since fstat() is caught */
        key->size = (size_t) st.st_size + 1;
        key->bytes = malloc(key->size);
        if (!key->bytes)
                return -ENOMEM;
        while (key->len < key->size) {
                ssize_t k = read(fd, key->bytes + key->len, key->size - key->len);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return errmsg_set(ret_error, negative_errno(), "'%s': %s", path, strerror(errno));
                if (k == 0)
                        break;
                key->len += (size_t) k;
        }
        if (key->len > (size_t) st.st_size)
                return errmsg_set(ret_error, -EBUSY, "'%s': changed while being read", path);
        if (key->len == 0)
                return errmsg_set(ret_error, -ENODATA, "'%s': the JWT key is empty", path);
        return 0;
}

int health_jwt_key_check(const char *key_file, uid_t slurm_uid, char **ret_error) {
        _cleanup_(jwt_key_wipe) JwtKey key = {};

        return key_read(key_file, slurm_uid, &key, ret_error);
}

/* base64url (RFC 4648 section 5) without padding, as JWS writes it. */
static void put_b64url(StrBuf *b, const void *data, size_t n) {
        static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        const unsigned char *p = data;

        for (size_t i = 0; i < n; i += 3) {
                uint32_t v = (uint32_t) p[i] << 16 | (i + 1 < n ? (uint32_t) p[i + 1] << 8 : 0) |
                             (i + 2 < n ? p[i + 2] : 0);

                strbuf_putc(b, alphabet[v >> 18 & 63]);
                strbuf_putc(b, alphabet[v >> 12 & 63]);
                if (i + 1 < n)
                        strbuf_putc(b, alphabet[v >> 6 & 63]);
                if (i + 2 < n)
                        strbuf_putc(b, alphabet[v & 63]);
        }
}

/* A user name goes into the claims as it is: no byte that JSON would need escaped, nothing unprintable. */
static bool user_ok(const char *user) {
        if (isempty(user) || strlen(user) > HEALTH_JWT_USER_MAX)
                return false;
        for (const unsigned char *p = (const unsigned char *) user; *p; p++)
                if (*p <= ' ' || *p >= 0x7f || *p == '"' || *p == '\\')
                        return false;
        return true;
}

int health_jwt_mint(const char *key_file, uid_t slurm_uid, const char *user, uint64_t now, uint64_t lifetime,
                    char **ret, char **ret_error) {
        static const char header[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
        _cleanup_(jwt_key_wipe) JwtKey key = {};
        _cleanup_free_ char *claims = NULL;
        unsigned char mac[EVP_MAX_MD_SIZE];
        unsigned mac_len = 0;
        StrBuf b = {};
        int r;

        *ret = NULL;
        if (!user_ok(user))
                return errmsg_set(
                        ret_error, -EINVAL,
                        "a JWT's user must be 1 to %d printable bytes, without space, '\"' or '\\'",
                        HEALTH_JWT_USER_MAX);
        if (lifetime == 0 || lifetime > INT64_MAX || now > INT64_MAX - lifetime)
                return errmsg_set(ret_error, -EINVAL,
                                  "a JWT lifetime of %" PRIu64 "s from %" PRIu64 " is out of range",
                                  lifetime, now);
        r = key_read(key_file, slurm_uid, &key, ret_error);
        if (r < 0)
                return r;
        if (asprintf(&claims, "{\"exp\":%" PRIu64 ",\"iat\":%" PRIu64 ",\"sun\":\"%s\"}", now + lifetime,
                     now, user) < 0)
                return -ENOMEM;
        put_b64url(&b, header, strlen(header));
        strbuf_putc(&b, '.');
        put_b64url(&b, claims, strlen(claims));
        if (b.oom) {
                strbuf_done(&b);
                return -ENOMEM;
        }
        if (!HMAC(EVP_sha256(), key.bytes, (int) key.len, (const unsigned char *) b.data, b.len, mac,
                  &mac_len)) {
                strbuf_done(&b);
                return errmsg_set(ret_error, -EIO, "HMAC-SHA256 failed in OpenSSL");
        }
        strbuf_putc(&b, '.');
        put_b64url(&b, mac, mac_len);
        *ret = strbuf_steal(&b, NULL);
        return *ret ? 0 : -ENOMEM;
}
