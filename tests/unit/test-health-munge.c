/* The `munge` check against a real munged (Debian's munge package) on a
 * private socket in a temp dir: a round trip passes while it runs; stopped,
 * the check fails saying so in libmunge's words; a socket nobody listens on
 * is refused; started again, the check passes again.  munged missing from
 * the machine fails the test: it is never skipped. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/time-util.h"

#include "../lib/check-run.h"
#include "../lib/health-check-test.h"

#define DEADLINE_USEC (30 * USEC_PER_SEC)

static char dir[] = "/tmp/test-health-munge-XXXXXX";

static void sh(const char *fmt, ...) _printf_(1, 2);
static void sh(const char *fmt, ...) {
        _cleanup_free_ char *cmd = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&cmd, fmt, ap);
        va_end(ap);
        ck_assert_int_ge(n, 0);
        ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

static char *in_dir(const char *name) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
        return p;
}

/* The check's YAML with the private socket. */
static char *conf_socket(const char *name) {
        _cleanup_free_ char *sock = in_dir(name);
        char *body;

        ck_assert_int_ge(asprintf(&body, "socket: %s\n", sock), 0);
        return body;
}

static void munged_start(void) {
        ck_assert_msg(system("PATH=$PATH:/usr/sbin:/sbin command -v munged >/dev/null") == 0,
                      "munged is needed (Debian package munge)");
        /* munged returns once its socket is there (it reports readiness
         * through a pipe before its parent exits) */
        sh("PATH=$PATH:/usr/sbin:/sbin munged --force --key-file='%s/key' --socket='%s/sock' "
           "--pid-file='%s/pid' "
           "--log-file='%s/log' --seed-file='%s/seed'",
           dir, dir, dir, dir, dir);
}

/* SIGTERM to munged, then wait for it to remove its socket and pid file on
 * its way out.  False when it did not within the deadline. */
static bool munged_stop(void) {
        _cleanup_free_ char *pidfile = in_dir("pid"), *sock = in_dir("sock"), *text = NULL;
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + DEADLINE_USEC;
        pid_t pid;

        if (fileio_read(pidfile, 64, &text, NULL) < 0)
                return true;
        pid = (pid_t) atoi(text);
        if (pid <= 1 || kill(pid, SIGTERM) < 0)
                return false;
        while (access(sock, F_OK) == 0 || access(pidfile, F_OK) == 0) {
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return false;
                usleep(10 * 1000);
        }
        return true;
}

/* One directory for the whole run, made and removed by the runner itself:
 * a failed test ends its process before a teardown of its own could run,
 * and the munged it started must not outlive the run. */
static void setup(void) {
        _cleanup_free_ char *key = NULL;
        char bytes[128];
        FILE *f;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_ptr_nonnull(f = fopen("/dev/urandom", "re"));
        ck_assert_uint_eq(fread(bytes, 1, sizeof(bytes), f), sizeof(bytes));
        fclose(f);
        key = in_dir("key");
        ck_assert_int_eq(fileio_write_atomic(key, bytes, sizeof(bytes), 0600, (uid_t) -1, (gid_t) -1), 0);
        explicit_bzero(bytes, sizeof(bytes));
}

static void teardown(void) {
        bool stopped = munged_stop();

        sh("rm -rf '%s'", dir);
        ck_assert_msg(stopped, "munged of %s did not stop", dir);
}

START_TEST(test_round_trip) {
        _cleanup_free_ char *body = conf_socket("sock"), *sock = in_dir("sock"), *gone = NULL;

        munged_start();
        assert_result(run_in("/", "munge", body), HEALTH_PASS, "ok", "a credential went through");
        assert_result(run_in("/", "munge", body), HEALTH_PASS, "ok", sock);
        ck_assert(munged_stop());
        ck_assert_int_ge(
                asprintf(&gone, "munge encode: Failed to access \"%s\": No such file or directory", sock),
                0);
        assert_result(run_in("/", "munge", body), HEALTH_FAIL, "munge-socket", gone);
        munged_start();
        assert_result(run_in("/", "munge", body), HEALTH_PASS, "ok", "and back");
}
END_TEST

/* A socket file left behind by a munged that died: connect() is refused. */
START_TEST(test_refused) {
        _cleanup_free_ char *body = conf_socket("stale"), *stale = in_dir("stale");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        ck_assert_uint_lt(strlen(stale), sizeof(sa.sun_path));
        strcpy(sa.sun_path, stale);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        close(fd);
        assert_result(run_in("/", "munge", body), HEALTH_FAIL, "munge-socket", "Connection refused");
}
END_TEST

START_TEST(test_not_a_socket) {
        _cleanup_free_ char *body = conf_socket("file"), *file = in_dir("file");

        ck_assert_int_eq(fileio_write_atomic(file, "x", 1, 0600, (uid_t) -1, (gid_t) -1), 0);
        assert_result(run_in("/", "munge", body), HEALTH_FAIL, "munge-socket", file);
}
END_TEST

START_TEST(test_config) {
        HealthResult r;

        /* without `socket`, munged's default: whatever this machine runs, the detail names it */
        r = run_in("/", "munge", "");
        ck_assert_msg(strstr(r.detail, "/run/munge/munge.socket.2"), "%s", r.detail);
        ck_assert(r.status == HEALTH_PASS || r.status == HEALTH_FAIL);
        assert_refused("munge", "socket: relative/sock\n", "key 'socket'");
        assert_refused("munge", "sock: /x\n", "sock");
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("health-munge");
        TCase *tc = tcase_create("munge");

        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_refused);
        tcase_add_test(tc, test_not_a_socket);
        tcase_add_test(tc, test_config);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
