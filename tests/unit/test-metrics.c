/* Prometheus text exposition from the registry. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "../lib/check-run.h"

START_TEST(test_render) {
        Metrics *m;
        MetricFamily *runs, *up, *again;
        char *text;
        size_t len;

        ck_assert_int_eq(metrics_new(&m), 0);
        sunkd_metric_spec s1 = {
                sizeof(s1), "runs_total", "Runs by result.", SUNKD_METRIC_COUNTER, { "job", "result" }
        };
        sunkd_metric_spec s2 = {
                sizeof(s2), "up", "Up with a \\ and\nnewline.", SUNKD_METRIC_GAUGE, { NULL }
        };
        ck_assert_int_eq(metrics_add(m, &s1, &runs), 0);
        ck_assert_int_eq(metrics_add(m, &s2, &up), 0);
        ck_assert_int_eq(metrics_add(m, &s1, &again), 0);
        ck_assert_ptr_eq(again, runs);
        s1.type = SUNKD_METRIC_GAUGE;
        ck_assert_int_eq(metrics_add(m, &s1, &again), -EEXIST);

        ck_assert_int_eq(metrics_add_value(runs, 1, (const char *[]){ "a.b", "success" }), 0);
        ck_assert_int_eq(metrics_add_value(runs, 2, (const char *[]){ "a.b", "success" }), 0);
        ck_assert_int_eq(metrics_add_value(runs, 1, (const char *[]){ "q\"uote\\\n", "failure" }), 0);
        ck_assert_int_eq(metrics_add_value(runs, -1, (const char *[]){ "a.b", "success" }), -EINVAL);
        ck_assert_int_eq(metrics_set(runs, 1, (const char *[]){ "only-one", NULL }), -EINVAL);
        ck_assert_int_eq(metrics_set(up, 0.5, NULL), 0);

        ck_assert_int_eq(metrics_render(m, &text, &len), 0);
        ck_assert_str_eq(text, "# HELP sunkd_runs_total Runs by result.\n"
                               "# TYPE sunkd_runs_total counter\n"
                               "sunkd_runs_total{job=\"a.b\",result=\"success\"} 3\n"
                               "sunkd_runs_total{job=\"q\\\"uote\\\\\\n\",result=\"failure\"} 1\n"
                               "# HELP sunkd_up Up with a \\\\ and\\nnewline.\n"
                               "# TYPE sunkd_up gauge\n"
                               "sunkd_up 0.5\n");
        ck_assert_uint_eq(len, strlen(text));
        free(text);
        metrics_free(m);
}
END_TEST

START_TEST(test_bad_names) {
        Metrics *m;
        MetricFamily *f;

        ck_assert_int_eq(metrics_new(&m), 0);
        sunkd_metric_spec bad[] = {
                { sizeof(sunkd_metric_spec), "1abc", "", SUNKD_METRIC_GAUGE, { NULL } },
                { sizeof(sunkd_metric_spec), "a-b", "", SUNKD_METRIC_GAUGE, { NULL } },
                { sizeof(sunkd_metric_spec), "", "", SUNKD_METRIC_GAUGE, { NULL } },
                { sizeof(sunkd_metric_spec), "ok", "", SUNKD_METRIC_GAUGE, { "bad label" } },
                { sizeof(sunkd_metric_spec), "ok2", "", (sunkd_metric_type) 7, { NULL } },
                { 4, "ok3", "", SUNKD_METRIC_GAUGE, { NULL } },
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_int_eq(metrics_add(m, &bad[i], &f), -EINVAL);
        metrics_free(m);
}
END_TEST

static char *render(Metrics *m) {
        char *text;

        ck_assert_int_eq(metrics_render(m, &text, NULL), 0);
        return text;
}

static const sunkd_metric_spec *gauge(const char *name, const char *label) {
        static sunkd_metric_spec spec;

        spec = (sunkd_metric_spec){ sizeof(spec), name, "A gauge.", SUNKD_METRIC_GAUGE, { label } };
        return &spec;
}

/* A module's families are named after it; the reason names the metric. */
START_TEST(test_module_prefix) {
        static const char gres, dashed;
        static const char *const refused[] = {
                "nsscache_entries", "gres",           "gres_",    "gresx_gpus",
                "sunkd_gres_gpus",  "job_runs_total", "GRES_gpus"
        };
        Metrics *m;
        MetricFamily *f, *g;
        char *error = NULL;

        ck_assert_int_eq(metrics_new(&m), 0);
        ck_assert_int_eq(metrics_add_owned(m, &gres, "gres", true, gauge("gres_gpus", NULL), &f, &error), 0);
        ck_assert_ptr_null(error);
        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
                ck_assert_msg(metrics_add_owned(m, &gres, "gres", true, gauge(refused[i], NULL), &g,
                                                &error) == -EINVAL,
                              "'%s' accepted", refused[i]);
                ck_assert_ptr_nonnull(error);
                ck_assert_msg(strstr(error, "gres_"), "reason: %s", error);
                free(error);
                error = NULL;
        }
        /* Not a valid name at all: said so, with the name. */
        ck_assert_int_eq(metrics_add_owned(m, &gres, "gres", true, gauge("gres-gpus", NULL), &g, &error),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(error, "'gres-gpus'"));
        free(error);
        /* A dash in the module's name is an underscore in its metrics'. */
        ck_assert_int_eq(
                metrics_add_owned(m, &dashed, "my-mod", true, gauge("my_mod_checks", NULL), &g, NULL), 0);
        ck_assert_int_eq(
                metrics_add_owned(m, &dashed, "my-mod", true, gauge("my-mod_checks", NULL), &g, NULL),
                -EINVAL);
        /* The host's own families have no prefix to keep. */
        ck_assert_int_eq(metrics_add(m, gauge("up", NULL), &g), 0);
        /* Not strict (a module built before the rule): let through, with the
         * reason as a warning, and still the module's own. */
        ck_assert_int_eq(metrics_add_owned(m, &gres, "gres", false, gauge("legacy_total", NULL), &f, &error),
                         0);
        ck_assert_ptr_nonnull(strstr(error, "gres_"));
        free(error);
        error = NULL;
        ck_assert_int_eq(
                metrics_add_owned(m, &dashed, "my-mod", false, gauge("legacy_total", NULL), &g, &error),
                -EEXIST);
        ck_assert_ptr_nonnull(strstr(error, "module 'gres'"));
        free(error);
        ck_assert_int_eq(metrics_add_owned(m, &gres, "gres", false, gauge("up", NULL), &g, NULL), -EEXIST);
        metrics_free(m);
}
END_TEST

