/* The sshkey cache map: both line forms, the writer's quoting read back,
 * every drop reason, caps, and hostile files. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "modules/authkeys/authkeys-map.h"
#include "modules/nsscache/cache/cache-format.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "../lib/check-run.h"

/* A valid ed25519 line whose key bytes depend on @seed. */
static char *key_line(int seed, const char *prefix, const char *comment) {
        unsigned char blob[51] = "\0\0\0\x0bssh-ed25519\0\0\0\x20";
        char b64[80], *l = NULL;

        for (int i = 0; i < 32; i++)
                blob[19 + i] = (unsigned char) (seed * 31 + i);
        EVP_EncodeBlock((unsigned char *) b64, blob, (int) sizeof(blob));
        ck_assert_int_ge(asprintf(&l, "%sssh-ed25519 %s%s%s", prefix, b64, *comment ? " " : "", comment), 0);
        return l;
}

typedef struct Drops {
        size_t n;
        AuthkeysDrop d[64];
        char users[64][64];
} Drops;

static void record(const AuthkeysDrop *d, void *userdata) {
        Drops *r = userdata;

        if (r->n < ELEMENTSOF(r->d)) {
                r->d[r->n] = *d;
                snprintf(r->users[r->n], sizeof(r->users[0]), "%s", d->user ? d->user : "(null)");
                r->d[r->n].user = r->users[r->n];
        }
        r->n++;
}

static AuthkeysMap *build(const char *text, const AuthkeysMapLimits *l, Drops *drops) {
        AuthkeysMap *m = NULL;

        ck_assert_int_eq(authkeys_map_build_mem(text, strlen(text), l, drops ? record : NULL, drops, &m), 0);
        return m;
}

/* The user's keys, joined by '\n'; NULL if there is no such user. */
static char *keys_of(const AuthkeysMap *m, const char *user) {
        size_t n, len = 0;
        char *out;
        int h = authkeys_map_lookup(m, user, &n);

        if (h < 0) {
                ck_assert_int_eq(h, -ENOENT);
                return NULL;
        }
        out = calloc(1, 64 * 1024);
        for (size_t i = 0; i < n; i++) {
                AuthkeysMapKey k = authkeys_map_key(m, h, i);
                if (i > 0)
                        out[len++] = '\n';
                memcpy(out + len, k.line, k.len);
                len += k.len;
        }
        return out;
}

#define assert_keys(m, user, want)                                                                          \
        do {                                                                                                \
                _cleanup_free_ char *_got = keys_of((m), (user));                                           \
                ck_assert_ptr_nonnull(_got);                                                                \
                ck_assert_str_eq(_got, (want));                                                             \
        } while (0)

START_TEST(test_forms) {
        _cleanup_free_ char *k1 = key_line(1, "", "ada@a"), *k2 = key_line(2, "", ""), *text = NULL,
                            *two = NULL;
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
        Drops drops = {};
        size_t n;

        ck_assert_int_ge(asprintf(&text,
                                  "ada:%s\n"
                                  "bob:['%s', '%s']\n"
                                  "cyd:\n"
                                  "dee:[]\n"
                                  "eve:[ '%s' ,\t\"%s\" , ]\n"
                                  "fay:[\"%s\"]",
                                  k1, k1, k2, k1, k2, k2),
                         0);
        ck_assert_int_ge(asprintf(&two, "%s\n%s", k1, k2), 0);
        m = build(text, NULL, &drops);
        ck_assert_uint_eq(drops.n, 0);
        assert_keys(m, "ada", k1);
        assert_keys(m, "bob", two);
        assert_keys(m, "cyd", "");
        assert_keys(m, "dee", "");
        assert_keys(m, "eve", two);
        assert_keys(m, "fay", k2); /* the last line needs no newline */
        ck_assert_int_ge(authkeys_map_lookup(m, "cyd", &n), 0);
        ck_assert_uint_eq(n, 0);
        /* Exact names only. */
        ck_assert_int_eq(authkeys_map_lookup(m, "ad", &n), -ENOENT);
        ck_assert_int_eq(authkeys_map_lookup(m, "ada ", &n), -ENOENT);
        ck_assert_int_eq(authkeys_map_lookup(m, "ADA", &n), -ENOENT);
        ck_assert_int_eq(authkeys_map_lookup(m, "", &n), -ENOENT);
        ck_assert_uint_eq(authkeys_map_stats(m)->users, 6);
        ck_assert_uint_eq(authkeys_map_stats(m)->keys, 6);
        ck_assert_uint_eq(authkeys_map_stats(m)->lines, 6);
}
END_TEST

