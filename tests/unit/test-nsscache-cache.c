/* Unit tests for the nsscache cache writer: format, index, publish.
 *
 * Format and index output is compared byte for byte with golden files
 * derived from nsscache's own expressions (tests/data/nsscache/golden).
 * Publish tests run in a fresh temp directory each and check the on-disk
 * result, including that refused and failed runs leave every old file
 * byte-identical with the same inode, and that no temp file survives.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/strv.h"

#include "../../modules/nsscache/cache/cache-format.h"
#include "../../modules/nsscache/cache/cache-index.h"
#include "../../modules/nsscache/cache/cache-journal.h"
#include "../../modules/nsscache/cache/cache-publish.h"
#include "../lib/nss-golden.h"
#include "../lib/check-run.h"

/* The maps of users and groups, which every source writes (netgroup follows them). */
#define USER_MAPS (NSS_MAP_SSHKEY + 1)

static char *golden_path(const char *name) {
        const char *src = getenv("SUNKD_SRCDIR");
        char *p;

        ck_assert_ptr_nonnull(src);
        ck_assert_int_ge(asprintf(&p, "%s/tests/data/nsscache/golden/%s", src, name), 0);
        return p;
}

static char *read_all(const char *path, size_t *len) {
        char *buf;

        ck_assert_msg(fileio_read(path, 64 << 20, &buf, len) == 0, "cannot read %s", path);
        return buf;
}

static void assert_bytes(const char *what, const char *got, size_t got_len, const char *want,
                         size_t want_len) {
        if (got_len != want_len || memcmp(got ?: "", want, want_len) != 0) {
                size_t i = 0;

                while (i < got_len && i < want_len && got[i] == want[i])
                        i++;
                ck_abort_msg("%s: differs at byte %zu (got %zu bytes, want %zu)\ngot:  %.*s\nwant: %.*s",
                             what, i, got_len, want_len, (int) MIN(got_len - MIN(i, got_len), 80),
                             got ? got + i : "", (int) MIN(want_len - i, 80), want + i);
        }
}

/* ---- format ---- */

static const char *const golden_data[_NSS_MAP_MAX] = {
        [NSS_MAP_PASSWD] = "passwd.cache",
        [NSS_MAP_SHADOW] = "shadow.cache",
        [NSS_MAP_GROUP] = "group.cache",
        [NSS_MAP_SSHKEY] = "sshkey.cache",
};

START_TEST(test_render_golden) {
        NssMaps m;

        ck_assert_int_eq(nss_golden_build(0, &m), 0);
        for (NssMapType t = 0; t < USER_MAPS; t++) {
                _cleanup_free_ char *buf = NULL, *err = NULL, *want = NULL;
                _cleanup_free_ char *gp = golden_path(golden_data[t]);
                size_t len, n, want_len;
                const CacheIndexSpec *specs;
                size_t n_specs;

                ck_assert_int_eq(cache_format_render(&m, t, &buf, &len, &n, &err), 0);
                want = read_all(gp, &want_len);
                assert_bytes(golden_data[t], buf, len, want, want_len);
                ck_assert_uint_eq(n, t == NSS_MAP_GROUP ? 4 : 5); /* sunkt-bob's sshkey line has no keys */

                n_specs = cache_index_specs(t, &specs);
                ck_assert_uint_ge(n_specs, 1);
                for (size_t i = 0; i < n_specs; i++) {
                        _cleanup_free_ char *ix = NULL, *name = NULL, *ip = NULL, *iwant = NULL;
                        size_t ix_len, iwant_len;

                        ck_assert_int_eq(cache_index_build(buf, len, specs[i].field, &ix, &ix_len), 0);
                        ck_assert_int_ge(asprintf(&name, "%s%s", golden_data[t], specs[i].suffix), 0);
                        ip = golden_path(name);
                        iwant = read_all(ip, &iwant_len);
                        assert_bytes(name, ix, ix_len, iwant, iwant_len);
                }
        }
        nss_maps_done(&m);
        ck_assert_uint_eq(m.n_passwd, 0);
        ck_assert_ptr_null(m.passwd);
}
END_TEST

static char *repr(const char *s, int *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len;
        FILE *f = open_memstream(&buf, &len);

        ck_assert_ptr_nonnull(f);
        *ret = cache_format_pyrepr(f, s);
        ck_assert_int_eq(fclose(f), 0);
        return TAKE_PTR(buf);
}

START_TEST(test_pyrepr) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "", "''" },
                { "plain", "'plain'" },
                { "it's", "\"it's\"" },
                { "say \"hi\"", "'say \"hi\"'" },
                { "both ' and \"", "'both \\' and \"'" },
                { "back\\slash", "'back\\\\slash'" },
                { "t\tn\nr\r", "'t\\tn\\nr\\r'" },
                { "esc\x1b"
                  "del\x7f",
                  "'esc\\x1bdel\\x7f'" },
                { "\xc2\xa0nbsp \xc2\xad shy", "'\\xa0nbsp \\xad shy'" },
                { "\xc3\xa9t\xc3\xa9", "'\xc3\xa9t\xc3\xa9'" },
                { "zw\xe2\x80\x8bsp", "'zw\\u200bsp'" },
                { "ls\xe2\x80\xa8", "'ls\\u2028'" },
                { "emoji \xf0\x9f\x98\x80", "'emoji \xf0\x9f\x98\x80'" },
                { "tag \xf3\xa0\x80\x81", "'tag \\U000e0001'" },
                { "max \xf4\x8f\xbf\xbf", "'max \\U0010ffff'" },
                { "pua \xee\x80\x80", "'pua \\ue000'" },
                { "cjk \xe4\xb8\xad", "'cjk \xe4\xb8\xad'" },
        };
        static const char *const bad[] = {
                "\xff",
                "a\xc0\xaf",
                "\xed\xa0\x80",
                "\xe2\x82",
                "\xf4\x90\x80\x80",
                "\x80",
                "\xf8\x88\x80\x80\x80",
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int r;
                _cleanup_free_ char *got = repr(cases[i].in, &r);

                ck_assert_int_eq(r, 0);
                ck_assert_str_eq(got, cases[i].out);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r;
                _cleanup_free_ char *got = repr(bad[i], &r);

                ck_assert_int_eq(r, -EILSEQ);
                ck_assert_str_eq(got, ""); /* nothing half-written */
        }
}
END_TEST

START_TEST(test_pylist) {
        char *const two[] = { "a", "b'c", NULL }, *const none[] = { NULL };
        _cleanup_free_ char *buf = NULL;
        size_t len;
        FILE *f = open_memstream(&buf, &len);

        ck_assert_int_eq(cache_format_pylist(f, two), 0);
        ck_assert_int_eq(cache_format_pylist(f, none), 0);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_str_eq(buf, "['a', \"b'c\"][]");
}
END_TEST

static void one_user(NssMaps *m, NssPasswd *pw, NssGroup *gr, NssSshkey *sk, NssShadow *sp) {
        *m = (NssMaps){ .passwd = pw,
                        .n_passwd = pw ? 1 : 0,
                        .group = gr,
                        .n_group = gr ? 1 : 0,
                        .sshkey = sk,
                        .n_sshkey = sk ? 1 : 0,
                        .shadow = sp,
                        .n_shadow = sp ? 1 : 0 };
}

