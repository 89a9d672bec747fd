/* Unit tests for health-jwt: a minted token's signature checked with the
 * openssl command (its own HMAC, over every byte of the key file, NUL bytes
 * and a trailing newline included), its claims read back with json-c, and
 * the key files refused: group- or world-accessible, another owner,
 * oversized, empty, missing, not a regular file. */
#include <check.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "../../modules/health/transport/health-jwt.h"
#include "../lib/check-run.h"

#define NOW UINT64_C(1795703283)

static char dir[] = "/tmp/test-health-jwt-XXXXXX";

static void setup(void) {
        ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
        _cleanup_free_ char *cmd = NULL;

        if (!streq(dir + strlen(dir) - 6, "XXXXXX")) { /* made: mkdtemp() may put an X there too */
                ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", dir), 0);
                ck_assert_int_eq(system(cmd), 0);
        }
        memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
}

/* <dir>/@name holding @len bytes of @data with @mode; its path. */
static char *key_file(const char *name, const void *data, size_t len, mode_t mode) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
        ck_assert_int_eq(fileio_write_atomic(p, data, len, mode, (uid_t) -1, (gid_t) -1), 0);
        ck_assert_int_eq(chmod(p, mode), 0);
        return p;
}

/* base64url without padding, decoded here by a decoder of the test's own. */
static size_t b64url_decode(const char *s, size_t n, unsigned char *out) {
        static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        uint32_t acc = 0;
        unsigned bits = 0;
        size_t len = 0;

        for (size_t i = 0; i < n; i++) {
                const char *c = memchr(alphabet, s[i], 64);

                ck_assert_msg(c && s[i], "'%c' is not base64url", s[i]);
                acc = acc << 6 | (uint32_t) (c - alphabet);
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        out[len++] = (unsigned char) (acc >> bits);
                }
        }
        ck_assert_msg(n % 4 != 1, "a base64url length of %zu", n);
        return len;
}

/* The HMAC-SHA256 of @path with the key of @len bytes, as the openssl command computes it, in hex. */
static char *openssl_hmac(const char *path, const unsigned char *key, size_t len) {
        _cleanup_free_ char *hex = malloc(2 * len + 1), *cmd = NULL;
        char out[512], *eq;
        FILE *p;

        ck_assert_ptr_nonnull(hex);
        for (size_t i = 0; i < len; i++)
                sprintf(hex + 2 * i, "%02x", key[i]);
        ck_assert_int_ge(asprintf(&cmd, "openssl dgst -sha256 -mac HMAC -macopt hexkey:%s '%s'", hex, path),
                         0);
        p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        ck_assert_msg(fgets(out, sizeof(out), p), "no output from: %s", cmd);
        ck_assert_msg(pclose(p) == 0, "openssl failed (Debian package openssl is needed): %s", cmd);
        eq = strstr(out, "= ");
        ck_assert_msg(eq, "openssl said: %s", out);
        eq[2 + strcspn(eq + 2, "\n")] = 0;
        return strdup(eq + 2);
}

