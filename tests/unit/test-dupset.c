/* The duplicate-check set: names and ids, growth, clearing. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "modules/nsscache/dupset.h"
#include "util/cleanup.h"
#include "../lib/check-run.h"

START_TEST(test_names) {
        _cleanup_(dupset_freep) DupSet *s = NULL;
        char big[DUPSET_KEY_MAX + 1];

        ck_assert_int_eq(dupset_new(&s), 0);
        ck_assert(!dupset_contains(s, "alice", 5));
        ck_assert_int_eq(dupset_add(s, "alice", 5), 1);
        ck_assert_int_eq(dupset_add(s, "alice", 5), 0);
        ck_assert(dupset_contains(s, "alice", 5));
        ck_assert(!dupset_contains(s, "alic", 4));
        ck_assert(!dupset_contains(s, "alicea", 6));
        ck_assert_int_eq(dupset_add(s, "", 0), 1);
        ck_assert(dupset_contains(s, "", 0));
        ck_assert_int_eq(dupset_size(s), 2);
        memset(big, 'x', sizeof(big));
        ck_assert_int_eq(dupset_add(s, big, sizeof(big)), -EINVAL);
        ck_assert(!dupset_contains(s, big, sizeof(big)));
        ck_assert_int_eq(dupset_add(s, big, sizeof(big) - 1), 1);
        ck_assert(dupset_contains(s, big, sizeof(big) - 1));
}
END_TEST

START_TEST(test_ids_are_not_names) {
        _cleanup_(dupset_freep) DupSet *s = NULL;

        ck_assert_int_eq(dupset_new(&s), 0);
        ck_assert_int_eq(dupset_add_id(s, 1000), 1);
        ck_assert_int_eq(dupset_add_id(s, 1000), 0);
        ck_assert(dupset_contains_id(s, 1000));
        ck_assert(!dupset_contains_id(s, 1001));
        ck_assert(!dupset_contains(s, "1000", 4));
}
END_TEST

START_TEST(test_growth_and_clear) {
        _cleanup_(dupset_freep) DupSet *s = NULL;
        char name[32];

        ck_assert_int_eq(dupset_new(&s), 0);
        for (int round = 0; round < 2; round++) {
                for (uint32_t i = 0; i < 100000; i++) {
                        int n = snprintf(name, sizeof(name), "user%06u", i);
                        ck_assert_int_eq(dupset_add(s, name, (size_t) n), 1);
                        ck_assert_int_eq(dupset_add_id(s, 100000 + i), 1);
                }
                ck_assert_int_eq(dupset_size(s), 200000);
                for (uint32_t i = 0; i < 100000; i += 997) {
                        int n = snprintf(name, sizeof(name), "user%06u", i);
                        ck_assert(dupset_contains(s, name, (size_t) n));
                        ck_assert_int_eq(dupset_add_id(s, 100000 + i), 0);
                }
                ck_assert(!dupset_contains(s, "user100000", 10));
                dupset_clear(s);
                ck_assert_int_eq(dupset_size(s), 0);
                ck_assert(!dupset_contains(s, "user000000", 10));
                ck_assert(!dupset_contains_id(s, 100000));
        }
}
END_TEST

/* Values survive growth; dupset_add() never changes one, dupset_put() does. */
START_TEST(test_values) {
        _cleanup_(dupset_freep) DupSet *s = NULL;
        uint32_t v = 0;

        ck_assert_int_eq(dupset_new(&s), 0);
        for (uint32_t i = 0; i < 5000; i++)
                ck_assert_int_eq(dupset_put_id(s, i * 7, i + 1), 1);
        for (uint32_t i = 0; i < 5000; i++) {
                ck_assert(dupset_get_id(s, i * 7, &v));
                ck_assert_uint_eq(v, i + 1);
        }
        ck_assert(!dupset_get_id(s, 1, &v));
        ck_assert_int_eq(dupset_add(s, "alice", 5), 1);
        ck_assert(dupset_get(s, "alice", 5, &v));
        ck_assert_uint_eq(v, 0);
        ck_assert_int_eq(dupset_put(s, "alice", 5, 42), 0);
        ck_assert_int_eq(dupset_add(s, "alice", 5), 0);
        ck_assert(dupset_get(s, "alice", 5, &v));
        ck_assert_uint_eq(v, 42);
        ck_assert(!dupset_get(s, "alic", 4, &v));
        ck_assert_int_eq(dupset_get_or_add(s, "alice", 5, 7, &v), 0);
        ck_assert_uint_eq(v, 42);
        ck_assert_int_eq(dupset_get_or_add(s, "bob", 3, 7, &v), 1);
        ck_assert(dupset_get(s, "bob", 3, &v));
        ck_assert_uint_eq(v, 7);
        ck_assert_int_eq(dupset_get_or_add_id(s, 7, 9, &v), 0);
        ck_assert_uint_eq(v, 2);
        ck_assert_int_eq(dupset_put(s, "x", DUPSET_KEY_MAX + 1, 1), -EINVAL);
        ck_assert(!dupset_get(s, "x", DUPSET_KEY_MAX + 1, &v));
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("dupset");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_names);
        tcase_add_test(tc, test_ids_are_not_names);
        tcase_add_test(tc, test_growth_and_clear);
        tcase_add_test(tc, test_values);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
