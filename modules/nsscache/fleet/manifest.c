/* The signed manifest: build, sign, verify, parse (manifest.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "manifest.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"

#define ENVELOPE_DEPTH 4
#define PAYLOAD_DEPTH 6
#define SIGNATURE_LEN 64

void manifest_done(Manifest *m) {
        for (size_t t = 0; t < _NSS_MAP_MAX; t++) {
                free(m->map[t].file);
                free(m->map[t].delta.file);
        }
        *m = (Manifest){};
}

void manifest_sha256_hex(const uint8_t d[static MANIFEST_SHA256_LEN],
                         char ret[static 2 * MANIFEST_SHA256_LEN + 1]) {
        for (size_t i = 0; i < MANIFEST_SHA256_LEN; i++)
                sprintf(ret + 2 * i, "%02x", d[i]);
}

_printf_(3, 4) static int fail(char **ret_error, int r, const char *fmt, ...) {
        va_list ap;

        if (!ret_error)
                return r;
        free(*ret_error);
        va_start(ap, fmt);
        if (vasprintf(ret_error, fmt, ap) < 0)
                *ret_error = NULL;
        va_end(ap);
        return r;
}

static bool file_name_ok(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > MANIFEST_FILE_NAME_MAX || s[0] == '.')
                return false;
        return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

static void bio_freep(BIO **b) {
        if (*b)
                BIO_free(*b);
}

static void md_ctx_freep(EVP_MD_CTX **c) {
        if (*c)
                EVP_MD_CTX_free(*c);
}

/* Strict base64: length a multiple of 4, padding only at the end. */
static int b64_decode(const char *s, uint8_t **ret, size_t *ret_len) {
        size_t n = strlen(s), pad = 0;
        _cleanup_free_ uint8_t *out = NULL;
        int k;

        if (n == 0 || n % 4 != 0 || n > MANIFEST_MAX * 2)
                return -EBADMSG;
        if (s[n - 1] == '=')
                pad = s[n - 2] == '=' ? 2 : 1;
        if (strcspn(s, "=") != n - pad)
                return -EBADMSG;
        out = malloc(n / 4 * 3 + 1);
        if (!out)
                return -ENOMEM;
        k = EVP_DecodeBlock(out, (const unsigned char *) s, (int) n);
        if (k < 0 || (size_t) k < pad)
                return -EBADMSG;
        out[k - pad] = 0;
        *ret_len = (size_t) k - pad;
        *ret = TAKE_PTR(out);
        return 0;
}

static char *b64_encode(const void *p, size_t n) {
        char *s = malloc(4 * ((n + 2) / 3) + 1);

        if (s)
                EVP_EncodeBlock((unsigned char *) s, p, (int) n);
        return s;
}

static int ed25519_check(EVP_PKEY *k) {
        return k && EVP_PKEY_get_base_id(k) == EVP_PKEY_ED25519 ? 0 : -EBADMSG;
}

int manifest_key_private(const char *pem, size_t len, EVP_PKEY **ret) {
        _cleanup_(bio_freep) BIO *b = BIO_new_mem_buf(pem, (int) len);
        EVP_PKEY *k;

        if (!b)
                return -ENOMEM;
        k = PEM_read_bio_PrivateKey(b, NULL, NULL, (void *) "");
        if (ed25519_check(k) < 0) {
                EVP_PKEY_free(k);
                return -EBADMSG;
        }
        *ret = k;
        return 0;
}

int manifest_key_public(const char *b64, EVP_PKEY **ret) {
        _cleanup_free_ uint8_t *der = NULL;
        const unsigned char *p;
        size_t n;
        EVP_PKEY *k;
        int r;

        if (strlen(b64) > 1024)
                return -EBADMSG;
        r = b64_decode(b64, &der, &n);
        if (r < 0)
                return r;
        p = der;
        k = d2i_PUBKEY(NULL, &p, (long) n);
        if (ed25519_check(k) < 0 || p != der + n) {
                EVP_PKEY_free(k);
                return -EBADMSG;
        }
        *ret = k;
        return 0;
}