START_TEST(test_render_hostile) {
        const struct {
                NssMapType t;
                NssPasswd pw;
                NssGroup gr;
                const char *key;
                int r;
                const char *msg;
        } cases[] = {
                { NSS_MAP_PASSWD,
                  { .name = "a:b", .gecos = "" },
                  {},
                  NULL,
                  -EINVAL,
                  "passwd entry 0: 'a:b': field name contains ':'" },
                { NSS_MAP_PASSWD,
                  { .name = "ok", .gecos = "two\nlines" },
                  {},
                  NULL,
                  -EINVAL,
                  "passwd entry 0: 'ok': field gecos contains a newline" },
                { NSS_MAP_PASSWD,
                  { .name = "ok", .shell = "/bin/sh:x" },
                  {},
                  NULL,
                  -EINVAL,
                  "passwd entry 0: 'ok': field shell contains ':'" },
                { NSS_MAP_PASSWD, { .name = "" }, {}, NULL, -EINVAL, "passwd entry 0: field name is empty" },
                { NSS_MAP_PASSWD,
                  { .name = NULL },
                  {},
                  NULL,
                  -EINVAL,
                  "passwd entry 0: field name is empty" },
                { NSS_MAP_GROUP,
                  {},
                  { .name = "g", .members = (char *[]){ "a", "b,c", NULL } },
                  NULL,
                  -EINVAL,
                  "group entry 0: 'g': field members contains ','" },
                { NSS_MAP_GROUP,
                  {},
                  { .name = "g", .members = (char *[]){ "", NULL } },
                  NULL,
                  -EINVAL,
                  "group entry 0: field members is empty" },
                { NSS_MAP_GROUP,
                  {},
                  { .name = "g\n" },
                  NULL,
                  -EINVAL,
                  "group entry 0: 'g\n': field name contains a newline" },
                { NSS_MAP_SSHKEY,
                  {},
                  {},
                  "ssh-ed25519 AAAA \xff",
                  -EILSEQ,
                  "sshkey entry 0: 'u': a key is not valid UTF-8" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                NssPasswd pw = cases[i].pw;
                NssGroup gr = cases[i].gr;
                char *keys[] = { (char *) cases[i].key, NULL };
                NssSshkey sk = { .name = "u", .keys = keys };
                NssMaps m;
                _cleanup_free_ char *buf = NULL, *err = NULL;
                size_t len;

                one_user(&m, &pw, &gr, &sk, NULL);
                ck_assert_int_eq(cache_format_render(&m, cases[i].t, &buf, &len, NULL, &err), cases[i].r);
                ck_assert_ptr_null(buf);
                ck_assert_ptr_nonnull(err);
                ck_assert_str_eq(err, cases[i].msg);
        }
}
END_TEST

START_TEST(test_render_defaults) {
        NssPasswd pw = { .name = "u", .uid = 4294967294u, .gid = 0 };
        NssGroup gr = { .name = "g", .gid = 7 };
        NssShadow sp = {
                .name = "u", .lstchg = 0, .min = -1, .max = 5, .warn = -7, .inact = 1, .expire = 0, .flag = 3
        };
        NssSshkey sk = { .name = "nokeys" };
        NssMaps m;
        static const char *const want[_NSS_MAP_MAX] = {
                [NSS_MAP_PASSWD] = "u:x:4294967294:0:::\n",
                [NSS_MAP_SHADOW] = "u:!!:::5::1::3\n",
                [NSS_MAP_GROUP] = "g:x:7:\n",
                [NSS_MAP_SSHKEY] = "nokeys:\n", /* nsscache writes a user without keys too */
        };

        one_user(&m, &pw, &gr, &sk, &sp);
        for (NssMapType t = 0; t < USER_MAPS; t++) {
                _cleanup_free_ char *buf = NULL;
                size_t len, n;

                ck_assert_int_eq(cache_format_render(&m, t, &buf, &len, &n, NULL), 0);
                ck_assert_str_eq(buf, want[t]);
                ck_assert_uint_eq(len, strlen(want[t]));
                ck_assert_uint_eq(n, 1);
        }
}
END_TEST

/* netgroup(5) as nsscache writes it: the name, then each member after one
 * blank; none, the name alone.  A blank or newline in a field is refused. */
START_TEST(test_render_netgroup) {
        NssNetgroup ng[] = {
                { .name = (char *) "admins",
                  .entries = (char *[]){ (char *) "(,bob,)", (char *) "ops", NULL } },
                { .name = (char *) "empty", .entries = (char *[]){ NULL } },
                { .name = (char *) "bare", .entries = NULL },
        };
        NssMaps m = { .netgroup = ng, .n_netgroup = ELEMENTSOF(ng) };
        _cleanup_free_ char *buf = NULL, *err = NULL;
        size_t len, n;

        ck_assert_int_eq(cache_format_render(&m, NSS_MAP_NETGROUP, &buf, &len, &n, NULL), 0);
        ck_assert_str_eq(buf, "admins (,bob,) ops\nempty\nbare\n");
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(cache_format_check(NSS_MAP_NETGROUP, &(NssNetgroup){ .name = (char *) "a b" }),
                         -EINVAL);
        ck_assert_int_eq(cache_format_check(NSS_MAP_NETGROUP, &(NssNetgroup){ .name = (char *) "" }),
                         -EINVAL);
        ck_assert_int_eq(
                cache_format_check(NSS_MAP_NETGROUP,
                                   &(NssNetgroup){ .name = (char *) "a",
                                                   .entries = (char *[]){ (char *) "(x,\ny,)", NULL } }),
                -EINVAL);
        ng[0].entries[1] = (char *) "o ps";
        ck_assert_int_eq(cache_format_render(&m, NSS_MAP_NETGROUP, &buf, &len, &n, &err), -EINVAL);
        ck_assert_str_eq(err,
                         "netgroup entry 0: 'admins': a member is empty or contains a blank or a newline");
}
END_TEST

START_TEST(test_maps_names) {
        NssMaps m = {};

        for (NssMapType t = 0; t < USER_MAPS; t++)
                ck_assert_int_eq(nss_map_from_string(nss_map_to_string(t)), t);
        ck_assert_int_eq((int) nss_map_from_string("hosts"), -1);
        ck_assert_int_eq((int) nss_map_from_string(NULL), -1);
        ck_assert_ptr_null(nss_map_to_string(_NSS_MAP_MAX));
        ck_assert_int_eq(nss_golden_build(1, &m), 0);
        ck_assert_uint_eq(nss_maps_count(&m, NSS_MAP_PASSWD), 7);
        ck_assert_uint_eq(nss_maps_count(&m, NSS_MAP_GROUP), 4);
        ck_assert_uint_eq(nss_maps_count(&m, NSS_MAP_SSHKEY), 7);
        ck_assert_uint_eq(nss_maps_count(NULL, NSS_MAP_SSHKEY), 0);
        nss_maps_done(&m);
        nss_maps_done(&m);
        nss_maps_done(NULL);
}
END_TEST

/* ---- index ---- */

static void check_index_consistent(const char *data, size_t len, const char *ix, size_t ix_len,
                                   unsigned field) {
        size_t width;
        const char *prev = NULL;

        ck_assert_uint_gt(ix_len, 0);
        width = (size_t) ((const char *) memchr(ix, '\n', ix_len) - ix) + 1;
        ck_assert_uint_eq(ix_len % width, 0);
        for (size_t off = 0; off < ix_len; off += width) {
                const char *rec = ix + off;
                uint64_t o;

                ck_assert_int_eq(rec[width - 1], '\n');
                if (prev)
                        ck_assert_int_lt(strcmp(prev, rec), 0);
                prev = rec;
                ck_assert_int_eq(cache_index_lookup(ix, ix_len, rec, &o), 1);
                ck_assert_uint_lt(o, len);
                ck_assert(o == 0 || data[o - 1] == '\n');
                /* the line at the offset carries this key in the indexed field */
                const char *p = data + o;
                for (unsigned i = 0; i < field; i++)
                        p = strchr(p, ':') + 1;
                ck_assert_int_eq(strncmp(p, rec, strlen(rec)), 0);
                ck_assert(p[strlen(rec)] == ':' || p[strlen(rec)] == '\n');
        }
}

START_TEST(test_index_offsets_utf8) {
        NssMaps m;
        _cleanup_free_ char *data = NULL, *ixn = NULL, *ixu = NULL;
        size_t len, ln, lu;
        uint64_t o;

        ck_assert_int_eq(nss_golden_build(0, &m), 0);
        ck_assert_int_eq(cache_format_render(&m, NSS_MAP_PASSWD, &data, &len, NULL, NULL), 0);
        ck_assert_int_eq(cache_index_build(data, len, 0, &ixn, &ln), 0);
        ck_assert_int_eq(cache_index_build(data, len, 2, &ixu, &lu), 0);
        check_index_consistent(data, len, ixn, ln, 0);
        check_index_consistent(data, len, ixu, lu, 2);

        /* after alice's UTF-8 gecos, byte and character offsets differ: dave is at a byte offset */
        ck_assert_int_eq(cache_index_lookup(ixn, ln, "sunkt-dave", &o), 1);
        ck_assert_int_eq(strncmp(data + o, "sunkt-dave:", 11), 0);
        ck_assert_uint_eq(o, 202);
        ck_assert_int_eq(cache_index_lookup(ixn, ln, "sunkt-zo\xc3\xab", &o), 1);
        ck_assert_int_eq(strncmp(data + o, "sunkt-zo\xc3\xab:", 11), 0);
        ck_assert_int_eq(cache_index_lookup(ixu, lu, "9999", &o), 1);
        ck_assert_int_eq(strncmp(data + o, "sunkt-dave:", 11), 0);
        ck_assert_int_eq(cache_index_lookup(ixn, ln, "sunkt-nobody", &o), 0);
        ck_assert_int_eq(cache_index_lookup(ixn, ln, "", &o), 0);
        nss_maps_done(&m);
}
END_TEST

START_TEST(test_index_duplicates_and_malformed) {
        static const char dup[] = "a:x:5:5::/:/bin/sh\nb:x:5:5::/:/bin/sh\nc:x:6:6::/:/bin/sh\n";
        _cleanup_free_ char *ix = NULL, *ix2 = NULL;
        size_t l, l2;
        uint64_t o;

        ck_assert_int_eq(cache_index_build(dup, strlen(dup), 2, &ix, &l), 0);
        ck_assert_uint_eq(l, 2 * (1 + 2 + 3)); /* two records: "5" and "6", offsets up to 2 digits */
        ck_assert_int_eq(cache_index_lookup(ix, l, "5", &o), 1);
        ck_assert_uint_eq(o, 19); /* the later line wins, as in nsscache's dict */

        ck_assert_int_eq(cache_index_build("a:x\n", 4, 2, &ix2, &l2), -EINVAL);
        ck_assert_int_eq(cache_index_build("a:x:1\0:2\n", 9, 0, &ix2, &l2), -EINVAL);
        ck_assert_int_eq(cache_index_build("", 0, 0, &ix2, &l2), 0);
        ck_assert_uint_eq(l2, 0);
        ck_assert_ptr_null(ix2);
        /* no trailing newline: the last line still counts */
        ck_assert_int_eq(cache_index_build("a:1\nbb:2", 8, 0, &ix2, &l2), 0);
        ck_assert_int_eq(cache_index_lookup(ix2, l2, "bb", &o), 1);
        ck_assert_uint_eq(o, 4);

        ck_assert_int_eq(cache_index_lookup("abc", 3, "a", &o), -EINVAL);
        ck_assert_int_eq(cache_index_lookup("ab\nc", 4, "a", &o), -EINVAL);
        ck_assert_int_eq(cache_index_lookup("ab\n", 3, "ab", &o), -EINVAL);
        ck_assert_int_eq(cache_index_lookup("ab\0x\n", 5, "ab", &o), -EINVAL);
}
END_TEST

START_TEST(test_index_large) {
        enum { N = 20000 };
        NssMaps m = {};
        _cleanup_free_ char *data = NULL, *ix = NULL;
        size_t len, l;

        m.passwd = calloc(N, sizeof(NssPasswd));
        ck_assert_ptr_nonnull(m.passwd);
        for (size_t i = 0; i < N; i++) {
                NssPasswd *p = m.passwd + i;
                ck_assert_int_ge(asprintf(&p->name, "u%05zu\xc3\xa9", (i * 7919) % N), 0);
                ck_assert_int_ge(asprintf(&p->gecos,
                                          "G\xc3\xa9"
                                          "cos %zu",
                                          i),
                                 0);
                p->uid = (uint32_t) (100000 + (i * 7919) % N);
                m.n_passwd++;
        }
        ck_assert_int_eq(cache_format_render(&m, NSS_MAP_PASSWD, &data, &len, NULL, NULL), 0);
        ck_assert_int_eq(cache_index_build(data, len, 0, &ix, &l), 0);
        check_index_consistent(data, len, ix, l, 0);
        free(ix);
        ck_assert_int_eq(cache_index_build(data, len, 2, &ix, &l), 0);
        check_index_consistent(data, len, ix, l, 2);
        nss_maps_done(&m);
}
END_TEST

/* @data fed in pieces of @step bytes gives what cache_index_build() gives:
 * into a file, or -EINVAL for the same data. */
static void check_index_pieces(const char *data, size_t len, unsigned field, size_t step) {
        _cleanup_free_ char *want = NULL, *got = NULL;
        _cleanup_(cache_index_builder_done) CacheIndexBuilder b = { .field = field };
        char path[] = "/tmp/test-nsscache-index-XXXXXX";
        _cleanup_close_ int fd = mkstemp(path);
        size_t want_len;
        uint64_t n;
        StrBuf out = {};
        int r, want_r = cache_index_build(data, len, field, &want, &want_len);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(unlink(path), 0);
        r = 0;
        for (size_t pos = 0; r == 0 && pos < len; pos += step)
                r = cache_index_feed(&b, data + pos, MIN(step, len - pos));
        if (r == 0)
                r = cache_index_finish(&b, fd, &out, &n);
        ck_assert_msg(r == want_r, "field %u, pieces of %zu: %d, want %d", field, step, r, want_r);
        ck_assert_uint_eq(out.len, 0); /* all of it went to the file */
        strbuf_done(&out);
        if (r < 0)
                return;
        ck_assert_uint_eq(n, want_len);
        got = malloc(want_len + 1);
        ck_assert_int_eq(pread(fd, got, want_len + 1, 0), (ssize_t) want_len);
        ck_assert_mem_eq(got, want ?: "", want_len);
}

START_TEST(test_index_pieces) {
#define PIECE(s)                                                                                            \
        { s, sizeof(s) - 1 }
        static const struct {
                const char *s;
                size_t len;
        } data[] = {
                PIECE("a:x:5:5::/:/bin/sh\nbb:x:6:6::/:/bin/sh\na:x:7:7::/:/bin/sh\n"),
                PIECE("a:1\nbb:2"),          /* no trailing newline */
                PIECE("\n\nname::1\n"),      /* empty lines: empty names */
                PIECE("a:x:1:1\nb:x\n"),     /* a line without field 2 */
                PIECE("a:x:1\nb:x:2:\0:\n"), /* a NUL in a later piece */
                PIECE("user\xc3\xa9:x:100:100:G\xc3\xa9"
                      "cos:/home/u:/bin/sh\n"),
        };
#undef PIECE
        _cleanup_free_ char *big = NULL;
        size_t big_len;
        NssMaps m;

        for (size_t i = 0; i < ELEMENTSOF(data); i++)
                for (unsigned field = 0; field <= 2; field += 2)
                        for (size_t step = 1; step <= data[i].len; step++)
                                check_index_pieces(data[i].s, data[i].len, field, step);
        /* a real map with lines longer than a piece, fed as a file is read */
        ck_assert_int_eq(nss_golden_build(0, &m), 0);
        ck_assert_int_eq(cache_format_render(&m, NSS_MAP_SSHKEY, &big, &big_len, NULL, NULL), 0);
        for (size_t step = 1; step < 64; step += 7)
                check_index_pieces(big, big_len, 0, step);
        check_index_pieces(big, big_len, 0, 64 * 1024);
        nss_maps_done(&m);
}
END_TEST

/* ---- publish ---- */

typedef struct Snap {
        char *name;
        char *data;
        size_t len;
        ino_t ino;
        struct timespec mtime;
        mode_t mode;
} Snap;

static size_t snapshot(const char *dir, Snap **ret) {
        DIR *d = opendir(dir);
        struct dirent *de;
        Snap *s = NULL;
        size_t n = 0;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d))) {
                _cleanup_free_ char *p = NULL;
                struct stat st;

                /* Only . and ..: staged files are dot files (.sunkd-*) and must show. */
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                ck_assert_int_ge(asprintf(&p, "%s/%s", dir, de->d_name), 0);
                ck_assert_int_eq(lstat(p, &st), 0);
                s = reallocarray(s, n + 1, sizeof(Snap));
                ck_assert_ptr_nonnull(s);
                s[n] = (Snap){
                        .name = strdup(de->d_name), .ino = st.st_ino, .mtime = st.st_mtim, .mode = st.st_mode
                };
                if (S_ISREG(st.st_mode))
                        s[n].data = read_all(p, &s[n].len);
                n++;
        }
        closedir(d);
        *ret = s;
        return n;
}