/* Checks @token against @key (@len bytes) with openssl and returns its claims. */
static json_object *verify(const char *token, const unsigned char *key, size_t len) {
        const char *dot1 = strchr(token, '.'), *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
        _cleanup_free_ char *input = NULL, *want = NULL;
        unsigned char buf[1024], sig[64];
        char got[129];
        size_t n;
        json_object *header, *claims;

        ck_assert_msg(dot1 && dot2 && !strchr(dot2 + 1, '.'), "not three parts: %s", token);
        ck_assert_msg(strspn(token, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") ==
                              strlen(token),
                      "not base64url without padding: %s", token);
        input = key_file("signed", token, (size_t) (dot2 - token), 0600);
        want = openssl_hmac(input, key, len);
        n = b64url_decode(dot2 + 1, strlen(dot2 + 1), sig);
        ck_assert_uint_eq(n, 32);
        for (size_t i = 0; i < n; i++)
                sprintf(got + 2 * i, "%02x", sig[i]);
        ck_assert_str_eq(got, want);

        n = b64url_decode(token, (size_t) (dot1 - token), buf);
        buf[n] = 0;
        header = json_tokener_parse((char *) buf);
        ck_assert_ptr_nonnull(header);
        ck_assert_str_eq(json_object_get_string(json_object_object_get(header, "alg")), "HS256");
        ck_assert_str_eq(json_object_get_string(json_object_object_get(header, "typ")), "JWT");
        json_object_put(header);
        n = b64url_decode(dot1 + 1, (size_t) (dot2 - dot1 - 1), buf);
        buf[n] = 0;
        claims = json_tokener_parse((char *) buf);
        ck_assert_msg(claims && json_object_is_type(claims, json_type_object), "claims: %s", buf);
        return claims;
}

static void assert_claims(json_object *claims, const char *user, uint64_t iat, uint64_t exp) {
        ck_assert_str_eq(json_object_get_string(json_object_object_get(claims, "sun")), user);
        ck_assert_uint_eq((uint64_t) json_object_get_int64(json_object_object_get(claims, "iat")), iat);
        ck_assert_uint_eq((uint64_t) json_object_get_int64(json_object_object_get(claims, "exp")), exp);
        ck_assert_int_eq(json_object_object_length(claims), 3);
        json_object_put(claims);
}

/* 32 random bytes with NUL bytes among them and a trailing newline: all 33 are the key. */
START_TEST(test_mint_raw_key) {
        unsigned char key[33];
        _cleanup_free_ char *path = NULL, *token = NULL, *e = NULL, *input = NULL, *without_nl = NULL;
        FILE *f;

        ck_assert_ptr_nonnull(f = fopen("/dev/urandom", "re"));
        ck_assert_uint_eq(fread(key, 1, 32, f), 32);
        fclose(f);
        key[0] = 0;
        key[17] = 0;
        key[31] = 0;
        key[32] = '\n';
        path = key_file("jwt_hs256.key", key, sizeof(key), 0600);
        ck_assert_int_eq(health_jwt_mint(path, (uid_t) -1, "root", NOW, 600, &token, &e), 0);
        ck_assert_ptr_null(e);
        assert_claims(verify(token, key, sizeof(key)), "root", NOW, NOW + 600);
        /* the same token checked with the key less its newline does not verify */
        input = key_file("input", token, (size_t) (strrchr(token, '.') - token), 0600);
        without_nl = openssl_hmac(input, key, 32);
        {
                _cleanup_free_ char *with_nl = openssl_hmac(input, key, 33);

                ck_assert_str_ne(with_nl, without_nl);
        }
        explicit_bzero(key, sizeof(key));
}
END_TEST

START_TEST(test_mint_users_and_times) {
        static const unsigned char key[] = "0123456789abcdef0123456789abcdef";
        static const char *const users[] = { "slurm", "a", "user.name-with_all@chars$", "x" };
        _cleanup_free_ char *path = key_file("k", key, 32, 0400);

        for (size_t i = 0; i < ELEMENTSOF(users); i++)
                for (uint64_t life = 1; life <= 100000; life *= 317) {
                        _cleanup_free_ char *token = NULL, *e = NULL;

                        ck_assert_int_eq(
                                health_jwt_mint(path, (uid_t) -1, users[i], NOW + i, life, &token, &e), 0);
                        assert_claims(verify(token, key, 32), users[i], NOW + i, NOW + i + life);
                }
        /* a known vector (Python's hmac and base64 gave it): the same inputs give the same token */
        {
                _cleanup_free_ char *a = NULL, *b = NULL, *e = NULL;

                ck_assert_int_eq(health_jwt_mint(path, (uid_t) -1, "slurm", 1700000000, 60, &a, &e), 0);
                ck_assert_int_eq(health_jwt_mint(path, (uid_t) -1, "slurm", 1700000000, 60, &b, &e), 0);
                ck_assert_str_eq(a, b);
                ck_assert_str_eq(a, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
                                    "eyJleHAiOjE3MDAwMDAwNjAsImlhdCI6MTcwMDAwMDAwMCwic3VuIjoic2x1cm0ifQ."
                                    "zl25lih0d_5y6f7QY7W1MOMPeq97ClmUHecj9T0Co54");
        }
}
END_TEST

START_TEST(test_bad_arguments) {
        static const char *const bad[] = { "", "a b", "x\"y", "a\\b", "\x01", "tab\there", "\x7f" };
        static const unsigned char key[32] = { 1, 2, 3 };
        _cleanup_free_ char *path = key_file("k", key, sizeof(key), 0600), *token = NULL, *e = NULL;
        char long_user[300];

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ck_assert_int_eq(health_jwt_mint(path, (uid_t) -1, bad[i], NOW, 60, &token, &e), -EINVAL);
                ck_assert_ptr_nonnull(e);
                ck_assert_ptr_nonnull(strstr(e, "a JWT's user must be"));
                e = mfree(e);
        }
        ck_assert_int_eq(health_jwt_mint(path, (uid_t) -1, NULL, NOW, 60, &token, &e), -EINVAL);
        e = mfree(e);
        memset(long_user, 'u', sizeof(long_user) - 1);
        long_user[sizeof(long_user) - 1] = 0;
        ck_assert_int_eq(health_jwt_mint(path, (uid_t) -1, long_user, NOW, 60, &token, &e), -EINVAL);
        e = mfree(e);
        ck_assert_int_eq(health_jwt_mint(path, (uid_t) -1, "root", NOW, 0, &token, &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e, "lifetime"));
        e = mfree(e);
        ck_assert_int_eq(health_jwt_mint(path, (uid_t) -1, "root", NOW, UINT64_MAX, &token, &e), -EINVAL);
        e = mfree(e);
        ck_assert_int_eq(health_jwt_mint(path, (uid_t) -1, "root", UINT64_MAX - 10, 60, &token, &e),
                         -EINVAL);
        ck_assert_ptr_null(token);
}
END_TEST