/* Ed25519 over MANIFEST_CONTEXT || @payload: one buffer, as the one-shot API wants. */
static int signed_message(const char *payload, size_t len, char **ret, size_t *ret_len) {
        size_t c = strlen(MANIFEST_CONTEXT);
        char *m = malloc(c + len);

        if (!m)
                return -ENOMEM;
        memcpy(m, MANIFEST_CONTEXT, c);
        memcpy(m + c, payload, len);
        *ret = m;
        *ret_len = c + len;
        return 0;
}

/* {"file", "size", "sha256"} of a map or a delta. */
static json_object *file_json(const char *file, uint64_t size,
                              const uint8_t sha256[static MANIFEST_SHA256_LEN]) {
        char hex[2 * MANIFEST_SHA256_LEN + 1];
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        manifest_sha256_hex(sha256, hex);
        if (json_object_object_add(o, "file", json_object_new_string(file)) < 0 ||
            json_object_object_add(o, "size", json_object_new_int64((int64_t) size)) < 0 ||
            json_object_object_add(o, "sha256", json_object_new_string(hex)) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static json_object *delta_json(const ManifestDelta *d) {
        char hex[2 * MANIFEST_SHA256_LEN + 1];
        json_object *o = file_json(d->file, d->size, d->sha256);

        if (!o)
                return NULL;
        manifest_sha256_hex(d->from, hex);
        if (json_object_object_add(o, "from_size", json_object_new_int64((int64_t) d->from_size)) < 0 ||
            json_object_object_add(o, "from_sha256", json_object_new_string(hex)) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static json_object *map_json(const ManifestMap *mm) {
        json_object *o = file_json(mm->file, mm->size, mm->sha256), *d;

        if (!o || !mm->delta.present)
                return o;
        d = delta_json(&mm->delta);
        if (!d || json_object_object_add(o, "delta", d) < 0) {
                json_object_put(d);
                json_object_put(o);
                return NULL;
        }
        return o;
}

static char *payload_json(const Manifest *m) {
        _cleanup_json_ json_object *o = json_object_new_object(), *maps = json_object_new_object();

        if (!o || !maps || json_object_object_add(o, "version", json_object_new_int(MANIFEST_VERSION)) < 0 ||
            json_object_object_add(o, "generation", json_object_new_int64((int64_t) m->generation)) < 0 ||
            json_object_object_add(o, "time", json_object_new_int64(m->time)) < 0 ||
            json_object_object_add(o, "users", json_object_new_int64((int64_t) m->users)) < 0 ||
            json_object_object_add(o, "groups", json_object_new_int64((int64_t) m->groups)) < 0)
                return NULL;
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                json_object *mo;

                if (!m->map[t].present)
                        continue;
                mo = map_json(m->map + t);
                if (!mo || json_object_object_add(maps, nss_map_to_string(t), mo) < 0) {
                        json_object_put(mo);
                        return NULL;
                }
        }
        if (json_object_object_add(o, "maps", json_object_get(maps)) < 0) {
                json_object_put(maps);
                return NULL;
        }
        return strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
}

static int sign_bytes(EVP_PKEY *key, const char *msg, size_t len, uint8_t sig[static SIGNATURE_LEN]) {
        _cleanup_(md_ctx_freep) EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        size_t n = SIGNATURE_LEN;

        if (!ctx)
                return -ENOMEM;
        if (EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) != 1 ||
            EVP_DigestSign(ctx, sig, &n, (const unsigned char *) msg, len) != 1 || n != SIGNATURE_LEN)
                return -EIO;
        return 0;
}

int manifest_sign(const Manifest *m, EVP_PKEY *key, char **ret, size_t *ret_len) {
        _cleanup_free_ char *payload = NULL, *msg = NULL, *p64 = NULL, *s64 = NULL;
        uint8_t sig[SIGNATURE_LEN];
        size_t len;
        int r, k;

        if (ed25519_check(key) < 0 || m->generation < 1 || m->generation > MANIFEST_GENERATION_MAX)
                return -EINVAL;
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++)
                if (m->map[t].present && (!m->map[t].file || !file_name_ok(m->map[t].file) ||
                                          (m->map[t].delta.present &&
                                           (!m->map[t].delta.file || !file_name_ok(m->map[t].delta.file)))))
                        return -EINVAL;
        payload = payload_json(m);
        if (!payload)
                return -ENOMEM;
        r = signed_message(payload, strlen(payload), &msg, &len);
        if (r < 0)
                return r;
        r = sign_bytes(key, msg, len, sig);
        if (r < 0)
                return r;
        p64 = b64_encode(payload, strlen(payload));
        s64 = b64_encode(sig, sizeof(sig));
        if (!p64 || !s64)
                return -ENOMEM;
        k = asprintf(ret, "{\"payload\":\"%s\",\"signature\":\"%s\"}\n", p64, s64);
        if (k < 0)
                return -ENOMEM;
        *ret_len = (size_t) k;
        return 0;
}

/* @text as one JSON object, all of it (trailing whitespace aside), at most @depth deep. */
static int json_parse_all(const char *text, size_t len, int depth, json_object **ret) {
        _cleanup_tokener_ json_tokener *tok = json_tokener_new_ex(depth);
        json_object *o;
        size_t end;

        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, text, (int) len);
        if (!o || json_tokener_get_error(tok) != json_tokener_success)
                goto bad;
        end = json_tokener_get_parse_end(tok);
        if (text[end + strspn(text + end, " \t\r\n")] != 0 || strlen(text) != len ||
            !json_object_is_type(o, json_type_object))
                goto bad;
        *ret = o;
        return 0;
bad:
        json_object_put(o);
        return -EBADMSG;
}