START_TEST(test_empty_file) {
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = build("", NULL, NULL);
        size_t n;

        ck_assert_int_eq(authkeys_map_lookup(m, "ada", &n), -ENOENT);
        ck_assert_uint_eq(authkeys_map_stats(m)->users, 0);
}
END_TEST

/* What sunkd's nsscache writer produces is read back byte for byte. */
START_TEST(test_writer_round_trip) {
        _cleanup_free_ char *k0 = key_line(1, "from=\"10.0.0.0/8,192.168.0.0/16\",no-pty ", "ada@host");
        _cleanup_free_ char *k1 = key_line(2, "command=\"echo \\\"it's\\\"\" ", "it's \\ a \"test\"");
        _cleanup_free_ char *k2 = key_line(3, "", "caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x94\x91 tab\there");
        _cleanup_free_ char *k3 = key_line(4, "", "only 'single' quotes");
        _cleanup_free_ char *bad = key_line(5, "", "bell\a");
        char *keys[] = { k0, k1, k2, k3, bad, NULL };
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
        _cleanup_free_ char *text = NULL;
        Drops drops = {};
        size_t len, n;
        FILE *f = open_memstream(&text, &len);
        int h;

        ck_assert_ptr_nonnull(f);
        fputs("ada:", f);
        ck_assert_int_eq(cache_format_pylist(f, keys), 0);
        fputc('\n', f);
        ck_assert_int_eq(fclose(f), 0);
        /* The writer escaped what it had to. */
        ck_assert_ptr_nonnull(strstr(text, "\\u2028"));
        ck_assert_ptr_nonnull(strstr(text, "\\x07"));
        ck_assert_ptr_nonnull(strstr(text, "\\t"));

        m = build(text, NULL, &drops);
        h = authkeys_map_lookup(m, "ada", &n);
        ck_assert_int_ge(h, 0);
        ck_assert_uint_eq(n, 4);
        for (size_t i = 0; i < n; i++) {
                AuthkeysMapKey k = authkeys_map_key(m, h, i);
                ck_assert_uint_eq(k.len, strlen(keys[i]));
                ck_assert(memcmp(k.line, keys[i], k.len) == 0);
        }
        ck_assert_uint_eq(drops.n, 1);
        ck_assert_int_eq(drops.d[0].reject, AUTHKEYS_REJECT_CONTROL);
        ck_assert_uint_eq(drops.d[0].key_index, 4);
        ck_assert_str_eq(drops.d[0].user, "ada");
}
END_TEST

/* A key whose comment is not UTF-8 is served, in both forms, its stray
 * bytes '?': the line leaves sunkd in a JSON string.  Options that are not
 * UTF-8 still drop the key, counted. */
