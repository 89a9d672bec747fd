/* The fact store: names, caps, ownership, and deferred delivery that
 * survives subscribers changing the store from inside their callbacks. */
#include <check.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "util/macro.h"
#include "../lib/check-run.h"

static sd_event *e;
static FactStore *fs;
static const char gres[] = "gres", health[] = "health";

typedef struct Seen {
        unsigned n;
        char *last; /* serialised last value, "null" for NULL */
        bool in_publish;
        /* What the callback does to the store. */
        bool unsubscribe, publish;
} Seen;

static void on_fact(void *userdata, const char *name, json_object *value) {
        Seen *s = userdata;

        ck_assert_msg(!s->in_publish, "called from inside fact_publish");
        s->n++;
        free(s->last);
        s->last = strdup(value ? json_object_to_json_string_ext(value, JSON_C_TO_STRING_PLAIN) : "null");
        if (s->unsubscribe)
                ck_assert_int_eq(fact_unsubscribe(fs, health, name, on_fact, s), 0);
        if (s->publish) {
                s->publish = false;
                ck_assert_int_eq(fact_publish(fs, health, health, "health.state", json_object_new_int(s->n)),
                                 0);
        }
}

static void setup(void) {
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(fact_store_new(e, &fs), 0);
}

static void teardown(void) {
        fs = fact_store_free(fs);
        e = sd_event_unref(e);
}

/* Runs every loop iteration that is due now; returns when nothing is. */
static void settle(void) {
        for (int i = 0; i < 100; i++)
                if (sd_event_run(e, 0) == 0)
                        return;
        ck_abort_msg("the loop never went idle");
}

static int publish(Seen *s, const void *owner, const char *owner_name, const char *name, json_object *v) {
        int r;

        if (s)
                s->in_publish = true;
        r = fact_publish(fs, owner, owner_name, name, v);
        if (s)
                s->in_publish = false;
        return r;
}

START_TEST(test_publish_get) {
        json_object *v;

        ck_assert_ptr_null(fact_get(fs, "gres.gpus"));
        ck_assert_int_eq(publish(NULL, gres, gres, "gres.gpus", json_object_new_int(8)), 0);
        v = fact_get(fs, "gres.gpus");
        ck_assert_int_eq(json_object_get_int(v), 8);
        /* A reader's reference outlives a replacement. */
        ck_assert_int_eq(publish(NULL, gres, gres, "gres.gpus", json_object_new_int(4)), 0);
        ck_assert_int_eq(json_object_get_int(v), 8);
        json_object_put(v);
        v = fact_get(fs, "gres.gpus");
        ck_assert_int_eq(json_object_get_int(v), 4);
        json_object_put(v);
        ck_assert_uint_eq(fact_count(fs), 1);
        /* NULL withdraws. */
        ck_assert_int_eq(publish(NULL, gres, gres, "gres.gpus", NULL), 0);
        ck_assert_ptr_null(fact_get(fs, "gres.gpus"));
        ck_assert_ptr_null(fact_get(fs, NULL));
        ck_assert_uint_eq(fact_count(fs), 0);
}
END_TEST

START_TEST(test_hostile_names) {
        static const char *const bad[] = {
                "",
                "gres",
                "gres.",
                ".gpus",
                "gres..gpus",
                "gres.gp us",
                "gres.gpus/../x",
                "gres.gpus\n",
                "gres.\xc3\xa4",
                "gres.*",
                "gres.gpus\x01",
                "gres.%s%n",
        };
        char longname[FACT_NAME_MAX + 8];

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ck_assert_msg(!fact_name_valid(bad[i]), "'%s' accepted", bad[i]);
                ck_assert_int_eq(publish(NULL, gres, gres, bad[i], json_object_new_int(1)), -EINVAL);
                ck_assert_int_eq(fact_subscribe(fs, health, bad[i], on_fact, NULL), -EINVAL);
        }
        ck_assert_int_eq(publish(NULL, gres, gres, NULL, json_object_new_int(1)), -EINVAL);
        ck_assert_int_eq(fact_subscribe(fs, health, NULL, on_fact, NULL), -EINVAL);
        ck_assert_int_eq(fact_subscribe(fs, health, "gres.gpus", NULL, NULL), -EINVAL);

        /* Only under one's own name, and the prefix is a whole segment. */
        ck_assert_int_eq(publish(NULL, health, health, "gres.gpus", json_object_new_int(1)), -EPERM);
        ck_assert_int_eq(publish(NULL, gres, "gre", "gres.gpus", json_object_new_int(1)), -EPERM);
        ck_assert_int_eq(publish(NULL, gres, gres, "gresx.gpus", json_object_new_int(1)), -EPERM);
        ck_assert_int_eq(publish(NULL, gres, "", ".gpus", json_object_new_int(1)), -EINVAL);
        ck_assert_int_eq(publish(NULL, gres, NULL, "gres.gpus", json_object_new_int(1)), -EPERM);
        ck_assert_int_eq(publish(NULL, gres, gres, "gres.gpu.count-0_A", json_object_new_int(1)), 0);

        memset(longname, 'a', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        memcpy(longname, "gres.", 5);
        ck_assert_int_eq(publish(NULL, gres, gres, longname, json_object_new_int(1)), -EINVAL);
        longname[FACT_NAME_MAX - 1] = '\0';
        ck_assert_int_eq(publish(NULL, gres, gres, longname, json_object_new_int(1)), 0);
        ck_assert_uint_eq(fact_count(fs), 2);
}
END_TEST

