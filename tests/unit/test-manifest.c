/* The signed manifest: round trip, and every way a hostile server could bend one. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include "modules/nsscache/fleet/manifest.h"
#include "util/cleanup.h"
#include "../lib/check-run.h"

static EVP_PKEY *keygen(void) {
        EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");

        ck_assert_ptr_nonnull(k);
        return k;
}

static void sample(Manifest *m, uint64_t generation) {
        *m = (Manifest){ .generation = generation, .time = 1700000000, .users = 3, .groups = 1 };
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                m->map[t].present = true;
                ck_assert_int_ge(asprintf(&m->map[t].file, "%s-%d", nss_map_to_string(t), (int) t), 0);
                m->map[t].size = 100 + t;
                memset(m->map[t].sha256, 0xa0 + t, MANIFEST_SHA256_LEN);
        }
}

static char *signed_text(EVP_PKEY *k, uint64_t generation) {
        _cleanup_(manifest_done) Manifest m;
        char *text;
        size_t len;

        sample(&m, generation);
        ck_assert_int_eq(manifest_sign(&m, k, &text, &len), 0);
        ck_assert_uint_eq(strlen(text), len);
        return text;
}

/* An envelope around @payload, signed by @k (so only the payload's schema is tested). */
static char *wrap(EVP_PKEY *k, const char *payload) {
        char *msg, *text, p64[8192], s64[128];
        unsigned char sig[64];
        size_t n = sizeof(sig);
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();

        ck_assert_int_ge(asprintf(&msg, "%s%s", MANIFEST_CONTEXT, payload), 0);
        ck_assert_int_eq(EVP_DigestSignInit(ctx, NULL, NULL, NULL, k), 1);
        ck_assert_int_eq(EVP_DigestSign(ctx, sig, &n, (unsigned char *) msg, strlen(msg)), 1);
        EVP_MD_CTX_free(ctx);
        free(msg);
        ck_assert_uint_lt(strlen(payload), 6000);
        EVP_EncodeBlock((unsigned char *) p64, (const unsigned char *) payload, (int) strlen(payload));
        EVP_EncodeBlock((unsigned char *) s64, sig, (int) n);
        ck_assert_int_ge(asprintf(&text, "{\"payload\":\"%s\",\"signature\":\"%s\"}", p64, s64), 0);
        return text;
}

static int verify(EVP_PKEY *k, const char *text, char **err) {
        _cleanup_(manifest_done) Manifest m = {};

        free(*err);
        *err = NULL;
        return manifest_verify(text, strlen(text), k, &m, err);
}

START_TEST(test_round_trip) {
        _cleanup_(evp_pkey_freep) EVP_PKEY *k = keygen();
        _cleanup_free_ char *text = signed_text(k, 7), *err = NULL;
        _cleanup_(manifest_done) Manifest m = {};

        ck_assert_int_eq(manifest_verify(text, strlen(text), k, &m, &err), 0);
        ck_assert_uint_eq(m.generation, 7);
        ck_assert_int_eq(m.time, 1700000000);
        ck_assert_uint_eq(m.users, 3);
        ck_assert_uint_eq(m.groups, 1);
        ck_assert_str_eq(m.map[NSS_MAP_SSHKEY].file, "sshkey-3");
        ck_assert_uint_eq(m.map[NSS_MAP_GROUP].size, 100 + NSS_MAP_GROUP);
        ck_assert_int_eq(m.map[NSS_MAP_SHADOW].sha256[31], 0xa0 + NSS_MAP_SHADOW);
        ck_assert(!m.map[NSS_MAP_PASSWD].delta.present);
}
END_TEST

