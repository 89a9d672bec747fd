/* File watches on real files in a temp dir: every way a file is replaced,
 * the Kubernetes ..data swap, coalescing, and what must not fire.
 *
 * Waits run the loop until the expected callback count is reached; the
 * overall deadline only turns a hang into a failure.  "Does not fire" is
 * shown with a sentinel watch changed afterwards: inotify delivers events in
 * order on one fd, so once the sentinel's callback ran, any callback the
 * earlier change would have caused has run too.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/macro.h"
#include "util/time-util.h"
#include "watch.h"
#include "../lib/check-run.h"

#define DEADLINE_USEC (60 * USEC_PER_SEC)

static sd_event *e;
static WatchSet *ws;
static char dir[] = "/tmp/test-watch-XXXXXX";

typedef struct Counter {
        unsigned n;
        Watch *self; /* removed from inside its callback when remove_self */
        bool remove_self;
} Counter;

static void on_change(void *userdata, const char *path) {
        Counter *c = userdata;

        c->n++;
        ck_assert_ptr_nonnull(path);
        if (c->remove_self) {
                watch_remove(c->self);
                c->self = NULL;
        }
}

static void rm_rf(const char *path) {
        char *cmd;

        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", path), 0);
        ck_assert_int_eq(system(cmd), 0);
        free(cmd);
}

static void setup(void) {
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(watch_set_new(e, &ws), 0);
}

static void teardown(void) {
        ws = watch_set_free(ws);
        e = sd_event_unref(e);
        rm_rf(dir);
        strcpy(dir, "/tmp/test-watch-XXXXXX");
}

static const char *at(const char *name) {
        static char buf[4][PATH_MAX];
        static unsigned i;
        char *p = buf[i++ % 4];

        ck_assert_int_lt(strlen(dir) + 1 + strlen(name), PATH_MAX);
        strcat(strcat(strcpy(p, dir), "/"), name);
        return p;
}

static void write_file(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        ck_assert_int_eq(close(fd), 0);
}

static void run_until(const Counter *c, unsigned n) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + DEADLINE_USEC;

        while (c->n < n) {
                ck_assert_msg(now_usec(CLOCK_MONOTONIC) < deadline, "only %u of %u callbacks", c->n, n);
                ck_assert_int_ge(sd_event_run(e, 100 * USEC_PER_MSEC), 0);
        }
}

/* Changes the sentinel file and waits for its callback: everything queued
 * before it has been delivered by then. */
static void flush(void) {
        static unsigned gen;
        Counter s = {};
        Watch *w;

        ck_assert_int_eq(watch_add(ws, at("sentinel"), on_change, &s, &s, &w), 0);
        write_file(at("sentinel"), gen++ % 2 ? "a" : "b");
        run_until(&s, 1);
        watch_remove(w);
}

START_TEST(test_write_close) {
        Counter c = {};

        write_file(at("x"), "1");
        ck_assert_int_eq(watch_add(ws, at("x"), on_change, &c, NULL, NULL), 0);
        write_file(at("x"), "2");
        run_until(&c, 1);
        flush();
        ck_assert_uint_eq(c.n, 1);
        /* chmod is a change too (IN_ATTRIB). */
        ck_assert_int_eq(chmod(at("x"), 0644), 0);
        run_until(&c, 2);
}
END_TEST

START_TEST(test_rename_over) {
        Counter c = {};

        write_file(at("x"), "1");
        ck_assert_int_eq(watch_add(ws, at("x"), on_change, &c, NULL, NULL), 0);
        write_file(at(".x.tmp"), "2");
        flush(); /* the temp file alone does not fire */
        ck_assert_uint_eq(c.n, 0);
        ck_assert_int_eq(rename(at(".x.tmp"), at("x")), 0);
        run_until(&c, 1);
        /* The new inode is watched as well as the old one was. */
        write_file(at("x"), "3");
        run_until(&c, 2);
}
END_TEST

START_TEST(test_delete_recreate) {
        Counter c = {};

        write_file(at("x"), "1");
        ck_assert_int_eq(watch_add(ws, at("x"), on_change, &c, NULL, NULL), 0);
        ck_assert_int_eq(unlink(at("x")), 0);
        run_until(&c, 1);
        write_file(at("x"), "2");
        run_until(&c, 2);
        write_file(at("x"), "3");
        run_until(&c, 3);
}
END_TEST

/* What the kubelet does to a Secret volume: x -> ..data/x, ..data ->
 * ..<timestamp>, and an update renames a new ..data_tmp link over ..data
 * before removing the old directory. */
static void k8s_publish(const char *stamp, const char *old_stamp, const char *value) {
        char file[PATH_MAX];

        ck_assert_int_eq(mkdir(at(stamp), 0755), 0);
        snprintf(file, sizeof(file), "%s/x", stamp);
        write_file(at(file), value);
        ck_assert_int_eq(symlink(stamp, at("..data_tmp")), 0);
        ck_assert_int_eq(rename(at("..data_tmp"), at("..data")), 0);
        if (old_stamp)
                rm_rf(at(old_stamp));
}