START_TEST(test_comment_not_utf8) {
        _cleanup_free_ char *k1 = key_line(1, "", "caf\xe9 \xff"), *k1c = key_line(1, "", "caf? ?");
        _cleanup_free_ char *k2 = key_line(2, "", "r\xc3\xa9sum\xc3\xa9 \xc3"),
                            *k2c = key_line(2, "", "r\xc3\xa9sum\xc3\xa9 ?");
        _cleanup_free_ char *bad = key_line(3, "command=\"echo \xe9\" ", "x");
        _cleanup_free_ char *text = NULL, *two = NULL;
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
        Drops drops = {};

        ck_assert_int_ge(asprintf(&text, "ada:%s\nbob:['%s', '%s', '%s']\n", k1, k1, bad, k2), 0);
        ck_assert_int_ge(asprintf(&two, "%s\n%s", k1c, k2c), 0);
        m = build(text, NULL, &drops);
        assert_keys(m, "ada", k1c);
        assert_keys(m, "bob", two);
        ck_assert_uint_eq(drops.n, 1);
        ck_assert_int_eq(drops.d[0].reject, AUTHKEYS_REJECT_BAD_UTF8);
        ck_assert_uint_eq(drops.d[0].key_index, 1);
        ck_assert_uint_eq(authkeys_map_stats(m)->invalid_keys[AUTHKEYS_REJECT_BAD_UTF8], 1);
        ck_assert_uint_eq(authkeys_map_stats(m)->keys, 3);
        /* the input is left as it was */
        ck_assert_ptr_nonnull(strstr(text, "caf\xe9 \xff"));
}
END_TEST

START_TEST(test_drop_reasons) {
        _cleanup_free_ char *k1 = key_line(1, "", ""), *k2 = key_line(2, "", ""), *k3 = key_line(3, "", "");
        _cleanup_free_ char *text = NULL, *two = NULL;
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
        AuthkeysMapLimits l = authkeys_map_default_limits;
        Drops drops = {};
        static const struct {
                size_t line;
                AuthkeysLineError le;
                AuthkeysReject rj;
        } want[] = {
                { 1, AUTHKEYS_LINE_NO_COLON, AUTHKEYS_OK },
                { 2, AUTHKEYS_LINE_BAD_NAME, AUTHKEYS_OK },
                { 3, AUTHKEYS_LINE_BAD_NAME, AUTHKEYS_OK },
                { 4, AUTHKEYS_LINE_BAD_LIST, AUTHKEYS_OK },
                { 5, AUTHKEYS_LINE_BAD_LIST, AUTHKEYS_OK },
                { 6, AUTHKEYS_LINE_BAD_LIST, AUTHKEYS_OK },
                { 7, AUTHKEYS_LINE_BAD_LIST, AUTHKEYS_OK },
                { 8, AUTHKEYS_LINE_BAD_LIST, AUTHKEYS_OK },
                { 9, AUTHKEYS_LINE_BAD_LIST, AUTHKEYS_OK },
                { 10, AUTHKEYS_LINE_BAD_LIST, AUTHKEYS_OK },
                { 11, AUTHKEYS_LINE_BAD_LIST, AUTHKEYS_OK },
                { 12, AUTHKEYS_LINE_OK, AUTHKEYS_REJECT_UNKNOWN_TYPE },
                { 12, AUTHKEYS_LINE_OK, AUTHKEYS_REJECT_TOO_MANY },
                { 13, AUTHKEYS_LINE_DUPLICATE, AUTHKEYS_OK },
                { 14, AUTHKEYS_LINE_OK, AUTHKEYS_REJECT_BAD_BASE64 },
                { 15, AUTHKEYS_LINE_TOO_LONG, AUTHKEYS_OK },
                { 16, AUTHKEYS_LINE_OK, AUTHKEYS_REJECT_EMPTY },
        };
        char longline[700];

        memset(longline, 'x', sizeof(longline) - 1);
        longline[sizeof(longline) - 1] = 0;
        ck_assert_int_ge(asprintf(&text,
                                  "no colon here\n"  /* 1 */
                                  ":%s\n"            /* 2 */
                                  "a b:%s\n"         /* 3 */
                                  "x1:['%s'\n"       /* 4: unterminated list */
                                  "x2:['%s' '%s']\n" /* 5: no comma */
                                  "x3:[b'%s']\n"     /* 6: bytes literal */
                                  "x4:['\\q']\n"     /* 7: escape repr never writes */
                                  "x5:['\\x4']\n"    /* 8: short \\x */
                                  "x6:['\\ud800']\n" /* 9: lone surrogate */
                                  "x7:['%s'] junk\n" /* 10 */
                                  "x8:['%s\n"        /* 11: unterminated string */
                                  "ada:['%s', 'ssh-dss AAAA', '%s', '%s']\n" /* 12 */
                                  "ada:['%s']\n"                             /* 13: the first line wins */
                                  "bob:ssh-ed25519 AAAA*AAA\n"               /* 14 */
                                  "cyd:%s\n"                                 /* 15 */
                                  "dee:['']\n"                               /* 16 */
                                  "\n"                                       /* blank lines are skipped */
                                  "eve:%s\n",
                                  k1, k1, k1, k1, k2, k1, k1, k1, k1, k2, k3, k3, longline, k1),
                         0);
        l.max_keys_per_user = 2;
        l.max_line = 600;
        m = build(text, &l, &drops);
        ck_assert_uint_eq(drops.n, ELEMENTSOF(want));
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                ck_assert_msg(drops.d[i].line_no == want[i].line && drops.d[i].line_error == want[i].le &&
                                      drops.d[i].reject == want[i].rj,
                              "drop %zu: line %zu %s %s", i, drops.d[i].line_no,
                              authkeys_line_error_to_string(drops.d[i].line_error),
                              authkeys_reject_to_string(drops.d[i].reject));
        }
        ck_assert_str_eq(drops.d[0].user, "(null)");
        ck_assert_str_eq(drops.d[3].user, "x1");
        ck_assert_uint_eq(drops.d[11].key_index, 1);
        ck_assert_str_eq(drops.d[11].user, "ada");
        ck_assert_uint_eq(drops.d[12].key_index, 3);
        ck_assert_int_ge(asprintf(&two, "%s\n%s", k1, k2), 0);
        assert_keys(m, "ada", two);
        assert_keys(m, "bob", "");
        assert_keys(m, "dee", "");
        assert_keys(m, "eve", k1);
        ck_assert_ptr_null(keys_of(m, "x1"));
        ck_assert_ptr_null(keys_of(m, "cyd"));
        ck_assert_uint_eq(authkeys_map_stats(m)->bad_lines[AUTHKEYS_LINE_BAD_LIST], 8);
        ck_assert_uint_eq(authkeys_map_stats(m)->invalid_keys[AUTHKEYS_REJECT_TOO_MANY], 1);
        for (int e = 0; e < _AUTHKEYS_LINE_MAX; e++)
                ck_assert_ptr_nonnull(authkeys_line_error_to_string((AuthkeysLineError) e));
        ck_assert_ptr_null(authkeys_line_error_to_string(_AUTHKEYS_LINE_MAX));
}
END_TEST

