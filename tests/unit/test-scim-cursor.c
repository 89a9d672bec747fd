/* RFC 9865 cursor pagination, the parsing side: nextCursor on a
 * ListResponse page (echoed into the next URL, so held to the unreserved
 * alphabet and a length), totalResults that a cursor listing may leave out,
 * and what /ServiceProviderConfig advertises, against malformed and hostile
 * bodies. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules/nsscache/scim/scim-page.h"
#include "modules/nsscache/scim/scim-spc.h"
#include "util/cleanup.h"
#include "../lib/check-run.h"

static int parse(const char *body, unsigned flags, ScimPage *p, char **err) {
        free(*err);
        *err = NULL;
        return scim_page_parse(body, strlen(body), flags, p, err);
}

START_TEST(test_next_cursor) {
        static const char *const good[][2] = {
                { "{\"totalResults\":3,\"nextCursor\":\"VZUTiyhEQJ94IR\",\"Resources\":[{}]}",
                  "VZUTiyhEQJ94IR" },
                { "{\"totalResults\":3,\"nextCursor\":\"a-Z_0.~9\"}", "a-Z_0.~9" },
                { "{\"totalResults\":3,\"nextCursor\":\"\"}", NULL },
                { "{\"totalResults\":3,\"nextCursor\":null}", NULL },
                { "{\"totalResults\":3}", NULL },
        };
        _cleanup_free_ char *err = NULL;
        ScimPage p = { 0 };

        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                ck_assert_msg(parse(good[i][0], 0, &p, &err) == 0, "case %zu: %s", i, err);
                if (good[i][1])
                        ck_assert_str_eq(p.next_cursor, good[i][1]);
                else
                        ck_assert_ptr_null(p.next_cursor);
                scim_page_done(&p);
        }
}
END_TEST

START_TEST(test_hostile_cursor) {
        static const char *const bad[] = {
                "{\"totalResults\":3,\"nextCursor\":7}",
                "{\"totalResults\":3,\"nextCursor\":[\"a\"]}",
                "{\"totalResults\":3,\"nextCursor\":{}}",
                "{\"totalResults\":3,\"nextCursor\":true}",
                /* each would change the next request if echoed */
                "{\"totalResults\":3,\"nextCursor\":\"a&startIndex=1\"}",
                "{\"totalResults\":3,\"nextCursor\":\"a#b\"}",
                "{\"totalResults\":3,\"nextCursor\":\"a b\"}",
                "{\"totalResults\":3,\"nextCursor\":\"a%26b\"}",
                "{\"totalResults\":3,\"nextCursor\":\"a/../../Groups\"}",
                "{\"totalResults\":3,\"nextCursor\":\"a\\r\\nX-Injected: 1\"}",
                "{\"totalResults\":3,\"nextCursor\":\"ab\\u0000cd\"}",
                "{\"totalResults\":3,\"nextCursor\":\"caf\\u00e9\"}",
        };
        _cleanup_free_ char *err = NULL, *long_cursor = NULL;
        ScimPage p = { 0 };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_assert_msg(parse(bad[i], 0, &p, &err) == -EBADMSG, "case %zu accepted", i);
                ck_assert_msg(strstr(err, "nextCursor"), "case %zu: %s", i, err);
                /* a listing paged by index never looks at it */
                ck_assert_msg(parse(bad[i], SCIM_PAGE_IGNORE_CURSOR, &p, &err) == 0, "case %zu: %s", i, err);
                ck_assert_ptr_null(p.next_cursor);
                scim_page_done(&p);
        }

        /* SCIM_CURSOR_MAX characters pass, one more does not */
        long_cursor = malloc(SCIM_CURSOR_MAX + 64);
        ck_assert_ptr_nonnull(long_cursor);
        strcpy(long_cursor, "{\"totalResults\":3,\"nextCursor\":\"");
        memset(long_cursor + strlen(long_cursor), 'x', SCIM_CURSOR_MAX);
        strcpy(long_cursor + 32 + SCIM_CURSOR_MAX, "\"}");
        ck_assert_msg(parse(long_cursor, 0, &p, &err) == 0, "%s", err);
        ck_assert_uint_eq(strlen(p.next_cursor), SCIM_CURSOR_MAX);
        scim_page_done(&p);
        memmove(long_cursor + 33, long_cursor + 32, strlen(long_cursor + 32) + 1);
        long_cursor[32] = 'x';
        ck_assert_int_eq(parse(long_cursor, 0, &p, &err), -EBADMSG);
        ck_assert_msg(strstr(err, "nextCursor"), "%s", err);
}
END_TEST

