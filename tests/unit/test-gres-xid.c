/* gres XID events: the bounded log (numbers, storms folded, one event two
 * sources report counted once), its JSON form as a hostile file or child
 * could hand it over, what the List shows of it, and the NVML watch against
 * the fake library. */
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

#define HOUR (3600ULL * 1000000ULL)
#define SEC 1000000ULL

static GresXidEvent ev(const char *bus, uint64_t xid, uint64_t t) {
        GresXidEvent e = { .xid = xid,
                           .gpu_instance = GRES_XID_NONE,
                           .compute_instance = GRES_XID_NONE,
                           .time_usec = t,
                           .last_usec = t };

        snprintf(e.bus_id, sizeof(e.bus_id), "%s", bus);
        snprintf(e.uuid, sizeof(e.uuid), "GPU-%s", bus);
        return e;
}

static GresXidLog *log_new(void) {
        GresXidLog *l = calloc(1, sizeof(*l));

        ck_assert_ptr_nonnull(l);
        gres_xid_log_init(l);
        return l;
}

static GresXidAdded add(GresXidLog *l, GresXidEvent e, uint64_t count, GresXidSource src) {
        GresXidEvent *entry;

        return gres_xid_log_add(l, &e, count, src, &entry);
}

START_TEST(test_log_ring) {
        _cleanup_free_ GresXidLog *l = log_new();

        for (unsigned i = 0; i < GRES_XID_LOG_MAX + 10; i++)
                ck_assert_int_eq(add(l, ev("0000:18:00.0", i, i), 1, GRES_XID_NVML), GRES_XID_ADDED_NEW);
        ck_assert_uint_eq(l->n, GRES_XID_LOG_MAX);
        ck_assert_uint_eq(l->total, GRES_XID_LOG_MAX + 10);
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->xid, 10);
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->seq, 11);
        ck_assert_uint_eq(gres_xid_log_get(l, GRES_XID_LOG_MAX - 1)->xid, GRES_XID_LOG_MAX + 9);
        ck_assert_uint_eq(gres_xid_log_get(l, GRES_XID_LOG_MAX - 1)->seq, GRES_XID_LOG_MAX + 10);
        ck_assert_uint_eq(l->next_seq, GRES_XID_LOG_MAX + 11);
}
END_TEST

/* A storm: repeats within the window of the first are one entry that counts
 * them and covers their numbers; past the window, or on another GPU, another
 * entry; a hundred thousand take no more room than one. */
START_TEST(test_log_storm) {
        _cleanup_free_ GresXidLog *l = log_new();
        const uint64_t t = 1800000000000000ULL;
        GresXidEvent *e;

        ck_assert_int_eq(add(l, ev("0000:18:00.0", 45, t), 1, GRES_XID_KMSG), GRES_XID_ADDED_NEW);
        for (unsigned i = 1; i < 100000; i++)
                ck_assert_int_eq(add(l, ev("0000:18:00.0", 45, t + i * 10), 1, GRES_XID_KMSG),
                                 GRES_XID_ADDED_FOLDED);
        ck_assert_uint_eq(l->n, 1);
        e = gres_xid_log_at(l, 0);
        ck_assert_uint_eq(e->count, 100000);
        ck_assert_uint_eq(e->seq, 1);
        ck_assert_uint_eq(e->last_seq, 100000);
        ck_assert_uint_eq(e->time_usec, t);
        ck_assert_uint_eq(e->last_usec, t + 99999 * 10);
        ck_assert_uint_eq(l->total, 100000);
        /* counted in one go, as a read of the kernel log hands them */
        ck_assert_int_eq(add(l, ev("0000:18:00.0", 45, t + 2 * SEC), 5000, GRES_XID_KMSG),
                         GRES_XID_ADDED_FOLDED);
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->count, 105000);
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->last_seq, 105000);
        /* another GPU, another XID, or past the window: entries of their own */
        ck_assert_int_eq(add(l, ev("0000:2a:00.0", 45, t + 3 * SEC), 1, GRES_XID_KMSG), GRES_XID_ADDED_NEW);
        ck_assert_int_eq(add(l, ev("0000:18:00.0", 13, t + 3 * SEC), 1, GRES_XID_KMSG), GRES_XID_ADDED_NEW);
        ck_assert_int_eq(add(l, ev("0000:18:00.0", 45, t + GRES_XID_STORM_USEC), 1, GRES_XID_KMSG),
                         GRES_XID_ADDED_NEW);
        ck_assert_uint_eq(l->n, 4);
        ck_assert_uint_eq(gres_xid_log_get(l, 3)->seq, 105003);
        /* the newest entry of the pair takes the next repeats */
        ck_assert_int_eq(add(l, ev("0000:18:00.0", 45, t + GRES_XID_STORM_USEC + 1), 1, GRES_XID_KMSG),
                         GRES_XID_ADDED_FOLDED);
        ck_assert_uint_eq(gres_xid_log_get(l, 3)->count, 2);
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->count, 105000);
        /* another boot: never folded into one before it */
        {
                GresXidEvent x = ev("0000:18:00.0", 45, t + GRES_XID_STORM_USEC + 2);
                strcpy(x.boot_id, "other-boot");
                ck_assert_int_eq(add(l, x, 1, GRES_XID_KMSG), GRES_XID_ADDED_NEW);
        }
}
END_TEST