static void snap_free(Snap *s, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(s[i].name);
                free(s[i].data);
        }
        free(s);
}

static void assert_unchanged(const char *dir, const Snap *before, size_t n) {
        Snap *after;
        size_t m = snapshot(dir, &after);

        ck_assert_msg(m == n, "%s: %zu files before, %zu after", dir, n, m);
        for (size_t i = 0; i < n; i++) {
                size_t j = 0;

                while (j < m && !streq(after[j].name, before[i].name))
                        j++;
                ck_assert_msg(j < m, "%s vanished", before[i].name);
                ck_assert_msg(after[j].ino == before[i].ino, "%s replaced", before[i].name);
                ck_assert_int_eq(after[j].mode, before[i].mode);
                ck_assert_uint_eq(after[j].len, before[i].len);
                ck_assert(memcmp(after[j].data ?: "", before[i].data ?: "", before[i].len) == 0);
        }
        snap_free(after, m);
}

typedef struct Env {
        char dir[64];
        char ts[80];
        CacheOptions opts;
} Env;

static void env_init(Env *e) {
        strcpy(e->dir, "/tmp/test-nsscache-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(e->dir));
        snprintf(e->ts, sizeof(e->ts), "%s/ts/sub", e->dir);
        cache_options_init(&e->opts);
        e->opts.dir = e->dir;
        e->opts.timestamp_dir = e->ts;
        for (size_t t = 0; t < USER_MAPS; t++)
                e->opts.perms[t] = (CachePerms){ .mode = 0644, .uid = (uid_t) -1, .gid = (gid_t) -1 };
        e->opts.now = 1700000000; /* 2023-11-14T22:13:20Z */
}

static void env_done(Env *e) {
        _cleanup_free_ char *cmd = NULL;

        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", e->dir), 0);
        ck_assert_int_eq(system(cmd), 0);
}

static char *env_file(const Env *e, const char *name) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "%s/%s", e->dir, name), 0);
        return p;
}

