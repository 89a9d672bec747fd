/* Unit tests for sunkctl's generic verb: KEY=VALUE words into parameters
 * (every malformed word refused, naming it), module and verb words into a
 * method name, and the generic renderer (tables, nesting, control bytes). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/sunkctl-params.h"
#include "client/sunkctl-render.h"
#include "client/sunkctl-view.h"
#include "client/sunkctl.h"
#include "../lib/check-run.h"

static char err[256];

/* params_parse() of the NULL-terminated @words, as compact JSON (static), or NULL. */
static const char *parse(const char *const *words) {
        static char out[4096];
        json_object *o = NULL;
        size_t n = 0;
        int r;

        while (words[n])
                n++;
        err[0] = '\0';
        r = params_parse((char *const *) words, n, &o, err, sizeof(err));
        if (r < 0) {
                ck_assert_int_eq(r, -EINVAL);
                ck_assert_ptr_null(o);
                ck_assert(err[0] != '\0');
                return NULL;
        }
        snprintf(out, sizeof(out), "%s", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        json_object_put(o);
        return out;
}

#define PARSE(...) parse((const char *const[]){ __VA_ARGS__, NULL })

START_TEST(test_params_values) {
        ck_assert_str_eq(PARSE("a=1", "b=-2", "c=0", "d=1.5", "e=2e3", "f=-2.5E-1"),
                         "{\"a\":1,\"b\":-2,\"c\":0,\"d\":1.5,\"e\":2000.0,\"f\":-0.25}");
        ck_assert_str_eq(PARSE("t=true", "f=false", "n=null", "T=True"),
                         "{\"t\":true,\"f\":false,\"n\":\"null\",\"T\":\"True\"}");
        /* not JSON numbers: strings as written */
        ck_assert_str_eq(
                PARSE("a=01", "b=+1", "c=1.", "d=.5", "e=0x10", "f=1e", "g=-", "h=NaN", "i=Infinity"),
                "{\"a\":\"01\",\"b\":\"+1\",\"c\":\"1.\",\"d\":\".5\",\"e\":\"0x10\","
                "\"f\":\"1e\",\"g\":\"-\",\"h\":\"NaN\",\"i\":\"Infinity\"}");
        ck_assert_str_eq(PARSE("s=\"42\"", "u=\"a\\u00e9\\n\"", "q=\"\""),
                         "{\"s\":\"42\",\"u\":\"a\xc3\xa9\\n\",\"q\":\"\"}");
        ck_assert_str_eq(PARSE("empty=", "eq=a=b", "sp=a b", "_k9=x"),
                         "{\"empty\":\"\",\"eq\":\"a=b\",\"sp\":\"a b\",\"_k9\":\"x\"}");
        ck_assert_str_eq(PARSE("max=9223372036854775807", "min=-9223372036854775808"),
                         "{\"max\":9223372036854775807,\"min\":-9223372036854775808}");
        ck_assert_str_eq(parse((const char *const[]){ NULL }), "{}");
}
END_TEST

START_TEST(test_params_refused) {
        ck_assert_ptr_null(PARSE("novalue"));
        ck_assert_ptr_nonnull(strstr(err, "'novalue'"));
        ck_assert_ptr_nonnull(strstr(err, "KEY=VALUE"));
        ck_assert_ptr_null(PARSE("=x"));
        ck_assert_ptr_nonnull(strstr(err, "'=x'"));
        ck_assert_ptr_null(PARSE("1a=x"));
        ck_assert_ptr_null(PARSE("a-b=x"));
        ck_assert_ptr_null(PARSE("a.b=x"));
        ck_assert_ptr_null(PARSE("k\xc3\xa9=x"));
        ck_assert_ptr_null(PARSE("a=1", "b=2", "a=3"));
        ck_assert_ptr_nonnull(strstr(err, "'a=3'"));
        ck_assert_ptr_nonnull(strstr(err, "twice"));
        ck_assert_ptr_null(PARSE("n=9223372036854775808"));
        ck_assert_ptr_nonnull(strstr(err, "64 bits"));
        ck_assert_ptr_null(PARSE("n=-9223372036854775809"));
        ck_assert_ptr_null(PARSE("n=1e400"));
        ck_assert_ptr_null(PARSE("s=\"open"));
        ck_assert_ptr_null(PARSE("s=\"a\"b"));
        ck_assert_ptr_null(PARSE("s=\"a\" "));
        ck_assert_ptr_null(PARSE("s=\""));
        ck_assert_ptr_null(PARSE("ok=1", ""));
}
END_TEST

/* A huge word is refused with a short message: the word cut, not echoed whole;
 * a huge value is a value, whose size the daemon judges. */
START_TEST(test_params_huge) {
        size_t n = 1 << 20;
        char *w = malloc(n + 1);
        json_object *o = NULL, *v;

        ck_assert_ptr_nonnull(w);
        memset(w, 'k', n);
        w[n] = '\0';
        ck_assert_ptr_null(parse((const char *const[]){ w, NULL }));
        ck_assert_uint_lt(strlen(err), 200);
        ck_assert_ptr_nonnull(strstr(err, "..."));
        memcpy(w, "v=", 2);
        ck_assert_int_eq(params_parse(&w, 1, &o, err, sizeof(err)), 0);
        ck_assert(json_object_object_get_ex(o, "v", &v));
        ck_assert_uint_eq(strlen(json_object_get_string(v)), n - 2);
        json_object_put(o);
        free(w);
}
END_TEST

/* The modules' views, as the build linked them: one per module, flags that
 * getopt can tell apart from sunkctl's own and from each other, each for a
 * verb its module has, no more than Ctl keeps. */
START_TEST(test_views) {
        static const char *const own[] = {
                "socket", "json", "timeout", "help", "version", "output", "force"
        };
        const SunkctlView *v, *w;
        const SunkctlFlag *f;
        size_t n = 0;

        ck_assert_ptr_nonnull(sunkctl_views[0]);
        for (size_t i = 0; sunkctl_views[i]; i++) {
                v = sunkctl_views[i];
                ck_assert_ptr_eq(ctl_view(v->module), v);
                ck_assert_ptr_nonnull(v->methods);
                for (size_t k = 0; k < i; k++)
                        ck_assert_str_ne(sunkctl_views[k]->module, v->module);
                for (const SunkctlMethodView *m = v->methods; m->verb; m++)
                        ck_assert_ptr_nonnull(m->render);
                /* a verb -o writes to a file is one the view renders */
                for (const char *const *o = v->output_verbs; o && *o; o++) {
                        bool found = false;

                        for (const SunkctlMethodView *m = v->methods; m->verb; m++)
                                found |= strcmp(m->verb, *o) == 0;
                        ck_assert_msg(found, "%s: -o for '%s', which it does not render", v->module, *o);
                }
        }
        ck_assert_ptr_null(ctl_view("no-such-module"));
        for (size_t i = 0; (f = ctl_flag_at(i, &v)); i++, n++) {
                ck_assert_ptr_nonnull(f->help);
                ck_assert_ptr_nonnull(f->verb);
                ck_assert(!f->waits || f->param);
                for (size_t k = 0; k < sizeof(own) / sizeof(own[0]); k++)
                        ck_assert_str_ne(f->name, own[k]);
                for (size_t k = 0; k < i; k++)
                        ck_assert_str_ne(ctl_flag_at(k, &w)->name, f->name);
        }
        ck_assert_uint_le(n, SUNKCTL_FLAGS_MAX);
}
END_TEST

START_TEST(test_method_names) {
        char m[256];
        const char *bad;

        ck_assert_int_eq(module_method_name("gres", "list", m, sizeof(m), &bad), 0);
        ck_assert_str_eq(m, "io.sunkd.Gres.List");
        ck_assert_int_eq(module_method_name("test", "metric-add", m, sizeof(m), &bad), 0);
        ck_assert_str_eq(m, "io.sunkd.Test.MetricAdd");
        ck_assert_int_eq(module_method_name("authkeys", "get", m, sizeof(m), &bad), 0);
        ck_assert_str_eq(m, "io.sunkd.AuthorizedKeys.Get");
        ck_assert_int_eq(module_method_name("AuthorizedKeys", "Get", m, sizeof(m), &bad), 0);
        ck_assert_str_eq(m, "io.sunkd.AuthorizedKeys.Get");
        ck_assert_int_eq(module_method_name("no-reload", "ping2", m, sizeof(m), &bad), 0);
        ck_assert_str_eq(m, "io.sunkd.NoReload.Ping2");

        ck_assert_int_eq(module_method_name("te_st", "echo", m, sizeof(m), &bad), -EINVAL);
        ck_assert_str_eq(bad, "te_st");
        ck_assert_int_eq(module_method_name("test", "", m, sizeof(m), &bad), -EINVAL);
        ck_assert_str_eq(bad, "");
        ck_assert_int_eq(module_method_name("test", "a.b", m, sizeof(m), &bad), -EINVAL);
        ck_assert_int_eq(module_method_name("test", "-echo", m, sizeof(m), &bad), -EINVAL);
        ck_assert_int_eq(module_method_name("test", "echo-", m, sizeof(m), &bad), -EINVAL);
        ck_assert_int_eq(module_method_name("test", "a--b", m, sizeof(m), &bad), -EINVAL);
        ck_assert_int_eq(module_method_name("1test", "echo", m, sizeof(m), &bad), -EINVAL);
        ck_assert_int_eq(module_method_name("test", "echo", m, 12, &bad), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_method_name_too_long) {
        char m[256], verb[300];
        const char *bad;

        memset(verb, 'a', sizeof(verb) - 1);
        verb[sizeof(verb) - 1] = '\0';
        ck_assert_int_eq(module_method_name("test", verb, m, sizeof(m), &bad), -ENAMETOOLONG);
        ck_assert_ptr_eq(bad, verb);
        verb[240] = '\0'; /* io.sunkd.Test. + 240 = 254 bytes: still a method name */
        ck_assert_int_eq(module_method_name("test", verb, m, sizeof(m), &bad), 0);
        ck_assert_uint_eq(strlen(m), 254);
}
END_TEST

/* render_reply() of the JSON @text, into a static buffer. */
static const char *render(const char *text) {
        static char *buf;
        size_t len;
        json_object *o = json_tokener_parse(text);
        FILE *f;

        ck_assert_ptr_nonnull(o);
        free(buf);
        f = open_memstream(&buf, &len);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(render_reply(f, o), 0);
        fclose(f);
        json_object_put(o);
        return buf;
}

START_TEST(test_render_scalars) {
        ck_assert_str_eq(render("{}"), "");
        ck_assert_str_eq(render("{\"a\":1,\"long_key\":\"x\",\"t\":true,\"n\":null,\"d\":0.5,\"e\":\"\"}"),
                         "a:        1\n"
                         "long_key: x\n"
                         "t:        true\n"
                         "n:        -\n"
                         "d:        0.5\n"
                         "e:\n");
        ck_assert_str_eq(render("{\"took_duration_usec\":1500000,\"interval_usec\":3600000000,"
                                "\"at_usec\":0}"),
                         "took_duration_usec: 1s500ms\n"
                         "interval_usec:      1h\n"
                         "at_usec:            -\n");
}
END_TEST

START_TEST(test_render_nesting) {
        ck_assert_str_eq(render("{\"gpus\":[{\"index\":0,\"uuid\":\"GPU-a\"},"
                                "{\"index\":10,\"type\":\"h100\"}],\"empty\":[],\"none\":{},"
                                "\"list\":[\"x\",2,\"yy\"],\"sub\":{\"k\":\"v\",\"kk\":[1]}}"),
                         "gpus:\n"
                         "  INDEX  UUID   TYPE\n"
                         "  0      GPU-a  -\n"
                         "  10     -      h100\n"
                         "empty: (none)\n"
                         "none:  (none)\n"
                         "list:\n"
                         "  x\n"
                         "  2\n"
                         "  yy\n"
                         "sub:\n"
                         "  k:  v\n"
                         "  kk:\n"
                         "    1\n");
        /* items that are not all flat objects: one a line, as JSON */
        ck_assert_str_eq(render("{\"m\":[{\"a\":{\"b\":1}},\"s\"]}"), "m:\n"
                                                                      "  {\"a\":{\"b\":1}}\n"
                                                                      "  s\n");
        /* a column's title drops _usec, and the cells say what the times are */
        ck_assert_str_eq(render("{\"r\":[{\"last_duration_usec\":2000}]}"), "r:\n"
                                                                            "  LAST_DURATION\n"
                                                                            "  2ms\n");
}
END_TEST

/* A reply cannot drive the terminal: control bytes in keys and values are escaped. */
START_TEST(test_render_controls) {
        ck_assert_str_eq(render("{\"k\\u001b[2J\":\"a\\u001b]0;owned\\u0007b\\nc\\u007f\"}"),
                         "k\\x1b[2J: a\\x1b]0;owned\\x07b\\x0ac\\x7f\n");
        ck_assert_str_eq(render("{\"t\":[{\"c\\u001b\":\"\\r\"}]}"), "t:\n"
                                                                     "  C\\x1b\n"
                                                                     "  \\x0d\n");
        /* in arrays of nested items json-c's escaping holds */
        ck_assert_str_eq(render("{\"m\":[[\"\\u001b\"]]}"), "m:\n  [\"\\u001b\"]\n");
}
END_TEST

static Suite *sunkctl_suite(void) {
        Suite *s = suite_create("sunkctl");
        TCase *tc = tcase_create("generic");

        tcase_add_test(tc, test_params_values);
        tcase_add_test(tc, test_params_refused);
        tcase_add_test(tc, test_params_huge);
        tcase_add_test(tc, test_views);
        tcase_add_test(tc, test_method_names);
        tcase_add_test(tc, test_method_name_too_long);
        tcase_add_test(tc, test_render_scalars);
        tcase_add_test(tc, test_render_nesting);
        tcase_add_test(tc, test_render_controls);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(sunkctl_suite());
}