/* One event both sources report is counted once, whichever comes first;
 * an entry the kernel log named says so; NVML's MIG instance is kept. */
START_TEST(test_log_match) {
        _cleanup_free_ GresXidLog *l = log_new();
        const uint64_t t = 1800000000000000ULL;
        GresXidEvent n = ev("0000:18:00.0", 79, t + 2000), k = ev("0000:18:00.0", 79, t);

        n.gpu_instance = 3;
        n.compute_instance = 0;
        k.uuid[0] = '\0'; /* the kernel log names the bus only */
        ck_assert_int_eq(add(l, k, 1, GRES_XID_KMSG), GRES_XID_ADDED_NEW);
        ck_assert_int_eq(add(l, n, 1, GRES_XID_NVML), GRES_XID_ADDED_MATCHED);
        ck_assert_uint_eq(l->n, 1);
        ck_assert_uint_eq(l->total, 1);
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->count, 1);
        ck_assert_int_eq(gres_xid_log_get(l, 0)->source, GRES_XID_KMSG);
        ck_assert_str_eq(gres_xid_log_get(l, 0)->uuid, "GPU-0000:18:00.0");
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->gpu_instance, 3);
        /* a second one NVML alone reports is one more */
        ck_assert_int_eq(add(l, n, 1, GRES_XID_NVML), GRES_XID_ADDED_FOLDED);
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->count, 2);
        /* ... and the kernel log's report of it, later, matches it */
        ck_assert_int_eq(add(l, k, 1, GRES_XID_KMSG), GRES_XID_ADDED_MATCHED);
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->count, 2);
        ck_assert_uint_eq(l->total, 2);
        /* NVML first, then the log: the log's names it, counted once */
        n = ev("0000:2a:00.0", 48, t);
        k = ev("0000:2a:00.0", 48, t + 1000);
        ck_assert_int_eq(add(l, n, 1, GRES_XID_NVML), GRES_XID_ADDED_NEW);
        ck_assert_int_eq(gres_xid_log_get(l, 1)->source, GRES_XID_NVML);
        ck_assert_int_eq(add(l, k, 3, GRES_XID_KMSG), GRES_XID_ADDED_FOLDED);
        ck_assert_uint_eq(gres_xid_log_get(l, 1)->count, 3);
        ck_assert_int_eq(gres_xid_log_get(l, 1)->source, GRES_XID_KMSG);
        /* beyond the matching window the other source's report is another event */
        n = ev("0000:2a:00.0", 48, t + 1000 + GRES_XID_MATCH_USEC + 1);
        ck_assert_int_eq(add(l, n, 1, GRES_XID_NVML), GRES_XID_ADDED_FOLDED);
        ck_assert_uint_eq(gres_xid_log_get(l, 1)->count, 4);
}
END_TEST

