/* Unit tests for the Varlink codec: every class of malformed frame, the
 * limits at their boundaries, duplicate keys however they are spelled, and
 * random input that must never crash or be half-accepted. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/varlink.h"
#include "../lib/check-run.h"

#define MAX 65535
#define DEPTH 16

static int parse_n(const char *s, size_t len, size_t max, unsigned depth) {
        json_object *o = NULL;
        int r = varlink_parse(s, len, max, depth, &o);

        if (r == 0)
                ck_assert(json_object_is_type(o, json_type_object));
        else
                ck_assert_ptr_null(o);
        json_object_put(o);
        return r;
}

static int parse(const char *s) {
        return parse_n(s, strlen(s), MAX, DEPTH);
}

START_TEST(test_valid) {
        ck_assert_int_eq(parse("{}"), 0);
        ck_assert_int_eq(parse(" \t\r\n{\"method\":\"io.sunkd.Agent.Status\"} \n"), 0);
        ck_assert_int_eq(parse("{\"a\":[1,-2.5e3,0,true,false,null,\"x\",{},[]]}"), 0);
        ck_assert_int_eq(parse("{\"s\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\"}"), 0);
        ck_assert_int_eq(parse("{\"s\":\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"}"), 0);
        ck_assert_int_eq(parse("{\"a\":{\"a\":{\"a\":1}},\"b\":{\"a\":1}}"), 0);
        ck_assert_int_eq(parse("{\"n\":-0.0E+1,\"m\":1e-2}"), 0);
}
END_TEST

START_TEST(test_size) {
        char *b = malloc(MAX + 2);
        size_t n;

        ck_assert_ptr_nonnull(b);
        /* {"k":"xxx...x"} of exactly MAX bytes, then one more. */
        memset(b, 'x', MAX + 2);
        memcpy(b, "{\"k\":\"", 6);
        n = MAX;
        memcpy(b + n - 2, "\"}", 2);
        ck_assert_int_eq(parse_n(b, n, MAX, DEPTH), 0);
        memcpy(b + n - 2, "x\"}", 3);
        ck_assert_int_eq(parse_n(b, n + 1, MAX, DEPTH), -EMSGSIZE);
        ck_assert_int_eq(parse_n("{}", 2, 1, DEPTH), -EMSGSIZE);
        ck_assert_int_eq(parse_n("{}", 2, 2, DEPTH), 0);
        free(b);
}
END_TEST

static char *nested(unsigned levels, bool arrays) {
        /* {"a":{"a":...{}...}} or {"a":[[...]]} */
        char *b = malloc(levels * 8 + 16), *p = b;

        ck_assert_ptr_nonnull(b);
        for (unsigned i = 0; i < levels; i++)
                p = stpcpy(p, arrays && i > 0 ? "[" : "{\"a\":");
        p = stpcpy(p, "1");
        for (unsigned i = levels; i > 0; i--)
                p = stpcpy(p, arrays && i > 1 ? "]" : "}");
        *p = 0;
        return b;
}

START_TEST(test_depth) {
        char *b;

        /* DEPTH levels of containers pass, one more does not. */
        b = nested(DEPTH, false);
        ck_assert_int_eq(parse(b), 0);
        free(b);
        b = nested(DEPTH + 1, false);
        ck_assert_int_eq(parse(b), -ELOOP);
        free(b);
        b = nested(DEPTH, true);
        ck_assert_int_eq(parse(b), 0);
        free(b);
        b = nested(DEPTH + 1, true);
        ck_assert_int_eq(parse(b), -ELOOP);
        free(b);
        /* Far too deep, and unbalanced: refused, without recursion trouble. */
        b = nested(20000, true);
        ck_assert_int_eq(parse_n(b, strlen(b), strlen(b), DEPTH), -ELOOP);
        b[strlen(b) / 2] = 0;
        ck_assert_int_eq(parse_n(b, strlen(b), strlen(b), DEPTH), -ELOOP);
        free(b);
        ck_assert_int_eq(parse_n("{}", 2, 10, 1), 0);
        ck_assert_int_eq(parse_n("{\"a\":[]}", 8, 10, 1), -ELOOP);
        ck_assert_int_eq(parse_n("{}", 2, 10, 0), -EINVAL);
}
END_TEST

