/* authorized_keys lines: each reason a line is refused, options kept as
 * written, fingerprints against ssh-keygen -lf, exact-key matching. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "modules/authkeys/authkeys-key.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "../lib/check-run.h"

/* base64 of an SSH blob that starts with the string @embedded, then 32 bytes. */
static char *blob_b64(const char *embedded) {
        unsigned char blob[256];
        size_t n = strlen(embedded), len = 0;
        char *out = malloc(400);

        ck_assert_ptr_nonnull(out);
        blob[len++] = 0, blob[len++] = 0, blob[len++] = 0, blob[len++] = (unsigned char) n;
        memcpy(blob + len, embedded, n);
        len += n;
        blob[len++] = 0, blob[len++] = 0, blob[len++] = 0, blob[len++] = 32;
        for (int i = 0; i < 32; i++)
                blob[len++] = (unsigned char) (i * 7 + 1);
        EVP_EncodeBlock((unsigned char *) out, blob, (int) len);
        return out;
}

static char *line_of(const char *prefix, const char *declared, const char *embedded, const char *suffix) {
        _cleanup_free_ char *b = blob_b64(embedded);
        char *l = NULL;

        ck_assert_int_ge(asprintf(&l, "%s%s %s%s", prefix, declared, b, suffix), 0);
        return l;
}

static AuthkeysReject parse(const char *s) {
        return authkeys_key_parse(s, strlen(s), NULL);
}

START_TEST(test_reject_names) {
        for (int r = 0; r < _AUTHKEYS_REJECT_MAX; r++) {
                const char *n = authkeys_reject_to_string((AuthkeysReject) r);
                ck_assert_ptr_nonnull(n);
                ck_assert(strspn(n, "abcdefghijklmnopqrstuvwxyz-0123456789") == strlen(n));
        }
        ck_assert_ptr_null(authkeys_reject_to_string(_AUTHKEYS_REJECT_MAX));
        ck_assert_ptr_null(authkeys_reject_to_string((AuthkeysReject) -1));
}
END_TEST

START_TEST(test_user_names) {
        static const char *const good[] = { "ada", "a",    "ada.lovelace", "ada_l", "ada-l",
                                            "A1",  "1ada", "a..b",         "_ada",  ".ada" };
        static const char *const bad[] = { "",       "-x",  "-",      ".",    "..",   "../x",
                                           "a/b",    "a:b", "a b",    "a\tb", "a\nb", "ad\xc3\xa9",
                                           "ad\xe9", "a@b", "a$(id)", "a;b",  "a*",   "~ada" };
        char big[AUTHKEYS_USER_MAX + 2];

        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
                ck_assert_msg(authkeys_user_name_valid(good[i], strlen(good[i])), "'%s' refused", good[i]);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(!authkeys_user_name_valid(bad[i], strlen(bad[i])), "'%s' accepted", bad[i]);
        /* A NUL inside the given length is not part of a name. */
        ck_assert(!authkeys_user_name_valid("ada\0x", 5));
        ck_assert(!authkeys_user_name_valid(NULL, 0));
        memset(big, 'a', sizeof(big));
        ck_assert(authkeys_user_name_valid(big, AUTHKEYS_USER_MAX));
        ck_assert(!authkeys_user_name_valid(big, AUTHKEYS_USER_MAX + 1));
}
END_TEST

START_TEST(test_valid_forms) {
        static const char *const types[] = {
                "ssh-ed25519",
                "ecdsa-sha2-nistp256",
                "ecdsa-sha2-nistp384",
                "ecdsa-sha2-nistp521",
                "ssh-rsa",
                "sk-ssh-ed25519@openssh.com",
                "sk-ecdsa-sha2-nistp256@openssh.com",
                "ssh-ed25519-cert-v01@openssh.com",
                "ssh-rsa-cert-v01@openssh.com",
                "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
        };

        for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                _cleanup_free_ char *l = line_of("", types[i], types[i], " user@host");
                _cleanup_free_ char *bare = line_of("", types[i], types[i], "");
                ck_assert_int_eq(parse(l), AUTHKEYS_OK);
                ck_assert_int_eq(parse(bare), AUTHKEYS_OK);
        }
}
END_TEST