START_TEST(test_log_json_roundtrip) {
        _cleanup_free_ GresXidLog *l = log_new(), *back = calloc(1, sizeof(*back));
        GresXidEvent e = ev("0000:2a:00.0", 79, 1700000000000000ULL);
        json_object *o;

        e.gpu_instance = 3;
        e.compute_instance = 0;
        strcpy(e.boot_id, "36ec70a7-d6f3-406c-9df9-136c820c90cf");
        add(l, e, 1, GRES_XID_NVML);
        e.xid = 999;
        e.uuid[0] = '\0';
        add(l, e, 7, GRES_XID_KMSG);
        o = gres_xid_log_to_json(l);
        ck_assert_ptr_nonnull(o);
        ck_assert_int_eq(gres_xid_log_from_json(o, back), 0);
        json_object_put(o);
        ck_assert_uint_eq(back->n, 2);
        ck_assert_uint_eq(back->total, 8);
        ck_assert_uint_eq(back->next_seq, 9);
        ck_assert_str_eq(gres_xid_log_get(back, 0)->bus_id, "0000:2a:00.0");
        ck_assert_str_eq(gres_xid_log_get(back, 0)->uuid, "GPU-0000:2a:00.0");
        ck_assert_str_eq(gres_xid_log_get(back, 0)->boot_id, "36ec70a7-d6f3-406c-9df9-136c820c90cf");
        ck_assert_uint_eq(gres_xid_log_get(back, 0)->gpu_instance, 3);
        ck_assert_uint_eq(gres_xid_log_get(back, 0)->compute_instance, 0);
        ck_assert_int_eq(gres_xid_log_get(back, 0)->source, GRES_XID_NVML);
        ck_assert_uint_eq(gres_xid_log_get(back, 1)->xid, 999);
        ck_assert_str_eq(gres_xid_log_get(back, 1)->uuid, "");
        ck_assert_uint_eq(gres_xid_log_get(back, 1)->seq, 2);
        ck_assert_uint_eq(gres_xid_log_get(back, 1)->last_seq, 8);
        ck_assert_uint_eq(gres_xid_log_get(back, 1)->count, 7);
        ck_assert_uint_eq(gres_xid_log_get(back, 1)->unmatched[GRES_XID_KMSG], 7);
        ck_assert_int_eq(gres_xid_log_get(back, 1)->source, GRES_XID_KMSG);
        ck_assert_uint_eq(gres_xid_log_get(back, 1)->time_usec, 1700000000000000ULL);
        /* what was loaded is not logged again */
        ck_assert_uint_eq(gres_xid_log_get(back, 1)->reported, 7);

        /* a repeat folded into the first entry after the second began: its
         * last number lies past the second's first */
        e.xid = 79;
        add(l, e, 1, GRES_XID_NVML);
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->last_seq, 9);
        o = gres_xid_log_to_json(l);
        ck_assert_int_eq(gres_xid_log_from_json(o, back), 0);
        json_object_put(o);
        ck_assert_uint_eq(back->n, 2);
        ck_assert_uint_eq(back->next_seq, 10);
        ck_assert_uint_eq(gres_xid_log_get(back, 0)->count, 2);
}
END_TEST

/* A log an older sunkd saved: events without numbers get the next ones. */
START_TEST(test_log_json_older) {
        _cleanup_free_ GresXidLog *l = calloc(1, sizeof(*l));
        json_object *o = json_tokener_parse(
                "{\"total\": 5, \"events\": ["
                "{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"GPU-a\", \"xid\": 79, \"time_usec\": 1},"
                "{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"GPU-a\", \"xid\": 48, \"time_usec\": 2, "
                "\"gpu_instance\": 1}]}");

        ck_assert_int_eq(gres_xid_log_from_json(o, l), 0);
        json_object_put(o);
        ck_assert_uint_eq(l->n, 2);
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->seq, 1);
        ck_assert_uint_eq(gres_xid_log_get(l, 1)->seq, 2);
        ck_assert_uint_eq(gres_xid_log_get(l, 1)->count, 1);
        ck_assert_int_eq(gres_xid_log_get(l, 1)->source, GRES_XID_NVML);
        ck_assert_uint_eq(l->next_seq, 3);
        ck_assert_uint_eq(l->total, 5);
}
END_TEST

/* Each of these, in a log file or from a child, is refused as a whole and
 * leaves the log empty. */
