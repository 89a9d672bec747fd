/* Attribute paths: the cached lookup answers as the plain walk does, for
 * every path and object, hostile ones included. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "modules/nsscache/scim/attr-path.h"
#include "util/cleanup.h"
#include "../lib/check-run.h"

static const char doc[] =
        "{\"userName\":\"ada\",\"name\":{\"givenName\":\"Ada\",\"formatted\":null,\"\":{\"x\":1}},"
        "\"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User\":{\"homeDirectory\":\"/home/ada\"},"
        "\"a\":{\"\":{\"b\":2}},\"arr\":[{\"k\":1}],\"n\":null,\"s\":\"str\",\"num\":7,"
        "\"dup\":1,\"dup\":2}";

static const char *const paths[] = {
        "userName",
        "name",
        "name/givenName",
        "name/formatted",
        "name/familyName",
        "name/givenName/x",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User/homeDirectory",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
        "a//b",
        "a/",
        "name/",
        "/",
        "//",
        "arr",
        "arr/0",
        "arr/k",
        "n",
        "n/x",
        "s/x",
        "num",
        "dup",
        "missing",
        "missing/deeper",
        "",
};

static void agree(json_object *o, const char *path, AttrPaths *c) {
        json_object *want = attr_path_extract(o, path), *got = attr_paths_get(c, o, path);

        ck_assert_msg(want == got, "path '%s': %p != %p", path, (void *) want, (void *) got);
}

START_TEST(test_agrees) {
        _cleanup_free_ char *longkey = NULL, *longdoc = NULL, *longpath = NULL;
        json_object *o = json_tokener_parse(doc), *big;
        AttrPaths *c = NULL;

        ck_assert_ptr_nonnull(o);
        ck_assert_int_eq(attr_paths_new(&c), 0);
        ck_assert_ptr_null(attr_paths_get(c, o, NULL));
        for (int round = 0; round < 3; round++) /* compiled the first time, cached after */
                for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
                        agree(o, paths[i], c);
        ck_assert_str_eq(json_object_get_string(attr_paths_get(c, o, "name/givenName")), "Ada");
        ck_assert_int_eq(json_object_get_int(attr_paths_get(c, o, "a//b")), 2);
        ck_assert_int_eq(json_object_get_int(attr_paths_get(c, o, "dup")), 2);
        /* other objects, other tables: the same answers (a non-object, an array, NULL) */
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                agree(json_object_object_get(o, "name"), paths[i], c);
                agree(json_object_object_get(o, "arr"), paths[i], c);
                agree(json_object_object_get(o, "s"), paths[i], c);
                agree(NULL, paths[i], c);
        }
        /* a key longer than the walk's stack copy */
        longkey = malloc(1001);
        ck_assert_ptr_nonnull(longkey);
        memset(longkey, 'k', 1000);
        longkey[1000] = 0;
        ck_assert_int_ge(asprintf(&longdoc, "{\"%s\":{\"v\":5}}", longkey), 0);
        ck_assert_int_ge(asprintf(&longpath, "%s/v", longkey), 0);
        big = json_tokener_parse(longdoc);
        ck_assert_ptr_nonnull(big);
        agree(big, longpath, c);
        ck_assert_int_eq(json_object_get_int(attr_paths_get(c, big, longpath)), 5);
        json_object_put(big);
        attr_paths_free(c);
        json_object_put(o);
}
END_TEST

/* Past the cache's size every path still answers (the long way). */
START_TEST(test_many_paths) {
        json_object *o = json_tokener_parse(doc);
        char texts[100][16];
        AttrPaths *c = NULL;

        ck_assert_int_eq(attr_paths_new(&c), 0);
        for (int i = 0; i < 100; i++) {
                snprintf(texts[i], sizeof(texts[i]), i % 2 ? "num" : "name/givenName");
                agree(o, texts[i], c);
        }
        for (int i = 0; i < 100; i++)
                agree(o, texts[i], c);
        attr_paths_free(c);
        json_object_put(o);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("attr-path");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_agrees);
        tcase_add_test(tc, test_many_paths);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