static int envelope_open(const char *text, size_t len, EVP_PKEY *key, char **ret_payload, size_t *ret_len,
                         char **ret_error) {
        _cleanup_json_ json_object *env = NULL;
        _cleanup_free_ uint8_t *payload = NULL, *sig = NULL;
        _cleanup_free_ char *msg = NULL;
        _cleanup_(md_ctx_freep) EVP_MD_CTX *ctx = NULL;
        const char *p64, *s64;
        size_t plen, slen, mlen;
        int r;

        if (len > MANIFEST_MAX)
                return fail(ret_error, -EFBIG, "manifest: over %d bytes", MANIFEST_MAX);
        r = json_parse_all(text, len, ENVELOPE_DEPTH, &env);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return fail(ret_error, r, "manifest: not a JSON object");
        if (json_object_object_length(env) != 2 || !(p64 = json_member_string(env, "payload")) ||
            !(s64 = json_member_string(env, "signature")))
                return fail(ret_error, -EBADMSG,
                            "manifest: must be an object of the strings 'payload' and 'signature'");
        r = b64_decode(s64, &sig, &slen);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || slen != SIGNATURE_LEN)
                return fail(ret_error, -EBADMSG, "manifest: field 'signature': not the base64 of 64 bytes");
        r = b64_decode(p64, &payload, &plen);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || plen == 0 || memchr(payload, 0, plen))
                return fail(ret_error, -EBADMSG, "manifest: field 'payload': not base64 of text");
        r = signed_message((const char *) payload, plen, &msg, &mlen);
        if (r < 0)
                return r;
        ctx = EVP_MD_CTX_new();
        if (!ctx)
                return -ENOMEM;
        if (EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) != 1 ||
            EVP_DigestVerify(ctx, sig, slen, (const unsigned char *) msg, mlen) != 1)
                return fail(ret_error, -EPERM,
                            "manifest: the signature does not verify with the configured key");
        *ret_payload = (char *) TAKE_PTR(payload);
        *ret_len = plen;
        return 0;
}

/* An integer member in [lo, hi]: JSON integers only, not 1.0 or "1". */
static int member_uint(json_object *o, const char *key, int64_t lo, int64_t hi, int64_t *ret,
                       char **ret_error) {
        json_object *v;
        int64_t x;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
                return fail(ret_error, -EBADMSG, "manifest: field '%s': must be an integer", key);
        errno = 0;
        x = json_object_get_int64(v);
        if (errno != 0 || x < lo || x > hi)
                return fail(ret_error, -EBADMSG,
                            "manifest: field '%s': out of range [%" PRId64 ", %" PRId64 "]", key, lo, hi);
        *ret = x;
        return 0;
}