/* A name is its owner's: nobody else gets the family, whatever its shape. */
START_TEST(test_owner_conflict) {
        static const char a, a_b, job;
        Metrics *m;
        MetricFamily *host, *mine, *f = NULL;
        char *error = NULL, *text;

        ck_assert_int_eq(metrics_new(&m), 0);
        ck_assert_int_eq(metrics_add(m, gauge("job_last_duration_seconds", "job"), &host), 0);
        ck_assert_int_eq(metrics_add_owned(m, &a, "a", true, gauge("a_b_total", NULL), &mine, NULL), 0);

        /* Module "a_b" may use the prefix "a_b_", but "sunkd_a_b_total" is module a's. */
        ck_assert_int_eq(metrics_add_owned(m, &a_b, "a_b", true, gauge("a_b_total", NULL), &f, &error),
                         -EEXIST);
        ck_assert_ptr_null(f);
        ck_assert_msg(strstr(error, "sunkd_a_b_total") && strstr(error, "module 'a'"), "reason: %s", error);
        free(error);
        /* Nor may a module named "job" take the host's family. */
        ck_assert_int_eq(metrics_add_owned(m, &job, "job", true, gauge("job_last_duration_seconds", "job"),
                                           &f, &error),
                         -EEXIST);
        ck_assert_ptr_null(f);
        ck_assert_msg(strstr(error, "sunkd itself"), "reason: %s", error);
        free(error);
        /* Nor the host a module's. */
        ck_assert_int_eq(metrics_add(m, gauge("a_b_total", NULL), &f), -EEXIST);
        ck_assert_ptr_null(f);

        /* The owner again: the same family, or -EEXIST for another shape. */
        ck_assert_int_eq(metrics_add_owned(m, &a, "a", true, gauge("a_b_total", NULL), &f, NULL), 0);
        ck_assert_ptr_eq(f, mine);
        f = NULL;
        ck_assert_int_eq(metrics_add_owned(m, &a, "a", true, gauge("a_b_total", "x"), &f, &error), -EEXIST);
        ck_assert_ptr_null(f);
        ck_assert_ptr_nonnull(strstr(error, "another type or labels"));
        free(error);

        ck_assert_int_eq(metrics_set(mine, 1, NULL), 0);
        text = render(m);
        ck_assert_str_eq(
                text, "# HELP sunkd_a_b_total A gauge.\n# TYPE sunkd_a_b_total gauge\nsunkd_a_b_total 1\n");
        free(text);
        metrics_free(m);
}
END_TEST

