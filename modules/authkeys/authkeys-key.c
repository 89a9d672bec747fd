/* One authorized_keys line: validation, fingerprint, exact-key match.
 *
 * The line grammar is sshd's (auth2-pubkeyfile.c): options end at the first
 * blank outside double quotes, and inside quotes \" does not close them.  A
 * line whose first word is a key type has no options.  Blanks are space and
 * tab.  Base64 is checked strictly (alphabet, length a multiple of 4, at most
 * two '=' and only at the end, zero slack bits), like OpenBSD's b64_pton()
 * that sshd decodes with, before EVP_DecodeBlock() decodes it.
 */
#include <errno.h>
#include <string.h>

#include "util/macro.h"

#include "authkeys-key.h"
#include "authkeys-crypto.h"

/* The longest blob a line can carry. */
#define BLOB_MAX (AUTHKEYS_LINE_MAX / 4 * 3)

static const char *const key_types[] = {
        "ssh-ed25519",
        "ssh-ed25519-cert-v01@openssh.com",
        "ecdsa-sha2-nistp256",
        "ecdsa-sha2-nistp256-cert-v01@openssh.com",
        "ecdsa-sha2-nistp384",
        "ecdsa-sha2-nistp384-cert-v01@openssh.com",
        "ecdsa-sha2-nistp521",
        "ecdsa-sha2-nistp521-cert-v01@openssh.com",
        "ssh-rsa",
        "ssh-rsa-cert-v01@openssh.com",
        "sk-ssh-ed25519@openssh.com",
        "sk-ssh-ed25519-cert-v01@openssh.com",
        "sk-ecdsa-sha2-nistp256@openssh.com",
        "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
};

static const char *const reject_names[_AUTHKEYS_REJECT_MAX] = {
        [AUTHKEYS_OK] = "ok",
        [AUTHKEYS_REJECT_EMPTY] = "empty",
        [AUTHKEYS_REJECT_TOO_LONG] = "too-long",
        [AUTHKEYS_REJECT_CONTROL] = "control-character",
        [AUTHKEYS_REJECT_BAD_UTF8] = "bad-utf8",
        [AUTHKEYS_REJECT_BAD_OPTIONS] = "bad-options",
        [AUTHKEYS_REJECT_UNKNOWN_TYPE] = "unknown-type",
        [AUTHKEYS_REJECT_BAD_BASE64] = "bad-base64",
        [AUTHKEYS_REJECT_TYPE_MISMATCH] = "type-mismatch",
        [AUTHKEYS_REJECT_TOO_MANY] = "too-many-keys",
};

const char *authkeys_reject_to_string(AuthkeysReject r) {
        if ((unsigned) r >= _AUTHKEYS_REJECT_MAX)
                return NULL;
        return reject_names[r];
}

bool authkeys_type_known(const char *type, size_t len) {
        for (size_t i = 0; i < ELEMENTSOF(key_types); i++)
                if (strlen(key_types[i]) == len && memcmp(key_types[i], type, len) == 0)
                        return true;
        return false;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

size_t authkeys_skip_blanks(const char *s, size_t len, size_t i) {
        while (i < len && is_blank(s[i]))
                i++;
        return i;
}

static size_t word_end(const char *s, size_t len, size_t i) {
        while (i < len && !is_blank(s[i]))
                i++;
        return i;
}

/* Bytes of one UTF-8 sequence at @s (at most @n bytes), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n) {
        uint32_t cp;
        size_t k;

        if (s[0] < 0x80)
                return 1;
        if ((s[0] & 0xE0) == 0xC0)
                cp = s[0] & 0x1F, k = 2;
        else if ((s[0] & 0xF0) == 0xE0)
                cp = s[0] & 0x0F, k = 3;
        else if ((s[0] & 0xF8) == 0xF0)
                cp = s[0] & 0x07, k = 4;
        else
                return 0;
        if (k > n)
                return 0;
        for (size_t i = 1; i < k; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3F);
        }
        if ((k == 2 && cp < 0x80) || (k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) ||
            (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                return 0;
        return k;
}

/* A control byte anywhere refuses the line; the first byte that is not part
 * of a UTF-8 sequence is put in *@ret_bad (@len if none): only the comment
 * may have one. */
static AuthkeysReject check_bytes(const char *line, size_t len, size_t *ret_bad) {
        const unsigned char *p = (const unsigned char *) line;

        *ret_bad = len;
        for (size_t i = 0; i < len;) {
                size_t k;

                if ((p[i] < ' ' && p[i] != '\t') || p[i] == 0x7F)
                        return AUTHKEYS_REJECT_CONTROL;
                if (p[i] < 0x80) {
                        i++;
                        continue;
                }
                k = utf8_len(p + i, len - i);
                if (k == 0 && *ret_bad == len)
                        *ret_bad = i;
                i += k ?: 1;
        }
        return AUTHKEYS_OK;
}

void authkeys_key_clean_comment(char *line, const AuthkeysKey *k) {
        unsigned char *p = (unsigned char *) line + k->comment_off;

        for (size_t i = 0; i < k->comment_len;) {
                size_t n = p[i] < 0x80 ? 1 : utf8_len(p + i, k->comment_len - i);

                if (n == 0) {
                        p[i++] = '?';
                        continue;
                }
                i += n;
        }
}

static bool is_option_name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
               c == '_' || c == '.' || c == '@';
}