START_TEST(test_caps) {
        char *big = malloc(FACT_VALUE_MAX + 1);
        char name[32];

        memset(big, 'x', FACT_VALUE_MAX);
        big[FACT_VALUE_MAX] = '\0';
        /* Quotes make it two bytes over; the value is freed (ASan). */
        ck_assert_int_eq(publish(NULL, gres, gres, "gres.big", json_object_new_string(big)), -EFBIG);
        big[FACT_VALUE_MAX - 2] = '\0';
        ck_assert_int_eq(publish(NULL, gres, gres, "gres.big", json_object_new_string(big)), 0);
        free(big);

        for (unsigned i = fact_count(fs); i < FACTS_MAX; i++) {
                snprintf(name, sizeof(name), "gres.f%u", i);
                ck_assert_int_eq(publish(NULL, gres, gres, name, json_object_new_int((int) i)), 0);
        }
        ck_assert_int_eq(publish(NULL, gres, gres, "gres.onemore", json_object_new_int(1)), -E2BIG);
        /* Replacing is always possible. */
        ck_assert_int_eq(publish(NULL, gres, gres, "gres.big", json_object_new_int(1)), 0);

        for (unsigned i = 0; i < FACT_SUBSCRIPTIONS_MAX; i++)
                ck_assert_int_eq(
                        fact_subscribe(fs, health, "gres.gpus", on_fact, (void *) (uintptr_t) (i + 1)), 0);
        ck_assert_int_eq(fact_subscribe(fs, health, "gres.gpus", on_fact, NULL), -E2BIG);
        ck_assert_int_eq(fact_subscribe(fs, health, "gres.gpus", on_fact, (void *) 1), -EEXIST);
}
END_TEST

START_TEST(test_deferred_and_coalesced) {
        Seen s = {};

        ck_assert_int_eq(fact_subscribe(fs, health, "gres.gpus", on_fact, &s), 0);
        settle();
        ck_assert_uint_eq(s.n, 0); /* nothing published yet */
        ck_assert_int_eq(publish(&s, gres, gres, "gres.gpus", json_object_new_int(1)), 0);
        ck_assert_uint_eq(s.n, 0);
        ck_assert_int_eq(publish(&s, gres, gres, "gres.gpus", json_object_new_int(2)), 0);
        settle();
        ck_assert_uint_eq(s.n, 1);
        ck_assert_str_eq(s.last, "2");
        ck_assert_int_eq(publish(&s, gres, gres, "gres.other", json_object_new_int(3)), 0);
        settle();
        ck_assert_uint_eq(s.n, 1);
        ck_assert_int_eq(publish(&s, gres, gres, "gres.gpus", NULL), 0);
        settle();
        ck_assert_uint_eq(s.n, 2);
        ck_assert_str_eq(s.last, "null");
        free(s.last);
}
END_TEST

START_TEST(test_late_subscriber_gets_current) {
        Seen s = {};

        ck_assert_int_eq(publish(NULL, gres, gres, "gres.gpus", json_object_new_string("a100")), 0);
        ck_assert_int_eq(fact_subscribe(fs, health, "gres.gpus", on_fact, &s), 0);
        ck_assert_uint_eq(s.n, 0);
        settle();
        ck_assert_uint_eq(s.n, 1);
        ck_assert_str_eq(s.last, "\"a100\"");
        ck_assert_int_eq(fact_unsubscribe(fs, health, "gres.gpus", on_fact, &s), 0);
        ck_assert_int_eq(fact_unsubscribe(fs, health, "gres.gpus", on_fact, &s), -ENOENT);
        ck_assert_int_eq(fact_unsubscribe(fs, health, NULL, on_fact, &s), -ENOENT);
        free(s.last);
}
END_TEST

START_TEST(test_remove_owner) {
        Seen by_health = {}, by_gres = {};

        ck_assert_int_eq(publish(NULL, gres, gres, "gres.gpus", json_object_new_int(8)), 0);
        ck_assert_int_eq(publish(NULL, health, health, "health.state", json_object_new_int(0)), 0);
        ck_assert_int_eq(fact_subscribe(fs, health, "gres.gpus", on_fact, &by_health), 0);
        ck_assert_int_eq(fact_subscribe(fs, gres, "health.state", on_fact, &by_gres), 0);
        settle();
        ck_assert_uint_eq(by_health.n, 1);
        ck_assert_uint_eq(by_gres.n, 1);

        /* gres stops: its fact goes, its subscriber is told nothing more. */
        fact_remove_owner(fs, gres);
        ck_assert_ptr_null(fact_get(fs, "gres.gpus"));
        ck_assert_uint_eq(fact_count(fs), 1);
        ck_assert_int_eq(publish(NULL, health, health, "health.state", json_object_new_int(1)), 0);
        settle();
        ck_assert_uint_eq(by_health.n, 2);
        ck_assert_str_eq(by_health.last, "null");
        ck_assert_uint_eq(by_gres.n, 1);
        fact_remove_owner(fs, health);
        ck_assert_uint_eq(fact_count(fs), 0);
        fact_remove_owner(NULL, health);
        free(by_health.last);
        free(by_gres.last);
}
END_TEST

