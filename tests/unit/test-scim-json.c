/* The page tree against json-c: whatever scim_json_parse() accepts, json-c
 * (strict, as scim_map_page_parse() runs it) accepts with the same content;
 * scim_map_page_read() gives what scim_map_page_parse() gives.  Checked on
 * chosen texts and on thousands of seeded mutations of a SCIM page. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "modules/nsscache/scim-json.h"
#include "modules/nsscache/scim-map.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "../lib/check-run.h"

#define CW "urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser"

static const char page[] =
        "{\"schemas\":[\"urn:ietf:params:scim:api:messages:2.0:ListResponse\"],\"totalResults\":3,"
        "\"startIndex\":1,\"itemsPerPage\":3,\"Resources\":[\n"
        " {\"id\":\"u-1\",\"userName\":\"ada@example.com\",\"active\":true,\"name\":{\"givenName\":\"Ada\","
        "\"familyName\":\"Lovel\\u00e2ce \\u20ac\"},\"" CW "\":{\"sunkPosixUsername\":\"ada\","
        "\"sunkPosixUserId\":20001,\"sunkPosixGroupId\":\"30001\",\"sunkLoginShell\":\"/bin/bash\","
        "\"sunkSshKeys\":[\"ssh-ed25519 AAAAC3 ada@laptop\",\"ssh-rsa AAAAB3 \\\"q\\\" \\\\ \\/ \\t\"]}},\n"
        " {\"id\":\"u-2\",\"userName\":\"gr\xc3\xa2" "ce\",\"active\":false,\"meta\":null,\"" CW "\":"
        "{\"sunkPosixUsername\":\"grace\",\"sunkPosixUserId\":-20002,\"x\":[[],{},[0,1,-1]]}},\n"
        " {\"id\":\"u-3\",\"" CW "\":{\"sunkPosixUsername\":\"linus\",\"sunkPosixUserId\":123456789012345678}}\n"
        "]}\r\n";

/* json-c as scim_map_page_parse() runs it; *ok says whether it took @buf
 * (the value may be NULL: JSON null). */
static json_object *jsonc_parse(const char *buf, size_t len, bool *ok) {
        json_tokener *tok = json_tokener_new_ex(SCIM_JSON_DEPTH_MAX);
        json_object *o;
        size_t end;

        ck_assert_ptr_nonnull(tok);
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        o = json_tokener_parse_ex(tok, buf, (int) len);
        *ok = json_tokener_get_error(tok) == json_tokener_success;
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        for (; *ok && end < len; end++)
                if (!strchr(" \t\r\n", buf[end]))
                        *ok = false;
        if (!*ok) {
                json_object_put(o);
                o = NULL;
        }
        return o;
}

/* Return: whether the fast parser took @buf; fails the test if it read it otherwise than json-c. */
static bool same_as_jsonc(const char *buf, size_t len) {
        _cleanup_(scim_json_freep) ScimJsonDoc *fast = NULL, *conv = NULL;
        json_object *o;
        bool ok;
        int r = scim_json_parse(buf, len, &fast);

        ck_assert_msg(r == 0 || r == -EAGAIN, "scim_json_parse: %d", r);
        if (r < 0)
                return false;
        o = jsonc_parse(buf, len, &ok);
        ck_assert_msg(ok, "json-c refused what the fast parser took: %.*s", (int) MIN(len, (size_t) 200), buf);
        ck_assert_int_eq(scim_json_from_jsonc(o, &conv), 0);
        json_object_put(o);
        ck_assert_msg(scim_json_equal(scim_json_root(fast), scim_json_root(conv)),
                      "trees differ: %.*s", (int) MIN(len, (size_t) 200), buf);
        return true;
}