/* A module that stops takes its families along; the rest stays. */
START_TEST(test_remove_owner) {
        static const char a, b;
        Metrics *m;
        MetricFamily *host, *a1, *a2, *b1;
        char *text;

        ck_assert_int_eq(metrics_new(&m), 0);
        ck_assert_int_eq(metrics_add_owned(m, &a, "a", true, gauge("a_first", NULL), &a1, NULL), 0);
        ck_assert_int_eq(metrics_add(m, gauge("up", NULL), &host), 0);
        ck_assert_int_eq(metrics_add_owned(m, &b, "b", true, gauge("b_only", "x"), &b1, NULL), 0);
        ck_assert_int_eq(metrics_add_owned(m, &a, "a", true, gauge("a_last", NULL), &a2, NULL), 0);
        ck_assert_int_eq(metrics_set(a1, 1, NULL), 0);
        ck_assert_int_eq(metrics_set(host, 2, NULL), 0);
        ck_assert_int_eq(metrics_set(b1, 3, (const char *[]){ "y" }), 0);
        ck_assert_int_eq(metrics_set(a2, 4, NULL), 0);

        metrics_remove_owner(m, &a);
        metrics_remove_owner(m, NULL); /* the host's stay */
        text = render(m);
        ck_assert_str_eq(
                text, "# HELP sunkd_up A gauge.\n# TYPE sunkd_up gauge\nsunkd_up 2\n"
                      "# HELP sunkd_b_only A gauge.\n# TYPE sunkd_b_only gauge\nsunkd_b_only{x=\"y\"} 3\n");
        free(text);

        /* Registered again, after the last family: the list's end was kept right. */
        ck_assert_int_eq(metrics_add_owned(m, &a, "a", true, gauge("a_last", NULL), &a2, NULL), 0);
        ck_assert_int_eq(metrics_set(a2, 5, NULL), 0);
        metrics_remove_owner(m, &b);
        ck_assert_int_eq(metrics_add_owned(m, &b, "b", true, gauge("b_again", NULL), &b1, NULL), 0);
        ck_assert_int_eq(metrics_set(b1, 6, NULL), 0);
        text = render(m);
        ck_assert_str_eq(text,
                         "# HELP sunkd_up A gauge.\n# TYPE sunkd_up gauge\nsunkd_up 2\n"
                         "# HELP sunkd_a_last A gauge.\n# TYPE sunkd_a_last gauge\nsunkd_a_last 5\n"
                         "# HELP sunkd_b_again A gauge.\n# TYPE sunkd_b_again gauge\nsunkd_b_again 6\n");
        free(text);
        metrics_free(m);
}
END_TEST

START_TEST(test_remove_series) {
        Metrics *m;
        MetricFamily *f, *plain;
        char *text;

        ck_assert_int_eq(metrics_new(&m), 0);
        sunkd_metric_spec spec = {
                sizeof(spec), "xid_total", "XIDs.", SUNKD_METRIC_COUNTER, { "uuid", "bus" }
        };
        ck_assert_int_eq(metrics_add(m, &spec, &f), 0);
        ck_assert_int_eq(metrics_add(m, gauge("plain", NULL), &plain), 0);
        for (int i = 0; i < 3; i++) {
                char uuid[8];
                snprintf(uuid, sizeof(uuid), "GPU-%d", i);
                ck_assert_int_eq(metrics_add_value(f, i + 1, (const char *[]){ uuid, "00" }), 0);
        }
        ck_assert_int_eq(metrics_remove(f, (const char *[]){ "GPU-1", "00" }), 0);
        ck_assert_int_eq(metrics_remove(f, (const char *[]){ "GPU-1", "00" }), -ENOENT);
        ck_assert_int_eq(metrics_remove(f, (const char *[]){ "GPU-0", "01" }), -ENOENT);
        ck_assert_int_eq(metrics_remove(f, (const char *[]){ "GPU-0", NULL }), -EINVAL);
        /* The last one too, then a new one: it goes at the end. */
        ck_assert_int_eq(metrics_remove(f, (const char *[]){ "GPU-2", "00" }), 0);
        ck_assert_int_eq(metrics_add_value(f, 1, (const char *[]){ "GPU-1", "00" }), 0);
        ck_assert_int_eq(metrics_set(plain, 7, NULL), 0);
        text = render(m);
        ck_assert_str_eq(text, "# HELP sunkd_xid_total XIDs.\n# TYPE sunkd_xid_total counter\n"
                               "sunkd_xid_total{uuid=\"GPU-0\",bus=\"00\"} 1\n"
                               "sunkd_xid_total{uuid=\"GPU-1\",bus=\"00\"} 1\n"
                               "# HELP sunkd_plain A gauge.\n# TYPE sunkd_plain gauge\nsunkd_plain 7\n");
        free(text);

        /* NULL: every series; a family without series is not shown at all. */
        ck_assert_int_eq(metrics_remove(f, NULL), 0);
        ck_assert_int_eq(metrics_remove(plain, NULL), 0);
        ck_assert_int_eq(metrics_remove(plain, NULL), 0);
        text = render(m);
        ck_assert_str_eq(text, "");
        free(text);
        ck_assert_int_eq(metrics_add_value(f, 2, (const char *[]){ "GPU-9", "00" }), 0);
        text = render(m);
        ck_assert_str_eq(text, "# HELP sunkd_xid_total XIDs.\n# TYPE sunkd_xid_total counter\n"
                               "sunkd_xid_total{uuid=\"GPU-9\",bus=\"00\"} 2\n");
        free(text);
        metrics_free(m);
}
END_TEST

int main(void) {
        Suite *s = suite_create("metrics");
        TCase *tc = tcase_create("metrics");

        tcase_add_test(tc, test_render);
        tcase_add_test(tc, test_bad_names);
        tcase_add_test(tc, test_module_prefix);
        tcase_add_test(tc, test_owner_conflict);
        tcase_add_test(tc, test_remove_owner);
        tcase_add_test(tc, test_remove_series);
        suite_add_tcase(s, tc);
        return check_run(s);
}