START_TEST(test_duplicate_keys) {
        ck_assert_int_eq(parse("{\"a\":1,\"a\":2}"), -ENOTUNIQ);
        ck_assert_int_eq(parse("{\"a\":1,\"a\":1}"), -ENOTUNIQ);
        ck_assert_int_eq(parse("{\"method\":\"x.Y\",\"b\":{},\"method\":\"x.Z\"}"), -ENOTUNIQ);
        ck_assert_int_eq(parse("{\"p\":{\"x\":1,\"y\":2,\"x\":3}}"), -ENOTUNIQ);
        ck_assert_int_eq(parse("{\"a\":[1,{\"k\":1,\"k\":{}}]}"), -ENOTUNIQ);
        ck_assert_int_eq(parse("{\"a\":{\"b\":1},\"a\":[1]}"), -ENOTUNIQ);
        ck_assert_int_eq(parse("{\"a\":{\"x\":1,\"x\":2},\"a\":1}"), -ENOTUNIQ);
        ck_assert_int_eq(parse("{\"a\":1,\"b\":{\"c\":[{\"d\":1}]},\"a\":{\"c\":[{\"d\":1}]}}"), -ENOTUNIQ);
        /* The same key spelled two ways is still the same key. */
        ck_assert_int_eq(parse("{\"a\":1,\"\\u0061\":2}"), -ENOTUNIQ);
        ck_assert_int_eq(parse("{\"\\u00e9\":1,\"\xc3\xa9\":2}"), -ENOTUNIQ);
        ck_assert_int_eq(parse("{\"/\":1,\"\\/\":2}"), -ENOTUNIQ);
        /* Same names in different objects are fine. */
        ck_assert_int_eq(parse("{\"a\":{\"a\":1},\"b\":{\"a\":1},\"c\":[{\"a\":1},{\"a\":2}]}"), 0);
        ck_assert_int_eq(parse("{\"a\":1,\"A\":2,\"a \":3}"), 0);
}
END_TEST