/* scim_map_page_read() against scim_map_page_parse(): result, error, counts, Resources. */
static void same_page(const char *buf, size_t len) {
        _cleanup_free_ char *e1 = NULL, *e2 = NULL;
        ScimPage a = { 0 }, b = { 0 };
        int ra = scim_map_page_read(buf, len, &a, &e1), rb = scim_map_page_parse(buf, len, &b, &e2);

        ck_assert_int_eq(ra, rb);
        if (ra < 0) {
                ck_assert_str_eq(e1, e2);
                return;
        }
        ck_assert_int_eq(a.total_results, b.total_results);
        ck_assert_int_eq(a.start_index, b.start_index);
        ck_assert_int_eq(a.items_per_page, b.items_per_page);
        ck_assert_uint_eq(a.n_resources, b.n_resources);
        ck_assert(!a.items == !b.resources);
        if (b.resources) {
                _cleanup_(scim_json_freep) ScimJsonDoc *conv = NULL;

                ck_assert_int_eq(scim_json_from_jsonc(b.resources, &conv), 0);
                ck_assert(scim_json_equal(a.items, scim_json_root(conv)));
        }
        scim_map_page_done(&a);
        scim_map_page_done(&b);
}

static bool check(const char *buf, size_t len) {
        same_page(buf, len);
        return same_as_jsonc(buf, len);
}

START_TEST(test_fast_path_taken) {
        static const char *const texts[] = {
                "{}", "[]", "[0]", "[-7]", "[123456789012345678]", "[true]", "[false]", "[null]", "[\"\"]",
                " { \"a\" : [ 1 , 2 ] , \"b\" : { } }\n", "[\"\\u0001\\u007f\\u0080\\u07ff\\u0800\\uffff\"]",
                "[\"raw \xc3\xa9 \xff\xfe bytes\"]", "{\"\":1}", "[null,true,false,\"x\",{\"k\":\"v\"}]",
        };

        ck_assert(check(page, strlen(page)));
        for (size_t i = 0; i < ELEMENTSOF(texts); i++)
                ck_assert_msg(check(texts[i], strlen(texts[i])), "not taken: %s", texts[i]);
}
END_TEST

START_TEST(test_fallback) {
        static const char *const texts[] = {
                "", " ", "{", "{\"a\":1,}", "[1,]", "{\"a\":1,\"a\":2}", "{\"a\\u0062\":1}", "[\"\\u0000\"]",
                "[\"\\ud83d\\ude00\"]", "[\"\\udc00\"]", "[\"tab\there\"]", "[01]", "[-0]", "[1.5]", "[1e3]", "[-]",
                "[1234567890123456789]", "[\"\\x\"]", "[\"\\u12\"]", "[True]", "[nul]", "[nullx]", "{\"a\" 1}",
                "0", "true", "\"s\"",
                "\v{}", "{}\f", "{} x", "'a'", "/* c */ {}", "{\"a\":1}{}", "[1 2]", "\"unterminated",
                "{\"k\x01\":1}",
        };
        char deep[2 * (SCIM_JSON_FAST_DEPTH_MAX + 1) + 1] = "";
        _cleanup_free_ char *wide = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&wide, &n);

        for (size_t i = 0; i < ELEMENTSOF(texts); i++)
                ck_assert_msg(!check(texts[i], strlen(texts[i])), "taken: %s", texts[i]);
        ck_assert(!check("{\"a\":\0}", 7));
        ck_assert(!check("{} \0", 4));
        for (int i = 0; i <= SCIM_JSON_FAST_DEPTH_MAX; i++)
                strcat(deep, "[");
        for (int i = 0; i <= SCIM_JSON_FAST_DEPTH_MAX; i++)
                strcat(deep, "]");
        ck_assert(!check(deep, strlen(deep)));
        ck_assert(check(deep + 1, strlen(deep) - 2));
        fputc('{', f);
        for (int i = 0; i <= SCIM_JSON_FAST_MEMBERS_MAX; i++)
                fprintf(f, "%s\"k%d\":%d", i ? "," : "", i, i);
        fputc('}', f);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert(!check(wide, n));
}
END_TEST

