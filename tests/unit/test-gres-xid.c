/* gres XID events: the bounded log, its JSON form as a hostile file or child
 * could hand it over, how it bears on a GPU's health, and the NVML watch
 * against the fake library. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "util/cleanup.h"
#include "util/strv.h"

#include "../../modules/gres/gres-nvml.h"
#include "../../modules/gres/gres-xid.h"
#include "../lib/check-run.h"

static const uint64_t critical[] = GRES_XID_CRITICAL_DEFAULT;
#define N_CRITICAL (sizeof(critical) / sizeof(critical[0]))
#define HOUR (3600ULL * 1000000ULL)

static GresXidEvent ev(const char *bus, uint64_t xid, uint64_t t) {
        GresXidEvent e = { .xid = xid, .gpu_instance = GRES_XID_NONE, .compute_instance = GRES_XID_NONE,
                           .time_usec = t };

        snprintf(e.bus_id, sizeof(e.bus_id), "%s", bus);
        snprintf(e.uuid, sizeof(e.uuid), "GPU-%s", bus);
        return e;
}

START_TEST(test_log_ring) {
        _cleanup_free_ GresXidLog *l = calloc(1, sizeof(*l));

        for (unsigned i = 0; i < GRES_XID_LOG_MAX + 10; i++) {
                GresXidEvent e = ev("0000:18:00.0", i, i);
                gres_xid_log_add(l, &e);
        }
        ck_assert_uint_eq(l->n, GRES_XID_LOG_MAX);
        ck_assert_uint_eq(l->total, GRES_XID_LOG_MAX + 10);
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->xid, 10);
        ck_assert_uint_eq(gres_xid_log_get(l, GRES_XID_LOG_MAX - 1)->xid, GRES_XID_LOG_MAX + 9);
}
END_TEST

START_TEST(test_log_json_roundtrip) {
        _cleanup_free_ GresXidLog *l = calloc(1, sizeof(*l)), *back = calloc(1, sizeof(*back));
        GresXidEvent e = ev("0000:2a:00.0", 79, 1700000000000000ULL);
        json_object *o;

        e.gpu_instance = 3;
        e.compute_instance = 0;
        gres_xid_log_add(l, &e);
        e.xid = 999;
        gres_xid_log_add(l, &e);
        o = gres_xid_log_to_json(l);
        ck_assert_ptr_nonnull(o);
        ck_assert_int_eq(gres_xid_log_from_json(o, back), 0);
        json_object_put(o);
        ck_assert_uint_eq(back->n, 2);
        ck_assert_uint_eq(back->total, 2);
        ck_assert_str_eq(gres_xid_log_get(back, 0)->bus_id, "0000:2a:00.0");
        ck_assert_str_eq(gres_xid_log_get(back, 0)->uuid, "GPU-0000:2a:00.0");
        ck_assert_uint_eq(gres_xid_log_get(back, 0)->gpu_instance, 3);
        ck_assert_uint_eq(gres_xid_log_get(back, 0)->compute_instance, 0);
        ck_assert_uint_eq(gres_xid_log_get(back, 1)->xid, 999);
        ck_assert_uint_eq(gres_xid_log_get(back, 1)->time_usec, 1700000000000000ULL);
}
END_TEST

/* Each of these, in a log file or from the child, is refused as a whole and
 * leaves the log as it was. */
START_TEST(test_log_json_hostile) {
        static const char *const bad[] = {
                "[]",
                "{\"events\": []}",
                "{\"total\": -1, \"events\": []}",
                "{\"total\": 1, \"events\": {}}",
                "{\"total\": 0, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": 1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": \"79\", \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": 4294967296, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": 1, \"time_usec\": -5}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": 1, \"time_usec\": 1.5}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": 1, \"time_usec\": 1, \"gpu_instance\": 4294967295}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"00000000:18:00.0\", \"uuid\": \"U\", \"xid\": 1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:1B:00.0\", \"uuid\": \"U\", \"xid\": 1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"../../etc/pw\", \"uuid\": \"U\", \"xid\": 1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"GPU 1\", \"xid\": 1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"GPU\\n1\", \"xid\": 1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"GPU\\u00001\", \"xid\": 1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"\", \"xid\": 1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"\xc3\xa9\", \"xid\": 1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [7]}",
        };
        _cleanup_free_ GresXidLog *l = calloc(1, sizeof(*l));
        GresXidEvent keep = ev("0000:18:00.0", 48, 5);
        _cleanup_free_ char *longuuid = malloc(200), *text = NULL;

        gres_xid_log_add(l, &keep);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                json_object *o = json_tokener_parse(bad[i]);

                ck_assert_msg(o, "%s", bad[i]);
                ck_assert_msg(gres_xid_log_from_json(o, l) == -EBADMSG, "accepted: %s", bad[i]);
                json_object_put(o);
                ck_assert_uint_eq(l->n, 1);
                ck_assert_uint_eq(l->total, 1);
                ck_assert_uint_eq(gres_xid_log_get(l, 0)->xid, 48);
        }
        memset(longuuid, 'U', 199);
        longuuid[199] = 0;
        ck_assert_int_ge(asprintf(&text, "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"%s\", "
                                         "\"xid\": 1, \"time_usec\": 1}]}", longuuid), 0);
        {
                json_object *o = json_tokener_parse(text);
                ck_assert_int_eq(gres_xid_log_from_json(o, l), -EBADMSG);
                json_object_put(o);
        }
}
END_TEST