START_TEST(test_callback_changes_store) {
        Seen quitter = { .unsubscribe = true }, publisher = { .publish = true }, watcher = {};

        ck_assert_int_eq(fact_subscribe(fs, health, "gres.gpus", on_fact, &quitter), 0);
        ck_assert_int_eq(fact_subscribe(fs, health, "gres.gpus", on_fact, &publisher), 0);
        ck_assert_int_eq(fact_subscribe(fs, health, "gres.gpus", on_fact, &watcher), 0);
        ck_assert_int_eq(fact_subscribe(fs, gres, "health.state", on_fact, &watcher), 0);
        ck_assert_int_eq(publish(NULL, gres, gres, "gres.gpus", json_object_new_int(8)), 0);
        /* One iteration: each subscription of gres.gpus once; the publish from
         * inside a callback is delivered in a later iteration. */
        ck_assert_int_gt(sd_event_run(e, 0), 0);
        ck_assert_uint_eq(quitter.n, 1);
        ck_assert_uint_eq(publisher.n, 1);
        ck_assert_uint_eq(watcher.n, 1);
        settle();
        ck_assert_uint_eq(watcher.n, 2);
        ck_assert_str_eq(watcher.last, "1");

        ck_assert_int_eq(publish(NULL, gres, gres, "gres.gpus", json_object_new_int(9)), 0);
        settle();
        ck_assert_uint_eq(quitter.n, 1); /* gone */
        ck_assert_uint_eq(publisher.n, 2);
        ck_assert_uint_eq(watcher.n, 3);
        ck_assert_str_eq(watcher.last, "9");
        free(quitter.last);
        free(publisher.last);
        free(watcher.last);
}
END_TEST

/* What a module gets shares nothing with the store: a worker may serialise
 * and put it while the loop serialises, replaces and puts the original.
 * Handing out the shared value instead races on json-c's non-atomic
 * reference count and string cache, which ASan sees as a use after free. */
typedef struct Reader {
        json_object *values[64];
        unsigned n;
} Reader;

static void *reader_main(void *arg) {
        Reader *r = arg;

        for (unsigned round = 0; round < 200; round++)
                for (unsigned i = 0; i < r->n; i++) {
                        json_object *v = json_object_get(r->values[i]);
                        (void) json_object_to_json_string(v);
                        json_object_put(v);
                }
        for (unsigned i = 0; i < r->n; i++)
                json_object_put(r->values[i]);
        return NULL;
}

START_TEST(test_get_copy_for_workers) {
        json_object *v = json_object_new_object(), *shared, *copy;
        Reader reader = {};
        pthread_t t;

        json_object_object_add(v, "gpus", json_object_new_int(8));
        ck_assert_int_eq(fact_publish(fs, gres, gres, "gres.gpus", v), 0);
        shared = fact_get(fs, "gres.gpus");
        copy = fact_get_copy(fs, "gres.gpus");
        ck_assert_ptr_nonnull(copy);
        ck_assert_ptr_ne(copy, shared);
        ck_assert(json_object_equal(copy, shared));
        json_object_put(shared);
        json_object_put(copy);
        ck_assert_ptr_null(fact_get_copy(fs, "gres.none"));

        for (; reader.n < ELEMENTSOF(reader.values); reader.n++)
                reader.values[reader.n] = fact_get_copy(fs, "gres.gpus");
        ck_assert_int_eq(pthread_create(&t, NULL, reader_main, &reader), 0);
        for (int i = 0; i < 2000; i++) {
                json_object *now = fact_get(fs, "gres.gpus");
                (void) json_object_to_json_string(now);
                json_object_put(now);
                ck_assert_int_eq(fact_publish(fs, gres, gres, "gres.gpus", json_object_new_int(i)), 0);
        }
        ck_assert_int_eq(pthread_join(t, NULL), 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("facts");
        TCase *tc = tcase_create("facts");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_publish_get);
        tcase_add_test(tc, test_hostile_names);
        tcase_add_test(tc, test_caps);
        tcase_add_test(tc, test_deferred_and_coalesced);
        tcase_add_test(tc, test_late_subscriber_gets_current);
        tcase_add_test(tc, test_remove_owner);
        tcase_add_test(tc, test_callback_changes_store);
        tcase_add_test(tc, test_get_copy_for_workers);
        suite_add_tcase(s, tc);
        return check_run(s);
}