START_TEST(test_log_json_hostile) {
#define EV(x)                                                                                               \
        "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": 1, "          \
        "\"time_usec\": 1" x "}]}"
        static const char *const bad[] = {
                "[]",
                "{\"events\": []}",
                "{\"total\": -1, \"events\": []}",
                "{\"total\": 1, \"events\": {}}",
                "{\"total\": 0, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": 1, "
                "\"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": "
                "\"79\", \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": "
                "4294967296, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": 1, "
                "\"time_usec\": -5}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"U\", \"xid\": 1, "
                "\"time_usec\": 1.5}]}",
                EV(", \"gpu_instance\": 4294967295"),
                "{\"total\": 1, \"events\": [{\"bus_id\": \"00000000:18:00.0\", \"uuid\": \"U\", \"xid\": "
                "1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:1B:00.0\", \"uuid\": \"U\", \"xid\": 1, "
                "\"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"../../etc/pw\", \"uuid\": \"U\", \"xid\": 1, "
                "\"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"GPU 1\", \"xid\": "
                "1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"GPU\\n1\", \"xid\": "
                "1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"GPU\\u00001\", "
                "\"xid\": 1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"\", \"xid\": 1, "
                "\"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"\xc3\xa9\", "
                "\"xid\": 1, \"time_usec\": 1}]}",
                "{\"total\": 1, \"events\": [7]}",
                /* the fields the log added */
                EV(", \"count\": 0"),
                EV(", \"count\": 2"), /* more than the total */
                EV(", \"seq\": 5, \"last_seq\": 4"),
                EV(", \"last_seq\": 4"),                           /* a last without a first */
                EV(", \"seq\": 5, \"last_seq\": 5, \"count\": 2"), /* two in one number */
                EV(", \"last_usec\": 0"),                          /* the last before the first */
                EV(", \"source\": \"dmesg\""),
                EV(", \"source\": 1"),
                EV(", \"boot_id\": \"a b\""),
                EV(", \"boot_id\": \"\""),
                EV(", \"boot_id\": \"0123456789012345678901234567890123456789\""),
                EV(", \"unmatched_kmsg\": 2"), /* more than its count */
                EV(", \"seq\": 9223372036854775807, \"last_seq\": 9223372036854775807"),
                /* one entry each, its literals joined (parenthesised: no missing comma) */
                ("{\"total\": 2, \"seq\": 3, \"events\": ["
                 "{\"bus_id\": \"0000:18:00.0\", \"xid\": 1, \"time_usec\": 1, \"seq\": 2, \"last_seq\": 2},"
                 "{\"bus_id\": \"0000:18:00.0\", \"xid\": 1, \"time_usec\": 1, \"seq\": 1, \"last_seq\": "
                 "1}]}"), /* not rising */
                ("{\"total\": 1, \"seq\": 1, \"events\": ["
                 "{\"bus_id\": \"0000:18:00.0\", \"xid\": 1, \"time_usec\": 1, \"seq\": 4, \"last_seq\": "
                 "4}]}"), /* next behind */
                "{\"total\": 1, \"seq\": 0, \"events\": []}",
        };
#undef EV
        _cleanup_free_ GresXidLog *l = log_new();
        _cleanup_free_ char *longuuid = malloc(200), *text = NULL;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                json_object *o = json_tokener_parse(bad[i]);

                ck_assert_msg(o, "%s", bad[i]);
                add(l, ev("0000:18:00.0", 48, 5), 1, GRES_XID_NVML);
                ck_assert_msg(gres_xid_log_from_json(o, l) == -EBADMSG, "accepted: %s", bad[i]);
                json_object_put(o);
                ck_assert_uint_eq(l->n, 0);
                ck_assert_uint_eq(l->total, 0);
                ck_assert_uint_eq(l->next_seq, 1);
        }
        memset(longuuid, 'U', 199);
        longuuid[199] = 0;
        ck_assert_int_ge(
                asprintf(&text,
                         "{\"total\": 1, \"events\": [{\"bus_id\": \"0000:18:00.0\", \"uuid\": \"%s\", "
                         "\"xid\": 1, \"time_usec\": 1}]}",
                         longuuid),
                0);
        {
                json_object *o = json_tokener_parse(text);
                ck_assert_int_eq(gres_xid_log_from_json(o, l), -EBADMSG);
                json_object_put(o);
        }
}
END_TEST

/* More events than the ring holds: refused, not truncated. */
START_TEST(test_log_json_too_many) {
        _cleanup_free_ GresXidLog *l = log_new();
        json_object *o = json_object_new_object(), *list = json_object_new_array();
        GresXidEvent e = ev("0000:18:00.0", 31, 1);

        e.count = 1;
        for (unsigned i = 0; i <= GRES_XID_LOG_MAX; i++)
                json_object_array_add(list, gres_xid_event_to_json(&e, 0));
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
                json_object_object_add(h, "remap_failure", json_object_new_int64(0));
                json_object_object_add(h, "ecc_uncorrected_volatile", json_object_new_int64(0));
                json_object_object_add(g, "health", h);
        }
        return g;
}

/* The List shows a GPU's entries; its health is what NVML says, however
 * bad the XID: gres judges none of them. */