START_TEST(test_round_trip_delta) {
        _cleanup_(evp_pkey_freep) EVP_PKEY *k = keygen();
        _cleanup_(manifest_done) Manifest m, back = {};
        _cleanup_free_ char *text = NULL, *err = NULL;
        ManifestDelta *d = &m.map[NSS_MAP_SHADOW].delta;
        size_t len;

        sample(&m, 9);
        *d = (ManifestDelta){
                .present = true, .file = strdup("shadow-delta-1"), .size = 42, .from_size = 7
        };
        memset(d->sha256, 0x11, MANIFEST_SHA256_LEN);
        memset(d->from, 0x22, MANIFEST_SHA256_LEN);
        ck_assert_int_eq(manifest_sign(&m, k, &text, &len), 0);
        ck_assert_int_eq(manifest_verify(text, len, k, &back, &err), 0);
        d = &back.map[NSS_MAP_SHADOW].delta;
        ck_assert(d->present);
        ck_assert_str_eq(d->file, "shadow-delta-1");
        ck_assert_uint_eq(d->size, 42);
        ck_assert_uint_eq(d->from_size, 7);
        ck_assert_int_eq(d->sha256[0], 0x11);
        ck_assert_int_eq(d->from[31], 0x22);
        ck_assert(!back.map[NSS_MAP_PASSWD].delta.present);
        /* a delta whose name would not verify is not signed */
        free(m.map[NSS_MAP_SHADOW].delta.file);
        m.map[NSS_MAP_SHADOW].delta.file = strdup("a/b");
        free(text);
        text = NULL;
        ck_assert_int_eq(manifest_sign(&m, k, &text, &len), -EINVAL);
}
END_TEST

START_TEST(test_public_key_text) {
        _cleanup_(evp_pkey_freep) EVP_PKEY *k = keygen(), *pub = NULL, *bad = NULL;
        _cleanup_free_ char *text = signed_text(k, 1), *err = NULL;
        unsigned char *der = NULL;
        char b64[256];
        int n = i2d_PUBKEY(k, &der);

        ck_assert_int_gt(n, 0);
        EVP_EncodeBlock((unsigned char *) b64, der, n);
        OPENSSL_free(der);
        ck_assert_int_eq(manifest_key_public(b64, &pub), 0);
        ck_assert_int_eq(verify(pub, text, &err), 0);
        ck_assert_int_eq(manifest_key_public("", &bad), -EBADMSG);
        ck_assert_int_eq(manifest_key_public("AAAA", &bad), -EBADMSG);
        ck_assert_int_eq(manifest_key_public("MCowBQYDK2VwAyEA!!!!", &bad), -EBADMSG);
        b64[strlen(b64) - 4] = 0; /* cut short */
        ck_assert_int_eq(manifest_key_public(b64, &bad), -EBADMSG);
}
END_TEST

static char *pub_b64(EVP_PKEY *k) {
        unsigned char *der = NULL;
        char *b64 = malloc(256);
        int n = i2d_PUBKEY(k, &der);

        ck_assert_int_gt(n, 0);
        EVP_EncodeBlock((unsigned char *) b64, der, n);
        OPENSSL_free(der);
        return b64;
}