/* A comment that is not UTF-8: the key is valid, and cleaned it is UTF-8
 * with its length and every valid sequence kept. */
START_TEST(test_comment_not_utf8) {
        static const struct {
                const char *comment, *clean;
        } t[] = {
                { " caf\xe9", " caf?" },
                { " \xff\xfe ok", " ?? ok" },
                { " caf\xc3\xa9 \xc3", " caf\xc3\xa9 ?" },                /* a cut sequence at the end */
                { " \xe2\x82 x", " ?? x" },                               /* one cut in the middle */
                { " \xed\xa0\x80", " ???" },                              /* a surrogate */
                { " \xf0\x9f\x94\x91 \xc0\xaf", " \xf0\x9f\x94\x91 ??" }, /* overlong */
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                _cleanup_free_ char *l = line_of("", "ssh-ed25519", "ssh-ed25519", t[i].comment);
                _cleanup_free_ char *want = line_of("", "ssh-ed25519", "ssh-ed25519", t[i].clean);
                AuthkeysKey k;

                ck_assert_int_eq(authkeys_key_parse(l, strlen(l), &k), AUTHKEYS_OK);
                ck_assert(k.comment_not_utf8);
                authkeys_key_clean_comment(l, &k);
                ck_assert_str_eq(l, want);
                ck_assert_int_eq(authkeys_key_parse(l, strlen(l), &k), AUTHKEYS_OK);
                ck_assert(!k.comment_not_utf8);
        }
}
END_TEST

