/* authkeys-crypto.h with libcrypto loaded on first use: for sunkd-authkeys,
 * which needs it only when it reads the sshkey cache itself.  The entry
 * points are OpenSSL's stable ABI (libcrypto.so.3); a missing library makes
 * every key fail its checks, so nothing is served that was not checked. */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>

#include "authkeys-crypto.h"

typedef int (*CodecFn)(unsigned char *out, const unsigned char *in, int len);
typedef unsigned char *(*Sha256Fn)(const unsigned char *d, size_t n, unsigned char *md);

static struct {
        bool tried;
        CodecFn decode, encode;
        Sha256Fn sha256;
} crypto;

static bool crypto_load(void) {
        static const char *const names[] = { "libcrypto.so.3", "libcrypto.so" };
        void *h = NULL;

        if (crypto.tried)
                return crypto.sha256 != NULL;
        crypto.tried = true;
        for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
                h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h)
                return false;
        crypto.decode = (CodecFn) dlsym(h, "EVP_DecodeBlock");
        crypto.encode = (CodecFn) dlsym(h, "EVP_EncodeBlock");
        crypto.sha256 = (Sha256Fn) dlsym(h, "SHA256");
        if (!crypto.decode || !crypto.encode || !crypto.sha256) {
                crypto.sha256 = NULL;
                return false;
        }
        return true;
}

int authkeys_base64_decode(unsigned char *out, const unsigned char *in, int len) {
        return crypto_load() ? crypto.decode(out, in, len) : -1;
}

int authkeys_base64_encode(unsigned char *out, const unsigned char *in, int len) {
        return crypto_load() ? crypto.encode(out, in, len) : -1;
}

int authkeys_sha256(const unsigned char *data, size_t len, unsigned char md[AUTHKEYS_SHA256_SIZE]) {
        if (!crypto_load())
                return -ENOSYS;
        crypto.sha256(data, len, md);
        return 0;
}