/* More events than the ring holds: refused, not truncated. */
START_TEST(test_log_json_too_many) {
        _cleanup_free_ GresXidLog *l = calloc(1, sizeof(*l));
        json_object *o = json_object_new_object(), *list = json_object_new_array();
        GresXidEvent e = ev("0000:18:00.0", 31, 1);

        for (unsigned i = 0; i <= GRES_XID_LOG_MAX; i++)
                json_object_array_add(list, gres_xid_event_to_json(&e));
        json_object_object_add(o, "total", json_object_new_int64(GRES_XID_LOG_MAX + 1));
        json_object_object_add(o, "events", list);
        ck_assert_int_eq(gres_xid_log_from_json(o, l), -EBADMSG);
        ck_assert_uint_eq(l->n, 0);
        json_object_put(o);
}
END_TEST

static json_object *gpu(const char *bus, bool with_health) {
        json_object *g = json_object_new_object();

        json_object_object_add(g, "bus_id", json_object_new_string(bus));
        if (with_health) {
                json_object *h = json_object_new_object();
                json_object_object_add(h, "healthy", json_object_new_boolean(true));
                json_object_object_add(h, "problems", json_object_new_array());
                json_object_object_add(g, "health", h);
        }
        return g;
}

static const char *path_str(json_object *o, const char *a, const char *b) {
        json_object *x = json_object_object_get(o, a);
        return json_object_get_string(b ? json_object_object_get(x, b) : x);
}