START_TEST(test_crlf_and_nul) {
        _cleanup_free_ char *k1 = key_line(1, "", "c"), *kz = key_line(2, "", "c#d"), *text = NULL;
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
        Drops drops = {};
        int n;

        n = asprintf(&text, "ada:%s\r\nbob:['%s']\r\nc\1d:%s\nx#y:%s\nzed:%s\n", k1, k1, k1, k1, kz);
        ck_assert_int_ge(n, 0);
        /* NUL bytes: one in a name, one in a key. */
        for (int i = 0; i < n; i++)
                if (text[i] == '#')
                        text[i] = 0;
        ck_assert_int_eq(authkeys_map_build_mem(text, (size_t) n, NULL, record, &drops, &m), 0);
        assert_keys(m, "ada", k1);
        assert_keys(m, "bob", k1);
        assert_keys(m, "zed", "");
        ck_assert_ptr_null(keys_of(m, "x"));
        ck_assert_uint_eq(drops.n, 3);
        ck_assert_int_eq(drops.d[0].line_error, AUTHKEYS_LINE_BAD_NAME);
        ck_assert_int_eq(drops.d[1].line_error, AUTHKEYS_LINE_BAD_NAME);
        ck_assert_int_eq(drops.d[2].reject, AUTHKEYS_REJECT_CONTROL);
        ck_assert_uint_eq(authkeys_map_stats(m)->users, 3);
}
END_TEST

