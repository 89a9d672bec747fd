/* The memory of parsing one SCIM page is bounded by its size: hostile pages
 * of tiny values, which json-c turns into hundreds of bytes each, are refused
 * before anything is built, and every page that is parsed stays within
 * SCIM_PAGE_PARSE_FACTOR times its size.  Before the pre-scan, 9 MB of "{},"
 * took 2.3 GB.  Each case runs in its own process
 * (Check forks), so ru_maxrss measures that case alone. */
#include <check.h>
#include <json-c/json.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "modules/nsscache/scim/scim-fetch.h"
#include "util/cleanup.h"
#include "../lib/check-run.h"

#define LIST                                                                                                \
        "{\"schemas\":[\"urn:ietf:params:scim:api:messages:2.0:ListResponse\"],\"totalResults\":%d,"        \
        "\"Resources\":["
#define CW "urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser"
#define BODY_SIZE (9u * 1024 * 1024)

static uint64_t peak_rss(void) {
        struct rusage ru;

        ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
        return (uint64_t) ru.ru_maxrss * 1024;
}

/* A page: LIST, then @elem repeated (comma-separated) until about @size bytes, then "]}". */
static char *page(const char *elem, size_t size, size_t *ret_len, size_t *ret_n) {
        char *b = malloc(size + 4096), *p = b;
        size_t n = 0, elen = strlen(elem);

        ck_assert_ptr_nonnull(b);
        p += sprintf(p, LIST, 1);
        while ((size_t) (p - b) + elen + 8 < size) {
                if (n++)
                        *p++ = ',';
                memcpy(p, elem, elen);
                p += elen;
        }
        p += sprintf(p, "]}");
        *ret_len = (size_t) (p - b);
        *ret_n = n;
        return b;
}

/* Parses @body the way a fetch does and checks the memory it took. */
static int parse_measured(const char *body, size_t len, int64_t page_size, char **err) {
        uint64_t before = peak_rss(), after;
        ScimPage p = { 0 };
        int r;

        r = scim_page_parse_bounded(NULL, body, len, page_size, 0, &p, err);
        after = peak_rss();
        scim_page_done(&p);
        ck_assert_msg(after - before <= (uint64_t) SCIM_PAGE_PARSE_FACTOR * len + SCIM_PAGE_PARSE_SLACK,
                      "parsing %zu bytes took %llu bytes (r=%d)", len, (unsigned long long) (after - before),
                      r);
        return r;
}

/* Resources elements that json-c turns into far more memory than their bytes. */
static const char *const hostile[] = {
        "{}", "[]", "1", "\"\"", "null", "[[],[],[],[]]", "{\"a\":{},\"b\":[]}", "[{}, {}]",
};

START_TEST(test_hostile_many) {
        _cleanup_free_ char *body = NULL, *err = NULL;
        size_t len, n;

        body = page(hostile[_i], BODY_SIZE, &len, &n);
        /* asked for 100: three million elements are refused by count alone */
        ck_assert_int_eq(parse_measured(body, len, 100, &err), -EBADMSG);
        ck_assert_msg(strstr(err, "Resources on a page that asked for 100"), "%s", err);
}
END_TEST

START_TEST(test_hostile_nested) {
        _cleanup_free_ char *body = NULL, *err = NULL, *elem = NULL;
        int r;
        size_t len, n, elen, hlen = strlen(hostile[_i]), inner = BODY_SIZE / 16 - 64;
        char *p;

        /* 16 Resources (within the count) that each hold a huge array of tiny values */
        elem = malloc(inner + 64);
        ck_assert_ptr_nonnull(elem);
        p = elem;
        *p++ = '[';
        for (size_t i = 0; (size_t) (p - elem) + hlen + 2 < inner; i++)
                p += sprintf(p, i ? ",%s" : "%s", hostile[_i]);
        strcpy(p, "]");
        elen = strlen(elem);
        ck_assert_int_gt(elen, inner - 64);
        body = page(elem, BODY_SIZE, &len, &n);
        ck_assert_int_le(n, 16);
        r = parse_measured(body, len, 100, &err);
        /* whatever the shape, within the ceiling; containers are always refused */
        if (r == 0 && hostile[_i][0] != '{' && hostile[_i][0] != '[')
                return;
        ck_assert_int_eq(r, -EBADMSG);
        ck_assert_msg(strstr(err, "would take about"), "%s", err);
}
END_TEST