/* A quoted value from the opening quote at s[i]; returns the index past the closing one, 0 if none. */
static size_t quoted_end(const char *s, size_t len, size_t i) {
        for (i++; i < len; i++) {
                if (s[i] == '\\' && i + 1 < len && s[i + 1] == '"')
                        i++;
                else if (s[i] == '"')
                        return i + 1;
        }
        return 0;
}

/* name[="value"] separated by commas, ending at a blank; sets *ret_end there. */
static bool options_parse(const char *s, size_t len, size_t i, size_t *ret_end) {
        for (;;) {
                size_t start = i;

                while (i < len && is_option_name_char(s[i]))
                        i++;
                if (i == start)
                        return false;
                if (i + 1 < len && s[i] == '=' && s[i + 1] == '"') {
                        i = quoted_end(s, len, i + 1);
                        if (i == 0)
                                return false;
                }
                if (i >= len || is_blank(s[i])) {
                        *ret_end = i;
                        return true;
                }
                if (s[i] != ',')
                        return false;
                i++;
        }
}

/* Each byte's base64 value + 1; 0 for bytes outside the alphabet. */
static const uint8_t b64_table[256] = {
        ['A'] = 1,  ['B'] = 2,  ['C'] = 3,  ['D'] = 4,  ['E'] = 5,  ['F'] = 6,  ['G'] = 7,  ['H'] = 8,
        ['I'] = 9,  ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14, ['O'] = 15, ['P'] = 16,
        ['Q'] = 17, ['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21, ['V'] = 22, ['W'] = 23, ['X'] = 24,
        ['Y'] = 25, ['Z'] = 26, ['a'] = 27, ['b'] = 28, ['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32,
        ['g'] = 33, ['h'] = 34, ['i'] = 35, ['j'] = 36, ['k'] = 37, ['l'] = 38, ['m'] = 39, ['n'] = 40,
        ['o'] = 41, ['p'] = 42, ['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48,
        ['w'] = 49, ['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56,
        ['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['+'] = 63, ['/'] = 64,
};

static int b64_value(char c) {
        return (int) b64_table[(unsigned char) c] - 1;
}

/* Strict base64 of @len bytes into @out (room for len / 4 * 3 bytes). */
static int b64_decode(const char *s, size_t len, uint8_t *out, size_t *ret_len) {
        size_t pad = 0;
        int n;

        if (len == 0 || len % 4 != 0)
                return -EINVAL;
        while (pad < 2 && s[len - 1 - pad] == '=')
                pad++;
        for (size_t i = 0; i < len - pad; i++)
                if (b64_table[(unsigned char) s[i]] == 0)
                        return -EINVAL;
        /* The bits past the last whole byte must be zero. */
        if ((pad == 1 && (b64_value(s[len - 2]) & 0x03)) || (pad == 2 && (b64_value(s[len - 3]) & 0x0F)))
                return -EINVAL;
        if (len > (size_t) INT32_MAX)
                return -EINVAL;
        n = authkeys_base64_decode(out, (const unsigned char *) s, (int) len);
        if (n < 0 || (size_t) n < pad)
                return -EINVAL;
        *ret_len = (size_t) n - pad;
        return 0;
}

static uint32_t be32(const uint8_t *p) {
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

/* The blob starts with the type as an SSH string: uint32 length, bytes. */
static bool blob_type_is(const uint8_t *blob, size_t n, const char *type, size_t type_len) {
        uint32_t l;

        if (n < 4)
                return false;
        l = be32(blob);
        return l == type_len && n - 4 >= l && memcmp(blob + 4, type, type_len) == 0;
}

/* The parse; a line with a byte that is not UTF-8 (at @bad) is refused as
 * such unless the byte is in its comment. */
static AuthkeysReject key_parse(const char *line, size_t len, size_t bad, AuthkeysKey *ret) {
        _uninitialized_ uint8_t blob[BLOB_MAX];
        AuthkeysKey k = {};
        size_t i, e, n;

        i = authkeys_skip_blanks(line, len, 0);
        if (i == len || line[i] == '#')
                return AUTHKEYS_REJECT_EMPTY;

        e = word_end(line, len, i);
        if (!authkeys_type_known(line + i, e - i)) {
                if (!options_parse(line, len, i, &e))
                        return AUTHKEYS_REJECT_BAD_OPTIONS;
                k.options_off = i;
                k.options_len = e - i;
                i = authkeys_skip_blanks(line, len, e);
                e = word_end(line, len, i);
                if (!authkeys_type_known(line + i, e - i))
                        return AUTHKEYS_REJECT_UNKNOWN_TYPE;
        }
        k.type_off = i;
        k.type_len = e - i;

        i = authkeys_skip_blanks(line, len, e);
        e = word_end(line, len, i);
        k.blob_off = i;
        k.blob_len = e - i;
        if (b64_decode(line + i, e - i, blob, &n) < 0)
                return AUTHKEYS_REJECT_BAD_BASE64;
        if (!blob_type_is(blob, n, line + k.type_off, k.type_len))
                return AUTHKEYS_REJECT_TYPE_MISMATCH;

        k.comment_off = authkeys_skip_blanks(line, len, e);
        k.comment_len = len - k.comment_off;
        if (bad < k.comment_off)
                return AUTHKEYS_REJECT_BAD_UTF8;
        k.comment_not_utf8 = bad < len;
        if (ret)
                *ret = k;
        return AUTHKEYS_OK;
}

AuthkeysReject authkeys_key_parse(const char *line, size_t len, AuthkeysKey *ret) {
        AuthkeysReject rj;
        size_t bad;

        if (len > AUTHKEYS_LINE_MAX)
                return AUTHKEYS_REJECT_TOO_LONG;
        rj = check_bytes(line, len, &bad);
        if (rj != AUTHKEYS_OK)
                return rj;
        rj = key_parse(line, len, bad, ret);
        /* what cannot be read is refused for its bytes first, as it always was */
        return rj != AUTHKEYS_OK && bad < len ? AUTHKEYS_REJECT_BAD_UTF8 : rj;
}

/* A certificate's plain key: its type without the certificate suffix, and
 * the key's fields, which follow the nonce (PROTOCOL.certkeys). */
static const struct {
        const char *cert, *plain;
        unsigned fields;
} cert_types[] = {
        { "ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519", 1 },
        { "ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp256", 2 },
        { "ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp384", 2 },
        { "ecdsa-sha2-nistp521-cert-v01@openssh.com", "ecdsa-sha2-nistp521", 2 },
        { "ssh-rsa-cert-v01@openssh.com", "ssh-rsa", 2 },
        { "sk-ssh-ed25519-cert-v01@openssh.com", "sk-ssh-ed25519@openssh.com", 2 },
        { "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com", 3 },
};

/* Steps over one SSH string (or mpint) at *off. */
static bool skip_string(const uint8_t *b, size_t n, size_t *off) {
        uint32_t l;

        if (n - *off < 4)
                return false;
        l = be32(b + *off);
        if (n - *off - 4 < l)
                return false;
        *off += 4 + (size_t) l;
        return true;
}

/* What ssh-keygen -l hashes: the blob, or for a certificate the plain key in it. */
static int blob_key_digest(const uint8_t *blob, size_t n, uint8_t ret[AUTHKEYS_DIGEST_SIZE]) {
        _uninitialized_ uint8_t plain[BLOB_MAX];
        size_t off = 0, start, pl, tl;

        for (size_t i = 0; i < ELEMENTSOF(cert_types); i++) {
                tl = strlen(cert_types[i].cert);
                if (!blob_type_is(blob, n, cert_types[i].cert, tl))
                        continue;
                if (!skip_string(blob, n, &off) || !skip_string(blob, n, &off))
                        return -EINVAL;
                start = off;
                for (unsigned f = 0; f < cert_types[i].fields; f++)
                        if (!skip_string(blob, n, &off))
                                return -EINVAL;
                pl = strlen(cert_types[i].plain);
                plain[0] = plain[1] = plain[2] = 0;
                plain[3] = (uint8_t) pl;
                memcpy(plain + 4, cert_types[i].plain, pl);
                memcpy(plain + 4 + pl, blob + start, off - start); /* shorter than the blob it came from */
                return authkeys_sha256(plain, 4 + pl + off - start, ret);
        }
        return authkeys_sha256(blob, n, ret);
}

static int decode_key(const char *b64, size_t len, uint8_t *blob, size_t *ret_n) {
        if (len > AUTHKEYS_LINE_MAX)
                return -EINVAL;
        return b64_decode(b64, len, blob, ret_n);
}

int authkeys_key_digest(const char *line, const AuthkeysKey *k, uint8_t ret[AUTHKEYS_DIGEST_SIZE]) {
        _uninitialized_ uint8_t blob[BLOB_MAX];
        size_t n;

        if (decode_key(line + k->blob_off, k->blob_len, blob, &n) < 0)
                return -EINVAL;
        return blob_key_digest(blob, n, ret);
}

void authkeys_fingerprint_format(const uint8_t digest[AUTHKEYS_DIGEST_SIZE],
                                 char ret[AUTHKEYS_FINGERPRINT_MAX]) {
        unsigned char b64[45];

        if (authkeys_base64_encode(b64, digest, AUTHKEYS_DIGEST_SIZE) != 44) /* 43 characters and one '=' */
                memset(b64, '?', sizeof(b64));
        memcpy(ret, "SHA256:", 7);
        memcpy(ret + 7, b64, 43);
        ret[50] = 0;
}

int authkeys_fingerprint_parse(const char *s, uint8_t ret[AUTHKEYS_DIGEST_SIZE]) {
        uint8_t out[33];
        char b64[44];
        size_t n;

        if (!s || strncmp(s, "SHA256:", 7) != 0 || strnlen(s + 7, 44) != 43)
                return -EINVAL;
        memcpy(b64, s + 7, 43);
        b64[43] = '=';
        if (b64_decode(b64, sizeof(b64), out, &n) < 0 || n != AUTHKEYS_DIGEST_SIZE)
                return -EINVAL;
        memcpy(ret, out, AUTHKEYS_DIGEST_SIZE);
        return 0;
}

int authkeys_match_from_fingerprint(const char *fingerprint, AuthkeysMatch *ret) {
        AuthkeysMatch m = {};

        if (authkeys_fingerprint_parse(fingerprint, m.digest) < 0)
                return -EINVAL;
        *ret = m;
        return 0;
}

int authkeys_match_from_key(const char *type, const char *key, AuthkeysMatch *ret) {
        _uninitialized_ uint8_t blob[BLOB_MAX];
        AuthkeysMatch m = { .whole_blob = true };
        size_t tl, n;

        if (!type || !key)
                return -EINVAL;
        tl = strlen(type);
        if (tl >= sizeof(m.type) || !authkeys_type_known(type, tl))
                return -EINVAL;
        if (decode_key(key, strnlen(key, AUTHKEYS_LINE_MAX + 1), blob, &n) < 0 ||
            !blob_type_is(blob, n, type, tl))
                return -EINVAL;
        if (authkeys_sha256(blob, n, m.digest) < 0)
                return -ENOSYS;
        memcpy(m.type, type, tl + 1);
        *ret = m;
        return 0;
}

bool authkeys_key_matches(const char *line, const AuthkeysKey *k, const AuthkeysMatch *m) {
        _uninitialized_ uint8_t blob[BLOB_MAX], d[AUTHKEYS_DIGEST_SIZE];
        size_t n;

        if (m->type[0] &&
            (strlen(m->type) != k->type_len || memcmp(m->type, line + k->type_off, k->type_len) != 0))
                return false;
        if (decode_key(line + k->blob_off, k->blob_len, blob, &n) < 0)
                return false;
        if (m->whole_blob) {
                if (authkeys_sha256(blob, n, d) < 0)
                        return false;
        } else if (blob_key_digest(blob, n, d) < 0)
                return false;
        return memcmp(d, m->digest, sizeof(d)) == 0;
}

bool authkeys_user_name_valid(const char *name, size_t len) {
        if (!name || len == 0 || len > AUTHKEYS_USER_MAX || name[0] == '-')
                return false;
        if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = name[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-'))
                        return false;
        }
        return true;
}
