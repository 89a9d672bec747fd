/* authkeys-crypto.h with libcrypto linked: for the module and the tests. */
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "authkeys-crypto.h"

int authkeys_base64_decode(unsigned char *out, const unsigned char *in, int len) {
        return EVP_DecodeBlock(out, in, len);
}

int authkeys_base64_encode(unsigned char *out, const unsigned char *in, int len) {
        return EVP_EncodeBlock(out, in, len);
}

int authkeys_sha256(const unsigned char *data, size_t len, unsigned char md[AUTHKEYS_SHA256_SIZE]) {
        SHA256(data, len, md);
        return 0;
}