START_TEST(test_total_optional_by_cursor) {
        _cleanup_free_ char *err = NULL;
        ScimPage p = { 0 };

        ck_assert_int_eq(parse("{\"Resources\":[{}]}", 0, &p, &err), -EBADMSG);
        ck_assert_msg(strstr(err, "totalResults"), "%s", err);
        /* a first index page that hands out a nextCursor comes from a cursor server */
        ck_assert_int_eq(parse("{\"nextCursor\":\"x\",\"Resources\":[{}]}", 0, &p, &err), 0);
        ck_assert_int_eq(p.total_results, -1);
        scim_page_done(&p);
        /* unless the listing is paged by index only */
        ck_assert_int_eq(
                parse("{\"nextCursor\":\"x\",\"Resources\":[{}]}", SCIM_PAGE_IGNORE_CURSOR, &p, &err),
                -EBADMSG);
        ck_assert_msg(strstr(err, "totalResults"), "%s", err);
        ck_assert_int_eq(parse("{\"nextCursor\":\"x\",\"Resources\":[{}]}", SCIM_PAGE_CURSOR, &p, &err), 0);
        ck_assert_int_eq(p.total_results, -1);
        ck_assert_str_eq(p.next_cursor, "x");
        ck_assert_int_eq(p.n_resources, 1);
        scim_page_done(&p);
        /* present, it must still be valid */
        ck_assert_int_eq(parse("{\"totalResults\":-4}", SCIM_PAGE_CURSOR, &p, &err), -EBADMSG);
        ck_assert_int_eq(parse("{\"totalResults\":\"5\"}", SCIM_PAGE_CURSOR, &p, &err), -EBADMSG);
        ck_assert_int_eq(parse("{\"totalResults\":null}", SCIM_PAGE_CURSOR, &p, &err), -EBADMSG);
}
END_TEST

START_TEST(test_trailing_nul) {
        static const char body[] = "{\"totalResults\":0}\0garbage";
        _cleanup_free_ char *err = NULL;
        ScimPage p = { 0 };

        ck_assert_int_eq(scim_page_parse(body, sizeof(body) - 1, 0, &p, &err), -EBADMSG);
        ck_assert_msg(strstr(err, "trailing data"), "%s", err);
}
END_TEST

static int spc(const char *body, ScimPagination *pg, char **err) {
        free(*err);
        *err = NULL;
        return scim_spc_parse(body, strlen(body), pg, err);
}

START_TEST(test_spc) {
        static const struct {
                const char *body;
                bool cursor, index;
        } good[] = {
                { "{\"schemas\":[\"urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig\"],"
                  "\"pagination\":{\"cursor\":true,\"index\":true,\"defaultPaginationMethod\":\"index\","
                  "\"defaultPageSize\":100,\"maxPageSize\":1000,\"cursorTimeout\":3600}}",
                  true, true },
                { "{\"pagination\":{\"cursor\":true,\"index\":false}}", true, false },
                { "{\"pagination\":{\"cursor\":false,\"index\":true}}", false, true },
                /* servers that predate RFC 9865 */
                { "{\"patch\":{\"supported\":true},\"filter\":{\"supported\":true,\"maxResults\":200}}",
                  false, true },
                { "{\"pagination\":null}", false, true },
                { "{\"pagination\":{}}", false, false },
        };
        _cleanup_free_ char *err = NULL;
        ScimPagination pg;

        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                ck_assert_msg(spc(good[i].body, &pg, &err) == 0, "case %zu: %s", i, err);
                ck_assert_msg(pg.cursor == good[i].cursor && pg.index == good[i].index, "case %zu", i);
        }
}
END_TEST

START_TEST(test_spc_hostile) {
        static const char *const bad[][2] = {
                { "", "JSON" },
                { "<html>404</html>", "invalid JSON" },
                { "[]", "not a JSON object" },
                { "{\"pagination\":true}", "pagination is not an object" },
                { "{\"pagination\":{\"cursor\":\"true\"}}", "pagination.cursor is not a boolean" },
                { "{\"pagination\":{\"cursor\":1}}", "pagination.cursor is not a boolean" },
                { "{\"pagination\":{\"cursor\":true,\"index\":[]}}", "pagination.index is not a boolean" },
                { "{\"pagination\":{\"cursor\":true}} {}", "JSON" },
                { "{\"pagination\":{\"cursor\":tru", "JSON" },
        };
        _cleanup_free_ char *err = NULL, *deep = NULL, *big = NULL;
        ScimPagination pg;
        size_t depth = 100000, n;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_assert_msg(spc(bad[i][0], &pg, &err) == -EBADMSG, "case %zu accepted", i);
                ck_assert_msg(strstr(err, bad[i][1]), "case %zu: %s", i, err);
        }
        /* nesting beyond the parser's depth limit */
        deep = malloc(depth + 32);
        ck_assert_ptr_nonnull(deep);
        strcpy(deep, "{\"pagination\":");
        memset(deep + strlen(deep), '[', depth);
        deep[strlen("{\"pagination\":") + depth] = 0;
        ck_assert_int_eq(spc(deep, &pg, &err), -EBADMSG);
        /* a document larger than any real one is not parsed at all */
        big = malloc(SCIM_SPC_BODY_MAX + 64);
        ck_assert_ptr_nonnull(big);
        strcpy(big, "{\"pagination\":{\"cursor\":true},\"x\":\"");
        n = strlen(big);
        memset(big + n, 'a', SCIM_SPC_BODY_MAX);
        strcpy(big + n + SCIM_SPC_BODY_MAX, "\"}");
        ck_assert_int_eq(spc(big, &pg, &err), -EBADMSG);
        ck_assert_msg(strstr(err, "larger than"), "%s", err);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("scim-cursor");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_next_cursor);
        tcase_add_test(tc, test_hostile_cursor);
        tcase_add_test(tc, test_total_optional_by_cursor);
        tcase_add_test(tc, test_trailing_nul);
        tcase_add_test(tc, test_spc);
        tcase_add_test(tc, test_spc_hostile);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