START_TEST(test_apply) {
        _cleanup_free_ GresXidLog *l = calloc(1, sizeof(*l));
        uint64_t now = 1800000000000000ULL;
        json_object *g0 = gpu("0000:18:00.0", true), *g1 = gpu("0000:2a:00.0", true), *g2 = gpu("0000:3a:00.0", false),
                    *problems;
        GresXidEvent e;

        e = ev("0000:18:00.0", 79, now - 2 * HOUR); /* past the hold */
        gres_xid_log_add(l, &e);
        e = ev("0000:18:00.0", 48, now - 100);
        gres_xid_log_add(l, &e);
        e = ev("0000:18:00.0", 48, now - 50);
        gres_xid_log_add(l, &e);
        e = ev("0000:18:00.0", 13, now - 10); /* an application's */
        gres_xid_log_add(l, &e);
        for (unsigned i = 0; i < 20; i++) {
                e = ev("0000:2a:00.0", 31, now - 1000 + i);
                gres_xid_log_add(l, &e);
        }
        e = ev("0000:3a:00.0", 74, 0);
        gres_xid_log_add(l, &e);
        ck_assert_uint_eq(gres_xid_active(l, critical, N_CRITICAL, now, HOUR), 2);

        ck_assert_int_eq(gres_xid_apply(l, g0, critical, N_CRITICAL, now, HOUR), 0);
        ck_assert_uint_eq(json_object_array_length(json_object_object_get(g0, "xid_events")), 4);
        ck_assert_str_eq(path_str(g0, "health", "healthy"), "false");
        problems = json_object_object_get(json_object_object_get(g0, "health"), "problems");
        ck_assert_uint_eq(json_object_array_length(problems), 1);
        ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(problems, 0)),
                         "XID 48 (double-bit ECC error) at 2027-01-15T07:59:59Z, 2 times");

        ck_assert_int_eq(gres_xid_apply(l, g1, critical, N_CRITICAL, now, HOUR), 0);
        ck_assert_uint_eq(json_object_array_length(json_object_object_get(g1, "xid_events")), GRES_XID_PER_GPU_SHOWN);
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(
                                 json_object_array_get_idx(json_object_object_get(g1, "xid_events"), 0), "time_usec")),
                         (int64_t) (now - 1000 + 4));
        ck_assert_str_eq(path_str(g1, "health", "healthy"), "true");

        /* no health object (found through /proc): one is made for the XIDs */
        ck_assert_int_eq(gres_xid_apply(l, g2, critical, N_CRITICAL, now, UINT64_MAX / 2), 0);
        ck_assert_str_eq(path_str(g2, "health", "healthy"), "false");
        /* a hold of 0: shown, never unhealthy */
        json_object_put(g2);
        g2 = gpu("0000:3a:00.0", true);
        ck_assert_int_eq(gres_xid_apply(l, g2, critical, N_CRITICAL, now, 0), 0);
        ck_assert_str_eq(path_str(g2, "health", "healthy"), "true");
        ck_assert_uint_eq(json_object_array_length(json_object_object_get(g2, "xid_events")), 1);

        /* stamped in the future (the clock set back): counts within the hold of now, not for ever */
        memset(l, 0, sizeof(*l));
        e = ev("0000:3a:00.0", 79, now + 10 * 60 * 1000000ULL);
        gres_xid_log_add(l, &e);
        ck_assert_uint_eq(gres_xid_active(l, critical, N_CRITICAL, now, HOUR), 1);
        memset(l, 0, sizeof(*l));
        e = ev("0000:3a:00.0", 79, now + 2 * HOUR);
        gres_xid_log_add(l, &e);
        ck_assert_uint_eq(gres_xid_active(l, critical, N_CRITICAL, now, HOUR), 0);
        json_object_put(g2);
        g2 = gpu("0000:3a:00.0", true);
        ck_assert_int_eq(gres_xid_apply(l, g2, critical, N_CRITICAL, now, HOUR), 0);
        ck_assert_str_eq(path_str(g2, "health", "healthy"), "true");
        ck_assert_uint_eq(gres_xid_active(l, critical, N_CRITICAL, now + 2 * HOUR, HOUR), 1);

        json_object_put(g0);
        json_object_put(g1);
        json_object_put(g2);
}
END_TEST

START_TEST(test_describe) {
        ck_assert_str_eq(gres_xid_describe(79), "GPU has fallen off the bus");
        ck_assert_ptr_null(gres_xid_describe(12345));
        ck_assert(gres_xid_is_critical(95, critical, N_CRITICAL));
        ck_assert(!gres_xid_is_critical(13, critical, N_CRITICAL));
}
END_TEST

/* ---- The watch, against the fake NVML ------------------------------------ */

static char dir[64];