/* A real page of users (the fixture's shape) is accepted, within the bound. */
START_TEST(test_real_page) {
        _cleanup_free_ char *body = NULL, *err = NULL;
        ScimPage p = { 0 };
        size_t len = 0, n = 10000;
        FILE *f = open_memstream(&body, &len);

        fprintf(f, LIST, (int) n);
        for (size_t i = 0; i < n; i++)
                fprintf(f,
                        "%s{\"schemas\":[\"urn:ietf:params:scim:schemas:core:2.0:User\",\"" CW "\"],"
                        "\"id\":\"u-%zu\",\"userName\":\"user%06zu@example.com\","
                        "\"name\":{\"givenName\":\"User\",\"familyName\":\"%zu\"},\"active\":true,"
                        "\"" CW "\":{\"sunkPosixUsername\":\"user%06zu\",\"sunkPosixUserId\":%zu,"
                        "\"sunkPosixGroupId\":%zu,\"sunkPreferredHomeDirectory\":\"/home/user%06zu\","
                        "\"sunkLoginShell\":\"/bin/bash\",\"sunkSshKeys\":[\"ssh-ed25519 "
                        "AAAAC3NzaC1lZDI1NTE5AAAAI%032zu user%06zu@example\"]}}",
                        i ? "," : "", i, i, i, i, 100000 + i, 200000 + i / 10, i, i, i);
        fputs("]}", f);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_msg(parse_measured(body, len, (int64_t) n, &err) == 0, "%s", err);
        ck_assert_int_eq(scim_page_parse_bounded(NULL, body, len, (int64_t) n, 0, &p, &err), 0);
        ck_assert_int_eq(p.n_resources, n);
        scim_page_done(&p);
        /* the same page answering count=100 is refused */
        ck_assert_int_eq(scim_page_parse_bounded(NULL, body, len, 100, 0, &p, &err), -EBADMSG);
}
END_TEST

/* A real page of groups (small member objects: ~20x in json-c) is accepted. */
START_TEST(test_real_groups) {
        _cleanup_free_ char *body = NULL, *err = NULL;
        size_t len = 0, n = 100;
        FILE *f = open_memstream(&body, &len);

        fprintf(f, LIST, (int) n);
        for (size_t g = 0; g < n; g++) {
                fprintf(f,
                        "%s{\"id\":\"g-%zu\",\"displayName\":\"Group "
                        "%zu\",\"sunkPosixGroupId\":%zu,\"members\":[",
                        g ? "," : "", g, g, 200000 + g);
                for (size_t i = 0; i < 2000; i++)
                        fprintf(f, "%s{\"value\":\"u-%zu\",\"sunkPosixUsername\":\"user%06zu\"}",
                                i ? "," : "", g * 2000 + i, g * 2000 + i);
                fputs("]}", f);
        }
        fputs("]}", f);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_msg(parse_measured(body, len, (int64_t) n, &err) == 0, "%s", err);
}
END_TEST

/* The pre-scan counts only the elements of the top-level Resources array. */
START_TEST(test_count_scope) {
        _cleanup_free_ char *err = NULL;
        ScimPage p = { 0 };
        const char ok[] = "{\"totalResults\":3,\"x\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19],"
                          "\"Resources\":[{\"a\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]},"
                          "\"Resources\",[]],\"y\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]}";
        const char bad[] =
                "{\"totalResults\":3,\"Resources\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]}";
        const char dup[] = "{\"totalResults\":3,\"Resources\":[],\"Resources\":[1,2,3,4,5,6,7,8,9,10,11,12,"
                           "13,14,15,16,17,18,19]}";

        ck_assert_msg(scim_page_parse_bounded(NULL, ok, strlen(ok), 1, 0, &p, &err) == 0, "%s", err);
        ck_assert_int_eq(p.n_resources, 3);
        scim_page_done(&p);
        ck_assert_int_eq(scim_page_parse_bounded(NULL, bad, strlen(bad), 1, 0, &p, &err), -EBADMSG);
        ck_assert_msg(strstr(err, "19 Resources"), "%s", err);
        free(err);
        err = NULL;
        /* a duplicate key cannot hide the array json-c keeps */
        ck_assert_int_eq(scim_page_parse_bounded(NULL, dup, strlen(dup), 1, 0, &p, &err), -EBADMSG);
        ck_assert_msg(strstr(err, "19 Resources"), "%s", err);
}
END_TEST

/* The fetch parses every page of a run with one tokener: nothing a broken
 * page leaves in it reaches the next page. */
START_TEST(test_tokener_reuse) {
        static const char *const bodies[] = {
                "{\"totalResults\":1,\"Resources\":[{\"id\":\"a\"",     /* truncated mid-object */
                "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", /* deeper than allowed */
                "{\"totalResults\":1} trailing",
                "\"just a string",
                "",
        };
        const char good[] = "{\"totalResults\":2,\"Resources\":[{\"id\":\"x\"},{\"id\":\"y\"}]}";
        json_tokener *tok = scim_json_tokener_new();

        ck_assert_ptr_nonnull(tok);
        for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
                _cleanup_free_ char *err = NULL;
                ScimPage p = { 0 };

                ck_assert_int_eq(scim_page_parse_bounded(tok, bodies[i], strlen(bodies[i]), 10, 0, &p, &err),
                                 -EBADMSG);
                ck_assert_ptr_nonnull(err);
                free(err);
                err = NULL;
                ck_assert_msg(scim_page_parse_bounded(tok, good, strlen(good), 10, 0, &p, &err) == 0,
                              "after body %zu: %s", i, err);
                ck_assert_uint_eq(p.n_resources, 2);
                ck_assert_int_eq(p.total_results, 2);
                scim_page_done(&p);
        }
        json_tokener_free(tok);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("scim-page-memory");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_loop_test(tc, test_hostile_many, 0, sizeof(hostile) / sizeof(hostile[0]));
        tcase_add_loop_test(tc, test_hostile_nested, 0, sizeof(hostile) / sizeof(hostile[0]));
        tcase_add_test(tc, test_real_page);
        tcase_add_test(tc, test_real_groups);
        tcase_add_test(tc, test_count_scope);
        tcase_add_test(tc, test_tokener_reuse);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