START_TEST(test_binary_garbage) {
        static const char grammar[] = ":['\"\\\n, a]x";
        _cleanup_free_ unsigned char *buf = malloc(1 << 20);
        uint64_t x = 88172645463325252ULL;

        for (int round = 0; round < 4; round++) {
                _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
                size_t n;

                for (size_t i = 0; i < (1 << 20); i++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        /* Later rounds lean on the bytes the grammar cares about. */
                        buf[i] = round == 0 ? (unsigned char) x
                                            : (unsigned char) grammar[x % (sizeof(grammar) - 1)];
                }
                ck_assert_int_eq(authkeys_map_build_mem(buf, 1 << 20, NULL, NULL, NULL, &m), 0);
                ck_assert_uint_eq(authkeys_map_stats(m)->keys, 0);
                (void) authkeys_map_lookup(m, "a", &n);
        }
}
END_TEST

START_TEST(test_truncated) {
        _cleanup_free_ char *k1 = key_line(1, "", ""), *text = NULL;
        Drops drops = {};
        int n = asprintf(&text, "ada:['%s', '%s']\nbob:%s\n", k1, k1, k1);

        ck_assert_int_ge(n, 0);
        /* Every prefix builds; only whole lines yield users. */
        for (int cut = 0; cut <= n; cut++) {
                _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
                size_t users;

                drops.n = 0;
                ck_assert_int_eq(authkeys_map_build_mem(text, (size_t) cut, NULL, record, &drops, &m), 0);
                users = authkeys_map_stats(m)->users;
                ck_assert_uint_le(users, 2);
                if (cut < (int) strlen("ada:['"))
                        ck_assert_uint_le(users, 1);
        }
}
END_TEST

/* Local accounts: no keys whatever the file says, reported by name as
 * local-account, and told apart from broken lines. */
