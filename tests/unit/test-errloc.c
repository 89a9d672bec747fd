/* Located error messages in every shape the config readers use. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/errloc.h"
#include "../lib/check-run.h"

static void expect(char *got, const char *want) {
        ck_assert_ptr_nonnull(got);
        ck_assert_str_eq(got, want);
        free(got);
}

START_TEST(test_shapes) {
        expect(errloc_format("a.yaml", 3, 7, "interval", "'%s' is not a duration", "x"),
               "a.yaml:3:7: key 'interval': 'x' is not a duration");
        expect(errloc_format("a.yaml", 3, 7, NULL, "bad"), "a.yaml:3:7: bad");
        expect(errloc_format("nsscache.conf", 12, 0, "scim_timeout", "bad"),
               "nsscache.conf:12: key 'scim_timeout': bad");
        expect(errloc_format("nsscache.conf", 12, 0, NULL, "malformed section header"),
               "nsscache.conf:12: malformed section header");
        expect(errloc_format("f", 0, 0, "k", "v"), "f: key 'k': v");
        expect(errloc_format(NULL, 1, 1, NULL, "v"), "<input>:1:1: v");
        expect(errloc_format("f", 4294967295u, 4294967295u, NULL, "%s", ""), "f:4294967295:4294967295: ");
}
END_TEST

START_TEST(test_hostile) {
        /* Format characters in the file name or key are data, not formats. */
        expect(errloc_format("%s%n.yaml", 1, 2, "%x%n", "%s", "%d"), "%s%n.yaml:1:2: key '%x%n': %d");
        /* Long parts are not truncated. */
        size_t big = 100000;
        char *s = malloc(big + 1);
        memset(s, 'k', big);
        s[big] = '\0';
        char *got = errloc_format(s, 1, 1, s, "%s", s);
        ck_assert_ptr_nonnull(got);
        ck_assert_uint_eq(strlen(got), 3 * big + strlen(":1:1: key '': "));
        free(got);
        free(s);
}
END_TEST

START_TEST(test_set) {
        char *e = NULL;

        ck_assert_int_eq(errloc_set(&e, "f", 2, 0, "k", "too %s", "long"), -EINVAL);
        expect(e, "f:2: key 'k': too long");
        ck_assert_int_eq(errloc_set(NULL, "f", 2, 0, "k", "x"), -EINVAL);
}
END_TEST

START_TEST(test_join) {
        char *all = NULL;
        int first = 0;

        ck_assert_int_eq(errloc_join(&all, &first, 0, NULL), 0);
        ck_assert_ptr_null(all);
        ck_assert_int_eq(errloc_join(&all, &first, -EINVAL, strdup("a:1: one")), -EINVAL);
        ck_assert_int_eq(errloc_join(&all, &first, -EPERM, strdup("a:2: two")), -EPERM);
        ck_assert_int_eq(errloc_join(&all, &first, -EIO, NULL), -EIO);
        ck_assert_int_eq(first, -EINVAL);
        expect(all, "a:1: one\na:2: two");
        all = NULL;
        ck_assert_int_eq(errloc_join(&all, &first, -EINVAL, strdup("x")), -EINVAL);
        ck_assert_int_eq(errloc_join(&all, &first, -ENOMEM, NULL), -ENOMEM);
        ck_assert_ptr_null(all);
}
END_TEST

int main(void) {
        Suite *s = suite_create("errloc");
        TCase *tc = tcase_create("errloc");

        tcase_add_test(tc, test_shapes);
        tcase_add_test(tc, test_hostile);
        tcase_add_test(tc, test_set);
        tcase_add_test(tc, test_join);
        suite_add_tcase(s, tc);
        return check_run(s);
}
