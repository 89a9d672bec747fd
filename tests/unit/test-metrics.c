/* Prometheus text exposition from the registry. */
#include <check.h>
#include <errno.h>
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
        sunkd_metric_spec s1 = { sizeof(s1), "runs_total", "Runs by result.", SUNKD_METRIC_COUNTER, { "job", "result" } };
        sunkd_metric_spec s2 = { sizeof(s2), "up", "Up with a \\ and\nnewline.", SUNKD_METRIC_GAUGE, { NULL } };
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

int main(void) {
        Suite *s = suite_create("metrics");
        TCase *tc = tcase_create("metrics");

        tcase_add_test(tc, test_render);
        tcase_add_test(tc, test_bad_names);
        suite_add_tcase(s, tc);
        return check_run(s);
}