START_TEST(test_reject_reasons) {
        _cleanup_free_ char *ok = line_of("", "ssh-ed25519", "ssh-ed25519", " c");
        _cleanup_free_ char *mismatch = line_of("", "ssh-rsa", "ssh-ed25519", "");
        _cleanup_free_ char *cert_mismatch =
                line_of("", "ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519", "");
        _cleanup_free_ char *dss = line_of("", "ssh-dss", "ssh-dss", "");
        _cleanup_free_ char *bad_utf8 = line_of("", "ssh-ed25519", "ssh-ed25519", " caf\xc3");
        _cleanup_free_ char *bad_opt =
                line_of("command=\"echo caf\xe9\" ", "ssh-ed25519", "ssh-ed25519", "");
        _cleanup_free_ char *bad_opt_comment =
                line_of("command=\"echo \xff\" ", "ssh-ed25519", "ssh-ed25519", " caf\xe9");
        _cleanup_free_ char *bad_type = line_of("", "ssh-ed25519\xe9", "ssh-ed25519", "");
        _cleanup_free_ char *ctl = line_of("", "ssh-ed25519", "ssh-ed25519", " a\x1b[31m");
        _cleanup_free_ char *del = line_of("", "ssh-ed25519", "ssh-ed25519", " a\x7f");
        _cleanup_free_ char *cr = line_of("", "ssh-ed25519", "ssh-ed25519", "\r");
        _cleanup_free_ char *long_line = malloc(AUTHKEYS_LINE_MAX + 2);
        _cleanup_free_ char *b = blob_b64("ssh-ed25519");
        char buf[512];
        size_t n;

        ck_assert_int_eq(parse(ok), AUTHKEYS_OK);
        ck_assert_int_eq(parse(""), AUTHKEYS_REJECT_EMPTY);
        ck_assert_int_eq(parse(" \t "), AUTHKEYS_REJECT_EMPTY);
        ck_assert_int_eq(parse("# ssh-ed25519 AAAA"), AUTHKEYS_REJECT_EMPTY);
        ck_assert_int_eq(parse(mismatch), AUTHKEYS_REJECT_TYPE_MISMATCH);
        ck_assert_int_eq(parse(cert_mismatch), AUTHKEYS_REJECT_TYPE_MISMATCH);
        ck_assert_int_eq(parse(dss), AUTHKEYS_REJECT_UNKNOWN_TYPE);
        ck_assert_int_eq(parse("garbage"), AUTHKEYS_REJECT_UNKNOWN_TYPE);
        ck_assert_int_eq(parse("no-pty"), AUTHKEYS_REJECT_UNKNOWN_TYPE);
        /* sshd takes a comment of any bytes: so do we (it is cleaned when served) */
        ck_assert_int_eq(parse(bad_utf8), AUTHKEYS_OK);
        /* ... but nothing else: an option's value is the user's command */
        ck_assert_int_eq(parse(bad_opt), AUTHKEYS_REJECT_BAD_UTF8);
        ck_assert_int_eq(parse(bad_opt_comment), AUTHKEYS_REJECT_BAD_UTF8);
        ck_assert_int_eq(parse(bad_type), AUTHKEYS_REJECT_BAD_UTF8);
        ck_assert_int_eq(parse(ctl), AUTHKEYS_REJECT_CONTROL);
        ck_assert_int_eq(parse(del), AUTHKEYS_REJECT_CONTROL);
        ck_assert_int_eq(parse(cr), AUTHKEYS_REJECT_CONTROL);

        /* A NUL inside the length is a control character, not an end. */
        n = strlen(ok);
        memcpy(buf, ok, n);
        buf[5] = 0;
        ck_assert_int_eq(authkeys_key_parse(buf, n, NULL), AUTHKEYS_REJECT_CONTROL);

        /* The cap: a long comment is fine up to AUTHKEYS_LINE_MAX bytes. */
        n = strlen(ok);
        memcpy(long_line, ok, n);
        memset(long_line + n, 'x', AUTHKEYS_LINE_MAX + 1 - n);
        ck_assert_int_eq(authkeys_key_parse(long_line, AUTHKEYS_LINE_MAX, NULL), AUTHKEYS_OK);
        ck_assert_int_eq(authkeys_key_parse(long_line, AUTHKEYS_LINE_MAX + 1, NULL),
                         AUTHKEYS_REJECT_TOO_LONG);

        /* Base64: missing, wrong length, foreign characters, '=' inside, slack bits set. */
        ck_assert_int_eq(parse("ssh-ed25519"), AUTHKEYS_REJECT_BAD_BASE64);
        ck_assert_int_eq(parse("ssh-ed25519 "), AUTHKEYS_REJECT_BAD_BASE64);
        snprintf(buf, sizeof(buf), "ssh-ed25519 %.*s c", (int) strlen(b) - 1, b);
        ck_assert_int_eq(parse(buf), AUTHKEYS_REJECT_BAD_BASE64);
        snprintf(buf, sizeof(buf), "ssh-ed25519 %s= c", b);
        ck_assert_int_eq(parse(buf), AUTHKEYS_REJECT_BAD_BASE64);
        snprintf(buf, sizeof(buf), "ssh-ed25519 %s", b);
        buf[20] = '*';
        ck_assert_int_eq(parse(buf), AUTHKEYS_REJECT_BAD_BASE64);
        snprintf(buf, sizeof(buf), "ssh-ed25519 %s", b);
        buf[20] = '=';
        ck_assert_int_eq(parse(buf), AUTHKEYS_REJECT_BAD_BASE64);
        ck_assert_int_eq(parse("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIQ=="), AUTHKEYS_OK);
        ck_assert_int_eq(parse("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIR=="), AUTHKEYS_REJECT_BAD_BASE64);
        ck_assert_int_eq(parse("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAA="), AUTHKEYS_OK);
        ck_assert_int_eq(parse("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAB="), AUTHKEYS_REJECT_BAD_BASE64);
        ck_assert_int_eq(parse("ssh-ed25519 ===="), AUTHKEYS_REJECT_BAD_BASE64);
        /* A blob too short to hold the type it names. */
        ck_assert_int_eq(parse("ssh-ed25519 AAAA"), AUTHKEYS_REJECT_TYPE_MISMATCH);
        ck_assert_int_eq(parse("ssh-ed25519 AAAAC3NzaC1lZDI1"), AUTHKEYS_REJECT_TYPE_MISMATCH);
}
END_TEST