START_TEST(test_several_keys) {
        _cleanup_(evp_pkey_freep) EVP_PKEY *old_key = keygen(), *new_key = keygen(), *third = keygen();
        _cleanup_free_ char *a = pub_b64(old_key), *b = pub_b64(new_key), *c = pub_b64(third);
        _cleanup_free_ char *two = NULL, *five = NULL, *bad2 = NULL, *text = signed_text(new_key, 3),
                            *err = NULL;
        _cleanup_(manifest_done) Manifest m = {};
        EVP_PKEY *keys[MANIFEST_KEYS_MAX];
        size_t bad;
        int n;

        /* the old and the new key while the producer's is rotated: either verifies */
        ck_assert_int_ge(asprintf(&two, " %s,\t%s\n", a, b), 0);
        n = manifest_keys_public(two, keys, &bad);
        ck_assert_int_eq(n, 2);
        ck_assert_int_eq(manifest_verify_keys(text, strlen(text), keys, 2, &m, &err), 0);
        ck_assert_ptr_null(err);
        ck_assert_uint_eq(m.generation, 3);
        manifest_done(&m);
        ck_assert_int_eq(manifest_verify_keys(text, strlen(text), keys, 1, &m, &err), -EPERM);
        ck_assert_str_eq(err, "manifest: the signature does not verify with the configured key");
        manifest_keys_free(keys, 2);
        /* more than MANIFEST_KEYS_MAX, none, one that is not a key */
        ck_assert_int_ge(asprintf(&five, "%s %s %s %s %s", a, b, c, a, b), 0);
        ck_assert_int_eq(manifest_keys_public(five, keys, &bad), -EBADMSG);
        ck_assert_uint_eq(bad, 0);
        ck_assert_int_eq(manifest_keys_public(" , ", keys, &bad), -EBADMSG);
        ck_assert_uint_eq(bad, 0);
        ck_assert_int_ge(asprintf(&bad2, "%s AAAA %s", a, b), 0);
        ck_assert_int_eq(manifest_keys_public(bad2, keys, &bad), -EBADMSG);
        ck_assert_uint_eq(bad, 2);
}
END_TEST

START_TEST(test_private_key_pem) {
        _cleanup_(evp_pkey_freep) EVP_PKEY *k = keygen(), *back = NULL, *rsa = NULL, *bad = NULL;
        EVP_PKEY *rsa_key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t) 1024);
        BIO *b = BIO_new(BIO_s_mem());
        char *p;
        long n;

        ck_assert_int_eq(PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL), 1);
        n = BIO_get_mem_data(b, &p);
        ck_assert_int_eq(manifest_key_private(p, (size_t) n, &back), 0);
        ck_assert_int_eq(EVP_PKEY_eq(k, back), 1);
        BIO_free(b);
        b = BIO_new(BIO_s_mem());
        ck_assert_int_eq(PEM_write_bio_PrivateKey(b, rsa_key, NULL, NULL, 0, NULL, NULL), 1);
        n = BIO_get_mem_data(b, &p);
        ck_assert_int_eq(manifest_key_private(p, (size_t) n, &rsa), -EBADMSG);
        BIO_free(b);
        EVP_PKEY_free(rsa_key);
        ck_assert_int_eq(manifest_key_private("not a key", 9, &bad), -EBADMSG);
}
END_TEST

START_TEST(test_wrong_key_and_tampering) {
        _cleanup_(evp_pkey_freep) EVP_PKEY *k = keygen(), *other = keygen();
        _cleanup_free_ char *text = signed_text(k, 5), *err = NULL, *higher = NULL;
        char *payload, *sig, saved;

        ck_assert_int_eq(verify(other, text, &err), -EPERM);
        ck_assert_str_eq(err, "manifest: the signature does not verify with the configured key");
        /* a flipped base64 character in the payload: another payload, the old signature */
        payload = strstr(text, "\"payload\":\"") + 11;
        saved = payload[10];
        payload[10] = saved == 'A' ? 'B' : 'A';
        ck_assert_int_eq(verify(k, text, &err), -EPERM);
        payload[10] = saved;
        ck_assert_int_eq(verify(k, text, &err), 0);
        sig = strstr(text, "\"signature\":\"") + 13;
        sig[5] = sig[5] == 'A' ? 'B' : 'A';
        ck_assert_int_eq(verify(k, text, &err), -EPERM);
        /* a higher generation signed by another key */
        higher = signed_text(other, 6);
        ck_assert_int_eq(verify(k, higher, &err), -EPERM);
}
END_TEST