START_TEST(test_local_accounts) {
        _cleanup_free_ char *k1 = key_line(1, "", "x"), *k2 = key_line(2, "", "y"), *text = NULL,
                            *cut = NULL;
        _cleanup_(authkeys_local_freep) AuthkeysLocal *local = NULL;
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
        AuthkeysMapLimits limits = authkeys_map_default_limits;
        const AuthkeysMapStats *st;
        Drops drops = {};
        int n;

        ck_assert_int_eq(authkeys_local_load("/nonexistent", &local), 0);
        limits.local = local;
        n = asprintf(&text,
                     "root:['%s']\n"      /* 1 */
                     "ada:['%s']\n"       /* 2 */
                     "daemon:%s\n"        /* 3: the one-key form */
                     "root:['%s']\n"      /* 4: again: still local, not a duplicate */
                     "0:['%s']\n"         /* 5: uid 0 spelt as a name */
                     "systemd-network:\n" /* 6 */
                     "_apt:['%s']\r\n"    /* 7: CRLF */
                     "ROOT:['%s']\n"      /* 8: another name: sshd and NSS tell case apart */
                     "root :['%s']\n"     /* 9: a blank in the name */
                     "ro#ot:['%s']\n"     /* 10: a NUL in the name */
                     "nobody:['%s', 'ssh-ed25519 AAAA!!']\n", /* 11 */
                     k1, k2, k1, k1, k1, k1, k2, k1, k1, k1);
        ck_assert_int_ge(n, 0);
        for (int i = 0; i < n; i++)
                if (text[i] == '#')
                        text[i] = 0;
        ck_assert_int_eq(authkeys_map_build_mem(text, (size_t) n, &limits, record, &drops, &m), 0);
        ck_assert_ptr_null(keys_of(m, "root"));
        ck_assert_ptr_null(keys_of(m, "daemon"));
        ck_assert_ptr_null(keys_of(m, "0"));
        ck_assert_ptr_null(keys_of(m, "systemd-network"));
        ck_assert_ptr_null(keys_of(m, "_apt"));
        ck_assert_ptr_null(keys_of(m, "nobody"));
        ck_assert_ptr_null(keys_of(m, "root "));
        ck_assert_ptr_null(keys_of(m, "ro"));
        assert_keys(m, "ada", k2);
        assert_keys(m, "ROOT", k2);
        st = authkeys_map_stats(m);
        ck_assert_uint_eq(st->users, 2);
        ck_assert_uint_eq(st->keys, 2);
        ck_assert_uint_eq(st->bad_lines[AUTHKEYS_LINE_LOCAL_ACCOUNT], 7);
        ck_assert_uint_eq(st->bad_lines[AUTHKEYS_LINE_BAD_NAME], 2);
        ck_assert_uint_eq(st->bad_lines[AUTHKEYS_LINE_DUPLICATE], 0);
        /* A local account's keys are not looked at: nothing is said about nobody's bad one. */
        ck_assert_uint_eq(st->invalid_keys[AUTHKEYS_REJECT_BAD_BASE64], 0);
        ck_assert_uint_eq(drops.n, 9);
        ck_assert_int_eq(drops.d[0].line_error, AUTHKEYS_LINE_LOCAL_ACCOUNT);
        ck_assert_str_eq(drops.d[0].user, "root");
        ck_assert_uint_eq(drops.d[0].line_no, 1);
        ck_assert_str_eq(drops.d[1].user, "daemon");
        ck_assert_str_eq(drops.d[2].user, "root");
        ck_assert_uint_eq(drops.d[2].line_no, 4);
        ck_assert_str_eq(drops.d[3].user, "0");
        ck_assert_str_eq(drops.d[5].user, "_apt");
        ck_assert_int_eq(drops.d[6].line_error, AUTHKEYS_LINE_BAD_NAME);
        ck_assert_int_eq(drops.d[7].line_error, AUTHKEYS_LINE_BAD_NAME);
        ck_assert_str_eq(drops.d[8].user, "nobody");
        ck_assert_int_eq(drops.d[8].line_error, AUTHKEYS_LINE_LOCAL_ACCOUNT);

        /* Without limits.local the same file serves them: the check is the caller's to ask for. */
        authkeys_map_free(TAKE_PTR(m));
        ck_assert_int_eq(authkeys_map_build_mem(text, (size_t) n, NULL, NULL, NULL, &m), 0);
        assert_keys(m, "root", k1);

        /* A local account's last line cut off is a cut-off line, as anyone's. */
        authkeys_map_free(TAKE_PTR(m));
        drops.n = 0;
        ck_assert_int_ge(asprintf(&cut, "ada:['%s']\nroot:['%s", k1, k1), 0);
        ck_assert_int_eq(authkeys_map_build_mem(cut, strlen(cut), &limits, record, &drops, &m), 0);
        ck_assert_uint_eq(drops.n, 1);
        ck_assert_int_eq(drops.d[0].line_error, AUTHKEYS_LINE_BAD_LIST);
}
END_TEST

static char tmpfile_path[] = "/tmp/test-authkeys-map-XXXXXX";

static int make_tmp(void) {
        int fd = mkstemp(tmpfile_path);

        ck_assert_int_ge(fd, 0);
        unlink(tmpfile_path);
        return fd;
}

static long maxrss_kib(void) {
        struct rusage ru;

        ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
        return ru.ru_maxrss;
}

/* A 100 MB line is skipped while reading, never held: the peak grows by far less than it. */
START_TEST(test_huge_line_streamed) {
        _cleanup_free_ char *k1 = key_line(1, "", ""), *head = NULL, *tail = NULL;
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
        _cleanup_close_ int fd = make_tmp();
        const off_t big = 100 * 1024 * 1024;
        Drops drops = {};
        long before;
        int hn, tn;

        hn = asprintf(&head, "ada:%s\nhuge:", k1);
        tn = asprintf(&tail, "\nbob:%s\n", k1);
        ck_assert_int_ge(hn, 0);
        ck_assert_int_ge(tn, 0);
        ck_assert_int_eq(pwrite(fd, head, (size_t) hn, 0), hn);
        ck_assert_int_eq(pwrite(fd, tail, (size_t) tn, hn + big), tn); /* a hole of NUL bytes between */
        before = maxrss_kib();
        ck_assert_int_eq(authkeys_map_build_fd(fd, NULL, record, &drops, &m), 0);
        /* Generous for the sanitizers' shadow memory; holding the line would take 100 MB. */
        ck_assert_int_lt(maxrss_kib() - before, 40 * 1024);
        assert_keys(m, "ada", k1);
        assert_keys(m, "bob", k1);
        ck_assert_ptr_null(keys_of(m, "huge"));
        ck_assert_uint_eq(drops.n, 1);
        ck_assert_int_eq(drops.d[0].line_error, AUTHKEYS_LINE_TOO_LONG);
        ck_assert_uint_eq(drops.d[0].line_no, 2);
}
END_TEST

