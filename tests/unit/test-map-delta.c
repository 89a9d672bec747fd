/* Map deltas: every delta made gives back the new map; hostile deltas fail cleanly. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules/nsscache/fleet/map-delta.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "../lib/check-run.h"

#define MAX (64u << 20)

/* make(@a, @b), applied to @a, must be @b; the delta's size is returned. */
static size_t round_trip(const char *a, const char *b) {
        _cleanup_free_ char *delta = NULL, *back = NULL, *err = NULL;
        size_t dlen, blen;

        ck_assert_int_eq(map_delta_make(a, strlen(a), b, strlen(b), MAX, &delta, &dlen), 0);
        ck_assert_uint_eq(strlen(delta), dlen);
        ck_assert_int_eq(map_delta_apply(a, strlen(a), delta, dlen, MAX, &back, &blen, &err), 0);
        ck_assert_uint_eq(blen, strlen(b));
        ck_assert_msg(memcmp(back, b, blen) == 0, "delta\n%s\nfrom\n%s\ngave\n%s\nnot\n%s", delta, a, back,
                      b);
        return dlen;
}

START_TEST(test_small_cases) {
        static const char *const maps[] = {
                "",
                "a\n",
                "a\nb\nc\n",
                "c\nb\na\n",
                "a\na\na\n",
                "a\nb\na\nb\n",
                "\n\n\n",
                "x\na\nb\nc\ny\n",
                "a\nb\nX\nc\n",
                "b\nc\na\n",
                "a:x:1000:1000::/home/a:/bin/bash\nb:x:1001:1001::/home/b:/bin/bash\n",
        };
        size_t n = sizeof(maps) / sizeof(maps[0]);

        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                        round_trip(maps[i], maps[j]);
        ck_assert_uint_eq(round_trip("a\nb\n", "a\nb\n"), strlen(MAP_DELTA_MAGIC));
}
END_TEST

static char *big_map(size_t users, size_t changed, const char *tag) {
        StrBuf b = {};

        for (size_t i = 0; i < users; i++) {
                char line[128];

                (void) snprintf(line, sizeof(line), "user%06zu:x:%zu:%zu:%s:/home/user%06zu:/bin/bash\n", i,
                                10000 + i, 10000 + i, i == changed ? tag : "", i);
                strbuf_puts(&b, line);
        }
        ck_assert(!b.oom);
        return strbuf_steal(&b, &(size_t){ 0 });
}

START_TEST(test_one_user_of_100k) {
        _cleanup_free_ char *a = big_map(100000, SIZE_MAX, ""), *b = big_map(100000, 53211, "Ada L");
        _cleanup_free_ char *c = NULL;
        StrBuf s = {};

        /* a changed user: two lines and a hunk header */
        ck_assert_uint_lt(round_trip(a, b), 200);
        /* one user added at the end, one removed in the middle */
        strbuf_puts(&s, a);
        strbuf_puts(&s, "zed:x:99999:99999::/home/zed:/bin/bash\n");
        c = strbuf_steal(&s, &(size_t){ 0 });
        memmove(strstr(c, "user000500:"), strstr(c, "user000501:"), strlen(strstr(c, "user000501:")) + 1);
        ck_assert_uint_lt(round_trip(a, c), 300);
}
END_TEST

START_TEST(test_rotation_and_shuffles) {
        _cleanup_free_ char *a = big_map(20000, SIZE_MAX, ""), *b = NULL;
        _cleanup_free_ char *rev = NULL;
        StrBuf s = {};
        size_t dlen;

        /* every line changed: the delta removes and adds them all */
        b = strdup(a);
        for (char *p = b; (p = strstr(p, ":/bin/bash")); p += 10)
                memcpy(p, ":/bin/dash", 10);
        dlen = round_trip(a, b);
        ck_assert_uint_gt(dlen, 2 * strlen(a));
        /* the same lines backwards */
        for (const char *end = a + strlen(a); end > a;) {
                const char *start = end - 1;

                while (start > a && start[-1] != '\n')
                        start--;
                strbuf_append(&s, start, (size_t) (end - start));
                end = start;
        }
        rev = strbuf_steal(&s, &(size_t){ 0 });
        round_trip(a, rev);
}
END_TEST

START_TEST(test_random_edits) {
        unsigned seed = 12345;

        for (int round = 0; round < 300; round++) {
                StrBuf a = {}, b = {};
                size_t n = (size_t) (rand_r(&seed) % 60);
                _cleanup_free_ char *as = NULL, *bs = NULL;

                for (size_t i = 0; i < n; i++) {
                        char line[32];
                        int v = rand_r(&seed) % 25; /* small alphabet: duplicates happen */

                        (void) snprintf(line, sizeof(line), "l%d\n", v);
                        strbuf_puts(&a, line);
                        switch (rand_r(&seed) % 5) {
                        case 0:
                                break; /* removed */
                        case 1:
                                (void) snprintf(line, sizeof(line), "n%d\n", rand_r(&seed) % 25);
                                strbuf_puts(&b, line);
                                break;
                        default:
                                strbuf_puts(&b, line);
                        }
                }
                as = strbuf_steal(&a, &(size_t){ 0 });
                bs = strbuf_steal(&b, &(size_t){ 0 });
                round_trip(as, bs);
                round_trip(bs, as);
        }
}
END_TEST