static void publish_ok(Env *e, const NssMaps *m, CacheReport *rep) {
        _cleanup_free_ char *err = NULL;
        int r = cache_publish(&e->opts, m, rep, &err);

        ck_assert_msg(r == 0, "cache_publish: %d %s", r, err ?: "");
        ck_assert_ptr_null(err);
}

static const char *const all_files[] = {
        "passwd.cache", "passwd.cache.ixname", "passwd.cache.ixuid", "shadow.cache", "shadow.cache.ixname",
        "group.cache",  "group.cache.ixname",  "group.cache.ixgid",  "sshkey.cache", "sshkey.cache.ixname",
};

/* The automount map: auto.master and the maps it names, each its own file
 * beside it with the same suffix, published together; a name that would
 * leave the directory or a field with a blank is refused. */
START_TEST(test_publish_automount) {
        Env e;
        CacheReport rep;
        _cleanup_free_ char *master = NULL, *home = NULL, *data = NULL, *text = NULL, *stale = NULL;
        _cleanup_free_ char *home_line = NULL, *data_line = NULL;
        NssAutomount am[5];
        NssMaps m = { .automount = am, .n_automount = ELEMENTSOF(am) };
        size_t len;

        env_init(&e);
        for (size_t t = 0; t < _NSS_MAP_MAX; t++)
                e.opts.enabled[t] = t == NSS_MAP_AUTOMOUNT;
        home = env_file(&e, "auto.home.cache");
        data = env_file(&e, "auto.data.cache");
        ck_assert_int_ge(asprintf(&home_line, "/home %s", home), 0);
        am[0] = (NssAutomount){ .map = (char *) "auto.home",
                                .key = (char *) "alice",
                                .options = (char *) "-rw",
                                .location = (char *) "nfs:/home/alice" };
        am[1] = (NssAutomount){ .map = (char *) "auto.data",
                                .key = (char *) "ref",
                                .location = (char *) "nfs:/ref" };
        am[2] = (NssAutomount){ .map = (char *) "auto.home",
                                .key = (char *) "*",
                                .options = (char *) "-rw",
                                .location = (char *) "nfs:/home/&" };
        am[3] = (NssAutomount){ .key = (char *) "/home", .location = home };
        am[4] = (NssAutomount){ .key = (char *) "/data", .location = data };
        publish_ok(&e, &m, &rep);
        ck_assert(rep.map[NSS_MAP_AUTOMOUNT].changed);
        ck_assert_uint_eq(rep.map[NSS_MAP_AUTOMOUNT].entries, 2);
        master = env_file(&e, "auto.master.cache");
        text = read_all(master, &len);
        ck_assert_int_ge(asprintf(&data_line, "%s\n/data %s\n", home_line, data), 0);
        ck_assert_str_eq(text, data_line);
        text = mfree(text);
        text = read_all(home, &len);
        ck_assert_str_eq(text, "alice -rw nfs:/home/alice\n* -rw nfs:/home/&\n");
        text = mfree(text);
        text = read_all(data, &len);
        ck_assert_str_eq(text, "ref nfs:/ref\n");
        text = mfree(text);

        /* the same again: nothing changes; a map's change is published with auto.master */
        publish_ok(&e, &m, &rep);
        ck_assert_uint_eq(rep.n_changed, 0);
        am[1].location = (char *) "nfs:/ref2";
        publish_ok(&e, &m, &rep);
        ck_assert_uint_eq(rep.n_changed, 1);
        text = read_all(data, &len);
        ck_assert_str_eq(text, "ref nfs:/ref2\n");
        text = mfree(text);

        /* a temp file a killed run left for a map's file goes */
        if (geteuid() == 0) {
                stale = env_file(&e, ".sunkd-auto.gone.cache.AbC123");
                ck_assert_int_eq(fileio_write_atomic(stale, "x", 1, 0600, 0, 0), 0);
                publish_ok(&e, &m, &rep);
                ck_assert_int_eq(access(stale, F_OK), -1);
        }

        ck_assert_int_eq(
                cache_format_check(NSS_MAP_AUTOMOUNT, &(NssAutomount){ .map = (char *) "auto.a/../b",
                                                                       .key = (char *) "k",
                                                                       .location = (char *) "l" }),
                -EINVAL);
        ck_assert_int_eq(cache_format_check(NSS_MAP_AUTOMOUNT, &(NssAutomount){ .map = (char *) "auto.x",
                                                                                .key = (char *) "a b",
                                                                                .location = (char *) "l" }),
                         -EINVAL);
        ck_assert_int_eq(cache_format_check(NSS_MAP_AUTOMOUNT, &(NssAutomount){ .key = (char *) "k",
                                                                                .options = (char *) "",
                                                                                .location = (char *) "l" }),
                         -EINVAL);
        env_done(&e);
}
END_TEST

START_TEST(test_publish_golden) {
        Env e;
        NssMaps m;
        CacheReport rep;
        Snap *s;
        size_t n;

        env_init(&e);
        ck_assert_int_eq(nss_golden_build(0, &m), 0);
        publish_ok(&e, &m, &rep);
        ck_assert_uint_eq(rep.n_changed, 4);
        ck_assert_int_eq(rep.timestamp_error, 0);
        for (NssMapType t = 0; t < USER_MAPS; t++) {
                ck_assert(rep.map[t].changed && rep.map[t].enabled && !rep.map[t].had_old);
                ck_assert_uint_eq(rep.map[t].old_entries, 0);
        }
        ck_assert_uint_eq(rep.map[NSS_MAP_PASSWD].entries, 5);
        for (size_t i = 0; i < ELEMENTSOF(all_files); i++) {
                _cleanup_free_ char *p = env_file(&e, all_files[i]), *gp = golden_path(all_files[i]);
                _cleanup_free_ char *got = NULL, *want = NULL;
                size_t gl, wl;
                struct stat st;

                got = read_all(p, &gl);
                want = read_all(gp, &wl);
                assert_bytes(all_files[i], got, gl, want, wl);
                ck_assert_int_eq(stat(p, &st), 0);
                ck_assert_int_eq(st.st_mode & 07777, 0644);
        }
        for (NssMapType t = 0; t < USER_MAPS; t++) {
                _cleanup_free_ char *p = NULL, *c = NULL;
                size_t l;

                ck_assert_int_ge(asprintf(&p, "%s/timestamp-%s-update", e.ts, nss_map_to_string(t)), 0);
                c = read_all(p, &l);
                ck_assert_str_eq(c, "2023-11-14T22:13:20Z\n");
                free(p);
                free(c);
                ck_assert_int_ge(asprintf(&p, "%s/timestamp-%s-modify", e.ts, nss_map_to_string(t)), 0);
                c = read_all(p, &l);
                ck_assert_str_eq(c, "2023-11-14T22:13:20Z\n");
        }
        /* no temp file left anywhere */
        n = snapshot(e.dir, &s);
        ck_assert_uint_eq(n, ELEMENTSOF(all_files) + 1);
        snap_free(s, n);

        nss_maps_done(&m);
        env_done(&e);
}
END_TEST

