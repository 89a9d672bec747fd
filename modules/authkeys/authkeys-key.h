/* One authorized_keys line: validation, fingerprint, exact-key match.
 *
 * A line is `[options] type base64 [comment]` as sshd(8) reads it from
 * AuthorizedKeysFile or an AuthorizedKeysCommand.  Only lines sshd could use
 * are accepted: a known OpenSSH key type, strict base64 that decodes to a
 * blob whose embedded type (uint32 length + string) is the declared one,
 * options that are well formed (quoted values may hold commas and spaces).
 * Non-logging.
 *
 * A line is UTF-8 but for its comment: sshd ignores the comment, and takes a
 * key whose comment is any bytes (Latin-1 text, say), so such a key is
 * valid too.  Its line then leaves sunkd as a string of a JSON reply, which
 * must be UTF-8: authkeys_key_clean_comment() makes each byte of the comment
 * that is not part of a UTF-8 sequence a '?', and the map serves the line so.
 * Nothing else is ever rewritten.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest line accepted.  An RSA 16384-bit public key is about 2,800
 * base64 characters, so this leaves room for options and a comment. */
#define AUTHKEYS_LINE_MAX 8192

#define AUTHKEYS_DIGEST_SIZE 32
/* "SHA256:" + 43 characters of unpadded base64 + NUL */
#define AUTHKEYS_FINGERPRINT_MAX (7 + 43 + 1)

/* Why a line is refused; the names are metric labels. */
typedef enum AuthkeysReject {
        AUTHKEYS_OK = 0,
        AUTHKEYS_REJECT_EMPTY,    /* blank or a '#' comment */
        AUTHKEYS_REJECT_TOO_LONG, /* over AUTHKEYS_LINE_MAX */
        AUTHKEYS_REJECT_CONTROL,  /* a control character, NUL included */
        AUTHKEYS_REJECT_BAD_UTF8,
        AUTHKEYS_REJECT_BAD_OPTIONS,
        AUTHKEYS_REJECT_UNKNOWN_TYPE,
        AUTHKEYS_REJECT_BAD_BASE64,
        AUTHKEYS_REJECT_TYPE_MISMATCH, /* the blob says another type */
        AUTHKEYS_REJECT_TOO_MANY,      /* over the per-user cap (set by the map) */
        _AUTHKEYS_REJECT_MAX,
} AuthkeysReject;

/** authkeys_reject_to_string() - the short name ("bad-base64"), or NULL out of range. */
const char *authkeys_reject_to_string(AuthkeysReject r);

/* Where the parts of a valid line are, as offsets into it. */
typedef struct AuthkeysKey {
        size_t options_off, options_len; /* options_len 0: none */
        size_t type_off, type_len;
        size_t blob_off, blob_len; /* the base64 text */
        size_t comment_off, comment_len;
        bool comment_not_utf8; /* authkeys_key_clean_comment() has work */
} AuthkeysKey;

/**
 * authkeys_key_parse() - validate one line of @len bytes (no newline).
 * @ret: filled on success; may be NULL.
 * Return: AUTHKEYS_OK or the reason it is refused.
 */
AuthkeysReject authkeys_key_parse(const char *line, size_t len, AuthkeysKey *ret);

/**
 * authkeys_key_clean_comment() - in the valid @line parsed as @k, each byte
 * of the comment that is not part of a UTF-8 sequence becomes '?'; the
 * length stays.  What is served is then UTF-8 throughout.
 */
void authkeys_key_clean_comment(char *line, const AuthkeysKey *k);

/** authkeys_type_known() - whether @type (@len bytes) is a key type sshd accepts. */
bool authkeys_type_known(const char *type, size_t len);

/**
 * authkeys_key_digest() - SHA-256 of the decoded blob of a line that
 * authkeys_key_parse() accepted with @k; for a -cert-v01 line, of the plain
 * key inside the certificate, as ssh-keygen -l and sshd's %f hash it.
 * Return: 0, or -EINVAL if it does not decode.
 */
int authkeys_key_digest(const char *line, const AuthkeysKey *k, uint8_t ret[AUTHKEYS_DIGEST_SIZE]);

/** authkeys_fingerprint_format() - "SHA256:<unpadded base64>", as ssh-keygen -l prints it. */
void authkeys_fingerprint_format(const uint8_t digest[AUTHKEYS_DIGEST_SIZE],
                                 char ret[AUTHKEYS_FINGERPRINT_MAX]);

/** authkeys_fingerprint_parse() - the reverse; strict.  Return: 0 or -EINVAL. */
int authkeys_fingerprint_parse(const char *s, uint8_t ret[AUTHKEYS_DIGEST_SIZE]);

/* What sshd asked for: a fingerprint (%f), or a type and key (%t %k).  A
 * fingerprint names a key, so it also matches certificates for that key;
 * a type and key match that exact blob only. */
typedef struct AuthkeysMatch {
        uint8_t digest[AUTHKEYS_DIGEST_SIZE];
        char type[64];   /* empty: any type (fingerprint form) */
        bool whole_blob; /* digest is of the whole blob (type and key form) */
} AuthkeysMatch;

/**
 * authkeys_match_from_fingerprint() / authkeys_match_from_key() - build a
 * match from sshd's arguments.  A key must be valid strict base64 whose
 * embedded type is @type.  Return: 0 or -EINVAL.
 */
int authkeys_match_from_fingerprint(const char *fingerprint, AuthkeysMatch *ret);
int authkeys_match_from_key(const char *type, const char *key, AuthkeysMatch *ret);

/** authkeys_key_matches() - whether the valid @line (parsed as @k) is the key @m names. */
bool authkeys_key_matches(const char *line, const AuthkeysKey *k, const AuthkeysMatch *m);

/** authkeys_skip_blanks() - the first index from @i on in @s (@len bytes) that is not a space or a tab. */
size_t authkeys_skip_blanks(const char *s, size_t len, size_t i);

#define AUTHKEYS_USER_MAX 256

/**
 * authkeys_user_name_valid() - whether @len bytes at @name make a user name
 * a key may be asked for: 1 to AUTHKEYS_USER_MAX letters, digits, '.', '_'
 * and '-', not starting with '-' and not "." or "..".  sshd passes %u as it
 * came from the network: anything else is refused before any lookup.
 */
bool authkeys_user_name_valid(const char *name, size_t len);