START_TEST(test_encoding) {
        static const char *const bad[] = {
                "{\"s\":\"\xc0\x80\"}",         /* overlong NUL */
                "{\"s\":\"\xc1\xbf\"}",         /* overlong */
                "{\"s\":\"\xe0\x80\xaf\"}",     /* overlong '/' */
                "{\"s\":\"\xed\xa0\x80\"}",     /* encoded surrogate */
                "{\"s\":\"\xf4\x90\x80\x80\"}", /* above U+10FFFF */
                "{\"s\":\"\xf5\x80\x80\x80\"}",
                "{\"s\":\"\xff\"}",
                "{\"s\":\"\x80\"}",     /* lone continuation */
                "{\"s\":\"\xe2\x82\"}", /* truncated sequence */
                "{\"s\":1}\xc3",        /* truncated at the end */
                "{\"\xfe\":1}",
                "{\"s\":\"\\u0000\"}", /* NUL by escape */
                "{\"a\\u0000b\":1}",
                "{\"s\":\"\\ud800\"}", /* lone high surrogate */
                "{\"s\":\"\\udc00\"}", /* lone low surrogate */
                "{\"s\":\"\\ud800\\u0041\"}",
                "{\"s\":\"\\ud800x\"}",
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(parse(bad[i]) == -EILSEQ, "case %zu: %d", i, parse(bad[i]));

        /* A raw NUL inside the frame. */
        ck_assert_int_eq(parse_n("{\"a\":\"x\0\"}", 10, MAX, DEPTH), -EILSEQ);
        ck_assert_int_eq(parse_n("{}\0", 3, MAX, DEPTH), -EILSEQ);
}
END_TEST

START_TEST(test_syntax) {
        static const char *const bad[] = {
                "",
                "   ",
                "{",
                "{\"a\"",
                "{\"a\":",
                "{\"a\":1",
                "{\"a\":1,",
                "{\"a\":\"x",
                "{\"a\":\"x\\",
                "{\"a\":tru}",
                "{\"a\":1}}",
                "{\"a\":1} x",
                "{\"a\":1}{\"b\":2}",
                "{}[]",
                "[]",
                "[{\"a\":1}]",
                "\"x\"",
                "1",
                "null",
                "true",
                "{'a':1}",
                "{\"a\":'x'}",
                "{a:1}",
                "{\"a\":NaN}",
                "{\"a\":Infinity}",
                "{\"a\":-Infinity}",
                "{\"a\":1,}",
                "{\"a\":[1,]}",
                "{,\"a\":1}",
                "{\"a\":01}",
                "{\"a\":1.}",
                "{\"a\":.5}",
                "{\"a\":+1}",
                "{\"a\":1e}",
                "{\"a\":0x10}",
                "{\"a\":\"\t\"}",
                "{\"a\":\"\x01\"}",
                "{\"a\":\"\\x41\"}",
                "{\"a\":\"\\u12\"}",
                "{\"a\":\"\\u12g4\"}",
                "{\"a\" 1}",
                "{\"a\"::1}",
                "{\"a\":1 \"b\":2}",
                "{\"a\":[1 2]}",
                "/* c */{}",
                "{}//",
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(parse(bad[i]) == -EBADMSG, "case %zu '%s': %d", i, bad[i], parse(bad[i]));
}
END_TEST

START_TEST(test_partial_frames) {
        /* Every proper prefix of a message is a broken frame, never a message. */
        const char *msg = "{\"method\":\"io.sunkd.Agent.Status\",\"parameters\":"
                          "{\"x\":[1,2.5,\"\\u00e9\",true,"
                          "null,{\"y\":false}]},\"oneway\":true}";

        for (size_t n = 0; n < strlen(msg); n++) {
                int r = parse_n(msg, n, MAX, DEPTH);

                ck_assert_msg(r == -EBADMSG, "prefix %zu: %d", n, r);
        }
        ck_assert_int_eq(parse(msg), 0);
}
END_TEST

START_TEST(test_parse_call) {
        static const char *const bad[] = {
                "{}",
                "{\"parameters\":{}}",
                "{\"method\":1}",
                "{\"method\":null}",
                "{\"method\":\"\"}",
                "{\"method\":\"NoDot\"}",
                "{\"method\":\".a.B\"}",
                "{\"method\":\"a.B.\"}",
                "{\"method\":\"a..B\"}",
                "{\"method\":\"a.B C\"}",
                "{\"method\":\"a.B\\n\"}",
                "{\"method\":\"a.\xc3\xa9\"}",
                "{\"method\":\"a.B\",\"parameters\":[]}",
                "{\"method\":\"a.B\",\"parameters\":null}",
                "{\"method\":\"a.B\",\"parameters\":\"x\"}",
                "{\"method\":\"a.B\",\"oneway\":1}",
                "{\"method\":\"a.B\",\"more\":\"yes\"}",
                "{\"method\":\"a.B\",\"extra\":1}",
                "{\"method\":\"a.B\",\"error\":\"x.Y\"}",
        };
        json_object *o, *params;
        const char *method;
        char *longname;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_assert_int_eq(varlink_parse(bad[i], strlen(bad[i]), MAX, DEPTH, &o), 0);
                ck_assert_msg(varlink_parse_call(o, &method, &params) == -EBADMSG, "case %zu", i);
                json_object_put(o);
        }

        /* Absent parameters become an empty object owned by the message. */
        ck_assert_int_eq(varlink_parse("{\"method\":\"io.sunkd.Agent.Status\"}", 34, MAX, DEPTH, &o), 0);
        ck_assert_int_eq(varlink_parse_call(o, &method, &params), 0);
        ck_assert_str_eq(method, "io.sunkd.Agent.Status");
        ck_assert(json_object_is_type(params, json_type_object));
        ck_assert_int_eq(json_object_object_length(params), 0);
        json_object_put(o);

        const char *full = "{\"method\":\"io.sunkd.X-y.Get_1\",\"parameters\":{\"user\":\"alice\"},"
                           "\"oneway\":true,\"more\":false,\"upgrade\":false}";
        ck_assert_int_eq(varlink_parse(full, strlen(full), MAX, DEPTH, &o), 0);
        ck_assert_int_eq(varlink_parse_call(o, &method, &params), 0);
        ck_assert_str_eq(method, "io.sunkd.X-y.Get_1");
        ck_assert_str_eq(json_object_get_string(json_object_object_get(params, "user")), "alice");
        json_object_put(o);

        /* Method names: 255 bytes pass, 256 do not. */
        longname = malloc(257);
        memset(longname, 'a', 256);
        longname[1] = '.';
        longname[255] = 0;
        ck_assert(varlink_method_name_is_valid(longname, 255));
        longname[255] = 'a';
        longname[256] = 0;
        ck_assert(!varlink_method_name_is_valid(longname, 256));
        free(longname);

        ck_assert_int_eq(varlink_parse_call(NULL, &method, &params), -EINVAL);
}
END_TEST

START_TEST(test_format) {
        json_object *o = json_object_new_object(), *back = NULL;
        char *s = NULL;
        size_t len = 0;

        json_object_object_add(o, "parameters", json_object_new_object());
        json_object_object_add(json_object_object_get(o, "parameters"), "path",
                               json_object_new_string("/run/sunkd/io.sunkd \xc3\xa9"));
        ck_assert_int_eq(varlink_format(o, &s, &len), 0);
        ck_assert_uint_eq(len, strlen(s) + 1);
        ck_assert_int_eq(s[len - 1], 0);
        ck_assert_str_eq(s, "{\"parameters\":{\"path\":\"/run/sunkd/io.sunkd \xc3\xa9\"}}");
        ck_assert_int_eq(varlink_parse(s, len - 1, MAX, DEPTH, &back), 0);
        ck_assert(json_object_equal(o, back));
        json_object_put(back);
        free(s);

        /* Whatever we would send must be something we would accept. */
        json_object_object_add(o, "bad", json_object_new_string("\xff"));
        ck_assert_int_eq(varlink_format(o, &s, &len), -EILSEQ);
        json_object_put(o);

        o = json_object_new_array();
        ck_assert_int_eq(varlink_format(o, &s, &len), -EINVAL);
        json_object_put(o);
}
END_TEST

static bool known_error(int r) {
        return r == 0 || r == -EMSGSIZE || r == -EILSEQ || r == -ELOOP || r == -ENOTUNIQ || r == -EBADMSG;
}

static void check_any(const char *b, size_t n) {
        json_object *o = NULL, *params, *back = NULL;
        const char *method;
        char *s;
        size_t len;
        int r;

        r = varlink_parse(b, n, 4096, 8, &o);
        ck_assert_msg(known_error(r), "unexpected %d", r);
        if (r < 0)
                return;
        /* Accepted input survives a round trip unchanged. */
        ck_assert_int_eq(varlink_format(o, &s, &len), 0);
        ck_assert_int_eq(varlink_parse(s, len - 1, 8192, 8, &back), 0);
        ck_assert(json_object_equal(o, back));
        (void) varlink_parse_call(o, &method, &params);
        json_object_put(back);
        json_object_put(o);
        free(s);
}

START_TEST(test_random) {
        static const char alphabet[] = "{}[]\":,\\ u0123456789abcdefeE.-+tfnrl\x80\xc3\xa9\xed\xff";
        static const char *const seeds[] = {
                "{\"method\":\"a.B\",\"parameters\":{\"k\":[1,2,{\"x\":\"\\u00e9\"}]}}",
                "{\"a\":{\"b\":{\"c\":[true,false,null,-1.5e2]}},\"d\":\"\xc3\xa9\"}",
        };
        char b[512];

        srand(20240611);
        for (int i = 0; i < 20000; i++) {
                size_t n = (size_t) rand() % sizeof(b);

                for (size_t j = 0; j < n; j++)
                        b[j] = i % 2 ? (char) (rand() & 0xff)
                                     : alphabet[(size_t) rand() % (sizeof(alphabet) - 1)];
                check_any(b, n);
        }
        /* Mutations of valid messages: flips, deletions, duplications. */
        for (int i = 0; i < 20000; i++) {
                const char *seed = seeds[i % 2];
                size_t n = strlen(seed), k = (size_t) rand() % n;

                memcpy(b, seed, n);
                switch (rand() % 3) {
                case 0:
                        b[k] = alphabet[(size_t) rand() % (sizeof(alphabet) - 1)];
                        break;
                case 1:
                        memmove(b + k, b + k + 1, n - k - 1);
                        n--;
                        break;
                default:
                        memmove(b + k + 1, b + k, n - k);
                        n++;
                        break;
                }
                check_any(b, n);
        }
}
END_TEST

static Suite *varlink_suite(void) {
        Suite *s = suite_create("varlink");
        TCase *tc = tcase_create("codec");

        tcase_add_test(tc, test_valid);
        tcase_add_test(tc, test_size);
        tcase_add_test(tc, test_depth);
        tcase_add_test(tc, test_duplicate_keys);
        tcase_add_test(tc, test_encoding);
        tcase_add_test(tc, test_syntax);
        tcase_add_test(tc, test_partial_frames);
        tcase_add_test(tc, test_parse_call);
        tcase_add_test(tc, test_format);
        tcase_add_test(tc, test_random);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(varlink_suite());
}