START_TEST(test_publish_unchanged) {
        Env e;
        NssMaps m;
        CacheReport rep;
        Snap *before;
        size_t n;
        _cleanup_free_ char *up = NULL, *mp = NULL, *c = NULL;
        size_t l;

        env_init(&e);
        ck_assert_int_eq(nss_golden_build(0, &m), 0);
        publish_ok(&e, &m, &rep);
        n = snapshot(e.dir, &before);

        e.opts.now = 1700003600;
        publish_ok(&e, &m, &rep);
        ck_assert_uint_eq(rep.n_changed, 0);
        ck_assert(!rep.map[NSS_MAP_PASSWD].changed && rep.map[NSS_MAP_PASSWD].had_old);
        ck_assert_uint_eq(rep.map[NSS_MAP_PASSWD].old_entries, 5);

        /* cache files: same inode, same mtime */
        for (size_t i = 0; i < ELEMENTSOF(all_files); i++) {
                _cleanup_free_ char *p = env_file(&e, all_files[i]);
                struct stat st;
                size_t j = 0;

                ck_assert_int_eq(stat(p, &st), 0);
                while (!streq(before[j].name, all_files[i]))
                        j++;
                ck_assert_uint_eq(st.st_ino, before[j].ino);
                ck_assert(st.st_mtim.tv_sec == before[j].mtime.tv_sec &&
                          st.st_mtim.tv_nsec == before[j].mtime.tv_nsec);
        }
        /* update moves on, modify stays */
        ck_assert_int_ge(asprintf(&up, "%s/timestamp-passwd-update", e.ts), 0);
        ck_assert_int_ge(asprintf(&mp, "%s/timestamp-passwd-modify", e.ts), 0);
        c = read_all(up, &l);
        ck_assert_str_eq(c, "2023-11-14T23:13:20Z\n");
        free(c);
        c = read_all(mp, &l);
        ck_assert_str_eq(c, "2023-11-14T22:13:20Z\n");

        /* a deleted index makes the map "changed" again, and it is restored */
        {
                _cleanup_free_ char *ixp = env_file(&e, "group.cache.ixgid");
                ck_assert_int_eq(unlink(ixp), 0);
                publish_ok(&e, &m, &rep);
                ck_assert_uint_eq(rep.n_changed, 1);
                ck_assert(rep.map[NSS_MAP_GROUP].changed);
                ck_assert_int_eq(access(ixp, F_OK), 0);
        }
        /* so does a mode change */
        {
                _cleanup_free_ char *sp = env_file(&e, "shadow.cache");
                ck_assert_int_eq(chmod(sp, 0600), 0);
                publish_ok(&e, &m, &rep);
                ck_assert_uint_eq(rep.n_changed, 1);
                ck_assert(rep.map[NSS_MAP_SHADOW].changed);
        }

        snap_free(before, n);
        nss_maps_done(&m);
        env_done(&e);
}
END_TEST

static void expect_refused(Env *e, const NssMaps *m, const char *reason) {
        _cleanup_free_ char *err = NULL;
        Snap *before;
        size_t n = snapshot(e->dir, &before);
        Snap *tsb;
        size_t tn = snapshot(e->ts, &tsb);
        CacheReport rep;

        ck_assert_int_eq(cache_publish(&e->opts, m, &rep, &err), CACHE_PUBLISH_REFUSED);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(strstr(err, reason), "error '%s' lacks '%s'", err, reason);
        ck_assert_uint_eq(rep.n_changed, 0);
        assert_unchanged(e->dir, before, n);
        assert_unchanged(e->ts, tsb, tn);
        snap_free(before, n);
        snap_free(tsb, tn);
}

START_TEST(test_publish_guards) {
        Env e;
        NssMaps m0, m1;
        CacheReport rep;
        size_t saved;

        env_init(&e);
        ck_assert_int_eq(nss_golden_build(0, &m0), 0);
        ck_assert_int_eq(nss_golden_build(1, &m1), 0);
        publish_ok(&e, &m1, &rep);

        /* empty */
        saved = m0.n_group;
        m0.n_group = 0;
        expect_refused(&e, &m0, "group: the new map is empty");
        m0.n_group = saved;

        /* fewer than min_entries */
        e.opts.min_entries[NSS_MAP_PASSWD] = 6;
        expect_refused(&e, &m0, "passwd: 5 entries, fewer than the minimum of 6");
        e.opts.min_entries[NSS_MAP_PASSWD] = 0;

        /* shrink: 7 -> 2 users is 71% */
        saved = m0.n_passwd;
        m0.n_passwd = m0.n_shadow = 2;
        expect_refused(&e, &m0, "passwd: would shrink from 7 to 2 entries, more than 50%");
        /* several refusals are reported together */
        {
                _cleanup_free_ char *err = NULL;
                ck_assert_int_eq(cache_publish(&e.opts, &m0, NULL, &err), CACHE_PUBLISH_REFUSED);
                ck_assert_str_eq(err, "passwd: would shrink from 7 to 2 entries, more than 50%; "
                                      "shadow: would shrink from 7 to 2 entries, more than 50%");
        }

        /* a larger allowance lets it through */
        e.opts.max_shrink_pct = 80;
        publish_ok(&e, &m0, &rep);
        ck_assert_uint_eq(rep.map[NSS_MAP_PASSWD].old_entries, 7);
        ck_assert_uint_eq(rep.map[NSS_MAP_PASSWD].entries, 2);
        m0.n_passwd = m0.n_shadow = saved;
        nss_maps_done(&m0);
        nss_maps_done(&m1);
        env_done(&e);
}
END_TEST

/* A fresh node in a cluster with users but no groups and no SSH keys yet:
 * empty group and sshkey maps are fine when there was nothing before. */
START_TEST(test_publish_fresh_empty_optional_maps) {
        Env e;
        NssMaps m;
        CacheReport rep;
        size_t ng, nk;

        env_init(&e);
        ck_assert_int_eq(nss_golden_build(1, &m), 0);
        ng = m.n_group;
        nk = m.n_sshkey;
        m.n_group = m.n_sshkey = 0;
        e.opts.min_entries[NSS_MAP_PASSWD] = e.opts.min_entries[NSS_MAP_SHADOW] = 1;
        e.opts.min_entries[NSS_MAP_GROUP] = e.opts.min_entries[NSS_MAP_SSHKEY] = 1;
        publish_ok(&e, &m, &rep);
        ck_assert_uint_eq(rep.map[NSS_MAP_GROUP].entries, 0);
        ck_assert_uint_eq(rep.map[NSS_MAP_SSHKEY].entries, 0);

        /* once they had entries, emptying them is refused again */
        m.n_group = ng;
        m.n_sshkey = nk;
        publish_ok(&e, &m, &rep);
        m.n_sshkey = 0;
        expect_refused(&e, &m, "sshkey: the new map is empty");
        m.n_sshkey = nk;
        nss_maps_done(&m);
        env_done(&e);
}
END_TEST

START_TEST(test_publish_forced) {
        Env e;
        NssMaps m;
        CacheReport rep;
        size_t saved;
        _cleanup_free_ char *pp = NULL, *ixn = NULL, *ixu = NULL, *c = NULL;
        size_t l;

        env_init(&e);
        ck_assert_int_eq(nss_golden_build(0, &m), 0);
        publish_ok(&e, &m, &rep);

        saved = m.n_passwd;
        m.n_passwd = 0;
        expect_refused(&e, &m, "passwd: the new map is empty");
        e.opts.force = true;
        publish_ok(&e, &m, &rep);
        ck_assert_uint_eq(rep.n_changed, 1);
        pp = env_file(&e, "passwd.cache");
        ixn = env_file(&e, "passwd.cache.ixname");
        ixu = env_file(&e, "passwd.cache.ixuid");
        c = read_all(pp, &l);
        ck_assert_uint_eq(l, 0);
        /* an empty map has no index: libnss-cache scans the (empty) file */
        ck_assert_int_eq(access(ixn, F_OK), -1);
        ck_assert_int_eq(access(ixu, F_OK), -1);

        /* back to normal, without force: growing from 0 is fine */
        e.opts.force = false;
        m.n_passwd = saved;
        publish_ok(&e, &m, &rep);
        ck_assert_int_eq(access(ixn, F_OK), 0);
        nss_maps_done(&m);
        env_done(&e);
}
END_TEST

/* @fsize: a file size limit in force only during the publish (Check itself writes files) */
static void expect_failure_unchanged(Env *e, const NssMaps *m, int want_r, const char *reason,
                                     const struct rlimit *fsize) {
        struct rlimit saved;
        _cleanup_free_ char *err = NULL;
        Snap *before;
        size_t n = snapshot(e->dir, &before);
        Snap *tsb;
        size_t tn = snapshot(e->ts, &tsb);
        int r;

        if (fsize) {
                ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
                ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, fsize), 0);
        }
        r = cache_publish(&e->opts, m, NULL, &err);
        if (fsize)
                ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &saved), 0);
        ck_assert_msg(r == want_r, "got %d (%s), want %d", r, err ?: "", want_r);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(strstr(err, reason), "error '%s' lacks '%s'", err, reason);
        assert_unchanged(e->dir, before, n); /* same files: no temp left behind either */
        assert_unchanged(e->ts, tsb, tn);
        snap_free(before, n);
        snap_free(tsb, tn);
}