START_TEST(test_file_size_cap) {
        AuthkeysMapLimits l = authkeys_map_default_limits;
        _cleanup_close_ int fd = make_tmp();
        AuthkeysMap *m = NULL;
        int p[2];
        pid_t pid;

        l.max_file_size = 4096;
        ck_assert_int_eq(ftruncate(fd, 4097), 0);
        ck_assert_int_eq(authkeys_map_build_fd(fd, &l, NULL, NULL, &m), -EFBIG);
        ck_assert_int_eq(authkeys_map_build_mem("", 4097, &l, NULL, NULL, &m), -EFBIG);
        ck_assert_ptr_null(m);
        ck_assert_int_eq(ftruncate(fd, 4096), 0);
        ck_assert_int_eq(authkeys_map_build_fd(fd, &l, NULL, NULL, &m), 0);
        m = authkeys_map_free(m);

        /* A pipe has no size to check up front: the cap applies while reading. */
        ck_assert_int_eq(pipe(p), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                static char zeros[8192];
                close(p[0]);
                (void) !write(p[1], zeros, sizeof(zeros));
                _exit(0);
        }
        close(p[1]);
        ck_assert_int_eq(authkeys_map_build_fd(p[0], &l, NULL, NULL, &m), -EFBIG);
        close(p[0]);
        waitpid(pid, NULL, 0);

        ck_assert_int_eq(authkeys_map_build_file("/nonexistent/sshkey.cache", NULL, NULL, NULL, &m),
                         -ENOENT);
        ck_assert_ptr_null(m);
}
END_TEST

START_TEST(test_user_cap) {
        AuthkeysMapLimits l = authkeys_map_default_limits;
        _cleanup_free_ char *text = malloc(16 * 1000001);
        AuthkeysMap *m = NULL;
        size_t len = 0;

        for (int i = 0; i < 1000000; i++)
                len += (size_t) sprintf(text + len, "u%d:\n", i);
        ck_assert_int_eq(authkeys_map_build_mem(text, len, NULL, NULL, NULL, &m), -E2BIG);
        ck_assert_ptr_null(m);

        l.max_users = 10;
        len = 0;
        for (int i = 0; i < 10; i++)
                len += (size_t) sprintf(text + len, "u%d:\n", i);
        ck_assert_int_eq(authkeys_map_build_mem(text, len, &l, NULL, NULL, &m), 0);
        ck_assert_uint_eq(authkeys_map_stats(m)->users, 10);
        m = authkeys_map_free(m);
        len += (size_t) sprintf(text + len, "u10:\n");
        ck_assert_int_eq(authkeys_map_build_mem(text, len, &l, NULL, NULL, &m), -E2BIG);
}
END_TEST

START_TEST(test_many_users) {
        _cleanup_free_ char *k1 = key_line(1, "", "x");
        _cleanup_free_ char *text = malloc(200 * 20000);
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
        size_t len = 0, n;

        for (int i = 0; i < 20000; i++)
                len += (size_t) sprintf(text + len, "user%d:['%s']\n", i, k1);
        ck_assert_int_eq(authkeys_map_build_mem(text, len, NULL, NULL, NULL, &m), 0);
        ck_assert_uint_eq(authkeys_map_stats(m)->users, 20000);
        for (int i = 0; i < 20000; i += 7) {
                char name[32];
                snprintf(name, sizeof(name), "user%d", i);
                ck_assert_int_ge(authkeys_map_lookup(m, name, &n), 0);
                ck_assert_uint_eq(n, 1);
        }
        ck_assert_int_eq(authkeys_map_lookup(m, "user20000", &n), -ENOENT);
}
END_TEST