START_TEST(test_mutations) {
        static const char alphabet[] = "{}[]\",:\\/ \t\n\r0123456789-+.eEtrufalsn\x01\x1f\x7f\xc3\xa9\xff\xed\xa0";
        char buf[sizeof(page) + 64];
        unsigned seed = 20240601, fast = 0;
        size_t len;

        for (int i = 0; i < 20000; i++) {
                memcpy(buf, page, sizeof(page));
                len = sizeof(page) - 1;
                for (int k = 1 + rand_r(&seed) % 3; k > 0; k--) {
                        size_t at = (size_t) rand_r(&seed) % len;
                        char c = alphabet[(size_t) rand_r(&seed) % (sizeof(alphabet) - 1)];

                        switch (rand_r(&seed) % 4) {
                        case 0:
                                buf[at] = c;
                                break;
                        case 1:
                                memmove(buf + at, buf + at + 1, len - at - 1);
                                len--;
                                break;
                        case 2:
                                if (len + 1 < sizeof(buf)) {
                                        memmove(buf + at + 1, buf + at, len - at);
                                        buf[at] = c;
                                        len++;
                                }
                                break;
                        default:
                                buf[at] = '\\';
                                break;
                        }
                }
                fast += check(buf, len);
        }
        /* many mutants stay valid and take the fast path: the comparison is not vacuous */
        ck_assert_uint_gt(fast, 1000);
}
END_TEST

START_TEST(test_mapping_same) {
        ScimConfig *c = NULL;
        _cleanup_free_ char *err = NULL;
        static const char conf_text[] =
                "[DEFAULT]\nmaps=passwd,shadow,sshkey\nscim_base_url=https://scim.example/v2\n"
                "[passwd]\nscim_path_uid=" CW "/sunkPosixUserId\nscim_path_username=" CW "/sunkPosixUsername\n"
                "scim_path_gid=" CW "/sunkPosixGroupId\nscim_path_login_shell=" CW "/sunkLoginShell\n"
                "[sshkey]\nscim_path_ssh_keys=" CW "/sunkSshKeys\nscim_path_username=" CW "/sunkPosixUsername\n"
                "[shadow]\nscim_path_username=" CW "/sunkPosixUsername\n";
        _cleanup_(scim_map_freep) ScimMapper *a = NULL, *b = NULL;
        CacheFormatted ta[_NSS_MAP_MAX], tb[_NSS_MAP_MAX];
        ScimPage pa = { 0 }, pb = { 0 };

        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        ck_assert_int_eq(nsscache_conf_parse_ini(c, conf_text, strlen(conf_text), "t", &err), 0);
        ck_assert_int_eq(nsscache_conf_finalize(c, &err), 0);
        ck_assert_int_eq(scim_map_new_formatted(c, &a), 0);
        ck_assert_int_eq(scim_map_new_formatted(c, &b), 0);
        ck_assert_int_eq(scim_map_page_read(page, strlen(page), &pa, &err), 0);
        ck_assert_int_eq(scim_map_page_parse(page, strlen(page), &pb, &err), 0);
        ck_assert_int_eq(scim_map_add_user_items(a, pa.items), 0);
        ck_assert_int_eq(scim_map_add_users(b, pb.resources), 0);
        ck_assert_int_eq(scim_map_rejects(a)->total, scim_map_rejects(b)->total);
        scim_map_take_formatted(a, ta);
        scim_map_take_formatted(b, tb);
        ck_assert_uint_gt(ta[NSS_MAP_PASSWD].entries, 0);
        ck_assert_uint_gt(ta[NSS_MAP_SSHKEY].entries, 0);
        for (NssMapType t = 0; t < _NSS_MAP_MAX; t++) {
                ck_assert_uint_eq(ta[t].buf.len, tb[t].buf.len);
                ck_assert_mem_eq(ta[t].buf.data ?: "", tb[t].buf.data ?: "", ta[t].buf.len);
                cache_formatted_done(ta + t);
                cache_formatted_done(tb + t);
        }
        scim_map_page_done(&pa);
        scim_map_page_done(&pb);
        nsscache_conf_free(c);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("scim-json");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_fast_path_taken);
        tcase_add_test(tc, test_fallback);
        tcase_add_test(tc, test_mutations);
        tcase_add_test(tc, test_mapping_same);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