START_TEST(test_publish_target_is_directory) {
        Env e;
        NssMaps m0, m1;
        CacheReport rep;
        _cleanup_free_ char *ix = NULL;

        env_init(&e);
        ck_assert_int_eq(nss_golden_build(0, &m0), 0);
        ck_assert_int_eq(nss_golden_build(1, &m1), 0);
        publish_ok(&e, &m0, &rep);
        ix = env_file(&e, "sshkey.cache.ixname");
        ck_assert_int_eq(unlink(ix), 0);
        ck_assert_int_eq(mkdir(ix, 0755), 0);
        expect_failure_unchanged(&e, &m1, -EISDIR, "sshkey.cache.ixname: Is a directory", NULL);
        nss_maps_done(&m0);
        nss_maps_done(&m1);
        env_done(&e);
}
END_TEST

/* A 4 KiB key for @m's first sshkey entry: a map over a 1000-byte file size limit. */
static void add_big_key(NssMaps *m) {
        char big[4097];
        char **keys = m->sshkey[0].keys;

        memset(big, 'A', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        ck_assert_int_eq(strv_extend(&keys, big), 0);
        m->sshkey[0].keys = keys;
}

START_TEST(test_publish_staging_fails) {
        Env e;
        NssMaps m0, m1;
        CacheReport rep;
        struct rlimit rl = { 1000, RLIM_INFINITY };

        env_init(&e);
        ck_assert_int_eq(nss_golden_build(0, &m0), 0);
        ck_assert_int_eq(nss_golden_build(1, &m1), 0);
        publish_ok(&e, &m0, &rep);

        /* the last map staged (sshkey) outgrows the file size limit; passwd and
         * shadow are staged before it fails and must be cleaned up */
        add_big_key(&m1);

        signal(SIGXFSZ, SIG_IGN);
        expect_failure_unchanged(&e, &m1, -EFBIG, "sshkey.cache: staging failed", &rl);
        nss_maps_done(&m0);
        nss_maps_done(&m1);
        env_done(&e);
}
END_TEST

/* @m's maps rendered entry by entry into temp files beside their targets,
 * written every @chunk bytes, each at most @max bytes (0: the default). */
static void spill_maps(const Env *e, const NssMaps *m, size_t chunk, uint64_t max,
                       CacheFormatted f[static _NSS_MAP_MAX]) {
        static const size_t sizes[_NSS_MAP_MAX] = {
                [NSS_MAP_PASSWD] = sizeof(NssPasswd),
                [NSS_MAP_SHADOW] = sizeof(NssShadow),
                [NSS_MAP_GROUP] = sizeof(NssGroup),
                [NSS_MAP_SSHKEY] = sizeof(NssSshkey),
        };
        const void *arrays[_NSS_MAP_MAX] = { m->passwd, m->shadow, m->group, m->sshkey };
        const size_t counts[_NSS_MAP_MAX] = { m->n_passwd, m->n_shadow, m->n_group, m->n_sshkey };

        for (NssMapType t = 0; t < USER_MAPS; t++) {
                cache_formatted_init(f + t, t);
                ck_assert_int_eq(cache_publish_spill(&e->opts, f + t), 0);
                ck_assert_int_eq(cache_publish_spill(&e->opts, f + t), -EBUSY);
                f[t].chunk = chunk;
                if (max > 0)
                        f[t].max = max;
                for (size_t i = 0; i < counts[t]; i++)
                        ck_assert_int_eq(cache_formatted_add(f + t, (const char *) arrays[t] + i * sizes[t]),
                                         0);
        }
}

static size_t count_temps(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                n += strncmp(de->d_name, ".sunkd-", 7) == 0;
        closedir(d);
        return n;
}

/* Maps rendered into temp files as a refresh renders them publish exactly
 * what the same maps published from memory do; an unchanged or refused
 * publish, or one never made, leaves no temp file behind. */
START_TEST(test_publish_spilled) {
        Env a, b;
        NssMaps m0, m1, empty = {};
        CacheReport rep;
        Snap *sa, *sb, *before;
        size_t na, nb, n;

        env_init(&a);
        env_init(&b);
        ck_assert_int_eq(nss_golden_build(0, &m0), 0);
        ck_assert_int_eq(nss_golden_build(1, &m1), 0);
        publish_ok(&a, &m1, &rep);
        for (size_t chunk = 1; chunk <= CACHE_FORMATTED_CHUNK; chunk *= 64) {
                CacheFormatted f[_NSS_MAP_MAX];
                _cleanup_free_ char *err = NULL;

                publish_ok(&a, &m0, &rep);
                spill_maps(&b, &m0, chunk, 0, f);
                ck_assert_uint_eq(count_temps(b.dir), 4);
                ck_assert_int_eq(cache_publish_formatted(&b.opts, f, &rep, &err), 0);
                ck_assert_ptr_null(err);
                for (NssMapType t = 0; t < USER_MAPS; t++)
                        cache_formatted_done(f + t);
                ck_assert_uint_eq(count_temps(b.dir), 0);
                na = snapshot(a.dir, &sa);
                nb = snapshot(b.dir, &sb);
                ck_assert_uint_eq(na, nb);
                for (size_t i = 0; i < na; i++) {
                        size_t j = 0;

                        while (j < nb && !streq(sb[j].name, sa[i].name))
                                j++;
                        ck_assert_msg(j < nb, "%s missing", sa[i].name);
                        ck_assert_uint_eq(sb[j].len, sa[i].len);
                        ck_assert(memcmp(sb[j].data ?: "", sa[i].data ?: "", sa[i].len) == 0);
                        ck_assert_int_eq(sb[j].mode, sa[i].mode);
                }
                snap_free(sa, na);
                snap_free(sb, nb);

                /* unchanged: nothing replaced, the temps are gone */
                n = snapshot(b.dir, &before);
                spill_maps(&b, &m0, chunk, 0, f);
                ck_assert_int_eq(cache_publish_formatted(&b.opts, f, &rep, &err), 0);
                ck_assert_uint_eq(rep.n_changed, 0);
                for (NssMapType t = 0; t < USER_MAPS; t++)
                        cache_formatted_done(f + t);
                assert_unchanged(b.dir, before, n);

                /* refused (passwd would be empty): nothing replaced, no temp left */
                spill_maps(&b, &empty, chunk, 0, f);
                ck_assert_int_eq(cache_publish_formatted(&b.opts, f, &rep, &err), CACHE_PUBLISH_REFUSED);
                err = mfree(err);
                for (NssMapType t = 0; t < USER_MAPS; t++)
                        cache_formatted_done(f + t);
                assert_unchanged(b.dir, before, n);

                /* rendered, never published */
                spill_maps(&b, &m1, chunk, 0, f);
                for (NssMapType t = 0; t < USER_MAPS; t++)
                        cache_formatted_done(f + t);
                assert_unchanged(b.dir, before, n);
                snap_free(before, n);

                /* the other generation, for the next round to change back from */
                publish_ok(&a, &m1, &rep);
                publish_ok(&b, &m1, &rep);
        }
        nss_maps_done(&m0);
        nss_maps_done(&m1);
        env_done(&a);
        env_done(&b);
}
END_TEST

/* A spilled map whose file cannot be written fails as staging does. */
START_TEST(test_publish_spill_write_fails) {
        Env e;
        NssMaps m0, m1;
        CacheFormatted f[_NSS_MAP_MAX];
        struct rlimit saved, rl = { 1000, RLIM_INFINITY };
        _cleanup_free_ char *err = NULL;
        Snap *before;
        size_t n;

        env_init(&e);
        ck_assert_int_eq(nss_golden_build(0, &m0), 0);
        ck_assert_int_eq(nss_golden_build(1, &m1), 0);
        publish_ok(&e, &m0, NULL);
        n = snapshot(e.dir, &before);
        add_big_key(&m1);

        signal(SIGXFSZ, SIG_IGN);
        ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
        ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
        spill_maps(&e, &m1, 1, 0, f);
        ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &saved), 0);
        ck_assert_int_eq(f[NSS_MAP_SSHKEY].error, -EFBIG);
        ck_assert_int_eq(cache_publish_formatted(&e.opts, f, NULL, &err), -EFBIG);
        ck_assert_msg(err && strstr(err, "sshkey.cache: staging failed: File too large"), "%s", err ?: "");
        for (NssMapType t = 0; t < USER_MAPS; t++)
                cache_formatted_done(f + t);
        assert_unchanged(e.dir, before, n);
        snap_free(before, n);
        nss_maps_done(&m0);
        nss_maps_done(&m1);
        env_done(&e);
}
END_TEST

