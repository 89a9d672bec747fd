/* Durations and sizes as config files write them. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "util/macro.h"
#include "util/time-util.h"
#include "../lib/check-run.h"

START_TEST(test_duration_ok) {
        static const struct {
                const char *s;
                uint64_t usec;
        } cases[] = {
                { "0", 0 },
                { "30s", 30 * USEC_PER_SEC },
                { "15m", 900 * USEC_PER_SEC },
                { "1h", 3600 * USEC_PER_SEC },
                { "2d", 2 * 86400 * USEC_PER_SEC },
                { "500ms", 500 * USEC_PER_MSEC },
                { "1h30m", 5400 * USEC_PER_SEC },
                { "1h 30m", 5400 * USEC_PER_SEC },
                { "45", 45 * USEC_PER_SEC },
                { "10us", 10 },
                { "1min", 60 * USEC_PER_SEC },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t v = 1;
                ck_assert_msg(parse_duration(cases[i].s, &v) == 0, "'%s' should parse", cases[i].s);
                ck_assert_uint_eq(v, cases[i].usec);
        }
}
END_TEST

START_TEST(test_duration_bad) {
        static const char *const bad[] = {
                "",     " ",  "-5s", "5x", "s", "1.5h", "1h-", "99999999999999999999s", "30s garbage",
                "0x10", "1e3"
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                uint64_t v = 7;
                ck_assert_msg(parse_duration(bad[i], &v) < 0, "'%s' should not parse", bad[i]);
                ck_assert_uint_eq(v, 7);
        }
        uint64_t v;
        ck_assert_int_eq(parse_duration("99999999999999999999s", &v), -ERANGE);
        ck_assert_int_eq(parse_duration(NULL, &v), -EINVAL);
}
END_TEST

START_TEST(test_duration_fraction) {
        static const struct {
                const char *s;
                uint64_t usec;
        } ok[] = {
                { "2.5", 2500 * USEC_PER_MSEC },
                { "60", 60 * USEC_PER_SEC },
                { "0.5ms", 500 },
                { "1.5h", 5400 * USEC_PER_SEC },
                { "1h 0.5m", 3630 * USEC_PER_SEC },
                { "0.000001s", 1 },
                { "0.0000019s", 1 },
                { "1.25d", 108000 * USEC_PER_SEC },
                { "30s", 30 * USEC_PER_SEC },
        };
        static const char *const bad[] = { "",     ".5",          "1.",  "1..5", "1.2.3", "1.5x",
                                           "-1.5", "1.5 garbage", "1,5", "1.e3", "nan",   "0x1.8" };
        uint64_t v;

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                v = 1;
                ck_assert_msg(parse_duration_fraction(ok[i].s, &v) == 0, "'%s' should parse", ok[i].s);
                ck_assert_msg(v == ok[i].usec, "'%s' gave %llu", ok[i].s, (unsigned long long) v);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                v = 7;
                ck_assert_msg(parse_duration_fraction(bad[i], &v) < 0, "'%s' should not parse", bad[i]);
                ck_assert_uint_eq(v, 7);
        }
        ck_assert_int_eq(parse_duration_fraction("99999999999999999999.5", &v), -ERANGE);
        ck_assert_int_eq(parse_duration_fraction("18446744073709.9w", &v), -ERANGE);
        ck_assert_int_eq(parse_duration_fraction(NULL, &v), -EINVAL);
        /* The plain parser still refuses fractions. */
        ck_assert_int_eq(parse_duration("2.5", &v), -EINVAL);
}
END_TEST

START_TEST(test_size) {
        uint64_t v;
        ck_assert_int_eq(parse_size("64K", &v), 0);
        ck_assert_uint_eq(v, 65536);
        ck_assert_int_eq(parse_size("1M", &v), 0);
        ck_assert_uint_eq(v, 1 << 20);
        ck_assert_int_eq(parse_size("512", &v), 0);
        ck_assert_uint_eq(v, 512);
        ck_assert_int_eq(parse_size("2GiB", &v), 0);
        ck_assert_uint_eq(v, UINT64_C(2) << 30);
        ck_assert_int_lt(parse_size("1M1K", &v), 0);
        ck_assert_int_lt(parse_size("-1", &v), 0);
        ck_assert_int_lt(parse_size("12Q", &v), 0);
        ck_assert_int_eq(parse_size("99999999999T", &v), -ERANGE);
}
END_TEST

START_TEST(test_format) {
        char buf[FORMAT_DURATION_MAX];
        ck_assert_str_eq(format_duration(buf, sizeof(buf), 0), "0");
        ck_assert_str_eq(format_duration(buf, sizeof(buf), 5400 * USEC_PER_SEC), "1h30m");
        ck_assert_str_eq(format_duration(buf, sizeof(buf), 250 * USEC_PER_MSEC), "250ms");
        ck_assert_str_eq(format_duration(buf, sizeof(buf), USEC_INFINITY), "infinity");
        uint64_t v;
        ck_assert_int_eq(parse_duration(format_duration(buf, sizeof(buf), 93784 * USEC_PER_SEC), &v), 0);
        ck_assert_uint_eq(v, 93784 * USEC_PER_SEC);
}
END_TEST

int main(void) {
        Suite *s = suite_create("time-util");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_duration_ok);
        tcase_add_test(tc, test_duration_bad);
        tcase_add_test(tc, test_duration_fraction);
        tcase_add_test(tc, test_size);
        tcase_add_test(tc, test_format);
        suite_add_tcase(s, tc);
        return check_run(s);
}