START_TEST(test_make_refuses) {
        _cleanup_free_ char *d = NULL;
        size_t n;

        ck_assert_int_eq(map_delta_make("a\nb", 3, "a\n", 2, MAX, &d, &n), -EINVAL);
        ck_assert_int_eq(map_delta_make("a\n", 2, "a\nb", 3, MAX, &d, &n), -EINVAL);
        ck_assert_int_eq(map_delta_make("a\n", 2, "b\n", 2, 10, &d, &n), -E2BIG);
        ck_assert_ptr_null(d);
}
END_TEST

START_TEST(test_apply_hostile) {
        static const char base[] = "a\nb\nc\n";
        static const struct {
                const char *delta;
                int r;
                const char *error;
        } cases[] = {
                { "", -EBADMSG, "delta line 1: not 'sunkd-map-delta 1'" },
                { "sunkd-map-delta 2\n", -EBADMSG, "delta line 1: not 'sunkd-map-delta 1'" },
                { MAP_DELTA_MAGIC "@0 1 0\n-a", -EBADMSG, "the delta's last line is cut short" },
                { MAP_DELTA_MAGIC "x\n", -EBADMSG, "delta line 2: not a hunk header '@LINE REMOVED ADDED'" },
                { MAP_DELTA_MAGIC "@0 1\n-a\n", -EBADMSG,
                  "delta line 2: not a hunk header '@LINE REMOVED ADDED'" },
                { MAP_DELTA_MAGIC "@0 1 0 \n-a\n", -EBADMSG,
                  "delta line 2: not a hunk header '@LINE REMOVED ADDED'" },
                { MAP_DELTA_MAGIC "@-1 1 0\n-a\n", -EBADMSG,
                  "delta line 2: not a hunk header '@LINE REMOVED ADDED'" },
                { MAP_DELTA_MAGIC "@01 1 0\n-b\n", -EBADMSG,
                  "delta line 2: not a hunk header '@LINE REMOVED ADDED'" },
                { MAP_DELTA_MAGIC "@ 0 1 0\n-a\n", -EBADMSG,
                  "delta line 2: not a hunk header '@LINE REMOVED ADDED'" },
                { MAP_DELTA_MAGIC "@99999999999999999999999 1 0\n-a\n", -EBADMSG,
                  "delta line 2: not a hunk header '@LINE REMOVED ADDED'" },
                { MAP_DELTA_MAGIC "@4 0 1\n+d\n", -EBADMSG,
                  "delta line 2: a hunk out of order or past the end of the map" },
                { MAP_DELTA_MAGIC "@2 2 0\n-c\n-d\n", -EBADMSG,
                  "delta line 2: a hunk out of order or past the end of the map" },
                { MAP_DELTA_MAGIC "@1 0 0\n", -EBADMSG,
                  "delta line 2: a hunk out of order or past the end of the map" },
                { MAP_DELTA_MAGIC "@2 1 0\n-c\n@0 1 0\n-a\n", -EBADMSG,
                  "delta line 4: a hunk out of order or past the end of the map" },
                { MAP_DELTA_MAGIC "@0 1 0\n-x\n", -EBADMSG,
                  "delta line 3: a removed line that is not the map's (a delta from another map)" },
                { MAP_DELTA_MAGIC "@0 1 0\n-a \n", -EBADMSG,
                  "delta line 3: a removed line that is not the map's (a delta from another map)" },
                { MAP_DELTA_MAGIC "@0 1 0\n+a\n", -EBADMSG,
                  "delta line 3: a removed line that is not the map's (a delta from another map)" },
                { MAP_DELTA_MAGIC "@0 2 0\n-a\n", -EBADMSG,
                  "delta line 3: a removed line that is not the map's (a delta from another map)" },
                { MAP_DELTA_MAGIC "@0 0 2\n+z\n", -EBADMSG,
                  "delta line 3: an added line expected ('+LINE')" },
                { MAP_DELTA_MAGIC "@0 0 1\n-a\n", -EBADMSG,
                  "delta line 3: an added line expected ('+LINE')" },
                { MAP_DELTA_MAGIC "@0 0 1\n\n", -EBADMSG, "delta line 3: an added line expected ('+LINE')" },
                { MAP_DELTA_MAGIC "@0 0 1\n+0123456789012345678901234567890123456789\n", -EFBIG,
                  "the map would be over 32 bytes" },
        };
        _cleanup_free_ char *err = NULL;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                _cleanup_free_ char *out = NULL;
                size_t n;

                free(err);
                err = NULL;
                ck_assert_msg(map_delta_apply(base, strlen(base), cases[i].delta, strlen(cases[i].delta), 32,
                                              &out, &n, &err) == cases[i].r,
                              "case %zu", i);
                ck_assert_ptr_null(out);
                ck_assert_str_eq(err, cases[i].error);
        }
        /* a base cut short is not a map a delta applies to */
        ck_assert_int_eq(map_delta_apply("a", 1, MAP_DELTA_MAGIC, strlen(MAP_DELTA_MAGIC), 32,
                                         &(char *){ NULL }, &(size_t){ 0 }, &err),
                         -EBADMSG);
        ck_assert_str_eq(err, "the map's last line is cut short");
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("map-delta");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_small_cases);
        tcase_add_test(tc, test_one_user_of_100k);
        tcase_add_test(tc, test_rotation_and_shuffles);
        tcase_add_test(tc, test_random_edits);
        tcase_add_test(tc, test_make_refuses);
        tcase_add_test(tc, test_apply_hostile);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
