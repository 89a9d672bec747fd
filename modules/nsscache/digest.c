/* Keyed digests through OpenSSL's SipHash. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "digest.h"
#include "util/rand-util.h"

struct Digest {
        EVP_MAC *mac;
        EVP_MAC_CTX *ctx;
        uint8_t key[DIGEST_KEY_LEN];
};

Digest *digest_free(Digest *d) {
        if (!d)
                return NULL;
        EVP_MAC_CTX_free(d->ctx);
        EVP_MAC_free(d->mac);
        explicit_bzero(d->key, sizeof(d->key));
        free(d);
        return NULL;
}

int digest_new(const uint8_t key[static DIGEST_KEY_LEN], Digest **ret) {
        Digest *d = calloc(1, sizeof(*d));

        if (!d)
                return -ENOMEM;
        memcpy(d->key, key, DIGEST_KEY_LEN);
        d->mac = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
        d->ctx = d->mac ? EVP_MAC_CTX_new(d->mac) : NULL;
        if (!d->ctx) {
                digest_free(d);
                return -ENOMEM;
        }
        *ret = d;
        return 0;
}

int digest_begin(Digest *d) {
        size_t size = DIGEST_LEN;
        unsigned int c_rounds = 1, d_rounds = 3;
        const OSSL_PARAM params[] = {
                OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size),
                OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_C_ROUNDS, &c_rounds),
                OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_D_ROUNDS, &d_rounds),
                OSSL_PARAM_construct_end(),
        };

        return EVP_MAC_init(d->ctx, d->key, DIGEST_KEY_LEN, params) == 1 ? 0 : -ENOMEM;
}

int digest_feed(Digest *d, const void *p, size_t n) {
        return EVP_MAC_update(d->ctx, p, n) == 1 ? 0 : -ENOMEM;
}

int digest_end(Digest *d, uint8_t ret[static DIGEST_LEN]) {
        size_t n = 0;

        return EVP_MAC_final(d->ctx, ret, &n, DIGEST_LEN) == 1 && n == DIGEST_LEN ? 0 : -ENOMEM;
}

void digest_key_new(uint8_t ret[static DIGEST_KEY_LEN]) {
        uint64_t k[2] = { random_u64(), random_u64() };

        memcpy(ret, k, DIGEST_KEY_LEN);
        explicit_bzero(k, sizeof(k));
}