/* A map past its ceiling fails the publish, whatever it holds: nothing is
 * replaced and no temp file stays.  A map at the ceiling is published. */
START_TEST(test_publish_spill_too_large) {
        Env e;
        NssMaps m0, m1;
        CacheFormatted f[_NSS_MAP_MAX];
        _cleanup_free_ char *err = NULL, *want = NULL;
        size_t len = 0;
        Snap *before;
        size_t n;

        env_init(&e);
        ck_assert_int_eq(nss_golden_build(0, &m0), 0);
        ck_assert_int_eq(nss_golden_build(1, &m1), 0);
        publish_ok(&e, &m0, NULL);
        n = snapshot(e.dir, &before);
        for (NssMapType t = 0; t < USER_MAPS; t++) {
                _cleanup_free_ char *text = NULL;
                size_t l;

                ck_assert_int_eq(cache_format_render(&m1, t, &text, &l, NULL, NULL), 0);
                ck_assert_uint_gt(l, 100);
                len = MAX(len, l);
        }

        spill_maps(&e, &m1, 16, 100, f);
        ck_assert_int_eq(f[NSS_MAP_SSHKEY].error, -EFBIG);
        ck_assert_int_eq(cache_publish_formatted(&e.opts, f, NULL, &err), -EFBIG);
        ck_assert_int_ge(asprintf(&want, "%s: the map would be larger than 100 bytes",
                                  nss_map_to_string(NSS_MAP_PASSWD)),
                         0);
        ck_assert_msg(err && strstr(err, want), "%s", err ?: "");
        err = mfree(err);
        for (NssMapType t = 0; t < USER_MAPS; t++)
                cache_formatted_done(f + t);
        assert_unchanged(e.dir, before, n);

        /* one byte short for the largest map, then the largest exactly at the ceiling */
        spill_maps(&e, &m1, 16, len - 1, f);
        ck_assert_int_eq(cache_publish_formatted(&e.opts, f, NULL, &err), -EFBIG);
        err = mfree(err);
        for (NssMapType t = 0; t < USER_MAPS; t++)
                cache_formatted_done(f + t);
        assert_unchanged(e.dir, before, n);
        snap_free(before, n);
        spill_maps(&e, &m1, 16, len, f);
        ck_assert_int_eq(cache_publish_formatted(&e.opts, f, NULL, &err), 0);
        for (NssMapType t = 0; t < USER_MAPS; t++)
                cache_formatted_done(f + t);
        ck_assert_uint_eq(count_temps(e.dir), 0);
        nss_maps_done(&m0);
        nss_maps_done(&m1);
        env_done(&e);
}
END_TEST

START_TEST(test_publish_rendering_error) {
        Env e;
        NssMaps m;
        CacheReport rep;
        char *bad;

        env_init(&e);
        ck_assert_int_eq(nss_golden_build(0, &m), 0);
        publish_ok(&e, &m, &rep);
        bad = strdup("evil:gecos");
        free(m.passwd[3].gecos);
        m.passwd[3].gecos = bad;
        e.opts.force = true; /* force skips guards, never validation */
        expect_failure_unchanged(&e, &m, -EINVAL, "passwd entry 3: 'sunkt-dave': field gecos contains ':'",
                                 NULL);
        nss_maps_done(&m);
        env_done(&e);
}
END_TEST

START_TEST(test_publish_perms_and_subset) {
        Env e;
        NssMaps m;
        CacheReport rep;
        _cleanup_free_ char *compat = NULL, *shadow_compat = NULL;
        struct stat st;
        static const struct {
                const char *name;
                mode_t mode;
        } want[] = {
                { "shadow.cache", 0640 },
                { "shadow.cache.ixname", 0640 },
                { "sshkey.cache", 0444 },
                { "sshkey.cache.ixname", 0644 },
        };

        env_init(&e);
        compat = env_file(&e, "compat");
        ck_assert_int_eq(mkdir(compat, 0755), 0);
        ck_assert_int_ge(asprintf(&shadow_compat, "%s/shadow", compat), 0);
        ck_assert_int_eq(fileio_write_atomic(shadow_compat, "", 0, 0640, 0, 42), 0);
        cache_options_init(&e.opts);
        e.opts.dir = e.dir;
        e.opts.compat_dir = compat;
        e.opts.enabled[NSS_MAP_PASSWD] = e.opts.enabled[NSS_MAP_GROUP] = false;
        ck_assert_int_eq(nss_golden_build(0, &m), 0);
        publish_ok(&e, &m, &rep);
        ck_assert_uint_eq(rep.n_changed, 2);
        ck_assert(!rep.map[NSS_MAP_PASSWD].enabled);

        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                _cleanup_free_ char *p = env_file(&e, want[i].name);
                ck_assert_int_eq(stat(p, &st), 0);
                ck_assert_msg((st.st_mode & 07777) == want[i].mode, "%s: mode %o", want[i].name,
                              st.st_mode & 07777);
                if (strncmp(want[i].name, "shadow", 6) == 0)
                        ck_assert_uint_eq(st.st_gid, 42);
        }
        {
                _cleanup_free_ char *p = env_file(&e, "passwd.cache");
                ck_assert_int_eq(access(p, F_OK), -1);
        }
        /* same again: unchanged with the derived permissions too */
        publish_ok(&e, &m, &rep);
        ck_assert_uint_eq(rep.n_changed, 0);
        nss_maps_done(&m);
        env_done(&e);
}
END_TEST