/* A mint that must be refused with -@err and a message holding @part. */
static void assert_refused(const char *path, uid_t slurm_uid, int err, const char *part) {
        _cleanup_free_ char *token = NULL, *e = NULL, *e2 = NULL;

        ck_assert_int_eq(health_jwt_mint(path, slurm_uid, "root", NOW, 60, &token, &e), -err);
        ck_assert_ptr_null(token);
        ck_assert_msg(e && strstr(e, part), "want '%s' in '%s'", part, e);
        ck_assert_int_eq(health_jwt_key_check(path, slurm_uid, &e2), -err);
        ck_assert_str_eq(e, e2);
}

static void assert_accepted(const char *path, uid_t slurm_uid) {
        _cleanup_free_ char *token = NULL, *e = NULL;

        ck_assert_msg(health_jwt_mint(path, slurm_uid, "root", NOW, 60, &token, &e) == 0, "%s", e);
        ck_assert_ptr_nonnull(token);
        ck_assert_int_eq(health_jwt_key_check(path, slurm_uid, &e), 0);
}

START_TEST(test_key_modes) {
        static const unsigned char key[32] = { 7 };
        static const mode_t refused[] = { 0640, 0604, 0620, 0602, 0610, 0601, 0644, 0666, 0660 };
        static const mode_t accepted[] = { 0600, 0400, 0700, 0200 };

        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                _cleanup_free_ char *path = key_file("k", key, sizeof(key), refused[i]), *want = NULL;

                ck_assert_int_ge(
                        asprintf(&want,
                                 "'%s': refused: group or others may use it (mode %04o, owner uid %u)", path,
                                 (unsigned) refused[i], (unsigned) geteuid()),
                        0);
                assert_refused(path, (uid_t) -1, EPERM, want);
        }
        for (size_t i = 0; i < ELEMENTSOF(accepted); i++) {
                _cleanup_free_ char *path = key_file("k", key, sizeof(key), accepted[i]);

                assert_accepted(path, geteuid());
        }
}
END_TEST

START_TEST(test_key_owner) {
        static const unsigned char key[32] = { 9 };
        _cleanup_free_ char *path = key_file("k", key, sizeof(key), 0600), *want = NULL;
        uid_t owner = geteuid();

        if (owner == 0) { /* a key of another uid: SlurmUser's, or a stranger's */
                owner = 64030;
                ck_assert_int_eq(chown(path, owner, (gid_t) -1), 0);
        }
        assert_accepted(path, owner);
        ck_assert_int_ge(asprintf(&want,
                                  "'%s': refused: the owner is wrong: uid %u, not root (chown root '%s')",
                                  path, (unsigned) owner, path),
                         0);
        assert_refused(path, (uid_t) -1, EPERM, want);
        want = mfree(want);
        ck_assert_int_ge(asprintf(&want,
                                  "'%s': refused: the owner is wrong: uid %u, not root or SlurmUser (uid "
                                  "%u) (chown root '%s')",
                                  path, (unsigned) owner, (unsigned) owner + 1, path),
                         0);
        assert_refused(path, owner + 1, EPERM, want);
}
END_TEST

START_TEST(test_key_files) {
        _cleanup_free_ char *big = calloc(1, HEALTH_JWT_KEY_MAX + 1), *fifo = NULL, *link = NULL,
                            *good = NULL, *missing = NULL;

        ck_assert_ptr_nonnull(big);
        {
                _cleanup_free_ char *path = key_file("big", big, HEALTH_JWT_KEY_MAX + 1, 0600);

                assert_refused(path, (uid_t) -1, EFBIG, "65537 bytes, more than a JWT key may be (65536)");
        }
        {
                _cleanup_free_ char *path = key_file("max", big, HEALTH_JWT_KEY_MAX, 0600);

                assert_accepted(path, (uid_t) -1);
        }
        {
                _cleanup_free_ char *path = key_file("empty", "", 0, 0600);

                assert_refused(path, (uid_t) -1, ENODATA, "the JWT key is empty");
        }
        {
                _cleanup_free_ char *path = key_file("nl", "\n", 1, 0600);

                assert_accepted(path, (uid_t) -1); /* one byte, a newline: a key all the same */
        }
        ck_assert_int_ge(asprintf(&missing, "%s/missing", dir), 0);
        assert_refused(missing, (uid_t) -1, ENOENT, "/missing': No such file or directory");
        ck_assert_int_ge(asprintf(&fifo, "%s/fifo", dir), 0);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        assert_refused(fifo, (uid_t) -1, EPERM, "refused: the JWT key must be a regular file");
        assert_refused(dir, (uid_t) -1, EPERM, "refused: the JWT key must be a regular file");
        /* a Kubernetes Secret volume: the key behind symlinks */
        good = key_file("..data-key", "0123456789abcdef0123456789abcdef", 32, 0600);
        ck_assert_int_ge(asprintf(&link, "%s/jwt_hs256.key", dir), 0);
        ck_assert_int_eq(symlink("..data-key", link), 0);
        assert_accepted(link, (uid_t) -1);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("health-jwt");
        TCase *tc = tcase_create("jwt");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_mint_raw_key);
        tcase_add_test(tc, test_mint_users_and_times);
        tcase_add_test(tc, test_bad_arguments);
        tcase_add_test(tc, test_key_modes);
        tcase_add_test(tc, test_key_owner);
        tcase_add_test(tc, test_key_files);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