START_TEST(test_options) {
        _cleanup_free_ char *b = blob_b64("ssh-ed25519");
        static const char *const good[] = {
                "no-pty",
                "from=\"10.0.0.0/8,192.168.0.0/16\",no-pty",
                "command=\"echo \\\"a, b\\\" c\",restrict",
                "environment=\"A=b c\",permitopen=\"host:22\",expiry-time=\"20300101\"",
                "cert-authority,principals=\"ada,bob\"",
        };
        static const char *const bad[] = {
                "from=\"10.0.0.0/8", /* unterminated */
                "no-pty,,restrict",  /* empty option */
                ",no-pty",
                "no-pty,",
                "=\"x\"",       /* no name */
                "from=\"a\"x",  /* junk after the value */
                "no pty",       /* the blank ends the options: 'pty' is no type */
                "from=\"a\\\"", /* the escaped quote does not close */
                "from=x",       /* unquoted value */
        };
        AuthkeysKey k;
        char buf[1024];

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                int n = snprintf(buf, sizeof(buf), "%s ssh-ed25519 %s my comment, with spaces", good[i], b);
                ck_assert_int_eq(authkeys_key_parse(buf, (size_t) n, &k), AUTHKEYS_OK);
                ck_assert_uint_eq(k.options_off, 0);
                ck_assert_uint_eq(k.options_len, strlen(good[i]));
                ck_assert(memcmp(buf, good[i], k.options_len) == 0);
                ck_assert_uint_eq(k.type_len, strlen("ssh-ed25519"));
                ck_assert(memcmp(buf + k.type_off, "ssh-ed25519", k.type_len) == 0);
                ck_assert_uint_eq(k.blob_len, strlen(b));
                ck_assert_str_eq(buf + k.comment_off, "my comment, with spaces");
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                snprintf(buf, sizeof(buf), "%s ssh-ed25519 %s c", bad[i], b);
                ck_assert_msg(parse(buf) == AUTHKEYS_REJECT_BAD_OPTIONS ||
                                      parse(buf) == AUTHKEYS_REJECT_UNKNOWN_TYPE,
                              "%s: %s", bad[i], authkeys_reject_to_string(parse(buf)));
                ck_assert_int_ne(parse(buf), AUTHKEYS_OK);
        }
        snprintf(buf, sizeof(buf), "from=\"10.0.0.0/8 ssh-ed25519 %s c", b);
        ck_assert_int_eq(parse(buf), AUTHKEYS_REJECT_BAD_OPTIONS);
        snprintf(buf, sizeof(buf), "no-pty,,x ssh-ed25519 %s c", b);
        ck_assert_int_eq(parse(buf), AUTHKEYS_REJECT_BAD_OPTIONS);

        /* Leading blanks are skipped, and the whole line is still what is served. */
        snprintf(buf, sizeof(buf), "  \tno-pty\t ssh-ed25519\t%s", b);
        ck_assert_int_eq(authkeys_key_parse(buf, strlen(buf), &k), AUTHKEYS_OK);
        ck_assert_uint_eq(k.options_off, 3);
        ck_assert_uint_eq(k.options_len, 6);
        ck_assert_uint_eq(k.comment_len, 0);
}
END_TEST

/* Runs @cmd in the shell; its first line of output, without the newline. */
static char *run_line(const char *cmd) {
        char buf[16384];
        FILE *f = popen(cmd, "r");
        char *nl;

        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
        ck_assert_int_eq(pclose(f), 0);
        nl = strchr(buf, '\n');
        if (nl)
                *nl = 0;
        return strdup(buf);
}