START_TEST(test_envelope_hostile) {
        _cleanup_(evp_pkey_freep) EVP_PKEY *k = keygen();
        _cleanup_free_ char *err = NULL, *big = NULL, *good = signed_text(k, 2), *extra = NULL,
                            *trail = NULL;
        static const char *const bad[] = {
                "",
                "[]",
                "\"x\"",
                "{",
                "{}",
                "{\"payload\":\"AAAA\"}",
                "{\"payload\":1,\"signature\":\"AAAA\"}",
                "{\"payload\":\"AAAA\",\"signature\":\"AAAA\"}",
                "{\"payload\":\"A===\",\"signature\":\"AAAA\"}",
                "{\"payload\":{\"x\":[[[[[[[[1]]]]]]]]},\"signature\":\"AAAA\"}",
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(verify(k, bad[i], &err) == -EBADMSG, "%s accepted", bad[i]);
        big = malloc(MANIFEST_MAX + 2);
        memset(big, ' ', MANIFEST_MAX + 1);
        big[MANIFEST_MAX + 1] = 0;
        ck_assert_int_eq(verify(k, big, &err), -EFBIG);
        ck_assert_int_ge(asprintf(&extra, "%.*s,\"x\":1}", (int) (strlen(good) - 2), good), 0);
        ck_assert_int_eq(verify(k, extra, &err), -EBADMSG);
        ck_assert_int_ge(asprintf(&trail, "%s{}", good), 0);
        ck_assert_int_eq(verify(k, trail, &err), -EBADMSG);
        /* an embedded NUL ends nothing early */
        ck_assert_int_eq(manifest_verify(good, strlen(good) + 1, k, &(Manifest){}, &err), -EBADMSG);
}
END_TEST

#define HEX "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define MAP_OK                                                                                              \
        "\"passwd\":{\"file\":\"passwd-1\",\"size\":3,\"sha256\":\""                                        \
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}"