START_TEST(test_count_entries) {
        Env e;
        _cleanup_free_ char *p = NULL;
        size_t n = 99;

        env_init(&e);
        p = env_file(&e, "f");
        ck_assert_int_eq(cache_publish_count_entries(p, &n), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_int_eq(fileio_write_atomic(p, "a\nb\nc", 5, 0644, (uid_t) -1, (gid_t) -1), 0);
        ck_assert_int_eq(cache_publish_count_entries(p, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(fileio_write_atomic(p, "a\nb\n", 4, 0644, (uid_t) -1, (gid_t) -1), 0);
        ck_assert_int_eq(cache_publish_count_entries(p, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(cache_publish_count_entries(e.dir, &n), -EISDIR);
        env_done(&e);
}
END_TEST

/* ---- the publish journal ---------------------------------------------- */

START_TEST(test_journal_names) {
        static const char *const staged[] = { ".sunkd-passwd.cache.a1B2c3", ".sunkd-x.ABCDEF",
                                              ".sunkd-group.cache.ixgid.000000" };
        static const char *const not_staged[] = { "",
                                                  ".sunkd-",
                                                  ".sunkd-.abcdef",
                                                  ".sunkd-passwd.cache",
                                                  "passwd.cache.abcdef",
                                                  ".sunkd-passwd.cache.abcdefg",
                                                  ".sunkd-a/b.abcdef",
                                                  "x.sunkd-passwd.cache.abcdef" };
        static const char *const targets[] = { "passwd.cache", "x", "group.cache.ixgid" };

        for (size_t i = 0; i < ELEMENTSOF(staged); i++) {
                _cleanup_free_ char *t = NULL;

                ck_assert_msg(cache_journal_is_staged(staged[i]), "%s", staged[i]);
                ck_assert_int_eq(cache_journal_target(staged[i], &t), 0);
                ck_assert_str_eq(t, targets[i]);
        }
        for (size_t i = 0; i < ELEMENTSOF(not_staged); i++) {
                char *t = NULL;

                ck_assert_msg(!cache_journal_is_staged(not_staged[i]), "%s", not_staged[i]);
                ck_assert_int_eq(cache_journal_target(not_staged[i], &t), -EINVAL);
                ck_assert_ptr_null(t);
        }
}
END_TEST

START_TEST(test_journal_add_write_read) {
        _cleanup_free_ char *path = NULL;
        CacheJournal j = {}, back = {};
        Env e;

        env_init(&e);
        path = env_file(&e, "journal");
        j.dir = strdup("/etc/with space");
        ck_assert_int_eq(cache_journal_add(&j, CACHE_JOURNAL_INDEX, ".sunkd-passwd.cache.ixname.abcdef"),
                         -EINVAL);
        ck_assert_int_eq(cache_journal_add(&j, CACHE_JOURNAL_DATA, "passwd.cache"), -EINVAL);
        ck_assert_int_eq(cache_journal_add(&j, CACHE_JOURNAL_DATA, ".sunkd-../passwd.abcdef"), -EINVAL);
        ck_assert_int_eq(cache_journal_add(&j, CACHE_JOURNAL_DATA, ".sunkd-pass\nwd.abcdef"), -EINVAL);
        ck_assert_int_eq(cache_journal_add(&j, 7, ".sunkd-passwd.abcdef"), -EINVAL);
        ck_assert_int_eq(cache_journal_write(&j, path), -EINVAL); /* nothing to do */
        ck_assert_int_eq(cache_journal_add(&j, CACHE_JOURNAL_DATA, ".sunkd-passwd cache.abcdef"), 0);
        ck_assert_int_eq(cache_journal_add(&j, CACHE_JOURNAL_INDEX, ".sunkd-passwd cache.ixname.abcdef"), 0);
        ck_assert_int_eq(cache_journal_add(&j, CACHE_JOURNAL_DROP, "passwd cache.ixuid"), 0);
        while (j.n < CACHE_JOURNAL_MAX)
                ck_assert_int_eq(cache_journal_add(&j, CACHE_JOURNAL_DROP, "x"), 0);
        ck_assert_int_eq(cache_journal_add(&j, CACHE_JOURNAL_DROP, "x"), -E2BIG);

        ck_assert_int_eq(cache_journal_write(&j, path), 0);
        ck_assert_int_eq(cache_journal_read(path, &back), 0);
        ck_assert_str_eq(back.dir, j.dir);
        ck_assert_uint_eq(back.n, j.n);
        for (size_t i = 0; i < j.n; i++) {
                ck_assert_int_eq(back.entry[i].kind, j.entry[i].kind);
                ck_assert_str_eq(back.entry[i].name, j.entry[i].name);
        }
        cache_journal_done(&back);
        cache_journal_done(&j);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(cache_journal_read(path, &back), -ENOENT);
        env_done(&e);
}
END_TEST

START_TEST(test_journal_read_malformed) {
        static const char *const bad[] = {
                "",
                "sunkd-publish-journal 1\n",
                "sunkd-publish-journal 1\ndir /x\nend\n",
                "sunkd-publish-journal 1\ndir x\ndata .sunkd-a.abcdef\nend\n",
                "sunkd-publish-journal 1\ndir /x\ndata .sunkd-a.abcdef\n",
                "sunkd-publish-journal 1\ndir /x\ndata .sunkd-a.abcdef\nend\nend\n",
                "sunkd-publish-journal 1\ndir /x\nrename .sunkd-a.abcdef\nend\n",
                "sunkd-publish-journal 1\ndir /x\ndata  .sunkd-a.abcdef\nend\n",
                "sunkd-publish-journal 1\ndir /x\ndrop ..\nend\n",
                "sunkd-publish-journal 1\ndir /x\ndata .sunkd-a.abcdef\0\nend\n",
                "SUNKD-PUBLISH-JOURNAL 1\ndir /x\ndata .sunkd-a.abcdef\nend\n",
        };
        _cleanup_free_ char *path = NULL, *big = NULL;
        CacheJournal j = {};
        Env e;

        env_init(&e);
        path = env_file(&e, "journal");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                /* the one with a NUL is written whole */
                size_t len =
                        i == 9 ? sizeof("sunkd-publish-journal 1\ndir /x\ndata .sunkd-a.abcdef\0\nend\n") - 1
                               : strlen(bad[i]);
                ck_assert_int_eq(fileio_write_atomic(path, bad[i], len, 0600, (uid_t) -1, (gid_t) -1), 0);
                ck_assert_msg(cache_journal_read(path, &j) == -EBADMSG, "accepted journal %zu", i);
                ck_assert_ptr_null(j.dir);
        }
        big = malloc(1 << 20);
        ck_assert_ptr_nonnull(big);
        memset(big, 'a', 1 << 20);
        ck_assert_int_eq(fileio_write_atomic(path, big, 1 << 20, 0600, (uid_t) -1, (gid_t) -1), 0);
        ck_assert_int_eq(cache_journal_read(path, &j), -EFBIG);
        env_done(&e);
}
END_TEST

static int fail_unlink_index(const char *step, const char *path) {
        (void) path;
        return streq(step, "unlink-index") ? -EROFS : 0;
}

/* A step that fails for good leaves the journal; recovery then completes
 * the publish, and applying the journal again changes nothing. */
START_TEST(test_journal_publish_failure_recovered) {
        _cleanup_free_ char *state = NULL, *jpath = NULL, *err = NULL, *err2 = NULL;
        NssMaps m0, m1;
        CacheReport rep;
        CacheJournal j = {};
        bool finished;
        Env e;
        Snap *s;
        size_t n;

        env_init(&e);
        state = env_file(&e, "state");
        ck_assert_int_eq(mkdir(state, 0700), 0);
        ck_assert_int_ge(asprintf(&jpath, "%s/" CACHE_JOURNAL_FILE, state), 0);
        e.opts.state_dir = state;
        ck_assert_int_eq(nss_golden_build(0, &m0), 0);
        ck_assert_int_eq(nss_golden_build(1, &m1), 0);
        publish_ok(&e, &m0, &rep);
        ck_assert(!rep.recovered && !rep.journal_pending);

        cache_publish_test_hook = fail_unlink_index;
        ck_assert_int_eq(cache_publish(&e.opts, &m1, &rep, &err), -EROFS);
        cache_publish_test_hook = NULL;
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(strstr(err, "/passwd.cache.ixname: unlink-index failed: Read-only file system"), "%s",
                      err);
        ck_assert(rep.journal_pending);
        ck_assert_int_eq(access(jpath, F_OK), 0);
        ck_assert_int_eq(cache_journal_read(jpath, &j), 0);

        ck_assert_int_eq(cache_publish_recover(state, &finished, &err2), 0);
        ck_assert(finished);
        ck_assert_int_eq(access(jpath, F_OK), -1);
        n = snapshot(e.dir, &s); /* the maps, the timestamp dir and the state dir; no temp */
        ck_assert_uint_eq(n, ELEMENTSOF(all_files) + 2);
        snap_free(s, n);
        /* idempotent: the journal once more changes nothing */
        ck_assert_int_eq(cache_journal_apply(&j, NULL), 0);
        cache_journal_done(&j);
        publish_ok(&e, &m1, &rep);
        ck_assert_uint_eq(rep.n_changed, 0); /* the recovered maps are variant 1's */
        ck_assert_int_eq(cache_publish_recover(state, &finished, NULL), 0);
        ck_assert(!finished);

        nss_maps_done(&m0);
        nss_maps_done(&m1);
        env_done(&e);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("nsscache-cache");
        TCase *tc = tcase_create("format");

        tcase_add_test(tc, test_render_golden);
        tcase_add_test(tc, test_pyrepr);
        tcase_add_test(tc, test_pylist);
        tcase_add_test(tc, test_render_hostile);
        tcase_add_test(tc, test_render_defaults);
        tcase_add_test(tc, test_maps_names);
        tcase_add_test(tc, test_render_netgroup);
        tcase_add_test(tc, test_publish_automount);
        suite_add_tcase(s, tc);

        tc = tcase_create("index");
        tcase_add_test(tc, test_index_offsets_utf8);
        tcase_add_test(tc, test_index_duplicates_and_malformed);
        tcase_add_test(tc, test_index_large);
        tcase_add_test(tc, test_index_pieces);
        tcase_set_timeout(tc, 120);
        suite_add_tcase(s, tc);

        tc = tcase_create("publish");
        tcase_add_test(tc, test_publish_golden);
        tcase_add_test(tc, test_publish_unchanged);
        tcase_add_test(tc, test_publish_guards);
        tcase_add_test(tc, test_publish_fresh_empty_optional_maps);
        tcase_add_test(tc, test_publish_forced);
        tcase_add_test(tc, test_publish_target_is_directory);
        tcase_add_test(tc, test_publish_staging_fails);
        tcase_add_test(tc, test_publish_rendering_error);
        tcase_add_test(tc, test_publish_spilled);
        tcase_add_test(tc, test_publish_spill_write_fails);
        tcase_add_test(tc, test_publish_spill_too_large);
        tcase_add_test(tc, test_publish_perms_and_subset);
        tcase_add_test(tc, test_count_entries);
        suite_add_tcase(s, tc);

        tc = tcase_create("journal");
        tcase_add_test(tc, test_journal_names);
        tcase_add_test(tc, test_journal_add_write_read);
        tcase_add_test(tc, test_journal_read_malformed);
        tcase_add_test(tc, test_journal_publish_failure_recovered);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