static int hex_sha256(const char *s, uint8_t ret[static MANIFEST_SHA256_LEN]) {
        if (strlen(s) != 2 * MANIFEST_SHA256_LEN || strspn(s, "0123456789abcdef") != 2 * MANIFEST_SHA256_LEN)
                return -EBADMSG;
        for (size_t i = 0; i < MANIFEST_SHA256_LEN; i++)
                sscanf(s + 2 * i, "%2hhx", ret + i);
        return 0;
}

/* The members "file", "size" and "sha256" of @o, for the field @field. */
static int parse_file(json_object *o, const char *field, char **ret_file, uint64_t *ret_size,
                      uint8_t ret_sha256[static MANIFEST_SHA256_LEN], char **ret_error) {
        const char *file, *sha;
        int64_t size;
        int r;

        file = json_member_string(o, "file");
        if (!file || !file_name_ok(file))
                return fail(ret_error, -EBADMSG,
                            "manifest: field '%s.file': must be a file name of [A-Za-z0-9._-], not starting "
                            "with '.'",
                            field);
        sha = json_member_string(o, "sha256");
        if (!sha || hex_sha256(sha, ret_sha256) < 0)
                return fail(ret_error, -EBADMSG,
                            "manifest: field '%s.sha256': must be 64 lowercase hex digits", field);
        r = member_uint(o, "size", 0, INT64_MAX, &size, ret_error);
        if (r < 0)
                return r;
        *ret_size = (uint64_t) size;
        *ret_file = strdup(file);
        return *ret_file ? 0 : -ENOMEM;
}

static int parse_delta(json_object *o, NssMapType t, ManifestDelta *ret, char **ret_error) {
        _cleanup_free_ char *field = NULL;
        const char *from;
        int64_t size;
        int r;

        if (asprintf(&field, "maps.%s.delta", nss_map_to_string(t)) < 0)
                return -ENOMEM;
        if (!json_object_is_type(o, json_type_object) || json_object_object_length(o) != 5)
                return fail(ret_error, -EBADMSG,
                            "manifest: field '%s': must be an object of file, size, sha256, from_size, "
                            "from_sha256",
                            field);
        r = parse_file(o, field, &ret->file, &ret->size, ret->sha256, ret_error);
        if (r < 0)
                return r;
        from = json_member_string(o, "from_sha256");
        if (!from || hex_sha256(from, ret->from) < 0)
                return fail(ret_error, -EBADMSG,
                            "manifest: field '%s.from_sha256': must be 64 lowercase hex digits", field);
        r = member_uint(o, "from_size", 0, INT64_MAX, &size, ret_error);
        if (r < 0)
                return r;
        ret->from_size = (uint64_t) size;
        ret->present = true;
        return 0;
}

static int parse_map(json_object *o, NssMapType t, ManifestMap *ret, char **ret_error) {
        _cleanup_free_ char *field = NULL;
        json_object *delta = NULL;
        size_t n;
        int r;

        if (asprintf(&field, "maps.%s", nss_map_to_string(t)) < 0)
                return -ENOMEM;
        n = json_object_is_type(o, json_type_object) ? (size_t) json_object_object_length(o) : 0;
        if (n == 4 && !json_object_object_get_ex(o, "delta", &delta))
                n = 0;
        if (n != 3 && n != 4)
                return fail(
                        ret_error, -EBADMSG,
                        "manifest: field '%s': must be an object of file, size, sha256 and optionally delta",
                        field);
        r = parse_file(o, field, &ret->file, &ret->size, ret->sha256, ret_error);
        if (r < 0)
                return r;
        ret->present = true;
        return delta ? parse_delta(delta, t, &ret->delta, ret_error) : 0;
}