START_TEST(test_k8s_data_swap) {
        Counter c = {};
        unsigned n;

        k8s_publish("..2026_11_23_10_00_00.1", NULL, "one");
        ck_assert_int_eq(symlink("..data/x", at("x")), 0);
        ck_assert_int_eq(watch_add(ws, at("x"), on_change, &c, NULL, NULL), 0);

        k8s_publish("..2026_11_23_10_05_00.2", "..2026_11_23_10_00_00.1", "two");
        run_until(&c, 1);
        /* Followed to the new directory: a change in place there is seen. */
        flush();
        n = c.n;
        ck_assert_int_eq(chmod(at("..2026_11_23_10_05_00.2/x"), 0640), 0);
        run_until(&c, n + 1);
        /* And a second swap, then a change in the newest directory. */
        flush();
        n = c.n;
        k8s_publish("..2026_11_23_10_10_00.3", "..2026_11_23_10_05_00.2", "three");
        run_until(&c, n + 1);
        flush();
        n = c.n;
        ck_assert_int_eq(chmod(at("..2026_11_23_10_10_00.3/x"), 0600), 0);
        run_until(&c, n + 1);
        /* Another file in the mount is not ours. */
        flush();
        n = c.n;
        write_file(at("other"), "x");
        flush();
        ck_assert_uint_eq(c.n, n);
}
END_TEST

START_TEST(test_absolute_link_and_chain) {
        Counter c = {};
        unsigned n;

        ck_assert_int_eq(mkdir(at("real"), 0755), 0);
        write_file(at("real/y"), "1");
        ck_assert_int_eq(symlink(at("real/y"), at("b")), 0); /* absolute target */
        ck_assert_int_eq(symlink("b", at("a")), 0);
        ck_assert_int_eq(watch_add(ws, at("a"), on_change, &c, NULL, NULL), 0);
        write_file(at("real/y"), "2");
        run_until(&c, 1);
        flush();
        n = c.n;
        ck_assert_int_eq(unlink(at("b")), 0);
        run_until(&c, n + 1);
        write_file(at("real/z"), "3");
        flush();
        n = c.n;
        ck_assert_int_eq(symlink(at("real/z"), at("b")), 0);
        run_until(&c, n + 1);
        flush();
        n = c.n;
        write_file(at("real/z"), "4");
        run_until(&c, n + 1);
        /* y is no longer on the way. */
        flush();
        n = c.n;
        write_file(at("real/y"), "5");
        flush();
        ck_assert_uint_eq(c.n, n);
}
END_TEST

START_TEST(test_missing_then_created) {
        Counter c = {};
        unsigned n;

        ck_assert_int_eq(watch_add(ws, at("sub/deeper/f"), on_change, &c, NULL, NULL), 0);
        ck_assert_int_eq(mkdir(at("sub"), 0755), 0);
        run_until(&c, 1);
        flush();
        ck_assert_int_eq(mkdir(at("sub/deeper"), 0755), 0);
        run_until(&c, 2);
        flush();
        ck_assert_int_eq(c.n, 2);
        write_file(at("sub/deeper/f"), "x");
        run_until(&c, 3);
        /* The directories removed under the watch, and made again. */
        flush();
        n = c.n;
        rm_rf(at("sub"));
        run_until(&c, n + 1);
        ck_assert_int_eq(mkdir(at("sub"), 0755), 0);
        ck_assert_int_eq(mkdir(at("sub/deeper"), 0755), 0);
        write_file(at("sub/deeper/f"), "y");
        run_until(&c, n + 2);
        flush();
        n = c.n;
        write_file(at("sub/deeper/f"), "z");
        run_until(&c, n + 1);
}
END_TEST