static void watch_setup(void) {
        strcpy(dir, "/tmp/test-gres-xid.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void watch_teardown(void) {
        char *cmd;

        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", dir), 0);
        ck_assert_int_eq(system(cmd), 0);
        free(cmd);
}

/* A description: the 8-GPU node, @fail on the GPU at 2A, events from dir/ev. */
static char *fake(const char *fail) {
        _cleanup_free_ char *desc = NULL, *src = NULL, *evdir = NULL;
        char *lib, *cmd;

        ck_assert_int_ge(asprintf(&src, "%s/tests/data/gres/nvml-h100-8.desc", getenv("SUNKD_SRCDIR")), 0);
        ck_assert_int_ge(asprintf(&desc, "%s/nvml.desc", dir), 0);
        ck_assert_int_ge(asprintf(&evdir, "%s/ev", dir), 0);
        ck_assert_int_ge(asprintf(&cmd, "mkdir -p '%s' && sed '/^gpu|00000000:2A:00.0|/s/|-$/|%s/' '%s' > '%s' && "
                                        "echo 'events|%s' >> '%s'", evdir, fail, src, desc, evdir, desc), 0);
        ck_assert_int_eq(system(cmd), 0);
        free(cmd);
        ck_assert_int_eq(setenv("FAKE_NVML_CONFIG", desc, 1), 0);
        ck_assert_int_ge(asprintf(&lib, "%s/tests/fake-nvml/.libs/libnvidia-ml.so", getenv("SUNKD_BUILDDIR")), 0);
        return lib;
}

static void put_event(const char *name, const char *text) {
        _cleanup_free_ char *p = NULL;
        FILE *f;

        ck_assert_int_ge(asprintf(&p, "%s/ev/%s", dir, name), 0);
        f = fopen(p, "we");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_watch_events) {
        _cleanup_free_ char *lib = fake("-"), *err = NULL;
        GresXidWatch w;

        put_event("1", "00000000:18:00.0|79\n");
        put_event("2", "00000000:2A:00.0|31|2|1\n");
        put_event("3", "00000000:FF:00.0|48\n"); /* no such GPU: dropped */
        put_event("4", "00000000:3A:00.0|13\n");
        /* Events waiting return at once, however long the window. */
        ck_assert_int_eq(gres_nvml_watch_xids(lib, 3600ULL * 1000000ULL, 2, &w, &err), 0);
        ck_assert_uint_eq(w.watched, 8);
        ck_assert_ptr_null(w.unwatched);
        ck_assert_uint_eq(w.n, 2);
        ck_assert_str_eq(w.events[0].bus_id, "0000:18:00.0");
        ck_assert_str_eq(w.events[0].uuid, "GPU-00000000-1111-2222-3333-444444444444");
        ck_assert_uint_eq(w.events[0].xid, 79);
        ck_assert_uint_eq(w.events[0].gpu_instance, GRES_XID_NONE);
        ck_assert_uint_eq(w.events[1].xid, 31);
        ck_assert_uint_eq(w.events[1].gpu_instance, 2);
        ck_assert_uint_eq(w.events[1].compute_instance, 1);
        ck_assert_uint_gt(w.events[1].time_usec, 0);
        gres_xid_watch_done(&w);
        /* the next window takes what is left, past the unknown GPU */
        ck_assert_int_eq(gres_nvml_watch_xids(lib, 3600ULL * 1000000ULL, 64, &w, &err), 0);
        ck_assert_uint_eq(w.n, 1);
        ck_assert_uint_eq(w.events[0].xid, 13);
        gres_xid_watch_done(&w);
}
END_TEST

START_TEST(test_watch_quiet_window) {
        _cleanup_free_ char *lib = fake("-"), *err = NULL;
        GresXidWatch w;

        ck_assert_int_eq(gres_nvml_watch_xids(lib, 200000, 64, &w, &err), 0);
        ck_assert_uint_eq(w.n, 0);
        ck_assert_uint_eq(w.watched, 8);
        gres_xid_watch_done(&w);
}
END_TEST

START_TEST(test_watch_unwatched_and_lost) {
        _cleanup_free_ char *lib = fake("events"), *err = NULL;
        GresXidWatch w;

        put_event("1", "00000000:2A:00.0|79\n"); /* not registered: dropped */
        put_event("2", "lost\n");
        ck_assert_int_eq(gres_nvml_watch_xids(lib, 3600ULL * 1000000ULL, 64, &w, &err), -EIO);
        ck_assert_str_eq(err, "nvmlEventSetWait_v2: Fake error (15)");
        ck_assert_ptr_null(w.events);
        free(err);
        err = NULL;
        ck_assert_int_eq(gres_nvml_watch_xids(lib, 200000, 64, &w, &err), 0);
        ck_assert_uint_eq(w.watched, 7);
        ck_assert_uint_eq(strv_length(w.unwatched), 1);
        ck_assert_str_eq(w.unwatched[0], "0000:2a:00.0: Not Supported");
        gres_xid_watch_done(&w);
}
END_TEST

START_TEST(test_watch_no_library) {
        _cleanup_free_ char *err = NULL;
        GresXidWatch w;

        ck_assert_int_eq(gres_nvml_watch_xids("/nonexistent/libnvidia-ml.so.1", 1000000, 64, &w, &err), -ENOENT);
        ck_assert_uint_eq(w.n, 0);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("gres-xid");
        TCase *tc = tcase_create("log");

        tcase_add_test(tc, test_log_ring);
        tcase_add_test(tc, test_log_json_roundtrip);
        tcase_add_test(tc, test_log_json_hostile);
        tcase_add_test(tc, test_log_json_too_many);
        tcase_add_test(tc, test_apply);
        tcase_add_test(tc, test_describe);
        suite_add_tcase(s, tc);

        tc = tcase_create("watch");
        tcase_add_checked_fixture(tc, watch_setup, watch_teardown);
        tcase_add_test(tc, test_watch_events);
        tcase_add_test(tc, test_watch_quiet_window);
        tcase_add_test(tc, test_watch_unwatched_and_lost);
        tcase_add_test(tc, test_watch_no_library);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
