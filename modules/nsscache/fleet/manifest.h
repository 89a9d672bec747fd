/* The signed manifest of an exported set of maps.
 *
 * One producer publishes the maps once; every node fetches them from a web
 * server, bucket or CDN that it need not trust: the manifest names each
 * map's file, size and SHA-256, the user and group counts and a generation
 * that only grows, and is signed with Ed25519.  The file is a JSON envelope
 *
 *   {"payload": "<base64 of the payload JSON>", "signature": "<base64>"}
 *
 * and the signature covers MANIFEST_CONTEXT followed by the payload bytes
 * exactly as decoded, so no JSON is canonicalised and a signature for
 * anything else sunkd might sign one day cannot be passed off as one.
 * Non-logging; errors come back as "manifest: field 'x': reason".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "cache/nss-maps.h"

#define MANIFEST_MAX (64 * 1024)
#define MANIFEST_VERSION 1
#define MANIFEST_CONTEXT "sunkd-nsscache-manifest 1\n"
#define MANIFEST_SHA256_LEN 32
#define MANIFEST_FILE_NAME_MAX 128
#define MANIFEST_KEYS_MAX 4                         /* a node trusts this many at once: rotation needs two */
#define MANIFEST_GENERATION_MAX (UINT64_C(1) << 53) /* exact in every JSON reader */

/* The lines a map lost and gained since an earlier copy of it (map-delta.h). */
typedef struct ManifestDelta {
        bool present;
        char *file; /* beside the manifest, named as a map's file is */
        uint64_t size;
        uint8_t sha256[MANIFEST_SHA256_LEN];
        uint64_t from_size; /* the map it applies to: its size and SHA-256 */
        uint8_t from[MANIFEST_SHA256_LEN];
} ManifestDelta;

typedef struct ManifestMap {
        bool present;
        char *file; /* beside the manifest: [A-Za-z0-9._-], not starting with '.' */
        uint64_t size;
        uint8_t sha256[MANIFEST_SHA256_LEN];
        ManifestDelta delta; /* optional */
} ManifestMap;

typedef struct Manifest {
        uint64_t generation; /* 1 and up */
        int64_t time;        /* when it was made, seconds since the epoch */
        uint64_t users, groups;
        ManifestMap map[_NSS_MAP_MAX];
} Manifest;

void manifest_done(Manifest *m);

/**
 * manifest_sign() - the signed envelope of @m under the Ed25519 @key.
 * Return: 0 with the text (NUL-terminated, ending in a newline) in *ret;
 * -EINVAL for a manifest that would not verify (a bad file name, a
 * generation out of range), -ENOMEM, -EIO (signing failed).
 */
int manifest_sign(const Manifest *m, EVP_PKEY *key, char **ret, size_t *ret_len);

/**
 * manifest_verify() - check @text (at most MANIFEST_MAX bytes) against the
 * Ed25519 @key and parse its payload into *@ret.  Nothing of a manifest
 * that fails is kept.
 * Return: 0; -EFBIG (too large), -EBADMSG (not an envelope, a payload that
 * is not the schema: wrong types, unknown maps, bad names), -EPERM (the
 * signature does not verify), -ENOMEM; *ret_error says which field.
 */
int manifest_verify(const char *text, size_t len, EVP_PKEY *key, Manifest *ret, char **ret_error);

/**
 * manifest_verify_keys() - manifest_verify() with the first of the @n keys
 * @keys that the signature verifies with (a node trusts the old and the
 * new key while the producer's key is rotated).
 */
int manifest_verify_keys(const char *text, size_t len, EVP_PKEY *const *keys, size_t n, Manifest *ret,
                         char **ret_error);

/** manifest_key_private() - an Ed25519 private key from PEM.  Return: 0, -EBADMSG (not PEM, not Ed25519),
 * -ENOMEM. */
int manifest_key_private(const char *pem, size_t len, EVP_PKEY **ret);

/**
 * manifest_key_public() - an Ed25519 public key from the base64 of its
 * SubjectPublicKeyInfo (the line between the PEM armour of
 * `openssl pkey -pubout`).  Return: 0, -EBADMSG, -ENOMEM.
 */
int manifest_key_public(const char *b64, EVP_PKEY **ret);

/**
 * manifest_keys_public() - the keys of @text: one to MANIFEST_KEYS_MAX of
 * them as manifest_key_public() reads each, separated by blanks or commas.
 * Return: the number of keys; -EBADMSG with the key's position (from 1) in
 * *@ret_bad (0: none or too many), -ENOMEM.  Nothing is kept on failure.
 */
int manifest_keys_public(const char *text, EVP_PKEY *ret[static MANIFEST_KEYS_MAX], size_t *ret_bad);

static inline void manifest_keys_free(EVP_PKEY **keys, size_t n) {
        for (size_t i = 0; i < n; i++)
                EVP_PKEY_free(keys[i]);
}

/** manifest_sha256_hex() - @d as 64 lowercase hex digits in @ret. */
void manifest_sha256_hex(const uint8_t d[static MANIFEST_SHA256_LEN],
                         char ret[static 2 * MANIFEST_SHA256_LEN + 1]);

static inline void evp_pkey_freep(EVP_PKEY **k) {
        if (*k)
                EVP_PKEY_free(*k);
}