static int parse_maps(json_object *maps, Manifest *m, char **ret_error) {
        if (!json_object_is_type(maps, json_type_object))
                return fail(ret_error, -EBADMSG, "manifest: field 'maps': must be an object");
        json_object_object_foreach(maps, key, val) {
                NssMapType t = nss_map_from_string(key);
                int r;

                if ((int) t < 0)
                        return fail(ret_error, -EBADMSG, "manifest: field 'maps': unknown map");
                r = parse_map(val, t, m->map + t, ret_error);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_payload(const char *text, size_t len, Manifest *m, char **ret_error) {
        static const char *const known[] = { "version", "generation", "time", "users", "groups", "maps" };
        _cleanup_json_ json_object *o = NULL;
        json_object *maps;
        int64_t v, x;
        int r;

        r = json_parse_all(text, len, PAYLOAD_DEPTH, &o);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return fail(ret_error, r, "manifest: the payload is not a JSON object");
        json_object_object_foreach(o, key, val) {
                bool ok = false;

                (void) val;
                for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
                        ok = ok || strcmp(key, known[i]) == 0;
                if (!ok)
                        return fail(ret_error, -EBADMSG, "manifest: unknown field in the payload");
        }
        if ((r = member_uint(o, "version", MANIFEST_VERSION, MANIFEST_VERSION, &v, ret_error)) < 0 ||
            (r = member_uint(o, "generation", 1, (int64_t) MANIFEST_GENERATION_MAX, &x, ret_error)) < 0)
                return r;
        m->generation = (uint64_t) x;
        if ((r = member_uint(o, "time", 0, INT64_MAX, &m->time, ret_error)) < 0 ||
            (r = member_uint(o, "users", 0, INT32_MAX, &x, ret_error)) < 0)
                return r;
        m->users = (uint64_t) x;
        if ((r = member_uint(o, "groups", 0, INT32_MAX, &x, ret_error)) < 0)
                return r;
        m->groups = (uint64_t) x;
        if (!json_object_object_get_ex(o, "maps", &maps))
                return fail(ret_error, -EBADMSG, "manifest: field 'maps': missing");
        return parse_maps(maps, m, ret_error);
}

int manifest_keys_public(const char *text, EVP_PKEY *ret[static MANIFEST_KEYS_MAX], size_t *ret_bad) {
        static const char sep[] = " \t\n,";
        EVP_PKEY *keys[MANIFEST_KEYS_MAX] = {};
        size_t n = 0;
        int r = 0;

        *ret_bad = 0;
        for (const char *p = text + strspn(text, sep); *p; p += strspn(p, sep)) {
                size_t len = strcspn(p, sep);
                _cleanup_free_ char *one = NULL;

                if (n == MANIFEST_KEYS_MAX) {
                        r = -EBADMSG;
                        break;
                }
                one = strndup(p, len);
                if (!one) {
                        r = -ENOMEM;
                        break;
                }
                r = manifest_key_public(one, keys + n);
                if (r < 0) {
                        *ret_bad = n + 1;
                        break;
                }
                n++;
                p += len;
        }
        if (r >= 0 && n == 0)
                r = -EBADMSG;
        if (r < 0) {
                manifest_keys_free(keys, n);
                return r;
        }
        memcpy(ret, keys, sizeof(keys));
        return (int) n;
}

int manifest_verify(const char *text, size_t len, EVP_PKEY *key, Manifest *ret, char **ret_error) {
        return manifest_verify_keys(text, len, &key, 1, ret, ret_error);
}

int manifest_verify_keys(const char *text, size_t len, EVP_PKEY *const *keys, size_t n, Manifest *ret,
                         char **ret_error) {
        _cleanup_free_ char *payload = NULL;
        Manifest m = {};
        size_t plen = 0;
        int r = -EPERM;

        for (size_t i = 0; i < n && r == -EPERM; i++)
                r = envelope_open(text, len, keys[i], &payload, &plen, ret_error);
        if (r < 0)
                return r;
        if (ret_error) {
                free(*ret_error); /* a key tried before the one that verified */
                *ret_error = NULL;
        }
        r = parse_payload(payload, plen, &m, ret_error);
        if (r < 0) {
                manifest_done(&m);
                return r;
        }
        *ret = m;
        return 0;
}
