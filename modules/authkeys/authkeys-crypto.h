/* The pieces of OpenSSL the key checks use: base64 as sshd decodes it, and
 * SHA-256 for fingerprints.
 *
 * The module and the tests link libcrypto (authkeys-crypto.c).
 * sunkd-authkeys, which sshd execs at every login, must not: mapping and
 * relocating libcrypto costs about as much as the whole rest of a run.  It
 * loads it with dlopen() only when it has to check keys itself, when sunkd
 * did not answer (authkeys-crypto-dl.c).
 */
#pragma once

#include <stddef.h>

#define AUTHKEYS_SHA256_SIZE 32

/* EVP_DecodeBlock(): the decoded length (padding bytes included), or -1 for
 * bad input or when libcrypto cannot be had. */
int authkeys_base64_decode(unsigned char *out, const unsigned char *in, int len);
/* EVP_EncodeBlock(): the encoded length, or -1 when libcrypto cannot be had. */
int authkeys_base64_encode(unsigned char *out, const unsigned char *in, int len);
/* 0, or -ENOSYS when libcrypto cannot be had. */
int authkeys_sha256(const unsigned char *data, size_t len, unsigned char md[AUTHKEYS_SHA256_SIZE]);