START_TEST(test_unrelated_do_not_fire) {
        Counter c = {};

        write_file(at("x"), "1");
        ck_assert_int_eq(watch_add(ws, at("x"), on_change, &c, NULL, NULL), 0);
        write_file(at("y"), "1");
        write_file(at("x2"), "1");
        write_file(at("xx"), "1");
        ck_assert_int_eq(rename(at("y"), at("z")), 0);
        ck_assert_int_eq(unlink(at("z")), 0);
        ck_assert_int_eq(mkdir(at("d"), 0755), 0);
        write_file(at("d/x"), "1");
        /* Reading the file is not a change. */
        int fd = open(at("x"), O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        close(fd);
        flush();
        ck_assert_uint_eq(c.n, 0);
}
END_TEST

START_TEST(test_burst_coalesced) {
        Counter c = {};
        uint64_t start, elapsed;

        write_file(at("x"), "0");
        ck_assert_int_eq(watch_add(ws, at("x"), on_change, &c, NULL, NULL), 0);
        start = now_usec(CLOCK_MONOTONIC);
        for (int i = 0; i < 100; i++) {
                write_file(at("x"), i % 2 ? "a" : "b");
                /* Let the loop see each write as it happens. */
                ck_assert_int_ge(sd_event_run(e, 0), 0);
        }
        run_until(&c, 1);
        elapsed = now_usec(CLOCK_MONOTONIC) - start;
        flush();
        /* Each callback after the first needs a full debounce period. */
        ck_assert_uint_ge(c.n, 1);
        ck_assert_uint_le(c.n, elapsed / WATCH_DEBOUNCE_USEC + 2);
        ck_assert_uint_lt(c.n, 100);
}
END_TEST

START_TEST(test_remove_in_callback_and_owner) {
        Counter self = { .remove_self = true }, a = {}, b = {};
        int owner_a, owner_b;

        write_file(at("x"), "1");
        ck_assert_int_eq(watch_add(ws, at("x"), on_change, &self, NULL, &self.self), 0);
        ck_assert_int_eq(watch_add(ws, at("x"), on_change, &a, &owner_a, NULL), 0);
        ck_assert_int_eq(watch_add(ws, at("x"), on_change, &a, &owner_a, NULL), 0);
        ck_assert_int_eq(watch_add(ws, at("x"), on_change, &b, &owner_b, NULL), 0);
        ck_assert_uint_eq(watch_count(ws, &owner_a), 2);
        write_file(at("x"), "2");
        run_until(&self, 1);
        run_until(&a, 2);
        run_until(&b, 1);
        ck_assert_ptr_null(self.self);

        watch_remove_owner(ws, &owner_a);
        ck_assert_uint_eq(watch_count(ws, &owner_a), 0);
        ck_assert_uint_eq(watch_count(ws, &owner_b), 1);
        write_file(at("x"), "3");
        run_until(&b, 2);
        flush();
        ck_assert_uint_eq(self.n, 1);
        ck_assert_uint_eq(a.n, 2);
        watch_remove(NULL);
}
END_TEST

START_TEST(test_bad_input) {
        Counter c = {};
        char *long_path;

        ck_assert_int_eq(watch_add(ws, "relative/x", on_change, &c, NULL, NULL), -EINVAL);
        ck_assert_int_eq(watch_add(ws, "", on_change, &c, NULL, NULL), -EINVAL);
        ck_assert_int_eq(watch_add(ws, "/", on_change, &c, NULL, NULL), -EINVAL);
        ck_assert_int_eq(watch_add(ws, "//./", on_change, &c, NULL, NULL), -EINVAL);
        ck_assert_int_eq(watch_add(ws, NULL, on_change, &c, NULL, NULL), -EINVAL);
        ck_assert_int_eq(watch_add(ws, at("x"), NULL, &c, NULL, NULL), -EINVAL);

        long_path = malloc(PATH_MAX + 2);
        memset(long_path, 'a', PATH_MAX + 1);
        long_path[0] = '/';
        long_path[PATH_MAX + 1] = '\0';
        ck_assert_int_eq(watch_add(ws, long_path, on_change, &c, NULL, NULL), -EINVAL);
        free(long_path);

        /* A symlink loop, and a component that is a file, not a directory. */
        ck_assert_int_eq(symlink("loop2", at("loop1")), 0);
        ck_assert_int_eq(symlink("loop1", at("loop2")), 0);
        ck_assert_int_eq(watch_add(ws, at("loop1"), on_change, &c, NULL, NULL), -ELOOP);
        ck_assert_int_eq(symlink("/", at("root")), 0);
        ck_assert_int_eq(watch_add(ws, at("root"), on_change, &c, NULL, NULL), 0);
        write_file(at("file"), "1");
        ck_assert_int_eq(watch_add(ws, at("file/below"), on_change, &c, NULL, NULL), 0);
        ck_assert_uint_eq(watch_count(ws, NULL), 2);

        /* The cap. */
        for (unsigned i = watch_count(ws, NULL); i < WATCH_MAX; i++)
                ck_assert_int_eq(watch_add(ws, at("x"), on_change, &c, NULL, NULL), 0);
        ck_assert_int_eq(watch_add(ws, at("x"), on_change, &c, NULL, NULL), -E2BIG);
        /* ".." walks up, inside the set. */
        watch_remove_owner(ws, NULL);
        ck_assert_int_eq(mkdir(at("d"), 0755), 0);
        ck_assert_int_eq(watch_add(ws, at("d/../x"), on_change, &c, NULL, NULL), 0);
        write_file(at("x"), "1");
        run_until(&c, 1);
}
END_TEST

int main(void) {
        Suite *s = suite_create("watch");
        TCase *tc = tcase_create("watch");

        tcase_set_timeout(tc, 120); /* a loaded machine is slow, not wrong */
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_write_close);
        tcase_add_test(tc, test_rename_over);
        tcase_add_test(tc, test_delete_recreate);
        tcase_add_test(tc, test_k8s_data_swap);
        tcase_add_test(tc, test_absolute_link_and_chain);
        tcase_add_test(tc, test_missing_then_created);
        tcase_add_test(tc, test_unrelated_do_not_fire);
        tcase_add_test(tc, test_burst_coalesced);
        tcase_add_test(tc, test_remove_in_callback_and_owner);
        tcase_add_test(tc, test_bad_input);
        suite_add_tcase(s, tc);
        return check_run(s);
}