START_TEST(test_exact_filter) {
        _cleanup_free_ char *k1 = key_line(1, "no-pty ", "a"), *k2 = key_line(2, "", "b"), *text = NULL;
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
        uint8_t d[AUTHKEYS_DIGEST_SIZE];
        char fp[AUTHKEYS_FINGERPRINT_MAX];
        AuthkeysMatch match;
        AuthkeysKey k;
        size_t n;
        int h;

        ck_assert_int_ge(asprintf(&text, "ada:['%s', '%s']\n", k1, k2), 0);
        m = build(text, NULL, NULL);
        h = authkeys_map_lookup(m, "ada", &n);
        ck_assert_int_ge(h, 0);
        ck_assert_uint_eq(n, 2);

        ck_assert_int_eq(authkeys_key_parse(k2, strlen(k2), &k), AUTHKEYS_OK);
        ck_assert_int_eq(authkeys_key_digest(k2, &k, d), 0);
        authkeys_fingerprint_format(d, fp);
        ck_assert_int_eq(authkeys_match_from_fingerprint(fp, &match), 0);
        ck_assert(!authkeys_map_key_matches(authkeys_map_key(m, h, 0), &match));
        ck_assert(authkeys_map_key_matches(authkeys_map_key(m, h, 1), &match));

        /* %t %k for the first key: the options in front do not matter. */
        ck_assert_int_eq(authkeys_key_parse(k1, strlen(k1), &k), AUTHKEYS_OK);
        k1[k.blob_off + k.blob_len] = 0;
        ck_assert_int_eq(authkeys_match_from_key("ssh-ed25519", k1 + k.blob_off, &match), 0);
        ck_assert(authkeys_map_key_matches(authkeys_map_key(m, h, 0), &match));
        ck_assert(!authkeys_map_key_matches(authkeys_map_key(m, h, 1), &match));

        ck_assert(authkeys_map_key_matches(authkeys_map_key(m, h, 0), NULL));
        ck_assert(authkeys_map_key_matches(authkeys_map_key(m, h, 1), NULL));
}
END_TEST

START_TEST(test_long_name) {
        char text[1024], name[AUTHKEYS_MAP_NAME_MAX + 2];
        _cleanup_(authkeys_map_freep) AuthkeysMap *m = NULL;
        Drops drops = {};
        size_t n;

        memset(name, 'n', sizeof(name) - 1);
        name[sizeof(name) - 1] = 0;
        snprintf(text, sizeof(text), "%s:\n%.*s:\n", name, (int) AUTHKEYS_MAP_NAME_MAX, name);
        m = build(text, NULL, &drops);
        ck_assert_uint_eq(drops.n, 1);
        ck_assert_int_eq(drops.d[0].line_error, AUTHKEYS_LINE_BAD_NAME);
        ck_assert_int_eq(authkeys_map_lookup(m, name, &n), -ENOENT);
        name[AUTHKEYS_MAP_NAME_MAX] = 0;
        ck_assert_int_ge(authkeys_map_lookup(m, name, &n), 0);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("authkeys-map");
        TCase *tc = tcase_create("map");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_forms);
        tcase_add_test(tc, test_empty_file);
        tcase_add_test(tc, test_writer_round_trip);
        tcase_add_test(tc, test_drop_reasons);
        tcase_add_test(tc, test_comment_not_utf8);
        tcase_add_test(tc, test_crlf_and_nul);
        tcase_add_test(tc, test_binary_garbage);
        tcase_add_test(tc, test_truncated);
        tcase_add_test(tc, test_local_accounts);
        tcase_add_test(tc, test_huge_line_streamed);
        tcase_add_test(tc, test_file_size_cap);
        tcase_add_test(tc, test_user_cap);
        tcase_add_test(tc, test_many_users);
        tcase_add_test(tc, test_exact_filter);
        tcase_add_test(tc, test_long_name);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