START_TEST(test_show) {
        _cleanup_free_ GresXidLog *l = log_new();
        uint64_t now = 1800000000000000ULL;
        json_object *g0 = gpu("0000:18:00.0", true), *g1 = gpu("0000:2a:00.0", true),
                    *g2 = gpu("0000:3a:00.0", false), *list;

        add(l, ev("0000:18:00.0", 79, now - 2 * HOUR), 1, GRES_XID_NVML);
        add(l, ev("0000:18:00.0", 48, now - 100), 1, GRES_XID_NVML);
        add(l, ev("0000:18:00.0", 48, now - 50), 1, GRES_XID_NVML);
        add(l, ev("0000:18:00.0", 13, now - 10), 1, GRES_XID_NVML);
        for (unsigned i = 0; i < 20; i++) /* twenty storms, a minute apart */
                add(l, ev("0000:2a:00.0", 31, now - HOUR + i * GRES_XID_STORM_USEC), 1, GRES_XID_NVML);

        ck_assert_int_eq(gres_xid_show(l, g0), 0);
        list = json_object_object_get(g0, "xid_events");
        ck_assert_uint_eq(json_object_array_length(list), 3);
        ck_assert_int_eq(
                json_object_get_int64(json_object_object_get(json_object_array_get_idx(list, 1), "count")),
                2);
        ck_assert_str_eq(
                json_object_get_string(json_object_object_get(json_object_array_get_idx(list, 0), "what")),
                "GPU has fallen off the bus");
        /* the counters as NVML gave them, and no verdict added */
        ck_assert_str_eq(
                json_object_to_json_string_ext(json_object_object_get(g0, "health"), JSON_C_TO_STRING_PLAIN),
                "{\"remap_failure\":0,\"ecc_uncorrected_volatile\":0}");

        ck_assert_int_eq(gres_xid_show(l, g1), 0);
        list = json_object_object_get(g1, "xid_events");
        ck_assert_uint_eq(json_object_array_length(list), GRES_XID_PER_GPU_SHOWN);
        ck_assert_int_eq(json_object_get_int64(
                                 json_object_object_get(json_object_array_get_idx(list, 0), "time_usec")),
                         (int64_t) (now - HOUR + 4 * GRES_XID_STORM_USEC));
        /* none of its own: none added, no health made up */
        ck_assert_int_eq(gres_xid_show(l, g2), 0);
        ck_assert_ptr_null(json_object_object_get(g2, "xid_events"));
        ck_assert_ptr_null(json_object_object_get(g2, "health"));

        json_object_put(g0);
        json_object_put(g1);
        json_object_put(g2);
}
END_TEST

START_TEST(test_tail) {
        _cleanup_free_ GresXidLog *l = log_new();
        json_object *t;

        for (unsigned i = 0; i < 100; i++)
                add(l, ev("0000:18:00.0", i, i), 1, GRES_XID_KMSG);
        t = gres_xid_log_tail_json(l, 64);
        ck_assert_uint_eq(json_object_array_length(t), 64);
        ck_assert_int_eq(
                json_object_get_int64(json_object_object_get(json_object_array_get_idx(t, 0), "seq")), 37);
        ck_assert_str_eq(
                json_object_get_string(json_object_object_get(json_object_array_get_idx(t, 63), "source")),
                "kmsg");
        ck_assert_ptr_null(json_object_object_get(json_object_array_get_idx(t, 0), "unmatched_kmsg"));
        json_object_put(t);
}
END_TEST

START_TEST(test_describe) {
        ck_assert_str_eq(gres_xid_describe(79), "GPU has fallen off the bus");
        ck_assert_ptr_null(gres_xid_describe(12345));
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
        ck_assert_int_ge(asprintf(&cmd,
                                  "mkdir -p '%s' && sed '/^gpu|00000000:2A:00.0|/s/|-$/|%s/' '%s' > '%s' && "
                                  "echo 'events|%s' >> '%s'",
                                  evdir, fail, src, desc, evdir, desc),
                         0);
        ck_assert_int_eq(system(cmd), 0);
        free(cmd);
        ck_assert_int_eq(setenv("FAKE_NVML_CONFIG", desc, 1), 0);
        ck_assert_int_ge(
                asprintf(&lib, "%s/tests/fake-nvml/.libs/libnvidia-ml.so", getenv("SUNKD_BUILDDIR")), 0);
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

        ck_assert_int_eq(gres_nvml_watch_xids("/nonexistent/libnvidia-ml.so.1", 1000000, 64, &w, &err),
                         -ENOENT);
        ck_assert_uint_eq(w.n, 0);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("gres-xid");
        TCase *tc = tcase_create("log");

        tcase_add_test(tc, test_log_ring);
        tcase_add_test(tc, test_log_storm);
        tcase_add_test(tc, test_log_match);
        tcase_add_test(tc, test_log_json_roundtrip);
        tcase_add_test(tc, test_log_json_older);
        tcase_add_test(tc, test_log_json_hostile);
        tcase_add_test(tc, test_log_json_too_many);
        tcase_add_test(tc, test_show);
        tcase_add_test(tc, test_tail);
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