START_TEST(test_payload_hostile) {
        _cleanup_(evp_pkey_freep) EVP_PKEY *k = keygen();
        _cleanup_free_ char *err = NULL;
        static const struct {
                const char *payload, *error;
        } cases[] = {
                { "[1]", "manifest: the payload is not a JSON object" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{" MAP_OK
                  "}",
                  "manifest: the payload is not a JSON object" },
                { "{\"version\":2,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{}}",
                  "manifest: field 'version': out of range [1, 1]" },
                { "{\"version\":1,\"generation\":\"9\",\"time\":0,\"users\":0,\"groups\":0,\"maps\":{}}",
                  "manifest: field 'generation': must be an integer" },
                { "{\"version\":1,\"generation\":9.0,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{}}",
                  "manifest: field 'generation': must be an integer" },
                { "{\"version\":1,\"generation\":0,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{}}",
                  "manifest: field 'generation': out of range [1, 9007199254740992]" },
                { "{\"version\":1,\"generation\":99999999999999999999,\"time\":0,\"users\":0,\"groups\":0,"
                  "\"maps\":{}}",
                  "manifest: field 'generation': out of range [1, 9007199254740992]" },
                { "{\"version\":1,\"generation\":1,\"time\":-1,\"users\":0,\"groups\":0,\"maps\":{}}",
                  "manifest: field 'time': out of range [0, 9223372036854775807]" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":[]}",
                  "manifest: field 'maps': must be an object" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0}",
                  "manifest: field 'maps': missing" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{},\"x\":1}",
                  "manifest: unknown field in the payload" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{\"hosts\":{"
                  "}}}",
                  "manifest: field 'maps': unknown map" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{\"passwd\":"
                  "{\"file\":\"../etc/passwd\",\"size\":3,\"sha256\":\"00\"}}}",
                  "manifest: field 'maps.passwd.file': must be a file name of [A-Za-z0-9._-], not starting "
                  "with '.'" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{\"passwd\":"
                  "{\"file\":\"passwd-1\",\"size\":3,\"sha256\":\"00\"}}}",
                  "manifest: field 'maps.passwd.sha256': must be 64 lowercase hex digits" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{\"passwd\":"
                  "{\"file\":\"passwd-1\",\"size\":-3,\"sha256\":"
                  "\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}}}",
                  "manifest: field 'size': out of range [0, 9223372036854775807]" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{\"passwd\":"
                  "{\"file\":\"passwd-1\",\"size\":3}}}",
                  "manifest: field 'maps.passwd': must be an object of file, size, sha256 and optionally "
                  "delta" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{\"passwd\":"
                  "{\"file\":\"passwd-1\",\"size\":3,\"sha256\":\"" HEX "\",\"x\":1}}}",
                  "manifest: field 'maps.passwd': must be an object of file, size, sha256 and optionally "
                  "delta" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{\"passwd\":"
                  "{\"file\":\"passwd-1\",\"size\":3,\"sha256\":\"" HEX "\",\"delta\":[]}}}",
                  "manifest: field 'maps.passwd.delta': must be an object of file, size, sha256, from_size, "
                  "from_sha256" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{\"passwd\":"
                  "{\"file\":\"passwd-1\",\"size\":3,\"sha256\":\"" HEX "\",\"delta\":"
                  "{\"file\":\"../d\",\"size\":3,\"sha256\":\"" HEX
                  "\",\"from_size\":1,\"from_sha256\":\"" HEX "\"}}}}",
                  "manifest: field 'maps.passwd.delta.file': must be a file name of [A-Za-z0-9._-], not "
                  "starting with '.'" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{\"passwd\":"
                  "{\"file\":\"passwd-1\",\"size\":3,\"sha256\":\"" HEX "\",\"delta\":"
                  "{\"file\":\"d\",\"size\":3,\"sha256\":\"" HEX
                  "\",\"from_size\":1,\"from_sha256\":\"AB\"}}}}",
                  "manifest: field 'maps.passwd.delta.from_sha256': must be 64 lowercase hex digits" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{\"passwd\":"
                  "{\"file\":\"passwd-1\",\"size\":3,\"sha256\":\"" HEX "\",\"delta\":"
                  "{\"file\":\"d\",\"size\":3,\"sha256\":\"" HEX "\",\"from_size\":-1,\"from_sha256\":\"" HEX
                  "\"}}}}",
                  "manifest: field 'from_size': out of range [0, 9223372036854775807]" },
                { "{\"version\":1,\"generation\":1,\"time\":0,\"users\":0,\"groups\":0,\"maps\":{\"passwd\":"
                  "{\"file\":\"passwd-1\",\"size\":3,\"sha256\":\"" HEX "\",\"delta\":"
                  "{\"file\":\"d\",\"size\":3,\"sha256\":\"" HEX "\",\"from_size\":1,\"from\":\"" HEX
                  "\"}}}}",
                  "manifest: field 'maps.passwd.delta.from_sha256': must be 64 lowercase hex digits" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                _cleanup_free_ char *text = wrap(k, cases[i].payload);

                ck_assert_msg(verify(k, text, &err) == -EBADMSG, "accepted: %s", cases[i].payload);
                ck_assert_str_eq(err, cases[i].error);
        }
}
END_TEST

START_TEST(test_sign_refuses_what_would_not_verify) {
        _cleanup_(evp_pkey_freep) EVP_PKEY *k = keygen();
        _cleanup_(manifest_done) Manifest m;
        char *text = NULL;
        size_t len;

        sample(&m, 0);
        ck_assert_int_eq(manifest_sign(&m, k, &text, &len), -EINVAL);
        m.generation = 1;
        free(m.map[0].file);
        m.map[0].file = strdup(".hidden");
        ck_assert_int_eq(manifest_sign(&m, k, &text, &len), -EINVAL);
        ck_assert_ptr_null(text);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("manifest");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_round_trip_delta);
        tcase_add_test(tc, test_public_key_text);
        tcase_add_test(tc, test_several_keys);
        tcase_add_test(tc, test_private_key_pem);
        tcase_add_test(tc, test_wrong_key_and_tampering);
        tcase_add_test(tc, test_envelope_hostile);
        tcase_add_test(tc, test_payload_hostile);
        tcase_add_test(tc, test_sign_refuses_what_would_not_verify);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