static char tmpdir[] = "/tmp/test-authkeys-XXXXXX";

static void keygen_setup(void) {
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void keygen_teardown(void) {
        char cmd[256];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        (void) !system(cmd);
}

static const struct {
        const char *name, *args, *type;
} keygens[] = {
        { "ed25519", "-t ed25519", "ssh-ed25519" },
        { "ecdsa256", "-t ecdsa -b 256", "ecdsa-sha2-nistp256" },
        { "ecdsa384", "-t ecdsa -b 384", "ecdsa-sha2-nistp384" },
        { "ecdsa521", "-t ecdsa -b 521", "ecdsa-sha2-nistp521" },
        { "rsa", "-t rsa -b 2048", "ssh-rsa" },
};

/* Generates key @i, and with @cert a certificate for it signed by an ed25519 CA. */
static char *keygen(size_t i, bool cert, char fp[128]) {
        _cleanup_free_ char *cmd = NULL, *out = NULL;
        const char *pub = cert ? "-cert.pub" : ".pub";
        char *sp;

        ck_assert_int_ge(
                asprintf(&cmd,
                         "cd '%s' && rm -f %s %s.pub %s-cert.pub ca ca.pub && ssh-keygen -q -N '' %s -C "
                         "'user@test' -f %s </dev/null >/dev/null && "
                         "{ [ -z '%s' ] || { ssh-keygen -q -N '' -t ed25519 -f ca </dev/null >/dev/null && "
                         "ssh-keygen -q -s ca -I id -n ada %s.pub >/dev/null 2>&1; }; } && "
                         "ssh-keygen -lf %s%s -E sha256",
                         tmpdir, keygens[i].name, keygens[i].name, keygens[i].name, keygens[i].args,
                         keygens[i].name, cert ? "c" : "", keygens[i].name, keygens[i].name, pub),
                0);
        out = run_line(cmd);
        /* "256 SHA256:xxx user@test (ED25519)" */
        sp = strchr(out, ' ');
        ck_assert_ptr_nonnull(sp);
        ck_assert_int_eq(sscanf(sp + 1, "%127s", fp), 1);
        free(cmd);
        ck_assert_int_ge(asprintf(&cmd, "cat '%s/%s%s'", tmpdir, keygens[i].name, pub), 0);
        return run_line(cmd);
}

START_TEST(test_fingerprint_vs_ssh_keygen) {
        _cleanup_free_ char *plain = NULL;
        AuthkeysKey kp;

        for (size_t i = 0; i < ELEMENTSOF(keygens); i++)
                for (int cert = 0; cert < 2; cert++) {
                        char want[128], got[AUTHKEYS_FINGERPRINT_MAX];
                        _cleanup_free_ char *line = keygen(i, cert, want);
                        uint8_t d[AUTHKEYS_DIGEST_SIZE], d2[AUTHKEYS_DIGEST_SIZE];
                        AuthkeysMatch m;
                        AuthkeysKey k;
                        char *type, *key;

                        ck_assert_msg(authkeys_key_parse(line, strlen(line), &k) == AUTHKEYS_OK, "%s", line);
                        ck_assert(strncmp(line + k.type_off, keygens[i].type, strlen(keygens[i].type)) == 0);
                        ck_assert_int_eq(k.type_len, strlen(keygens[i].type) +
                                                             (cert ? strlen("-cert-v01@openssh.com") : 0));
                        ck_assert_int_eq(authkeys_key_digest(line, &k, d), 0);
                        authkeys_fingerprint_format(d, got);
                        ck_assert_str_eq(got, want);
                        ck_assert_int_eq(authkeys_fingerprint_parse(got, d2), 0);
                        ck_assert(memcmp(d, d2, sizeof(d)) == 0);
                        ck_assert_int_eq(authkeys_match_from_fingerprint(want, &m), 0);
                        ck_assert(authkeys_key_matches(line, &k, &m));
                        /* %t %k: the exact blob, certificate or plain key. */
                        type = strndup(line + k.type_off, k.type_len);
                        key = strndup(line + k.blob_off, k.blob_len);
                        ck_assert_int_eq(authkeys_match_from_key(type, key, &m), 0);
                        ck_assert(authkeys_key_matches(line, &k, &m));
                        if (cert) {
                                /* The plain key the certificate was made for (generated with it). */
                                char cmd[256];
                                snprintf(cmd, sizeof(cmd), "cat '%s/%s.pub'", tmpdir, keygens[i].name);
                                free(plain);
                                plain = run_line(cmd);
                                ck_assert_int_eq(authkeys_key_parse(plain, strlen(plain), &kp), AUTHKEYS_OK);
                                ck_assert(!authkeys_key_matches(plain, &kp, &m));
                                ck_assert_int_eq(authkeys_match_from_fingerprint(want, &m), 0);
                                ck_assert(authkeys_key_matches(plain, &kp, &m));
                        }
                        free(type);
                        free(key);
                }
}
END_TEST

START_TEST(test_fingerprint_parse_strict) {
        uint8_t d[AUTHKEYS_DIGEST_SIZE];
        char fp[AUTHKEYS_FINGERPRINT_MAX], buf[128];

        memset(d, 0xA5, sizeof(d));
        authkeys_fingerprint_format(d, fp);
        ck_assert_uint_eq(strlen(fp), 50);
        ck_assert_int_eq(authkeys_fingerprint_parse(fp, d), 0);
        ck_assert_int_eq(authkeys_fingerprint_parse(fp + 7, d), -EINVAL);
        ck_assert_int_eq(authkeys_fingerprint_parse(NULL, d), -EINVAL);
        ck_assert_int_eq(authkeys_fingerprint_parse("", d), -EINVAL);
        ck_assert_int_eq(authkeys_fingerprint_parse("SHA256:", d), -EINVAL);
        snprintf(buf, sizeof(buf), "%s=", fp);
        ck_assert_int_eq(authkeys_fingerprint_parse(buf, d), -EINVAL);
        snprintf(buf, sizeof(buf), "%sA", fp);
        ck_assert_int_eq(authkeys_fingerprint_parse(buf, d), -EINVAL);
        snprintf(buf, sizeof(buf), "MD5:%s", fp + 7);
        ck_assert_int_eq(authkeys_fingerprint_parse(buf, d), -EINVAL);
        snprintf(buf, sizeof(buf), "%s", fp);
        buf[20] = '%';
        ck_assert_int_eq(authkeys_fingerprint_parse(buf, d), -EINVAL);
        /* The last character carries 2 slack bits that must be zero. */
        snprintf(buf, sizeof(buf), "SHA256:%.42sE",
                 "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
        ck_assert_int_eq(authkeys_fingerprint_parse(buf, d), 0);
        buf[49] = 'B';
        ck_assert_int_eq(authkeys_fingerprint_parse(buf, d), -EINVAL);
}
END_TEST

START_TEST(test_exact_match) {
        char fp_a[128], fp_b[128];
        _cleanup_free_ char *a = keygen(0, false, fp_a);
        _cleanup_free_ char *b = NULL;
        _cleanup_free_ char *a_type = NULL, *a_key = NULL;
        AuthkeysMatch m;
        AuthkeysKey ka, kb;

        b = keygen(0, false, fp_b);
        ck_assert_str_ne(fp_a, fp_b);
        ck_assert_int_eq(authkeys_key_parse(a, strlen(a), &ka), AUTHKEYS_OK);
        ck_assert_int_eq(authkeys_key_parse(b, strlen(b), &kb), AUTHKEYS_OK);

        ck_assert_int_eq(authkeys_match_from_fingerprint(fp_a, &m), 0);
        ck_assert(authkeys_key_matches(a, &ka, &m));
        ck_assert(!authkeys_key_matches(b, &kb, &m));

        a_type = strndup(a + ka.type_off, ka.type_len);
        a_key = strndup(a + ka.blob_off, ka.blob_len);
        ck_assert_int_eq(authkeys_match_from_key(a_type, a_key, &m), 0);
        ck_assert(authkeys_key_matches(a, &ka, &m));
        ck_assert(!authkeys_key_matches(b, &kb, &m));

        /* The declared type must be known and be the one in the blob. */
        ck_assert_int_eq(authkeys_match_from_key("ssh-rsa", a_key, &m), -EINVAL);
        ck_assert_int_eq(authkeys_match_from_key("ssh-dss", a_key, &m), -EINVAL);
        ck_assert_int_eq(authkeys_match_from_key(a_type, "AAAA", &m), -EINVAL);
        ck_assert_int_eq(authkeys_match_from_key(a_type, "not base64!", &m), -EINVAL);
        ck_assert_int_eq(authkeys_match_from_key(a_type, "", &m), -EINVAL);
        ck_assert_int_eq(authkeys_match_from_key(NULL, a_key, &m), -EINVAL);
        ck_assert_int_eq(authkeys_match_from_key(a_type, NULL, &m), -EINVAL);
        ck_assert_int_eq(authkeys_match_from_fingerprint("SHA256:nope", &m), -EINVAL);
}
END_TEST

START_TEST(test_match_oversized_key) {
        _cleanup_free_ char *big = malloc(AUTHKEYS_LINE_MAX * 4);
        AuthkeysMatch m;

        memset(big, 'A', AUTHKEYS_LINE_MAX * 4 - 1);
        big[AUTHKEYS_LINE_MAX * 4 - 1] = 0;
        ck_assert_int_eq(authkeys_match_from_key("ssh-ed25519", big, &m), -EINVAL);
}
END_TEST

START_TEST(test_rsa_16384_fits) {
        /* A 16384-bit modulus: 4 + 7 + 4 + 3 + 4 + 2049 bytes. */
        static unsigned char blob[4 + 7 + 4 + 3 + 4 + 2049];
        _cleanup_free_ char *b64 = malloc(sizeof(blob) * 4 / 3 + 8);
        _cleanup_free_ char *line = NULL;
        size_t o = 0;

        memcpy(blob, "\0\0\0\7ssh-rsa\0\0\0\3\1\0\1\0\0\x08\x01", 22);
        o = 22;
        memset(blob + o, 0xC3, sizeof(blob) - o);
        EVP_EncodeBlock((unsigned char *) b64, blob, (int) sizeof(blob));
        ck_assert_int_ge(asprintf(&line, "from=\"10.0.0.0/8\",no-pty ssh-rsa %s big@key", b64), 0);
        ck_assert_int_eq(parse(line), AUTHKEYS_OK);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("authkeys-key");
        TCase *tc = tcase_create("parse");
        TCase *tk = tcase_create("ssh-keygen");

        tcase_add_test(tc, test_reject_names);
        tcase_add_test(tc, test_valid_forms);
        tcase_add_test(tc, test_user_names);
        tcase_add_test(tc, test_reject_reasons);
        tcase_add_test(tc, test_comment_not_utf8);
        tcase_add_test(tc, test_options);
        tcase_add_test(tc, test_fingerprint_parse_strict);
        tcase_add_test(tc, test_match_oversized_key);
        tcase_add_test(tc, test_rsa_16384_fits);
        suite_add_tcase(s, tc);
        tcase_add_checked_fixture(tk, keygen_setup, keygen_teardown);
        tcase_add_test(tk, test_fingerprint_vs_ssh_keygen);
        tcase_add_test(tk, test_exact_match);
        suite_add_tcase(s, tk);
        return s;
}

int main(void) {
        return check_run(suite());
}
